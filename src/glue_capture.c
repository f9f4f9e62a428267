// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of capture (src/capture.rs): the static key and the hooks' slow
 * paths, whose __preserve_most only C can give, and what only C macros
 * express: current, the CPU, the context, per-CPU data, the raw spinlock and
 * the page_ext lookups. What becomes of a record is decided in Rust.
 */

#include <linux/alloc_tag.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/page_ext.h>
#include <linux/percpu.h>
#include <linux/pgalloc_tag.h>
#include <linux/preempt.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/security.h>
#include <linux/spinlock.h>
#include <linux/stackdepot.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

/* struct kmem_cache, for the charged size (Kbuild adds mm/). */
#include "slab.h"

#include <linux/alloctag_capture.h>
#include "../include/alloctag_capture_info.h"
#include "../include/alloctag_glue.h"

/* The frames kept per allocation. */
#define CAPTURE_DEPTH 16

/* Exported, as the slow paths are: the hooks are inline in kernel headers. */
DEFINE_STATIC_KEY_FALSE(alloctag_capture_key);
EXPORT_SYMBOL_GPL(alloctag_capture_key);

/*
 * On while profiling is on and capture off (src/capture/keys.rs): its
 * default is the profiling key's, capture being off at boot. Not exported:
 * only mm/slub.c tests it.
 */
DEFINE_STATIC_KEY_MAYBE(CONFIG_MEM_ALLOC_PROFILING_ENABLED_BY_DEFAULT,
			alloctag_slab_plain_key);

/* Serializes the keys' changes; DECLARE_RWSEM gives it a lockdep class. */
DECLARE_RWSEM(alloctag_keys_lock);

/*
 * Serializes capture's control operations (src/capture.rs), which start and
 * stop the pool and flip keys outside the code-tag registry's lock.
 */
DECLARE_RWSEM(alloctag_capture_control_lock);

/*
 * The record pool's lock. Raw, with interrupts off: the hooks run in every
 * context, hard interrupts and raw-spinlocked sections included. It is a
 * leaf: nothing allocates or frees under it.
 */
static DEFINE_RAW_SPINLOCK(alloctag_capture_lock_);

unsigned long alloctag_capture_lock(void)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&alloctag_capture_lock_, flags);
	return flags;
}

void alloctag_capture_unlock(unsigned long flags)
{
	raw_spin_unlock_irqrestore(&alloctag_capture_lock_, flags);
}

/*
 * An object's address or a pfn in a capture report, as %pK prints it for
 * the reader: zeros at kptr_restrict=2, the value at 1 to a reader with
 * CAP_SYSLOG, hashed otherwise. %pK is vsprintf's, in C.
 */
int alloctag_capture_format_kptr(char *buf, size_t size, unsigned long value)
{
	return scnprintf(buf, size, "%pK", (void *)value);
}

/*
 * A stack frame in a capture report, as %pS prints it (symbol+offset/size
 * [module]), but a frame that kallsyms cannot name as %pK prints it: a
 * record's stack may outlive the module its frames are in, whose addresses
 * sprint_symbol() would print raw, whatever kptr_restrict says (its
 * "0x%lx"). Without CONFIG_KALLSYMS every frame is printed so. @size must
 * be at least KSYM_SYMBOL_LEN.
 */
int alloctag_capture_format_frame(char *buf, size_t size, unsigned long addr)
{
	char unnamed[sizeof("0x") + 2 * sizeof(addr)];

	if (size < KSYM_SYMBOL_LEN)
		return -EINVAL;
	if (IS_ENABLED(CONFIG_KALLSYMS)) {
		/*
		 * Looked up once: a second lookup could name what the first
		 * did not, or the other way round, as modules come and go.
		 * A named frame has "+offset/size", so it never reads as the
		 * unnamed one.
		 */
		sprint_symbol(buf, addr);
		snprintf(unnamed, sizeof(unnamed), "0x%lx", addr);
		if (strcmp(buf, unnamed))
			return strlen(buf);
	}
	return scnprintf(buf, size, "0x%pK", (void *)addr);
}

/*
 * Lockdown's verdict on reading the capture reports. debugfs refuses under
 * lockdown only the files it cannot prove read-only; the reports are
 * read-only, yet show kernel addresses, so they are refused as well.
 * security_locked_down() is an inline without CONFIG_SECURITY.
 */
int alloctag_capture_locked_down(void)
{
	return security_locked_down(LOCKDOWN_DEBUGFS);
}

u64 alloctag_capture_now(void)
{
	return ktime_get_mono_fast_ns();
}

int alloctag_capture_init(void)
{
	return stack_depot_init();
}

/* Between two steps of a purge of the pool (a macro). */
void alloctag_capture_cond_resched(void)
{
	cond_resched();
}

/*
 * Around the purge of page records by pfn (src/capture/hook.rs): memory
 * hotplug must not remove a struct page it reads. Inline stubs without
 * CONFIG_MEMORY_HOTPLUG.
 */
void alloctag_capture_mems_get(void)
{
	get_online_mems();
}

void alloctag_capture_mems_put(void)
{
	put_online_mems();
}

/*
 * Set while this CPU records an allocation, per context level (task,
 * softirq, hardirq): the stack depot may allocate pages, and an allocation
 * made for capture is never captured, as page_owner's in_page_owner does. An
 * interrupt that allocates at a selected site meanwhile is still captured:
 * its level has its own flag.
 */
static DEFINE_PER_CPU(u8, alloctag_capture_busy[4]);

static bool capture_enter(void)
{
	u8 *busy;

	preempt_disable();
	busy = this_cpu_ptr(&alloctag_capture_busy[interrupt_context_level()]);
	if (*busy) {
		preempt_enable();
		return false;
	}
	*busy = 1;
	return true;
}

static void capture_exit(void)
{
	*this_cpu_ptr(&alloctag_capture_busy[interrupt_context_level()]) = 0;
	preempt_enable();
}

/* The flags the stack depot may allocate with while recording an allocation made with gfp. */
gfp_t alloctag_capture_depot_gfp(gfp_t gfp)
{
	return gfp_nested_mask(gfp) & ~__GFP_DIRECT_RECLAIM;
}

/*
 * Gathers what is known of the allocation at ref and hands it to Rust. Never
 * inlined, so that the frames to skip are always this one and the slow
 * paths' that led here: skip of them.
 */
static noinline void capture(const void *ref, struct codetag *ct,
			     unsigned long object, unsigned long bytes,
			     gfp_t gfp, u8 kind, u8 order, unsigned int skip)
{
	unsigned long entries[CAPTURE_DEPTH];
	struct alloctag_capture_info info;
	unsigned int n;

	/* The raw lock cannot be taken in NMI; allocators do not run there. */
	if (in_nmi())
		return;
	if (!capture_enter()) {
		alloctag_capture_busy_count();
		return;
	}
	info.ref = ref;
	info.tag = ct;
	info.object = object;
	info.bytes = bytes;
	info.time_ns = ktime_get_mono_fast_ns();
	info.pid = task_pid_nr(current);
	info.tgid = task_tgid_nr(current);
	memcpy(info.comm, current->comm, sizeof(info.comm));
	info.comm[sizeof(info.comm) - 1] = 0;
	info.cpu = raw_smp_processor_id();
	info.gfp = (__force u32)gfp;
	info.kind = kind;
	info.order = order;
	info.context = in_task() ? 0 : in_hardirq() ? 2 : 1;
	/* Skips this function and the slow paths: the allocator comes first. */
	n = stack_trace_save(entries, CAPTURE_DEPTH, 1 + skip);
	/*
	 * The depot may allocate: with the caller's flags masked as page_owner
	 * and kmemleak mask theirs (gfp_nested_mask()), so that it never wakes
	 * kswapd or dips into reserves where the caller forbade it, and never
	 * warns; never with __GFP_DIRECT_RECLAIM, since preemption is off here.
	 */
	info.stack = stack_depot_save_flags(entries, n,
					    alloctag_capture_depot_gfp(gfp),
					    STACK_DEPOT_FLAG_CAN_ALLOC);
	alloctag_capture_insert(&info);
	capture_exit();
}

void __preserve_most alloctag_capture_slab_slowpath(union codetag_ref *ref,
						    const void *object,
						    struct kmem_cache *s,
						    gfp_t gfp)
{
	/* What alloc_tag_add() charged: the slot, metadata included. */
	capture(ref, ref->ct, (unsigned long)object, s->size, gfp,
		ALLOCTAG_CAPTURE_SLAB, 0, 1);
}
EXPORT_SYMBOL_GPL(alloctag_capture_slab_slowpath);

/*
 * The key of a page's record: its page_ext reference, or, with page tags
 * in page flags, the struct page itself, as unique and with no page_ext to
 * look up. NULL where the page has neither.
 */
static const void *page_key_get(struct page *page)
{
	if (alloctag_pgflags())
		return page;
	return get_page_tag_ref(page);
}

static void page_key_put(const void *key)
{
	if (!alloctag_pgflags())
		put_page_tag_ref((union codetag_ref *)key);
}

void __preserve_most alloctag_capture_pages_slowpath(struct page *page,
						     const struct alloc_tag *tag,
						     unsigned int order,
						     gfp_t gfp)
{
	const void *key;

	/*
	 * get_page_tag_ref() only works while profiling is on, and without it
	 * pgalloc_tag_add_order() sets no reference that a free would clear.
	 */
	if (!mem_alloc_profiling_enabled())
		return;
	/*
	 * With page tags in page flags, a tag without an index is not charged:
	 * alloctag_pgflags_add() marks the page empty, and its free then looks
	 * for no record. Make none, or it would outlive the page.
	 */
	if (alloctag_pgflags() && alloctag_pgflags_index(tag) == ALLOCTAG_IDX_NULL)
		return;
	key = page_key_get(page);
	if (!key)
		return;
	/*
	 * With waste accounting built in, post_alloc_hook() calls this from
	 * the slow path both share (alloctag_pages_alloc_slowpath(), in
	 * glue_waste.c): one more frame of ours.
	 */
	capture(key, (struct codetag *)&tag->ct, page_to_pfn(page),
		PAGE_SIZE << order, gfp, ALLOCTAG_CAPTURE_PAGES, order,
		1 + IS_ENABLED(CONFIG_ALLOCTAG_WASTE));
	page_key_put(key);
}
EXPORT_SYMBOL_GPL(alloctag_capture_pages_slowpath);

void __preserve_most alloctag_capture_free_slowpath(const void *key)
{
	if (!in_nmi())
		alloctag_capture_remove(key);
}
EXPORT_SYMBOL_GPL(alloctag_capture_free_slowpath);

/*
 * The first page of a block of 2^order pages is all that is left of it. The
 * holder of that page may free it meanwhile, but it cannot come back at an
 * order above 0 before the rest is freed: so a record of that order is
 * still this block's (alloctag_capture_shrink_record()).
 */
void __preserve_most alloctag_capture_shrink_slowpath(struct page *page,
						      unsigned int order)
{
	const void *key;

	if (in_nmi() || !mem_alloc_profiling_enabled())
		return;
	key = page_key_get(page);
	if (!key)
		return;
	alloctag_capture_shrink_record(key, order);
	page_key_put(key);
}

/*
 * Whether the pages at pfn are charged to ct: the reference of their first
 * page, or the index in its flags, names ct. For the purge of page records
 * once profiling is off (src/capture/hook.rs), under the pool's lock with
 * interrupts off and get_online_mems() held. The page is found by its pfn,
 * online, and its page_ext under page_ext_get()'s RCU read lock: never
 * through the record's key, which a page freed since may no longer back
 * (hot-remove frees page_ext).
 */
bool alloctag_capture_pages_charged(unsigned long pfn, const struct codetag *ct)
{
	struct page *page = pfn_to_online_page(pfn);
	struct page_ext *page_ext;
	union codetag_ref ref;
	bool charged;

	if (!page)
		return false;
	if (alloctag_pgflags()) {
		alloctag_pgflags_ref(alloctag_pgflags_read(page), &ref);
		return ref.ct == ct;
	}
	page_ext = page_ext_get(page);
	if (!page_ext)
		return false;
	/* The charge path stores it plainly, on another CPU maybe. */
	charged = READ_ONCE(codetag_ref_from_page_ext(page_ext)->ct) == ct;
	page_ext_put(page_ext);
	return charged;
}

/* Each piece of a split folio gets a copy of the head's record. */
void __preserve_most alloctag_capture_split_slowpath(struct folio *folio,
						     int old_order,
						     int new_order)
{
	unsigned int nr = 1U << new_order;
	const void *head, *key;
	unsigned int i;

	if (in_nmi())
		return;
	head = page_key_get(&folio->page);
	if (!head)
		return;
	for (i = nr; i < (1U << old_order); i += nr) {
		struct page *page = folio_page(folio, i);

		key = page_key_get(page);
		if (!key)
			continue;
		alloctag_capture_split_piece(head, key, page_to_pfn(page),
					     PAGE_SIZE << new_order, new_order);
		page_key_put(key);
	}
	alloctag_capture_resize(head, PAGE_SIZE << new_order, new_order);
	page_key_put(head);
}
EXPORT_SYMBOL_GPL(alloctag_capture_split_slowpath);

/* Migration: old's record now describes new, whose record key is to. */
void __preserve_most alloctag_capture_copy_slowpath(const void *to,
						    struct folio *new,
						    struct folio *old)
{
	const void *from;

	if (in_nmi())
		return;
	from = page_key_get(&old->page);
	if (!from)
		return;
	alloctag_capture_rekey(from, to, folio_pfn(new));
	page_key_put(from);
}
EXPORT_SYMBOL_GPL(alloctag_capture_copy_slowpath);
