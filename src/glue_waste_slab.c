// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of waste accounting for slab objects (include/alloctag_waste.h):
 * each object's slot after its slab's extension vector, and the slab
 * hooks' and krealloc()'s slow paths, which count an object's slack
 * against its slab slot (s->size).
 *
 * C because it reads the slab's layout (struct slab, the extension vector,
 * obj_to_index(): mm/slab.h), KFENCE's and KASAN's address helpers, and
 * this_cpu ops and preempt_disable(), which are macros.
 */

#include <linux/alloc_tag.h>
#include <linux/jump_label.h>
#include <linux/kasan.h>
#include <linux/kfence.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/preempt.h>

/* struct slab, the extension vector and obj_to_index() (Kbuild adds mm/). */
#include "slab.h"

#include "../include/alloctag_waste.h"
#include "../include/alloctag_glue.h"
#include "glue_waste.h"

bool alloctag_waste_slab_slots(void)
{
	return static_branch_unlikely(&alloctag_waste_key) ||
	       alloctag_waste_slots_reserved();
}

/*
 * The mark is a flag bit beside the vector's address, so no vector may have
 * that bit in its address: a vector is at least one struct slabobj_ext
 * (8 bytes, 16 with memcg), kmalloc()'d, whose caches align to at least 8,
 * or with memcg KFENCE's, in struct kfence_metadata, 8-aligned. So every
 * flag bit, the mark's included, is below 8. The mark is no flag of memcg's
 * nor OBJEXTS_ALLOC_FAIL.
 */
static_assert(OBJEXTS_FLAGS_MASK < 8 && sizeof(struct slabobj_ext) >= 8);
static_assert(!(OBJEXTS_ALLOCTAG_SLOTS & OBJEXTS_ALLOC_FAIL));
#ifdef CONFIG_MEMCG
/* Two enums: compared as the values they are, without -Wenum-compare. */
static_assert((unsigned long)OBJEXTS_ALLOCTAG_SLOTS >=
	      (unsigned long)__NR_MEMCG_DATA_FLAGS);
#endif

/*
 * The slot of object off after the extension vector that slab's obj_exts
 * holds, NULL if the vector has none. The mark was published with the
 * vector, and a vector, once published, stays while the slab has objects.
 */
static u32 *waste_slot(struct slab *slab, unsigned int off)
{
	unsigned long exts = READ_ONCE(slab->obj_exts);
	struct slabobj_ext *vec;

	if (!(exts & OBJEXTS_ALLOCTAG_SLOTS))
		return NULL;
	vec = (struct slabobj_ext *)(exts & ~OBJEXTS_FLAGS_MASK);
	/*
	 * objects is set when the slab is made and never changes; it shares a
	 * word with inuse and frozen, which SLUB updates with cmpxchg while
	 * other CPUs allocate and free from the slab. mm/slub.o is not
	 * instrumented (KCSAN_SANITIZE_slub.o := n), so KCSAN reports that
	 * word's change as a race of unknown origin on this read: the bits
	 * read do not race.
	 */
	return (u32 *)(vec + data_race((unsigned int)slab->objects)) + off;
}

/*
 * The slot of the slab object at object, its cache in *sp and its tag
 * reference in *ref: NULL for a KFENCE object (its vector is KFENCE's
 * own, one entry, no slots), a large kmalloc() (pages), a slab without a
 * vector or one whose vector has no slots.
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
	/*
	 * slab_address() reads the slab's page flags for their section bits
	 * where page_to_pfn() needs them (SPARSEMEM without VMEMMAP), fixed
	 * for the page's life, while the page allocator and SLUB (not
	 * instrumented: KCSAN_SANITIZE_{page_alloc,slub}.o := n) set and
	 * clear other bits of that word: a race of unknown origin for KCSAN on
	 * bits this does not read, as mm/Makefile says of its own files.
	 */
	off = data_race(obj_to_index(*sp, slab, (void *)object));
	*ref = &vec[off].ref;
	return waste_slot(slab, off);
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

	/* data_race(): slab_address() as in object_slot(). */
	if (!vec || is_kfence_address(data_race(slab_address(slab))))
		return;
	slot = waste_slot(slab, off);
	if (!slot)
		return;
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

/* A large kmalloc() (pages) that krealloc() keeps, for new_size bytes. */
static void krealloc_large(const void *object, size_t new_size)
{
	struct folio *folio;

	object = kasan_reset_tag(object);
	if (is_kfence_address(object))
		return;
	folio = virt_to_folio(object);
	if (!folio_test_slab(folio))
		alloctag_waste_pages_request_slowpath(&folio->page,
						      folio_order(folio),
						      new_size);
}

void alloctag_waste_krealloc_slowpath(const void *object, size_t new_size)
{
	struct alloctag_waste_counters __percpu *w;
	union codetag_ref *ref;
	struct kmem_cache *s;
	u32 period, v, *slot;

	slot = object_slot(object, &s, &ref);
	if (!slot) {
		krealloc_large(object, new_size);
		return;
	}

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
