#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The demo, run inside the guest: shows the profiler at work.

section() { printf '\n### %s\n' "$*"; }
# What the demo claims and does not see makes it fail (exit 1), so that the
# test command, which runs it, notices (scripts/check-readme.sh).
status=0
wrong() {
	echo "DEMO FAILED: $*"
	status=1
}

section "uname -r"
uname -r
section "/proc/sys/vm/mem_profiling"
cat /proc/sys/vm/mem_profiling
section "number of tags in /proc/allocinfo"
tail -n +3 /proc/allocinfo | wc -l
section "head -n 4 /proc/allocinfo"
head -n 4 /proc/allocinfo
# GNU sort from coreutils (/usr/bin); busybox's shell would run its own sort,
# which has no -h.
section "sort -h /proc/allocinfo | tail"
/usr/bin/sort -h /proc/allocinfo | tail
section "sort -g /proc/allocinfo | tail -n 5 | numfmt --to=iec"
/usr/bin/sort -g /proc/allocinfo | tail -n 5 | /usr/bin/numfmt --to=iec
section "echo 0 > /proc/sys/vm/mem_profiling: counters freeze"
echo 0 >/proc/sys/vm/mem_profiling
cat /proc/sys/vm/mem_profiling
a=$(md5sum </proc/allocinfo)
ls -R / >/dev/null
b=$(md5sum </proc/allocinfo)
[ "$a" = "$b" ] && echo "unchanged after ls -R /" || wrong "the counters changed after ls -R / with profiling off"
section "echo 1 > /proc/sys/vm/mem_profiling: counters move again"
echo 1 >/proc/sys/vm/mem_profiling
cat /proc/sys/vm/mem_profiling
ls -R / >/dev/null
c=$(md5sum </proc/allocinfo)
[ "$b" != "$c" ] && echo "changed after ls -R /" || wrong "the counters did not change after ls -R / with profiling on"
if [ -x /bin/allocinfo ]; then
	section "allocinfo top -n 10"
	allocinfo top -n 10
fi
if [ -x /bin/allocinfo_ioctl ]; then
	# The same selection two ways, each 50 times, each a process of its own:
	# the text pipeline makes every line and sums every tag's per-CPU
	# counters; through the allocinfo ioctl the kernel filters first and
	# sums only the matching tags. (allocinfo_ioctl is the guest tests'
	# small static C client; allocinfo query, below, reads through the same
	# ioctl and matches the path, a path suffix by its rule, itself.)
	f=mm/slub.c
	section "a filtered query, 50 times: grep ' $f:' /proc/allocinfo"
	time sh -c "for i in \$(seq 50); do grep ' $f:' /proc/allocinfo >/dev/null; done"
	section "the same through the ioctl, 50 times: allocinfo_ioctl dump --file $f"
	time sh -c "for i in \$(seq 50); do allocinfo_ioctl dump --file $f >/dev/null; done"
	if [ -x /bin/allocinfo ]; then
		section "allocinfo query -v --path $f"
		allocinfo query -v --path "$f"
	fi
fi
if [ -e /lib/modules/alloctag_rust_sample.ko ]; then
	section "insmod alloctag_rust_sample.ko: each Rust call site by its .rs file:line"
	insmod /lib/modules/alloctag_rust_sample.ko
	grep '\[alloctag_rust_sample\]' /proc/allocinfo
	rmmod alloctag_rust_sample
	if [ -e /lib/modules/alloctag_rust_plain.ko ]; then
		section "insmod alloctag_rust_plain.ko: plain KBox::new, KVec, push, Arc::new, CString, no macro"
		insmod /lib/modules/alloctag_rust_plain.ko
		grep '\[alloctag_rust_plain\]' /proc/allocinfo
		rmmod alloctag_rust_plain
	fi
	section "Rust allocations made with no tag: the fallback tags"
	grep 'func:rust_untagged_' /proc/allocinfo
	section "lines of rust/helpers/ in /proc/allocinfo"
	grep -c 'rust/helpers/' /proc/allocinfo || true
fi
if [ -e /lib/modules/alloctag_errpath.ko ]; then
	export INSMOD=loadmod
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
	ctl=/sys/kernel/debug/alloctag/fail
	loadmod /lib/modules/alloctag_errpath.ko
	site=$(awk '$4 == "[alloctag_errpath]" { print $3 }' /proc/allocinfo | sed -n 2p)
	rmmod alloctag_errpath
	section "fault injection: make exactly $site fail, once"
	echo "add module:alloctag_errpath $site times=1" >$ctl
	cat $ctl
	loadmod /lib/modules/alloctag_errpath.ko || echo "(the load failed cleanly, as the module's error path intends)"
	section "the rule and its injected count"
	cat $ctl
	dmesg | grep 'injected a failure' | tail -n 1
	echo clear >$ctl
	if [ -x /bin/allocinfo ]; then
		section "allocinfo fail list"
		allocinfo fail add module:alloctag_errpath func:errpath_init --probability 50
		allocinfo fail list
		allocinfo fail remove --all
	fi
	section "scripts/sweep-error-paths.sh on the module with a broken error path"
	/alloctag/sweep-error-paths.sh /lib/modules/alloctag_errpath_leaky.ko 2>&1 | grep -v '^    '
fi
cap=/sys/kernel/debug/alloctag/capture
hold=/sys/kernel/debug/alloctag_test/hold
if [ -e /lib/modules/alloctag_test.ko ]; then
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
fi
if [ -w "$cap" ] && [ -e /lib/modules/alloctag_test.ko ]; then
	section "capture: select the test module's hold_object() before the module loads"
	echo "add module:alloctag_test func:hold_object" >$cap
	cat $cap
	insmod /lib/modules/alloctag_test.ko
	section "two processes make the kernel allocate there: capwriter (3 objects), sh (2)"
	capwriter $hold 3
	sh -c "echo 2 >$hold"
	cat $cap
	section "live objects, oldest first: head -n 8 /sys/kernel/debug/alloctag/live"
	head -n 8 /sys/kernel/debug/alloctag/live
	section "grouped by stack: cat live_stacks"
	cat /sys/kernel/debug/alloctag/live_stacks
	section "grouped by process: cat live_processes"
	cat /sys/kernel/debug/alloctag/live_processes
	if [ -x /bin/allocinfo ]; then
		section "allocinfo live --by process; allocinfo live --by stack"
		allocinfo live --by process
		allocinfo live --by stack
	fi
	section "freed: echo 0 > hold; then rmmod and clear"
	echo 0 >$hold
	cat $cap
	rmmod alloctag_test
	echo clear >$cap
fi
if [ -w "$cap" ] && command -v memhold >/dev/null; then
	section "capture a site of the kernel's own: pipe buffer pages (func:pipe_write)"
	echo "add func:pipe_write" >$cap
	memhold pipe 8 >/tmp/memhold.out &
	holder=$!
	sleep 1
	grep pipe_write /proc/allocinfo
	section "who holds them: the process that wrote 8 pages into a pipe it never reads"
	if [ -x /bin/allocinfo ]; then
		allocinfo live --by process
	else
		cat /sys/kernel/debug/alloctag/live_processes
	fi
	kill $holder
	wait $holder 2>/dev/null || true
	echo clear >$cap
fi
waste=/sys/kernel/debug/alloctag/waste
if [ -w "$waste" ]; then
	section "waste accounting: echo on > $waste, then 5 seconds of the running system (pages too: booted with alloctag.waste_slots=on)"
	echo on >$waste
	# Some churn of its own: files made and removed.
	for i in $(seq 1 200); do echo $i >/tmp/churn.$i; rm /tmp/churn.$i; done
	sleep 5
	cat "$waste"
	section "the ten sites with the most slack: head of /proc/allocwaste sorted by slack"
	head -3 /proc/allocwaste
	grep -v '^#\|^allocwaste' /proc/allocwaste | sort -k3,3nr | head -n 10
	if [ -x /bin/allocinfo ]; then
		section "allocinfo waste -n 10 --sort slack; allocinfo waste -n 5 --sort allocs"
		allocinfo waste -n 10 --sort slack
		allocinfo waste -n 5 --sort allocs
	fi
	echo off >$waste
fi
exit $status
