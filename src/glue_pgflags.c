// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of page tags, wherever they live: the out-of-line paths of the
 * page hooks (include/linux/pgalloc_tag.h, include/linux/alloctag_pgflags.h)
 * and their state. With page tags in page flags: the key, vmlinux's tags
 * and the index's table that the inline hooks read, the rare paths (a tag
 * without an index, split, migration) and the bits the index gets. With
 * page tags in page_ext: page_ext's operations and the charge of a page,
 * out of line. The index itself is Rust's (src/alloc_tag/index.rs,
 * src/codetag/registry/index.rs); the map of the page hook, from
 * alloc_pages() to __free_pages(), is in Documentation/alloctag.rst.
 *
 * C because the hooks are C inlines of kernel headers that modules use
 * (exported symbols), and what they run on is C macros: static keys,
 * this_cpu ops, folio_page(), early_param(), page_ext's RCU section.
 */

#include <linux/alloc_tag.h>
#include <linux/init.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/page_ext.h>
#include <linux/percpu.h>
#include <linux/pgalloc_tag.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/static_key.h>

#include "../include/alloctag_accuracy.h"
#include "../include/alloctag_glue.h"

/* The tag index's lock (src/alloc_tag/index.rs), as the registry's. */
DECLARE_RWSEM(alloctag_index_lock);

/*
 * Page tags in page flags (include/linux/alloctag_pgflags.h): the key and
 * vmlinux's section, set by alloc_tag_sec_init() (src/alloc_tag/index.rs).
 * The page hooks are inline, and mm.h's free_reserved_page() is used by
 * modules: exported.
 */
DEFINE_STATIC_KEY_FALSE(mem_profiling_compressed);
EXPORT_SYMBOL_GPL(mem_profiling_compressed);
struct alloc_tag *alloctag_kernel_tags __ro_after_init;
EXPORT_SYMBOL_GPL(alloctag_kernel_tags);
unsigned long alloctag_kernel_tags_count __ro_after_init;
EXPORT_SYMBOL_GPL(alloctag_kernel_tags_count);

/* The index's table (src/alloc_tag/index.rs fills it), read by the hooks. */
struct alloc_tag **alloctag_index_dir[ALLOCTAG_INDEX_DIR];
EXPORT_SYMBOL_GPL(alloctag_index_dir);

#ifdef CONFIG_ALLOCTAG_PER_NODE
/* The page hooks' page-flags variant while per-node counting is off (src/keys.rs). */
DEFINE_STATIC_KEY_FALSE(alloctag_pgflags_plain_key);
#endif

/*
 * pgalloc_tag_add_order()'s page_ext path with the Rust core, out of line
 * (include/linux/pgalloc_tag.h), so that post_alloc_hook() keeps no register
 * for its two calls while profiling is off or page tags are in page flags.
 * The hook tested the keys: profiling is on, and page tags are in page_ext.
 */
static __always_inline void __alloctag_page_ext_add(struct page *page, struct alloc_tag *tag,
						    unsigned int order, const bool node)
{
	struct page_ext *page_ext = page_ext_get(page);
	union codetag_ref *ref;

	if (!page_ext) {
		/* Before page_ext is up: marked empty once it is (early.rs) */
		alloctag_early_page(page);
		return;
	}
	ref = codetag_ref_from_page_ext(page_ext);
	if (!node)
		alloc_tag_add_cpu(ref, tag, PAGE_SIZE << order);
	else if (__alloc_tag_ref_set(ref, tag))
		alloctag_node_count(tag, page_to_nid(page), PAGE_SIZE << order, 1);
	page_ext_put(page_ext);
}

void alloctag_page_ext_add(struct page *page, struct task_struct *task, unsigned int order)
{
	__alloctag_page_ext_add(page, task->alloc_tag, order, false);
}

#ifdef CONFIG_ALLOCTAG_PER_NODE
/*
 * The page hooks with per-node counting on, out of line, saving every
 * register they use (__alloctag_slowpath), so that the hooks keep none for
 * them: the hook tested the keys, profiling and per-node counting are on.
 */
void __alloctag_slowpath alloctag_page_add_node(struct page *page, unsigned int order)
{
	if (alloctag_pgflags())
		__alloctag_pgflags_add(page, current->alloc_tag, order, true);
	else
		__alloctag_page_ext_add(page, current->alloc_tag, order, true);
}

void __alloctag_slowpath alloctag_page_sub_node(struct page *page, unsigned int order)
{
	if (alloctag_pgflags())
		__alloctag_pgflags_sub(page, order, true);
	else
		__alloctag_page_ext_sub(page, order, true);
}
#endif

/*
 * A page charged to a tag without an index: the hook's rare path, out of
 * line and in C (the page-flags writer is an inline of the header), so that
 * the hook calls it last and keeps no register across it.
 */
void alloctag_pgflags_unindexed(struct page *page, struct alloc_tag *tag)
{
	alloctag_set_inaccurate(tag);
	alloctag_pgflags_write(page, ALLOCTAG_IDX_EMPTY);
}

#ifdef CONFIG_ALLOCTAG_KUNIT_TEST
/*
 * Test kernels only: alloctag_test_pgflags_bits=N makes fewer page-flag bits
 * look free, so that the guest test of the fallback to page_ext
 * (tests/guest/pgflags.sh) can boot a kernel whose tags do not fit. An early
 * parameter: it is read before mm_core_init() decides.
 */
static int alloctag_test_pgflags_bits __ro_after_init = BITS_PER_LONG;

static int __init alloctag_test_pgflags_bits_setup(char *s)
{
	return kstrtoint(s, 0, &alloctag_test_pgflags_bits);
}
early_param("alloctag_test_pgflags_bits", alloctag_test_pgflags_bits_setup);
#endif

/* The bits for an index; once, at boot (alloc_tag_sec_init()). */
int alloctag_pgflags_bits(void)
{
	int bits = ALLOCTAG_IDX_BITS;

#ifdef CONFIG_ALLOCTAG_KUNIT_TEST
	bits = clamp(alloctag_test_pgflags_bits, 0, bits);
#endif
	return bits;
}

int alloctag_pgflags_free_bits(void)
{
	return NR_UNUSED_PAGEFLAG_BITS;
}

/*
 * Once: at boot, or booted 0 at the first switch-on (src/alloc_tag/index.rs);
 * where page tags live never changes afterwards.
 */
void alloctag_enable_compressed(void)
{
	static_branch_enable(&mem_profiling_compressed);
}

bool alloctag_compressed_enabled(void)
{
	return static_branch_unlikely(&mem_profiling_compressed);
}

/*
 * pgalloc_tag_split() with page tags in page flags: each new folio's head
 * gets the tag's index, and one call more, as alloc_tag_ref_set() counts.
 * Out of line: splits are rare; folio_page() and alloc_tag_count_as() are
 * macros. The caller tested the keys (alloc_tag_counting_call()).
 */
static __always_inline void __alloctag_pgflags_split(struct folio *folio, int old_order,
						     int new_order,
						     const enum alloc_tag_counting counting)
{
	unsigned int nr_pages = 1 << new_order;
	unsigned long idx = alloctag_pgflags_read(&folio->page);
	struct alloc_tag *tag = alloctag_pgflags_get(&folio->page);
	int i;

	if (!tag)
		return;
	for (i = nr_pages; i < (1 << old_order); i += nr_pages) {
		alloctag_pgflags_write(folio_page(folio, i), idx);
		alloc_tag_count_as(counting, tag, folio_nid(folio), 0, 1);
	}
	/* Each piece gets its own record. */
	alloctag_capture_split(folio, &tag->ct, old_order, new_order);
}

void alloctag_pgflags_split(struct folio *folio, int old_order, int new_order)
{
	__alloctag_pgflags_split(folio, old_order, new_order, ALLOC_TAG_COUNT_CPU);
}

/*
 * pgalloc_tag_copy() with page tags in page flags: migration moves old's
 * tag to new, whose own charge is taken back in bytes (our fix of 6.12's).
 * The caller tested the keys.
 */
static __always_inline void __alloctag_pgflags_copy(struct folio *new, struct folio *old,
						    const enum alloc_tag_counting counting)
{
	unsigned long idx = alloctag_pgflags_read(&old->page);
	struct alloc_tag *tag;
	union codetag_ref ref;

	tag = alloctag_pgflags_get(&old->page);
	if (!tag)
		return;
	alloctag_pgflags_write(&old->page, ALLOCTAG_IDX_EMPTY);
	alloctag_pgflags_ref(alloctag_pgflags_read(&new->page), &ref);
	/* The target loses its own record, if any; old's moves to it. */
	alloctag_capture_free_key(&ref, &new->page);
	alloc_tag_sub_as(counting, &ref, folio_size(new), folio_nid(new));
	alloctag_capture_copy(&new->page, &tag->ct, new, old);
	__alloc_tag_ref_set(&ref, tag);
	alloctag_pgflags_write(&new->page, idx);
	/* and old's charge moves to new's node */
	alloc_tag_move_as(counting, tag, folio_size(old), folio_nid(old), folio_nid(new));
}

void alloctag_pgflags_copy(struct folio *new, struct folio *old)
{
	__alloctag_pgflags_copy(new, old, ALLOC_TAG_COUNT_CPU);
}

#ifdef CONFIG_ALLOCTAG_PER_NODE
/* The two above with per-node counting on: the page's node moves too. */
void alloctag_pgflags_split_node(struct folio *folio, int old_order, int new_order)
{
	__alloctag_pgflags_split(folio, old_order, new_order, ALLOC_TAG_COUNT_NODE);
}

void alloctag_pgflags_copy_node(struct folio *new, struct folio *old)
{
	__alloctag_pgflags_copy(new, old, ALLOC_TAG_COUNT_NODE);
}
#endif

static __init bool need_page_alloc_tagging(void)
{
	return alloctag_page_ext_needed();
}

static __init bool need_page_alloc_tagging_later(void)
{
	return alloctag_page_ext_needed_later();
}

/* page_ext made when profiling first turns on (src/alloc_tag/page_ext.rs) */
int alloctag_page_ext_make(void)
{
	return page_ext_init_late(&page_alloc_tagging_ops);
}

/* page_ext is up: the pages allocated before get their references marked. */
static __init void init_page_alloc_tagging(void)
{
	if (IS_ENABLED(CONFIG_MEM_ALLOC_PROFILING_DEBUG))
		alloctag_early_pages_done();
}

#ifdef CONFIG_MEM_ALLOC_PROFILING_DEBUG
/*
 * Marks a page's tag reference CODETAG_EMPTY if it is unset
 * (src/alloc_tag/early.rs): get_page_tag_ref() and put_page_tag_ref() are
 * inline, around page_ext's RCU read section. A compare-and-exchange: a page
 * charged meanwhile keeps its tag.
 */
void alloctag_page_ref_mark_empty(struct page *page)
{
	union codetag_ref *ref = get_page_tag_ref(page);

	if (ref) {
		cmpxchg(&ref->ct, NULL, CODETAG_EMPTY);
		put_page_tag_ref(ref);
	}
}
#endif

/* EXPORT_SYMBOL must sit beside the definition. */
struct page_ext_operations page_alloc_tagging_ops = {
	.size = sizeof(union codetag_ref),
	.need = need_page_alloc_tagging,
	.init = init_page_alloc_tagging,
	.need_later = need_page_alloc_tagging_later,
};
EXPORT_SYMBOL(page_alloc_tagging_ops);
