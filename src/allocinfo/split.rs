// SPDX-License-Identifier: GPL-2.0

//! `ALLOCINFO_IOC_GET_SPLIT`'s view of a tag: its figures split by CPU or by NUMA node,
//! without summing, and the filter on one CPU's or node's share ("sites holding at least N
//! bytes on CPU 3").
//!
//! C header: [`include/uapi/linux/alloc_tag.h`](srctree/include/uapi/linux/alloc_tag.h)
//!
//! By CPU, the shares are the tag's per-CPU counters as each CPU counted them, from CPU 0 to
//! `nr_cpu_ids - 1`: a CPU that never ran (or is not possible) has zeros, as its counters do.
//! With per-node counting on, memory of another node than the counting CPU's is counted on the
//! tag's node slots instead (src/alloc_tag/node.rs), in no CPU's share.
//!
//! By node (per-node counting on, else `EOPNOTSUPP`), the shares are node 0 to `nr_node_ids - 1`,
//! each its CPUs' counters and its slot, and last the per-CPU memory's, which has a unit on every
//! node. The answer's counter is the sum of the shares written, read once: they add up to it
//! exactly, however the hooks count meanwhile.

use crate::{
    alloc_tag::{AllocTag, Counters, Share},
    percpu,
};
use kernel::{bindings, prelude::*};

/// How a split makes its shares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum By {
    Cpu,
    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
    Node,
}

/// A request's split: how the shares are made, and its filter on one share.
///
/// # Invariants
///
/// `at`'s index is below [`Split::width`].
#[derive(Clone, Copy)]
pub(crate) struct Split {
    by: By,
    /// Only tags holding at least `.1` bytes in share `.0`.
    at: Option<(usize, i64)>,
}

impl Split {
    /// Checks a request from user space, changing nothing: `EINVAL` for an unknown split, or a
    /// CPU or node beyond the split's width; `EOPNOTSUPP` for the node split without per-node
    /// counting.
    pub(crate) fn new(raw: &bindings::allocinfo_get_split) -> Result<Self> {
        let by = match raw.by {
            bindings::ALLOCINFO_SPLIT_CPU => By::Cpu,
            #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
            bindings::ALLOCINFO_SPLIT_NODE if crate::alloc_tag::node::wanted() => By::Node,
            // The kernel crate of 6.12 names no `EOPNOTSUPP`.
            bindings::ALLOCINFO_SPLIT_NODE => {
                return Err(Error::from_errno(-(bindings::EOPNOTSUPP as i32)))
            }
            _ => return Err(EINVAL),
        };
        let width = Self::width_of(by);
        let at = match raw.at {
            -1 => None,
            i if i >= 0 && (i as usize) < width => Some((i as usize, raw.min_at)),
            _ => return Err(EINVAL),
        };
        // INVARIANT: `at`'s index was checked against the width of the split.
        Ok(Self { by, at })
    }

    fn width_of(by: By) -> usize {
        match by {
            By::Cpu => percpu::nr_cpu_ids(),
            #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
            By::Node => crate::alloc_tag::node::slots(),
        }
    }

    /// Returns the number of shares of a tag: `nr_cpu_ids`, or `nr_node_ids + 1`.
    pub(crate) fn width(&self) -> usize {
        Self::width_of(self.by)
    }

    /// Returns share `i` of `tag`, reading only what it needs.
    fn share(&self, tag: &AllocTag, i: usize) -> Share {
        match self.by {
            By::Cpu => tag.share(i),
            #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
            By::Node => tag.node_share(i),
        }
    }

    /// Returns whether `tag` holds at least the filter's bytes in its share; true without one.
    pub(crate) fn matches(&self, tag: &AllocTag) -> bool {
        self.at
            .map_or(true, |(i, min)| self.share(tag, i).bytes >= min)
    }

    /// Fills `out`, `struct allocinfo_split_entry`s as bytes (two native `__s64`, bytes then
    /// calls: layout checked in [`super::ioctl`]), with `tag`'s shares, and returns their sum:
    /// the answer's counter, so that its shares add up to it exactly although the hooks count
    /// on meanwhile.
    pub(crate) fn fill(&self, tag: &AllocTag, out: &mut [u8]) -> Counters {
        let mut sum = Counters::default();
        out.fill(0);
        let add = |i: usize, Share { bytes, calls }: Share| {
            let entry = i
                .checked_mul(ENTRY)
                .and_then(|at| out.get_mut(at..))
                .and_then(|e| e.get_mut(..ENTRY));
            if let Some(e) = entry {
                let (b, c) = e.split_at_mut(ENTRY / 2);
                let read = |x: &[u8]| x.try_into().map_or(0, i64::from_ne_bytes);
                let (b0, c0) = (read(b), read(c));
                b.copy_from_slice(&b0.wrapping_add(bytes).to_ne_bytes());
                c.copy_from_slice(&c0.wrapping_add(calls).to_ne_bytes());
                sum.bytes = sum.bytes.wrapping_add(bytes);
                sum.calls = sum.calls.wrapping_add(calls as u64);
            }
        };
        match self.by {
            By::Cpu => tag.for_each_cpu(add),
            #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
            By::Node => tag.for_each_node_part(add),
        }
        sum
    }
}

/// The size of a `struct allocinfo_split_entry`.
pub(crate) const ENTRY: usize = 16;
