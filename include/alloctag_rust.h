/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the kernel crate's C helpers (rust/helpers/): the Rust allocation
 * paths call the _noprof allocators, which charge current->alloc_tag, the
 * tag that the Rust caller's alloc_hooks! set. With no tag current, the
 * allocation is charged to the path's fallback tag, defined in Rust
 * (rust/kernel/alloc_tag.rs), never to a line of the helpers.
 *
 * scripts/graft.sh includes this header into rust/helpers/{slab,vmalloc,page}.c.
 */
#ifndef _ALLOCTAG_RUST_H
#define _ALLOCTAG_RUST_H

#include <linux/alloc_tag.h>
#include <linux/sched.h>

extern struct alloc_tag alloctag_rust_untagged_krealloc;
extern struct alloc_tag alloctag_rust_untagged_kvrealloc;
extern struct alloc_tag alloctag_rust_untagged_vrealloc;
extern struct alloc_tag alloctag_rust_untagged_alloc_pages;

#ifdef CONFIG_MEM_ALLOC_PROFILING

#define alloctag_rust_call(_call, _fallback)				\
({									\
	struct alloc_tag *__old = current->alloc_tag;			\
	typeof(_call) __res;						\
									\
	if (!__old)							\
		current->alloc_tag = &(_fallback);			\
	__res = _call;							\
	current->alloc_tag = __old;					\
	__res;								\
})

#else

#define alloctag_rust_call(_call, _fallback) ((void)&(_fallback), (_call))

#endif /* CONFIG_MEM_ALLOC_PROFILING */

#endif /* _ALLOCTAG_RUST_H */
