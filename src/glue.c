// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of the alloctag Rust core: the state that the allocator hooks and
 * the Rust core share (the profiling key, the module tags' shared counters,
 * the code-tag registry's locks), the rate limits of the core's logs, RCU
 * read sections and symbol lookups. Each item is C because only C macros
 * express it (DEFINE_STATIC_KEY_MAYBE, DEFINE_PER_CPU, DECLARE_RWSEM,
 * DEFINE_RATELIMIT_STATE, rcu_read_lock(), preempt_disable()). The logic is
 * in Rust (src/alloctag.rs and its modules); the rest of the glue is one
 * file per concern: glue_pgflags.c (page tags), glue_dynamic.c (Rust call
 * sites' dynamic tags), glue_module.c (module load and unload),
 * glue_fault.c, glue_capture.c, glue_waste*.c, static_key.c.
 */

#include <linux/alloc_tag.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ratelimit.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/static_key.h>
#include <linux/topology.h>

#include "../include/alloctag_glue.h"

#ifdef CONFIG_ALLOCTAG_PER_NODE
/* Per-node counting's key (linux/alloc_tag.h), flipped by src/keys.rs. */
DEFINE_STATIC_KEY_FALSE(alloctag_node_key);

/*
 * The rare paths' keys (alloc_tag_counting(), linux/alloc_tag.h): on while
 * profiling is, per CPU alone or per node, never both (src/keys.rs).
 */
DEFINE_STATIC_KEY_FALSE(alloctag_count_cpu_key);
DEFINE_STATIC_KEY_FALSE(alloctag_count_node_key);

/* Serializes per-node counting's table (src/alloc_tag/node/table.rs). */
DECLARE_RWSEM(alloctag_node_table_lock);

/* cpu_to_node() is an inline of a per-CPU variable. */
int alloctag_cpu_to_node(unsigned int cpu)
{
	return cpu_to_node(cpu);
}

/*
 * Another node's memory: its slot's update, in Rust. Saves every register
 * it uses, as its caller, so that the caller, which reaches it only then,
 * saves none for it on its other path.
 */
static noinline void __alloctag_slowpath alloctag_node_count_slot(struct alloc_tag *tag,
								  int nid, long bytes,
								  long calls)
{
	alloctag_node_slot_count(tag, nid, bytes, calls);
}

/*
 * The hooks' count with per-node counting on (linux/alloc_tag.h). C for
 * __alloctag_slowpath, which saves every register it uses, so that the hooks
 * keep none for it; Rust cannot define such a function. The node compared
 * is that of the CPU whose counters move, with preemption off from the
 * comparison to the update: memory of another node goes to the tag's slot
 * for it (src/alloc_tag/node.rs), in one update. A tag without slots
 * (static counters: the core made none) counts per CPU.
 */
void __alloctag_slowpath alloctag_node_count(struct alloc_tag *tag, int nid,
					     long bytes, long calls)
{
	struct alloc_tag_counters __percpu *counters = tag->counters;

	preempt_disable_notrace();
	if (unlikely(nid != __this_cpu_read(numa_node)) &&
	    likely(READ_ONCE(tag->ct.node_slots))) {
		preempt_enable_notrace();
		alloctag_node_count_slot(tag, nid, bytes, calls);
		return;
	}
	/* a free's calls last, as alloc_tag_sub() */
	if (calls < 0) {
		this_cpu_add(counters->bytes, bytes);
		this_cpu_add(counters->calls, calls);
	} else {
		this_cpu_add(counters->calls, calls);
		this_cpu_add(counters->bytes, bytes);
	}
	preempt_enable_notrace();
}

/*
 * alloctag_node_count() of memory in the linear map, by its address: a slab
 * object's node is its slab's (a slab's pages are of one node), found here
 * so that the allocation paths compute nothing for it.
 */
void __alloctag_slowpath alloctag_node_count_addr(struct alloc_tag *tag,
						  const void *addr, long bytes,
						  long calls)
{
	alloctag_node_count(tag, page_to_nid(virt_to_page(addr)), bytes, calls);
}
#endif

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
 * Serializes the first switch-on, which gives every tag its counters, with
 * modules coming and going (src/alloc_tag/counters.rs); taken before the
 * registry's lock.
 */
DECLARE_RWSEM(alloctag_counters_lock);

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
