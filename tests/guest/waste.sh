# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Waste accounting (/proc/allocwaste, /sys/kernel/debug/alloctag/waste) and
# `allocinfo waste`, on the test module's hold file: a write of N allocates
# N objects of 200 bytes (kmalloc-256) at hold_object(); and on its
# hold_area file: a write of N replaces the area held at hold_area() by a
# vmalloc() of N bytes (0: none); and on its hold_pages file: a write of N
# replaces the pages held at hold_exact() by alloc_pages_exact(N).

WASTE_CTL=/sys/kernel/debug/alloctag/waste
WASTE_HOLD=/sys/kernel/debug/alloctag_test/hold
WASTE_AREA=/sys/kernel/debug/alloctag_test/hold_area
WASTE_PAGES=/sys/kernel/debug/alloctag_test/hold_pages

waste_ready() {
	[ -e "$WASTE_CTL" ] || mount -t debugfs none /sys/kernel/debug
	[ -w "$WASTE_CTL" ] || fail "no $WASTE_CTL"
	rmmod alloctag_test 2>/dev/null || true
	trap 'echo off >"$WASTE_CTL" 2>/dev/null; rmmod alloctag_test 2>/dev/null || true' EXIT
}

# json_then_released BYTES FILE FIGURES WANT: allocinfo waste --json
# lists the BYTES requested that the test module holds; writing 0 to its
# debugfs FILE frees them, and FIGURES (hold_figures and the like) then
# reads WANT.
json_then_released() {
	_jr_out=$(allocinfo waste --json) || fail "allocinfo waste --json failed" || return 1
	echo "$_jr_out" | grep -q "\"requested\": *$1" || fail "json: $_jr_out" || return 1
	echo 0 >"$2" || fail "release failed" || return 1
	_jr_want=$4
	set -- $($3)
	[ "$*" = "$_jr_want" ] || fail "released: '$*'"
}

# Prints the figures of hold_object()'s line of /proc/allocwaste: bytes
# requested slack allocs frees untracked.
hold_figures() {
	awk '/\[alloctag_test\] func:hold_object$/ { print $1, $2, $3, $4, $5, $6 }' /proc/allocwaste
}

# Prints the bytes /proc/allocinfo counts for hold_object().
hold_allocinfo_bytes() {
	awk '/\[alloctag_test\] func:hold_object $/ { print $1 }' /proc/allocinfo
}

# The same two for hold_area().
area_figures() {
	awk '/\[alloctag_test\] func:hold_area$/ { print $1, $2, $3, $4, $5, $6 }' /proc/allocwaste
}
area_allocinfo_bytes() {
	awk '/\[alloctag_test\] func:hold_area $/ { print $1 }' /proc/allocinfo
}

# And for hold_exact().
exact_figures() {
	awk '/\[alloctag_test\] func:hold_exact$/ { print $1, $2, $3, $4, $5, $6 }' /proc/allocwaste
}

test_waste_cli_exact_figures_of_the_test_module() {
	[ -x /bin/allocinfo ] || fail "no /bin/allocinfo"
	waste_ready
	insmod /lib/modules/alloctag_test.ko || fail "insmod failed"
	allocinfo waste on || fail "allocinfo waste on failed"
	[ "$(cat "$WASTE_CTL")" = on ] || fail "control file says $(cat "$WASTE_CTL")"
	echo 10 >"$WASTE_HOLD" || fail "hold 10 failed"
	charged=$(hold_allocinfo_bytes)
	# Ten kmalloc-256 slots (more with debug metadata), all tracked.
	slot=$((charged / 10))
	[ "$slot" -ge 256 ] || fail "allocinfo charged $charged for ten objects"
	slack=$((charged - 2000))
	set -- $(hold_figures)
	[ "$*" = "$charged 2000 $slack 10 0 0" ] || fail "held: '$*', allocinfo $charged
$(head -3 /proc/allocwaste)"
	out=$(allocinfo waste --sort slack) || fail "allocinfo waste failed"
	echo "$out" | grep -q "hold_object" || fail "not listed: $out"
	json_then_released 2000 "$WASTE_HOLD" hold_figures "0 0 0 10 10 0"
	allocinfo waste off || fail "allocinfo waste off failed"
	[ "$(cat "$WASTE_CTL")" = off ] || fail "still on"
	grep -q "^# state: off since_ns: [1-9][0-9]* now_ns: [1-9]" /proc/allocwaste ||
		fail "state: $(sed -n 2p /proc/allocwaste)"
}

test_waste_vmalloc_area_through_the_cli() {
	waste_ready
	insmod /lib/modules/alloctag_test.ko || fail "insmod failed"
	allocinfo waste on || fail "allocinfo waste on failed"
	# 5000 bytes map two pages; the area's array of two page pointers is
	# a slab object of the same site: two allocations.
	echo 5000 >"$WASTE_AREA" || fail "hold_area 5000 failed"
	charged=$(area_allocinfo_bytes)
	slot=$((charged - 8192))
	[ "$slot" -ge 16 ] && [ "$slot" -lt 256 ] || fail "allocinfo charged $charged"
	set -- $(area_figures)
	[ "$*" = "$charged 5016 $((charged - 5016)) 2 0 0" ] || fail "held: '$*', allocinfo $charged"
	json_then_released 5016 "$WASTE_AREA" area_figures "0 0 0 2 2 0"
	allocinfo waste off || fail "allocinfo waste off failed"
}

test_waste_held_before_on_is_untracked() {
	waste_ready
	insmod /lib/modules/alloctag_test.ko || fail "insmod failed"
	echo 4 >"$WASTE_HOLD" || fail "hold 4 failed"
	echo on >"$WASTE_CTL" || fail "on refused"
	charged=$(hold_allocinfo_bytes)
	set -- $(hold_figures)
	[ "$*" = "0 0 0 0 0 $charged" ] || fail "held before on: '$*', allocinfo $charged"
	echo 0 >"$WASTE_HOLD" || fail "release failed"
	set -- $(hold_figures)
	[ "$*" = "0 0 0 0 0 0" ] || fail "released: '$*'"
	echo off >"$WASTE_CTL" || fail "off refused"
}

test_waste_module_unload_with_tracked_objects() {
	waste_ready
	echo on >"$WASTE_CTL" || fail "on refused"
	# Loaded while on: the module's tags get their counters at load.
	insmod /lib/modules/alloctag_test.ko || fail "insmod failed"
	echo 3 >"$WASTE_HOLD" || fail "hold 3 failed"
	set -- $(hold_figures)
	[ "$2 $4" = "600 3" ] || fail "held: '$*'"
	# Unload frees the held objects, then the tags and their counters. (An
	# earlier test's leak=1 instance stays listed: its init's line, for good.)
	rmmod alloctag_test || fail "rmmod failed"
	grep "alloctag_test" /proc/allocwaste | grep -v ' func:alloctag_test_init$' &&
		fail "unloaded module listed"
	insmod /lib/modules/alloctag_test.ko || fail "insmod again failed"
	set -- $(hold_figures)
	[ "$*" = "0 0 0 0 0 0" ] || fail "reloaded: '$*'"
	echo off >"$WASTE_CTL" || fail "off refused"
}

# allocinfo waste on says on standard error when the slots were not
# reserved at boot, and only then (pgflags-stress boots without them).
test_waste_cli_notes_unreserved_slots() {
	[ -x /bin/allocinfo ] || fail "no /bin/allocinfo"
	waste_ready
	err=$(allocinfo waste on 2>&1 >/dev/null) || fail "allocinfo waste on failed: $err"
	if grep -Eq '(^| )alloctag\.waste(_slots)?=on( |$)' /proc/cmdline; then
		[ -z "$err" ] || fail "a note though the slots are reserved: $err"
	else
		echo "$err" | grep -q "booted without alloctag.waste_slots=on" ||
			fail "no note without reserved slots: '$err'"
	fi
	allocinfo waste off >/dev/null || fail "allocinfo waste off failed"
}

test_waste_control_refuses_bad_values() {
	waste_ready
	for bad in maybe ON 1 "on off"; do
		if echo "$bad" >"$WASTE_CTL" 2>/dev/null; then fail "'$bad' accepted"; fi
		[ "$(cat "$WASTE_CTL")" = off ] || fail "'$bad' changed the state"
	done
	head -1 /proc/allocwaste | grep -qx "allocwaste - version: 1.0" || fail "header: $(head -1 /proc/allocwaste)"
}

test_boot_waste_param_turns_it_on() {
	[ "$(cat "$WASTE_CTL" 2>/dev/null || { mount -t debugfs none /sys/kernel/debug; cat "$WASTE_CTL"; })" = on ] ||
		fail "alloctag.waste=on: $(cat "$WASTE_CTL")"
	grep -q "^# state: on since_ns: [1-9]" /proc/allocwaste || fail "state: $(sed -n 2p /proc/allocwaste)"
	# kstrdup()'s line has tracked objects by now.
	awk '$4 > 0 { n++ } END { exit !(n > 0) }' /proc/allocwaste || fail "nothing counted since boot"
}

# Booted with alloctag.waste=on, pages have slots: alloc_pages_exact(9000)
# takes an order-2 block, keeps three pages (each an allocation once
# split) and frees the fourth; a vmalloc() area still counts once.
test_boot_waste_pages_through_the_cli() {
	[ -e "$WASTE_CTL" ] || mount -t debugfs none /sys/kernel/debug
	trap 'rmmod alloctag_test 2>/dev/null || true' EXIT
	insmod /lib/modules/alloctag_test.ko || fail "insmod failed"
	echo 9000 >"$WASTE_PAGES" || fail "hold_pages 9000 failed"
	set -- $(exact_figures)
	[ "$*" = "12288 9000 3288 4 1 0" ] || fail "held: '$*'"
	json_then_released 9000 "$WASTE_PAGES" exact_figures "0 0 0 4 4 0"
	echo 5000 >"$WASTE_AREA" || fail "hold_area 5000 failed"
	set -- $(area_figures)
	[ "$2 $4 $6" = "5016 2 0" ] || fail "area: '$*'"
	echo 0 >"$WASTE_AREA" || fail "area release failed"
}

# Runs "openhold $1 $2" (tests/guest/tools/openhold.c) in the memory cgroup
# $OPENS_CG until it holds its opens, then prints the cgroup's memory.current
# and the machine's Slab (KiB) growth since just before it started, and
# kills it.
opens_cost() {
	slab0=$(awk '/^Slab:/ { print $2 }' /proc/meminfo)
	: >/tmp/openhold.out
	sh -c "echo \$\$ >$OPENS_CG/cgroup.procs && exec openhold $1 $2" >/tmp/openhold.out 2>&1 &
	job=$!
	for _ in $(seq 1 600); do
		[ -s /tmp/openhold.out ] && break
		sleep 0.1
	done
	grep -q "^held $2$" /tmp/openhold.out || {
		kill $job
		fail "openhold $1 $2: $(cat /tmp/openhold.out)"
	}
	echo "$(cat $OPENS_CG/memory.current) $(($(awk '/^Slab:/ { print $2 }' /proc/meminfo) - slab0))"
	kill $job
	wait $job 2>/dev/null || true
}

# What one open of /proc/allocwaste costs, and who pays: as for
# /proc/allocinfo, a few KiB whatever the number of tags, charged to the
# opener's memory cgroup. 400 opens held in a cgroup of their own, each read
# once, grow its memory.current by at least seq_file's page each, by at most
# 2 KiB more than /proc/allocinfo's each, and the machine's Slab by at most
# 16 KiB each. (A text made whole at open, as before, held about 280 KB per
# open on this kernel.) Then, with memory.max 2 MiB above what openhold
# needs, its opens fail with ENOMEM inside the cgroup and the machine's Slab
# grows by no more than that room. Memory cgroups are in the nodebug kernel
# only: the test_rw_ prefix runs it there.
test_rw_allocwaste_opens_are_small_and_charged() {
	cg=/sys/fs/cgroup
	[ -e $cg/cgroup.controllers ] || mount -t cgroup2 none $cg || fail "cannot mount cgroup2"
	grep -qw memory $cg/cgroup.controllers || fail "no memory controller: $(cat $cg/cgroup.controllers)"
	echo +memory >$cg/cgroup.subtree_control || fail "cannot enable the memory controller"
	OPENS_CG=$cg/alloctag-opens
	mkdir -p $OPENS_CG
	trap 'rmdir $OPENS_CG 2>/dev/null || true' EXIT
	n=400
	set -- $(opens_cost /proc/allocinfo 0)
	base=$1
	set -- $(opens_cost /proc/allocinfo $n)
	info=$((($1 - base) / n))
	set -- $(opens_cost /proc/allocwaste 0)
	base=$1
	set -- $(opens_cost /proc/allocwaste $n)
	waste=$((($1 - base) / n)) slab=$(($2 * 1024 / n))
	# The figures, for Documentation/alloctag.rst.
	guest_note "per open: allocinfo $info bytes charged, allocwaste $waste charged, $slab of Slab"
	[ "$info" -ge 4096 ] || fail "an open of /proc/allocinfo charged $info bytes"
	[ "$waste" -ge 4096 ] || fail "an open of /proc/allocwaste charged $waste bytes"
	[ "$waste" -le $((info + 2048)) ] || fail "an open of /proc/allocwaste charged $waste, of /proc/allocinfo $info"
	[ "$slab" -le 16384 ] || fail "an open of /proc/allocwaste grew Slab by $slab bytes"
	# Then held opens fail inside the cgroup: with 2 MiB of room, an
	# openhold that the OOM killer may not kill, its pages locked, gets
	# ENOMEM. The cgroup's OOM report (dump_stack included) is expected: the
	# console is quieted for it, and the log it left is checked for any
	# other report instead.
	echo $((base + 2097152)) >$OPENS_CG/memory.max || fail "cannot set memory.max"
	level=$(cut -f 1 /proc/sys/kernel/printk)
	trap 'dmesg -n "$level"; rmdir $OPENS_CG 2>/dev/null || true' EXIT
	echo "alloctag-test: cgroup OOM expected" >/dev/kmsg
	dmesg -n 1
	slab0=$(awk '/^Slab:/ { print $2 }' /proc/meminfo)
	: >/tmp/openhold.out
	sh -c "echo \$\$ >$OPENS_CG/cgroup.procs && exec openhold /proc/allocwaste 100000 unkillable" \
		>/tmp/openhold.out 2>&1 &
	job=$!
	for _ in $(seq 1 1200); do
		[ -s /tmp/openhold.out ] && break
		sleep 0.1
	done
	grown=$(($(awk '/^Slab:/ { print $2 }' /proc/meminfo) - slab0))
	events=$(tr '\n' ' ' <$OPENS_CG/memory.events)
	kill $job
	wait $job 2>/dev/null || true
	dmesg -n "$level"
	out=$(cat /tmp/openhold.out)
	echo "$out" | grep -q "^failed [0-9]* ENOMEM$" ||
		fail "openhold in a 2 MiB cgroup: '$out'; $events; $(dmesg | tail -12)"
	[ "$grown" -le 4096 ] || fail "Slab grew by $grown KiB around a 2 MiB cgroup"
	log=$(dmesg | sed -n '/alloctag-test: cgroup OOM expected/,$p')
	echo "$log" | grep -q "Out of memory and no killable processes" || fail "no cgroup OOM: $log"
	if echo "$log" | grep -Eq "BUG:|WARNING:|KASAN:|Oops|INFO: possible|circular locking|inconsistent lock state|UBSAN:"; then
		fail "a kernel report beside the cgroup OOM: $(echo "$log" | grep -E -m 3 -A 3 "BUG:|WARNING:|KASAN:|Oops|INFO:|UBSAN:")"
	fi
	guest_note "in a 2 MiB cgroup: $(echo "$out" | head -1), Slab grew $grown KiB; $events"
}
