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
tag_lines() {
	grep -c "\[$1\]" /proc/allocinfo || true
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

# Unloads with each allocation of delete_module() failing; the module must
# go (or stay, loaded and listed) cleanly either way.
test_failnth_module_unload() {
	failnth_setup
	n=1
	while :; do
		insmod /lib/modules/alloctag_test.ko
		out=$("$FAILNTH" "$n" unload alloctag_test)
		if grep -q '^alloctag_test ' /proc/modules; then
			[ "$(tag_lines alloctag_test)" -gt 0 ] || { echo "N=$n: loaded, tags gone"; return 1; }
			rmmod alloctag_test
		fi
		[ "$(tag_lines alloctag_test)" = 0 ] || { echo "N=$n: tags left after $out"; return 1; }
		case "$out" in *injected=0) break ;; esac
		n=$((n + 1))
		[ "$n" -le 500 ] || { echo "more than 500 fault points"; return 1; }
	done
	echo "delete_module: $((n - 1)) fault points"
}

# A module that still holds an allocation at unload, loaded with each
# allocation failing: whichever allocation fails, a later unload keeps what
# the live allocation needs. Bounded: each such unload keeps the module's
# memory for good.
test_failnth_leaking_module_load() {
	failnth_setup
	for n in 1 2 3 5 8 13 21 34 55 89; do
		out=$("$FAILNTH" "$n" load /lib/modules/alloctag_test.ko leak=1)
		if grep -q '^alloctag_test ' /proc/modules; then
			rmmod alloctag_test
		fi
		[ "$(tag_lines alloctag_test)" = 0 ] || { echo "N=$n: tags left after $out"; return 1; }
	done
}

# Reads /proc/allocinfo with each allocation of open() and read() failing:
# each read fails with ENOMEM or succeeds, and the next one is whole: the
# same tags, line for line, as a read before the failures. The tag set
# changes only with the content id (ALLOCINFO_IOC_CONTENT_ID: a module's
# tags or a Rust dynamic tag made or dropped); if it moved meanwhile, the
# whole read is compared with a reference read instead, taken between two
# equal content ids, which allocinfo_ioctl snapshot guarantees.
test_failnth_allocinfo_read() {
	failnth_setup
	id0=$(allocinfo_ioctl content-id) || { echo "content-id failed"; return 1; }
	failnth_tags </proc/allocinfo >/tmp/failnth-before
	n=1
	while :; do
		out=$("$FAILNTH" "$n" read /proc/allocinfo)
		case "$out" in
		rc=0\ * | rc=12\ *) ;;
		*) echo "N=$n: $out"; return 1 ;;
		esac
		case "$out" in *injected=0) break ;; esac
		n=$((n + 1))
		[ "$n" -le 200 ] || { echo "more than 200 fault points"; return 1; }
	done
	echo "/proc/allocinfo: $((n - 1)) fault points"
	failnth_tags </proc/allocinfo >/tmp/failnth-after
	id1=$(allocinfo_ioctl content-id) || { echo "content-id failed"; return 1; }
	if [ "$id1" != "$id0" ]; then
		# The tags changed meanwhile: the reference is a read whose tags
		# held still across it (the snapshot's first text read).
		echo "content id $id0 -> $id1: comparing with a fresh read"
		allocinfo_ioctl snapshot /tmp/failnth-t1 /tmp/failnth-d /tmp/failnth-t2 ||
			{ echo "snapshot failed"; return 1; }
		id1=$(allocinfo_ioctl content-id)
		failnth_tags </proc/allocinfo >/tmp/failnth-after
		failnth_tags </tmp/failnth-t1 >/tmp/failnth-before
		id2=$(allocinfo_ioctl content-id)
		[ "$id1" = "$id2" ] || { echo "the tags kept changing ($id1 -> $id2)"; return 1; }
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
failnth_tags() {
	awk 'NR == 1 && !/^allocinfo - version: [12]\.0$/ { print "bad header: " $0; next }
		NR == 2 && $0 != "#     <size>  <calls> <tag info>" { print "bad header: " $0; next }
		NR > 2 { $1 = ""; $2 = ""; print }'
}
