/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-call-site fault injection (lib/alloctag/src/fault.rs), asked by the
 * slab and page allocators where they already ask failslab and
 * fail_page_alloc. scripts/graft.sh includes this header into mm/slub.c and
 * mm/page_alloc.c.
 *
 * The static key is on only while a rule is armed: with none, the test is a
 * patched-out jump and costs nothing measurable.
 */
#ifndef _ALLOCTAG_FAIL_H
#define _ALLOCTAG_FAIL_H

#include <linux/jump_label.h>
#include <linux/types.h>

struct kmem_cache;

#ifdef CONFIG_ALLOCTAG_FAULT_INJECTION

DECLARE_STATIC_KEY_FALSE(alloctag_fail_key);
bool alloctag_should_fail(gfp_t gfp, size_t size);
bool __preserve_most alloctag_fail_slowpath(gfp_t gfp, size_t size);
bool __preserve_most alloctag_fail_slab_slowpath(struct kmem_cache *s,
						 gfp_t gfp);

/*
 * The calls behind the key preserve the caller's registers (clang's
 * preserve_most, as the list-debug slow paths use), so that the allocators'
 * fast paths save no more registers than without them.
 */
static __always_inline bool alloctag_fail(gfp_t gfp, size_t size)
{
	return static_branch_unlikely(&alloctag_fail_key) &&
	       alloctag_fail_slowpath(gfp, size);
}

/*
 * The slab allocator's: given the cache, not its object size, whose load the
 * compiler would place before the patched-out jump.
 */
static __always_inline bool alloctag_fail_slab(struct kmem_cache *s, gfp_t gfp)
{
	return static_branch_unlikely(&alloctag_fail_key) &&
	       alloctag_fail_slab_slowpath(s, gfp);
}

#else

static inline bool alloctag_fail(gfp_t gfp, size_t size)
{
	return false;
}

static inline bool alloctag_fail_slab(struct kmem_cache *s, gfp_t gfp)
{
	return false;
}

#endif /* CONFIG_ALLOCTAG_FAULT_INJECTION */

#endif /* _ALLOCTAG_FAIL_H */
