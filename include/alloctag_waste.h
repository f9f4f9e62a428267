/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Waste accounting (lib/alloctag/src/waste.rs): per call site, the bytes
 * requested against the bytes handed out (slack), and the allocations and
 * frees (churn). alloctag's patches include this header into mm/slub.c,
 * mm/slab_common.c, mm/vmalloc.c, mm/page_alloc.c, mm/page_ext.c,
 * mm/migrate.c, mm/huge_memory.c and mm/hugetlb.c, whose hooks call it, and
 * alloctag_bindings.h. vmalloc() areas and pages: below.
 *
 * Per slab object, a 32-bit slot after the slab's extension vector (the vector
 * is made that much longer): the accounting period that tracked the object
 * in its high half (0: untracked) and its slack against the slab slot,
 * s->size, in its low half. A free takes back exactly what its allocation
 * added, and only for an object of the current period: an object
 * allocated while the accounting was off, or before it last turned on,
 * is never subtracted. Only vectors made while the accounting is on, or
 * all of them with slots reserved at boot (alloctag.waste_slots=on or
 * alloctag.waste=on), get slots: off, the vectors are 6.12's, so the
 * accounting costs no memory and moves no vector to a larger kmalloc
 * cache. An object in a slab without slots is untracked.
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

/* Capture's hooks, with struct alloc_tag: the page allocation hooks share a key. */
#include <linux/alloc_tag.h>
/* Itself, until the capture patch has alloc_tag.h include it (a series bisects). */
#include <linux/alloctag_capture.h>
#include <linux/compiler.h>
#include <linux/bitops.h>
#include <linux/jump_label.h>
/* OBJEXTS_ALLOCTAG_SLOTS, the mark of a slab vector with slots */
#include <linux/memcontrol.h>
#include <linux/types.h>

struct alloc_tag;
struct folio;
struct kmem_cache;
struct page;
struct page_ext_operations;
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

/* The bytes after a slab's extension vector, per object, when it has slots. */
#define ALLOCTAG_WASTE_SLOT_BYTES	sizeof(u32)

/*
 * Whether a slab vector made now gets slots: while the accounting is on,
 * or always with slots reserved at boot. Where a racing vector wins, the
 * winner's choice holds: the flag follows the vector published.
 */
bool alloctag_waste_slab_slots(void);

/*
 * What alloc_slab_obj_exts() adds to slab->obj_exts with a vector, slots:
 * its choice. The mark is a flag bit beside the vector's address, where
 * only slab_obj_exts()'s readers look, who mask it (OBJEXTS_FLAGS_MASK):
 * published in the same store as the vector, gone with it. Not a page
 * flag: those alias (PG_owner_priv_1 is PG_foreign, PG_checked,
 * PG_swapcache, ...) and code outside the slab allocator tests them on
 * kmalloc()'s pages.
 */
static inline unsigned long alloctag_waste_slab_mark(bool slots)
{
	return slots ? OBJEXTS_ALLOCTAG_SLOTS : 0;
}

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
void __alloctag_slowpath alloctag_pages_alloc_slowpath(struct page *page,
						       unsigned int order,
						       gfp_t gfp);
void alloctag_waste_pages_free_slowpath(struct page *page, unsigned int order);
void alloctag_waste_pages_shrink_slowpath(struct page *page, unsigned int order);
void alloctag_waste_pages_split_slowpath(struct folio *folio, int old_order,
					 int new_order);
void alloctag_waste_pages_copy_slowpath(struct folio *new, struct folio *old);
void alloctag_waste_pages_request_slowpath(struct page *page,
					   unsigned int order, size_t size);

/*
 * In Rust (src/waste/control.rs): whether slots were reserved at boot:
 * page_ext's for pages, and in every slab vector.
 */
bool alloctag_waste_slots_reserved(void);

/* The page slots, in mm/page_ext.c's list (src/glue_waste_pages.c). */
extern struct page_ext_operations alloctag_waste_page_ops;

/* Whether pages have slots: page_ext reserved them at boot. */
bool alloctag_waste_pages_on(void);

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
 * vm->alloctag_waste (0: untracked). Its pages leave the page accounting
 * then, so as not to count twice. Its array of page pointers is an
 * allocation of its own.
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

/*
 * Pages: per allocation, a 64-bit slot in page_ext (the period in the high
 * 16 bits, the slack in the rest), reserved at boot only with
 * alloctag.waste_slots=on or alloctag.waste=on (8 bytes per page); without
 * it pages are untracked. Only the head page of an allocation holds one;
 * a split gives each piece its own.
 */

DECLARE_STATIC_KEY_FALSE(alloctag_page_alloc_key);

/*
 * post_alloc_hook(): 2^order pages are about to be charged to the current
 * task's tag. Capture's hook and this accounting's share one static branch,
 * on while either is (src/keys.rs): a page allocation and free cost some
 * 680 instructions, so each patched-out jump is 0.15% of them. Behind it,
 * one call that saves what it uses (__alloctag_slowpath) and finds the tag
 * itself: page, order and gfp are in the argument registers already, and
 * post_alloc_hook() keeps nothing across the call for pgalloc_tag_add_order()
 * after it (with the tag as an argument it kept current, and with a plain
 * call page, order and gfp, in callee-saved registers on every
 * allocation, the branch taken or not: Documentation/benchmarks.rst).
 */
static __always_inline void alloctag_pages_alloc_hooks(struct page *page,
						       unsigned int order,
						       gfp_t gfp)
{
	if (static_branch_unlikely(&alloctag_page_alloc_key))
		alloctag_pages_alloc_slowpath(page, order, gfp);
}

/* free_pages_prepare(): 2^order pages go; their tag is still there. */
static __always_inline void alloctag_waste_pages_free(struct page *page,
						      unsigned int order)
{
	if (static_branch_unlikely(&alloctag_waste_key))
		alloctag_waste_pages_free_slowpath(page, order);
}

/*
 * __free_pages() freed all but the first page of a block of 2^order pages
 * (order > 0), which someone else still holds.
 */
static __always_inline void alloctag_waste_pages_shrink(struct page *page,
							unsigned int order)
{
	if (static_branch_unlikely(&alloctag_waste_key))
		alloctag_waste_pages_shrink_slowpath(page, order);
}

/* After pgalloc_tag_split(): each piece is an allocation of its own. */
static __always_inline void alloctag_waste_pages_split(struct folio *folio,
						       int old_order,
						       int new_order)
{
	if (static_branch_unlikely(&alloctag_waste_key))
		alloctag_waste_pages_split_slowpath(folio, old_order, new_order);
}

/* Before pgalloc_tag_copy(): old's slot moves to new with the charge. */
static __always_inline void alloctag_waste_pages_copy(struct folio *new,
						      struct folio *old)
{
	if (static_branch_unlikely(&alloctag_waste_key))
		alloctag_waste_pages_copy_slowpath(new, old);
}

/*
 * The 2^order pages at page serve a request of size bytes: a large
 * kmalloc(), its krealloc() in place, or alloc_pages_exact()'s last page.
 */
static __always_inline void alloctag_waste_pages_request(struct page *page,
							 unsigned int order,
							 size_t size)
{
	if (static_branch_unlikely(&alloctag_waste_key))
		alloctag_waste_pages_request_slowpath(page, order, size);
}

#else /* CONFIG_ALLOCTAG_WASTE */

#define ALLOCTAG_WASTE_SLOT_BYTES	0

static inline bool alloctag_waste_slab_slots(void)
{
	return false;
}
static inline unsigned long alloctag_waste_slab_mark(bool slots)
{
	return 0;
}

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
/* Capture's hook alone (task_struct has alloc_tag only with profiling). */
static __always_inline void alloctag_pages_alloc_hooks(struct page *page,
						       unsigned int order,
						       gfp_t gfp)
{
#ifdef CONFIG_ALLOCTAG_CAPTURE
	alloctag_capture_pages(page, &current->alloc_tag, order, gfp);
#endif
}
static inline void alloctag_waste_pages_free(struct page *page,
					     unsigned int order) {}
static inline void alloctag_waste_pages_shrink(struct page *page,
					       unsigned int order) {}
static inline void alloctag_waste_pages_split(struct folio *folio,
					      int old_order, int new_order) {}
static inline void alloctag_waste_pages_copy(struct folio *new,
					     struct folio *old) {}
static inline void alloctag_waste_pages_request(struct page *page,
						unsigned int order,
						size_t size) {}

#endif /* CONFIG_ALLOCTAG_WASTE */

/*
 * __free_pages() is about to free all but the first page of a block of
 * 2^order pages (order > 0) charged to tag, whose first page someone else
 * still holds: capture's record and this accounting's slot shrink to that
 * page. Each tests its own key inline, as it did at the call site: the path
 * with both off is two patched-out jumps, and the rare path shrinks the
 * record first, then the slot.
 */
static __always_inline void alloctag_pages_shrink_hooks(struct page *page,
							const struct alloc_tag *tag,
							unsigned int order)
{
	alloctag_capture_shrink(page, tag, order);
	alloctag_waste_pages_shrink(page, order);
}

#endif /* _ALLOCTAG_WASTE_H */
