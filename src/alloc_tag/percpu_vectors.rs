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

use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::{bindings, prelude::*};

/// How many chunks made before got a vector from [`make`].
static MADE: AtomicUsize = AtomicUsize::new(0);

/// Gives every per-CPU chunk a tag vector, now and from now on: `ENOMEM`, and then no chunk got
/// one, or none was asked for again. Once it succeeded, a later call makes none: if a later step
/// of the switch-on fails, the next switch-on finds them made. Process context, may sleep;
/// called before the profiling key first turns on.
pub(crate) fn make() -> Result {
    // SAFETY: No precondition but the context, which the caller's is: it takes the per-CPU
    // allocator's mutex, as `pcpu_alloc()` does from the same callers.
    let made = unsafe { bindings::pcpu_alloc_tags_late() };
    let made = usize::try_from(made).map_err(|_| Error::from_errno(made))?;
    MADE.fetch_add(made, Ordering::Relaxed);
    Ok(())
}

/// Returns how many chunks made before the switch-on that asked got a vector then.
pub(crate) fn made() -> usize {
    MADE.load(Ordering::Relaxed)
}
