/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the C glue of waste accounting shares between its files
 * (src/glue_waste.c, glue_waste_slab.c, glue_waste_pages.c), and only
 * they include.
 */
#ifndef _ALLOCTAG_GLUE_WASTE_H
#define _ALLOCTAG_GLUE_WASTE_H

#include <asm/barrier.h>
#include <linux/types.h>

#include "../include/alloctag_glue.h"

/* The period that runs (src/glue_waste.c), 0 while the accounting is off. */
static inline u32 waste_period(void)
{
	/* Pairs with the release store that begins a period, after its zeroing. */
	return smp_load_acquire(&alloctag_waste_current);
}

#endif /* _ALLOCTAG_GLUE_WASTE_H */
