#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The demo, run inside the guest: shows the profiler at work.

section() { printf '\n### %s\n' "$*"; }

section "uname -r"
uname -r
section "/proc/sys/vm/mem_profiling"
cat /proc/sys/vm/mem_profiling
section "number of tags in /proc/allocinfo"
tail -n +3 /proc/allocinfo | wc -l
section "head -n 4 /proc/allocinfo"
head -n 4 /proc/allocinfo
section "sort -h /proc/allocinfo | tail"
sort -h /proc/allocinfo | tail
section "echo 0 > /proc/sys/vm/mem_profiling: counters freeze"
echo 0 >/proc/sys/vm/mem_profiling
cat /proc/sys/vm/mem_profiling
a=$(md5sum </proc/allocinfo)
ls -R / >/dev/null
b=$(md5sum </proc/allocinfo)
[ "$a" = "$b" ] && echo "unchanged after ls -R /" || echo "CHANGED after ls -R /"
section "echo 1 > /proc/sys/vm/mem_profiling: counters move again"
echo 1 >/proc/sys/vm/mem_profiling
cat /proc/sys/vm/mem_profiling
ls -R / >/dev/null
c=$(md5sum </proc/allocinfo)
[ "$b" != "$c" ] && echo "changed after ls -R /" || echo "UNCHANGED after ls -R /"
if [ -x /bin/allocinfo ]; then
	section "allocinfo top -n 10"
	allocinfo top -n 10
fi
