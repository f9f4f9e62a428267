/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tags whose counts are known to be incomplete, as mainline marks them with
 * CODETAG_FLAG_INACCURATE: 6.12's slab hook skips an object whose slab has no
 * extension vector (its allocation failed), losing the object's bytes and
 * call from its tag's counters. alloctag's patches include this header into
 * mm/slub.c, which calls alloctag_set_inaccurate() there.
 *
 * The flag is a bit of struct codetag's flags, which alloctag's selections
 * (lib/alloctag/src/codetag/select.rs) also mark from other CPUs, so it is
 * set with a compare-and-exchange, never a plain read-modify-write.
 */
#ifndef _ALLOCTAG_ACCURACY_H
#define _ALLOCTAG_ACCURACY_H

#include <linux/alloc_tag.h>
#include <linux/atomic.h>

/* Mainline's value (include/linux/codetag.h). */
#ifndef CODETAG_FLAG_INACCURATE
#define CODETAG_FLAG_INACCURATE	(1u << 0)
#endif

#ifdef CONFIG_MEM_ALLOC_PROFILING

static inline void alloctag_set_inaccurate(struct alloc_tag *tag)
{
	unsigned int old;

	if (!tag)
		return;
	old = READ_ONCE(tag->ct.flags);
	while (!(old & CODETAG_FLAG_INACCURATE) &&
	       !try_cmpxchg(&tag->ct.flags, &old, old | CODETAG_FLAG_INACCURATE))
		;
}

#else

static inline void alloctag_set_inaccurate(struct alloc_tag *tag)
{
}

#endif /* CONFIG_MEM_ALLOC_PROFILING */

#endif /* _ALLOCTAG_ACCURACY_H */
