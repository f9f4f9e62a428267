#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of scripts/bench.sh, installed as /alloctag/bench.sh and run by
# /init for alloctag_run=bench. The same initramfs and command line boot all
# three benchmark kernels; the build host in /proc/version, which bench.sh
# sets to nop, c or rust, says which one this is and so whose modules to load.
#
# Prints, for the host to parse (scripts/bench/report.py):
#   alloctag-bench-info: KEY=VALUE                       kernel, CPUs, clock, memory
#   alloctag-bench-allocinfo-begin / -end                /proc/allocinfo right after boot
#   alloctag-bench-result: kernel=K phase=P pass=N LINE  one benchmark result
# Phase "on" runs with vm.mem_profiling=1, "off" with 0; kernel (a), which has
# no profiling, runs the same two phases unchanged, as the reference for each.
# The phases alternate bench_passes= times (command line, default 1).

info() { echo "alloctag-bench-info: $*"; }

kernel=$(sed -n 's/^Linux version [^ ]* (alloctag-bench@\([a-z-]*\)).*/\1/p' /proc/version)
if [ -z "$kernel" ]; then
	echo "alloctag-bench: not a benchmark kernel: $(cat /proc/version)"
	exit 1
fi
mods=/lib/modules/bench-$kernel
passes=1
query=1
query_reps=20
capture=1
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	bench_passes=*) passes=${arg#bench_passes=} ;;
	bench_capture=*) capture=${arg#bench_capture=} ;;
	bench_query=*) query=${arg#bench_query=} ;;
	bench_query_reps=*) query_reps=${arg#bench_query_reps=} ;;
	esac
done

# First, before this script runs anything else: the tags and counters that
# booting left, for the differential check of (b) and (c).
if [ -r /proc/allocinfo ]; then
	echo "alloctag-bench-allocinfo-begin"
	cat /proc/allocinfo
	echo "alloctag-bench-allocinfo-end"
fi

info "kernel=$kernel"
info "version=$(cat /proc/version)"
info "cmdline=$(cat /proc/cmdline)"
info "cpus_possible=$(cat /sys/devices/system/cpu/possible)"
info "cpus_online=$(cat /sys/devices/system/cpu/online)"
info "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
info "mem_profiling_compressed=$(cat /proc/sys/vm/mem_profiling_compressed 2>/dev/null)"
# NUMA kernels (BENCH_NODE=1): the nodes with their CPUs, and per-node counting.
if [ -r /sys/devices/system/node/online ]; then
	nodes="nodes=$(cat /sys/devices/system/node/online)"
	for n in /sys/devices/system/node/node[0-9]*; do
		nodes="$nodes cpus${n##*node}=$(cat "$n/cpulist")"
	done
	info "$nodes"
	per_node=$(cat /proc/sys/vm/mem_profiling_per_node 2>/dev/null) || per_node=none
	case $per_node in 0) per_node=off ;; 1) per_node=on ;; esac
	info "per_node=$per_node"
fi
grep -E '^(MemTotal|MemFree|Percpu|Slab|SUnreclaim|KernelStack|PageTables):' /proc/meminfo |
	while read -r key value unit; do info "meminfo_${key%:}=$value"; done
dmesg | grep -E 'Memory: |page_ext|page tags in page flags|clocksource: Switched|tsc: ' | sed 's/^\[[^]]*\] *//' |
	while read -r line; do info "dmesg=$line"; done
dmesg -c >/dev/null

# BENCH_TAGS=N (scripts/bench.sh): N more tags, for the /proc/allocinfo
# benchmarks, after the dump above (the differential check compares boots).
for m in "$mods"/alloctag_bench_tags_*.ko; do
	[ -f "$m" ] || continue
	insmod "$m" || { echo "alloctag-bench: insmod $m failed"; exit 1; }
	dmesg -c | sed -n 's/^\[[^]]*\] *//; s/^alloctag-bench-tags: /tags_module_/p' |
		while read -r line; do info "$line"; done
done

# Pin this shell, and so every insmod, to CPU 0.
taskset -p 1 $$ >/dev/null || { echo "alloctag-bench: taskset failed"; exit 1; }

fail=0
# Loads a module with arguments, unloads it and prints its results.
bench() {
	phase=$1
	pass=$2
	shift 2
	name=$(basename "$1" .ko)
	if ! insmod "$@"; then
		echo "alloctag-bench: insmod $* failed"
		fail=1
	else
		rmmod "$name" || fail=1
	fi
	dmesg -c | sed -n 's/^\[[^]]*\] *//; /^alloctag[-_]bench[a-z_]*: /p' |
		while read -r line; do
			echo "alloctag-bench-result: kernel=$kernel phase=$phase pass=$pass $line"
		done
}

profiling() {
	if [ -w /proc/sys/vm/mem_profiling ]; then
		echo "$1" >/proc/sys/vm/mem_profiling || fail=1
		info "mem_profiling=$(cat /proc/sys/vm/mem_profiling)"
	fi
}

# kernel-bench-capture boots twice: as is, for capture and for waste
# accounting off (slab vectors as 6.12's), and with waste accounting's slots
# reserved (scripts/bench.sh's configuration "waste"), for it on: every
# object then has its slot, whichever slab it comes from.
slots=0
grep -Eq '(^| )alloctag\.waste_slots=on( |$)' /proc/cmdline && slots=1
info "waste_slots=$slots"

pass=1
while [ "$pass" -le "$passes" ]; do
	for phase in on off; do
		case $phase in on) profiling 1 ;; off) profiling 0 ;; esac
		bench $phase $pass "$mods/alloctag_bench.ko" mode=alloc
		bench $phase $pass "$mods/alloctag_bench_rust.ko"
	done
	profiling 1
	if [ -r /proc/allocinfo ]; then
		bench on $pass "$mods/alloctag_bench.ko" mode=allocinfo
	fi
	# From user space (/alloctag/allocinfo_query, tests/bench/): whole-file
	# reads as "dd bs=" does them, and one source file's tags and the tags
	# of at least 1 MiB selected from the text (in C, and by grep and awk
	# processes) and through the ioctls (none in the C core: "unsupported").
	if [ "$query" = 1 ] && [ -r /proc/allocinfo ]; then
		for q in "read 1048576" "read 4096" "read 64" \
			"text-file mm/slub.c" "ioctl-file mm/slub.c" "exec-file mm/slub.c" \
			"text-min 1048576" "ioctl-min 1048576" "exec-min 1048576"; do
			# shellcheck disable=SC2086 # q is a mode and its argument
			if out=$(/alloctag/allocinfo_query $q "$query_reps"); then
				echo "alloctag-bench-result: kernel=$kernel phase=on pass=$pass $out"
			else
				echo "alloctag-bench: allocinfo_query $q failed"
				fail=1
			fi
		done
	fi
	# The OOM report (show_mem(), as sysrq m prints it), profiling on and
	# off: on, its last part is the 10 largest call sites
	# (alloc_tag_top_users()), which reads every tag's counters. Only
	# where the kernel has sysrq (scripts/configs/bench-cpus.config); the
	# console takes none of its lines.
	if [ "$query" = 1 ] && [ -w /proc/sysrq-trigger ]; then
		dmesg -n 1
		for phase in on off; do
			case $phase in on) profiling 1 ;; off) profiling 0 ;; esac
			if out=$(/alloctag/allocinfo_query sysrq m "$query_reps"); then
				echo "alloctag-bench-result: kernel=$kernel phase=$phase pass=$pass $out"
			else
				echo "alloctag-bench: allocinfo_query sysrq m failed"
				fail=1
			fi
		done
		profiling 1
		dmesg -c >/dev/null
		dmesg -n 5
	fi
	# Per-call-site fault injection (kernel-bench-fault): a rule armed at a
	# site that never allocates (the allocators test every site's mark), then
	# every benchmark site armed with probability 0 (each allocation asks its
	# rule and never fails).
	ctl=/sys/kernel/debug/alloctag/fail
	[ -e "$ctl" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	if [ -w "$ctl" ]; then
		echo "add func:alloctag_bench_no_such_function" >"$ctl" || fail=1
		bench armed-elsewhere $pass "$mods/alloctag_bench.ko" mode=alloc
		bench armed-elsewhere $pass "$mods/alloctag_bench_rust.ko"
		echo "add module:alloctag_bench probability=0 verbose=0" >"$ctl" || fail=1
		echo "add module:alloctag_bench_rust probability=0 verbose=0" >"$ctl" || fail=1
		bench armed-p0 $pass "$mods/alloctag_bench.ko" mode=alloc
		bench armed-p0 $pass "$mods/alloctag_bench_rust.ko"
		echo clear >"$ctl" || fail=1
	fi
	# Capture of live objects (kernel-bench-capture): a selection of a site
	# that never allocates (the key is on, every allocation tests its tag's
	# mark), then every benchmark site selected (each allocation is recorded
	# with its stack, each free drops the record).
	cap=/sys/kernel/debug/alloctag/capture
	[ -e "$cap" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	# Not with bench_capture=0 (the per-node kernels, BENCH_NODE=1, which
	# have capture only for its keys: on two vCPUs under -icount a capture
	# phase stalled RCU, an -icount timer artifact).
	if [ -w "$cap" ] && [ "$slots" = 0 ] && [ "$capture" != 0 ]; then
		echo "add func:alloctag_bench_no_such_function" >"$cap" || fail=1
		bench selected-elsewhere $pass "$mods/alloctag_bench.ko" mode=alloc
		bench selected-elsewhere $pass "$mods/alloctag_bench_rust.ko"
		echo "add module:alloctag_bench" >"$cap" || fail=1
		echo "add module:alloctag_bench_rust" >"$cap" || fail=1
		bench selected $pass "$mods/alloctag_bench.ko" mode=alloc
		bench selected $pass "$mods/alloctag_bench_rust.ko"
		info "capture_status=$(head -1 "$cap")"
		# What the pool takes: the bytes of the core's allocation sites in
		# src/capture/pool.rs (dynamic tags), with the pool allocated.
		info "capture_pool_bytes=$(grep -F capture/pool.rs /proc/allocinfo | awk '{ s += $1 } END { print s + 0 }')"
		echo clear >"$cap" || fail=1
	fi
	# Waste accounting (built into kernel-bench-capture with capture, whose
	# hook variant it shares), with its slots reserved: on, every allocation
	# and free finds its slot and counts into its site's per-CPU counters.
	waste=/sys/kernel/debug/alloctag/waste
	if [ -w "$waste" ] && [ "$slots" = 1 ]; then
		echo on >"$waste" || fail=1
		bench waste-on $pass "$mods/alloctag_bench.ko" mode=alloc
		bench waste-on $pass "$mods/alloctag_bench_rust.ko"
		info "waste_vector_bytes=$(grep -F 'func:alloc_slab_obj_exts' /proc/allocinfo | awk '{ s += $1 } END { print s + 0 }')"
		echo off >"$waste" || fail=1
	fi
	pass=$((pass + 1))
done
[ -r /proc/allocinfo ] && info "allocinfo_tags=$(($(wc -l </proc/allocinfo) - 2))"

if dmesg | grep -Eq 'WARNING:|BUG:|Oops|Call Trace:'; then
	echo "alloctag-bench: kernel report in dmesg:"
	dmesg | tail -40
	fail=1
fi
exit $fail
