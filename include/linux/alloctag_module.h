/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module loader and the code-tag core.
 *
 * A module's code tags may outlive it: allocations made at its call sites
 * can still be live when it unloads, and they point to its tags. So the
 * loader places each section of code tags apart from the module's memory,
 * where the code-tag core says (codetag_module_section(),
 * codetag_alloc_module_section(), in memory the module's code can reach),
 * and the code-tag core keeps only those tags when the module goes, until
 * their allocations are freed. The loader frees the rest of the module as
 * usual. codetag_free_module_section() frees one when a load fails before
 * the code-tag core took the module's tags (codetag_load_module()).
 *
 * The C core's module tags count into static per-CPU variables, in the
 * module's per-CPU area, which a module unloaded with live allocations keeps
 * for good with its data (codetag_unload_module() returns false). The Rust
 * core gives them counters of their own when the module comes, so the
 * per-CPU area goes at unload.
 *
 * Its own header, so that the loader and the Rust core's bindings include it
 * and nothing else rebuilds.
 */
#ifndef _LINUX_ALLOCTAG_MODULE_H
#define _LINUX_ALLOCTAG_MODULE_H

#include <linux/types.h>

struct module;

#ifdef CONFIG_MEM_ALLOC_PROFILING_RUST
bool codetag_module_section(struct module *mod, const char *name,
			    unsigned long size);
void *codetag_alloc_module_section(struct module *mod, const char *name,
				   unsigned long size, unsigned long align);
void codetag_free_module_section(void *addr);
#define codetag_tags_count_in_module_percpu()	false
#else
static inline bool codetag_module_section(struct module *mod,
					  const char *name, unsigned long size)
{
	return false;
}

static inline void *codetag_alloc_module_section(struct module *mod,
						 const char *name,
						 unsigned long size,
						 unsigned long align)
{
	return NULL;
}

static inline void codetag_free_module_section(void *addr) {}
#define codetag_tags_count_in_module_percpu()	true
#endif

#endif /* _LINUX_ALLOCTAG_MODULE_H */
