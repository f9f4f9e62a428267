// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of the alloctag Rust core: each item here is something that only C
 * macros express. The logic is in Rust (src/alloctag.rs and its modules).
 */

#include <linux/alloc_tag.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/page_ext.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/static_key.h>

#include "../include/alloctag_fail.h"
#include "../include/alloctag_glue.h"

/*
 * The switch the allocator hooks test inline. DEFINE_STATIC_KEY_MAYBE picks
 * the key's type and initial jump-label state from a Kconfig option.
 */
DEFINE_STATIC_KEY_MAYBE(CONFIG_MEM_ALLOC_PROFILING_ENABLED_BY_DEFAULT,
			mem_alloc_profiling_key);

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

static __init bool need_page_alloc_tagging(void)
{
	return alloctag_page_ext_needed();
}

static __init void init_page_alloc_tagging(void)
{
}

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

#ifdef CONFIG_ALLOCTAG_FAULT_INJECTION
/*
 * Fault injection's switch, tested inline by alloctag_fail()
 * (include/alloctag_fail.h): DEFINE_STATIC_KEY_FALSE and static_branch_*()
 * are macros.
 */
DEFINE_STATIC_KEY_FALSE(alloctag_fail_key);

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

void alloctag_rcu_read_lock(void)
{
	rcu_read_lock();
}

void alloctag_rcu_read_unlock(void)
{
	rcu_read_unlock();
}
#endif /* CONFIG_ALLOCTAG_FAULT_INJECTION */
