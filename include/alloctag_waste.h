/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Waste accounting (lib/alloctag/src/waste.rs): per call site, the bytes
 * requested against the bytes handed out (slack), and the allocations and
 * frees (churn). alloctag's patches include this header into mm/slub.c and
 * mm/slab_common.c and mm/vmalloc.c, whose hooks call it, and
 * alloctag_bindings.h.
 *
 * Per object, a 32-bit slot after the slab's extension vector (the vector
 * is made that much longer): the accounting period that tracked the object
 * in its high half (0: untracked) and its slack against the slab slot,
 * s->size, in its low half. A free takes back exactly what its allocation
 * added, and only for an object of the current period: an object
 * allocated while the accounting was off, or before it last turned on,
 * is never subtracted.
 *
 * Per call site, per-CPU counters that the accounting allocates for every
 * tag when it first turns on (struct alloc_tag's waste, NULL until then).
 *
 * Off, the slab hooks pay nothing: they run the second variant, shared with
 * capture (linux/alloctag_capture.h), only while the slab-plain key is off,
 * which the accounting keeps off while it is on (src/keys.rs). krealloc()
 * in place pays one patched-out jump.
 */
#ifndef _ALLOCTAG_WASTE_H
#define _ALLOCTAG_WASTE_H

#include <linux/compiler.h>
#include <linux/jump_label.h>
#include <linux/types.h>

struct kmem_cache;
struct slab;
struct vm_struct;

/* One call site's counters, on one CPU. */
struct alloctag_waste_counters {
	/* Allocations and frees counted in this period. */
	u64 allocs;
	u64 frees;
	/* Live bytes handed out and requested, of the objects tracked. */
	s64 bytes;
	s64 requested;
};

#ifdef CONFIG_ALLOCTAG_WASTE

/* The bytes after a slab's extension vector, per object. */
#define ALLOCTAG_WASTE_SLOT_BYTES	sizeof(u32)

DECLARE_STATIC_KEY_FALSE(alloctag_waste_key);

void alloctag_waste_slab_alloc_slowpath(struct kmem_cache *s,
					const void *object,
					unsigned int orig_size);
void alloctag_waste_slab_free_slowpath(struct kmem_cache *s,
				       struct slab *slab, unsigned int off);
void alloctag_waste_krealloc_slowpath(const void *object, size_t new_size);
void alloctag_waste_vmalloc_slowpath(struct vm_struct *vm);
void alloctag_waste_vfree_slowpath(struct vm_struct *vm);
void alloctag_waste_vrealloc_slowpath(struct vm_struct *vm, size_t new_size);

/*
 * Whether kmalloc() passes its request down to the slab hooks: only while
 * the accounting is on. Passed always, the request would be kept in a
 * callee-saved register across the allocation: three instructions on every
 * kmalloc() (Documentation/benchmarks.rst).
 */
static __always_inline bool alloctag_waste_enabled(void)
{
	return static_branch_unlikely(&alloctag_waste_key);
}

/*
 * Called by the slab hooks' second variant after the object's tag is
 * charged; orig_size is what the caller asked for, 0 if not passed down.
 */
static __always_inline void alloctag_waste_slab_alloc(struct kmem_cache *s,
						      const void *object,
						      unsigned int orig_size)
{
	if (static_branch_unlikely(&alloctag_waste_key))
		alloctag_waste_slab_alloc_slowpath(s, object, orig_size);
}

/* Object off of slab is being freed; its tag is still in its reference. */
static __always_inline void alloctag_waste_slab_free(struct kmem_cache *s,
						     struct slab *slab,
						     unsigned int off)
{
	if (static_branch_unlikely(&alloctag_waste_key))
		alloctag_waste_slab_free_slowpath(s, slab, off);
}

/* krealloc() kept object in place for new_size bytes. */
static __always_inline void alloctag_waste_krealloc(const void *object,
						    size_t new_size)
{
	if (static_branch_unlikely(&alloctag_waste_key))
		alloctag_waste_krealloc_slowpath(object, new_size);
}

/*
 * vmalloc(): an area counts once, its pages mapped against its request
 * (vm->requested_size), with the period that tracked it in
 * vm->alloctag_waste (0: untracked). Its pages array, when the caller's
 * tag pays for it, is a slab object of its own.
 */

/* vmalloc() mapped vm's pages and is about to return it. */
static __always_inline void alloctag_waste_vmalloc(struct vm_struct *vm)
{
	if (static_branch_unlikely(&alloctag_waste_key))
		alloctag_waste_vmalloc_slowpath(vm);
}

/* vfree() took vm out of the tree; its pages are still there. */
static __always_inline void alloctag_waste_vfree(struct vm_struct *vm)
{
	if (static_branch_unlikely(&alloctag_waste_key))
		alloctag_waste_vfree_slowpath(vm);
}

/* vrealloc() keeps vm for new_size bytes; vm->requested_size is the old. */
static __always_inline void alloctag_waste_vrealloc(struct vm_struct *vm,
						    size_t new_size)
{
	if (static_branch_unlikely(&alloctag_waste_key))
		alloctag_waste_vrealloc_slowpath(vm, new_size);
}

#else /* CONFIG_ALLOCTAG_WASTE */

#define ALLOCTAG_WASTE_SLOT_BYTES	0

static inline bool alloctag_waste_enabled(void)
{
	return false;
}

static inline void alloctag_waste_slab_alloc(struct kmem_cache *s,
					     const void *object,
					     unsigned int orig_size) {}
static inline void alloctag_waste_slab_free(struct kmem_cache *s,
					    struct slab *slab,
					    unsigned int off) {}
static inline void alloctag_waste_krealloc(const void *object,
					   size_t new_size) {}
static inline void alloctag_waste_vmalloc(struct vm_struct *vm) {}
static inline void alloctag_waste_vfree(struct vm_struct *vm) {}
static inline void alloctag_waste_vrealloc(struct vm_struct *vm,
					   size_t new_size) {}

#endif /* CONFIG_ALLOCTAG_WASTE */

#endif /* _ALLOCTAG_WASTE_H */
