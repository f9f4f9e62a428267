# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Per-call-site fault injection (/sys/kernel/debug/alloctag/fail) and the
# error-path sweeper. test_inject_* run only in the boot that allows the
# allocation-failure reports an injected vmalloc failure makes
# (tests/guest/boots.txt).

FAIL_CTL=/sys/kernel/debug/alloctag/fail
MODDIR=/lib/modules
SWEEP=/alloctag/sweep-error-paths.sh
# One finit_module() per load: busybox insmod retries a failed one.
export INSMOD=loadmod

fail_ctl_ready() {
	[ -e "$FAIL_CTL" ] || mount -t debugfs none /sys/kernel/debug
	[ -w "$FAIL_CTL" ] || fail "no $FAIL_CTL"
	echo clear >"$FAIL_CTL"
	# Pass or fail, leave no rule armed and no test module loaded.
	trap 'echo clear >"$FAIL_CTL" 2>/dev/null; rmmod alloctag_errpath 2>/dev/null || true' EXIT
}

# Prints the FILE:LINE of the first line of /proc/allocinfo of module $1
# whose function is $2.
site_of() {
	awk -v m="[$1]" -v f="func:$2" '$4 == m && $5 == f { print $3; exit }' "$PROC_ALLOCINFO"
}

# Prints the value of key $2 in the rule line of rule $1.
rule_field() {
	awk -v id="$1" -v k="$2=" '$1 == "rule" && $2 == id {
		for (i = 3; i <= NF; i++) if (index($i, k) == 1) { print substr($i, length(k) + 1); exit } }' "$FAIL_CTL"
}

test_inject_bad_commands_change_nothing() {
	fail_ctl_ready
	echo "add func:alloctag_never_called_anywhere times=2" >"$FAIL_CTL" || fail "a good add refused"
	refuses_each "$FAIL_CTL" "add" "add func:" "add module:" "add x.c:0" "add x.c:y" "add a b c d e" \
		"add func:f probability=101" "add func:f interval=0" "add func:f times=-2" \
		"add func:f verbose=3" "add func:f nosuch=1" "add func:f pid=-1" \
		"remove" "remove 0" "remove 33" "remove x" "remove 1 2" "clear now" "bogus" \
		"add func:alloctag_never_called_anywhere"
	dmesg | grep -q "fail: 'add func:f probability=101' refused" || fail "no log line for a refused command"
	echo "remove 5" >"$FAIL_CTL" 2>/dev/null && fail "removing a rule that is not armed succeeded"
	echo "remove 1" >"$FAIL_CTL" || fail "remove 1 refused"
	[ -z "$(cat "$FAIL_CTL")" ] || fail "rule 1 still listed"
	# The next tests find refused commands logged: past the rate limit's
	# 5 s window.
	sleep 6
}

# Refused and oversized commands are logged rate-limited, as
# pr_warn_ratelimited() limits a line (printk's defaults: 10 per 5 s), and
# the count left out is said when lines come again: root's writes, but a
# loop of them must not flood the log (Documentation/alloctag.rst, "Who may
# open what, and what an open costs").
test_inject_refused_commands_logged_rate_limited() {
	fail_ctl_ready
	# Past the window of the refusals before.
	sleep 6
	refused="fail: 'add func:alloctag_ratelimit_probe probability=101' refused"
	long="fail: command longer than 1024 bytes refused"
	# grep -c exits 1 when it counts none.
	r0=$(dmesg | grep -c "$refused" || true)
	l0=$(dmesg | grep -c "$long" || true)
	text=$(head -c 1100 /dev/zero | tr '\0' x)
	t0=$(date +%s)
	i=0
	while [ $i -lt 100 ]; do
		echo "add func:alloctag_ratelimit_probe probability=101" >"$FAIL_CTL" 2>/dev/null &&
			fail "a bad command was accepted"
		# One write() of 1100 bytes (echo's stdio might split it).
		got=$(rawwrite "$FAIL_CTL" "$text") || true
		[ "$got" = EINVAL ] || fail "a command of 1100 bytes: $got, expected EINVAL"
		i=$((i + 1))
	done
	t1=$(date +%s)
	r=$(($(dmesg | grep -c "$refused" || true) - r0))
	l=$(($(dmesg | grep -c "$long" || true) - l0))
	# 10 lines per 5 s window, each message its own limit.
	bound=$((10 * ((t1 - t0) / 5 + 1)))
	[ "$r" -gt 0 ] || fail "no refused command logged"
	[ "$l" -gt 0 ] || fail "no oversized command logged"
	echo "$r refused and $l oversized commands logged of 100 each in $((t1 - t0)) s"
	[ "$r" -le "$bound" ] || fail "$r log lines for 100 refused commands in $((t1 - t0)) s (at most $bound)"
	[ "$l" -le "$bound" ] || fail "$l log lines for 100 oversized commands in $((t1 - t0)) s (at most $bound)"
	# The next lines, in a new window, say how many were left out.
	sleep 6
	echo "add func:alloctag_ratelimit_probe probability=101" >"$FAIL_CTL" 2>/dev/null || true
	rawwrite "$FAIL_CTL" "$text" >/dev/null || true
	dmesg | grep -Eq "alloctag: refused commands: [1-9][0-9]* callbacks suppressed" ||
		fail "no 'callbacks suppressed' line for refused commands"
	dmesg | grep -Eq "alloctag: oversized commands: [1-9][0-9]* callbacks suppressed" ||
		fail "no 'callbacks suppressed' line for oversized commands"
	[ -z "$(cat "$FAIL_CTL")" ] || fail "a refused command changed the rules"
}

# What a user can make the fault hook and the control file log is bounded and
# unforgeable (Documentation/alloctag.rst): an armed rule with the defaults
# (verbose=1, times=-1) on a site every pipe write reaches logs its failures
# rate-limited, as failslab's fail_dump() does, saying how many it
# suppressed; a refused command is logged escaped, one line, whatever
# newlines it holds.
test_inject_logs_rate_limited_and_escaped() {
	fail_ctl_ready
	# grep -c exits 1 when it counts none.
	before=$(dmesg | grep -c "injected a failure at fs/pipe.c" || true)
	t0=$(date +%s)
	# Armed, every pipe fails its first write: no command substitution until
	# the rule is cleared.
	echo "add func:pipe_write" >"$FAIL_CTL" || fail "add func:pipe_write refused"
	i=0
	while [ $i -lt 300 ]; do
		# A new pipe each time: its first write allocates a page, which fails.
		echo x 2>/dev/null | cat >/dev/null
		i=$((i + 1))
	done
	echo clear >"$FAIL_CTL"
	t1=$(date +%s)
	after=$(dmesg | grep -c "injected a failure at fs/pipe.c" || true)
	lines=$((after - before))
	# printk's default: 10 lines per 5 s, then a "callbacks suppressed" line.
	bound=$((10 * ((t1 - t0) / 5 + 1)))
	[ "$lines" -gt 0 ] || fail "no failure logged: was pipe_write's page allocation reached?"
	[ "$lines" -le "$bound" ] || fail "$lines log lines for 300 failures in $((t1 - t0)) s (at most $bound)"
	dmesg | grep -q "callbacks suppressed" || fail "no 'callbacks suppressed' line"
	printf 'add bogus\nforged: kernel message' >"$FAIL_CTL" 2>/dev/null && fail "a bogus command was accepted"
	dmesg | grep -q '^\[[^]]*\] forged: kernel message' && fail "a refused command forged a log line"
	dmesg | grep -qF "'add bogus\\nforged: kernel message' refused" || fail "the refused command is not logged escaped"
	# The next tests find failures logged: past the rate limit's 5 s window.
	sleep 6
}

# At most 32 rules (Documentation/alloctag.rst): the 33rd is ENOSPC, changes
# nothing and is logged; a freed slot takes a rule again.
test_inject_33rd_rule_is_enospc() {
	fail_ctl_ready
	enospc_at_33rd "$FAIL_CTL" rule fail verbose=0
	echo "remove 7" >"$FAIL_CTL" || fail "remove 7 refused"
	echo "add func:alloctag_never_called_33 verbose=0" >"$FAIL_CTL" || fail "no rule after a slot was freed"
	[ "$(grep -c '^rule ' "$FAIL_CTL")" = 32 ] || fail "not 32 rules after the slot was taken again"
	echo clear >"$FAIL_CTL"
	[ -z "$(cat "$FAIL_CTL")" ] || fail "clear left rules"
}

test_inject_needs_cap_sys_admin() {
	fail_ctl_ready
	capdrop sys_admin -- sh -c "echo 'add func:f' >$FAIL_CTL" 2>/dev/null &&
		fail "root without CAP_SYS_ADMIN armed a rule"
	[ -z "$(cat "$FAIL_CTL")" ] || fail "a refused write changed the rules"
	capdrop -k sys_admin dac_override -- sh -c "echo 'add func:f' >$FAIL_CTL" ||
		fail "CAP_SYS_ADMIN alone could not arm"
	[ "$(stat -c %a "$FAIL_CTL")" = 600 ] || fail "mode $(stat -c %a "$FAIL_CTL")"
}

test_inject_selection_applies_at_module_load() {
	fail_ctl_ready
	ko=$MODDIR/alloctag_errpath.ko
	loadmod "$ko" || fail "plain load failed"
	site=$(site_of alloctag_errpath errpath_init)
	rmmod alloctag_errpath
	[ -n "$site" ] || fail "no site of alloctag_errpath"
	# Armed while the module is not loaded: its tags are marked as it loads.
	echo "add module:alloctag_errpath $site times=1" >"$FAIL_CTL" || fail "arming $site refused"
	out=$(loadmod "$ko" 2>&1) && fail "the load did not fail"
	echo "$out" | grep -q "Cannot allocate memory" || fail "not ENOMEM: $out"
	[ "$(rule_field 1 injected)" = 1 ] || fail "injected $(rule_field 1 injected)"
	grep -q "^site " "$FAIL_CTL" && fail "a site of the unloaded module is still listed"
	dmesg | grep -q "injected a failure at $site \[alloctag_errpath\]" || fail "no log line"
	# times=1 is spent: the next load succeeds, and the rule stays armed.
	loadmod "$ko" || fail "the load after the one failure failed"
	grep -q "^site rule=1 injected=0 $site \[alloctag_errpath\]" "$FAIL_CTL" ||
		fail "the reloaded module's site is not armed: $(cat "$FAIL_CTL")"
	rmmod alloctag_errpath
	echo clear >"$FAIL_CTL"
	[ -z "$(cat "$FAIL_CTL")" ] || fail "clear left rules"
}

test_inject_only_the_armed_line_fails() {
	fail_ctl_ready
	loadmod "$MODDIR/alloctag_errpath.ko" || fail "plain load failed"
	sites=$(awk '$4 == "[alloctag_errpath]" { print $3 }' "$PROC_ALLOCINFO")
	rmmod alloctag_errpath
	# The optional allocation (the last site) fails every time; the module
	# loads, degraded, and the other sites allocate.
	last=$(echo "$sites" | sort -t: -k2 -n | tail -n 1)
	echo "add $last" >"$FAIL_CTL" || fail "arming $last refused"
	loadmod "$MODDIR/alloctag_errpath.ko" || fail "load failed with $last armed"
	dmesg | grep -q "running without a cache" || fail "the optional allocation did not fail"
	for s in $sites; do
		[ "$s" = "$last" ] && continue
		calls=$(awk -v s="$s" '$3 == s { print $2 }' "$PROC_ALLOCINFO")
		[ "${calls:-0}" -ge 1 ] || fail "site $s has no allocation"
	done
	rmmod alloctag_errpath
	[ "$(rule_field 1 injected)" = 1 ] || fail "injected $(rule_field 1 injected)"
}

# With profiling off an armed C call site still fails: while a rule is
# armed call sites make their tags current (src/keys.rs), as when profiling
# is on; with neither, they do not (without the debug checks), and the
# rule's removal ends it. test_rw_: nodebug, where the sysctl can be written.
test_rw_fail_with_profiling_off() {
	fail_ctl_ready
	trap 'echo clear >"$FAIL_CTL" 2>/dev/null; echo 1 >"$SYSCTL" 2>/dev/null; rmmod alloctag_test 2>/dev/null || true' EXIT
	insmod "$PROBE_MODULE" || fail "insmod $PROBE_MODULE failed"
	set_sysctl 0 || return 1
	capwriter "$PROBE_HOLD" 1 >/dev/null || fail "an allocation failed with nothing armed"
	capwriter "$PROBE_HOLD" 0 >/dev/null || fail "freeing failed"
	echo "add module:alloctag_test func:hold_object" >"$FAIL_CTL" || fail "arming refused"
	if capwriter "$PROBE_HOLD" 1 >/dev/null 2>&1; then
		fail "the armed site allocated with profiling off"
	fi
	[ "$(rule_field 1 injected)" = 1 ] || fail "injected $(rule_field 1 injected)"
	echo clear >"$FAIL_CTL" || fail "clear refused"
	capwriter "$PROBE_HOLD" 1 >/dev/null || fail "an allocation failed after the rule went"
	capwriter "$PROBE_HOLD" 0 >/dev/null || fail "freeing failed"
	counters_frozen || return 1
	set_sysctl 1
}

test_inject_rust_module_fails_cleanly() {
	fail_ctl_ready
	echo "add module:alloctag_rust_sample times=1" >"$FAIL_CTL" || fail "arming refused"
	out=$(loadmod "$MODDIR/alloctag_rust_sample.ko" 2>&1) && fail "the Rust module loaded"
	echo "$out" | grep -q "Cannot allocate memory" || fail "not ENOMEM: $out"
	dmesg | grep -q "module alloctag_rust_sample has" && fail "the failed load leaked"
	[ "$(rule_field 1 injected)" = 1 ] || fail "injected $(rule_field 1 injected)"
}

# Prints the row of site $2 (FILE:LINE, or an extended regular expression
# matching it) of the sweep table in file $1.
sweep_row() {
	grep -E "^$2 " "$1" || true
}

test_inject_sweep_passes_correct_modules() {
	fail_ctl_ready
	for ko in alloctag_errpath alloctag_rust_sample alloctag_rust_plain rng-core; do
		rc=0
		"$SWEEP" "$MODDIR/$ko.ko" >/tmp/sweep.out 2>&1 || rc=$?
		cat /tmp/sweep.out
		[ "$rc" = 0 ] || fail "sweep of $ko exited $rc"
		# Each sweep reached a site and made its load fail or degrade: a
		# sweep where nothing was injected tested nothing.
		grep -Eq ' (load failed cleanly|ran degraded)$' /tmp/sweep.out ||
			fail "the sweep of $ko injected no failure"
	done
}

# A module none of whose sites a plain load reaches (alloctag_holder
# allocates only when another module hands it an object): the sweep injects
# nothing, which fails (exit 3) unless -a allows it.
test_inject_sweep_fails_when_no_site_is_reached() {
	fail_ctl_ready
	rc=0
	"$SWEEP" "$MODDIR/alloctag_holder.ko" >/tmp/sweep.out 2>&1 || rc=$?
	cat /tmp/sweep.out
	[ "$rc" = 3 ] || fail "sweep exit $rc with no site reached, expected 3"
	grep -q "no site was reached" /tmp/sweep.out || fail "the sweep does not say that nothing was reached"
	rc=0
	"$SWEEP" -a "$MODDIR/alloctag_holder.ko" >/tmp/sweep.out 2>&1 || rc=$?
	cat /tmp/sweep.out
	[ "$rc" = 0 ] || fail "sweep -a exit $rc, expected 0"
	rows=$(grep -c 'alloctag_holder\.c:[0-9]* ' /tmp/sweep.out || true)
	[ "$rows" -ge 1 ] || fail "no row of alloctag_holder.c"
	[ "$(grep -c ' not reached$' /tmp/sweep.out)" = "$rows" ] || fail "a row was reached"
}

# The sweeper's -p (module parameters) and -w (a workload run after each
# load) reach the sites that a plain load does not: alloctag_test's
# cache_object() (only with cache=1) and hold_object() (only when its debugfs
# hold file is written).
test_inject_sweep_params_and_workload_reach_their_sites() {
	fail_ctl_ready
	ko=$MODDIR/alloctag_test.ko
	loadmod "$ko" || fail "plain load failed"
	cache_site=$(site_of alloctag_test cache_object)
	hold_site=$(site_of alloctag_test hold_object)
	rmmod alloctag_test
	[ -n "$cache_site" ] || fail "no cache_object site"
	[ -n "$hold_site" ] || fail "no hold_object site"
	"$SWEEP" "$ko" >/tmp/sweep.out 2>&1 || fail "plain sweep failed: $(cat /tmp/sweep.out)"
	cat /tmp/sweep.out
	sweep_row /tmp/sweep.out "$cache_site" | grep -q ' not reached$' || fail "cache_object reached without cache=1"
	sweep_row /tmp/sweep.out "$hold_site" | grep -q ' not reached$' || fail "hold_object reached without a workload"
	# -p cache=1: the cache object's allocation fails, and so does the load.
	"$SWEEP" -p cache=1 "$ko" >/tmp/sweep.out 2>&1 || fail "sweep -p cache=1 failed: $(cat /tmp/sweep.out)"
	cat /tmp/sweep.out
	sweep_row /tmp/sweep.out "$cache_site" | grep -q ' 1  *failed: .* load failed cleanly$' ||
		fail "cache_object with -p cache=1: $(sweep_row /tmp/sweep.out "$cache_site")"
	# -w: the workload's write fails its allocation; the module stays loaded.
	"$SWEEP" -w "capwriter /sys/kernel/debug/alloctag_test/hold 2" "$ko" >/tmp/sweep.out 2>&1 ||
		fail "sweep -w failed: $(cat /tmp/sweep.out)"
	cat /tmp/sweep.out
	sweep_row /tmp/sweep.out "$hold_site" | grep -q ' 1  *loaded  *ran degraded$' ||
		fail "hold_object with -w: $(sweep_row /tmp/sweep.out "$hold_site")"
}

# What -w and -p do at each load (scripts/sweep-error-paths.sh): the
# workload runs after every load that succeeded, the listing load's
# included, and after no failed one, each time with the module loaded with
# -p's parameters. The workload records the module's cache parameter (Y with
# cache=1), or "absent" with the module not loaded.
test_inject_sweep_runs_the_workload_after_each_load_with_the_params() {
	fail_ctl_ready
	rm -f /tmp/sweep-wl
	"$SWEEP" -p cache=1 \
		-w "{ cat /sys/module/alloctag_test/parameters/cache || echo absent; } >>/tmp/sweep-wl" \
		"$MODDIR/alloctag_test.ko" >/tmp/sweep.out 2>&1 || fail "sweep failed: $(cat /tmp/sweep.out)"
	cat /tmp/sweep.out
	loaded=$(grep -Ec '^[^ ]+:[0-9]+ +[0-9]+ +loaded( |$)' /tmp/sweep.out || true)
	failed=$(grep -Ec '^[^ ]+:[0-9]+ +[0-9]+ +failed: ' /tmp/sweep.out || true)
	echo "rows: $loaded loaded, $failed failed; workload runs: $(wc -l </tmp/sweep-wl)"
	# Both kinds of row, or the count below would not tell them apart.
	[ "$loaded" -ge 1 ] || fail "no row loaded"
	[ "$failed" -ge 1 ] || fail "no row failed its load"
	[ "$(wc -l </tmp/sweep-wl)" = $((loaded + 1)) ] ||
		fail "the workload ran $(wc -l </tmp/sweep-wl) times, expected $((loaded + 1)) (the listing load and each loaded row)"
	[ "$(sort -u /tmp/sweep-wl)" = Y ] || fail "a load without cache=1: $(sort /tmp/sweep-wl | uniq -c)"
}

test_inject_sweep_catches_the_leak() {
	fail_ctl_ready
	rc=0
	out=$("$SWEEP" "$MODDIR/alloctag_errpath_leaky.ko") || rc=$?
	echo "$out"
	[ "$rc" = 1 ] || fail "sweep exit $rc, expected 1"
	# Exactly the second allocation's row (alloc_pages) is the leak.
	[ "$(echo "$out" | grep -c 'LEAK$')" = 1 ] || fail "not exactly one leak"
	echo "$out" | grep "LEAK$" | grep -q "alloctag_errpath.c:" || fail "the leak row names no site"
	echo "$out" | grep -q "load failed cleanly" || fail "no clean row"
}

test_inject_cli_arms_lists_and_removes() {
	fail_ctl_ready
	[ -x /bin/allocinfo ] || fail "no /bin/allocinfo"
	out=$(allocinfo fail add module:alloctag_errpath func:errpath_init --times 2 --fault-verbosity 0) ||
		fail "add: $out"
	echo "$out" | grep -q "rule 1: module:alloctag_errpath func:errpath_init" || fail "add printed: $out"
	loadmod "$MODDIR/alloctag_errpath.ko" 2>/dev/null && fail "the load did not fail"
	json=$(allocinfo fail list --json) || fail "list failed"
	echo "$json" | grep -q '"injected":1' || fail "list: $json"
	allocinfo fail list | grep -q "module:alloctag_errpath func:errpath_init" || fail "table"
	allocinfo fail add module:alloctag_errpath func:errpath_init >/dev/null 2>&1 &&
		fail "the same selection armed twice"
	allocinfo fail add func:x --probability 101 >/dev/null 2>&1 && fail "probability 101 accepted"
	allocinfo fail remove --all || fail "remove --all failed"
	[ -z "$(cat "$FAIL_CTL")" ] || fail "rules left"
}

# Loads and unloads race rules that arm, overlap and go. The module's error
# path is correct, so whatever fails, nothing may leak, and lockdep and KASAN
# watch the marks, the slots and the static key. Both outcomes must be seen,
# loads that an injected failure failed (ENOMEM: the module's allocations
# fail only when a rule says so) and loads that succeeded, and the rules must
# have counted failures injected: each rule's injected= is read just before
# it goes (a lower bound: a failure injected between the read and the
# removal is not counted). Every fourth round of rules waits, with none
# armed, for two loads to end, so that one load at least meets no rule. The
# loads go on until all of that was seen, 30 of them at least and 150 at
# most, and the rules change for as long as the loads go on.
test_inject_rules_change_while_modules_load() {
	fail_ctl_ready
	ko=$MODDIR/alloctag_errpath.ko
	race=/tmp/inject-race
	rm -rf "$race"
	mkdir -p "$race"
	echo 0 >"$race/injected"
	echo "0 0 0" >"$race/loads"
	(
		trap ': >"$race/done"' EXIT
		i=0 ok=0 failed=0
		while :; do
			if loadmod "$ko" 2>"$race/err"; then
				ok=$((ok + 1))
				rmmod alloctag_errpath || { echo "load $i: rmmod failed" >"$race/error"; exit 1; }
			elif grep -q "Cannot allocate memory" "$race/err"; then
				failed=$((failed + 1))
			else
				echo "load $i: $(cat "$race/err")" >"$race/error"
				exit 1
			fi
			i=$((i + 1))
			echo "$i $ok $failed" >"$race/loads.new"
			mv "$race/loads.new" "$race/loads"
			read -r injected <"$race/injected"
			[ "$i" -lt 30 ] || [ "$ok" = 0 ] || [ "$failed" = 0 ] || [ "$injected" = 0 ] || break
			[ "$i" -lt 150 ] || break
		done
	) &
	loader=$!
	# Ends the loads when a rule change failed, before the test fails.
	race_stop() {
		kill "$loader" 2>/dev/null || true
		wait "$loader" 2>/dev/null || true
	}
	rounds=0 injected=0
	while [ ! -e "$race/done" ]; do
		rounds=$((rounds + 1))
		echo "add module:alloctag_errpath probability=50 verbose=0" >"$FAIL_CTL" ||
			{ race_stop; fail "round $rounds: add refused"; }
		echo "add func:errpath_init interval=2 verbose=0" >"$FAIL_CTL" ||
			{ race_stop; fail "round $rounds: overlapping add refused"; }
		n1=$(rule_field 1 injected)
		echo "remove 1" >"$FAIL_CTL" || { race_stop; fail "round $rounds: remove refused"; }
		n2=$(rule_field 2 injected)
		echo clear >"$FAIL_CTL" || { race_stop; fail "round $rounds: clear refused"; }
		[ -n "$n1" ] && [ -n "$n2" ] ||
			{ race_stop; fail "round $rounds: rule 1 ('$n1') or 2 ('$n2') not listed with its count"; }
		injected=$((injected + n1 + n2))
		echo "$injected" >"$race/injected.new"
		mv "$race/injected.new" "$race/injected"
		if [ $((rounds % 4)) = 0 ]; then
			read -r at _ <"$race/loads"
			while [ ! -e "$race/done" ]; do
				read -r now _ <"$race/loads"
				[ "$now" -lt $((at + 2)) ] || break
				usleep 20000
			done
		fi
	done
	wait "$loader" || fail "the loads: $(cat "$race/error" 2>/dev/null)"
	read -r loads ok failed <"$race/loads"
	guest_note "$loads loads: $ok loaded, $failed failed with ENOMEM; $rounds rounds of rules counted $injected failures injected"
	[ "$ok" -ge 1 ] || fail "none of $loads loads succeeded"
	[ "$failed" -ge 1 ] || fail "none of $loads loads failed"
	[ "$injected" -ge 1 ] || fail "the rules counted no failure injected ($failed loads failed)"
	dmesg | grep -q "module alloctag_errpath has" && fail "a load leaked"
	[ -z "$(cat "$FAIL_CTL")" ] || fail "rules left"
}

# pid= takes the thread group id that user space sees (/proc, $$): a rule
# for one process fails its allocations and no other process's. (A KUnit
# case compared the rule with a value read the same wrong way it read the
# task, and could not see that bindgen's struct task_struct put tgid
# elsewhere than C does.)
test_inject_pid_is_the_user_space_pid() {
	fail_ctl_ready
	ko=$MODDIR/alloctag_errpath.ko
	# Another process's rule (init's, pid 1) leaves this load alone.
	echo "add module:alloctag_errpath pid=1 times=1" >"$FAIL_CTL" || fail "arming pid=1 refused"
	loadmod "$ko" || fail "a rule for pid 1 failed another process's load"
	rmmod alloctag_errpath
	[ "$(rule_field 1 injected)" = 0 ] || fail "injected $(rule_field 1 injected) for pid 1"
	echo clear >"$FAIL_CTL"
	# The loading process's own pid, taken by exec into loadmod.
	sh -c "echo \"add module:alloctag_errpath pid=\$\$ times=1\" >$FAIL_CTL && exec loadmod $ko" 2>/dev/null &&
		fail "a rule for the loading process's pid did not fail its load"
	[ "$(rule_field 1 injected)" = 1 ] || fail "injected $(rule_field 1 injected) for the loader's pid"
}
