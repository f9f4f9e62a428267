#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run inside the guest by scripts/docs-pictures.sh (alloctag_run=pictures):
# captures the live objects of fs/'s call sites while a workload walks the
# file systems and writes files, then puts the live report and
# /proc/allocinfo on the console, a line each, for the host to draw.

# shellcheck disable=SC1091 # scripts/guest/report.sh, in the initramfs
. /alloctag/report.sh
mount -t debugfs none /sys/kernel/debug 2>/dev/null
echo 'add fs/*' >/sys/kernel/debug/alloctag/capture || report "pictures: capture add failed"
i=0
while [ $i -lt 3 ]; do
	ls -lR /sys /proc/sys >/dev/null 2>&1
	find / -xdev >/dev/null 2>&1
	i=$((i + 1))
done
mkdir -p /tmp/w
i=0
while [ $i -lt 300 ]; do
	echo "$i" >/tmp/w/f$i
	mkfifo /tmp/w/p$i
	i=$((i + 1))
done
while IFS= read -r line; do
	report "pic-live: $line"
done </sys/kernel/debug/alloctag/live
while IFS= read -r line; do
	report "pic-info: $line"
done </proc/allocinfo
report "pictures: done"
