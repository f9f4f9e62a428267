// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of waste accounting (src/waste.rs): the static key and the slab
 * and vmalloc hooks' slow paths, which need what only C expresses: the
 * slab's layout (mm/slab.h), KFENCE's address test, a page's tag, per-CPU
 * operations and preemption.
 * Turning the accounting on and off, and reading it, is Rust's.
 *
 * The slow paths run with preemption off, so that src/waste.rs, which
 * zeroes the counters when a period begins, can wait for every one that
 * saw the last period with synchronize_rcu() once it has ended.
 */

#include <linux/alloc_tag.h>
#include <linux/jump_label.h>
#include <linux/kasan.h>
#include <linux/kfence.h>
#include <linux/percpu.h>
#include <linux/pgalloc_tag.h>
#include <linux/preempt.h>
#include <linux/rwsem.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>

/* struct slab, the extension vector and obj_to_index() (Kbuild adds mm/). */
#include "slab.h"

#include "../include/alloctag_waste.h"
#include "../include/alloctag_glue.h"

DEFINE_STATIC_KEY_FALSE(alloctag_waste_key);

/*
 * The period that runs, 1 to 65535, or 0 while the accounting is off:
 * written by src/waste.rs, with a release store when a period begins.
 */
u32 alloctag_waste_current;

/* Serializes turning the accounting on and off (src/waste.rs). */
DECLARE_RWSEM(alloctag_waste_lock);

u64 alloctag_waste_now(void)
{
	return ktime_get_boottime_ns();
}

void alloctag_set_waste_key(bool enable)
{
	if (enable)
		static_branch_enable(&alloctag_waste_key);
	else
		static_branch_disable(&alloctag_waste_key);
}

static u32 waste_period(void)
{
	/* Pairs with the release store that begins a period, after its zeroing. */
	return smp_load_acquire(&alloctag_waste_current);
}

/* The slot of object off after slab's extension vector vec. */
static u32 *waste_slot(struct slabobj_ext *vec, struct slab *slab,
		       unsigned int off)
{
	return (u32 *)(vec + slab->objects) + off;
}

/*
 * The slot of the slab object at object, its cache in *sp and its tag
 * reference in *ref: NULL for a KFENCE object (its vector is KFENCE's
 * own, one entry, no slots), a large kmalloc() (pages) or a slab without a
 * vector.
 */
static u32 *object_slot(const void *object, struct kmem_cache **sp,
			union codetag_ref **ref)
{
	struct slabobj_ext *vec;
	struct slab *slab;
	unsigned int off;

	object = kasan_reset_tag(object);
	if (is_kfence_address(object))
		return NULL;
	slab = virt_to_slab(object);
	vec = slab ? slab_obj_exts(slab) : NULL;
	if (!vec)
		return NULL;
	*sp = slab->slab_cache;
	off = obj_to_index(*sp, slab, (void *)object);
	*ref = &vec[off].ref;
	return waste_slot(vec, slab, off);
}

/*
 * The counters of the tag in ref: none where ref holds no tag or the
 * accounting has not made the tag's counters.
 */
static struct alloctag_waste_counters __percpu *
waste_counters(union codetag_ref *ref)
{
	if (!ref->ct || is_codetag_empty(ref))
		return NULL;
	return READ_ONCE(ct_to_alloc_tag(ref->ct)->waste);
}

void alloctag_waste_slab_alloc_slowpath(struct kmem_cache *s,
					const void *object,
					unsigned int orig_size)
{
	struct alloctag_waste_counters __percpu *w;
	unsigned int slack = s->size - orig_size;
	union codetag_ref *ref;
	u32 period, *slot;

	slot = object_slot(object, &s, &ref);
	if (!slot)
		return;

	preempt_disable();
	period = waste_period();
	w = period ? waste_counters(ref) : NULL;
	/*
	 * Untracked, its free taking nothing back: no counters, no request
	 * passed down (kmalloc() found the accounting off), or a slack the slot
	 * cannot hold.
	 */
	if (!w || !orig_size || slack > U16_MAX) {
		WRITE_ONCE(*slot, 0);
	} else {
		WRITE_ONCE(*slot, period << 16 | slack);
		this_cpu_inc(w->allocs);
		this_cpu_add(w->bytes, s->size);
		this_cpu_add(w->requested, orig_size);
	}
	preempt_enable();
}

void alloctag_waste_slab_free_slowpath(struct kmem_cache *s,
				       struct slab *slab, unsigned int off)
{
	struct alloctag_waste_counters __percpu *w;
	struct slabobj_ext *vec = slab_obj_exts(slab);
	u32 period, v, *slot;

	if (!vec || is_kfence_address(slab_address(slab)))
		return;
	slot = waste_slot(vec, slab, off);
	v = READ_ONCE(*slot);
	if (!v)
		return;
	WRITE_ONCE(*slot, 0);

	preempt_disable();
	period = waste_period();
	/* Only an object of this period is taken back. */
	w = period && v >> 16 == period ? waste_counters(&vec[off].ref) : NULL;
	if (w) {
		this_cpu_inc(w->frees);
		this_cpu_sub(w->bytes, s->size);
		this_cpu_sub(w->requested, s->size - (v & U16_MAX));
	}
	preempt_enable();
}

void alloctag_waste_krealloc_slowpath(const void *object, size_t new_size)
{
	struct alloctag_waste_counters __percpu *w;
	union codetag_ref *ref;
	struct kmem_cache *s;
	u32 period, v, *slot;

	slot = object_slot(object, &s, &ref);
	if (!slot)
		return;

	preempt_disable();
	period = waste_period();
	v = READ_ONCE(*slot);
	w = period && v >> 16 == period ? waste_counters(ref) : NULL;
	if (w && new_size <= s->size && s->size - new_size <= U16_MAX) {
		/* The object stays: only its request changes. */
		this_cpu_add(w->requested,
			     (s64)new_size - (s->size - (v & U16_MAX)));
		WRITE_ONCE(*slot, period << 16 | (u32)(s->size - new_size));
	}
	preempt_enable();
}

/*
 * The counters of vm's tag: its pages' (the caller's while vmalloc() ran,
 * whichever path the pages took), from its first page, which stays until
 * vfree() frees the pages after alloctag_waste_vfree().
 */
static struct alloctag_waste_counters __percpu *
area_counters(struct vm_struct *vm)
{
	struct alloc_tag *tag;

	if (!vm->nr_pages || !vm->pages)
		return NULL;
	tag = pgalloc_tag_get(vm->pages[0]);
	return tag ? READ_ONCE(tag->waste) : NULL;
}

static u64 area_bytes(const struct vm_struct *vm)
{
	return (u64)vm->nr_pages << PAGE_SHIFT;
}

void alloctag_waste_vmalloc_slowpath(struct vm_struct *vm)
{
	struct alloctag_waste_counters __percpu *w;
	u32 period;

	preempt_disable();
	period = waste_period();
	w = period ? area_counters(vm) : NULL;
	if (w && vm->requested_size <= area_bytes(vm)) {
		WRITE_ONCE(vm->alloctag_waste, period);
		this_cpu_inc(w->allocs);
		this_cpu_add(w->bytes, area_bytes(vm));
		this_cpu_add(w->requested, vm->requested_size);
	}
	preempt_enable();
}

void alloctag_waste_vfree_slowpath(struct vm_struct *vm)
{
	struct alloctag_waste_counters __percpu *w;
	u32 period, v = READ_ONCE(vm->alloctag_waste);

	if (!v)
		return;
	WRITE_ONCE(vm->alloctag_waste, 0);

	preempt_disable();
	period = waste_period();
	/* Only an area of this period is taken back. */
	w = period && v == period ? area_counters(vm) : NULL;
	if (w) {
		this_cpu_inc(w->frees);
		this_cpu_sub(w->bytes, area_bytes(vm));
		this_cpu_sub(w->requested, vm->requested_size);
	}
	preempt_enable();
}

void alloctag_waste_vrealloc_slowpath(struct vm_struct *vm, size_t new_size)
{
	struct alloctag_waste_counters __percpu *w;
	u32 period;

	preempt_disable();
	period = waste_period();
	w = period && READ_ONCE(vm->alloctag_waste) == period ?
		area_counters(vm) : NULL;
	/* The area stays: only its request changes (vrealloc() checked it fits). */
	if (w)
		this_cpu_add(w->requested,
			     (s64)new_size - (s64)vm->requested_size);
	preempt_enable();
}
