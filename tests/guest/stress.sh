# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of module unload with live allocations freed later by
# another module (test_holder_*), and a stress test (test_stress_*) of module
# load and unload racing /proc/allocinfo readers, allocation storms on every
# CPU, capture selections made and ended and, on a kernel whose
# vm.mem_profiling is writable, sysctl toggles.
# Sourced by run.sh; busybox ash.
#
# Kernel command line:
#   alloctag_stress_secs=N    how long the stress loops run (default 60); the
#                             module loops go on past it, and the readers
#                             and other loops with them, until each has done
#                             its minimum (ST_MIN_*), for at most
#                             ST_EXTRA_SECS more
#   alloctag_stress_toggle=1  also flip vm.mem_profiling during the stress;
#                             only where it is writable (no
#                             MEM_ALLOC_PROFILING_DEBUG), and then the checks
#                             of exact counter values are skipped: an
#                             allocation made or freed while profiling is off
#                             is not counted, by design.

ST_MODS=/lib/modules
ST_TEST=$ST_MODS/alloctag_test.ko
ST_HOLDER=$ST_MODS/alloctag_holder.ko
ST_SAMPLE=$ST_MODS/alloctag_rust_sample.ko
ST_LEAK=$ST_MODS/alloctag_rust_leak.ko
ST_HELD=/sys/module/alloctag_holder/parameters/held
ST_RELEASE=/sys/module/alloctag_holder/parameters/release
ST_CAP_DIR=/sys/kernel/debug/alloctag
ST_CAP=$ST_CAP_DIR/capture
# alloctag_test.ko hold=1 hands over 4 objects at each of 3 call sites.
ST_HELD_PER_LOAD=12
# A module unloaded with live allocations keeps its data for good: bound how
# often each stress loop does that (the setup adds one alloctag_rust_leak).
ST_MAX_C_LEAK=20
ST_MAX_C_HOLD=20
ST_MAX_RUST_LEAK=3
# What the module loops must have done, however slow the machine: each kind
# of alloctag_test load (plain, leak=1, hold=1) twice, so that the holder
# also frees a batch at once; four reloads of the Rust sample, the fourth
# with a load of alloctag_rust_leak.
ST_MIN_C_EACH=2
ST_MIN_RUST=4
# How long past the deadline a module loop short of its minimum goes on:
# within run.sh's 300 s per test with the default 60 s.
ST_EXTRA_SECS=120

# The value of KEY=VALUE on the kernel command line, or $2.
st_arg() {
	st_v=$2
	# shellcheck disable=SC2013 # the command line's words
	for st_a in $(cat /proc/cmdline); do
		case "$st_a" in "$1"=*) st_v=${st_a#*=} ;; esac
	done
	echo "$st_v"
}

# Progress and summary on the console: run.sh shows a test's output only when
# it fails.
st_say() {
	echo "stress: $*" >/dev/console 2>/dev/null || true
}

# Whole seconds since boot, in $st_now, without a fork.
st_clock() {
	read -r st_now _ </proc/uptime
	st_now=${st_now%%.*}
}

# The reads are checked by allocinfo-check (crates/allocinfo-check, on the
# tested parser of crates/allocinfo-format): "table KIND READ [MODULE]"
# lists the tags a read may show (KIND V vmlinux's, P the pinned module's,
# C those of a module loaded and unloaded during the reads), and "read READ
# TABLE" checks a read against them: 6.12's header, every line exactly as
# the kernel prints it, every tag of kind V and P exactly as many times as
# in the table, of kind C at most that many times (never with --final),
# and no tag that is not in the table, but for vmlinux's Rust lines, whose
# dynamic tags are made when a line first allocates (the capture loop's
# reports may do that during the reads): each at most once. Without
# /bin/allocinfo-check every check fails.

# Checks a read of /proc/allocinfo ($1) against the table ($2); $3 = final
# for the read after the stress. Prints at most five complaints.
# Each leaking load (leak=1, hold=1, alloctag_rust_leak) leaves its live
# call sites listed after the unload (hold=1's until the holder frees them),
# lines 1.0 cannot tell from a loaded instance's: a churned tag may be listed
# that many more times, the final read included (its count is checked exactly
# through the ioctl at the end).
ST_KEPT_MAX=$((ST_MAX_C_LEAK + ST_MAX_C_HOLD + ST_MAX_RUST_LEAK + 1))

st_check_read() {
	allocinfo-check read "$1" "$2" ${3:+--final} --kept "$ST_KEPT_MAX" 2>&1
}

# Fails the holder tests unless alloctag_test's unload warned once, naming
# exactly its three hold_* call sites, with the values $1 (a copy of
# /proc/allocinfo just before the unload) shows, and the loader warned once.
st_check_hold_warnings() {
	lines=$1
	log=$(dmesg)
	n=$(echo "$log" | grep -c 'module alloctag_test has .* at module unload, at 3 call sites, listed until freed: ' || true)
	[ "$n" = 1 ] || { echo "$n unload warnings of 3 sites, not 1:"; echo "$log" | tail -8; return 1; }
	for f in hold_kmalloc hold_pages hold_vmalloc; do
		# shellcheck disable=SC2046 # bytes and calls, two words
		set -- $(allocinfo-check get "$lines" --module alloctag_test --function "$f")
		[ $# = 2 ] || { echo "no tag for $f"; return 1; }
		echo "$log" | grep -Eq "alloctag_test.c:[0-9]+ \[alloctag_test\] func:$f has $1 bytes in $2 allocations(;|\$)" ||
			{ echo "no warning for $f with $1 bytes in $2 allocations:"; echo "$log" | tail -8; return 1; }
		case $f in
		# Four objects, each one allocation; four order-1 pages.
		hold_kmalloc) [ "$2" = 4 ] && [ "$1" -ge $((4 * 700)) ] ;;
		hold_pages) [ "$2" = 4 ] && [ "$1" = 32768 ] ;;
		# Two pages each, and maybe the array that lists them.
		hold_vmalloc) [ "$2" -ge 8 ] && [ "$1" -ge 32768 ] ;;
		esac || { echo "$f: $1 bytes in $2 allocations"; return 1; }
	done
	# Only the tags stay: the loader keeps none of the module's memory, so
	# it does not warn.
	[ "$(echo "$log" | grep -c 'alloctag_test: memory allocation(s) from the module still alive')" = 0 ] ||
		{ echo "the loader kept the module's memory:"; echo "$log" | tail -8; return 1; }
}

# Fails if a tag of one of the modules named is listed as loaded code's (an
# earlier test's leak=1 leaves an unloaded instance's line for good).
st_no_tags_of() {
	loaded_tags >/tmp/holder-end
	for m in "$@"; do
		allocinfo-check count /tmp/holder-end --module "$m" --exactly 0 >/dev/null ||
			fail "tags of $m left" || return 1
	done
}

# alloctag_test hands objects to the holder and is unloaded; the holder frees
# them while a new instance of alloctag_test is loaded. The unload warns
# about each live call site with its exact counts, those sites stay listed as
# unloaded, and the late frees go to the old instance's kept counters: the
# new instance's counters, which a reused per-CPU area would share, do not
# move; the kept sites go once freed.
test_holder_frees_after_owner_unloaded() {
	dmesg -c >/dev/null
	insmod "$ST_HOLDER"
	insmod "$ST_TEST" hold=1
	[ "$(cat "$ST_HELD")" = $ST_HELD_PER_LOAD ] || { echo "held $(cat "$ST_HELD")"; return 1; }
	# The giver holds a reference on the holder until it is gone.
	if rmmod alloctag_holder 2>/dev/null; then
		echo "the holder went while alloctag_test used it"
		return 1
	fi
	cat /proc/allocinfo >/tmp/holder-old
	rmmod alloctag_test
	st_check_hold_warnings /tmp/holder-old
	st_no_tags_of alloctag_test
	[ "$(unloaded_tags | grep -c '\[alloctag_test\] func:hold_')" = 3 ] ||
		fail "the 3 hold_* sites are not kept: $(unloaded_tags)"

	dmesg -c >/dev/null
	insmod "$ST_TEST"
	loaded_tags >/tmp/holder-new
	echo 1 >"$ST_RELEASE"
	[ "$(cat "$ST_HELD")" = 0 ]
	loaded_tags >/tmp/holder-new-after
	wait_unlisted '\[alloctag_test\] func:hold_'
	allocinfo-check unchanged /tmp/holder-new /tmp/holder-new-after --module alloctag_test ||
		fail "the late frees moved the new instance's counters"
	# The new instance's hold_* sites never allocated; the holder freed the
	# nodes it kept the objects in.
	allocinfo-check zero /tmp/holder-new --module alloctag_test --function-prefix hold_
	allocinfo-check zero /proc/allocinfo --module alloctag_holder
	rmmod alloctag_test
	rmmod alloctag_holder
	# Both unloaded with nothing live. (Only their tags: a Rust dynamic tag
	# that a test kept at unload, alloctag_rust_leak_plain's, stays listed.)
	if dmesg | grep 'at module unload\|still alive'; then
		return 1
	fi
	st_no_tags_of alloctag_test alloctag_holder
}

# The same, with the holder freeing the objects at its own unload.
test_holder_frees_at_own_unload() {
	dmesg -c >/dev/null
	insmod "$ST_HOLDER"
	insmod "$ST_TEST" hold=1
	cat /proc/allocinfo >/tmp/holder-old
	rmmod alloctag_test
	st_check_hold_warnings /tmp/holder-old
	[ "$(cat "$ST_HELD")" = $ST_HELD_PER_LOAD ]
	dmesg -c >/dev/null
	rmmod alloctag_holder
	if dmesg | grep 'at module unload\|still alive'; then
		echo "the holder did not free what it held"
		return 1
	fi
	wait_unlisted '\[alloctag_test\] func:hold_'
	st_no_tags_of alloctag_test alloctag_holder
}

# hold=1 without the holder: the load fails cleanly, freeing what it took.
test_holder_required_for_hold() {
	dmesg -c >/dev/null
	if insmod "$ST_TEST" hold=1 2>/dev/null; then
		echo "hold=1 loaded without the holder"
		return 1
	fi
	dmesg | grep -q 'hold=1 needs alloctag_holder loaded'
	if dmesg | grep 'at module unload\|still alive'; then
		return 1
	fi
	st_no_tags_of alloctag_test
}

# --- the stress test ---

# Records a failure of loop $1 (the first one only) for the final check.
st_fail() {
	[ -e "$ST_DIR/fail-$1" ] || echo "$1: $2" >"$ST_DIR/fail-$1"
	st_say "FAIL $1: $2"
}

st_running() {
	st_clock
	[ "$st_now" -lt "$st_deadline" ]
}

# Past the deadline, a module loop short of its minimum goes on until
# $st_limit, when the final check fails it.
st_in_limit() {
	st_clock
	[ "$st_now" -lt "$st_limit" ]
}

# Whether the readers and the other loops go on: until the deadline, and
# then for as long as a module loop does.
st_going() {
	st_running && return 0
	[ -e "$ST_DIR/done-c" ] && [ -e "$ST_DIR/done-rust" ] && return 1
	st_in_limit
}

# alloctag_test: plain, leak=1 (one allocation live at unload) and hold=1
# (twelve objects handed to the holder, which frees every second batch at
# once and the others with the next batch, while other loops run).
st_loop_c() {
	set +e
	i=0 plain=0 leak=0 hold=0
	while st_running || {
		[ $((plain < ST_MIN_C_EACH || leak < ST_MIN_C_EACH || hold < ST_MIN_C_EACH)) = 1 ] && st_in_limit
	}; do
		args=
		case $((i % 3)) in
		1) [ $leak -lt $ST_MAX_C_LEAK ] && args=leak=1 ;;
		2) [ $hold -lt $ST_MAX_C_HOLD ] && args=hold=1 ;;
		esac
		i=$((i + 1))
		insmod "$ST_TEST" $args || { st_fail c "insmod alloctag_test $args"; break; }
		rmmod alloctag_test || { st_fail c "rmmod alloctag_test ($args)"; break; }
		case "$args" in
		leak=1) leak=$((leak + 1)) ;;
		hold=1)
			hold=$((hold + 1))
			if [ $((hold % 2)) = 0 ]; then
				echo 1 >"$ST_RELEASE" || { st_fail c "release"; break; }
			fi
			;;
		*) plain=$((plain + 1)) ;;
		esac
	done
	echo "$plain $leak $hold" >"$ST_DIR/count-c"
	: >"$ST_DIR/done-c"
}

# alloctag_rust_sample, loaded before the pinned holder when this starts,
# then reloaded; now and then alloctag_rust_leak.
st_loop_rust() {
	set +e
	i=0 leak=0
	while st_running || { [ $((i < ST_MIN_RUST || leak < 1)) = 1 ] && st_in_limit; }; do
		rmmod alloctag_rust_sample || { st_fail rust "rmmod alloctag_rust_sample"; break; }
		if [ $((i % 4)) = 3 ] && [ $leak -lt $ST_MAX_RUST_LEAK ]; then
			insmod "$ST_LEAK" || { st_fail rust "insmod alloctag_rust_leak"; break; }
			rmmod alloctag_rust_leak || { st_fail rust "rmmod alloctag_rust_leak"; break; }
			leak=$((leak + 1))
		fi
		insmod "$ST_SAMPLE" || { st_fail rust "insmod alloctag_rust_sample"; break; }
		i=$((i + 1))
	done
	rmmod alloctag_rust_sample 2>/dev/null
	echo "$i $leak" >"$ST_DIR/count-rust"
	: >"$ST_DIR/done-rust"
}

# Reads /proc/allocinfo with dd bs=$2 and checks each read; keeps the first
# bad read in $ST_DIR.
st_loop_reader() {
	set +e
	n=0
	f=$ST_DIR/read-$1
	while st_going; do
		dd if=/proc/allocinfo of="$f" bs="$2" 2>/dev/null || { st_fail "$1" "dd failed"; break; }
		if ! st_check_read "$f" "$ST_DIR/table" >"$f.why" 2>&1; then
			cp "$f" "$ST_DIR/bad-$1"
			# The modules the bad read listed, on the console.
			grep -F '] func:' "$f" | head -n 20 | while read -r line; do st_say "$1: $line"; done
			st_fail "$1" "read $n (bs=$2, $(wc -l <"$f") lines, saved as $ST_DIR/bad-$1): $(head -n 3 "$f.why")"
			break
		fi
		n=$((n + 1))
	done
	echo "$n" >"$ST_DIR/count-$1"
}

st_loop_toggle() {
	set +e
	n=0
	while st_going; do
		echo 0 >/proc/sys/vm/mem_profiling || { st_fail toggle "echo 0"; break; }
		usleep 100000
		echo 1 >/proc/sys/vm/mem_profiling || { st_fail toggle "echo 1"; break; }
		usleep 200000
		n=$((n + 1))
	done
	echo 1 >/proc/sys/vm/mem_profiling
	echo "$n" >"$ST_DIR/count-toggle"
}

# Capture selections come and go (the test module's sites, marked at each of
# its loads and unmarked at each unload, with objects the holder frees later;
# the holder's; the storms' pipe pages) while the reports are read; on a
# kernel without capture, nothing.
st_loop_capture() {
	set +e
	n=0
	[ -w "$ST_CAP" ] || { echo off >"$ST_DIR/count-capture"; return; }
	while st_going; do
		for sel in "module:alloctag_test" "module:alloctag_holder" "func:pipe_write"; do
			echo "add $sel" >"$ST_CAP" || st_fail capture "add $sel refused"
		done
		usleep 200000
		cat "$ST_CAP_DIR/live" "$ST_CAP_DIR/live_stacks" "$ST_CAP_DIR/live_processes" \
			"$ST_CAP" >/dev/null || st_fail capture "a report could not be read"
		echo clear >"$ST_CAP" || st_fail capture "clear refused"
		usleep 100000
		n=$((n + 1))
	done
	echo clear >"$ST_CAP"
	echo "$n" >"$ST_DIR/count-capture"
}

# Counts the lines of $ST_DIR/dmesg that match the grep -E pattern $1.
st_dmesg_count() {
	grep -Ec "$1" "$ST_DIR/dmesg" || true
}

# Modules come and go (alloctag_test plain, leak=1 and hold=1 with the holder
# freeing later; the Rust sample; now and then the leaking Rust module) while
# four readers read /proc/allocinfo in 64- and 4096-byte chunks and check
# every read against the modules loaded during it, allocation storms run on
# every CPU and, with alloctag_stress_toggle=1, vm.mem_profiling flips.
# The module loops must have done their minimum of loads (ST_MIN_*), and
# every reader must have checked reads: a stress in which nothing was loaded
# fails. alloctag_holder stays loaded throughout: each read must list its
# tags exactly once, and every vmlinux tag as often as before the stress. At
# the end every test module is gone, the holder has freed what it held, its
# counters are back to their values after its load, and the unload warnings
# are exactly those of the leaking and holding unloads.
test_stress_modules_readers_allocators() {
	secs=$(st_arg alloctag_stress_secs 60)
	toggle=$(st_arg alloctag_stress_toggle 0)
	ncpu=$(nproc)
	ST_DIR=/tmp/stress
	rm -rf "$ST_DIR"
	mkdir -p "$ST_DIR"
	if [ "$toggle" = 1 ] && [ "$(stat -c %a /proc/sys/vm/mem_profiling)" != 644 ]; then
		echo "alloctag_stress_toggle=1 needs a writable vm.mem_profiling (no MEM_ALLOC_PROFILING_DEBUG)"
		return 1
	fi
	st_clock
	start=$st_now
	st_deadline=$((start + secs))
	st_limit=$((st_deadline + ST_EXTRA_SECS))
	st_say "$secs s on $ncpu CPUs, sysctl toggles: $toggle"
	if lsmod | grep alloctag_; then
		echo "test modules loaded before the stress"
		return 1
	fi
	dmesg -c >/dev/null

	# Warm-up: the first module load and unload and the first read make the
	# dynamic tags of the vmlinux Rust code they run (the code-tag registry's
	# own allocations); from then on every read lists them.
	insmod "$ST_TEST" && rmmod alloctag_test
	insmod "$ST_SAMPLE" && rmmod alloctag_rust_sample
	cat /proc/allocinfo >/dev/null
	# So do capture's commands, its pool and its reports, with records.
	[ -e "$ST_CAP" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	# Both kernels build capture: without it, its part of the stress would
	# not run, which is a failure, not a pass.
	[ -w "$ST_CAP" ] || { echo "no $ST_CAP (CONFIG_ALLOCTAG_CAPTURE)"; return 1; }
	if [ -w "$ST_CAP" ]; then
		echo "add func:pipe_write" >"$ST_CAP" || { echo "capture refused a selection"; return 1; }
		echo "add module:alloctag_test" >"$ST_CAP" || { echo "capture refused a selection"; return 1; }
		insmod "$ST_TEST"
		: >"$ST_DIR/memhold.out"
		memhold pipe 2 >"$ST_DIR/memhold.out" &
		holder=$!
		# memhold prints its pid once it holds its pipe pages: from then
		# on the reports have records (an event, not a guess at a time).
		i=0
		until [ -s "$ST_DIR/memhold.out" ]; do
			i=$((i + 1))
			[ "$i" -le 300 ] || { kill $holder; echo "memhold held nothing in 300 polls"; return 1; }
			usleep 100000
		done
		grep -q " comm=memhold " "$ST_CAP_DIR/live" ||
			{ kill $holder; echo "warm-up: no record of memhold's pipe pages"; return 1; }
		cat "$ST_CAP_DIR/live" "$ST_CAP_DIR/live_stacks" "$ST_CAP_DIR/live_processes" "$ST_CAP" >/dev/null
		kill $holder
		wait $holder || true
		rmmod alloctag_test
		echo clear >"$ST_CAP"
		dmesg -c >/dev/null
	fi
	# The tags every read may list: vmlinux's, from a read with no module
	# loaded, and each test module's, from a read with it loaded.
	cat /proc/allocinfo >"$ST_DIR/base"
	allocinfo-check count "$ST_DIR/base" --any-module --exactly 0 >/dev/null ||
		fail "module tags with no module loaded" || return 1
	# (table fails on a module with no tag: it would check nothing.)
	allocinfo-check table V "$ST_DIR/base" >"$ST_DIR/table"
	insmod "$ST_TEST"
	cat /proc/allocinfo >"$ST_DIR/r"
	rmmod alloctag_test
	allocinfo-check table C "$ST_DIR/r" alloctag_test >>"$ST_DIR/table"
	insmod "$ST_LEAK"
	cat /proc/allocinfo >"$ST_DIR/r"
	rmmod alloctag_rust_leak
	allocinfo-check table C "$ST_DIR/r" alloctag_rust_leak >>"$ST_DIR/table"
	# The Rust sample stays loaded, before the holder in the list of modules,
	# until its loop first unloads it.
	insmod "$ST_SAMPLE"
	insmod "$ST_HOLDER"
	cat /proc/allocinfo >"$ST_DIR/at-load"
	allocinfo-check table C "$ST_DIR/at-load" alloctag_rust_sample >>"$ST_DIR/table"
	allocinfo-check table P "$ST_DIR/at-load" alloctag_holder >>"$ST_DIR/table"
	for k in C P; do
		[ "$(grep -c "^$k" "$ST_DIR/table")" -gt 0 ] || { echo "no $k tags"; return 1; }
	done
	st_check_read "$ST_DIR/at-load" "$ST_DIR/table" || { echo "the setup read fails the check"; return 1; }
	st_clock
	st_say "setup $((st_now - start)) s: $(grep -c '^V' "$ST_DIR/table") vmlinux tag infos," \
		"$(grep -c '^C' "$ST_DIR/table") of churned modules, $(grep -c '^P' "$ST_DIR/table") pinned"

	st_loop_c &
	st_loop_rust &
	st_loop_reader r64a 64 &
	st_loop_reader r64b 64 &
	st_loop_reader r4ka 4096 &
	st_loop_reader r4kb 4096 &
	[ "$toggle" = 1 ] && st_loop_toggle &
	st_loop_capture &
	st_clock
	cpu=0
	while [ $cpu -lt "$ncpu" ]; do
		taskset -c $cpu alloctag-storm $((st_deadline - st_now)) >"$ST_DIR/storm-$cpu" 2>&1 &
		cpu=$((cpu + 1))
	done
	wait
	st_clock
	st_say "loops done after $((st_now - start)) s"

	rc=0
	for f in "$ST_DIR"/fail-*; do
		[ -e "$f" ] || continue
		cat "$f"
		rc=1
	done
	cpu=0
	while [ $cpu -lt "$ncpu" ]; do
		grep -q '^storm: cpu [0-9]* rounds [0-9]*$' "$ST_DIR/storm-$cpu" ||
			{ echo "storm $cpu: $(cat "$ST_DIR/storm-$cpu")"; rc=1; }
		cpu=$((cpu + 1))
	done
	# The module loops did their work: each kind of load, at least their
	# minimum of each, however slow the machine was (they go on past the
	# deadline for it); every reader checked reads.
	if read -r c_plain c_leak c_hold <"$ST_DIR/count-c" &&
		read -r r_loads r_leak <"$ST_DIR/count-rust"; then
		echo "alloctag_test loads: plain $c_plain, leak=1 $c_leak, hold=1 $c_hold; rust sample reloads $r_loads, with alloctag_rust_leak $r_leak"
		[ "$c_plain" -ge $ST_MIN_C_EACH ] && [ "$c_leak" -ge $ST_MIN_C_EACH ] &&
			[ "$c_hold" -ge $ST_MIN_C_EACH ] ||
			{ echo "the alloctag_test loop did less than $ST_MIN_C_EACH loads of each kind"; rc=1; }
		[ "$r_loads" -ge $ST_MIN_RUST ] && [ "$r_leak" -ge 1 ] ||
			{ echo "the Rust loop did less than $ST_MIN_RUST reloads and one alloctag_rust_leak"; rc=1; }
	else
		echo "a module loop left no count"
		rc=1
	fi
	for r in r64a r64b r4ka r4kb; do
		[ "$(cat "$ST_DIR/count-$r" 2>/dev/null || echo 0)" -gt 0 ] ||
			{ echo "reader $r checked no read"; rc=1; }
	done
	if [ $rc != 0 ]; then
		# Leave no test module behind for the tests that follow.
		for m in alloctag_test alloctag_rust_sample alloctag_rust_leak alloctag_holder; do
			rmmod $m 2>/dev/null || true
		done
		return 1
	fi

	# Everything but the holder is gone; it frees what it still holds.
	lsmod | grep alloctag_ >"$ST_DIR/lsmod"
	[ "$(awk '{ print $1 }' "$ST_DIR/lsmod")" = alloctag_holder ] ||
		{ echo "modules left: $(cat "$ST_DIR/lsmod")"; return 1; }
	echo 1 >"$ST_RELEASE"
	[ "$(cat "$ST_HELD")" = 0 ] || { echo "the holder still holds $(cat "$ST_HELD")"; return 1; }
	cat /proc/allocinfo >"$ST_DIR/final"
	st_check_read "$ST_DIR/final" "$ST_DIR/table" final ||
		{ echo "the read after the stress fails the check"; return 1; }
	r_leak=$((r_leak + 1)) # the setup's
	dmesg >"$ST_DIR/dmesg"
	if [ "$toggle" != 1 ]; then
		allocinfo-check unchanged "$ST_DIR/at-load" "$ST_DIR/final" --module alloctag_holder ||
			{ echo "the holder's counters moved"; return 1; }
		# Exactly the unloads with live allocations warned, each about
		# exactly what was live: counts lost or doubled under the stress
		# would warn elsewhere or with other numbers. The loader kept no
		# module's memory (only the tags stay), so it never warned.
		for check in \
			"$c_leak module alloctag_test has [0-9]+ bytes in 1 allocations at module unload, at 1 call site, listed until freed: [^ ]* \[alloctag_test\] func:alloctag_test_init has [0-9]+ bytes in 1 allocations\$" \
			"$c_hold func:hold_kmalloc has [0-9]+ bytes in 4 allocations(;|\$)" \
			"$c_hold func:hold_pages has 32768 bytes in 4 allocations(;|\$)" \
			"$c_hold func:hold_vmalloc has [0-9]+ bytes in [0-9]+ allocations(;|\$)" \
			"$c_hold module alloctag_test has [0-9]+ bytes in [0-9]+ allocations at module unload, at 3 call sites, listed until freed: " \
			"$((c_leak + c_hold)) module alloctag_test has" \
			"$r_leak module alloctag_rust_leak has [0-9]+ bytes in 1 allocations at module unload, at 1 call site, " \
			"$((c_leak + c_hold + r_leak)) at module unload" \
			"0 still alive"; do
			want=${check%% *}
			n=$(st_dmesg_count "${check#* }")
			[ "$n" = "$want" ] || { echo "$n lines, not $want, match '${check#* }'"; rc=1; }
		done
		[ $rc = 0 ] || { grep 'at module unload\|still alive' "$ST_DIR/dmesg" | tail -5; return 1; }
		dmesg -c >/dev/null
	fi
	rmmod alloctag_holder
	if [ "$toggle" != 1 ] && dmesg | grep 'at module unload\|still alive'; then
		echo "the holder went with live allocations"
		return 1
	fi
	loaded_tags >"$ST_DIR/end"
	allocinfo-check count "$ST_DIR/end" --module-prefix alloctag_ --exactly 0 >/dev/null ||
		{ echo "test module tags left"; return 1; }
	# The holder's frees took the kept hold_* sites; each leak=1 instance's
	# leaked allocation keeps its line listed, as unloaded, for good. (With
	# the sysctl flipping, a free made while profiling was off left its
	# site's counters up, and the site kept, by design.)
	if [ "$toggle" != 1 ]; then
		wait_unlisted '\[alloctag_test\] func:hold_' || return 1
		n=$(unloaded_tags | grep -c '\[alloctag_test\] func:alloctag_test_init ' || true)
		[ "$n" = "$c_leak" ] || { echo "$n kept lines of alloctag_test_init, not $c_leak"; return 1; }
	fi
	if [ -w "$ST_CAP" ]; then
		grep -q "^capture limit=[0-9]* size=0 used=0 " "$ST_CAP" || { echo "capture left: $(cat "$ST_CAP")"; return 1; }
		if grep -q "^object " "$ST_CAP_DIR/live"; then echo "capture records left"; return 1; fi
	fi

	reads=0
	for r in r64a r64b r4ka r4kb; do
		reads=$((reads + $(cat "$ST_DIR/count-$r")))
	done
	st_clock
	st_say "done in $((st_now - start)) s: alloctag_test loads $((c_plain + c_leak + c_hold))" \
		"(plain $c_plain, leak=1 $c_leak, hold=1 $c_hold, $((c_hold * ST_HELD_PER_LOAD)) objects freed late);" \
		"rust sample loads $r_loads, rust leak loads $r_leak;" \
		"reads checked $reads (bs=64 $(cat "$ST_DIR/count-r64a")+$(cat "$ST_DIR/count-r64b")," \
		"bs=4096 $(cat "$ST_DIR/count-r4ka")+$(cat "$ST_DIR/count-r4kb"));" \
		"toggles $(cat "$ST_DIR/count-toggle" 2>/dev/null || echo off);" \
		"capture selections $(cat "$ST_DIR/count-capture");" \
		"storm rounds $(cat "$ST_DIR"/storm-* | awk '{ printf "%s%s", sep, $5; sep = "+" }')"
	# Each loop did its part at least once.
	[ "$reads" -gt 0 ] || { echo "no read checked"; return 1; }
	[ "$(cat "$ST_DIR/count-capture")" -gt 0 ] || { echo "no capture selection made"; return 1; }
	if [ "$toggle" = 1 ]; then
		[ "$(cat "$ST_DIR/count-toggle")" -gt 0 ] || { echo "no sysctl toggle"; return 1; }
	fi
}
