# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Where the slab extension vectors come from.

# The vectors of the normal kmalloc caches' slabs come from the
# kmalloc-no-objext caches, 6.12's rule against a vector needing a vector.
# With the Rust core alloc_slab_obj_exts() names those caches itself, and
# kmalloc_slab() no longer tests __GFP_NO_OBJ_EXT (patches/0008-*.patch).
# Nothing else allocates there. /proc/slabinfo needs
# SLUB_DEBUG: the test kernel has it.
test_ro_slab_vectors_come_from_no_objext_caches() {
	n=$(awk '$1 ~ /^kmalloc-no-objext-/ { s += $2 } END { print s + 0 }' /proc/slabinfo)
	[ "$n" -gt 0 ] ||
		fail "no object in the kmalloc-no-objext caches: $(grep -c no-objext /proc/slabinfo) caches"
}
