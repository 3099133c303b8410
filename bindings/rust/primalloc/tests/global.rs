// SPDX-License-Identifier: MIT
//! A program whose global allocator is primalloc: collections, strings,
//! over-aligned and zeroed allocations, reallocation and threads, with
//! their contents checked.
use primalloc::Primalloc;
use std::alloc::{GlobalAlloc, Layout};
use std::collections::HashMap;
use std::thread;

#[global_allocator]
static GLOBAL: Primalloc = Primalloc;

#[test]
fn objects_are_primallocs() {
    let b = Box::new([7u8; 100]);
    // pm_malloc_usable_size ends the process on a pointer that is not
    // primalloc's: an answer means the box is one of its objects.
    assert!(unsafe { primalloc::usable_size(b.as_ptr()) } >= 100);
    assert!(primalloc::version().split('.').count() == 3);
}

#[test]
fn collections() {
    let mut v: Vec<String> = Vec::new();
    for i in 0..100_000 {
        v.push(format!("value {}", i));
    }
    let mut m = HashMap::new();
    for (i, s) in v.iter().enumerate() {
        m.insert(s.clone(), i);
    }
    for (i, s) in v.iter().enumerate() {
        assert_eq!(m[s], i);
    }
    v.truncate(10);
    v.shrink_to_fit();
    assert_eq!(v[9], "value 9");
}

/// Through the allocator's own methods, whatever the global allocator is.
#[test]
fn aligned_zeroed_and_moved() {
    for &align in &[32usize, 64, 4096, 1 << 21] {
        for &size in &[1usize, 24, 4096, 100_000, 3 << 20] {
            let l = Layout::from_size_align(size, align).unwrap();
            unsafe {
                let p = GLOBAL.alloc_zeroed(l);
                assert!(!p.is_null() && p as usize % align == 0);
                assert!((0..size).all(|i| *p.add(i) == 0));
                for i in 0..size {
                    *p.add(i) = i as u8;
                }
                let q = GLOBAL.realloc(p, l, size * 2 + 1);
                assert!(!q.is_null() && q as usize % align == 0);
                assert!((0..size).all(|i| *q.add(i) == i as u8));
                GLOBAL.dealloc(q, Layout::from_size_align(size * 2 + 1, align).unwrap());
            }
        }
    }
    let l = Layout::from_size_align(48, 16).unwrap();
    unsafe {
        let p = GLOBAL.alloc(l);
        assert!(!p.is_null() && p as usize % 16 == 0);
        assert!(primalloc::usable_size(p) >= 48);
        let q = GLOBAL.realloc(p, l, 5000);
        assert!(!q.is_null() && primalloc::usable_size(q) >= 5000);
        GLOBAL.dealloc(q, Layout::from_size_align(5000, 16).unwrap());
    }
}

#[test]
fn threads_pass_objects() {
    let handles: Vec<_> = (0..8)
        .map(|t| {
            thread::spawn(move || {
                let mut boxes: Vec<Box<[u64]>> = Vec::new();
                for i in 0..20_000u64 {
                    boxes.push(vec![i ^ t; (i % 64 + 1) as usize].into_boxed_slice());
                }
                boxes
            })
        })
        .collect();
    for (t, h) in handles.into_iter().enumerate() {
        let boxes = h.join().unwrap();
        for (i, b) in boxes.iter().enumerate() {
            assert_eq!(b.len(), i % 64 + 1);
            assert!(b.iter().all(|&x| x == i as u64 ^ t as u64));
        }
    }
}
