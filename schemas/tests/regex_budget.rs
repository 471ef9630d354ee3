//! Bounded work for regex tokens (docs/security.md, FORMAT §B.2 "Regex syntax"): what one
//! `/body/flags` token may allocate while it compiles, measured by a counting allocator.
//! Issue 24: 990 alternatives each defining `(?<a>x)` and thousands of `\k<a>` made every
//! backreference 990 of them; a 32 KB token allocated about 1 GB before the fix. The
//! budget (`jsregex::MAX_IR_UNITS`) refuses it before the lowering is built.
//!
//! The allocator counts per thread, so the tests of this binary do not disturb each other.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The counting allocator below is the one `unsafe` here: a `GlobalAlloc` cannot be written
// without it, and it only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use wfx_schemas::jsregex;

/// Live bytes past which this binary's allocator refuses an allocation (an abort): above
/// what the unbounded compile of the 68 KB token took (2.2 GB), so without the bound the
/// assertions below fail with the figure rather than exhausting the machine.
const REFUSE_ABOVE: usize = 3 << 30;

struct Counting;

thread_local! {
    /// (live bytes, peak live bytes) allocated by this thread (a compile runs on one).
    static LIVE: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

fn on_alloc(size: usize) -> bool {
    LIVE.try_with(|c| {
        let (live, peak) = c.get();
        let live = live.saturating_add(size);
        if live > REFUSE_ABOVE {
            return false;
        }
        c.set((live, peak.max(live)));
        true
    })
    .unwrap_or(true)
}

fn on_free(size: usize) {
    let _ = LIVE.try_with(|c| {
        let (live, peak) = c.get();
        c.set((live.saturating_sub(size), peak));
    });
}

// SAFETY: forwards to `System`; the bookkeeping allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !on_alloc(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        on_free(layout.size());
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() && !on_alloc(new_size - layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's pointer and layout, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if new_size < layout.size() {
            on_free(layout.size() - new_size);
        } else if p.is_null() {
            on_free(new_size - layout.size());
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak live bytes `f` adds on this thread, and its result.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(|c| {
        let (live, _) = c.get();
        c.set((live, live));
        live
    });
    let out = f();
    let peak = LIVE.with(|c| c.get().1);
    (out, peak.saturating_sub(base))
}

const MIB: usize = 1024 * 1024;

#[test]
fn a_token_compiles_within_a_few_mib_whatever_it_lowers_to() {
    let groups = vec!["(?<a>x)"; 990].join("|");
    // The issue's 32 KB and 68 KB tokens (about 1 GB and 2.2 GB before the fix).
    for refs in [4_900, 12_000] {
        let token = format!("/{groups}{}/", r"\k<a>".repeat(refs));
        let (got, peak) = peak_during(|| jsregex::compile_token(&token));
        let err = got.unwrap().expect_err("refused");
        assert!(err.contains("units of matcher"), "{err}");
        // What the parse built up to the budget (about 5 MB), not the lowering.
        assert!(peak < 16 * MIB, "{refs} backreferences: {peak} bytes");
    }
    // The most a token may build, about 15 MB at the peak: 49 `\k<a>` to the 990 groups
    // (98,951 units), 135 case-folded `\p{L}` (96,930) or a 96,000-character literal.
    let heaviest = [
        (format!("{groups}{}", r"\k<a>".repeat(49)), ""),
        (r"\p{L}".repeat(135), "ui"),
        ("abcdefgh".repeat(12_000), ""),
    ];
    for (body, flags) in heaviest {
        let (got, peak) = peak_during(|| jsregex::compile(&body, flags));
        assert!(got.is_ok(), "{}: {:?}", body.len(), got.err());
        assert!(
            peak < 32 * MIB,
            "{} bytes /{flags}: {peak} bytes",
            body.len()
        );
    }
    // Case-folded classes: 13,000 `\p{L}` (65 KB) held 200 MB before the fix.
    let (got, peak) = peak_during(|| jsregex::compile(&r"\p{L}".repeat(13_000), "ui"));
    assert!(got.is_err());
    assert!(peak < 32 * MIB, "{peak} bytes");
}
