# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Capture of live objects at selected call sites
# (/sys/kernel/debug/alloctag/capture and its reports live, live_stacks,
# live_processes), on the test module's hold file: a write of N from user
# space allocates N objects at hold_object() in the writer's context
# (tests/modules/alloctag_test.c, tests/guest/tools/capwriter.c).

CAP_DIR=/sys/kernel/debug/alloctag
CAP_CTL=$CAP_DIR/capture
HOLD=/sys/kernel/debug/alloctag_test/hold
HOLD_LIST=/sys/kernel/debug/alloctag_test/hold_page_list
CAP_MODDIR=/lib/modules

# The capture files, with whatever is selected left as it is.
capture_files() {
	[ -e "$CAP_CTL" ] || mount -t debugfs none /sys/kernel/debug
	[ -r "$CAP_CTL" ] || fail "no $CAP_CTL"
}

capture_ready() {
	[ -e "$CAP_CTL" ] || mount -t debugfs none /sys/kernel/debug
	[ -w "$CAP_CTL" ] || fail "no $CAP_CTL"
	echo clear >"$CAP_CTL"
	rmmod alloctag_test 2>/dev/null || true
	hold_job=
	# Pass or fail, leave nothing selected, no memhold running and the test
	# module unloaded.
	trap 'capture_cleanup' EXIT
}

capture_cleanup() {
	[ -z "$hold_job" ] || memhold_stop
	# Best effort: under lockdown (test_boot_lockdown_*) the file takes no write.
	echo clear 2>/dev/null >"$CAP_CTL" || true
	rmmod alloctag_test 2>/dev/null || true
}

# Prints the number of object lines of the live report of the hold site
# written by process $1 with the comm capwriter.
held_objects_of() {
	grep "^object " "$CAP_DIR/live" | grep " tgid=$1 comm=capwriter " |
		grep -c "\[alloctag_test\] func:hold_object$" || true
}

# Starts "memhold $*" (tests/guest/tools/memhold.c) in the background and
# waits until it holds its memory: sets hold_job, hold_pid and hold_addr.
memhold_start() {
	# Emptied first: the shell truncates the file in the child, which may run
	# after the loop below has read an earlier memhold's line.
	: >/tmp/memhold.out
	memhold "$@" >/tmp/memhold.out 2>&1 &
	hold_job=$!
	for _ in $(seq 1 300); do
		[ -s /tmp/memhold.out ] && break
		sleep 0.1
	done
	read -r hold_pid hold_addr </tmp/memhold.out || fail "memhold $* printed nothing"
	[ "$hold_pid" = "$hold_job" ] || fail "memhold printed pid $hold_pid, not $hold_job"
}

# Kills memhold: its exit frees what it held.
memhold_stop() {
	kill "$hold_job" 2>/dev/null || true
	wait "$hold_job" 2>/dev/null || true
	hold_job=
}

# Expects live_processes to show memhold holding $1 objects of $2 bytes.
memhold_expect_process() {
	grep -q "^process tgid=$hold_pid comm=memhold objects=$1 bytes=$2$" "$CAP_DIR/live_processes" ||
		fail "by process: $(cat "$CAP_DIR/live_processes")"
}

# Kills memhold and expects no record of it left ($1: what held them).
memhold_stop_freed() {
	memhold_stop
	n=$(memhold_objects "$hold_pid" .)
	[ "$n" = 0 ] || fail "$n records outlived $1"
}

# Prints the number of object lines of the live report of process $1 (comm
# memhold) that match the extended regular expression $2.
memhold_objects() {
	grep "^object .* tgid=$1 comm=memhold " "$CAP_DIR/live" | grep -Ec "$2" || true
}

test_capture_module_site_by_process_and_stack() {
	capture_ready
	# Selected before the module loads: its tags are marked as it loads.
	echo "add module:alloctag_test func:hold_object" >"$CAP_CTL" || fail "add refused"
	grep -q "^selection 1 sites=0 unmarked=0 select=module:alloctag_test func:hold_object$" "$CAP_CTL" ||
		fail "selection not listed: $(cat "$CAP_CTL")"
	insmod "$CAP_MODDIR/alloctag_test.ko" || fail "insmod failed"
	grep -q "^site selection=1 live=0 " "$CAP_CTL" || fail "site not marked at load: $(cat "$CAP_CTL")"
	pid=$(capwriter "$HOLD" 3) || fail "capwriter failed"
	[ "$(held_objects_of "$pid")" = 3 ] || fail "objects of $pid: $(cat "$CAP_DIR/live")"
	# Each object's stack has the call site's function, as %pS prints it.
	grep -A16 "^object .* tgid=$pid comm=capwriter " "$CAP_DIR/live" |
		grep -q "^  hold_object+0x[0-9a-f]*/0x[0-9a-f]* \[alloctag_test\]$" ||
		fail "no hold_object frame: $(cat "$CAP_DIR/live")"
	capture_stacks_start_in_allocator
	grep -q "^process tgid=$pid comm=capwriter objects=3 bytes=" "$CAP_DIR/live_processes" ||
		fail "by process: $(cat "$CAP_DIR/live_processes")"
	grep -q "^stack count=3 .* pids=$pid:capwriter site=.*func:hold_object$" "$CAP_DIR/live_stacks" ||
		fail "by stack: $(cat "$CAP_DIR/live_stacks")"
	grep -q "^site selection=1 live=3 .* untracked=0 untracked_bytes=0 " "$CAP_CTL" ||
		fail "counters and records differ: $(cat "$CAP_CTL")"
	# Freeing clears.
	capwriter "$HOLD" 0 >/dev/null || fail "freeing failed"
	[ "$(held_objects_of "$pid")" = 0 ] || fail "freed objects still listed"
	grep -q "^site selection=1 live=0 " "$CAP_CTL" || fail "records left: $(cat "$CAP_CTL")"
}

# The capture files are made when opened and read item by item: read in
# pieces of 100 bytes, each a read() that resumes inside an item, they say what
# one read of the whole file says (ages aside: each open reads the clock).
test_capture_files_read_in_small_pieces() {
	capture_ready
	insmod "$CAP_MODDIR/alloctag_test.ko" || fail "insmod failed"
	echo "add module:alloctag_test func:hold_object" >"$CAP_CTL" || fail "add refused"
	pid=$(capwriter "$HOLD" 64) || fail "capwriter failed"
	for f in live live_stacks live_processes capture; do
		sed -E 's/ age(_min|_avg|_max)?_ns=[0-9]+//g' "$CAP_DIR/$f" >/tmp/cap-whole
		dd if="$CAP_DIR/$f" bs=100 2>/dev/null | sed -E 's/ age(_min|_avg|_max)?_ns=[0-9]+//g' >/tmp/cap-pieces
		cmp -s /tmp/cap-whole /tmp/cap-pieces ||
			fail "$f read in pieces differs: $(diff /tmp/cap-whole /tmp/cap-pieces | head -n 8)"
		echo "$f: $(wc -c </tmp/cap-whole) bytes"
	done
	sed -E 's/ age(_min|_avg|_max)?_ns=[0-9]+//g' "$CAP_DIR/live" >/tmp/cap-whole
	# Larger than seq_file's first buffer (a page), so that reading it needs
	# more than one buffer.
	[ "$(wc -c </tmp/cap-whole)" -gt 8192 ] || fail "live is only $(wc -c </tmp/cap-whole) bytes"
	[ "$(grep -c "^object .* tgid=$pid comm=capwriter " /tmp/cap-whole)" = 64 ] ||
		fail "not 64 objects of $pid: $(head -n 3 /tmp/cap-whole)"
	tail -n 1 /tmp/cap-whole | grep -q "^untracked objects=0 bytes=0 " ||
		fail "last line: $(tail -n 1 /tmp/cap-whole)"
	capwriter "$HOLD" 0 >/dev/null || fail "freeing failed"
}

# Selects pipe_write() and has memhold write $1 pages into a pipe: each must
# be recorded under memhold's pid.
# Every recorded stack starts in the allocator: the frames of the hooks'
# slow paths (alloctag_*) and of capture() are skipped, whichever path led
# there (the page hook's slow path shared with waste accounting too).
capture_stacks_start_in_allocator() {
	ours=$(awk '/^object / { getline; if ($0 !~ /^  [a-z_]/ || $0 ~ /^  (alloctag_|capture)/) print }' "$CAP_DIR/live")
	[ -z "$ours" ] || fail "stacks starting with our own frames: $ours
$(cat "$CAP_DIR/live")"
}

capture_pipe_pages() {
	capture_ready
	echo "add func:pipe_write" >"$CAP_CTL" || fail "add refused"
	memhold_start pipe "$1"
	n=$(memhold_objects "$hold_pid" " bytes=4096 .* kind=pages order=0 .* func:pipe_write$")
	[ "$n" = "$1" ] || fail "$n pipe pages of $hold_pid: $(cat "$CAP_DIR/live")"
}

# A user-space program makes the kernel allocate at a selected site of the
# kernel itself: a pipe's buffer pages (pipe_write()) show under the writer's
# pid and comm, with pipe_write in the stack, and go when the pipe does.
test_capture_pipe_pages_under_their_writer() {
	capture_pipe_pages 8
	grep -A16 "^object .* tgid=$hold_pid comm=memhold " "$CAP_DIR/live" |
		grep -q "^  pipe_write+0x" || fail "no pipe_write frame: $(cat "$CAP_DIR/live")"
	capture_stacks_start_in_allocator
	memhold_expect_process 8 32768
	memhold_stop_freed "the pipe"
}

# A transparent huge page split into order-2 folios (the debugfs
# split_huge_pages file, which splits as memory pressure would): each folio
# gets its own record, under the process that faulted the page, and each goes
# when its folio is freed at the process's exit.
test_capture_huge_page_split_and_freed() {
	capture_ready
	split=/sys/kernel/debug/split_huge_pages
	[ -w "$split" ] || fail "no $split (CONFIG_TRANSPARENT_HUGEPAGE)"
	echo "add func:do_huge_pmd_anonymous_page" >"$CAP_CTL" || fail "add refused"
	# The fault falls back to small pages when no free 2 MiB block is at
	# hand, which is memory's state, not capture's: then compact and retry.
	for _ in 1 2 3; do
		memhold_start thp
		grep -q "^AnonHugePages: *2048 kB$" "/proc/$hold_pid/smaps_rollup" && break
		memhold_stop
		echo 1 >/proc/sys/vm/compact_memory
	done
	# Memory too fragmented for one after compaction: the machine's state,
	# so a skip (its manifest lines say may-skip), not a failure.
	[ -n "$hold_job" ] || skip "no huge page in three tries, compacting between them: $(grep AnonHuge /proc/meminfo)"
	n=$(memhold_objects "$hold_pid" " bytes=2097152 .* kind=pages order=9 ")
	[ "$n" = 1 ] || fail "huge page of $hold_pid not recorded: $(cat "$CAP_DIR/live")"
	# A split skips a folio it cannot lock at once: tried again while the
	# page is still whole.
	for _ in 1 2 3; do
		echo "$hold_pid,$hold_addr,$(printf '0x%x' $((hold_addr + 2097152))),2" >"$split" ||
			fail "split refused"
		grep -q "^AnonHugePages: *2048 kB$" "/proc/$hold_pid/smaps_rollup" || break
	done
	n=$(memhold_objects "$hold_pid" " bytes=16384 .* kind=pages order=2 ")
	[ "$n" = 128 ] || fail "$n order-2 records after the split: $(cat "$CAP_DIR/live")
$(grep AnonHuge "/proc/$hold_pid/smaps_rollup")"
	memhold_expect_process 128 2097152
	memhold_stop_freed "the process"
}

test_capture_cli_shows_process_and_stack() {
	[ -x /bin/allocinfo ] || fail "no /bin/allocinfo"
	capture_ready
	allocinfo capture add module:alloctag_test func:hold_object || fail "allocinfo capture add failed"
	allocinfo capture list | grep -q "module:alloctag_test func:hold_object" ||
		fail "not listed: $(allocinfo capture list)"
	insmod "$CAP_MODDIR/alloctag_test.ko" || fail "insmod failed"
	pid=$(capwriter "$HOLD" 2) || fail "capwriter failed"
	out=$(allocinfo live --by process) || fail "allocinfo live --by process failed"
	echo "$out" | grep -q "^ *$pid  *capwriter  *2 " || fail "by process: $out"
	out=$(allocinfo live --by stack) || fail "allocinfo live --by stack failed"
	echo "$out" | grep -q "hold_object+0x" || fail "by stack: $out"
	out=$(allocinfo live --json) || fail "allocinfo live --json failed"
	echo "$out" | grep -q "\"comm\": *\"capwriter\"" || fail "json: $out"
	out=$(allocinfo live --older-than 1h) || fail "--older-than failed"
	echo "$out" | grep -q capwriter && fail "--older-than 1h listed new objects: $out"
	allocinfo capture remove 1 || fail "allocinfo capture remove failed"
	if grep -q "^object " "$CAP_DIR/live"; then fail "records outlived the selection"; fi
}

test_capture_unload_of_selected_module_is_clean() {
	capture_ready
	echo "add module:alloctag_test" >"$CAP_CTL" || fail "add refused"
	# leak=1 keeps one allocation past unload: its tag stays listed, and the
	# record of that object with it; the records of what unload freed go.
	insmod "$CAP_MODDIR/alloctag_test.ko" leak=1 || fail "insmod failed"
	capwriter "$HOLD" 4 >/dev/null || fail "capwriter failed"
	grep -q "func:alloctag_test_init$" "$CAP_DIR/live" || fail "init's objects not captured"
	grep -q "func:hold_object$" "$CAP_DIR/live" || fail "hold_object's objects not captured"
	rmmod alloctag_test || fail "rmmod failed"
	kept=$(grep -c "func:alloctag_test_init$" "$CAP_DIR/live" || true)
	[ "$kept" = 1 ] || fail "not the leaked object's record kept: $(cat "$CAP_DIR/live")"
	grep -q "func:hold_object$" "$CAP_DIR/live" && fail "records of freed objects: $(cat "$CAP_DIR/live")"
	grep -q "^selection 1 " "$CAP_CTL" || fail "the selection did not survive: $(cat "$CAP_CTL")"
	# Loaded again, the selection marks the new tags.
	insmod "$CAP_MODDIR/alloctag_test.ko" || fail "second insmod failed"
	[ "$(grep -c "func:alloctag_test_init$" "$CAP_DIR/live")" -gt 1 ] || fail "not captured after reload"
	rmmod alloctag_test
	echo clear >"$CAP_CTL"
	grep -q "^capture limit=[0-9]* size=0 used=0 " "$CAP_CTL" || fail "pool left: $(cat "$CAP_CTL")"
}

# Prints the stack of the record of kvasprintf() that process $1 (comm
# capwriter) made, one frame a line, from the report file $2.
string_frames() {
	awk -v who=" tgid=$1 comm=capwriter " '
		/^object / { on = index($0, who) && $0 ~ /func:kvasprintf$/; next }
		/^  / { if (on) print; next }
		{ on = 0 }' "$2"
}

# Fails if the capture report $1 shows a kernel address raw (kptr_restrict
# $2): 16 hex digits starting ffff, where a frame's symbol+offset is short.
no_raw_address() {
	! grep -E '(^|[^0-9a-f])ffff[0-9a-f]{12}' "$CAP_DIR/$1" >/tmp/raw.out ||
		fail "kptr_restrict=$2: raw addresses in $1: $(cat /tmp/raw.out)"
}

# A record can outlive the module its stack runs through: the test module
# makes kasprintf() allocate (a call site of the kernel's, func:kvasprintf)
# from its hold_string file, and keeps the string past its unload
# (leak_string=1; the site is not the module's, so none of its tags stays).
# While it is loaded its frames read as %pS prints them; once it is gone
# kallsyms cannot name them, and they read as %pK prints an address, for the
# reader: zeros at kptr_restrict=2, the address at 1 to root (CAP_SYSLOG),
# hashed at 0 (the tests boot without no_hash_pointers). Never raw where
# the kernel hides addresses, as sprint_symbol()'s "0x%lx" would show them.
test_capture_unloaded_module_frames_follow_kptr_restrict() {
	capture_ready
	restrict=$(cat /proc/sys/kernel/kptr_restrict)
	trap 'echo "$restrict" >/proc/sys/kernel/kptr_restrict; capture_cleanup' EXIT
	echo "add func:kvasprintf" >"$CAP_CTL" || fail "add refused"
	insmod "$CAP_MODDIR/alloctag_test.ko" leak_string=1 || fail "insmod failed"
	echo 1 >/proc/sys/kernel/kptr_restrict
	text=$(cat /sys/module/alloctag_test/sections/.text)
	size=$(cat /sys/module/alloctag_test/coresize)
	case "$text" in 0xffff*) ;; *) fail "the module's .text at $text" ;; esac
	pid=$(capwriter /sys/kernel/debug/alloctag_test/hold_string 1) || fail "capwriter failed"
	string_frames "$pid" "$CAP_DIR/live" >/tmp/frames.loaded
	grep -q "^  hold_string+0x[0-9a-f]*/0x[0-9a-f]* \[alloctag_test\]$" /tmp/frames.loaded &&
		grep -q "^  kasprintf+0x[0-9a-f]*/0x[0-9a-f]*$" /tmp/frames.loaded ||
		fail "frames while loaded: $(cat /tmp/frames.loaded)
$(cat "$CAP_DIR/live")"
	n=$(grep -c ' \[alloctag_test\]$' /tmp/frames.loaded)
	rmmod alloctag_test || fail "rmmod failed"
	for r in 2 1 0; do
		echo "$r" >/proc/sys/kernel/kptr_restrict
		string_frames "$pid" "$CAP_DIR/live" >/tmp/frames
		# The kernel's own frames are still named; the module's are not.
		grep -q "^  kasprintf+0x[0-9a-f]*/0x[0-9a-f]*$" /tmp/frames ||
			fail "kptr_restrict=$r: no kasprintf frame after the unload: $(cat /tmp/frames)"
		if grep -q 'alloctag_test\]$' /tmp/frames; then
			fail "kptr_restrict=$r: the module's frames named after its unload: $(cat /tmp/frames)"
		fi
		[ "$(grep -c '^  0x' /tmp/frames)" = "$n" ] ||
			fail "kptr_restrict=$r: not $n unnamed frames: $(cat /tmp/frames)"
		case $r in
		2) unnamed='0x0000000000000000' ;;
		1) unnamed='0xffff[0-9a-f]{12}' ;;
		0) unnamed='0x(00000000[0-9a-f]{8}|\(____ptrval____\))' ;;
		esac
		if grep '^  0x' /tmp/frames | grep -Evx "  $unnamed" >/tmp/raw.out; then
			fail "kptr_restrict=$r: unnamed frames as $(cat /tmp/raw.out), not $unnamed:
$(cat /tmp/frames)"
		fi
		if [ "$r" = 1 ]; then
			# The address, in the module's memory.
			for a in $(sed -n 's/^  0x//p' /tmp/frames); do
				off=$((0x$a - text))
				[ "$off" -ge 0 ] && [ "$off" -lt "$size" ] ||
					fail "frame 0x$a outside the module's $text + $size"
			done
		else
			no_raw_address live "$r"
			no_raw_address live_stacks "$r"
		fi
	done
}

test_capture_bad_commands_change_nothing() {
	capture_ready
	echo "add func:alloctag_never_called_anywhere" >"$CAP_CTL" || fail "a good add refused"
	before=$(cat "$CAP_CTL")
	# The two whose log lines are checked first: refusals are logged 10 per
	# 5 s at most.
	refuses_each "$CAP_CTL" "limit 0" "limit 5" "add" "add func:" "add x.c:0" "add a b c d e" "remove" \
		"remove x" "remove 1 2" "remove 9" "limit" "limit x" "clear now" "bogus" \
		"add func:alloctag_never_called_anywhere"
	dmesg | grep -q "capture: 'limit 0' refused" || fail "no log line for a refused command"
	# The error reads EBUSY or Error(16), as the kernel names errors or not.
	dmesg | grep -Eq "capture: 'limit 5' refused: (EBUSY|Error\(16\))" || fail "no EBUSY for a limit while on"
	capdrop sys_admin -- sh -c "echo clear >$CAP_CTL" 2>/dev/null &&
		fail "root without CAP_SYS_ADMIN changed capture"
	[ "$(cat "$CAP_CTL")" = "$before" ] || fail "a refused write changed the state"
	[ "$(stat -c %a "$CAP_CTL")" = 600 ] || fail "mode $(stat -c %a "$CAP_CTL")"
	[ "$(stat -c %a "$CAP_DIR/live")" = 400 ] || fail "live mode $(stat -c %a "$CAP_DIR/live")"
	echo clear >"$CAP_CTL"
	echo "limit 16" >"$CAP_CTL" || fail "limit refused while off"
	grep -q "^capture limit=16 size=0 " "$CAP_CTL" || fail "limit not shown"
	echo "limit 4096" >"$CAP_CTL"
	# The next tests find refused commands logged: past the rate limit's
	# 5 s window.
	sleep 6
}

# At most 32 selections (Documentation/capture.rst): the 33rd is ENOSPC,
# logged, and changes nothing.
test_capture_33rd_selection_is_enospc() {
	capture_ready
	enospc_at_33rd "$CAP_CTL" selection capture
	echo clear >"$CAP_CTL"
	grep -q "^selection " "$CAP_CTL" && fail "clear left selections"
	return 0
}

# A site that two selections match belongs to the first; ending that one
# frees the site's records although the other still selects it, and the
# site's objects are recorded again from then on, the ones in between
# counting as untracked (Documentation/capture.rst).
test_capture_two_selections_on_one_site() {
	capture_ready
	insmod "$CAP_MODDIR/alloctag_test.ko" || fail "insmod failed"
	echo "add module:alloctag_test func:hold_object" >"$CAP_CTL" || fail "first add refused"
	echo "add func:hold_object" >"$CAP_CTL" || fail "second add refused"
	grep -q "^site selection=1 live=0 .*func:hold_object$" "$CAP_CTL" ||
		fail "the site is not the first selection's: $(cat "$CAP_CTL")"
	[ "$(grep -c '^site .*func:hold_object$' "$CAP_CTL")" = 1 ] || fail "the site is listed twice: $(cat "$CAP_CTL")"
	pid=$(capwriter "$HOLD" 2) || fail "capwriter failed"
	[ "$(held_objects_of "$pid")" = 2 ] || fail "objects of $pid: $(cat "$CAP_DIR/live")"
	echo "remove 1" >"$CAP_CTL" || fail "remove 1 refused"
	[ "$(held_objects_of "$pid")" = 0 ] || fail "records outlived their selection: $(cat "$CAP_DIR/live")"
	grep -q "^selection 2 sites=1 .* select=func:hold_object$" "$CAP_CTL" ||
		fail "the second selection does not hold the site: $(cat "$CAP_CTL")"
	grep -q "^site selection=2 live=0 .* untracked=2 .*func:hold_object$" "$CAP_CTL" ||
		fail "the 2 objects in between are not untracked: $(cat "$CAP_CTL")"
	pid=$(capwriter "$HOLD" 1) || fail "capwriter failed"
	[ "$(held_objects_of "$pid")" = 1 ] || fail "not recorded again: $(cat "$CAP_DIR/live")"
	capwriter "$HOLD" 0 >/dev/null || fail "freeing failed"
	grep -q "^site selection=2 live=0 .* untracked=0 " "$CAP_CTL" || fail "records left: $(cat "$CAP_CTL")"
}

# Selections come and go, the pool with them, while another process
# allocates and frees at the selected site, a third reads the reports, and
# the module is unloaded and loaded again: no kernel report (run-qemu.sh
# fails the boot on one), and at the end nothing is left. The writer and the
# reader run until the selection changes are done (a stop file), both while
# the module comes and goes: their own failures are counted, not fatal
# (set -e is off in them), and each must have done its part.
test_capture_races_selection_changes_with_frees() {
	capture_ready
	insmod "$CAP_MODDIR/alloctag_test.ko" || fail "insmod failed"
	stop=/tmp/capture-race.stop
	started=/tmp/capture-race.started
	rm -f "$stop" "$started" /tmp/capture-race.writer /tmp/capture-race.reader
	(
		set +e
		ok=0 refused=0
		while [ ! -e "$stop" ]; do
			# The hold file is gone while the module is out (ENOENT at
			# open, or EIO/ENODEV for a file removed under the writer),
			# and refuses opens while the module is going but its exit
			# has not removed the file yet (ENXIO, debugfs's
			# full_proxy_open()): such a refusal is the race's; any
			# other error is a failure.
			if err=$(capwriter "$HOLD" 5 2>&1 >/dev/null); then
				ok=$((ok + 1))
				[ "$ok" != 1 ] || : >"$started"
				err=$(capwriter "$HOLD" 0 2>&1 >/dev/null)
			else
				refused=$((refused + 1))
				# Bounded by attempts, not time: a slow host only
				# makes them slower.
				[ "$ok" != 0 ] || [ "$refused" -lt 1000 ] ||
					{ echo "writer: 1000 refused before the first write went through: $err"; exit 1; }
			fi
			case "$err" in
			'' | *'No such file or directory' | *'Input/output error' | *'No such device' | *'No such device or address') ;;
			*) echo "writer: capwriter failed: $err"; exit 1 ;;
			esac
		done
		echo "$ok $refused" >/tmp/capture-race.writer
		[ "$ok" -gt 0 ] || { echo "writer: no write went through ($refused refused)"; exit 1; }
	) &
	writer=$!
	(
		set +e
		n=0
		while [ ! -e "$stop" ]; do
			cat "$CAP_DIR/live" "$CAP_DIR/live_stacks" "$CAP_DIR/live_processes" "$CAP_CTL" >/dev/null ||
				{ echo "reader: a read failed"; exit 1; }
			n=$((n + 1))
		done
		echo "$n" >/tmp/capture-race.reader
		[ "$n" -gt 0 ] || { echo "reader: no read"; exit 1; }
	) &
	reader=$!
	# The writer's first allocation, so that the race starts with both up:
	# waited for as long as the writer runs, however slow the host.
	while [ ! -e "$started" ] && kill -0 "$writer" 2>/dev/null; do
		sleep 0.05
	done
	[ -e "$started" ] || { touch "$stop"; wait "$writer"; fail "the writer ended before its first allocation"; }
	for i in $(seq 1 40); do
		echo "add module:alloctag_test func:hold_object" >"$CAP_CTL" || { touch "$stop"; fail "add $i refused"; }
		if [ $((i % 4)) = 0 ]; then
			echo "add module:alloctag_test" >"$CAP_CTL" || { touch "$stop"; fail "second add $i refused"; }
		fi
		if [ $((i % 10)) = 0 ]; then
			# Busy while the writer has the hold file open: then it stays.
			rmmod alloctag_test 2>/dev/null || true
			insmod "$CAP_MODDIR/alloctag_test.ko" 2>/dev/null || true
		fi
		echo clear >"$CAP_CTL" || { touch "$stop"; fail "clear $i refused"; }
	done
	# Both sides must still be running at the end of the race, then stop.
	kill -0 "$writer" 2>/dev/null || fail "the writer ended before the race did"
	kill -0 "$reader" 2>/dev/null || fail "the reader ended before the race did"
	touch "$stop"
	wait "$writer" || fail "the writer failed"
	wait "$reader" || fail "the reader failed"
	echo "writer: $(cat /tmp/capture-race.writer) (writes through, refused); reader: $(cat /tmp/capture-race.reader) rounds"
	grep -q "^capture limit=[0-9]* size=0 used=0 " "$CAP_CTL" || fail "state left: $(cat "$CAP_CTL")"
	if grep -q "^object " "$CAP_DIR/live"; then fail "records left"; fi
}

# Prints the calls column of the hold site's /proc/allocinfo line.
hold_calls() {
	awk '$(NF - 1) == "[alloctag_test]" && $NF == "func:hold_object" { print $2 }' /proc/allocinfo
}

# The slab hooks test one key that follows both the sysctl and capture
# (src/capture/keys.rs): with profiling off nothing is charged or recorded,
# with it on again the selected site is recorded, and once capture is off
# the site is charged again without records.
test_rw_capture_follows_the_sysctl() {
	capture_ready
	trap 'capture_cleanup; echo 1 >/proc/sys/vm/mem_profiling' EXIT
	insmod "$CAP_MODDIR/alloctag_test.ko" || fail "insmod failed"
	echo "add module:alloctag_test func:hold_object" >"$CAP_CTL" || fail "add refused"
	echo 0 >/proc/sys/vm/mem_profiling
	calls=$(hold_calls)
	[ -n "$calls" ] || fail "no hold_object line in /proc/allocinfo"
	pid=$(capwriter "$HOLD" 2) || fail "capwriter failed"
	[ "$(held_objects_of "$pid")" = 0 ] || fail "recorded with profiling off: $(cat "$CAP_DIR/live")"
	[ "$(hold_calls)" = "$calls" ] || fail "charged with profiling off: $calls -> $(hold_calls)"
	capwriter "$HOLD" 0 >/dev/null || fail "freeing failed"
	echo 1 >/proc/sys/vm/mem_profiling
	pid=$(capwriter "$HOLD" 3) || fail "capwriter failed"
	[ "$(held_objects_of "$pid")" = 3 ] || fail "not recorded with profiling on: $(cat "$CAP_DIR/live")"
	[ "$(hold_calls)" = $((calls + 3)) ] || fail "not charged: $calls -> $(hold_calls)"
	capwriter "$HOLD" 0 >/dev/null || fail "freeing failed"
	[ "$(held_objects_of "$pid")" = 0 ] || fail "freed objects still listed"
	[ "$(hold_calls)" = "$calls" ] || fail "not uncharged: $calls -> $(hold_calls)"
	echo clear >"$CAP_CTL"
	capwriter "$HOLD" 2 >/dev/null || fail "capwriter failed"
	[ "$(hold_calls)" = $((calls + 2)) ] || fail "not charged after capture: $calls -> $(hold_calls)"
	capwriter "$HOLD" 0 >/dev/null || fail "freeing failed"
	[ "$(hold_calls)" = "$calls" ] || fail "not uncharged after capture: $calls -> $(hold_calls)"
}

# A page's record is made before the page is charged (post_alloc_hook()):
# profiling turned off between the two would leave pages with a record and
# no charge, whose free removes nothing, and the record would stay until its
# site is deselected. A stress: hold_page_list allocates pages 64 at a time
# at a selected site (hold_exact()), up to 65536, while another task turns
# vm.mem_profiling off and on 10 times (each flip patches every hook, batch
# by batch, so for a while the capture hook may see profiling on and the
# charge off); then profiling is on and every page is freed, and no record
# of them may remain. (Pages are freed only with profiling on: a
# page freed with it off keeps its charge and its record, as in 6.12 the
# charge.)
test_rw_capture_no_page_record_without_a_charge() {
	capture_ready
	toggled=/tmp/capture-toggle.done
	trap 'wait; capture_cleanup; echo 1 >/proc/sys/vm/mem_profiling; echo "limit 4096" >"$CAP_CTL"' EXIT
	rm -f "$toggled" /tmp/capture-toggle.rounds
	echo "limit 65536" >"$CAP_CTL" || fail "limit refused"
	insmod "$CAP_MODDIR/alloctag_test.ko" || fail "insmod failed"
	echo "add module:alloctag_test func:hold_exact" >"$CAP_CTL" || fail "add refused"
	(
		set +e
		for i in 1 2 3 4 5 6 7 8 9 10; do
			echo 0 >/proc/sys/vm/mem_profiling
			echo 1 >/proc/sys/vm/mem_profiling
			echo "$i" >/tmp/capture-toggle.rounds
		done
		: >"$toggled"
	) &
	pages=0
	# At least one batch, however soon the toggles end.
	while :; do
		echo 64 >$HOLD_LIST || fail "hold_page_list refused after $pages pages"
		pages=$((pages + 64))
		[ ! -e "$toggled" ] && [ "$pages" -lt 65536 ] || break
	done
	wait
	echo 1 >/proc/sys/vm/mem_profiling
	held=$(grep -c "^object .* kind=pages .*func:hold_exact$" "$CAP_DIR/live" || true)
	echo 0 >$HOLD_LIST || fail "freeing failed"
	left=$(grep -c "^object .* kind=pages .*func:hold_exact$" "$CAP_DIR/live" || true)
	rounds=$(cat /tmp/capture-toggle.rounds 2>/dev/null || echo 0)
	guest_note "$pages pages allocated, $rounds sysctl off-on rounds: $held page records, $left left after the frees"
	[ "$left" = 0 ] || fail "$left records of freed pages left (of $held, $pages pages): $(grep -m 3 "^object .*func:hold_exact$" "$CAP_DIR/live")"
	[ "$held" -gt 0 ] || fail "no page recorded"
}

# The control file opened only to write makes no listing, and one opened to
# read counts the records in place: neither needs room for the records.
# 32768 records of a tmpfs's pages (shmem_alloc_folio()); each open in a
# memory cgroup of its own, whose memory.peak says what it charged; then in
# a cgroup of 1 MiB, with an opener that the OOM killer may not kill, a read
# and "clear" must go through, with no cgroup OOM (until 2026-11-28 each
# open copied every record, about 90 bytes each: 3 MiB here, and failed
# with ENOMEM there). Memory cgroups are in the nodebug kernel only: the
# test_rw_ prefix runs it there.
test_rw_capture_opens_need_no_room_for_records() {
	capture_ready
	cg=/sys/fs/cgroup
	fill=/tmp/capture-fill
	[ -e $cg/cgroup.controllers ] || mount -t cgroup2 none $cg || fail "cannot mount cgroup2"
	grep -qw memory $cg/cgroup.controllers || fail "no memory controller: $(cat $cg/cgroup.controllers)"
	echo +memory >$cg/cgroup.subtree_control || fail "cannot enable the memory controller"
	mkdir -p $fill
	mount -t tmpfs -o size=256m,huge=never none $fill || fail "cannot mount tmpfs"
	level=$(cut -f 1 /proc/sys/kernel/printk)
	trap 'dmesg -n "$level"; capture_cleanup; rm -f $fill/f; umount $fill; rmdir $cg/alloctag-cap-* 2>/dev/null; echo "limit 4096" >"$CAP_CTL"' EXIT
	echo "limit 65536" >"$CAP_CTL" || fail "limit refused"
	echo "add func:shmem_alloc_folio" >"$CAP_CTL" || fail "add refused"
	dd if=/dev/zero of=$fill/f bs=1M count=128 2>/dev/null || fail "cannot fill $fill"
	used=$(sed -n 's/^capture limit=[0-9]* size=[0-9]* used=\([0-9]*\) .*/\1/p' "$CAP_CTL")
	[ "${used:-0}" -ge 32768 ] || fail "not 32768 records: $(head -1 "$CAP_CTL")"
	# What each open charged at its peak, in a fresh cgroup, less what the
	# same shell charged opening /dev/null so (charges go in batches of 64
	# pages: the figures are to 256 KiB).
	for how in "</dev/null" "<$CAP_CTL" ">/dev/null" ">$CAP_CTL"; do
		c=$cg/alloctag-cap-open
		mkdir $c
		# shellcheck disable=SC2016 # expanded by the inner shell
		peak=$(sh -c 'echo $$ >$1/cgroup.procs && eval "exec 3$2" && read -r p <$1/memory.peak && echo $p' sh $c "$how") ||
			fail "open $how in a cgroup failed"
		rmdir $c
		echo "open $how: memory.peak $peak"
		case "$how" in
		"</dev/null") base_read=$peak ;;
		"<$CAP_CTL") read_peak=$((peak - base_read)) ;;
		">/dev/null") base_write=$peak ;;
		">$CAP_CTL") write_peak=$((peak - base_write)) ;;
		esac
	done
	guest_note "$used records: a reading open of the control file charged $read_peak bytes at its peak, a writing open $write_peak"
	# In 1 MiB: the read, then clear.
	c=$cg/alloctag-cap-small
	mkdir $c
	echo 1048576 >$c/memory.max || fail "cannot set memory.max"
	echo "alloctag-test: no cgroup OOM expected" >/dev/kmsg
	dmesg -n 1
	# shellcheck disable=SC2016 # expanded by the inner shell
	out=$(sh -c 'echo $$ >$1/cgroup.procs && echo -1000 >/proc/self/oom_score_adj &&
		{ read -r line <$2 && echo "read: $line"; echo clear >$2 && echo cleared; }' sh $c "$CAP_CTL" 2>&1) || true
	dmesg -n "$level"
	events=$(tr '\n' ' ' <$c/memory.events)
	echo "in 1 MiB: $out; $events"
	echo "$out" | grep -q "^read: capture limit=65536 size=65536 used=" || fail "no read in 1 MiB: $out; $events"
	echo "$out" | grep -q "^cleared$" || fail "no clear in 1 MiB: $out; $events"
	echo "$events" | grep -q "oom 0 " || fail "a cgroup OOM in 1 MiB: $events"
	grep -q "^capture limit=65536 size=0 used=0 " "$CAP_CTL" || fail "clear left a pool: $(head -1 "$CAP_CTL")"
	grep -q "^selection " "$CAP_CTL" && fail "clear left a selection: $(cat "$CAP_CTL")"
	return 0
}

# Lockdown, raised at run time to confidentiality (as a distribution raises
# it once what it needs is loaded): no capture report opens, not even to show
# records made before it rose (debugfs itself lets 0400 files without ioctl
# or mmap open under lockdown), and the control file refuses writes;
# /proc/allocinfo stays readable, as in 6.12. Lockdown cannot be lowered:
# its own boot (tests/guest/boots.txt, lockdown).
test_boot_lockdown_refuses_capture_reports() {
	capture_pipe_pages 4
	lockdown=/sys/kernel/security/lockdown
	[ -e $lockdown ] || mount -t securityfs none /sys/kernel/security || fail "no securityfs"
	echo confidentiality >$lockdown || fail "lockdown refused: $(cat $lockdown)"
	grep -q "\[confidentiality\]" $lockdown || fail "lockdown: $(cat $lockdown)"
	for f in live live_stacks live_processes; do
		if out=$(cat "$CAP_DIR/$f" 2>&1); then
			fail "$f opened under lockdown: $(echo "$out" | head -3)"
		fi
		echo "$out" | grep -q "Operation not permitted" || fail "$f: $out"
	done
	if echo clear 2>/dev/null >"$CAP_CTL"; then fail "the control file took a write"; fi
	head -1 /proc/allocinfo | grep -q "^allocinfo - version:" || fail "/proc/allocinfo: $(head -1 /proc/allocinfo)"
	# The status file holds no address: read-only, debugfs opens it still.
	grep -q "^page_tags: page_flags$" /sys/kernel/debug/alloctag/status ||
		fail "status under lockdown: $(cat /sys/kernel/debug/alloctag/status 2>&1)"
	memhold_stop
}

# alloctag.capture=: selections made at boot, all or none (boots
# capture-boot and capture-bad of tests/guest/boots.txt). Given several
# times, the values count as one, joined by ';': capture-boot gives two
# selections, an empty value (which adds nothing), then a third.
test_boot_capture_selections_in_force_at_boot() {
	capture_files
	grep -q "capture: alloctag.capture: 3 selections in force" /tmp/dmesg.boot ||
		fail "no log line: $(grep alloctag.capture /tmp/dmesg.boot)"
	grep -q "^selection 1 sites=0 unmarked=0 select=module:alloctag_test$" "$CAP_CTL" &&
		grep -q "^selection 2 sites=0 unmarked=0 select=func:alloctag_never_called_anywhere$" "$CAP_CTL" &&
		grep -q "^selection 3 sites=0 unmarked=0 select=func:alloctag_never_called_either$" "$CAP_CTL" ||
		fail "the boot's selections: $(cat "$CAP_CTL")"
	# A module loaded later is marked as it loads, and captured.
	insmod "$CAP_MODDIR/alloctag_test.ko" || fail "insmod failed"
	trap 'capwriter "$HOLD" 0 >/dev/null; rmmod alloctag_test' EXIT
	pid=$(capwriter "$HOLD" 2) || fail "capwriter failed"
	[ "$(held_objects_of "$pid")" = 2 ] || fail "objects of $pid: $(cat "$CAP_DIR/live")"
	grep -Eq "^selection 1 sites=[1-9][0-9]* " "$CAP_CTL" || fail "the module's sites: $(cat "$CAP_CTL")"
}

# A value refused selects nothing, not even what it had put in force
# before the refusal, nor what a later value gives, and says so, once: in
# capture-bad the first value's second selection does not parse (EINVAL),
# and a valid value follows; in capture-dup its third repeats its first
# (EEXIST), after two were in force.
test_boot_capture_bad_value_selects_nothing() {
	capture_files
	case "$(cat /proc/cmdline)" in
	*bogus:*) err=-22 ;;
	*) err=-17 ;;
	esac
	grep -q "capture: alloctag.capture: refused (error $err); nothing selected" /tmp/dmesg.boot ||
		fail "no log line: $(grep alloctag.capture /tmp/dmesg.boot)"
	[ "$(grep -c "capture: alloctag.capture: " /tmp/dmesg.boot)" = 1 ] ||
		fail "not one log line: $(grep alloctag.capture /tmp/dmesg.boot)"
	if grep -q "^selection" "$CAP_CTL"; then fail "selected: $(cat "$CAP_CTL")"; fi
	grep -q "^capture limit=[0-9]* size=0 used=0 " "$CAP_CTL" || fail "a pool: $(head -1 "$CAP_CTL")"
	# The control file still takes a good selection.
	echo "add module:alloctag_test" >"$CAP_CTL" || fail "add refused"
	echo clear >"$CAP_CTL"
}
