// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of the alloctag Rust core: each item here is something that only C
 * macros express. The logic is in Rust (src/alloctag.rs and its modules).
 */

#include <linux/alloc_tag.h>
#include <linux/debugfs.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/page_ext.h>
#include <linux/percpu.h>
#include <linux/pgalloc_tag.h>
#include <linux/preempt.h>
#include <linux/ratelimit.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/static_key.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "../include/alloctag_accuracy.h"
#include "../include/alloctag_fail.h"
#include "../include/alloctag_glue.h"
#include "../include/alloctag_rust.h"

/*
 * The switch the allocator hooks test inline. DEFINE_STATIC_KEY_MAYBE picks
 * the key's type and initial jump-label state from a Kconfig option.
 */
DEFINE_STATIC_KEY_MAYBE(CONFIG_MEM_ALLOC_PROFILING_ENABLED_BY_DEFAULT,
			mem_alloc_profiling_key);
/*
 * Rust modules test it inline (rust/kernel/jump_label.rs): the kernel
 * crate's allocating paths, instantiated in them, skip the call that finds a
 * Rust call site's tag while profiling is off. C's 6.12 core does not export
 * it because no C code in a module tests it.
 */
EXPORT_SYMBOL_GPL(mem_alloc_profiling_key);

/*
 * The counters that module tags share where per-CPU variables must be weak
 * (ARCH_NEEDS_WEAK_PER_CPU); DEFINE_PER_CPU chooses section and linkage.
 */
DEFINE_PER_CPU(struct alloc_tag_counters, _shared_alloc_tag);
EXPORT_SYMBOL(_shared_alloc_tag);

/*
 * The code-tag registry lock: DECLARE_RWSEM gives it a lockdep class and a
 * static initializer, so it works before any initcall.
 */
DECLARE_RWSEM(alloctag_codetag_lock);

/*
 * Held for writing by a selection's user that flushes outside the registry's
 * lock, for reading by module unload and the reaper, which may drop listed
 * tags (src/codetag/registry/selections.rs). Taken before the registry's lock.
 */
DECLARE_RWSEM(alloctag_codetag_flush_lock);

/*
 * Injected failures, which any user may cause where a rule is on a site
 * system calls reach, are logged rate-limited as lib/fault-inject.c's
 * fail_dump() limits failslab's (printk's defaults: 10 lines per 5 s), and
 * the count suppressed is said when lines come again.
 * DEFINE_RATELIMIT_STATE() is a macro.
 */
static DEFINE_RATELIMIT_STATE(alloctag_fail_log, DEFAULT_RATELIMIT_INTERVAL,
			      DEFAULT_RATELIMIT_BURST);

/* Whether an injected failure may be logged now; any context but NMI. */
bool alloctag_fail_log_ratelimit(void)
{
	return ___ratelimit(&alloctag_fail_log, "alloctag: injected failures");
}

/*
 * Refused and oversized commands on the control files (src/debugfs.rs) are
 * root's writes, but a loop of them must not flood the log: each message is
 * rate-limited as pr_warn_ratelimited() limits its call site (one state
 * each; printk's defaults, 10 lines per 5 s), and the count suppressed is
 * said when lines come again.
 */
static DEFINE_RATELIMIT_STATE(alloctag_refused_log, DEFAULT_RATELIMIT_INTERVAL,
			      DEFAULT_RATELIMIT_BURST);
static DEFINE_RATELIMIT_STATE(alloctag_oversized_log,
			      DEFAULT_RATELIMIT_INTERVAL,
			      DEFAULT_RATELIMIT_BURST);

/* Whether a refused command may be logged now. */
bool alloctag_refused_log_ratelimit(void)
{
	return ___ratelimit(&alloctag_refused_log, "alloctag: refused commands");
}

/* Whether an oversized command may be logged now. */
bool alloctag_oversized_log_ratelimit(void)
{
	return ___ratelimit(&alloctag_oversized_log,
			    "alloctag: oversized commands");
}

/* RCU read sections for Rust (fault injection): macros. */
void alloctag_rcu_read_lock(void)
{
	rcu_read_lock();
}

void alloctag_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

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

/*
 * pgalloc_tag_add_order()'s page_ext path with the Rust core, out of line
 * (include/linux/pgalloc_tag.h), so that post_alloc_hook() keeps no register
 * for its two calls while profiling is off or page tags are in page flags.
 * The hook tested the keys: profiling is on, and page tags are in page_ext.
 */
void alloctag_page_ext_add(struct page *page, struct task_struct *task, unsigned int order)
{
	struct page_ext *page_ext = page_ext_get(page);

	if (page_ext) {
		alloc_tag_add(codetag_ref_from_page_ext(page_ext), task->alloc_tag,
			      PAGE_SIZE << order);
		page_ext_put(page_ext);
	} else {
		/* Before page_ext is up: marked empty once it is (early.rs) */
		alloctag_early_page(page);
	}
}

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

/* Once, at boot: where page tags live never changes afterwards. */
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
 * Out of line: splits are rare; folio_page() and this_cpu_inc() are macros.
 */
void alloctag_pgflags_split(struct folio *folio, int old_order, int new_order)
{
	unsigned int nr_pages = 1 << new_order;
	unsigned long idx = alloctag_pgflags_read(&folio->page);
	struct alloc_tag *tag = alloctag_pgflags_get(&folio->page);
	int i;

	if (!tag)
		return;
	for (i = nr_pages; i < (1 << old_order); i += nr_pages) {
		alloctag_pgflags_write(folio_page(folio, i), idx);
		this_cpu_inc(tag->counters->calls);
	}
	/* Each piece gets its own record. */
	alloctag_capture_split(folio, &tag->ct, old_order, new_order);
}

/*
 * pgalloc_tag_copy() with page tags in page flags: migration moves old's
 * tag to new, whose own charge is taken back in bytes (our fix of 6.12's).
 */
void alloctag_pgflags_copy(struct folio *new, struct folio *old)
{
	unsigned long idx = alloctag_pgflags_read(&old->page);
	struct alloc_tag *tag;
	union codetag_ref ref;

	if (!mem_alloc_profiling_enabled())
		return;
	tag = alloctag_pgflags_get(&old->page);
	if (!tag)
		return;
	alloctag_pgflags_write(&old->page, ALLOCTAG_IDX_EMPTY);
	alloctag_pgflags_ref(alloctag_pgflags_read(&new->page), &ref);
	/* The target loses its own record, if any; old's moves to it. */
	alloctag_capture_free_key(&ref, &new->page);
	alloc_tag_sub(&ref, folio_size(new));
	alloctag_capture_copy(&new->page, &tag->ct, new, old);
	__alloc_tag_ref_set(&ref, tag);
	alloctag_pgflags_write(&new->page, idx);
}

static __init bool need_page_alloc_tagging(void)
{
	return alloctag_page_ext_needed();
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
};
EXPORT_SYMBOL(page_alloc_tagging_ops);

/*
 * Looks a symbol up in a module (or vmlinux, for NULL). The module's symbol
 * table is RCU-sched protected: preempt_disable() is a macro.
 */
unsigned long alloctag_find_symbol(struct module *mod, const char *name)
{
	unsigned long addr;

	if (!mod)
		return kallsyms_lookup_name(name);
	preempt_disable();
	addr = find_kallsyms_symbol_value(mod, name);
	preempt_enable();
	return addr;
}

/*
 * The kernel crate's allocations while a tag is wanted (rust/kernel/alloc/
 * allocator.rs and page.rs test alloctag_tag_key inline and call these; with
 * it off they call 6.12's helpers, which with this core charge nothing
 * themselves, so that profiling off costs a Rust allocation one patched-out
 * jump, as alloc_hooks() a C one). The tag made current: in interrupt
 * context the path's fallback tag, since current->alloc_tag is the
 * interrupted task's; in task context none when one already is (an explicit
 * alloc_hooks!, or C's alloc_hooks() around a callback into Rust), that tag
 * wins; else, with profiling on, the dynamic tag of the caller's location (a
 * core::panic::Location); else the fallback: the pool of dynamic tags may be
 * full, and a fault-injection rule may have the key on with profiling off.
 * in_task() and current are macros, hence C. Modules call these from the
 * kernel crate's code instantiated in them.
 */
static struct alloc_tag *rust_charged_tag(const void *location,
					  struct alloc_tag *fallback)
{
	struct alloc_tag *tag = NULL;

	/* The key may have flipped since the caller tested it. */
	if (!alloctag_tag_wanted())
		return NULL;
	if (!in_task())
		return fallback;
	if (current->alloc_tag)
		return NULL;
	if (mem_alloc_profiling_enabled())
		tag = alloctag_dynamic_tag(location);
	return tag ?: fallback;
}

void *alloctag_rust_charged_krealloc(const void *p, size_t size, gfp_t flags,
				     const void *location)
{
	struct alloc_tag *tag = rust_charged_tag(location, &alloctag_rust_untagged_krealloc);

	return alloctag_rust_with_tag(tag, krealloc_noprof(p, size, flags));
}
EXPORT_SYMBOL_GPL(alloctag_rust_charged_krealloc);

void *alloctag_rust_charged_kvrealloc(const void *p, size_t size,
				      gfp_t flags, const void *location)
{
	struct alloc_tag *tag = rust_charged_tag(location, &alloctag_rust_untagged_kvrealloc);

	return alloctag_rust_with_tag(tag, kvrealloc_noprof(p, size, flags));
}
EXPORT_SYMBOL_GPL(alloctag_rust_charged_kvrealloc);

void *alloctag_rust_charged_vrealloc(const void *p, size_t size, gfp_t flags,
				     const void *location)
{
	struct alloc_tag *tag = rust_charged_tag(location, &alloctag_rust_untagged_vrealloc);

	return alloctag_rust_with_tag(tag, vrealloc_noprof(p, size, flags));
}
EXPORT_SYMBOL_GPL(alloctag_rust_charged_vrealloc);

struct page *alloctag_rust_charged_alloc_pages(gfp_t gfp, unsigned int order,
					       const void *location)
{
	struct alloc_tag *tag = rust_charged_tag(location, &alloctag_rust_untagged_alloc_pages);

	return alloctag_rust_with_tag(tag, alloc_pages_noprof(gfp, order));
}
EXPORT_SYMBOL_GPL(alloctag_rust_charged_alloc_pages);

/*
 * Serializes the making of dynamic tags (lookups take no lock; dropping
 * them is serialized by the code-tag registry's lock). A raw spinlock that
 * leaves interrupts as the caller had them: tags are made in any task
 * context, atomic ones included, never in interrupt context, and making one
 * never sleeps. Naming a tag (a stack walk, kallsyms) runs under it with
 * preemption off but interrupts on.
 */
static DEFINE_RAW_SPINLOCK(alloctag_dynamic_lock_);

void alloctag_dynamic_lock(void)
{
	raw_spin_lock(&alloctag_dynamic_lock_);
}

void alloctag_dynamic_unlock(void)
{
	raw_spin_unlock(&alloctag_dynamic_lock_);
}

/*
 * Serializes the growth of the dynamic tags' pools, which allocates and may
 * sleep; DECLARE_RWSEM gives it a lockdep class.
 */
DECLARE_RWSEM(alloctag_dynamic_grow_lock);

/*
 * Makes the next chunk of dynamic tags in process context: makers run in any
 * task context and cannot allocate one themselves.
 */
static void alloctag_dynamic_grow_fn(struct work_struct *work)
{
	alloctag_dynamic_grow();
}

static DECLARE_WORK(alloctag_dynamic_grow_work, alloctag_dynamic_grow_fn);

void alloctag_dynamic_grow_later(void)
{
	schedule_work(&alloctag_dynamic_grow_work);
}

/* The first chunk, before Rust code allocates (unless profiling is never). */
static int __init alloctag_dynamic_init(void)
{
	alloctag_dynamic_grow();
	return 0;
}
core_initcall(alloctag_dynamic_init);

#ifdef CONFIG_MODULES
/*
 * Frees the tags kept for unloaded modules once their allocations are gone:
 * a pass a second after something changed, backing off to one every 8 s
 * while nothing does (a leak that is never freed is kept for good), on the
 * power-efficient workqueue. DECLARE_DELAYED_WORK() initialises the static
 * work item (a macro).
 */
static void alloctag_reap_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(alloctag_reap_work, alloctag_reap_fn);
static unsigned long alloctag_reap_delay = HZ;

static void alloctag_reap_fn(struct work_struct *work)
{
	unsigned long delay = READ_ONCE(alloctag_reap_delay);

	switch (alloctag_codetag_reap()) {
	case 0:
		return;
	case 1:
		delay = min(delay * 2, 8UL * HZ);
		break;
	default:
		delay = HZ;
	}
	WRITE_ONCE(alloctag_reap_delay, delay);
	queue_delayed_work(system_power_efficient_wq, &alloctag_reap_work, delay);
}

void alloctag_reap_later(void)
{
	WRITE_ONCE(alloctag_reap_delay, HZ);
	/*
	 * Due within a second, never pushed back: modules unloaded faster
	 * than one a second would otherwise keep the pass from ever running.
	 */
	if (!delayed_work_pending(&alloctag_reap_work) ||
	    time_after(READ_ONCE(alloctag_reap_work.timer.expires), jiffies + HZ))
		mod_delayed_work(system_power_efficient_wq, &alloctag_reap_work, HZ);
}

/*
 * A module's allocation tags get their counters when it comes, before the
 * loader parses its parameters (which may run its code); they go with the
 * tags (src/alloc_tag/counters.rs). First of the module notifiers, registered at
 * core_initcall, before any module can load: initcall levels and
 * notifier_from_errno() are C macros.
 */
static int alloctag_module_notify(struct notifier_block *nb,
				  unsigned long state, void *mod)
{
	return notifier_from_errno(alloctag_module_counters(mod, state));
}

static struct notifier_block alloctag_module_nb = {
	.notifier_call = alloctag_module_notify,
	.priority = INT_MAX,
};

static int __init alloctag_module_counters_init(void)
{
	return register_module_notifier(&alloctag_module_nb);
}
core_initcall(alloctag_module_counters_init);
#endif

/* irqs_disabled() is a macro; for the tests of the dynamic tags. */
bool alloctag_irqs_disabled(void)
{
	return irqs_disabled();
}

#ifdef CONFIG_ALLOCTAG_SELECTION
/*
 * Has the selections in force mark dynamic tags made while the registry was
 * locked: a tag is made in any task context, which cannot wait for the lock.
 * DECLARE_WORK() initialises the static work item, which schedule_work()
 * queues from any context without allocating.
 */
static void alloctag_dynamic_select_fn(struct work_struct *work)
{
	alloctag_dynamic_select_work();
}

static DECLARE_WORK(alloctag_dynamic_select, alloctag_dynamic_select_fn);

void alloctag_dynamic_select_later(void)
{
	schedule_work(&alloctag_dynamic_select);
}
#endif

/*
 * The module whose memory holds addr, with its name copied into name; NULL
 * for vmlinux. The module list is RCU-sched protected.
 */
struct module *alloctag_module_of(const void *addr, char *name, size_t len)
{
#ifdef CONFIG_MODULES
	struct module *mod;

	preempt_disable();
	mod = __module_address((unsigned long)addr);
	if (mod)
		strscpy(name, mod->name, len);
	preempt_enable();
	return mod;
#else
	return NULL;
#endif
}

/* The return addresses of the current stack, innermost first; 0 without STACKTRACE. */
unsigned int alloctag_stack(unsigned long *entries, unsigned int n)
{
#ifdef CONFIG_STACKTRACE
	return stack_trace_save(entries, n, 0);
#else
	return 0;
#endif
}

/* The symbol around addr, in buf (KSYM_NAME_LEN bytes); NULL if none. */
const char *alloctag_symbol(unsigned long addr, char *buf)
{
	unsigned long size, offset;

	return kallsyms_lookup(addr, &size, &offset, NULL, buf);
}

#ifdef CONFIG_DEBUG_FS
/* /sys/kernel/debug/alloctag/dynamic_tags: the use of the dynamic tags' pool. */
static int dynamic_tags_show(struct seq_file *m, void *v)
{
	unsigned long used, capacity, overflows;

	alloctag_dynamic_stats(&used, &capacity, &overflows);
	seq_printf(m, "used %lu\ncapacity %lu\noverflows %lu\n", used, capacity,
		   overflows);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(dynamic_tags);

static int __init alloctag_dynamic_debugfs(void)
{
	struct dentry *dir = debugfs_lookup("alloctag", NULL);

	if (IS_ERR_OR_NULL(dir))
		dir = debugfs_create_dir("alloctag", NULL);
	else
		dput(dir);
	debugfs_create_file("dynamic_tags", 0444, dir, NULL, &dynamic_tags_fops);
	return 0;
}
late_initcall(alloctag_dynamic_debugfs);
#endif

#ifdef CONFIG_ALLOCTAG_FAULT_INJECTION
/*
 * Fault injection's switch, tested inline by alloctag_fail_pages()
 * (include/alloctag_fail.h): DEFINE_STATIC_KEY_FALSE and static_branch_*()
 * are macros.
 */
DEFINE_STATIC_KEY_FALSE(alloctag_fail_key);

/*
 * Serializes fault injection's control operations (src/fault.rs), which wait
 * for grace periods and flip the key outside the code-tag registry's lock.
 */
DECLARE_RWSEM(alloctag_fault_control_lock);

/*
 * The hooks' call into Rust behind the key. __preserve_most is an attribute
 * that only C can give: this function saves the registers that the Rust
 * function may clobber, so the allocators' fast paths need not.
 */
bool __preserve_most alloctag_fail_pages_slowpath(struct alloc_tag *tag,
						  gfp_t gfp, unsigned int order)
{
	return alloctag_should_fail(tag, gfp, PAGE_SIZE << order);
}

/* The slab allocator's, which asks before it masks the flags. */
bool __preserve_most alloctag_fail_slab_slowpath(struct alloc_tag *tag,
						 struct kmem_cache *s,
						 gfp_t gfp)
{
	return alloctag_should_fail(tag, gfp & gfp_allowed_mask,
				    kmem_cache_size(s));
}

/* Flips the key; may sleep. */
void alloctag_set_fail_key(bool enable)
{
	if (enable)
		static_branch_enable(&alloctag_fail_key);
	else
		static_branch_disable(&alloctag_fail_key);
}

/* The fault hook's context tests and read-side lock are macros. */
bool alloctag_in_nmi(void)
{
	return in_nmi();
}

bool alloctag_in_task(void)
{
	return in_task();
}

/*
 * bindgen lays struct task_struct out differently from C in the test kernel's
 * configuration (tgid at offset 1196 instead of 1132: some member's alignment
 * is lost), so Rust must not read task fields past alloc_tag; this one is
 * read here, where the layout is C's.
 */
pid_t alloctag_current_tgid(void)
{
	return task_tgid_nr(current);
}

#endif /* CONFIG_ALLOCTAG_FAULT_INJECTION */
