// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of dynamic tags, the tags of Rust call sites that the kernel
 * crate's allocators charge (src/alloc_tag/dynamic.rs): the allocators'
 * entry points, which pick the tag to make current, the lock that makes
 * tags, the work that grows the pool and the one that marks new tags
 * selected, what naming a tag reads (its caller's module, stack and
 * symbol), and the pool's use in debugfs.
 *
 * C because in_task(), current, irqs_disabled(), preempt_disable(), the
 * raw spinlock, DECLARE_WORK(), the initcall levels and
 * DEFINE_SHOW_ATTRIBUTE() are macros.
 */

#include <linux/alloc_tag.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "../include/alloctag_glue.h"
#include "../include/alloctag_rust.h"

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

/*
 * The first chunk, before Rust code allocates, where profiling was on from
 * boot; booted off, the first switch-on makes it.
 */
static int __init alloctag_dynamic_init(void)
{
	alloctag_dynamic_boot();
	return 0;
}
core_initcall(alloctag_dynamic_init);

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
	unsigned long used, capacity, overflows, made;

	alloctag_dynamic_stats(&used, &capacity, &overflows, &made);
	seq_printf(m, "used %lu\ncapacity %lu\noverflows %lu\nmade %lu\n", used,
		   capacity, overflows, made);
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
