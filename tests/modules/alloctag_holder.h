/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface of alloctag_holder.ko, for the test modules that hand it
 * their allocations. They look it up with symbol_get(), so that they load
 * without the holder when they do not use it.
 */
#ifndef ALLOCTAG_HOLDER_H
#define ALLOCTAG_HOLDER_H

/* How the holder must free an object it was given. */
enum alloctag_holder_kind {
	ALLOCTAG_HOLDER_KMALLOC,	/* kfree(ptr) */
	ALLOCTAG_HOLDER_PAGES,		/* __free_pages(ptr, order) */
	ALLOCTAG_HOLDER_VMALLOC,	/* vfree(ptr) */
};

int alloctag_holder_take(enum alloctag_holder_kind kind, void *ptr,
			 unsigned int order);

#endif /* ALLOCTAG_HOLDER_H */
