# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of alloctag's ALLOCINFO_IOC_GET_SPLIT, a tag's figures split
# by CPU (include/uapi/linux/alloc_tag.h), through
# tests/guest/tools/allocinfo_split.c, which checks every answer: nr is the
# width and the shares add up to the counter. The probe site (hold_object()
# of tests/modules/alloctag_test.c, lib.sh) moves only when a test
# allocates there, so its shares are checked exactly.

SPLIT=allocinfo_split

# Prints "BYTES CALLS" of CPU $1's share of the probe site.
split_probe_share() {
	"$SPLIT" site alloctag_test hold_object >/tmp/split-site || fail "allocinfo_split site failed: $(head -n 5 /tmp/split-site)" || return 1
	awk -v c="cpu$1" '$1 == c { print $2, $3; n++ } END { exit n != 1 }' /tmp/split-site
}

# Loads the probe (lib.sh) and sets b0_0 c0_0 and b1_0 c1_0 to CPU 0's and
# CPU 1's shares of it, then allocates PROBE_N objects on CPU 1
# (probe_on_cpu1, which sets b0 c0 and b1 c1 to the site's figures before
# and after). The caller traps rmmod alloctag_test.
split_probe_on_cpu1() {
	[ -e /sys/devices/system/cpu/cpu1 ] || fail "the boot has one CPU" || return 1
	probe_baseline
	read -r b0_0 c0_0 <<-EOT
		$(split_probe_share 0)
	EOT
	read -r b1_0 c1_0 <<-EOT
		$(split_probe_share 1)
	EOT
	probe_on_cpu1
}

# Every tag's shares add up to its counter (the tool checks each answer),
# and there is one share per CPU id (/sys/devices/system/cpu/possible).
test_split_cpu_shares_add_up() {
	n=$("$SPLIT" width) || fail "no width"
	last=$(sed 's/.*[-,]//' /sys/devices/system/cpu/possible)
	[ "$n" = $((last + 1)) ] || fail "width $n, CPUs possible 0-$last"
	"$SPLIT" dump >/tmp/split-dump 2>/tmp/split-err || fail "dump: $(head -n 5 /tmp/split-err)"
	lines=$(wc -l </tmp/split-dump)
	tags=$(($(wc -l <"$PROC_ALLOCINFO") - 2))
	# Modules do not come or go here: the dump lists every tag.
	[ "$lines" = "$tags" ] || fail "dump has $lines tags, $PROC_ALLOCINFO $tags"
	grep -q ' cpu[0-9]*:' /tmp/split-dump || fail "no tag has a non-zero share"
}

# Objects allocated on CPU 1 are CPU 1's share; freed on CPU 0 they leave
# CPU 1 positive and CPU 0 negative by as much, and the site's total where
# it was.
test_split_cpu_follows_the_allocating_cpu() {
	trap 'rmmod alloctag_test 2>/dev/null' EXIT
	split_probe_on_cpu1
	held=$((b1 - b0))
	[ "$(split_probe_share 1)" = "$((b1_0 + held)) $((c1_0 + PROBE_N))" ] ||
		fail "after $PROBE_N objects ($held bytes) on CPU 1: CPU 1 has $(split_probe_share 1), from $b1_0 $c1_0"
	[ "$(split_probe_share 0)" = "$b0_0 $c0_0" ] ||
		fail "CPU 0 moved: $(split_probe_share 0), from $b0_0 $c0_0"
	# Only CPU 1 holds that much of it.
	"$SPLIT" dump 1 "$((b1_0 + held))" | grep -q ' \[alloctag_test\] func:hold_object ' ||
		fail "not listed holding $((b1_0 + held)) bytes on CPU 1"
	if "$SPLIT" dump 0 "$((b0_0 + 1))" | grep -q ' \[alloctag_test\] func:hold_object '; then
		fail "listed holding $((b0_0 + 1)) bytes on CPU 0"
	fi
	probe_free_on_cpu0 "freed on CPU 0"
	[ "$(split_probe_share 1)" = "$((b1_0 + held)) $((c1_0 + PROBE_N))" ] ||
		fail "after the free on CPU 0, CPU 1 has $(split_probe_share 1)"
	[ "$(split_probe_share 0)" = "$((b0_0 - held)) $((c0_0 - PROBE_N))" ] ||
		fail "after the free on CPU 0, CPU 0 has $(split_probe_share 0), from $b0_0 $c0_0"
}

# Bad requests fail before they change anything; a good one's split is kept
# for ALLOCINFO_SPLIT_NEXT and dropped by GET_AT.
test_split_bad_input_and_state() {
	"$SPLIT" check-errors >/tmp/split-errors 2>&1 || true
	cat /tmp/split-errors
	! grep -q '^not ok' /tmp/split-errors && grep -q '^ok' /tmp/split-errors
}

# allocinfo top --split cpu (crates/allocinfo) shows the probe's objects as
# CPU 1's share, and --at keeps the site only on the CPU that holds them.
test_split_cli_shows_the_allocating_cpu() {
	trap 'rmmod alloctag_test 2>/dev/null' EXIT
	split_probe_on_cpu1
	want=$((b1_0 + b1 - b0))
	allocinfo top --split cpu --at 1 --min-at "$want" -m alloctag_test --function hold_object --csv \
		>/tmp/split-cli.csv 2>/tmp/split-cli.err || fail "allocinfo top --split: $(head -n 5 /tmp/split-cli.err)"
	got=$(awk -F, '/hold_object/ && $(NF - 2) == 1 { print $(NF - 1), $NF }' /tmp/split-cli.csv)
	[ "$got" = "$want $((c1_0 + PROBE_N))" ] ||
		fail "CPU 1's share in the CSV: '$got', not '$want $((c1_0 + PROBE_N))': $(cat /tmp/split-cli.csv)"
	allocinfo top --split cpu --at 0 --min-at "$((b0_0 + 1))" -m alloctag_test --function hold_object --csv \
		>/tmp/split-cli0.csv 2>/tmp/split-cli0.err || fail "allocinfo top --split --at 0: $(head -n 5 /tmp/split-cli0.err)"
	if grep -q hold_object /tmp/split-cli0.csv; then
		fail "listed holding $((b0_0 + 1)) bytes on CPU 0: $(cat /tmp/split-cli0.csv)"
	fi
	allocinfo top --split node >/tmp/split-node.txt 2>&1 && fail "--split node succeeded on a kernel without per-node counting"
	grep -q "per node" /tmp/split-node.txt || fail "--split node: $(cat /tmp/split-node.txt)"
	probe_free_on_cpu0 "freed on CPU 0"
}
