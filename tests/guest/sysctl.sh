# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of the vm.mem_profiling sysctl. Sourced by run.sh, which
# says what test_rw_ (nodebug kernel: writable) and test_ro_ (test kernel:
# MEM_ALLOC_PROFILING_DEBUG, read-only) mean.
#
# What they expect is what 6.12's C core does: its handler is
# proc_do_static_key() (kernel/sysctl.c), which wants CAP_SYS_ADMIN of a
# writer, then parses with proc_dointvec_minmax() between 0 and 1, under the
# default kernel.sysctl_writes_strict=1:
#  - leading white space (isspace: space, \t, \n, \v, \f, \r) is skipped;
#  - the number is parsed as by strtoul() with base 0 (01 is octal, 0x1 hex),
#    an optional leading -, no +; 21 characters or more are refused;
#  - it may be followed only by space, \t or \n; after it, white space is
#    consumed and anything else is left unwritten: write() returns a short
#    count and the value is set;
#  - a value outside 0..1 or an int, or no number at all, is EINVAL and
#    changes nothing, and the file position stays where it was;
#  - a write at a non-zero file position is ignored and reports success;
#  - a write of 0 bytes returns 0.
# rawwrite (tests/guest/tools/rawwrite.c) makes one write() per argument
# and prints what each returned; its arguments take printf's escapes.

# try START WANT VALUE [-s OFFSET] CHUNK...: from the sysctl at START,
# writes each CHUNK with one write() (after seeking to OFFSET), and fails
# unless the writes return WANT (counts or errno names, space-separated) and
# the sysctl then reads VALUE.
try() {
	start=$1 want=$2 value=$3
	shift 3
	seek=
	if [ "$1" = -s ]; then
		seek="-s $2"
		shift 2
	fi
	set_sysctl "$start" || return 1
	# shellcheck disable=SC2086 # $seek is two words or none
	got=$(rawwrite $seek "$SYSCTL" "$@" | tr '\n' ' ')
	got=${got% }
	[ "$got" = "$want" ] || fail "from $start, writing $seek '$*': write returned '$got', expected '$want'"
	v=$(cat "$SYSCTL")
	[ "$v" = "$value" ] || fail "from $start, writing $seek '$*': reads $v, expected $value"
}

# Twenty characters: 0 then 1 in octal, the longest number proc_get_long()
# takes.
LONGEST_ONE=00000000000000000001

test_sysctl_reads_one_and_newline() {
	# ENABLED_BY_DEFAULT on both kernels (DEBUG selects it).
	printf '1\n' | cmp - "$SYSCTL" || fail "reads '$(cat "$SYSCTL")'"
}

test_sysctl_short_reads() {
	# proc_dointvec() fills the read it is given, adds the newline only if
	# there is room, and gives nothing at a non-zero position: a reader
	# reading byte by byte gets "1".
	[ "$(dd if="$SYSCTL" bs=1 2>/dev/null)" = 1 ] || fail "bs=1 read differs"
	[ "$(dd if="$SYSCTL" bs=1 2>/dev/null | wc -c)" = 1 ] || fail "bs=1 read has a newline"
	[ "$(dd if="$SYSCTL" bs=1 skip=1 2>/dev/null | wc -c)" = 0 ] || fail "read at position 1 gave bytes"
}

test_ro_sysctl_read_only_under_debug() {
	# MEM_ALLOC_PROFILING_DEBUG registers it 0444, and a sysctl without a
	# write bit cannot be opened for writing by anyone, capabilities or not
	# (proc_sys_permission()): root with all of them gets EACCES at open().
	[ "$(stat -c %a "$SYSCTL")" = 444 ] || fail "mode $(stat -c %a "$SYSCTL")"
	for v in 0 1 '0\n' 2 ''; do
		got=$(rawwrite "$SYSCTL" "$v") || true
		[ "$got" = 'open: EACCES' ] || fail "writing '$v': $got"
		expect_sysctl 1
	done
	if echo 0 >"$SYSCTL" 2>/dev/null; then
		fail "echo 0 >$SYSCTL succeeded"
	fi
	expect_sysctl 1
	counters_moving || fail "profiling stopped"
}

test_rw_sysctl_mode_0644() {
	[ "$(stat -c %a "$SYSCTL")" = 644 ] || fail "mode $(stat -c %a "$SYSCTL")"
}

test_rw_sysctl_toggle_stops_and_restarts_accounting() {
	restore_sysctl_on_exit
	set_sysctl 0
	counters_frozen || fail "counters moved while disabled"
	set_sysctl 1
	counters_moving || fail "counters did not move when enabled"
}

test_rw_sysctl_accepts_what_proc_dointvec_minmax_accepts() {
	restore_sysctl_on_exit
	# INPUT COUNT VALUE: written from the other value, in one write() that
	# takes all COUNT bytes, INPUT sets VALUE.
	while read -r input count value; do
		try $((1 - value)) "$count" "$value" "$input"
	done <<-EOF
		0 1 0
		1 1 1
		0\n 2 0
		1\n 2 1
		\x201 2 1
		\x20\x200\n 4 0
		\t1\n 3 1
		\n1 2 1
		\r\v\f0 4 0
		01 2 1
		00 2 0
		001\n 4 1
		-0 2 0
		0x1 3 1
		0X1 3 1
		0x0 3 0
		1\x20 2 1
		1\t 2 1
		1\n\n 3 1
		0\x20\t\n 4 0
		$LONGEST_ONE 20 1
	EOF
}

test_rw_sysctl_refuses_with_einval() {
	restore_sysctl_on_exit
	long=$(head -c 8192 /dev/zero | tr '\0' 1)
	for input in 2 '2\n' -1 '-1\n' +1 +0 abc on off y n true \
		1x 1.0 '1,' '1\r' '1\r\n' '1\v' '1\0' '\0' '\001\377' \
		'\n' '\x20' '\x20\n\t' - '-\n' 08 09 010 0x 0x2 0xg \
		2147483648 4294967296 4294967297 18446744073709551617 \
		99999999999999999999 -2147483648 -4294967295 "0$LONGEST_ONE" "$long"; do
		for start in 0 1; do
			try "$start" EINVAL "$start" "$input"
		done
	done
}

test_rw_sysctl_takes_the_first_number_of_several() {
	restore_sysctl_on_exit
	# After the number and its white space, the rest is not consumed:
	# write() returns the count up to there, and the value is set.
	try 0 2 1 '1\x201'
	try 1 2 0 '0\x20junk'
	try 0 2 1 '1\n2'
	try 1 3 0 '0\t\t1\n'
	# The rest, written next at the position after them, is ignored.
	try 0 '2 1' 1 '1\x201' 0
}

test_rw_sysctl_empty_write_changes_nothing() {
	restore_sysctl_on_exit
	try 0 0 0 ''
	try 1 0 1 ''
}

test_rw_sysctl_writes_at_nonzero_position_ignored() {
	restore_sysctl_on_exit
	# sysctl_writes_strict=1: the whole write is reported written, and
	# neither parsed nor checked.
	try 1 1 1 -s 1 0
	try 0 1 0 -s 1 1
	try 1 1 1 -s 1 2
	try 1 3 1 -s 4096 abc
	# Two writes on one open file: the second is at the first one's end.
	try 1 '1 1' 0 0 1
	try 0 '1 1' 1 1 '\n'
	try 1 '2 2' 0 '0\n' '1\n'
	# A refused write leaves the position at 0: the next one counts.
	try 1 'EINVAL 1' 0 abc 0
}

test_rw_sysctl_odd_forms_flip_the_key() {
	restore_sysctl_on_exit
	# The value read back is the static key itself; the counters show that
	# the allocator hooks follow it.
	try 1 4 0 '\x200\x20\n'
	counters_frozen || fail "counters moved after ' 0 '"
	try 0 EINVAL 0 2
	counters_frozen || fail "counters moved after a refused '2'"
	try 0 3 1 0x1
	counters_moving || fail "counters frozen after '0x1'"
}

# Prints "LINES BYTES CALLS" of /proc/allocinfo's lines of module $1, or with
# $2 of its function $2 only.
module_figures() {
	awk -v m="[$1]" -v f="func:$2" '$4 == m && ($5 == f || f == "func:") { n++; b += $1; c += $2 }
		END { print n + 0, b + 0, c + 0 }' /proc/allocinfo
}

# Profiling off stops every kind of allocation the Rust core counts, not
# only the probe's kmalloc(): with the sysctl 0, alloctag_rust_sample's load
# (a box, a vmalloc()ed and a kvmalloc()ed box, a vector, a page, at Rust
# call sites) and the test module's held objects (kmalloc()), pages
# (alloc_pages_exact()) and area (vmalloc()) leave every line of theirs at
# zero; with it 1 again the same allocations count. (The KUnit case
# disabled_profiling_freezes_counters checks it on the C core, in the build
# matrix's ccore; the test kernel's debug checks forbid turning profiling
# off, and the nodebug kernel has no KUnit.)
test_rw_profiling_off_freezes_slab_pages_vmalloc_and_rust_sites() {
	restore_sysctl_on_exit
	hold_dir=/sys/kernel/debug/alloctag_test
	[ -d /sys/kernel/debug/alloctag ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	for state in 0 1; do
		set_sysctl $state
		insmod "$RUST_SAMPLE" || fail "insmod $RUST_SAMPLE failed"
		set -- $(module_figures alloctag_rust_sample)
		rmmod alloctag_rust_sample || fail "rmmod alloctag_rust_sample failed"
		[ "$1" -ge 5 ] || fail "profiling $state: $1 lines of [alloctag_rust_sample]"
		rust="$2 $3"
		insmod /lib/modules/alloctag_test.ko || fail "insmod alloctag_test failed"
		capwriter $hold_dir/hold 3 >/dev/null && capwriter $hold_dir/hold_pages 8192 >/dev/null &&
			capwriter $hold_dir/hold_area 5000 >/dev/null || fail "profiling $state: holding failed"
		held=
		for f in hold_object hold_exact hold_area; do
			set -- $(module_figures alloctag_test $f)
			held="$held $f=$2/$3"
		done
		capwriter $hold_dir/hold 0 >/dev/null && capwriter $hold_dir/hold_pages 0 >/dev/null &&
			capwriter $hold_dir/hold_area 0 >/dev/null || fail "profiling $state: freeing failed"
		rmmod alloctag_test || fail "rmmod alloctag_test failed"
		if [ $state = 0 ]; then
			[ "$rust" = "0 0" ] || fail "profiling off: [alloctag_rust_sample]'s lines count $rust (bytes calls)"
			[ "$held" = " hold_object=0/0 hold_exact=0/0 hold_area=0/0" ] ||
				fail "profiling off: the test module's lines count$held (bytes/calls)"
		else
			set -- $rust
			[ "$1" -gt 0 ] && [ "$2" -ge 5 ] || fail "profiling on: [alloctag_rust_sample]'s lines count $rust"
			echo "$held" | grep -Eq "^ hold_object=[1-9][0-9]*/3 hold_exact=8192/[1-9][0-9]* hold_area=[1-9][0-9]*/[1-9][0-9]*$" ||
				fail "profiling on: the test module's lines count$held (bytes/calls)"
		fi
	done
}
