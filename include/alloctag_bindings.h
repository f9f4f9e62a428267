/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declarations that alloctag's Rust code reaches through bindgen.
 *
 * alloctag's patches include this header from rust/bindings/bindings_helper.h,
 * so the items below appear in the kernel crate's `bindings` module.
 */
#ifndef _ALLOCTAG_BINDINGS_H
#define _ALLOCTAG_BINDINGS_H

#include <linux/alloc_tag.h>
#include <linux/alloctag_module.h>
#include <linux/codetag.h>
#include <linux/cpumask.h>
#include <linux/gfp.h>
#include <linux/init.h>
#include <linux/kallsyms.h>
#include <linux/irq_work.h>
#include <linux/jump_label.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <linux/bug.h>
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/execmem.h>
#include <linux/kthread.h>
#include <linux/migrate.h>
#include <linux/pagemap.h>
#include <linux/pgalloc_tag.h>
#include <linux/random.h>
#include <linux/sched/task.h>
#include <linux/stackdepot.h>
#include <linux/string_helpers.h>
#include <linux/vmalloc.h>
#include <uapi/linux/alloc_tag.h>

#include "alloctag_accuracy.h"
#include "alloctag_capture_info.h"
#include "alloctag_fail.h"
#include "alloctag_waste.h"
/* Every function shared by the Rust core and its C glue, declared once. */
#include "alloctag_glue.h"

/* gfp_t constants that the kernel crate does not bind; bindgen drops the prefix. */
const gfp_t RUST_CONST_HELPER___GFP_NOFAIL = ___GFP_NOFAIL;
const gfp_t RUST_CONST_HELPER___GFP_DIRECT_RECLAIM = ___GFP_DIRECT_RECLAIM;
const gfp_t RUST_CONST_HELPER___GFP_KSWAPD_RECLAIM = ___GFP_KSWAPD_RECLAIM;
const gfp_t RUST_CONST_HELPER___GFP_HIGH = ___GFP_HIGH;

/* Whether a file is open for reading (a cast bindgen cannot evaluate). */
const fmode_t RUST_CONST_HELPER_FMODE_READ = FMODE_READ;

#endif /* _ALLOCTAG_BINDINGS_H */
