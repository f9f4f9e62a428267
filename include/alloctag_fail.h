/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-call-site fault injection (lib/alloctag/src/fault.rs), asked by the
 * slab, page and per-CPU allocators, the first two where they already ask
 * failslab and fail_page_alloc. alloctag's patches include this header into
 * mm/slub.c, mm/page_alloc.c and mm/percpu.c.
 *
 * The static key is on only while a rule is armed: with none, the test is a
 * patched-out jump and costs nothing measurable.
 */
#ifndef _ALLOCTAG_FAIL_H
#define _ALLOCTAG_FAIL_H

#include <linux/alloc_tag.h>
#include <linux/jump_label.h>
#include <linux/sched.h>
#include <linux/types.h>

struct kmem_cache;

#ifdef CONFIG_ALLOCTAG_FAULT_INJECTION

/* Field::FAULT of src/codetag/select.rs: an armed site's slot number plus one. */
#define ALLOCTAG_FAULT_MASK	0x000fff00U

DECLARE_STATIC_KEY_FALSE(alloctag_fail_key);
bool alloctag_should_fail(struct alloc_tag *tag, gfp_t gfp, size_t size);

/*
 * The calls behind the key and the mark preserve the caller's registers
 * (clang's preserve_most, as the list-debug slow paths use), so that the
 * allocators' fast paths save no more registers than without them. bindgen
 * cannot express that convention, and Rust never calls them.
 */
#ifdef __BINDGEN__
#define __alloctag_fail_slowpath
#else
#define __alloctag_fail_slowpath __preserve_most
#endif

bool __alloctag_fail_slowpath alloctag_fail_pages_slowpath(struct alloc_tag *tag,
							   gfp_t gfp,
							   unsigned int order);
bool __alloctag_fail_slowpath alloctag_fail_slab_slowpath(struct alloc_tag *tag,
							  struct kmem_cache *s,
							  gfp_t gfp);
bool alloctag_fail_percpu_slowpath(struct alloc_tag *tag, gfp_t gfp,
				   size_t size);

/*
 * The current call site's tag if a rule armed it: while a rule is armed
 * (the key), an unarmed site pays a load of its tag's flags and a branch, as
 * capture's hooks do. The slow path reads the mark again under RCU, which is
 * what counts; this is only the filter. READ_ONCE() keeps the loads after
 * the patched-out jump.
 */
static __always_inline struct alloc_tag *alloctag_fail_armed(void)
{
	struct alloc_tag *tag = READ_ONCE(current->alloc_tag);

	if (tag && (READ_ONCE(tag->ct.flags) & ALLOCTAG_FAULT_MASK))
		return tag;
	return NULL;
}

/*
 * The page allocator's. It passes the order, not the size: clang computed
 * PAGE_SIZE << order before the patched-out jump, three instructions on
 * every page allocation while nothing is armed.
 */
static __always_inline bool alloctag_fail_pages(gfp_t gfp, unsigned int order)
{
	struct alloc_tag *tag;

	if (!static_branch_unlikely(&alloctag_fail_key))
		return false;
	tag = alloctag_fail_armed();
	return tag && alloctag_fail_pages_slowpath(tag, gfp, order);
}

/*
 * The slab allocator's: given the cache, not its object size, whose load the
 * compiler would place before the patched-out jump.
 */
static __always_inline bool alloctag_fail_slab(struct kmem_cache *s, gfp_t gfp)
{
	struct alloc_tag *tag;

	if (!static_branch_unlikely(&alloctag_fail_key))
		return false;
	tag = alloctag_fail_armed();
	return tag && alloctag_fail_slab_slowpath(tag, s, gfp);
}

/*
 * The per-CPU allocator's, first thing in pcpu_alloc(): a rule on a per-CPU
 * call site fails it whether or not the allocation would have needed new
 * pages (which the page allocator's hook would fail).
 */
static __always_inline bool alloctag_fail_percpu(gfp_t gfp, size_t size)
{
	struct alloc_tag *tag;

	if (!static_branch_unlikely(&alloctag_fail_key))
		return false;
	tag = alloctag_fail_armed();
	return tag && alloctag_fail_percpu_slowpath(tag, gfp, size);
}

#else

static inline bool alloctag_fail_pages(gfp_t gfp, unsigned int order)
{
	return false;
}

static inline bool alloctag_fail_slab(struct kmem_cache *s, gfp_t gfp)
{
	return false;
}

static inline bool alloctag_fail_percpu(gfp_t gfp, size_t size)
{
	return false;
}

#endif /* CONFIG_ALLOCTAG_FAULT_INJECTION */

#endif /* _ALLOCTAG_FAIL_H */
