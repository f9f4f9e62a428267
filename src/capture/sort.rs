// SPDX-License-Identifier: GPL-2.0

//! An in-place heapsort for the reports.
//!
//! core's `sort_unstable_by` calls a panic helper on an inconsistent `Ord` that 6.12's objtool
//! does not know never returns: it warns that the sort "falls through to next function". This
//! sort has no such path, allocates nothing and takes O(n log n) at worst.

/// Sorts `v` by `key`, smallest first; equal keys keep no particular order.
pub(crate) fn sort_by_key<T, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) {
    let n = v.len();
    for root in (0..n / 2).rev() {
        sift_down(v, root, n, &key);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end, &key);
    }
}

/// Moves `v[root]` down the max-heap in `v[..end]` until its children's keys are not larger.
fn sift_down<T, K: Ord>(v: &mut [T], mut root: usize, end: usize, key: &impl Fn(&T) -> K) {
    let end = end.min(v.len());
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && key(&v[child]) < key(&v[child + 1]) {
            child += 1;
        }
        if key(&v[root]) >= key(&v[child]) {
            return;
        }
        v.swap(root, child);
        root = child;
    }
}
