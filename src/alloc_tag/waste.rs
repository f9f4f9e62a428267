// SPDX-License-Identifier: GPL-2.0

//! The waste counters of an allocation tag (`struct alloc_tag`'s `waste`): per CPU, the
//! allocations and frees that waste accounting counted at the call site and the live bytes
//! handed out and requested of the objects it tracks. The hooks' slow paths write them
//! (src/glue_waste_slab.c, src/glue_waste_pages.c); the accounting (src/waste.rs) makes, zeroes
//! and reads them here.
//!
//! C header: [`lib/alloctag/include/alloctag_waste.h`](srctree/lib/alloctag/include/alloctag_waste.h)
//!
//! A tag's counters are made the first time the accounting turns on, for every tag then
//! known, and afterwards for each tag as it comes ([`WANTED`]): a module's at its load, a
//! chunk of dynamic tags with the chunk. They go with the tag: a module's when its memory is
//! freed, which happens only once no object is charged to its tags, so no slow path can
//! still reach them. Until then a tag has none, and the slow paths track nothing for it.

use super::AllocTag;
use crate::percpu;
use core::{
    mem::{align_of, size_of},
    ptr,
    sync::atomic::{AtomicBool, AtomicPtr, Ordering},
};
use kernel::{bindings, prelude::*};

/// One CPU's counters.
type Raw = bindings::alloctag_waste_counters;

/// Whether new tags get counters: set when the accounting first turns on, never cleared.
pub(crate) static WANTED: AtomicBool = AtomicBool::new(false);

/// Returns whether new tags get counters.
pub(crate) fn wanted() -> bool {
    WANTED.load(Ordering::Acquire)
}

/// The totals of one tag's counters over all CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Figures {
    /// Allocations counted.
    pub(crate) allocs: u64,
    /// Frees counted.
    pub(crate) frees: u64,
    /// Live bytes handed out to the objects tracked.
    pub(crate) bytes: i64,
    /// Live bytes requested for them.
    pub(crate) requested: i64,
}

/// Makes zeroed counters for `n` tags, or returns null. Process context; may sleep.
pub(crate) fn alloc(n: usize) -> *mut Raw {
    // The core's own allocations are charged to their own lines (`alloc_hooks!`).
    kernel::alloc_hooks!(
        // SAFETY: Process context; the size and alignment are those of `n` counters.
        unsafe {
            bindings::pcpu_alloc_noprof(
                n * size_of::<Raw>(),
                align_of::<Raw>(),
                false,
                bindings::GFP_KERNEL | bindings::__GFP_NOWARN,
            )
        }
    )
    .cast()
}

impl AllocTag {
    /// Returns the tag's `waste` field, only ever accessed atomically.
    fn waste_field(&self) -> &AtomicPtr<Raw> {
        // SAFETY: The field lives as long as the tag; the slow paths read it with `READ_ONCE()`
        // and only this file writes it, atomically.
        unsafe { AtomicPtr::from_ptr(&raw mut (*self.as_raw()).waste) }
    }

    /// Returns the tag's waste counters, null where it has none.
    pub(crate) fn waste(&self) -> *mut Raw {
        self.waste_field().load(Ordering::Acquire)
    }

    /// Gives the tag `counters` unless it has some; returns whether it took them.
    ///
    /// # Safety
    ///
    /// `counters` must be the `__percpu` address of zeroed counters that live as long as the
    /// tag and that no other tag uses.
    pub(crate) unsafe fn set_waste(&self, counters: *mut Raw) -> bool {
        self.waste_field()
            .compare_exchange(
                ptr::null_mut(),
                counters,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Makes the tag's counters unless it has some. Process context; may sleep.
    pub(crate) fn make_waste(&self) -> Result {
        if !self.waste().is_null() {
            return Ok(());
        }
        let counters = alloc(1);
        if counters.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: Fresh zeroed counters, this tag's alone, freed only by `drop_waste`.
        if !unsafe { self.set_waste(counters) } {
            // SAFETY: Made above and not given to any tag.
            unsafe { bindings::free_percpu(counters.cast()) };
        }
        Ok(())
    }

    /// Frees the tag's counters, made by [`AllocTag::make_waste`].
    ///
    /// # Safety
    ///
    /// No object tracked for the tag may be live, and nothing may read its counters any more:
    /// the tag's memory is about to be freed.
    pub(crate) unsafe fn drop_waste(&self) {
        let counters = self.waste_field().swap(ptr::null_mut(), Ordering::AcqRel);
        if !counters.is_null() {
            // SAFETY: Made by `alloc(1)` in `make_waste`; the caller guarantees no user is left.
            unsafe { bindings::free_percpu(counters.cast()) };
        }
    }

    /// Sets the tag's counters to zero on every CPU.
    ///
    /// # Safety
    ///
    /// No slow path may write them meanwhile: either the accounting is off and every slow path
    /// that saw it on has returned, or no object is tracked for the tag and no allocation can
    /// be charged to it yet (a dynamic tag being made in a freed slot).
    pub(crate) unsafe fn zero_waste(&self) {
        let counters = self.waste();
        if counters.is_null() {
            return;
        }
        // SAFETY: The tag's counters are a `__percpu` address of one `Raw`, live.
        unsafe {
            percpu::for_each_possible_cpu(counters, |c| {
                // `c` is one CPU's instance; the caller guarantees no writer.
                ptr::write_volatile(
                    c.cast_mut(),
                    Raw {
                        allocs: 0,
                        frees: 0,
                        bytes: 0,
                        requested: 0,
                    },
                )
            })
        };
    }

    /// Sums the tag's counters over the CPUs that have run (only its own CPU writes an
    /// instance, and [`Self::zero_waste`] zeroes them all); `None` where it has none.
    pub(crate) fn read_waste(&self) -> Option<Figures> {
        let counters = self.waste();
        if counters.is_null() {
            return None;
        }
        let mut sum = Figures::default();
        // SAFETY: The tag's counters are a `__percpu` address of one `Raw`, live while the tag
        // is reachable.
        unsafe {
            percpu::for_each_counting_cpu(counters, |c| {
                // One CPU's instance, which its CPU updates concurrently: read once, volatile,
                // as the allocation counters are.
                let raw = ptr::read_volatile(c);
                sum.allocs = sum.allocs.wrapping_add(raw.allocs);
                sum.frees = sum.frees.wrapping_add(raw.frees);
                sum.bytes = sum.bytes.wrapping_add(raw.bytes);
                sum.requested = sum.requested.wrapping_add(raw.requested);
            })
        };
        Some(sum)
    }
}
