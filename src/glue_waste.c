// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of waste accounting (src/waste.rs): its state, which every hook's
 * slow path reads: the static keys, the period that runs, the lock of
 * turning it on and off, the clock. The slow paths are in
 * glue_waste_slab.c (slab objects, krealloc()) and glue_waste_pages.c
 * (pages, vmalloc() areas). Turning the accounting on and off, and reading
 * it, is Rust's.
 *
 * C because DEFINE_STATIC_KEY_FALSE and DECLARE_RWSEM are macros, and the
 * keys are tested inline by the hooks of include/alloctag_waste.h.
 *
 * The slow paths run with preemption off, so that src/waste.rs, which
 * zeroes the counters when a period begins, can wait for every one that
 * saw the last period with synchronize_rcu() once it has ended.
 */

#include <linux/jump_label.h>
#include <linux/rwsem.h>
#include <linux/timekeeping.h>

#include "../include/alloctag_waste.h"
#include "../include/alloctag_glue.h"

DEFINE_STATIC_KEY_FALSE(alloctag_waste_key);

/*
 * The period that runs, 1 to 65535, or 0 while the accounting is off:
 * written by src/waste.rs, with a release store when a period begins.
 */
u32 alloctag_waste_current;

/* Serializes turning the accounting on and off (src/waste.rs). */
DECLARE_RWSEM(alloctag_waste_lock);

u64 alloctag_waste_now(void)
{
	return ktime_get_boottime_ns();
}

/* On while capture or waste accounting is (src/keys.rs): alloctag_waste.h. */
DEFINE_STATIC_KEY_FALSE(alloctag_page_alloc_key);
