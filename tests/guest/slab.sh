# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Where the slab extension vectors come from.

SLAB_SYS=/sys/kernel/slab

# Empties what the kmalloc caches keep aside, so that /proc/slabinfo counts
# the objects in use: first the normal caches, whose empty slabs go, their
# vectors with them (and KASAN's quarantine gives their freed objects back
# first), then the kmalloc-no-objext caches, whose per-CPU slabs go back to
# the node's lists (slabinfo counts a per-CPU slab's free objects as active)
# and whose freed vectors leave the quarantine.
slab_flush() {
	for c in "$SLAB_SYS"/kmalloc-[0-9]* "$SLAB_SYS"/kmalloc-rnd-*; do
		[ -e "$c/shrink" ] || continue
		echo 1 >"$c/shrink" || fail "shrinking $c failed" || return 1
	done
	for c in "$SLAB_SYS"/kmalloc-no-objext-*; do
		echo 1 >"$c/shrink" || fail "shrinking $c failed" || return 1
	done
}

# Prints "VECTORS SLABS MAYBE EXTRA", read after a flush: the objects in the
# kmalloc-no-objext caches; the slabs of the normal kmalloc caches, each of
# which has a vector of objperslab slabobj_ext (8 to 16 bytes) and waste
# slots (4 bytes), at most 20 bytes an object: at most 8 KiB, a
# kmalloc-no-objext object, with up to 409 objects a slab; of those with up
# to 1024 (the page allocator's past 8 KiB, or not); and how many of the
# objects counted may be free ones of per-CPU slabs that a vector allocated
# since the flush took (0 when the count is exact: tried five times).
slab_vectors() {
	for _ in 1 2 3 4 5; do
		slab_flush || return 1
		awk '$1 ~ /^kmalloc-no-objext-/ { v += $2 }
			$1 ~ /^kmalloc-([0-9]+k?|rnd-[0-9]+-[0-9]+k?)$/ {
				if ($5 <= 409) s += $15; else if ($5 <= 1024) m += $15 }
			END { print v + 0, s + 0, m + 0 }' /proc/slabinfo >/tmp/slab-vectors ||
			fail "no /proc/slabinfo" || return 1
		extra=0
		for c in "$SLAB_SYS"/kmalloc-no-objext-*; do
			read -r n _ <"$c/cpu_slabs" || fail "no $c/cpu_slabs" || return 1
			[ "$n" = 0 ] || extra=$((extra + n * $(cat "$c/objs_per_slab")))
		done
		[ "$extra" != 0 ] || break
	done
	echo "$(cat /tmp/slab-vectors) $extra"
}

# Fails unless the counts $2 (slab_vectors' four) say that each slab of a
# normal kmalloc cache has its vector in a kmalloc-no-objext cache, and that
# nothing else is there: as many objects there as slabs, but for the
# objects of per-CPU slabs and a few: a vector KFENCE sampled, a slab made
# or freed during the read.
slab_vectors_match() {
	# shellcheck disable=SC2086 # four numbers
	set -- "$1" $2
	echo "$1: $2 objects in the kmalloc-no-objext caches, $3 slabs of the normal kmalloc caches (and $4 with larger vectors), $5 objects of per-CPU slabs"
	[ "$2" -ge $(($3 - 4 - $3 / 20)) ] ||
		fail "$1: $2 objects in the kmalloc-no-objext caches for the vectors of $3 slabs" || return 1
	[ $(($2 - $5)) -le $(($3 + $4 + 4)) ] ||
		fail "$1: $2 objects in the kmalloc-no-objext caches ($5 maybe free), more than the $3 (+$4) slabs that have vectors"
}

# The vectors of the normal kmalloc caches' slabs come from the
# kmalloc-no-objext caches, 6.12's rule against a vector needing a vector.
# With the Rust core alloc_slab_obj_exts() names those caches itself, and
# kmalloc_slab() no longer tests __GFP_NO_OBJ_EXT (patches/0008-*.patch).
# Nothing else allocates there. So, counted with the caches flushed, the
# kmalloc-no-objext caches hold one object per slab of the normal kmalloc
# caches: at rest; with 2000 opens of a sysfs file held (openhold), each of
# which allocates its kernfs_open_file and seq_file buffer from normal
# kmalloc caches, making hundreds of slabs, whose vectors must be there too;
# and after the opens are closed, their slabs freed, and their vectors with
# them. /proc/slabinfo and /sys/kernel/slab need SLUB_DEBUG and SYSFS: the
# test kernel has them.
test_ro_slab_vectors_come_from_no_objext_caches() {
	[ -e "$SLAB_SYS/kmalloc-8/shrink" ] || fail "no $SLAB_SYS/kmalloc-8/shrink"
	[ -e "$SLAB_SYS/kmalloc-no-objext-8/cpu_slabs" ] || fail "no kmalloc-no-objext caches in $SLAB_SYS"
	rest=$(slab_vectors) || return 1
	slab_vectors_match "at rest" "$rest" || return 1
	: >/tmp/slab-openhold.out
	openhold "$SLAB_SYS/kmalloc-8/objs_per_slab" 2000 >/tmp/slab-openhold.out 2>&1 &
	job=$!
	for _ in $(seq 1 600); do
		[ -s /tmp/slab-openhold.out ] && break
		sleep 0.1
	done
	grep -q "^held 2000$" /tmp/slab-openhold.out || {
		kill $job
		fail "openhold: $(cat /tmp/slab-openhold.out)" || return 1
	}
	held=$(slab_vectors) || { kill $job; return 1; }
	kill $job
	wait $job 2>/dev/null || true
	closed=$(slab_vectors) || return 1
	guest_note "vectors and slabs (objects in kmalloc-no-objext, normal kmalloc slabs, larger, per-CPU): at rest $rest; 2000 opens held $held; closed $closed"
	slab_vectors_match "2000 opens held" "$held" || return 1
	slab_vectors_match "opens closed" "$closed" || return 1
	# The opens made slabs, and closing them freed most of those again: the
	# counts above compared slabs that came and went.
	s0=$(echo "$rest" | cut -d ' ' -f 2)
	s1=$(echo "$held" | cut -d ' ' -f 2)
	s2=$(echo "$closed" | cut -d ' ' -f 2)
	[ "$s1" -ge $((s0 + 100)) ] || fail "2000 opens held made $((s1 - s0)) slabs, not 100" || return 1
	[ "$s2" -le $((s1 - (s1 - s0) / 2)) ] ||
		fail "closing 2000 opens freed $((s1 - s2)) of the $((s1 - s0)) slabs they made"
}
