//! The memory budget of one run (`memoryLimitBytes`, FORMAT §A.1), kept by the QuickJS
//! runtime's allocator instead of QuickJS's own limit, for two reasons (issue 24):
//!
//! - **Knowing that the budget was hit.** QuickJS cannot always report a refused
//!   allocation: with no memory left for the error object it throws `null`, without memory
//!   for the message string it throws an `InternalError` with no message, some builtins
//!   fail without an exception, and a promise job that cannot be enqueued is dropped
//!   without a trace (`JS_EnqueueJob`'s result is ignored), so the run's promise never
//!   settles. Only the allocator sees every refusal; [`MemoryBudget::refusals`] counts them
//!   and the engine reads those failures as the memory budget when it is non-zero.
//! - **The same run every time.** QuickJS counts a large block (over 512 bytes) at the size
//!   the system allocator reports for it (`malloc_usable_size`), which depends on the
//!   process's heap: free chunks other threads left, glibc's mmap threshold that grows
//!   when any thread frees a mapped chunk. So the same script under the same limit ran out
//!   at a different allocation from one run to the next (issue 24: the `stack` case of
//!   `runner/tests/sandbox.rs` failed 7 of 12 runs with parallel tests). Here every block
//!   costs its size rounded up to 8 bytes plus an 8-byte header, whatever the heap holds.
//!
//! What is counted: the bytes the runtime holds from the system, that is its 4 KiB arenas of
//! small blocks and each large block, with the header of the backing allocator
//! (rquickjs's `RustAllocator`, which does all the pointer work).

// The one exception to the workspace's `unsafe_code = "deny"`: implementing rquickjs's
// `Allocator` trait is `unsafe impl`, and the backing allocator's `dealloc`, `realloc` and
// `usable_size` are `unsafe fn`. Every pointer this module handles came from
// `RustAllocator` through this type, which is the contract of those functions.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::ptr;
use std::rc::Rc;

use rquickjs::allocator::{Allocator, RustAllocator};

/// Bytes charged per block on top of its rounded size: the backing allocator's size header.
const HEADER_BYTES: usize = 8;
/// The backing allocator's size granularity: sizes are rounded up to a multiple of this.
const GRANULE_BYTES: usize = 8;

/// The ledger shared by a [`MemoryBudget`] and the allocator it made.
#[derive(Debug)]
struct Ledger {
    /// Most bytes the runtime may hold; `usize::MAX` until [`MemoryBudget::set_limit`].
    limit: Cell<usize>,
    /// Bytes held now.
    used: Cell<usize>,
    /// Allocations refused because they would have passed `limit`.
    refused: Cell<u64>,
}

/// One run's memory budget: the handle the engine keeps while the runtime owns the
/// allocator from [`MemoryBudget::allocator`]. Not shared between threads (a runtime lives
/// on the thread that runs it).
#[derive(Clone, Debug)]
pub(crate) struct MemoryBudget(Rc<Ledger>);

impl MemoryBudget {
    /// A budget with no limit yet and nothing used.
    pub(crate) fn new() -> Self {
        Self(Rc::new(Ledger {
            limit: Cell::new(usize::MAX),
            used: Cell::new(0),
            refused: Cell::new(0),
        }))
    }

    /// The allocator to create the run's runtime with (`Runtime::new_with_alloc`).
    pub(crate) fn allocator(&self) -> BudgetAllocator {
        BudgetAllocator {
            ledger: Rc::clone(&self.0),
            inner: RustAllocator,
        }
    }

    /// From now on an allocation that would take the bytes held past `bytes` is refused
    /// (QuickJS then fails the operation that asked for it). Bytes already held stay held.
    pub(crate) fn set_limit(&self, bytes: usize) {
        self.0.limit.set(bytes);
    }

    /// How many allocations were refused so far: non-zero once the run hit its budget.
    pub(crate) fn refusals(&self) -> u64 {
        self.0.refused.get()
    }

    /// Bytes the runtime holds now (the rounded sizes of its blocks plus their headers).
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.0.used.get()
    }
}

/// The runtime's allocator: [`RustAllocator`] under the ledger of a [`MemoryBudget`].
pub(crate) struct BudgetAllocator {
    /// Shared with the engine's [`MemoryBudget`].
    ledger: Rc<Ledger>,
    /// Does the allocating.
    inner: RustAllocator,
}

/// The bytes a block of `size` bytes costs: `size` rounded up to [`GRANULE_BYTES`] plus the
/// header; `None` when that does not fit a `usize`.
fn cost(size: usize) -> Option<usize> {
    size.checked_next_multiple_of(GRANULE_BYTES)?
        .checked_add(HEADER_BYTES)
}

impl BudgetAllocator {
    /// Whether `bytes` more (after `freed` bytes are given back) stay within the limit;
    /// counts a refusal when not.
    fn admit(&self, bytes: Option<usize>, freed: usize) -> bool {
        let ledger = &self.ledger;
        let after = bytes.and_then(|b| ledger.used.get().saturating_sub(freed).checked_add(b));
        match after {
            Some(total) if total <= ledger.limit.get() => true,
            _ => {
                ledger.refused.set(ledger.refused.get().saturating_add(1));
                false
            }
        }
    }

    /// The cost of the live block at `ptr` (from this allocator).
    fn held(ptr: *mut u8) -> usize {
        // SAFETY: `ptr` is a live block from `RustAllocator` (every caller passes one this
        // allocator returned and has not freed), which is what `usable_size` requires.
        let size = unsafe { RustAllocator::usable_size(ptr) };
        size.saturating_add(HEADER_BYTES)
    }

    fn add(&self, bytes: usize) {
        let used = &self.ledger.used;
        used.set(used.get().saturating_add(bytes));
    }

    fn sub(&self, bytes: usize) {
        let used = &self.ledger.used;
        used.set(used.get().saturating_sub(bytes));
    }
}

// SAFETY: every method returns what `RustAllocator` returned for the same request (or null,
// which the contract allows), and passes it only pointers `RustAllocator` gave out through
// this allocator, so `RustAllocator`'s guarantees (size, `usize` alignment) carry over.
unsafe impl Allocator for BudgetAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admit(cost(size), 0) {
            return ptr::null_mut();
        }
        let block = self.inner.alloc(size);
        if !block.is_null() {
            self.add(Self::held(block));
        }
        block
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        // `RustAllocator::calloc` panics on an overflowing product; refuse it here instead.
        if !self.admit(count.checked_mul(size).and_then(cost), 0) {
            return ptr::null_mut();
        }
        let block = self.inner.calloc(count, size);
        if !block.is_null() {
            self.add(Self::held(block));
        }
        block
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        self.sub(Self::held(ptr));
        // SAFETY: the caller guarantees `ptr` came from this allocator, so from
        // `RustAllocator`.
        unsafe { self.inner.dealloc(ptr) }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        let old = Self::held(ptr);
        if !self.admit(cost(new_size), old) {
            // The old block stays valid, as after a failed `realloc`.
            return ptr::null_mut();
        }
        // SAFETY: the caller guarantees `ptr` came from this allocator, so from
        // `RustAllocator`.
        let block = unsafe { self.inner.realloc(ptr, new_size) };
        if !block.is_null() {
            self.sub(old);
            self.add(Self::held(block));
        }
        block
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: the caller guarantees `ptr` came from this allocator, so from
        // `RustAllocator`.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cost_their_rounded_size_plus_a_header_and_free_gives_it_back() {
        let budget = MemoryBudget::new();
        let mut a = budget.allocator();
        let p = a.alloc(13);
        assert!(!p.is_null());
        assert_eq!(budget.used(), 16 + HEADER_BYTES);
        let q = unsafe { a.realloc(p, 100) };
        assert!(!q.is_null());
        assert_eq!(budget.used(), 104 + HEADER_BYTES);
        unsafe { a.dealloc(q) };
        assert_eq!(budget.used(), 0);
        assert_eq!(budget.refusals(), 0);
    }

    #[test]
    fn an_allocation_past_the_limit_is_refused_and_counted() {
        let budget = MemoryBudget::new();
        let mut a = budget.allocator();
        let p = a.alloc(64);
        budget.set_limit(128);
        assert!(a.alloc(64).is_null());
        assert_eq!(budget.refusals(), 1);
        // A failed realloc leaves the block as it was.
        assert!(unsafe { a.realloc(p, 200) }.is_null());
        assert_eq!(budget.refusals(), 2);
        assert_eq!(budget.used(), 64 + HEADER_BYTES);
        // An overflowing calloc is refused, not a panic.
        assert!(a.calloc(usize::MAX, 2).is_null());
        assert_eq!(budget.refusals(), 3);
        // Shrinking within the limit is fine.
        let q = unsafe { a.realloc(p, 8) };
        assert!(!q.is_null());
        assert_eq!(budget.used(), 8 + HEADER_BYTES);
        unsafe { a.dealloc(q) };
    }
}
