/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * /proc/allocinfo ioctl interface: mainline's ABI (magic 0xA6), byte for
 * byte, so that tools written for mainline work on alloctag kernels.
 * alloctag's patches install this file as include/uapi/linux/alloc_tag.h.
 */
#ifndef _UAPI_LINUX_ALLOC_TAG_H
#define _UAPI_LINUX_ALLOC_TAG_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Names longer than ALLOCINFO_STR_SIZE - 1 keep their last characters. */
#define ALLOCINFO_STR_SIZE	64

struct allocinfo_content_id {
	__u64 id;
};

struct allocinfo_tag {
	char modname[ALLOCINFO_STR_SIZE];	/* "" for built-in code */
	char function[ALLOCINFO_STR_SIZE];
	char filename[ALLOCINFO_STR_SIZE];
	__u64 lineno;
};

/*
 * 8-byte aligned so that 32-bit and 64-bit layouts agree; no implicit
 * padding, as mainline since "alloc_tag: avoid implicit padding in uapi"
 * (the same size and ioctl numbers).
 */
struct allocinfo_counter {
	__u64 bytes;
	__u64 calls;
	__u8 accurate;			/* 0 when counts were lost */
	/*
	 * alloctag's extension, the first byte of what mainline pads (a
	 * mainline kernel leaves it 0): 1 when the tag's module was unloaded
	 * while allocations it made were live; the tag is listed until they
	 * are freed.
	 */
	__u8 unloaded;
	__u8 pad[6];			/* 0 */
} __attribute__((aligned(8)));

struct allocinfo_tag_data {
	struct allocinfo_tag tag;
	struct allocinfo_counter counter;
};

enum {
	ALLOCINFO_FILTER_MODNAME,
	ALLOCINFO_FILTER_FUNCTION,
	ALLOCINFO_FILTER_FILENAME,
	ALLOCINFO_FILTER_LINENO,
	ALLOCINFO_FILTER_INACCURATE,
	ALLOCINFO_FILTER_MIN_SIZE,
	ALLOCINFO_FILTER_MAX_SIZE,
	ALLOCINFO_FILTER_UNLOADED,	/* alloctag: only unloaded modules' tags */
	__ALLOCINFO_FILTER_LAST = ALLOCINFO_FILTER_UNLOADED
};

#define ALLOCINFO_FILTER_MASK_MODNAME		(1 << ALLOCINFO_FILTER_MODNAME)
#define ALLOCINFO_FILTER_MASK_FUNCTION		(1 << ALLOCINFO_FILTER_FUNCTION)
#define ALLOCINFO_FILTER_MASK_FILENAME		(1 << ALLOCINFO_FILTER_FILENAME)
#define ALLOCINFO_FILTER_MASK_LINENO		(1 << ALLOCINFO_FILTER_LINENO)
#define ALLOCINFO_FILTER_MASK_INACCURATE	(1 << ALLOCINFO_FILTER_INACCURATE)
#define ALLOCINFO_FILTER_MASK_MIN_SIZE		(1 << ALLOCINFO_FILTER_MIN_SIZE)
#define ALLOCINFO_FILTER_MASK_MAX_SIZE		(1 << ALLOCINFO_FILTER_MAX_SIZE)
#define ALLOCINFO_FILTER_MASK_UNLOADED		(1 << ALLOCINFO_FILTER_UNLOADED)

#define ALLOCINFO_FILTER_MASKS \
	((1 << (__ALLOCINFO_FILTER_LAST + 1)) - 1)

struct allocinfo_filter {
	__u64 mask;			/* ALLOCINFO_FILTER_MASK_* in use */
	struct allocinfo_tag fields;	/* names compared as trimmed */
	__u64 min_size;			/* bytes, inclusive */
	__u64 max_size;			/* bytes, inclusive */
	__u64 inaccurate;		/* match tags whose accuracy is !this */
};

struct allocinfo_get_at {
	__u64 pos;			/* in: the pos-th matching tag, from 0 */
	struct allocinfo_filter filter;	/* in: kept for GET_NEXT */
	struct allocinfo_tag_data data;	/* out */
};

/*
 * alloctag's: one tag's figures split by CPU or by NUMA node
 * (ALLOCINFO_IOC_GET_SPLIT), beside mainline's ioctls.
 */
enum {
	/* the counters of each CPU, as counted on it, from CPU 0 to nr_cpu_ids - 1 */
	ALLOCINFO_SPLIT_CPU,
	/*
	 * by the node of the memory, from node 0 to nr_node_ids - 1, then
	 * per-CPU memory (a unit on every node): nr_node_ids + 1 entries;
	 * EOPNOTSUPP without per-node counting (vm.mem_profiling_per_node)
	 */
	ALLOCINFO_SPLIT_NODE,
	__ALLOCINFO_SPLIT_LAST = ALLOCINFO_SPLIT_NODE
};

/* GET_SPLIT's flags */
#define ALLOCINFO_SPLIT_NEXT	(1 << 0)	/* the next match, as GET_NEXT */

/*
 * One CPU's or node's share of a tag. Signed: memory freed on another CPU
 * than the one that allocated it leaves the first positive and the second
 * negative; the shares add up to the tag's figures.
 */
struct allocinfo_split_entry {
	__s64 bytes;
	__s64 calls;
};

struct allocinfo_get_split {
	__u64 pos;			/* in: as GET_AT's; not read with _NEXT */
	struct allocinfo_filter filter;	/* in: as GET_AT's, kept; not read with _NEXT */
	__u32 by;			/* in: ALLOCINFO_SPLIT_*; kept */
	__u32 flags;			/* in: ALLOCINFO_SPLIT_NEXT or 0 */
	__s32 at;			/* in: a CPU or node, or -1; kept */
	__u32 nr;			/* in: room in entries; out: entries written */
	__s64 min_at;			/* in: with at >= 0, only tags holding at least this many bytes there; kept */
	__u64 entries;			/* in: user address of nr struct allocinfo_split_entry */
	struct allocinfo_tag_data data;	/* out */
};

#define _ALLOCINFO_IOC_CONTENT_ID	0
#define _ALLOCINFO_IOC_GET_AT		1
#define _ALLOCINFO_IOC_GET_NEXT		2
#define _ALLOCINFO_IOC_GET_SPLIT	3	/* alloctag's */

#define ALLOCINFO_IOC_BASE		0xA6
#define ALLOCINFO_IOC_CONTENT_ID	_IOR(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_CONTENT_ID, \
					     struct allocinfo_content_id)
#define ALLOCINFO_IOC_GET_AT		_IOWR(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_GET_AT, \
					      struct allocinfo_get_at)
#define ALLOCINFO_IOC_GET_NEXT		_IOR(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_GET_NEXT, \
					     struct allocinfo_tag_data)
#define ALLOCINFO_IOC_GET_SPLIT		_IOWR(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_GET_SPLIT, \
					      struct allocinfo_get_split)

#endif /* _UAPI_LINUX_ALLOC_TAG_H */
