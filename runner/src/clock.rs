//! Time for the runner: every timestamp (trail `ts`, `parkedAt`, `createdAt`, session ids)
//! and every duration comes from a [`Clock`], never from the system directly, so tests can
//! pin time and output stays byte-for-byte deterministic (STYLE §6).
//!
//! Must not: sleep, or read the system time outside [`SystemClock`].

use std::sync::atomic::{AtomicU64, Ordering};

/// A source of time in epoch milliseconds.
pub trait Clock: Send + Sync {
    /// The current time, epoch milliseconds.
    fn now_ms(&self) -> u64;

    /// The current time without counting as a read, epoch milliseconds: the same as
    /// [`Clock::now_ms`] for a real clock; a test clock ([`FixedClock`]) does not advance.
    /// For bound checks that must not shift the timestamps a run records.
    fn peek_ms(&self) -> u64 {
        self.now_ms()
    }

    /// The time the case's limits are measured on, epoch milliseconds, as a read
    /// ([`Clock::now_ms`]): `tests.caseTimeoutMs` (FORMAT §C.2 step 8) between steps, and
    /// the time left that bounds each hook and `archmax_run` script (docs/security.md
    /// "Hooks within the case's time"). The same as [`Clock::now_ms`] for every clock but a
    /// [`CaseClock`], whose limits are on the run's clock instead.
    fn limit_now_ms(&self) -> u64 {
        self.now_ms()
    }

    /// [`Clock::limit_now_ms`] without counting as a read (as [`Clock::peek_ms`]).
    fn limit_peek_ms(&self) -> u64 {
        self.peek_ms()
    }
}

/// The clock of a case that runs on a recorded clock (a cassette's deterministic one,
/// docs/cassettes.md): what the session records (trail `ts`, `parkedAt`, `createdAt`, the
/// session id, the prompt's clock line) reads `stamps`, while the case's time limit
/// ([`Clock::limit_now_ms`]) is measured on `limits`, the run's clock (the wall clock in
/// a real run).
///
/// Bounded work (issue 24): a recorded clock advances one step per read, not with time,
/// so limits measured on it never ran out: 20 hooks of 0.9 s ran 18 s against a
/// `caseTimeoutMs` of 2,000 ms once an empty cassette sat beside the case. A limit read
/// still counts as a read of `stamps`, as it did before limits moved off it, so a
/// replay's timestamps stay byte-identical to its recording.
#[derive(Clone, Copy)]
pub struct CaseClock<'a> {
    stamps: &'a dyn Clock,
    limits: &'a dyn Clock,
}

impl<'a> CaseClock<'a> {
    /// Timestamps from `stamps`, the case's limits on `limits`.
    pub fn new(stamps: &'a dyn Clock, limits: &'a dyn Clock) -> Self {
        Self { stamps, limits }
    }
}

impl Clock for CaseClock<'_> {
    fn now_ms(&self) -> u64 {
        self.stamps.now_ms()
    }

    fn peek_ms(&self) -> u64 {
        self.stamps.peek_ms()
    }

    fn limit_now_ms(&self) -> u64 {
        self.stamps.now_ms();
        self.limits.now_ms()
    }

    fn limit_peek_ms(&self) -> u64 {
        self.limits.peek_ms()
    }
}

/// The wall clock (`std::time::SystemTime`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }
}

/// A clock for tests: starts at `start` and advances by `step` milliseconds on every read,
/// so durations and timestamps are deterministic and still strictly increasing.
#[derive(Debug)]
pub struct FixedClock {
    next: AtomicU64,
    step: u64,
}

impl FixedClock {
    /// A clock whose first read returns `start` (epoch ms) and every later read `step` ms more.
    pub fn new(start: u64, step: u64) -> Self {
        Self {
            next: AtomicU64::new(start),
            step,
        }
    }
}

/// 2026-01-01T00:00:00Z in epoch milliseconds: the default start of test clocks.
pub const TEST_EPOCH_MS: u64 = 1_767_225_600_000;

impl Default for FixedClock {
    /// Starts at [`TEST_EPOCH_MS`], ticking 1 ms per read.
    fn default() -> Self {
        Self::new(TEST_EPOCH_MS, 1)
    }
}

impl Clock for FixedClock {
    fn now_ms(&self) -> u64 {
        self.next.fetch_add(self.step, Ordering::Relaxed)
    }

    /// What the next [`Clock::now_ms`] will return, without advancing.
    fn peek_ms(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_clock_ticks_by_its_step() {
        let c = FixedClock::new(100, 5);
        assert_eq!((c.now_ms(), c.now_ms(), c.now_ms()), (100, 105, 110));
    }

    #[test]
    fn a_case_clock_stamps_on_one_clock_and_measures_limits_on_the_other() {
        let recorded = FixedClock::new(1_000, 1);
        let run = FixedClock::new(0, 500);
        let c = CaseClock::new(&recorded, &run);
        assert_eq!(c.now_ms(), 1_000);
        assert_eq!((c.limit_now_ms(), c.limit_now_ms()), (0, 500));
        assert_eq!(c.limit_peek_ms(), 1_000);
        // Each limit read still counted as a read of the recorded clock.
        assert_eq!(c.now_ms(), 1_003);
        assert_eq!(c.peek_ms(), 1_004);
        // Plain clocks measure limits on themselves.
        assert_eq!((run.limit_now_ms(), run.limit_peek_ms()), (1_000, 1_500));
    }
}
