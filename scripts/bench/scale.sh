#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# At a fleet's scale (Documentation/benchmarks.rst, "224 possible CPUs"): a
# guest script of the benchmark initramfs (/alloctag/scale.sh), booted by
# hand with alloctag_run=scale on the kernels of a BENCH_CPUS=224 run of
# scripts/bench.sh (NR_CPUS=256, 6,400 built-in call sites), with -smp 224
# and maxcpus=2, or -smp 2 (the command is in benchmarks.rst). Prints the
# tags, /proc/meminfo's Percpu and Slab, and per query
# (tests/bench/allocinfo_query.c, 10 repetitions): whole reads of
# /proc/allocinfo, the ioctl's file filter and the text's, and show_mem()
# (sysrq m, the OOM report), profiling on and off. Under -icount the 222
# idle vCPUs make a boot take hours: TCG only.
mount -t debugfs none /sys/kernel/debug 2>/dev/null
echo "scale: kernel=$(sed -n 's/.*(alloctag-bench@\([a-z-]*\)).*/\1/p' /proc/version)"
echo "scale: cpus_possible=$(cat /sys/devices/system/cpu/possible) online=$(cat /sys/devices/system/cpu/online)"
echo "scale: tags=$(tail -n +3 /proc/allocinfo | wc -l)"
grep -E '^(Percpu|Slab|MemFree|MemTotal):' /proc/meminfo | sed 's/^/scale: meminfo /'
dmesg -n 1
for q in "read 1048576" "ioctl-file mm/slub.c" "text-file mm/slub.c" "sysrq m"; do
	# shellcheck disable=SC2086
	echo "scale: $(/alloctag/allocinfo_query $q 10)"
done
echo 0 > /proc/sys/vm/mem_profiling 2>/dev/null && echo "scale: off $(/alloctag/allocinfo_query sysrq m 10)"
echo 1 > /proc/sys/vm/mem_profiling 2>/dev/null
dmesg -c > /dev/null
echo "scale: done"
