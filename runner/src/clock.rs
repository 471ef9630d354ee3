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
}
