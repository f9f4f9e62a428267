# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Module load, unload and /proc/allocinfo reads with each of their
# allocations failing in turn (fail-nth: failslab and fail_page_alloc), on
# the test kernel (CONFIG_FAULT_INJECTION). Every failure must be clean: the
# call fails or succeeds, the module's tags come and go with it, and the
# console shows no kernel report (run-qemu.sh fails the boot on one).
# Sourced by run.sh.

FAILNTH=/bin/failnth
DEBUGFS=/sys/kernel/debug

# Lets fail-nth fail every allocation, sleeping or not, of any order, and
# quietly: a forced failure would otherwise print a stack trace, which the
# harness takes for a kernel report.
failnth_setup() {
	[ -x "$FAILNTH" ] || { echo "no $FAILNTH"; return 1; }
	[ -d "$DEBUGFS/failslab" ] || mount -t debugfs none "$DEBUGFS"
	for attr in failslab fail_page_alloc; do
		echo 0 >"$DEBUGFS/$attr/verbose"
		echo N >"$DEBUGFS/$attr/ignore-gfp-wait"
	done
	echo 0 >"$DEBUGFS/fail_page_alloc/min-order"
	echo N >"$DEBUGFS/fail_page_alloc/ignore-gfp-highmem"
}

# Prints the number of tag lines of module $1.
# (Loaded code's: a leaking unload leaves its live call site listed, marked
# unloaded, tests/guest/lib.sh's loaded_tags.)
tag_lines() {
	loaded_tags | grep -c "\[$1\]" || true
}

# Prints how many kept lines of alloctag_test_init() are listed: one per
# unloaded instance that leaked its object.
kept_init_lines() {
	unloaded_tags | grep -c '\[alloctag_test\] func:alloctag_test_init ' || true
}

# Loads module file $1 (named $2, with parameters $3) with its Nth allocation
# failing, for N = 1, 2, ... until a load reaches no Nth allocation; after
# each load that succeeded, unloads it. Fails if a load fails with anything
# but ENOMEM, or if the module's tags outlive it.
load_with_each_failure() {
	file=$1 name=$2 params=$3
	n=1 failed=0 loaded=0
	while :; do
		out=$("$FAILNTH" "$n" load "$file" "$params")
		rc=${out#rc=}
		rc=${rc%% *}
		case "$rc" in
		0)
			loaded=$((loaded + 1))
			[ "$(tag_lines "$name")" -gt 0 ] || { echo "N=$n: loaded without tags"; return 1; }
			rmmod "$name" || { echo "N=$n: rmmod failed"; return 1; }
			;;
		12) failed=$((failed + 1)) ;; # ENOMEM
		*) echo "N=$n: load failed with errno $rc"; return 1 ;;
		esac
		[ "$(tag_lines "$name")" = 0 ] || { echo "N=$n: tags left after $out"; return 1; }
		case "$out" in *injected=0) break ;; esac
		n=$((n + 1))
		[ "$n" -le 2000 ] || { echo "more than 2000 fault points"; return 1; }
	done
	echo "$name: $((n - 1)) fault points: $failed loads failed cleanly, $loaded succeeded"
	# The last load reached no fault point: it succeeded and was unloaded.
	[ "$rc" = 0 ] && [ "$n" -gt 1 ]
}

test_failnth_c_module_load() {
	failnth_setup
	load_with_each_failure /lib/modules/alloctag_test.ko alloctag_test ""
}

test_failnth_rust_module_load() {
	failnth_setup
	load_with_each_failure /lib/modules/alloctag_rust_sample.ko alloctag_rust_sample ""
}

# Sets rc and injected from failnth's report $1, "rc=R injected=I": R is 0
# or the call's errno, I is 1 when the Nth fault point was reached and
# failed, 0 when the call reached fewer. Fails on anything else.
failnth_result() {
	case "$1" in
	rc=*' injected=0' | rc=*' injected=1') ;;
	*) echo "failnth reported '$1'"; return 1 ;;
	esac
	rc=${1#rc=}
	rc=${rc%% *}
	injected=${1##*=}
	case "$rc" in
	'' | *[!0-9]*) echo "failnth reported '$1'"; return 1 ;;
	esac
}

# Unloads with each allocation of delete_module() failing in turn. Past its
# checks delete_module() cannot fail: the module's exit and free_module()
# return nothing, and what they could not allocate they do without (a
# uevent). So every unload returns 0 and the module and its tags go,
# whichever allocation failed; and at least one allocation must have been
# reached and failed, or the loop tested nothing.
test_failnth_module_unload() {
	failnth_setup
	n=1 hit=0
	while :; do
		insmod /lib/modules/alloctag_test.ko || fail "N=$n: insmod failed" || return 1
		[ "$(tag_lines alloctag_test)" -gt 0 ] || fail "N=$n: loaded without tags" || return 1
		out=$("$FAILNTH" "$n" unload alloctag_test) || fail "N=$n: failnth failed: $out" || return 1
		failnth_result "$out" || return 1
		if [ "$rc" != 0 ]; then
			rmmod alloctag_test 2>/dev/null || true
			fail "N=$n: delete_module() failed with errno $rc ($out)" || return 1
		fi
		! grep -q '^alloctag_test ' /proc/modules ||
			fail "N=$n: delete_module() returned 0 ($out) but the module is still listed" || return 1
		[ "$(tag_lines alloctag_test)" = 0 ] || fail "N=$n: tags left after $out" || return 1
		[ "$injected" = 1 ] || break
		hit=$((hit + 1))
		n=$((n + 1))
		[ "$n" -le 500 ] || fail "more than 500 fault points" || return 1
	done
	guest_note "delete_module: $hit fault points, each failed in turn; every unload returned 0 and took the tags"
	[ "$hit" -ge 1 ] || fail "delete_module() reached no fault point: fail-nth failed no allocation"
}

# A module that still holds an allocation at unload (leak=1), loaded with its
# Nth allocation failing: each load fails with ENOMEM or succeeds, and one in
# which nothing was injected succeeds. Each that succeeded is unloaded, and
# whichever allocation failed before, the unload warns about the one live
# allocation, alloctag_test_init()'s, and keeps its tags but none of the
# module's memory (no loader's "still alive" line: a later free writes only
# the tags, which stay), or warns about nothing and keeps nothing; the tags
# of loaded code leave
# /proc/allocinfo either way, and a leak's call site stays listed, marked
# unloaded (one more kept line each time). Only a load that survived an injected failure may leave nothing
# live: the failure may have been the vector of the object's slab, which then
# goes uncharged. A load with no failure must leak, and the last N is past
# every fault point: a clean load. Bounded: each leaking unload keeps its
# tags for good.
test_failnth_leaking_module_load() {
	failnth_setup
	loads=0 hit=0 failed=0 loaded=0 leaked=0
	kept0=$(kept_init_lines)
	for n in 1 2 3 5 8 13 21 34 55 89 100000; do
		loads=$((loads + 1))
		out=$("$FAILNTH" "$n" load /lib/modules/alloctag_test.ko leak=1) ||
			fail "N=$n: failnth failed: $out" || return 1
		failnth_result "$out" || return 1
		[ "$injected" = 0 ] || hit=$((hit + 1))
		case "$rc" in
		0)
			loaded=$((loaded + 1))
			grep -q '^alloctag_test ' /proc/modules ||
				fail "N=$n: loaded ($out) but not in /proc/modules" || return 1
			[ "$(tag_lines alloctag_test)" -gt 0 ] || fail "N=$n: loaded without tags" || return 1
			dmesg -c >/dev/null
			rmmod alloctag_test || fail "N=$n: rmmod failed" || return 1
			dmesg >/tmp/failnth-leak.log
			warns=$(grep -c 'module alloctag_test has .* at module unload' /tmp/failnth-leak.log || true)
			init=$(grep -Ec 'module alloctag_test has [0-9]+ bytes in 1 allocations at module unload, at 1 call site, listed until freed: [^ ]*alloctag_test\.c:[0-9]+ \[alloctag_test\] func:alloctag_test_init has [0-9]+ bytes in 1 allocations$' /tmp/failnth-leak.log || true)
			kept=$(grep -c 'alloctag_test: memory allocation(s) from the module still alive' /tmp/failnth-leak.log || true)
			if [ "$warns" = 0 ] && [ "$kept" = 0 ]; then
				[ "$injected" = 1 ] ||
					fail "N=$n: a load with no failure ($out) left nothing live at unload: $(tail -n 5 /tmp/failnth-leak.log)" ||
					return 1
			elif [ "$warns" = 1 ] && [ "$init" = 1 ] && [ "$kept" = 0 ]; then
				leaked=$((leaked + 1))
			else
				echo "N=$n ($out): $warns unload warnings ($init of alloctag_test_init's one object), $kept 'still alive' lines:"
				tail -n 5 /tmp/failnth-leak.log
				return 1
			fi
			;;
		12) # ENOMEM
			[ "$injected" = 1 ] || fail "N=$n: ENOMEM with no failure injected ($out)" || return 1
			failed=$((failed + 1))
			! grep -q '^alloctag_test ' /proc/modules ||
				fail "N=$n: the load failed ($out) but the module is listed" || return 1
			;;
		*) fail "N=$n: load failed with errno $rc ($out)" || return 1 ;;
		esac
		[ "$(tag_lines alloctag_test)" = 0 ] || fail "N=$n: tags left after $out" || return 1
		[ "$(kept_init_lines)" = $((kept0 + leaked)) ] ||
			fail "N=$n: $(kept_init_lines) kept lines of alloctag_test_init, not $((kept0 + leaked))" || return 1
	done
	guest_note "leak=1: $hit of $loads loads reached their fault point: $failed failed cleanly;" \
		"$loaded loaded, $leaked of them leaked their object at unload"
	[ "$injected" = 0 ] || fail "the last load, N=$n, still reached its fault point" || return 1
	[ "$hit" -ge 1 ] || fail "no load reached its fault point: fail-nth failed no allocation" || return 1
	[ "$failed" -ge 1 ] || fail "no injected failure made a load fail" || return 1
	[ "$leaked" -ge 1 ] || fail "no unload found the leaked object"
}

# Reads /proc/allocinfo with each allocation of open() and read() failing in
# turn: each read fails with ENOMEM or succeeds, at least one allocation is
# reached and failed, and one failure at least fails its read (open()'s
# first allocation, the path name's, has no way around). The read after is
# whole: the same tags, line for line, as a read before the failures. The
# tag set changes only with the content id (ALLOCINFO_IOC_CONTENT_ID: a
# module's tags or a Rust dynamic tag made or dropped); if it moved
# meanwhile, the whole read is compared with a reference read instead, taken
# between two equal content ids, which allocinfo_ioctl snapshot guarantees.
test_failnth_allocinfo_read() {
	failnth_setup
	id0=$(allocinfo_ioctl content-id) || fail "content-id failed" || return 1
	failnth_tags </proc/allocinfo >/tmp/failnth-before ||
		fail "the read before the failures: $(head -n 3 /tmp/failnth-before)" || return 1
	n=1 hit=0 failed=0
	while :; do
		out=$("$FAILNTH" "$n" read /proc/allocinfo) || fail "N=$n: failnth failed: $out" || return 1
		failnth_result "$out" || return 1
		case "$rc" in
		0) ;;
		12)
			[ "$injected" = 1 ] || fail "N=$n: ENOMEM with no failure injected ($out)" || return 1
			failed=$((failed + 1))
			;;
		*) fail "N=$n: open or read failed with errno $rc ($out)" || return 1 ;;
		esac
		[ "$injected" = 1 ] || break
		# A read that reached no fault point succeeds (above: rc 0).
		hit=$((hit + 1))
		n=$((n + 1))
		[ "$n" -le 200 ] || fail "more than 200 fault points" || return 1
	done
	guest_note "/proc/allocinfo: $hit fault points, each failed in turn: $failed reads failed with ENOMEM, $((hit - failed)) went on"
	[ "$hit" -ge 1 ] || fail "open() and read() reached no fault point: fail-nth failed no allocation" || return 1
	[ "$failed" -ge 1 ] || fail "no injected failure made a read fail" || return 1
	failnth_tags </proc/allocinfo >/tmp/failnth-after ||
		fail "the read after the failures: $(head -n 3 /tmp/failnth-after)" || return 1
	id1=$(allocinfo_ioctl content-id) || fail "content-id failed" || return 1
	if [ "$id1" != "$id0" ]; then
		# The tags changed meanwhile: the reference is a read whose tags
		# held still across it (the snapshot's first text read).
		echo "content id $id0 -> $id1: comparing with a fresh read"
		allocinfo_ioctl snapshot /tmp/failnth-t1 /tmp/failnth-d /tmp/failnth-t2 ||
			fail "snapshot failed" || return 1
		id1=$(allocinfo_ioctl content-id) || fail "content-id failed" || return 1
		failnth_tags </proc/allocinfo >/tmp/failnth-after ||
			fail "the fresh read: $(head -n 3 /tmp/failnth-after)" || return 1
		failnth_tags </tmp/failnth-t1 >/tmp/failnth-before ||
			fail "the snapshot's read: $(head -n 3 /tmp/failnth-before)" || return 1
		id2=$(allocinfo_ioctl content-id) || fail "content-id failed" || return 1
		[ "$id1" = "$id2" ] || fail "the tags kept changing ($id1 -> $id2)" || return 1
	fi
	if ! cmp -s /tmp/failnth-before /tmp/failnth-after; then
		echo "the read after the failures differs: $(wc -l </tmp/failnth-before) tags before, $(wc -l </tmp/failnth-after) after"
		diff /tmp/failnth-before /tmp/failnth-after | head -n 10
		return 1
	fi
	echo "the read after the failures lists the same $(wc -l </tmp/failnth-after) tags"
}

# The tag info (FILE:LINE [MODULE] func:NAME) of each tag line of the
# allocinfo text on stdin, in order; the header lines are checked exactly.
# Fails, after saying why, on a bad header or no tag line: two empty or
# equally broken reads must not compare equal.
failnth_tags() {
	awk 'NR == 1 && !/^allocinfo - version: [12]\.0$/ { print "bad header: " $0; bad = 1; next }
		NR == 2 && $0 != "#     <size>  <calls> <tag info>" { print "bad header: " $0; bad = 1; next }
		NR > 2 { $1 = ""; $2 = ""; print; tags++ }
		END { if (!tags) print "no tag line in " NR " lines"; exit bad || !tags }'
}
