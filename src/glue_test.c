// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of alloctag's KUnit suites (src/tests/): inline helpers of
 * linux/mm.h and linux/pgalloc_tag.h, and mm/slab.h's layout, which Rust
 * cannot reach. Built with either core.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/kasan.h>
#include <linux/mm.h>
#include <linux/pgalloc_tag.h>
#include <linux/rwsem.h>

#include "../include/alloctag_glue.h"
#include "slab.h"

/* The lock of the index test's own index (src/tests/index.rs). */
DECLARE_RWSEM(alloctag_test_index_lock);

struct page *alloctag_test_page_of(const void *addr)
{
	return virt_to_page(addr);
}

/*
 * The page flags of the head page of the memory at addr, without the
 * fields above them (section, node, zone, a page tag): those that
 * page-flags.h's tests and /proc/kpageflags read.
 */
unsigned long alloctag_test_page_flags(const void *addr)
{
	return virt_to_head_page(addr)->flags & PAGEFLAGS_MASK;
}

/*
 * Whether PG_owner_priv_1 is set on the head page of the memory at addr:
 * the bit page-flags.h aliases as PG_swapcache, PG_checked, PG_pinned,
 * PG_foreign, PG_xen_remapped and PG_vmemmap_self_hosted.
 */
bool alloctag_test_page_owner_priv_1(const void *addr)
{
	return test_bit(PG_owner_priv_1, &virt_to_head_page(addr)->flags);
}

void alloctag_test_get_page(struct page *page)
{
	get_page(page);
}

void alloctag_test_put_page(struct page *page)
{
	put_page(page);
}

void alloctag_test_clear_page_tag_ref(struct page *page)
{
	clear_page_tag_ref(page);
}

/*
 * Reads a page's tag reference into *ct, from page_ext or from the page's
 * flags: false where the page has none (no page_ext, or profiling off).
 */
bool alloctag_test_page_tag(struct page *page, const struct codetag **ct)
{
	union codetag_ref *ref;

	if (!mem_alloc_profiling_enabled())
		return false;
	if (alloctag_pgflags()) {
		union codetag_ref idx_ref;

		alloctag_pgflags_ref(alloctag_pgflags_read(page), &idx_ref);
		*ct = idx_ref.ct;
		return true;
	}
	ref = get_page_tag_ref(page);
	if (!ref)
		return false;
	*ct = READ_ONCE(ref->ct);
	put_page_tag_ref(ref);
	return true;
}

/* The CPU the caller runs on now: raw_smp_processor_id() is a macro. */
unsigned int alloctag_test_cpu(void)
{
	return raw_smp_processor_id();
}

/* num_online_cpus() is an inline of linux/cpumask.h. */
unsigned int alloctag_test_online_cpus(void)
{
	return num_online_cpus();
}

/*
 * Runs the current task without CAP_SYS_ADMIN, as root in a service that
 * dropped it, until alloctag_test_restore_creds(): cap_lower() and the
 * cred overrides are macros and inlines. NULL when memory runs out.
 */
const struct cred *alloctag_test_drop_cap_sys_admin(void)
{
	const struct cred *old;
	struct cred *new;

	new = prepare_creds();
	if (!new)
		return NULL;
	cap_lower(new->cap_effective, CAP_SYS_ADMIN);
	old = override_creds(new);
	/* override_creds() took its own reference. */
	put_cred(new);
	return old;
}

void alloctag_test_restore_creds(const struct cred *old)
{
	revert_creds(old);
}

/*
 * The tag in the slab slot of obj, a live slab object: what the allocation
 * hook stored there. NULL: none, or no vector (mm/slab.h's layout, which
 * only C reads).
 */
const struct codetag *alloctag_test_slab_object_tag(const void *obj)
{
	struct slabobj_ext *vec;
	struct slab *slab;

	obj = kasan_reset_tag(obj);
	slab = virt_to_slab(obj);
	vec = slab ? slab_obj_exts(slab) : NULL;
	if (!vec)
		return NULL;
	return vec[obj_to_index(slab->slab_cache, slab, (void *)obj)].ref.ct;
}

/*
 * The variants the page and slab hooks take now (src/tests/node.rs): the
 * page hooks' choice is an inline of one patched jump, run here as they run
 * it; the slab hooks' test of their plain key, a static branch.
 */
int alloctag_test_page_variant(void)
{
	return alloctag_page_variant();
}

bool alloctag_test_slab_plain(void)
{
	return alloctag_slab_plain();
}

/* The rare paths' way (linux/alloc_tag.h), one patched jump run as they run it. */
int alloctag_test_counting(void)
{
	return alloc_tag_counting();
}
