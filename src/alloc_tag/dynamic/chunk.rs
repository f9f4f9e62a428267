// SPDX-License-Identifier: GPL-2.0

//! The memory of a pool of dynamic tags: its chunks, each of [`CHUNK_TAGS`] tags with their
//! slots and per-CPU counters, made one at a time in process context and never freed (a tag's
//! address must stay valid while anything may hold it), and the waste counters waste accounting
//! gives their tags.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)

use super::{Pool, Slot, CHUNK_TAGS, POOL};
use crate::alloc_tag::AllocTag;
use crate::rwsem::{c_rwsem, RwSem};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    alloc::{
        flags::{__GFP_ZERO, GFP_KERNEL},
        KVBox,
    },
    bindings,
    prelude::*,
};

/// One chunk of a pool: its tags, their slots, and their per-CPU counters.
///
/// # Invariants
///
/// `counters` is the `__percpu` address of [`CHUNK_TAGS`] zeroed `struct alloc_tag_counters`,
/// this chunk's alone, which live as long as the chunk: forever, chunks are never freed. Tag
/// `i` of the chunk counts into the `i`th.
pub(super) struct Chunk {
    pub(super) tags: [AllocTag; CHUNK_TAGS],
    pub(super) slots: [Slot; CHUNK_TAGS],
    pub(super) counters: *mut bindings::alloc_tag_counters,
    /// Page tags in page flags cannot name this chunk's tags: they are made inaccurate.
    pub(super) unindexed: bool,
}

/// Serializes the growth of every pool: one chunk made at a time.
// SAFETY: `alloctag_dynamic_grow_lock` is defined with `DECLARE_RWSEM()` for this alone.
static GROW: RwSem<()> = unsafe { c_rwsem!(alloctag_dynamic_grow_lock, ()) };

impl<const C: usize, const M: usize> Pool<C, M> {
    /// Makes one more chunk, up to `C`; process context, may sleep. Returns whether it did.
    pub(crate) fn grow(&self) -> bool {
        let _grow = GROW.write();
        let n = self.grown.load(Ordering::Relaxed);
        if n >= C {
            return false;
        }
        let size = core::mem::size_of::<bindings::alloc_tag_counters>();
        let align = core::mem::align_of::<bindings::alloc_tag_counters>();
        // Both allocations are charged to their own lines' static tags (`alloc_hooks!`), never
        // to a dynamic tag, which would need this very pool. Quiet: a failure is the caller's
        // ENOMEM, not a stack dump from the per-CPU allocator.
        let counters = kernel::alloc_hooks!(
            // SAFETY: Process context; the size and alignment are those of the counters.
            unsafe {
                bindings::pcpu_alloc_noprof(
                    CHUNK_TAGS * size,
                    align,
                    false,
                    bindings::GFP_KERNEL | bindings::__GFP_NOWARN,
                )
            }
        );
        if counters.is_null() {
            return false;
        }
        // Zeroed: every slot free (state 0, no key, no module, no names), every tag unwritten.
        let chunk = match kernel::alloc_hooks!(KVBox::<Chunk>::new_uninit(GFP_KERNEL | __GFP_ZERO))
        {
            Ok(chunk) => chunk,
            Err(_) => {
                // SAFETY: Allocated above, never published.
                unsafe { bindings::free_percpu(counters) };
                return false;
            }
        };
        // SAFETY: All zeroes is a valid `Chunk`: atomics at 0, null pointers, bytes, and
        // `Opaque` tags that need no initialisation.
        let mut chunk = unsafe { chunk.assume_init() };
        // INVARIANT: `__alloc_percpu()` returns zeroed per-CPU memory of `CHUNK_TAGS` counters.
        chunk.counters = counters.cast();
        // Per-node slots with the counters, where per-node counting is on; kept forever too.
        #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
        // SAFETY: The chunk is not published: nothing reads its tags.
        if unsafe { crate::alloc_tag::node::make_block(&chunk.tags) }.is_err() {
            // SAFETY: Allocated above, never published.
            unsafe { bindings::free_percpu(counters) };
            return false;
        }
        // The kernel's pool is the one whose tags page flags name (src/alloc_tag/index.rs): its
        // chunks never go, so neither do their indices. A chunk that gets none has its tags made
        // inaccurate: their pages go uncharged.
        if self.grown_by_work {
            let tags = chunk.tags.as_ptr().cast::<u8>();
            let size = core::mem::size_of::<AllocTag>();
            // SAFETY: The chunk's `CHUNK_TAGS` tags, each a `struct alloc_tag`, which begins with
            // a `struct codetag`; the chunk never goes, and its tags' indices are only accessed
            // atomically (a slot's maker keeps its tag's index).
            if let Err(e) = unsafe { crate::alloc_tag::index::INDEX.add(tags, CHUNK_TAGS, size) } {
                if e != ENODEV {
                    pr_warn!(
                        "{} tags: no page-flag index for chunk {}: {:?}\n",
                        self.name,
                        n,
                        e
                    );
                    chunk.unindexed = true;
                }
            }
        }
        #[cfg(CONFIG_ALLOCTAG_WASTE)]
        if crate::alloc_tag::waste::wanted() && Self::make_chunk_waste(&chunk).is_err() {
            pr_warn!(
                "{} tags: no waste counters for chunk {}: not tracked\n",
                self.name,
                n
            );
        }
        let chunk = KVBox::into_raw(chunk);
        // INVARIANT: Published after it was initialised; never freed; `grown` grows under
        // `GROW`.
        self.chunks[n].store(chunk, Ordering::Release);
        self.grown.store(n + 1, Ordering::Release);
        true
    }

    /// Gives every tag of `chunk` waste counters, from one array of the chunk's that, like
    /// the chunk, is never freed. Called under [`GROW`]; process context, may sleep.
    #[cfg(CONFIG_ALLOCTAG_WASTE)]
    fn make_chunk_waste(chunk: &Chunk) -> Result {
        if chunk.tags.iter().all(|t| !t.waste().is_null()) {
            return Ok(());
        }
        let counters = crate::alloc_tag::waste::alloc(CHUNK_TAGS);
        if counters.is_null() {
            return Err(ENOMEM);
        }
        for (i, tag) in chunk.tags.iter().enumerate() {
            // SAFETY: Entry `i` of fresh zeroed counters, this tag's alone, which live as long
            // as the chunk: forever. (A tag that had counters leaves its entry unused.)
            unsafe { tag.set_waste(counters.wrapping_add(i)) };
        }
        Ok(())
    }

    /// Gives every tag of the chunks made waste counters (see [`Pool::make_chunk_waste`]);
    /// process context, may sleep.
    #[cfg(CONFIG_ALLOCTAG_WASTE)]
    pub(crate) fn make_waste(&self) -> Result {
        let _grow = GROW.write();
        for n in 0..self.grown.load(Ordering::Acquire) {
            if let Some(chunk) = self.chunk(n * CHUNK_TAGS) {
                Self::make_chunk_waste(chunk)?;
            }
        }
        Ok(())
    }

    /// Makes the pool's first chunk unless it has one: `ENOMEM` without the memory. Process
    /// context; may sleep.
    pub(crate) fn first_chunk(&self) -> Result {
        if self.grown.load(Ordering::Acquire) > 0 || self.grow() {
            return Ok(());
        }
        // Another grower may have made it meanwhile.
        if self.grown.load(Ordering::Acquire) > 0 {
            Ok(())
        } else {
            Err(ENOMEM)
        }
    }

    /// Makes chunks until the pool has at least `chunks`; process context, may sleep.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) fn reserve(&self, chunks: usize) {
        while self.grown.load(Ordering::Acquire) < chunks.min(C) {
            if !self.grow() {
                break;
            }
        }
    }

    /// Runs `f` unless the pool has a chunk, with none made meanwhile, and returns whether it
    /// ran: what a chunk is made with (its per-node slots) cannot change under a grower, the
    /// glue's work item included. Process context; may sleep.
    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
    pub(crate) fn while_empty(&self, f: impl FnOnce()) -> bool {
        let _grow = GROW.write();
        if self.grown.load(Ordering::Acquire) > 0 {
            return false;
        }
        f();
        true
    }

    /// Returns the number of chunks made; for the tests.
    #[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
    pub(crate) fn chunks_made(&self) -> usize {
        self.grown.load(Ordering::Acquire)
    }
}

/// Whether the boot made the kernel's pool ready ([`alloctag_dynamic_boot`]): from then on the
/// first switch-on makes the first chunk ([`first_chunk`]).
static BOOTED: AtomicBool = AtomicBool::new(false);

/// Makes the next chunk of the kernel's pool, unless profiling is off for good (booted
/// `never`), when the pool runs low (the glue's work item). Process context; may sleep.
#[no_mangle]
pub(crate) extern "C" fn alloctag_dynamic_grow() {
    if crate::keys::supported() {
        POOL.grow();
    }
}

/// Makes the kernel pool's first chunk at boot (a `core_initcall` of the glue), before Rust code
/// allocates, where the tags have counters already (booted on, or the debug checks); booted off,
/// no chunk is made, nor its per-CPU counters, until profiling first turns on. Process context;
/// may sleep.
#[no_mangle]
pub(crate) extern "C" fn alloctag_dynamic_boot() {
    if crate::alloc_tag::counters::armed() {
        POOL.grow();
    }
    BOOTED.store(true, Ordering::Release);
}

/// Gives the kernel's pool its first chunk, for the first switch-on after boot
/// (`counters::arm()`): `ENOMEM` without the memory. Before [`alloctag_dynamic_boot`] (booted
/// on, in `mm_core_init()`), it leaves the chunk to it. Process context; may sleep.
pub(crate) fn first_chunk() -> Result {
    if BOOTED.load(Ordering::Acquire) {
        POOL.first_chunk()
    } else {
        Ok(())
    }
}

c_declared!(alloctag_dynamic_grow);
c_declared!(alloctag_dynamic_boot);
