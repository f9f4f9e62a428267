/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Page tags in page flags (sysctl.vm.mem_profiling=1,compressed), for the
 * Rust core (lib/alloctag/): the tag of a page is an index in the page-flag
 * bits that no flag, zone, node, section or LRU field uses, as in mainline
 * since 6.13, instead of a pointer in page_ext. page_ext then holds nothing
 * for tags, and a page's hook loads no page_ext.
 *
 * Indices (src/codetag/registry/index.rs): 0 is no tag, 1 is CODETAG_EMPTY,
 * then vmlinux's tags in section order, then every other tag's (modules',
 * dynamic ones), as the code-tag library gives them out. Each tag carries
 * its own index (struct codetag's index), which an allocation reads. A free
 * turns an index back into a tag inline: vmlinux's by arithmetic on its
 * section, the others through the code-tag library's table. A tag without
 * an index (its module's parameters are being parsed, or the index space
 * was full when its module loaded) is marked inaccurate, and its pages are
 * not charged, so that nothing is ever subtracted that was not added.
 *
 * pgalloc_tag.h includes this header, and so nearly every module: it lives
 * under include/linux/, installed as a file, as alloctag_capture.h is.
 */
#ifndef _ALLOCTAG_PGFLAGS_H
#define _ALLOCTAG_PGFLAGS_H

#include <linux/alloc_tag.h>
#include <linux/init.h>

struct folio;
struct page;

/*
 * A page's node, for per-node counting: page_to_nid(), which linux/mm.h
 * defines after it includes this header (through linux/pgalloc_tag.h), and
 * defines this with it.
 */
static inline int alloctag_page_nid(const struct page *page);

/*
 * The page hooks' variants (pgalloc_tag.h): page tags in page_ext, per CPU
 * alone; in page flags, per CPU alone; per-node counting's, out of line, in
 * either place. Chosen once, at the first switch-on (src/keys.rs).
 */
enum alloctag_page_variant {
	ALLOCTAG_PAGE_EXT,
	ALLOCTAG_PAGE_FLAGS,
	ALLOCTAG_PAGE_NODE,
};

#define ALLOCTAG_IDX_NULL	0UL
#define ALLOCTAG_IDX_EMPTY	1UL
#define ALLOCTAG_IDX_FIRST	2UL

#if defined(CONFIG_MEM_ALLOC_PROFILING_RUST)

/* Itself, until the capture patch has alloc_tag.h include it (a series bisects). */
#include <linux/alloctag_capture.h>
#include <linux/atomic.h>
#include <linux/jump_label.h>
#include <linux/minmax.h>
#include <linux/mm_types.h>
#include <linux/mmzone.h>
#include <linux/page-flags-layout.h>
#include <linux/percpu.h>

/* At most 16 bits, as mainline's pgalloc_tag_idx; none where none is free. */
#define ALLOCTAG_IDX_BITS	clamp_t(int, NR_UNUSED_PAGEFLAG_BITS, 0, 16)
#define ALLOCTAG_IDX_SHIFT	(LRU_REFS_PGOFF - ALLOCTAG_IDX_BITS)
#define ALLOCTAG_IDX_MASK	((1UL << ALLOCTAG_IDX_BITS) - 1)
/*
 * The field in page->flags. free_pages_prepare() clears it on every free,
 * with the flags it clears, profiling on or off (alloctag_pgflags_add()).
 */
#define ALLOCTAG_IDX_FIELD	(ALLOCTAG_IDX_MASK << ALLOCTAG_IDX_SHIFT)

/*
 * On where the tags fit: from boot with ,compressed, or booted 0 from the
 * first switch-on (src/alloc_tag/index.rs).
 */
DECLARE_STATIC_KEY_FALSE(mem_profiling_compressed);

/* vmlinux's alloc_tags section, set before the first page is allocated. */
extern struct alloc_tag *alloctag_kernel_tags;
extern unsigned long alloctag_kernel_tags_count;

/* In Rust (src/alloc_tag/index.rs): called by mm_core_init(). */
void __init alloc_tag_sec_init(void);
/*
 * In Rust (src/alloc_tag/counters.rs): called by mm_core_init() once per-CPU
 * memory can be allocated; booted on, gives the tags counters, then turns
 * profiling on.
 */
void alloctag_counters_boot(void);

/* In C (src/glue_pgflags.c): the rare paths, out of line. */
void alloctag_pgflags_unindexed(struct page *page, struct alloc_tag *tag);
void alloctag_pgflags_split(struct folio *folio, int old_order, int new_order);
void alloctag_pgflags_copy(struct folio *new, struct folio *old);

static __always_inline bool alloctag_pgflags(void)
{
	return static_branch_unlikely(&mem_profiling_compressed);
}

#ifdef CONFIG_ALLOCTAG_PER_NODE
/* On where page tags are in page flags and per-node counting is off. */
DECLARE_STATIC_KEY_FALSE(alloctag_pgflags_plain_key);

/* In C (src/glue_pgflags.c): per-node counting's page hooks. */
void __alloctag_slowpath alloctag_page_add_node(struct page *page, unsigned int order);
void __alloctag_slowpath alloctag_page_sub_node(struct page *page, unsigned int order);

/*
 * One patched jump names both keys, which are never on together
 * (alloctag_branch2()): a jump to the page-flags variant while
 * alloctag_pgflags_plain_key is on, to per-node counting's while
 * alloctag_node_key is, none (page_ext's) while neither is. The hooks then
 * pay one instruction for the three, as 6.12's and per-node counting off
 * pay for two. The keys turn on once, at most one of them (src/keys.rs).
 */
static __always_inline enum alloctag_page_variant alloctag_page_variant(void)
{
	switch (alloctag_branch2(&alloctag_pgflags_plain_key, &alloctag_node_key)) {
	case 1:
		return ALLOCTAG_PAGE_FLAGS;
	case 2:
		return ALLOCTAG_PAGE_NODE;
	default:
		return ALLOCTAG_PAGE_EXT;
	}
}

/* In C (src/glue_pgflags.c): the rare paths with per-node counting on. */
void alloctag_pgflags_split_node(struct folio *folio, int old_order, int new_order);
void alloctag_pgflags_copy_node(struct folio *new, struct folio *old);
#else /* !CONFIG_ALLOCTAG_PER_NODE */
static __always_inline enum alloctag_page_variant alloctag_page_variant(void)
{
	return alloctag_pgflags() ? ALLOCTAG_PAGE_FLAGS : ALLOCTAG_PAGE_EXT;
}

static inline void alloctag_page_add_node(struct page *page, unsigned int order) {}
static inline void alloctag_page_sub_node(struct page *page, unsigned int order) {}
static inline void alloctag_pgflags_split_node(struct folio *folio, int old_order,
					       int new_order) {}
static inline void alloctag_pgflags_copy_node(struct folio *new, struct folio *old) {}
#endif /* CONFIG_ALLOCTAG_PER_NODE */

/* The index in flags, a page's flags. */
static __always_inline unsigned long alloctag_pgflags_field(unsigned long flags)
{
	return (flags >> ALLOCTAG_IDX_SHIFT) & ALLOCTAG_IDX_MASK;
}

static __always_inline unsigned long alloctag_pgflags_read(const struct page *page)
{
	return alloctag_pgflags_field(READ_ONCE(page->flags));
}

/* Other bits of page->flags change under us (atomic flag ops): a cmpxchg. */
static __always_inline void alloctag_pgflags_write(struct page *page, unsigned long idx)
{
	unsigned long old = READ_ONCE(page->flags), new;

	do {
		new = (old & ~ALLOCTAG_IDX_FIELD) | (idx << ALLOCTAG_IDX_SHIFT);
	} while (unlikely(!try_cmpxchg(&page->flags, &old, new)));
}

/*
 * The tags outside vmlinux by index: the code-tag library's table
 * (src/codetag/registry/index.rs), in leaves of 512 entries that are
 * published before any page can hold one of their indices and never freed.
 * An entry is set while its segment is in the index, before any page gets
 * the index, and cleared when the segment goes, when no page holds it any
 * more: a free reads it with no lock.
 */
#define ALLOCTAG_INDEX_LEAF_SHIFT	9
#define ALLOCTAG_INDEX_LEAF		(1UL << ALLOCTAG_INDEX_LEAF_SHIFT)
#define ALLOCTAG_INDEX_DIR		(1UL << (16 - ALLOCTAG_INDEX_LEAF_SHIFT))
extern struct alloc_tag **alloctag_index_dir[ALLOCTAG_INDEX_DIR];

/* The tag of idx, at most 16 bits, outside vmlinux's; NULL for none. */
static __always_inline struct alloc_tag *alloctag_pgflags_table(unsigned long idx)
{
	struct alloc_tag **leaf;

	leaf = READ_ONCE(alloctag_index_dir[(idx >> ALLOCTAG_INDEX_LEAF_SHIFT) &
					    (ALLOCTAG_INDEX_DIR - 1)]);
	return leaf ? READ_ONCE(leaf[idx & (ALLOCTAG_INDEX_LEAF - 1)]) : NULL;
}

/*
 * tag's index: NULL for no tag, also for one that has none. The code-tag
 * library sets a tag's index after the table's entry for it and clears it
 * before the entry, so a page holds only indices that the table names.
 */
static __always_inline unsigned long alloctag_pgflags_index(const struct alloc_tag *tag)
{
	return tag ? READ_ONCE(tag->ct.index) : ALLOCTAG_IDX_NULL;
}

/*
 * The reference an index stands for: no tag, CODETAG_EMPTY, or a tag. An
 * index that names no tag (none can: its segment went while a page held it)
 * is no tag.
 */
static __always_inline void alloctag_pgflags_ref(unsigned long idx, union codetag_ref *ref)
{
	unsigned long i = idx - ALLOCTAG_IDX_FIRST;
	struct alloc_tag *tag;

	if (likely(i < alloctag_kernel_tags_count)) {
		ref->ct = &alloctag_kernel_tags[i].ct;
		return;
	}
	/*
	 * The table's entries 0 and 1 are NULL (its segments start at
	 * ALLOCTAG_IDX_FIRST): a module's tag is found without a test of
	 * ALLOCTAG_IDX_EMPTY.
	 */
	tag = alloctag_pgflags_table(idx);
	if (likely(tag))
		ref->ct = &tag->ct;
	else if (idx == ALLOCTAG_IDX_EMPTY)
		set_codetag_empty(ref);
	else
		ref->ct = NULL;
}

/*
 * pgalloc_tag_add_order() with compressed tags: counted per CPU alone, or,
 * in per-node counting's variant (node), by the page's node.
 */
static __always_inline void __alloctag_pgflags_add(struct page *page, struct alloc_tag *tag,
						   unsigned int order, const bool node)
{
	union codetag_ref ref = { .ct = NULL };
	unsigned long idx = alloctag_pgflags_index(tag);
	unsigned long held = ALLOCTAG_IDX_NULL;

	/* Only the debug checks read what the page held. */
	if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG)) {
		held = alloctag_pgflags_read(page);
		alloctag_pgflags_ref(held, &ref);
	}
	/*
	 * A tag without an index (its module's parameters are parsed before
	 * its tags are indexed; the index was full) is marked inaccurate and
	 * not charged; the page is marked empty, so that its free neither
	 * subtracts nor warns.
	 */
	if (unlikely(tag && idx == ALLOCTAG_IDX_NULL)) {
		alloctag_pgflags_unindexed(page, tag);
		return;
	}
	if (__alloc_tag_ref_set(&ref, tag)) {
		if (node)
			alloctag_node_count(tag, alloctag_page_nid(page), PAGE_SIZE << order, 1);
		else
			alloc_tag_count_cpu(tag, PAGE_SIZE << order, 1);
		/*
		 * The field is clear: a struct page starts so, and
		 * free_pages_prepare() clears it on every free, profiling on
		 * or off. So one atomic or sets it, where a compare-and-
		 * exchange would mask it first. Where the debug checks found
		 * it set (they warned), it is replaced.
		 */
		if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG) && unlikely(held))
			alloctag_pgflags_write(page, idx);
		else
			atomic_long_or(idx << ALLOCTAG_IDX_SHIFT,
				       (atomic_long_t *)&page->flags);
	}
}

/*
 * pgalloc_tag_sub_order() with compressed tags. It only reads the index:
 * its one caller, free_pages_prepare(), clears it after, with the
 * check-at-prep flags, in the plain write 6.12 makes there anyway.
 */
static __always_inline void __alloctag_pgflags_sub(struct page *page, unsigned int order,
						   const bool node)
{
	union codetag_ref ref;
	struct alloc_tag *tag;

	alloctag_pgflags_ref(alloctag_pgflags_read(page), &ref);
	/* The pages go; so does their record, keyed by the page. */
	alloctag_capture_free_key(&ref, page);
	if (!node) {
		alloc_tag_sub_cpu(&ref, PAGE_SIZE << order);
		return;
	}
	tag = alloc_tag_sub_ref(&ref);
	if (tag)
		alloctag_node_count(tag, alloctag_page_nid(page), -(long)(PAGE_SIZE << order), -1);
}

/* The plain variants: per-node counting off. */
static __always_inline void alloctag_pgflags_add(struct page *page, struct alloc_tag *tag,
						 unsigned int order)
{
	__alloctag_pgflags_add(page, tag, order, false);
}

static __always_inline void alloctag_pgflags_sub(struct page *page, unsigned int order)
{
	__alloctag_pgflags_sub(page, order, false);
}

/* The tag an index names, for pgalloc_tag_get(): NULL for none or empty. */
static __always_inline struct alloc_tag *alloctag_pgflags_idx_tag(unsigned long idx)
{
	union codetag_ref ref;

	alloctag_pgflags_ref(idx, &ref);
	alloc_tag_sub_check(&ref);
	if (ref.ct && !is_codetag_empty(&ref))
		return ct_to_alloc_tag(ref.ct);
	return NULL;
}

/* pgalloc_tag_get() with compressed tags. */
static __always_inline struct alloc_tag *alloctag_pgflags_get(struct page *page)
{
	return alloctag_pgflags_idx_tag(alloctag_pgflags_read(page));
}

/*
 * The tag of the index in flags, a page's flags that __free_pages() read
 * before it dropped its reference, profiling on: NULL for none or empty,
 * and if profiling is off now (pgalloc_tag_sub_pages() tests the rare
 * paths' keys, alloc_tag_counting(), which are on while profiling is).
 */
static __always_inline struct alloc_tag *alloctag_pgflags_flags_tag(unsigned long flags)
{
	if (!mem_alloc_profiling_enabled())
		return NULL;
	return alloctag_pgflags_idx_tag(alloctag_pgflags_field(flags));
}

/*
 * __free_pages() of an order-0 page: the page goes whole or stays, so its
 * tag is not needed there (6.12 reads it before it drops its reference, to
 * uncharge 0 tail pages). Such a free reads no tag and tests no key.
 */
static __always_inline bool alloctag_free_pages_order0(unsigned int order)
{
	return !order;
}

/*
 * Whether __free_pages() of a larger page reads its tag before it drops
 * its reference: profiling on, as pgalloc_tag_get() tests. With page tags
 * in page_ext it reads it in free_pages_ext(), the only path that calls out
 * before the drop, out of line so that the others save no register; with
 * page tags in page flags it keeps the page's flags.
 */
static __always_inline bool alloctag_free_pages_tag(void)
{
	return mem_alloc_profiling_enabled();
}

/* pgalloc_tag_sub_order() is inline with the Rust core: the free path calls nothing. */
#define ALLOCTAG_PAGE_HOOK	__always_inline
/*
 * __free_pages()'s path for what is not an order-0 page, out of line: an
 * order-0 free is then a test and a tail call, with no register saved.
 */
#define ALLOCTAG_FREE_PAGES_REST	noinline

#else /* !CONFIG_MEM_ALLOC_PROFILING_RUST: 6.12's C core, page_ext only */

#define ALLOCTAG_IDX_FIELD	0UL

static inline void alloc_tag_sec_init(void) {}
static inline void alloctag_counters_boot(void) {}

static __always_inline bool alloctag_pgflags(void)
{
	return false;
}

static __always_inline enum alloctag_page_variant alloctag_page_variant(void)
{
	return ALLOCTAG_PAGE_EXT;
}

static inline void alloctag_page_add_node(struct page *page, unsigned int order) {}
static inline void alloctag_page_sub_node(struct page *page, unsigned int order) {}
static inline void alloctag_pgflags_split_node(struct folio *folio, int old_order,
					       int new_order) {}
static inline void alloctag_pgflags_copy_node(struct folio *new, struct folio *old) {}

static inline unsigned long alloctag_pgflags_read(const struct page *page)
{
	return ALLOCTAG_IDX_NULL;
}
static inline void alloctag_pgflags_write(struct page *page, unsigned long idx) {}
static inline void alloctag_pgflags_ref(unsigned long idx, union codetag_ref *ref)
{
	ref->ct = NULL;
}
static inline void alloctag_pgflags_add(struct page *page, struct alloc_tag *tag,
					unsigned int order) {}
static inline void alloctag_pgflags_sub(struct page *page, unsigned int order) {}
static inline struct alloc_tag *alloctag_pgflags_get(struct page *page)
{
	return NULL;
}
static inline struct alloc_tag *alloctag_pgflags_idx_tag(unsigned long idx)
{
	return NULL;
}
static inline struct alloc_tag *alloctag_pgflags_flags_tag(unsigned long flags)
{
	return NULL;
}

/* 6.12's: __free_pages() reads the tag of every page it frees. */
static inline bool alloctag_free_pages_order0(unsigned int order)
{
	return false;
}

/* 6.12's: every such free reads it with pgalloc_tag_get(), which tests the key. */
static inline bool alloctag_free_pages_tag(void)
{
	return true;
}

/* 6.12's */
#define ALLOCTAG_PAGE_HOOK	inline
#define ALLOCTAG_FREE_PAGES_REST	__always_inline
static inline void alloctag_pgflags_split(struct folio *folio, int old_order,
					  int new_order) {}
static inline void alloctag_pgflags_copy(struct folio *new, struct folio *old) {}

#endif /* CONFIG_MEM_ALLOC_PROFILING_RUST */

#endif /* _ALLOCTAG_PGFLAGS_H */
