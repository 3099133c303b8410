// SPDX-License-Identifier: MIT
//! primalloc as the global allocator of a Rust program:
//!
//! ```no_run
//! #[global_allocator]
//! static GLOBAL: primalloc::Primalloc = primalloc::Primalloc;
//!
//! fn main() {
//!     let v: Vec<u32> = (0..1000).collect();
//!     assert_eq!(v[999], 999);
//! }
//! ```
//!
//! The crate links primalloc's static library, which also takes the C
//! library's `malloc` and `free`, so Rust and C code in the program share
//! one allocator.  Requests of at most 16-byte alignment go to `pm_malloc`
//! and its kin, whose objects are 16-byte aligned; stricter ones to
//! `pm_aligned_alloc`.  Frees state their size, which primalloc checks.
#![no_std]

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::{c_char, c_void, CStr};
use core::ptr;

/// The alignment every object of primalloc's has.
const MIN_ALIGN: usize = 16;

extern "C" {
    fn pm_malloc(size: usize) -> *mut c_void;
    fn pm_calloc(n: usize, size: usize) -> *mut c_void;
    fn pm_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn pm_aligned_alloc(align: usize, size: usize) -> *mut c_void;
    fn pm_free_sized(p: *mut c_void, size: usize);
    fn pm_free_aligned_sized(p: *mut c_void, align: usize, size: usize);
    fn pm_malloc_usable_size(p: *const c_void) -> usize;
    fn pm_version() -> *const c_char;
}

/// The allocator: a unit struct for `#[global_allocator]`.
pub struct Primalloc;

unsafe impl GlobalAlloc for Primalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MIN_ALIGN {
            pm_malloc(layout.size()) as *mut u8
        } else {
            pm_aligned_alloc(layout.align(), layout.size()) as *mut u8
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MIN_ALIGN {
            return pm_calloc(1, layout.size()) as *mut u8;
        }
        let p = self.alloc(layout);
        if !p.is_null() {
            ptr::write_bytes(p, 0, layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if layout.align() <= MIN_ALIGN {
            pm_free_sized(p as *mut c_void, layout.size());
        } else {
            pm_free_aligned_sized(p as *mut c_void, layout.align(), layout.size());
        }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MIN_ALIGN {
            return pm_realloc(p as *mut c_void, new_size) as *mut u8;
        }
        let new = self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
        if !new.is_null() {
            ptr::copy_nonoverlapping(p, new, layout.size().min(new_size));
            self.dealloc(p, layout);
        }
        new
    }
}

/// The bytes the object at `p` may hold, at least what was asked for.
///
/// # Safety
/// `p` must be a live allocation of primalloc's (or null, which gives 0).
pub unsafe fn usable_size(p: *const u8) -> usize {
    pm_malloc_usable_size(p as *const c_void)
}

/// The version of the primalloc library linked in ("MAJOR.MINOR.PATCH").
pub fn version() -> &'static str {
    unsafe { CStr::from_ptr(pm_version()) }.to_str().unwrap_or("")
}
