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

#define _ALLOCINFO_IOC_CONTENT_ID	0
#define _ALLOCINFO_IOC_GET_AT		1
#define _ALLOCINFO_IOC_GET_NEXT		2

#define ALLOCINFO_IOC_BASE		0xA6
#define ALLOCINFO_IOC_CONTENT_ID	_IOR(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_CONTENT_ID, \
					     struct allocinfo_content_id)
#define ALLOCINFO_IOC_GET_AT		_IOWR(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_GET_AT, \
					      struct allocinfo_get_at)
#define ALLOCINFO_IOC_GET_NEXT		_IOR(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_GET_NEXT, \
					     struct allocinfo_tag_data)

#endif /* _UAPI_LINUX_ALLOC_TAG_H */
