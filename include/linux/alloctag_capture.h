/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capture of the live objects of selected call sites (lib/alloctag/src/capture/),
 * asked by the allocation-tag hooks that alloctag's patches edit:
 *  - the slab hooks (mm/slub.c): a record is made on allocation and goes on
 *    free, in their capture variants;
 *  - post_alloc_hook() (mm/page_alloc.c, before the pages' tag is set) and
 *    pgalloc_tag_sub_order() (include/linux/pgalloc_tag.h): a record is made, and
 *    goes;
 *  - pgalloc_tag_split() and pgalloc_tag_copy() (include/linux/mm.h): the
 *    record follows the pages;
 *  - __free_pages() (mm/page_alloc.c) of a block whose first page someone
 *    else holds: the record shrinks to that page.
 * Only include/linux/alloc_tag.h includes this header, after its struct
 * alloc_tag and is_codetag_empty(), which the hooks use. Nearly every module
 * includes alloc_tag.h (through percpu.h), so this header lives under
 * include/linux/, where alloctag's patches install it as a file: the headers
 * package (scripts/package/install-extmod-build) then carries it.
 *
 * The capture key is on only while a capture selection is in force. Behind
 * it, only a tag whose capture field (bits 20 to 31 of its flags,
 * Field::CAPTURE in src/codetag/select.rs) is set goes on to the out-of-line
 * slow path, so an unselected site pays one predictable branch. Except
 * post_alloc_hook()'s: with waste accounting built in, capture's and waste's
 * page hook is one out-of-line call behind a key that either turns on
 * (alloctag_waste.h), which tests the mark itself, so that the path with the
 * key off keeps no register across it; an unselected site's page allocation
 * pays that call while capture is on (about 35 instructions at order 0,
 * Documentation/benchmarks.rst).
 *
 * The slab hooks, the hottest, pay nothing while nothing is selected: they
 * test the slab-plain key instead of mem_alloc_profiling_enabled(), on while
 * profiling is on and capture off (src/keys.rs keeps it so), and only
 * when it is off do they take their capture variants, inline too, if
 * alloctag_slab_capture() holds. One static branch, as in 6.12, where
 * capture would add one more.
 */
#ifndef _ALLOCTAG_CAPTURE_H
#define _ALLOCTAG_CAPTURE_H

#include <linux/codetag.h>
#include <linux/compiler.h>
#include <linux/jump_label.h>
#include <linux/types.h>

struct alloc_tag;
struct folio;
struct kmem_cache;
struct page;

/*
 * The slow paths that hot paths call before they go on (src/glue_capture.c,
 * the page allocation one of src/glue_waste_pages.c, per-node counting's
 * count in src/glue.c) save every register they use, so that their callers
 * keep none live across them. bindgen cannot express that calling
 * convention, and Rust never calls them: it sees plain declarations
 * (rust/Makefile defines __BINDGEN__).
 */
#ifdef __BINDGEN__
#define __alloctag_slowpath
#else
#define __alloctag_slowpath __preserve_most
#endif

#ifdef CONFIG_ALLOCTAG_CAPTURE

/* Field::CAPTURE of src/codetag/select.rs. */
#define ALLOCTAG_CAPTURE_MASK	0xfff00000U

DECLARE_STATIC_KEY_FALSE(alloctag_capture_key);
DECLARE_STATIC_KEY_MAYBE(CONFIG_MEM_ALLOC_PROFILING_ENABLED_BY_DEFAULT,
			 alloctag_slab_plain_key);

/* Profiling is on and capture off: the slab hooks' plain variants. */
static __always_inline bool alloctag_slab_plain(void)
{
	return static_branch_maybe(CONFIG_MEM_ALLOC_PROFILING_ENABLED_BY_DEFAULT,
				   &alloctag_slab_plain_key);
}

/*
 * The slab hooks found the slab-plain key off: they take their capture
 * variants if profiling is on. They do not ask the capture key here: a task
 * preempted between the two tests while capture ends (the slab-plain key
 * back on, then the capture key off) would find both off and skip a charge
 * or an uncharge. The capture variants test the capture key themselves. A
 * macro: mem_alloc_profiling_enabled() comes later in alloc_tag.h.
 */
#define alloctag_slab_capture() mem_alloc_profiling_enabled()

void __alloctag_slowpath alloctag_capture_slab_slowpath(union codetag_ref *ref,
						    const void *object,
						    struct kmem_cache *s,
						    gfp_t gfp);
void __alloctag_slowpath alloctag_capture_pages_slowpath(struct page *page,
						     const struct alloc_tag *tag,
						     unsigned int order,
						     gfp_t gfp);
void __alloctag_slowpath alloctag_capture_free_slowpath(const void *key);
void __alloctag_slowpath alloctag_capture_shrink_slowpath(struct page *page,
						      unsigned int order);
void __alloctag_slowpath alloctag_capture_split_slowpath(struct folio *folio,
						     int old_order,
						     int new_order);
void __alloctag_slowpath alloctag_capture_copy_slowpath(const void *to,
						    struct folio *new,
						    struct folio *old);

static __always_inline bool alloctag_capture_marked(const struct codetag *ct)
{
	return READ_ONCE(ct->flags) & ALLOCTAG_CAPTURE_MASK;
}

/*
 * A slab object of s was charged to ref's tag. ref may hold no tag (NULL:
 * the allocation ran with no current tag) or, under
 * MEM_ALLOC_PROFILING_DEBUG, CODETAG_EMPTY: a vector made after an earlier
 * one failed starts with every ref empty, and an allocation with no current
 * tag leaves it so. Neither is a tag to read, as on the free side. The slow
 * path reads the charged size from s: a value loaded here would be loaded
 * before the patched-out jump.
 */
static __always_inline void alloctag_capture_slab(union codetag_ref *ref,
						  const void *object,
						  struct kmem_cache *s,
						  gfp_t gfp)
{
	if (static_branch_unlikely(&alloctag_capture_key) && ref->ct &&
	    !is_codetag_empty(ref) && alloctag_capture_marked(ref->ct))
		alloctag_capture_slab_slowpath(ref, object, s, gfp);
}

/*
 * Pages are about to be charged to *tagp, the current task's tag (may be
 * NULL): called before pgalloc_tag_add_order(), where page, order and gfp are live
 * anyway; after it they would be kept across its calls. READ_ONCE() keeps
 * the compiler from loading the tag before the patched-out jump.
 */
static __always_inline void alloctag_capture_pages(struct page *page,
						   struct alloc_tag * const *tagp,
						   unsigned int order,
						   gfp_t gfp)
{
	const struct alloc_tag *tag;

	if (static_branch_unlikely(&alloctag_capture_key)) {
		tag = READ_ONCE(*tagp);
		if (tag && alloctag_capture_marked(&tag->ct))
			alloctag_capture_pages_slowpath(page, tag, order, gfp);
	}
}

/*
 * ref is about to be cleared: its object is freed, or (migration) charged
 * anew. A reference that holds no tag has no record. The record is keyed
 * by key: the reference itself, or, with page tags in page flags
 * (linux/alloctag_pgflags.h), where ref is a copy, the struct page.
 */
static __always_inline void alloctag_capture_free_key(union codetag_ref *ref,
						      const void *key)
{
	if (static_branch_unlikely(&alloctag_capture_key) && ref->ct &&
	    !is_codetag_empty(ref) && alloctag_capture_marked(ref->ct))
		alloctag_capture_free_slowpath(key);
}

static __always_inline void alloctag_capture_free(union codetag_ref *ref)
{
	alloctag_capture_free_key(ref, ref);
}

/*
 * __free_pages() is about to free all but the first page of a block of
 * 2^order pages charged to tag, whose first page someone else holds: the
 * record shrinks to that page.
 */
static __always_inline void alloctag_capture_shrink(struct page *page,
						    const struct alloc_tag *tag,
						    unsigned int order)
{
	if (static_branch_unlikely(&alloctag_capture_key) && tag &&
	    alloctag_capture_marked(&tag->ct))
		alloctag_capture_shrink_slowpath(page, order);
}

/* A folio charged to tag was split from old_order into new_order pieces. */
static __always_inline void alloctag_capture_split(struct folio *folio,
						   const struct codetag *tag,
						   int old_order,
						   int new_order)
{
	if (static_branch_unlikely(&alloctag_capture_key) &&
	    alloctag_capture_marked(tag))
		alloctag_capture_split_slowpath(folio, old_order, new_order);
}

/* Migration moves old's charge to tag to new, whose record key is to. */
static __always_inline void alloctag_capture_copy(const void *to,
						  const struct codetag *tag,
						  struct folio *new,
						  struct folio *old)
{
	if (static_branch_unlikely(&alloctag_capture_key) &&
	    alloctag_capture_marked(tag))
		alloctag_capture_copy_slowpath(to, new, old);
}

#else /* CONFIG_ALLOCTAG_CAPTURE */

/* A macro: mem_alloc_profiling_enabled() comes later in alloc_tag.h. */
#define alloctag_slab_plain() mem_alloc_profiling_enabled()
#define alloctag_slab_capture() false

static inline void alloctag_capture_slab(union codetag_ref *ref,
					 const void *object,
					 struct kmem_cache *s, gfp_t gfp) {}
static inline void alloctag_capture_pages(struct page *page,
					  struct alloc_tag * const *tagp,
					  unsigned int order, gfp_t gfp) {}
static inline void alloctag_capture_free_key(union codetag_ref *ref,
					     const void *key) {}
static inline void alloctag_capture_free(union codetag_ref *ref) {}
static inline void alloctag_capture_shrink(struct page *page,
					   const struct alloc_tag *tag,
					   unsigned int order) {}
static inline void alloctag_capture_split(struct folio *folio,
					  const struct codetag *tag,
					  int old_order, int new_order) {}
static inline void alloctag_capture_copy(const void *to,
					 const struct codetag *tag,
					 struct folio *new, struct folio *old) {}

#endif /* CONFIG_ALLOCTAG_CAPTURE */

#endif /* _ALLOCTAG_CAPTURE_H */
