#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boots a kernel with an initramfs in QEMU (TCG, serial console),
# lets the guest's /init run its script, and checks the console. An x86_64
# bzImage boots in qemu-system-x86_64, an arm64 Image (the build matrix's
# arm64 configuration) in qemu-system-aarch64's virt machine.
#
# Usage: scripts/run-qemu.sh KERNEL INITRD LOG [extra kernel command line]
#
# Exits 0 when the guest finished its script with exit code 0 and the console
# shows no oops, BUG, WARNING, panic, lockdep or KASAN report; 1 otherwise,
# saying why. The console is copied to LOG and, with VERBOSE=1, to stdout.
# QEMU_TIMEOUT (seconds, default 300) bounds the run; QEMU_SMP (default 2)
# is the number of vCPUs; QEMU_NUMA=N (x86_64) splits them and the 2 GiB of
# memory into N NUMA nodes, node i having CPUs i*SMP/N to (i+1)*SMP/N - 1,
# which the guest learns from ACPI's SRAT (QEMU_NUMA_MEMLESS=1: the last node
# has its CPUs and no memory, the others share it); QEMU_TCG_THREAD (single or multi, default single)
# is TCG's threading (the KCSAN boot's vCPUs must run at once). With QEMU_FAULT_INJECTION=1 (the fail-nth boot) the
# reports that an injected allocation failure makes by design, warn_alloc()'s
# "page allocation failure" and "vmalloc error" with their stack traces, are
# left out of the check; every other report still fails the boot. With
# QEMU_KCSAN_LIST=FILE (the kcsan configuration's boot), the KCSAN reports
# that FILE names as the kernel's own are left out (kcsan_drop_listed in
# scripts/lib.sh); every other KCSAN report fails the boot.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kernel=${1:?kernel image}
initrd=${2:?initramfs}
logfile=${3:?console log file}
shift 3
smp=${QEMU_SMP:-2}
case "$smp" in '' | *[!0-9]* | 0) die "QEMU_SMP must be a positive number, not '$smp'" ;; esac
tcg_thread=${QEMU_TCG_THREAD:-single}
case "$tcg_thread" in single | multi) ;; *) die "QEMU_TCG_THREAD must be single or multi, not '$tcg_thread'" ;; esac
numa=()
if [ -n "${QEMU_NUMA:-}" ]; then
	nodes=$QEMU_NUMA
	case "$nodes" in '' | *[!0-9]* | 0) die "QEMU_NUMA must be a positive number, not '$nodes'" ;; esac
	[ $((smp % nodes)) = 0 ] || die "QEMU_NUMA=$nodes does not divide QEMU_SMP=$smp"
	with_memory=$nodes
	case "${QEMU_NUMA_MEMLESS:-0}" in
	0) ;;
	1) with_memory=$((nodes - 1)) ;;
	*) die "QEMU_NUMA_MEMLESS must be 0 or 1, not '$QEMU_NUMA_MEMLESS'" ;;
	esac
	[ "$with_memory" -gt 0 ] || die "QEMU_NUMA_MEMLESS=1 needs QEMU_NUMA of 2 or more"
	[ $((2048 % with_memory)) = 0 ] || die "$with_memory nodes with memory do not divide 2048 MiB"
	for ((i = 0; i < nodes; i++)); do
		cpus="cpus=$((i * smp / nodes))-$(((i + 1) * smp / nodes - 1))"
		if [ "$i" -lt "$with_memory" ]; then
			numa+=(-object "memory-backend-ram,id=m$i,size=$((2048 / with_memory))M"
				-numa "node,nodeid=$i,$cpus,memdev=m$i")
		else
			numa+=(-numa "node,nodeid=$i,$cpus")
		fi
	done
fi

# Single-threaded TCG unless asked: multi-threaded TCG was seen to oops while
# the kernel patched a static key, and our sysctl flips one. KCSAN needs
# multi: one thread runs a vCPU for up to 100 ms before the next, far longer
# than a KCSAN watch (80 us), so two vCPUs would almost never meet in one.
# shellcheck disable=SC2054 # the commas are inside QEMU options
case "$(file -bL "$kernel")" in
*"ARM64 boot executable"*)
	# virt's first UART is a PL011, ttyAMA0; the kernel boots without
	# firmware (QEMU passes the device tree). cortex-a57: an ARMv8.0 core
	# that TCG runs fast (max's pointer authentication is slow to emulate).
	append="console=ttyAMA0 panic=-1 oops=panic $(tcg_guest_args) $*"
	qemu=(qemu-system-aarch64 -nodefaults -no-reboot -display none
		-accel tcg,thread="$tcg_thread" -M virt -cpu cortex-a57 -smp "$smp" -m 2G
		-serial stdio
		-kernel "$kernel" -initrd "$initrd" -append "$append")
	;;
*)
	append="console=ttyS0 panic=-1 oops=panic $(tcg_clock_args) $(tcg_guest_args) $*"
	qemu=(qemu-system-x86_64 -nodefaults -no-reboot -display none
		-accel tcg,thread="$tcg_thread" -cpu max,la57=off -smp "$smp" -m 2G "${numa[@]}"
		-bios qboot.rom -serial stdio
		-kernel "$kernel" -initrd "$initrd" -append "$append")
	;;
esac

rc=0
if [ "${VERBOSE:-0}" = 1 ]; then
	timeout "${QEMU_TIMEOUT:-300}" "${qemu[@]}" </dev/null 2>&1 | tr -d '\r' | tee "$logfile" || rc=$?
else
	timeout "${QEMU_TIMEOUT:-300}" "${qemu[@]}" </dev/null 2>&1 | tr -d '\r' >"$logfile" || rc=$?
fi

checked=$logfile
if [ "${QEMU_FAULT_INJECTION:-0}" = 1 ]; then
	checked=$logfile.checked
	# Only the report's own lines are left out: its header, then the lines
	# of dump_stack() (the CPU:, Tainted:, Hardware name:, Workqueue: and
	# Call Trace: lines, <TASK> and <IRQ> marks, and one frame per line)
	# up to its </TASK>. Any other line ends the report and is checked, so a
	# real report printed meanwhile is still caught; but for alloctag's own
	# log lines ("alloctag: ...": a refused command of a control file, which
	# the fuzz boot's other threads write meanwhile) and empty lines, which
	# are checked but are never a report's, and so do not end the one they
	# interrupt.
	awk '{ line = $0; sub(/^\[ *[0-9]+\.[0-9]+\] /, "", line) }
		line ~ /(page allocation failure|vmalloc error): / { skip = 1; next }
		skip && (line ~ /^alloctag: / || line == "") { print; next }
		skip && line ~ /^ *<\/TASK>$/ { skip = 0; next }
		skip && (line ~ /^CPU: [0-9]+ UID: [0-9]+ PID: [0-9]+ Comm: / ||
			line ~ /^(Tainted: \[|Hardware name: |Workqueue: )/ ||
			line ~ /^Call Trace:$/ || line ~ /^ *<\/?(TASK|IRQ)>$/ ||
			line ~ /^ +(\? )?[A-Za-z0-9_.$]+\+0x[0-9a-f]+\/0x[0-9a-f]+( \[[^]]+\])?$/) { next }
		{ skip = 0; print }' "$logfile" >"$checked"
fi
if [ -n "${QEMU_KCSAN_LIST:-}" ]; then
	kcsan_drop_listed "$QEMU_KCSAN_LIST" "$checked" >"$logfile.kcsan"
	checked=$logfile.kcsan
fi
if grep -Eq "$KERNEL_REPORTS" "$checked"; then
	echo "run-qemu: kernel report on the console ($logfile):" >&2
	grep -E -m 5 -A 3 "$KERNEL_REPORTS" "$checked" >&2
	exit 1
fi
if [ "$rc" = 124 ]; then
	echo "run-qemu: timed out after ${QEMU_TIMEOUT:-300} s ($logfile)" >&2
	exit 1
fi
if ! grep -q '^alloctag-guest: done rc=0$' "$logfile"; then
	echo "run-qemu: guest script did not finish with rc=0 ($logfile):" >&2
	grep -E '^alloctag-guest:' "$logfile" >&2 || tail -20 "$logfile" >&2
	exit 1
fi
