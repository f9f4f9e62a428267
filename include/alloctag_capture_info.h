/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One allocation at a selected call site, gathered by the capture hooks
 * (src/glue_capture.c, where current, the CPU and the context are macros) for
 * the record pool (src/capture/pool.rs). alloctag_bindings.h includes it, so
 * that bindgen gives Rust the same layout.
 */
#ifndef _ALLOCTAG_CAPTURE_INFO_H
#define _ALLOCTAG_CAPTURE_INFO_H

#include <linux/types.h>

struct codetag;

struct alloctag_capture_info {
	/* The object's union codetag_ref: the record's key while it lives. */
	const void *ref;
	const struct codetag *tag;
	/* The slab object's address, or the first page's pfn. */
	unsigned long object;
	unsigned long bytes;
	u64 time_ns;
	pid_t pid;
	pid_t tgid;
	char comm[16];
	u32 cpu;
	u32 gfp;
	/* A stack depot handle; 0 when the depot had no room. */
	u32 stack;
	/* ALLOCTAG_CAPTURE_SLAB or ALLOCTAG_CAPTURE_PAGES. */
	u8 kind;
	u8 order;
	/* 0: task; 1: softirq; 2: hardirq. */
	u8 context;
};

enum {
	ALLOCTAG_CAPTURE_SLAB = 1,
	ALLOCTAG_CAPTURE_PAGES = 2,
};

#endif /* _ALLOCTAG_CAPTURE_INFO_H */
