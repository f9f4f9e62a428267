// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of waste accounting for pages and vmalloc() areas
 * (include/alloctag_waste.h): the page slots in page_ext and their
 * page_ext operations, the page hooks' slow paths, among them the one
 * behind the key that capture's page allocation hook shares, and
 * vmalloc()'s, whose areas count their pages instead of the pages.
 *
 * C because page_ext, a page's tag (pgalloc_tag_get()), current, this_cpu
 * ops and preempt_disable() are C's inlines and macros, and the shared
 * allocation slow path's __preserve_most is an attribute only C can give.
 */

#include <linux/alloc_tag.h>
#include <linux/jump_label.h>
#include <linux/mm.h>
#include <linux/page_ext.h>
#include <linux/percpu.h>
#include <linux/pgalloc_tag.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/vmalloc.h>

#include "../include/alloctag_waste.h"
#include "../include/alloctag_glue.h"
#include "glue_waste.h"

/*
 * Pages: a 64-bit slot per page in page_ext, for the head page of each
 * allocation: the period that tracked it in the high 16 bits (0:
 * untracked), then its order in 6 bits, its slack in the rest. Reserved at
 * boot only when asked for (alloctag_waste_slots_reserved()): 8 bytes per
 * page. A free takes back the slot's order, not the free's: ___free_pages()
 * frees the tail of a block whose head is still referenced without its
 * slot, then the head alone, at order 0.
 */
#define PAGE_PERIOD_SHIFT	48
#define PAGE_ORDER_SHIFT	42
#define PAGE_SLACK_MASK		((1ULL << PAGE_ORDER_SHIFT) - 1)

static u64 page_slot_value(u32 period, unsigned int order, u64 slack)
{
	return (u64)period << PAGE_PERIOD_SHIFT | (u64)order << PAGE_ORDER_SHIFT |
	       slack;
}

/* The bytes of the allocation a slot describes. */
static u64 slot_bytes(u64 v)
{
	return PAGE_SIZE << ((v >> PAGE_ORDER_SHIFT) & 63);
}

static bool waste_pages __ro_after_init;

static __init bool need_waste_pages(void)
{
	waste_pages = alloctag_waste_slots_reserved();
	return waste_pages;
}

struct page_ext_operations alloctag_waste_page_ops = {
	.size = sizeof(u64),
	.need = need_waste_pages,
};

bool alloctag_waste_pages_on(void)
{
	return READ_ONCE(waste_pages);
}

/*
 * The slot of page, in *ext's RCU read section (page_ext_put() ends it):
 * NULL where pages have no slots, or this page no page_ext.
 */
static u64 *page_slot(const struct page *page, struct page_ext **ext)
{
	*ext = READ_ONCE(waste_pages) ? page_ext_get(page) : NULL;
	return *ext ? page_ext_data(*ext, &alloctag_waste_page_ops) : NULL;
}

/*
 * The counters of page's tag, in either place page tags live; none where
 * the page has no tag or the tag no counters yet.
 */
static struct alloctag_waste_counters __percpu *page_counters(struct page *page)
{
	struct alloc_tag *tag = pgalloc_tag_get(page);

	return tag ? READ_ONCE(tag->waste) : NULL;
}

/* The counters of a slot's allocation if this period tracked it, or NULL. */
static struct alloctag_waste_counters __percpu *
slot_counters(u64 v, u32 period, struct page *page)
{
	return period && v >> PAGE_PERIOD_SHIFT == period ?
		page_counters(page) : NULL;
}

/* Takes back what the tracked allocation of slot v added. */
static void pages_take_back(struct alloctag_waste_counters __percpu *w, u64 v)
{
	this_cpu_inc(w->frees);
	this_cpu_sub(w->bytes, slot_bytes(v));
	this_cpu_sub(w->requested, slot_bytes(v) - (v & PAGE_SLACK_MASK));
}

/*
 * Whether pgalloc_tag_add_order() will charge a page to tag: profiling is on, and
 * with page tags in page flags, the tag has an index (with page_ext, the
 * page has one, or it would have no slot either).
 */
static bool page_will_be_charged(struct alloc_tag *tag)
{
	if (!tag || !mem_alloc_profiling_enabled())
		return false;
	return !alloctag_pgflags() || alloctag_pgflags_index(tag);
}

static void waste_pages_alloc(struct page *page, struct alloc_tag *tag,
			      unsigned int order)
{
	struct alloctag_waste_counters __percpu *w;
	struct page_ext *ext;
	u64 *slot = page_slot(page, &ext);
	u32 period;

	if (!slot)
		return;
	preempt_disable();
	period = waste_period();
	w = period && page_will_be_charged(tag) ? READ_ONCE(tag->waste) : NULL;
	if (w) {
		WRITE_ONCE(*slot, page_slot_value(period, order, 0));
		this_cpu_inc(w->allocs);
		this_cpu_add(w->bytes, PAGE_SIZE << order);
		this_cpu_add(w->requested, PAGE_SIZE << order);
	} else {
		WRITE_ONCE(*slot, 0);
	}
	preempt_enable();
	page_ext_put(ext);
}

/* alloctag_waste.h: behind the key that capture and this accounting share */
void __alloctag_slowpath alloctag_pages_alloc_slowpath(struct page *page,
						       unsigned int order,
						       gfp_t gfp)
{
	struct alloc_tag *tag = current->alloc_tag;

	if (tag && alloctag_capture_marked(&tag->ct))
		alloctag_capture_pages_slowpath(page, tag, order, gfp);
	if (static_branch_unlikely(&alloctag_waste_key))
		waste_pages_alloc(page, tag, order);
}

void alloctag_waste_pages_free_slowpath(struct page *page, unsigned int order)
{
	struct alloctag_waste_counters __percpu *w;
	struct page_ext *ext;
	u64 v, *slot = page_slot(page, &ext);

	if (!slot)
		return;
	/* An exchange: alloctag_waste_pages_shrink_slowpath() may race. */
	v = READ_ONCE(*slot) ? xchg(slot, 0) : 0;
	if (v) {
		preempt_disable();
		/* Only an allocation of this period is taken back. */
		w = slot_counters(v, waste_period(), page);
		if (w)
			pages_take_back(w, v);
		preempt_enable();
	}
	page_ext_put(ext);
}

/*
 * __free_pages() of a block whose first page someone else still holds
 * freed all but that page: the allocation is that page now. The holder may
 * free it meanwhile (an exchange there, a compare-and-exchange here); it
 * cannot be allocated again at an order above 0 while the rest is not
 * freed yet, so a slot of that order is still this allocation's.
 */
void alloctag_waste_pages_shrink_slowpath(struct page *page, unsigned int order)
{
	struct alloctag_waste_counters __percpu *w;
	u64 gone = (PAGE_SIZE << order) - PAGE_SIZE;
	struct page_ext *ext;
	u64 v, *slot = page_slot(page, &ext);

	if (!slot)
		return;
	v = READ_ONCE(*slot);
	if (((v >> PAGE_ORDER_SHIFT) & 63) == order) {
		preempt_disable();
		w = slot_counters(v, waste_period(), page);
		if (w && cmpxchg(slot, v, page_slot_value(v >> PAGE_PERIOD_SHIFT, 0,
							  v & PAGE_SLACK_MASK)) == v) {
			this_cpu_sub(w->bytes, gone);
			this_cpu_sub(w->requested, gone);
		}
		preempt_enable();
	}
	page_ext_put(ext);
}

/*
 * A vmalloc() area's page: if the page accounting tracked it, it counts as
 * part of the area instead (alloctag_waste_vmalloc_slowpath()).
 */
static void page_untrack(struct page *page)
{
	struct alloctag_waste_counters __percpu *w;
	struct page_ext *ext;
	u64 v, *slot = page_slot(page, &ext);

	if (!slot)
		return;
	v = READ_ONCE(*slot);
	if (v) {
		WRITE_ONCE(*slot, 0);
		preempt_disable();
		w = slot_counters(v, waste_period(), page);
		if (w) {
			/* Not freed: as if never counted. */
			this_cpu_dec(w->allocs);
			this_cpu_sub(w->bytes, slot_bytes(v));
			this_cpu_sub(w->requested,
				     slot_bytes(v) - (v & PAGE_SLACK_MASK));
		}
		preempt_enable();
	}
	page_ext_put(ext);
}

void alloctag_waste_pages_split_slowpath(struct folio *folio, int old_order,
					 int new_order)
{
	struct alloctag_waste_counters __percpu *w;
	unsigned long i, nr = 1UL << new_order;
	struct page_ext *ext, *piece_ext;
	u64 v, *slot = page_slot(&folio->page, &ext), *piece;
	u32 period;

	if (!slot)
		return;
	v = READ_ONCE(*slot);
	preempt_disable();
	period = waste_period();
	w = slot_counters(v, period, &folio->page);
	if (w) {
		/*
		 * Each piece is an allocation of its own, freed on its own: so
		 * many more allocations, and a slot each (the slack stays the
		 * head's: only make_alloc_exact() splits and then sets one).
		 */
		for (i = nr; i < 1UL << old_order; i += nr) {
			piece = page_slot(folio_page(folio, i), &piece_ext);
			if (piece)
				WRITE_ONCE(*piece,
					   page_slot_value(period, new_order, 0));
			page_ext_put(piece_ext);
		}
		WRITE_ONCE(*slot, page_slot_value(period, new_order,
						  v & PAGE_SLACK_MASK));
		this_cpu_add(w->allocs, (1UL << (old_order - new_order)) - 1);
	}
	preempt_enable();
	page_ext_put(ext);
}

void alloctag_waste_pages_copy_slowpath(struct folio *new, struct folio *old)
{
	struct alloctag_waste_counters __percpu *w;
	struct page_ext *new_ext, *old_ext;
	u64 *to, *from, v;

	/* pgalloc_tag_copy() moves nothing from a folio without a tag. */
	if (!page_counters(&old->page))
		return;
	to = page_slot(&new->page, &new_ext);
	from = page_slot(&old->page, &old_ext);
	if (to && from) {
		preempt_disable();
		/* The target's own charge goes, and its tracking with it. */
		v = READ_ONCE(*to);
		w = slot_counters(v, waste_period(), &new->page);
		if (w)
			pages_take_back(w, v);
		/* old's charge moves to new: so does its slot. */
		WRITE_ONCE(*to, READ_ONCE(*from));
		WRITE_ONCE(*from, 0);
		preempt_enable();
	}
	page_ext_put(old_ext);
	page_ext_put(new_ext);
}

void alloctag_waste_pages_request_slowpath(struct page *page,
					   unsigned int order, size_t size)
{
	struct alloctag_waste_counters __percpu *w;
	u64 v, bytes = PAGE_SIZE << order, *slot;
	struct page_ext *ext;
	u32 period;

	slot = page_slot(page, &ext);
	if (!slot)
		return;
	preempt_disable();
	period = waste_period();
	v = READ_ONCE(*slot);
	/* Only the allocation the slot describes, and a request it holds. */
	w = size <= bytes && slot_bytes(v) == bytes ?
		slot_counters(v, period, page) : NULL;
	if (w) {
		this_cpu_add(w->requested,
			     (s64)size - (s64)(bytes - (v & PAGE_SLACK_MASK)));
		WRITE_ONCE(*slot, page_slot_value(period, order, bytes - size));
	}
	preempt_enable();
	page_ext_put(ext);
}

/* vmalloc() areas: an area counts once, instead of its pages. */

/*
 * The counters of vm's tag: its pages' (the caller's while vmalloc() ran,
 * whichever path the pages took), from its first page, which stays until
 * vfree() frees the pages after alloctag_waste_vfree().
 */
static struct alloctag_waste_counters __percpu *
area_counters(struct vm_struct *vm)
{
	return vm->nr_pages && vm->pages ? page_counters(vm->pages[0]) : NULL;
}

static u64 area_bytes(const struct vm_struct *vm)
{
	return (u64)vm->nr_pages << PAGE_SHIFT;
}

void alloctag_waste_vmalloc_slowpath(struct vm_struct *vm)
{
	struct alloctag_waste_counters __percpu *w;
	unsigned int i;
	u32 period;

	/* Its pages were counted as pages: the area counts them instead. */
	for (i = 0; i < vm->nr_pages; i++)
		page_untrack(vm->pages[i]);

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
