// SPDX-License-Identifier: GPL-2.0

//! Per-CPU allocations' tag vectors: made when profiling may first count.
//!
//! C header: [`include/linux/percpu.h`](srctree/include/linux/percpu.h)
//!
//! A per-CPU allocation's tag reference lives in its chunk's vector, one for each 4 bytes of a
//! unit: twice the unit's size a chunk (2 MiB for the 1 MiB units of a 2-CPU x86 machine).
//! 6.12 gives every chunk made after boot one whenever profiling is built in, so a kernel
//! booted off or `never` pays it for every chunk. Here (patch 0020) a chunk gets one only once
//! the first switch-on asked (`pcpu_alloc_tags_late()`), which makes them, all or nothing,
//! for the chunks made until then. The first chunk has none, as in 6.12: its allocations,
//! made from boot, are not counted.

use kernel::{bindings, prelude::*};

/// Gives every per-CPU chunk a tag vector, now and from now on; returns how many chunks made
/// before got one (none on a second call), or `ENOMEM`, and then none did. Process context,
/// may sleep; called before the profiling key first turns on.
pub(crate) fn make() -> Result<usize> {
    // SAFETY: No precondition but the context, which the caller's is: it takes the per-CPU
    // allocator's mutex, as `pcpu_alloc()` does from the same callers.
    let made = unsafe { bindings::pcpu_alloc_tags_late() };
    usize::try_from(made).map_err(|_| Error::from_errno(made))
}
