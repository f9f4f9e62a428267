/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module loader and the code-tag core: a module unloaded while its code
 * tags are still in use (codetag_unload_module() returned false) keeps its
 * core data, which holds the tags and their names. Once free_module() is
 * done with it, the loader hands it to the code-tag core
 * (codetag_module_kept()), which lists its tags until they are unused and
 * then frees that memory (codetag_free_module_memory(), in
 * kernel/module/main.c).
 *
 * The C core's module tags count into static per-CPU variables, in the
 * module's per-CPU area, which such a module keeps for good with its data.
 * The Rust core gives them counters of their own when the module comes, so
 * the per-CPU area goes at unload.
 *
 * Its own header, so that the loader and the Rust core's bindings include it
 * and nothing else rebuilds.
 */
#ifndef _LINUX_ALLOCTAG_MODULE_H
#define _LINUX_ALLOCTAG_MODULE_H

struct module;

#ifdef CONFIG_MEM_ALLOC_PROFILING_RUST
void codetag_module_kept(struct module *mod);
#define codetag_tags_count_in_module_percpu()	false
#else
/* The C core keeps such a module's memory for good. */
static inline void codetag_module_kept(struct module *mod) {}
#define codetag_tags_count_in_module_percpu()	true
#endif

void codetag_free_module_memory(struct module *mod);

#endif /* _LINUX_ALLOCTAG_MODULE_H */
