/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the kernel crate's C helpers (rust/helpers/): the Rust allocation
 * paths call the _noprof allocators, which charge current->alloc_tag, the
 * tag that the Rust caller's alloc_hooks! set. With no tag current, the
 * allocation is charged to the path's fallback tag, defined in Rust
 * (rust/kernel/alloc_tag.rs), never to a line of the helpers.
 *
 * alloctag's patches include this header into rust/helpers/{slab,vmalloc,page}.c,
 * and the Rust core's glue, for the fallback tags.
 */
#ifndef _ALLOCTAG_RUST_H
#define _ALLOCTAG_RUST_H

#include <linux/alloc_tag.h>
#include <linux/preempt.h>
#include <linux/sched.h>

extern struct alloc_tag alloctag_rust_untagged_krealloc;
extern struct alloc_tag alloctag_rust_untagged_kvrealloc;
extern struct alloc_tag alloctag_rust_untagged_vrealloc;
extern struct alloc_tag alloctag_rust_untagged_alloc_pages;

#ifdef CONFIG_MEM_ALLOC_PROFILING

/*
 * _call with _tag current around it, or as it is when _tag is NULL.
 * alloc_tag_save() and alloc_tag_restore() bring C's debug check.
 */
#define alloctag_rust_with_tag(_tag, _call)				\
({									\
	struct alloc_tag *__tag = (_tag), *__old;			\
	typeof(_call) __res;						\
									\
	if (__tag) {							\
		__old = alloc_tag_save(__tag);				\
		__res = _call;						\
		alloc_tag_restore(__tag, __old);			\
	} else {							\
		__res = _call;						\
	}								\
	__res;								\
})

#endif

#if defined(CONFIG_MEM_ALLOC_PROFILING) && !defined(CONFIG_MEM_ALLOC_PROFILING_RUST)

/*
 * With 6.12's C core: in task context the tag is current->alloc_tag, which
 * the Rust caller's with_tag() set, or the fallback when none is. In
 * interrupt context current->alloc_tag belongs to the interrupted task, so an
 * allocation there is charged to the fallback tag, never to that task's call
 * site. A call that does not allocate (_allocates false: a free through
 * krealloc(p, 0)) charges nothing and needs no tag. The Rust core does the
 * same in its charged allocators (lib/alloctag/src/glue_dynamic.c), which the
 * kernel crate calls instead of these helpers while a tag is wanted.
 */
#define alloctag_rust_call(_allocates, _call, _fallback)		\
	alloctag_rust_with_tag(!(_allocates) ? NULL :			\
			       in_task() && current->alloc_tag ?	\
			       current->alloc_tag : &(_fallback), _call)

#else

/* No profiling, or the Rust core, which the kernel crate calls itself. */
#define alloctag_rust_call(_allocates, _call, _fallback)		\
	((void)(_allocates), (void)&(_fallback), (_call))

#endif

#endif /* _ALLOCTAG_RUST_H */
