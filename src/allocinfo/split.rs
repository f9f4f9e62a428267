// SPDX-License-Identifier: GPL-2.0

//! `ALLOCINFO_IOC_GET_SPLIT`'s view of a tag: its figures split by CPU or by NUMA node,
//! without summing, and the filter on one CPU's or node's share ("sites holding at least N
//! bytes on CPU 3").
//!
//! C header: [`include/uapi/linux/alloc_tag.h`](srctree/include/uapi/linux/alloc_tag.h)
//!
//! By CPU, the shares are the tag's per-CPU counters as each CPU counted them, from CPU 0 to
//! `nr_cpu_ids - 1`: a CPU that never ran (or is not possible) has zeros, as its counters do. The
//! answer's counter is their sum, read once: a tag's shares add up to it exactly, however the
//! hooks count meanwhile. By node is refused with `EOPNOTSUPP` while no per-node counting
//! exists (include/uapi/linux/alloc_tag.h keeps the number).

use crate::{
    alloc_tag::{AllocTag, Counters, Share},
    percpu,
};
use kernel::{bindings, prelude::*};

/// A request's split: how the shares are made, and its filter on one share.
///
/// # Invariants
///
/// `at`'s index is below [`Split::width`].
#[derive(Clone, Copy)]
pub(crate) struct Split {
    /// Only tags holding at least `.1` bytes at CPU `.0`.
    at: Option<(usize, i64)>,
}

impl Split {
    /// Checks a request from user space, changing nothing: `EINVAL` for an unknown split, or a
    /// CPU beyond the split's width; `EOPNOTSUPP` for the node split, which needs per-node
    /// counting.
    pub(crate) fn new(raw: &bindings::allocinfo_get_split) -> Result<Self> {
        let by = raw.by;
        if by == bindings::ALLOCINFO_SPLIT_NODE {
            // The kernel crate of 6.12 names no `EOPNOTSUPP`.
            return Err(Error::from_errno(-(bindings::EOPNOTSUPP as i32)));
        }
        if by != bindings::ALLOCINFO_SPLIT_CPU {
            return Err(EINVAL);
        }
        let at = match raw.at {
            -1 => None,
            i if i >= 0 && (i as usize) < percpu::nr_cpu_ids() => Some((i as usize, raw.min_at)),
            _ => return Err(EINVAL),
        };
        // INVARIANT: `at`'s index was checked against the width of the CPU split.
        Ok(Self { at })
    }

    /// Returns the number of shares of a tag: `nr_cpu_ids`.
    pub(crate) fn width(&self) -> usize {
        percpu::nr_cpu_ids()
    }

    /// Returns whether `tag` holds at least the filter's bytes at its CPU (that CPU's counters
    /// alone are read); true without one.
    pub(crate) fn matches(&self, tag: &AllocTag) -> bool {
        self.at
            .map_or(true, |(cpu, min)| tag.share(cpu).bytes >= min)
    }

    /// Fills `out`, `struct allocinfo_split_entry`s as bytes (two native `__s64`, bytes then
    /// calls: layout checked in [`super::ioctl`]), with `tag`'s shares, and returns their sum:
    /// the answer's counter, so that its shares add up to it exactly although the hooks count
    /// on meanwhile.
    pub(crate) fn fill(&self, tag: &AllocTag, out: &mut [u8]) -> Counters {
        let mut sum = Counters::default();
        out.fill(0);
        tag.for_each_cpu(|cpu, Share { bytes, calls }| {
            let entry = cpu
                .checked_mul(ENTRY)
                .and_then(|at| out.get_mut(at..))
                .and_then(|e| e.get_mut(..ENTRY));
            if let Some(e) = entry {
                let (b, c) = e.split_at_mut(ENTRY / 2);
                b.copy_from_slice(&bytes.to_ne_bytes());
                c.copy_from_slice(&calls.to_ne_bytes());
                sum.bytes = sum.bytes.wrapping_add(bytes);
                sum.calls = sum.calls.wrapping_add(calls as u64);
            }
        });
        sum
    }
}

/// The size of a `struct allocinfo_split_entry`.
pub(crate) const ENTRY: usize = 16;
