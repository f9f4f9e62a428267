#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What the kernel holds right after boot, for scripts/memory.sh: the
# /proc/meminfo figures that profiling can move, the per-CPU first chunk's
# and page_ext's boot lines, and the status of the counters. Run as
# alloctag_run=memory; each line starts with "memory: " for the host.
. /alloctag/report.sh
# Settled: the initramfs freed and the page cache dropped, which otherwise
# move MemFree by megabytes from one boot to the next.
sleep 3
sync
echo 3 >/proc/sys/vm/drop_caches
# memory_percpu=N (scripts/memory.sh's MEMORY_PERCPU): N per-CPU areas of
# 32 KiB held by alloctag_test before anything else, enough to make per-CPU
# chunks (and, booted 0 or never, chunks without tag vectors).
n=$(sed -n 's/.*memory_percpu=\([0-9]*\).*/\1/p' /proc/cmdline)
if [ -n "$n" ]; then
	[ -e /sys/kernel/debug/alloctag_test ] || mount -t debugfs none /sys/kernel/debug
	insmod /lib/modules/alloctag_test.ko && echo "$n" >/sys/kernel/debug/alloctag_test/hold_percpu ||
		report "memory: percpu_hold failed"
fi
# memory_switch (scripts/memory.sh's VALUE+on): profiling switched on first,
# timed, so that the figures are those after the first switch-on.
if grep -qw memory_switch /proc/cmdline; then
	# The monotonic clock in ns (busybox's date has no %N).
	now() { awk '/^now at [0-9]+ nsecs$/ { print $3; exit }' /proc/timer_list; }
	t0=$(now)
	echo 1 >/proc/sys/vm/mem_profiling
	t1=$(now)
	report "memory: switch_us $(((t1 - t0) / 1000))"
	sync
	echo 3 >/proc/sys/vm/drop_caches
fi
for key in MemTotal MemFree Slab SUnreclaim Percpu VmallocUsed; do
	report "memory: $key $(awk -v k="$key:" '$1 == k { print $2 }' /proc/meminfo)"
done
report "memory: page_ext $(dmesg | sed -n 's/.*allocated \([0-9]*\) bytes of page_ext.*/\1/p' | head -n 1)"
report "memory: percpu $(dmesg | sed -n 's/.*percpu: Embedded \([0-9]*\) pages\/cpu s\([0-9]*\) .*/\1 \2/p' | head -n 1)"
# What the tags count (the text's first column; version 1.0 has one header line).
report "memory: counted $(awk 'NR > 1 { s += $1 } END { print s + 0 }' /proc/allocinfo)"
report "memory: sysctl $(cat /proc/sys/vm/mem_profiling 2>/dev/null)"
report "memory: vectors $(dmesg | sed -n 's/.*tag vectors made for \([0-9]*\) per-CPU chunks.*/\1/p' | head -n 1)"
# What alloctag's own code holds (its sites, lib/alloctag/, where profiling
# counts them: booted 1), for the log (scripts/memory.sh with KEEP_LOGS=1).
awk '$3 ~ /^lib\/alloctag\// && $1 > 0 { $1 = $1; print }' /proc/allocinfo | while read -r line; do
	report "memory: site $line"
done
