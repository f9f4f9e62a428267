# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest checks of the sysctl.vm.mem_profiling= boot parameter, each run in
# a boot of the nodebug kernel of its own with that parameter
# (tests/guest/boots.txt selects test_boot_param_VALUE_*).
#
# What they expect is what 6.12's C core leaves (lib/alloc_tag.c,
# setup_early_mem_profiling()), on a kernel with ENABLED_BY_DEFAULT:
#  - a value starting with "never": off, and off for good (sysctl 0444);
#  - else what kstrtobool() makes of its first one or two characters
#    (1 y Y t T "on": on; 0 n N f F "off": off), profiling can be switched
#    later (0644);
#  - anything else is refused: the kernel logs "Malformed early option" and
#    the default (on, 0644) holds.
# At the end of boot the kernel's generic "sysctl." handler then writes the
# same value to /proc/sys/vm/mem_profiling (fs/proc/proc_sysctl.c,
# process_sysctl_arg()): for anything but 0 and 1 that write is refused
# (EINVAL, or EACCES on the 0444 file after "never") and logged, which
# changes nothing.

# boot_state VALUE MODE: the sysctl reads VALUE with mode MODE, and the
# counters move exactly when VALUE is 1.
boot_state() {
	expect_sysctl "$1"
	m=$(stat -c %a "$SYSCTL")
	[ "$m" = "$2" ] || fail "mode $m, expected $2"
	if [ "$1" = 1 ]; then
		counters_moving || fail "counters frozen with profiling on"
	else
		counters_frozen || fail "counters move with profiling off"
	fi
}

# booted_with VALUE: fails unless this boot had sysctl.vm.mem_profiling=VALUE
# (then the checks below describe that value, not the default).
booted_with() {
	# shellcheck disable=SC2013 # the command line's words
	for a in $(cat /proc/cmdline); do
		[ "$a" != "sysctl.vm.mem_profiling=$1" ] || return 0
	done
	fail "not booted with sysctl.vm.mem_profiling=$1: $(cat /proc/cmdline)"
}

# early_param accepted|refused: whether the kernel logged the parameter as
# malformed (init/main.c, do_early_param()).
early_param() {
	if dmesg | grep -q "Malformed early option 'sysctl.vm.mem_profiling'"; then
		[ "$1" = refused ] || fail "early parameter refused: $(dmesg | grep 'Malformed early')"
	else
		[ "$1" = accepted ] || fail "early parameter not refused"
	fi
}

# late_write VALUE ok|invalid|read-only: what the end-of-boot write of VALUE
# to the sysctl logged.
late_write() {
	msg=$(dmesg | grep "Failed to set sysctl parameter 'vm.mem_profiling=" || true)
	case "$2" in
	ok)
		[ -z "$msg" ] || fail "logged: $msg"
		return
		;;
	invalid) want="Failed to set sysctl parameter 'vm.mem_profiling=$1': invalid value" ;;
	read-only) want="Failed to set sysctl parameter 'vm.mem_profiling=$1': permission denied (read-only?)" ;;
	esac
	case "$msg" in
	*"$want") ;;
	*) fail "logged '$msg', expected '$want'" ;;
	esac
}

# Profiling, off since boot, can be turned on, and then counts.
can_turn_on() {
	set_sysctl 1
	counters_moving || fail "counters frozen after turning profiling on"
}

# Profiling can be turned off and on again.
can_turn_off() {
	set_sysctl 0
	counters_frozen || fail "counters move after turning profiling off"
	can_turn_on
}

# page_ext RESERVED|NONE: whether page_ext was set up at boot, which with
# this kernel's configuration only profiling needs (mm/page_ext.c logs
# "allocated N bytes of page_ext" when a user needs it, and when profiling
# makes it later: the log up to /init's first line is the boot's).
page_ext() {
	msg=$(dmesg | sed '/Run \/init as init process/q' | grep -E 'allocated [0-9]+ bytes of page_ext' || true)
	case "$1" in
	reserved) [ -n "$msg" ] || fail "no page_ext reserved: $(dmesg | grep -i page_ext)" ;;
	none) [ -z "$msg" ] || fail "page_ext reserved: $msg" ;;
	esac
}

# alloctag_test's alloc_pages_exact() site, and what it holds (hold_pages).
HOLD_PAGES=/sys/kernel/debug/alloctag_test/hold_pages
exact_pages() {
	awk '$4 == "[alloctag_test]" && $5 == "func:hold_exact" { print $1, $2 }' "$PROC_ALLOCINFO"
}

# alloctag_test's per-CPU areas of 32 KiB (hold_percpu), and what they hold.
HOLD_PERCPU=/sys/kernel/debug/alloctag_test/hold_percpu
percpu_held() {
	awk '$4 == "[alloctag_test]" && $5 == "func:hold_percpu" { print $1, $2 }' "$PROC_ALLOCINFO"
}

# Per-CPU areas held while off (64 of 32 KiB, 2 MiB on each CPU) fill the
# first chunk and make chunks that have no tag vector while off (patch
# 0020). The switch-on makes theirs: areas allocated after it in those
# chunks count exactly, and freeing those allocated before takes nothing.
percpu_before_switch_on() {
	capwriter "$HOLD_PERCPU" 64 >/dev/null || fail "holding 64 per-CPU areas failed"
	[ "$(percpu_held)" = "0 0" ] || fail "hold_percpu reads '$(percpu_held)' while off"
}
percpu_after_switch_on() {
	dmesg | grep -Eq 'alloctag: tag vectors made for [1-9][0-9]* per-CPU chunks made while off' ||
		fail "no tag vectors made for the chunks made while off: $(dmesg | grep 'tag vectors')"
	capwriter "$HOLD_PERCPU" 68 >/dev/null || fail "holding 4 more per-CPU areas failed"
	got=$(percpu_held)
	bytes=${got% *}
	cpus=$(grep -c '^processor' /proc/cpuinfo)
	# Each counts its bytes on every possible CPU (and memcg's pointers).
	[ "${got#* }" = 4 ] && [ $((bytes % 4)) = 0 ] && [ $((bytes / 4)) -ge $((32768 * cpus)) ] ||
		fail "hold_percpu reads '$got' after 4 areas held, on $cpus CPUs"
	capwriter "$HOLD_PERCPU" 0 >/dev/null || fail "freeing the per-CPU areas failed"
	[ "$(percpu_held)" = "0 0" ] || fail "hold_percpu reads '$(percpu_held)' after the frees"
}

# first_switch_on WHERE: the first switch-on gives every tag its counters (src/alloc_tag/counters.rs):
# vmlinux's, which have no static ones, and those of modules loaded while
# off. All or none: with the allocations of that file failed (per-call-site
# fault injection), writing 1 fails with ENOMEM, profiling stays off and
# nothing counts. The next write makes them while readers of the text and
# the ioctl run and a module of 5,000 sites loads and unloads (coming,
# listed or going as the counters are made), and a module loaded before it
# counts exactly. Page tags go to WHERE (page_flags or page_ext) at it, and
# pages allocated while off and freed after count nothing.
first_switch_on() {
	status=/sys/kernel/debug/alloctag/status
	fail_ctl=/sys/kernel/debug/alloctag/fail
	[ -e "$fail_ctl" ] || mount -t debugfs none /sys/kernel/debug
	grep -qx 'counters: none' "$status" || fail "booted 0, $status says $(grep counters: "$status")"
	insmod "$PROBE_MODULE" || fail "insmod $PROBE_MODULE failed" || return 1
	# No chunk of dynamic tags either: the first switch-on makes it. Nor a
	# leaf of the index's table for the module's tags (page flags), which
	# take their indices all the same.
	dynamic_made 0
	grep -qx 'index_leaves: 0' "$status" || fail "booted 0, $status says $(grep index_leaves: "$status")"
	percpu_before_switch_on
	# The core's own allocation of counters, once.
	switch_on_fails 'alloc_tag/counters\.rs:[0-9]+$' times=1 "the counters' allocation"
	# The dynamic tags' first chunk: the write fails whole too.
	switch_on_fails 'alloc_tag/dynamic/chunk\.rs:[0-9]+$' '' "the dynamic tags' first chunk"
	dynamic_made 0
	# The per-CPU allocator's allocations (the chunks' tag vectors, and the
	# counters' chunks if they need one).
	switch_on_fails '^mm/percpu\.c:[0-9]+$' '' "the per-CPU allocator's allocations"
	! dmesg | grep -q 'tag vectors made' || fail "tag vectors made by a failed switch-on"
	# No page_ext at boot: page tags go in page flags at the switch-on where
	# they fit, else (or with 0,page_ext) the switch-on makes page_ext.
	grep -qx 'page_ext: none' "$status" || fail "booted 0, $status says $(grep page_ext: "$status")"
	page_ext none
	grep -qx "page_tags: $1" "$status" || fail "booted $(booted_value), $status says $(grep page_tags: "$status")"
	[ "$(cat /proc/sys/vm/mem_profiling_compressed)" = 0 ] ||
		fail "booted 0, page tags are in page flags before the switch-on"
	# With page_ext's allocations failed, the write fails whole: the counters
	# made before it are freed.
	[ "$1" = page_ext ] && page_ext_fails
	[ "$1" = page_flags ] && index_leaves_fail
	# Objects allocated while off stay across the switch-on: slab objects,
	# and order-3 pages, which carry no tag.
	capwriter "$PROBE_HOLD" "$PROBE_N" >/dev/null || fail "holding $PROBE_N objects failed"
	capwriter "$HOLD_PAGES" 32768 >/dev/null || fail "holding 32768 bytes of pages failed"
	rm -f /tmp/switch-stop /tmp/switch-errs
	concurrent_switch_on
	# Freed once on, they were never charged: nothing is taken back, and the
	# site reads zero, not below.
	capwriter "$PROBE_HOLD" 0 >/dev/null || fail "freeing the objects held failed"
	got=$(awk '$4 == "[alloctag_test]" && $5 == "func:hold_object" { print $1, $2 }' "$PROC_ALLOCINFO")
	[ "$got" = "0 0" ] || fail "hold_object reads '$got' after freeing what it allocated while off, expected '0 0'"
	grep -q '^counters: made' "$status" || fail "switched on, $status says $(grep counters: "$status")"
	capwriter "$HOLD_PAGES" 0 >/dev/null || fail "freeing the pages held failed"
	got=$(exact_pages)
	[ "$got" = "0 0" ] || fail "hold_exact reads '$got' after freeing what it allocated while off, expected '0 0'"
	n=$(dmesg | grep -Ec 'allocated [0-9]+ bytes of page_ext' || true)
	if [ "$1" = page_ext ]; then
		# page_ext made at the switch-on, once.
		grep -qx 'page_ext: made at the first switch-on' "$status" ||
			fail "switched on, $status says $(grep page_ext: "$status")"
		[ "$n" = 1 ] || fail "$n log lines of page_ext made, expected 1"
		[ "$(cat /proc/sys/vm/mem_profiling_compressed)" = 0 ] || fail "page tags in page flags"
	else
		# Page flags from the switch-on, and no page_ext, ever.
		grep -qx 'page_ext: none' "$status" || fail "switched on, $status says $(grep page_ext: "$status")"
		[ "$n" = 0 ] || fail "page_ext made: $(dmesg | grep 'bytes of page_ext')"
		[ "$(cat /proc/sys/vm/mem_profiling_compressed)" = 1 ] || fail "page tags not in page flags"
	fi
	# With page flags, the switch-on made the table's leaves for the tags
	# indexed while off: the module's pages below count by them.
	if [ "$1" = page_flags ]; then
		grep -Eqx 'index_leaves: [1-9][0-9]*' "$status" || fail "switched on, $status says $(grep index_leaves: "$status")"
	fi
	# Pages of order 0 and 3 count exactly, and their free takes it back.
	for bytes in 4096 32768; do
		capwriter "$HOLD_PAGES" "$bytes" >/dev/null || fail "holding $bytes bytes of pages failed"
		got=$(exact_pages)
		[ "${got% *}" = "$bytes" ] || fail "hold_exact holds $bytes bytes and reads '$got'"
		capwriter "$HOLD_PAGES" 0 >/dev/null || fail "freeing $bytes bytes of pages failed"
		got=$(exact_pages)
		[ "$got" = "0 0" ] || fail "hold_exact reads '$got' after freeing $bytes bytes, expected '0 0'"
	done
	counters_moving || fail "a module loaded while off does not count once on"
	percpu_after_switch_on
	# The dynamic tags' first chunk, made by the switch-on.
	dynamic_made 64
	# Rust allocations count once on: the sample module's five sites hold memory.
	insmod "$RUST_SAMPLE" || fail "insmod $RUST_SAMPLE failed"
	n=$(awk '$4 == "[alloctag_rust_sample]" && $1 > 0' "$PROC_ALLOCINFO" | wc -l)
	rmmod alloctag_rust_sample || fail "rmmod alloctag_rust_sample failed"
	[ "$n" = 5 ] || fail "$n of the Rust sample's sites hold memory, expected 5"
	# (KCSAN's reports are judged outside the guest, by the boot's list of
	# 6.12's own races: scripts/build-matrix.sh, first_switch_on_boots.)
	dmesg | grep -E 'WARNING|BUG' | grep -v 'BUG: KCSAN: ' && fail "the log warned"
	set_sysctl 0
	rmmod alloctag_test || fail "rmmod alloctag_test failed"
}

# dynamic_made N: the kernel's pool of dynamic tags has made room for N tags.
dynamic_made() {
	got=$(sed -n 's/^made //p' /sys/kernel/debug/alloctag/dynamic_tags)
	[ "$got" = "$1" ] || fail "the dynamic tags' chunks made hold '$got' tags, expected $1"
}

# The value of sysctl.vm.mem_profiling= this boot had.
booted_value() {
	sed -n 's/.*sysctl\.vm\.mem_profiling=\([^ ]*\).*/\1/p' /proc/cmdline
}

# switch_on_fails PATTERN RULE WHAT: with the allocations of the file whose
# sites match PATTERN (an awk regex on /proc/allocinfo's file:line) failed
# by a fault rule (RULE: its options), writing 1 fails with ENOMEM, profiling
# stays off, no tag has counters and nothing counts.
switch_on_fails() {
	file=$(PAT=$1 awk '$3 ~ ENVIRON["PAT"] { sub(/:[0-9]+$/, "", $3); print $3; exit }' "$PROC_ALLOCINFO")
	[ -n "$file" ] || fail "no site of $1 in $PROC_ALLOCINFO" || return 1
	switch_on_fails_at "$file" "$2" "$3"
}

# switch_on_fails_at WHERE RULE WHAT: as switch_on_fails, with a rule on
# WHERE (a file, or one site's file:line).
switch_on_fails_at() {
	echo "add $1 $2" >"$fail_ctl" || fail "add $1 $2 refused" || return 1
	lines=$(dmesg | wc -l)
	got=$(rawwrite "$SYSCTL" 1) || true
	injected=$(cat "$fail_ctl")
	echo clear >"$fail_ctl"
	[ "$got" = ENOMEM ] || fail "writing 1 with $3 failed: '$got', expected ENOMEM ($injected)"
	# The failure is the writer's ENOMEM, not the per-CPU allocator's warning
	# and stack dump: the core's per-CPU allocations are __GFP_NOWARN. (That
	# shows only when the allocation needs a new chunk, whose making fails.)
	said=$(dmesg | tail -n +"$((lines + 1))" | grep -m 1 'percpu: allocation failed') || true
	[ -z "$said" ] || fail "a switch-on failed by $3 logged: $said"
	expect_sysctl 0
	grep -qx 'counters: none' "$status" || fail "after $3 failed, $status says $(grep counters: "$status")"
	counters_frozen || fail "counters move after a failed switch-on"
}

# The index's leaves failed at the switch-on (page flags): ENOMEM, none made.
# The module loaded while off took indices without a leaf, so the switch-on
# is where its leaf is made.
index_leaves_fail() {
	site=$(awk '$3 ~ /codetag\/table\.rs:[0-9]+$/ && /new_leaf/ { print $3; exit }' "$PROC_ALLOCINFO")
	[ -n "$site" ] || fail "no site of new_leaf in $PROC_ALLOCINFO" || return 1
	switch_on_fails_at "$site" '' "the index's leaves"
	grep -qx 'index_leaves: 0' "$status" || fail "after the leaves failed, $status says $(grep index_leaves: "$status")"
}

# page_ext's allocation failed at the switch-on: ENOMEM, nothing made.
page_ext_fails() {
	switch_on_fails '^mm/page_ext\.c:[0-9]+$' '' "page_ext's allocation"
	grep -qx 'page_ext: none' "$status" || fail "after page_ext failed, $status says $(grep page_ext: "$status")"
	! dmesg | grep -Eq 'allocated [0-9]+ bytes of page_ext' || fail "page_ext made by a failed switch-on"
}

# Switches on while readers of the text and the ioctl run, and a module of
# 5,000 sites loads and unloads.
concurrent_switch_on() {
	(while [ ! -e /tmp/switch-stop ]; do
		cat "$PROC_ALLOCINFO" >/dev/null || echo "read failed" >>/tmp/switch-errs
	done) &
	(while [ ! -e /tmp/switch-stop ]; do
		allocinfo_ioctl dump >/dev/null || echo "ioctl dump failed" >>/tmp/switch-errs
	done) &
	(while [ ! -e /tmp/switch-stop ]; do
		insmod /lib/modules/alloctag_many_tags.ko site=4999 hold=1 || echo "insmod failed" >>/tmp/switch-errs
		rmmod alloctag_many_tags || echo "rmmod failed" >>/tmp/switch-errs
	done) &
	usleep 500000
	set_sysctl 1
	dmesg | grep -q 'alloctag: counters made for [0-9]* allocation tags' ||
		fail "no log line of the counters made"
	usleep 500000
	touch /tmp/switch-stop
	wait
	[ ! -s /tmp/switch-errs ] || fail "while switching on: $(sort /tmp/switch-errs | uniq -c)"
}

test_boot_param_0_first_switch_on_fails_whole_without_memory() {
	booted_with 0
	first_switch_on page_flags
}

# Booted 0,page_ext: page tags in page_ext, which the switch-on makes, all or
# nothing.
test_boot_param_0_page_ext_made_at_the_first_switch_on() {
	booted_with 0,page_ext
	first_switch_on page_ext
}

test_boot_param_0_off_and_can_turn_on() {
	booted_with 0
	early_param accepted
	late_write 0 ok
	boot_state 0 644
	# Off, not never, and without page_ext: page tags go in page flags (they
	# fit) at the first switch-on.
	page_ext none
	can_turn_on
}

test_boot_param_1_on() {
	booted_with 1
	early_param accepted
	late_write 1 ok
	boot_state 1 644
	# Booted on, the tags got counters at boot (src/alloc_tag/counters.rs),
	# in mm_core_init(): before the log's first line from user space, not
	# at the end of boot's write of the sysctl.
	[ -e /sys/kernel/debug/alloctag/status ] || mount -t debugfs none /sys/kernel/debug
	grep -q '^counters: made at ' /sys/kernel/debug/alloctag/status ||
		fail "booted 1: $(grep counters: /sys/kernel/debug/alloctag/status)"
	first=$(dmesg | grep -n 'alloctag: counters made for [0-9]* allocation tags' | cut -d: -f1)
	init=$(dmesg | grep -n 'Run /init as init process' | cut -d: -f1)
	[ -n "$first" ] && [ -n "$init" ] && [ "$first" -lt "$init" ] ||
		fail "counters not made at boot: line '$first' of the log, /init at line '$init'"
	# Page tags count from boot, in page flags by default where they fit (they
	# do in this kernel): no page_ext.
	page_ext none
	grep -qx 'page_ext: none' /sys/kernel/debug/alloctag/status ||
		fail "booted 1: $(grep page_ext: /sys/kernel/debug/alloctag/status)"
	grep -qx 'page_tags: page_flags' /sys/kernel/debug/alloctag/status ||
		fail "booted 1: $(grep page_tags: /sys/kernel/debug/alloctag/status)"
	[ "$(cat /proc/sys/vm/mem_profiling_compressed)" = 1 ] || fail "booted 1, page tags are not in page flags"
	dmesg | grep -Eq 'alloctag: page tags in page flags: [0-9]+ bits of [0-9]+ free' ||
		fail "booted 1, the log does not say page tags are in page flags"
	can_turn_off
}

# Booted 1,page_ext: page tags count from boot in page_ext, reserved then.
test_boot_param_1_page_ext_reserved_at_boot() {
	booted_with 1,page_ext
	boot_state 1 644
	[ -e /sys/kernel/debug/alloctag/status ] || mount -t debugfs none /sys/kernel/debug
	page_ext reserved
	grep -qx 'page_ext: reserved at boot' /sys/kernel/debug/alloctag/status ||
		fail "booted 1,page_ext: $(grep page_ext: /sys/kernel/debug/alloctag/status)"
	grep -qx 'page_tags: page_ext' /sys/kernel/debug/alloctag/status ||
		fail "booted 1,page_ext: $(grep page_tags: /sys/kernel/debug/alloctag/status)"
	grep -qx 'page_ext_requested: yes' /sys/kernel/debug/alloctag/status ||
		fail "booted 1,page_ext: $(grep page_ext_requested: /sys/kernel/debug/alloctag/status)"
	[ "$(cat /proc/sys/vm/mem_profiling_compressed)" = 0 ] || fail "booted 1,page_ext, page tags in page flags"
	can_turn_off
}

# Booted 0,page_ext with waste accounting's page slots (alloctag.waste_slots=on),
# which need page_ext at boot: page tags' room is reserved with them, as
# page_ext cannot grow later, and the boot says so; the switch-on makes none.
test_boot_param_0_shared_page_ext_reserved_with_another_user() {
	booted_with 0,page_ext
	[ -e /sys/kernel/debug/alloctag/status ] || mount -t debugfs none /sys/kernel/debug
	page_ext reserved
	dmesg | grep -q 'alloctag: page_ext is needed at boot by another user: 8 bytes a page are reserved for page tags too' ||
		fail "the boot does not say why page tags' page_ext is reserved"
	grep -qx 'page_ext: reserved at boot for another user' /sys/kernel/debug/alloctag/status ||
		fail "$(grep page_ext: /sys/kernel/debug/alloctag/status)"
	insmod "$PROBE_MODULE" || fail "insmod $PROBE_MODULE failed" || return 1
	set_sysctl 1
	n=$(dmesg | grep -Ec 'allocated [0-9]+ bytes of page_ext' || true)
	[ "$n" = 1 ] || fail "$n log lines of page_ext made, expected 1 (at boot)"
	capwriter "$HOLD_PAGES" 32768 >/dev/null || fail "holding 32768 bytes of pages failed"
	got=$(exact_pages)
	[ "${got% *}" = 32768 ] || fail "hold_exact holds 32768 bytes and reads '$got'"
	capwriter "$HOLD_PAGES" 0 >/dev/null || fail "freeing the pages failed"
	got=$(exact_pages)
	[ "$got" = "0 0" ] || fail "hold_exact reads '$got' after the free, expected '0 0'"
	set_sysctl 0
	rmmod alloctag_test || fail "rmmod alloctag_test failed"
}

test_boot_param_on_is_on() {
	booted_with on
	early_param accepted
	late_write on invalid
	boot_state 1 644
	can_turn_off
}

test_boot_param_off_is_off_and_can_turn_on() {
	booted_with off
	early_param accepted
	late_write off invalid
	boot_state 0 644
	can_turn_on
}

test_boot_param_yes_is_on() {
	booted_with yes
	early_param accepted
	late_write yes invalid
	boot_state 1 644
	can_turn_off
}

test_boot_param_n_is_off_and_can_turn_on() {
	booted_with n
	early_param accepted
	late_write n invalid
	boot_state 0 644
	can_turn_on
}

# never: off for good; nobody can open the sysctl for writing.
never_for_good() {
	booted_with "$1"
	early_param accepted
	late_write "$1" read-only
	boot_state 0 444
	# Off for good: page_ext reserves no room for tag references
	# (Documentation/alloctag.rst), where 0 reserves it (param-0's test).
	page_ext none
	got=$(rawwrite "$SYSCTL" 1) || true
	[ "$got" = 'open: EACCES' ] || fail "writing 1: $got"
	if echo 1 >"$SYSCTL" 2>/dev/null; then
		fail "could turn profiling on"
	fi
	boot_state 0 444
	# A module's tags get no counters (src/alloc_tag/counters.rs): it
	# loads, its sites are listed, each at zero, and it goes.
	insmod /lib/modules/alloctag_many_tags.ko site=4999 hold=1 || fail "insmod alloctag_many_tags failed" || return 1
	grep '\[alloctag_many_tags\]' "$PROC_ALLOCINFO" >/tmp/never-tags || true
	rmmod alloctag_many_tags || fail "rmmod failed"
	[ "$(wc -l </tmp/never-tags)" = 5000 ] || fail "$(wc -l </tmp/never-tags) sites listed, not 5,000"
	awk '$1 != 0 || $2 != 0' /tmp/never-tags | grep . && fail "a site counts"
	[ "$(grep -c '\[alloctag_many_tags\]' "$PROC_ALLOCINFO")" = 0 ] || fail "lines left after unload"
	[ -e /sys/kernel/debug/alloctag/status ] || mount -t debugfs none /sys/kernel/debug
	grep -qx 'counters: none' /sys/kernel/debug/alloctag/status ||
		fail "never: $(grep counters: /sys/kernel/debug/alloctag/status)"
	# A Rust module's call sites (alloc_hooks!) too: none has static
	# counters that its unload could free as if the core had made them.
	dmesg -c >/dev/null
	for _i in 1 2; do
		insmod /lib/modules/alloctag_rust_sample.ko || fail "insmod alloctag_rust_sample failed" || return 1
		rmmod alloctag_rust_sample || fail "rmmod alloctag_rust_sample failed"
	done
	dmesg | grep -E 'WARNING|BUG|percpu' && fail "the log warned"
	return 0
}

test_boot_param_never_is_off_for_good() {
	never_for_good never
}

test_boot_param_nevermore_is_never() {
	# Only the first five characters are compared.
	never_for_good nevermore
}

test_boot_param_junk_is_refused_and_default_holds() {
	booted_with junk
	early_param refused
	# The core's own line, with the reason (Documentation/alloctag.rst).
	want="alloctag: sysctl.vm.mem_profiling: invalid value, expected never or a boolean (0, 1, y, n, on, off); keeping 1"
	dmesg | grep -qF "$want" || fail "no '$want' in the log: $(dmesg | grep -i 'mem_profiling' | head -n 3)"
	late_write junk invalid
	boot_state 1 644
	can_turn_off
}
