# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of /proc/allocinfo. Sourced by run.sh; each test_* function
# runs in a subshell with set -e. test_rw_ ones freeze the counters by
# turning profiling off, which needs a writable sysctl (nodebug kernel).

test_allocinfo_header() {
	[ "$(sed -n 1p "$PROC_ALLOCINFO")" = 'allocinfo - version: 1.0' ]
	[ "$(sed -n 2p "$PROC_ALLOCINFO")" = '#     <size>  <calls> <tag info>' ]
}

test_allocinfo_lines_match_format() {
	n=$(tail -n +3 "$PROC_ALLOCINFO" | wc -l)
	echo "$n tags"
	[ "$n" -gt 1000 ]
	# %12lli %8llu file:line [module] func:name, then one space.
	bad=$(tail -n +3 "$PROC_ALLOCINFO" |
		grep -Ev '^ *-?[0-9]{1,12} +[0-9]{1,8} [^ ]+:[0-9]+ (\[[A-Za-z0-9_]+\] )?func:[^ ]+ $' |
		head -5)
	[ -z "$bad" ] || { echo "bad lines: $bad"; return 1; }
	# The fields are right-aligned to 12 and 8 columns when they fit.
	bad=$(tail -n +3 "$PROC_ALLOCINFO" | awk 'length($1) <= 12 && substr($0, 1, 12) !~ / *-?[0-9]+$/ { print; exit }')
	[ -z "$bad" ] || { echo "misaligned: $bad"; return 1; }
}

test_allocinfo_has_core_tags() {
	grep -q ' mm/slub.c:[0-9]* func:alloc_slab_page $' "$PROC_ALLOCINFO"
	# Boot allocates pages for page_ext and the slabs: they are not zero.
	awk '$3 ~ /^mm\/slub.c:/ && $4 == "func:alloc_slab_page" && $1 > 0 { found = 1 }
		END { exit !found }' "$PROC_ALLOCINFO"
}

# Reads /proc/allocinfo whole and in chunks of several sizes, each chunk
# size straddling lines differently, into /tmp.
read_chunked() {
	cat "$PROC_ALLOCINFO" >/tmp/full
	dd if="$PROC_ALLOCINFO" of=/tmp/bs64 bs=64 2>/dev/null
	dd if="$PROC_ALLOCINFO" of=/tmp/bs512 bs=512 2>/dev/null
	dd if="$PROC_ALLOCINFO" of=/tmp/bs1000 bs=1000 2>/dev/null
}

# The tag info (file:line [module] func:name) of each line of file $1.
tag_info() {
	awk 'NR > 2 { $1 = $2 = ""; print }' "$1"
}

# procfs_guarded CHECK: runs the function CHECK (which reads
# /proc/allocinfo more than once and compares the reads) between two reads of
# the content id (ALLOCINFO_IOC_CONTENT_ID, tests/guest/tools/allocinfo_ioctl.c),
# which changes whenever tags are made or dropped (a module, a Rust dynamic
# tag). Its verdict stands when the id held still; when it moved, the tags
# rightly differed, and CHECK runs again (5 tries).
procfs_guarded() {
	for _pg_try in 1 2 3 4 5; do
		_pg_id0=$(allocinfo_ioctl content-id) || fail "content-id failed" || return 1
		_pg_rc=0
		"$1" >/tmp/procfs-check.out 2>&1 || _pg_rc=$?
		_pg_id1=$(allocinfo_ioctl content-id) || fail "content-id failed" || return 1
		if [ "$_pg_id0" = "$_pg_id1" ]; then
			cat /tmp/procfs-check.out
			return "$_pg_rc"
		fi
		echo "try $_pg_try: the content id moved ($_pg_id0 -> $_pg_id1), again"
	done
	fail "the content id moved during each of 5 tries"
}

chunked_reads_list_the_same_tags() {
	read_chunked
	tag_info /tmp/full >/tmp/tags-full
	[ "$(wc -l </tmp/tags-full)" -gt 1000 ] || fail "$(wc -l </tmp/tags-full) tags" || return 1
	for bs in 64 512 1000; do
		tag_info /tmp/bs$bs >/tmp/bs$bs.tags
		cmp /tmp/tags-full /tmp/bs$bs.tags || fail "bs=$bs lists other tags" || return 1
		[ "$(head -n 2 /tmp/bs$bs)" = "$(head -n 2 /tmp/full)" ] || fail "bs=$bs header" || return 1
	done
}

test_allocinfo_chunked_reads_list_the_same_tags() {
	# With profiling on the counters move between reads, but each chunked
	# read must still list every tag once, in the same order, with no line
	# torn or repeated where a read resumed.
	procfs_guarded chunked_reads_list_the_same_tags
}

chunked_reads_equal_full_read() {
	read_chunked
	dd if="$PROC_ALLOCINFO" of=/tmp/bs1 bs=1 count=20000 2>/dev/null
	cmp /tmp/full /tmp/bs64 || return 1
	cmp /tmp/full /tmp/bs512 || return 1
	cmp /tmp/full /tmp/bs1000 || return 1
	head -c 20000 /tmp/full | cmp - /tmp/bs1
}

test_rw_allocinfo_chunked_reads_equal_full_read() {
	# With profiling off, to the byte.
	restore_sysctl_on_exit
	set_sysctl 0
	procfs_guarded chunked_reads_equal_full_read
	set_sysctl 1
}

# The way people read it: GNU sort -g and -h and numfmt, from coreutils in
# /usr/bin (named in full: busybox's shell runs its own applets first).
test_allocinfo_sorts_by_size() {
	# A copy: its numbers hold still while sort reads it.
	cp "$PROC_ALLOCINFO" /tmp/frozen
	max=$(tail -n +3 /tmp/frozen | awk '{ print $1 }' | /usr/bin/sort -n | tail -n 1)
	[ "$(/usr/bin/sort -g /tmp/frozen | tail -n 1 | awk '{ print $1 }')" = "$max" ]
	[ "$(/usr/bin/sort -h /tmp/frozen | tail -n 1 | awk '{ print $1 }')" = "$max" ]
	# As Documentation/mm/allocation-profiling.rst shows it: the header lines
	# sort first, tail leaves them out, numfmt turns sizes into IEC units.
	/usr/bin/sort -g /tmp/frozen | tail -n 20 | /usr/bin/numfmt --to=iec >/tmp/iec
	[ "$(wc -l </tmp/iec)" = 20 ]
	[ "$(grep -Ec '^ *[0-9.]+[KMG]? +[0-9]+ [^ ]+:[0-9]+ ' /tmp/iec)" = 20 ]
	tail -n 1 /tmp/iec | grep -Eq '^ *[0-9.]+[KMG] '
}

test_allocinfo_mode_0400() {
	[ "$(stat -c %a "$PROC_ALLOCINFO")" = 400 ]
}

# Prints "BYTES CALLS" of the probe site's line (tests/guest/lib.sh).
probe_counts() {
	awk '$4 == "[alloctag_test]" && $5 == "func:hold_object" { b = $1; c = $2; n++ }
		END { if (n != 1) exit 1; print b, c }' "$PROC_ALLOCINFO"
}

# Loads the probe's module and sets b0 and c0 to its line's bytes and calls.
probe_baseline() {
	[ -e "$PROBE_HOLD" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	insmod "$PROBE_MODULE" || fail "insmod $PROBE_MODULE"
	read -r b0 c0 <<-EOT
		$(probe_counts)
	EOT
	[ -n "$c0" ] || fail "no hold_object line"
}

# Allocates PROBE_N objects on CPU 1 and checks that the line counts them;
# sets b1 and c1.
probe_on_cpu1() {
	taskset -c 1 capwriter "$PROBE_HOLD" "$PROBE_N" >/dev/null || fail "allocating on CPU 1"
	read -r b1 c1 <<-EOT
		$(probe_counts)
	EOT
	[ "$c1" = $((c0 + PROBE_N)) ] && [ "$b1" -gt "$b0" ] ||
		fail "after $PROBE_N allocations on CPU 1: $b1 $c1, from $b0 $c0"
}

# Frees the objects on CPU 0 and checks that the line is back at b0 c0.
probe_free_on_cpu0() {
	taskset -c 0 capwriter "$PROBE_HOLD" 0 >/dev/null || fail "freeing on CPU 0"
	[ "$(probe_counts)" = "$b0 $c0" ] || fail "$1: $(probe_counts), not $b0 $c0"
}

# A CPU's counts stay in the sums after it goes offline, and a free on
# another CPU takes them back: a read sums every CPU that has run
# (src/percpu.rs), not those online.
test_counts_of_an_offlined_cpu_stay() {
	cpu1=/sys/devices/system/cpu/cpu1/online
	[ -e "$cpu1" ] || fail "no $cpu1: the boot has one CPU"
	trap 'echo 1 >'"$cpu1"' 2>/dev/null; rmmod alloctag_test 2>/dev/null' EXIT
	probe_baseline
	probe_on_cpu1
	echo 0 >"$cpu1" || fail "CPU 1 did not go offline"
	[ "$(cat "$cpu1")" = 0 ] || fail "CPU 1 is still online"
	[ "$(probe_counts)" = "$b1 $c1" ] || fail "CPU 1 offline: $(probe_counts), not $b1 $c1"
	probe_free_on_cpu0 "freed on CPU 0 with CPU 1 offline"
	echo 1 >"$cpu1" || fail "CPU 1 did not come back"
	[ "$(probe_counts)" = "$b0 $c0" ] || fail "CPU 1 back: $(probe_counts), not $b0 $c0"
}

# Booted with maxcpus=1 (tests/guest/boots.txt, late-cpu): CPU 1 is possible
# but has never run, so reads leave it out (src/percpu.rs). It comes up here
# for the first time, and what it allocates counts from its first object.
test_boot_late_cpu_counts_from_its_first_allocation() {
	cpu1=/sys/devices/system/cpu/cpu1/online
	[ "$(cat /sys/devices/system/cpu/possible)" = 0-1 ] ||
		fail "possible CPUs: $(cat /sys/devices/system/cpu/possible), not 0-1"
	[ "$(cat "$cpu1")" = 0 ] || fail "CPU 1 came up at boot: booted without maxcpus=1?"
	trap 'rmmod alloctag_test 2>/dev/null' EXIT
	probe_baseline
	echo 1 >"$cpu1" || fail "CPU 1 did not come up"
	probe_on_cpu1
	probe_free_on_cpu0 "freed on CPU 0"
}
