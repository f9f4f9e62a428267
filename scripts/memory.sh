#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What a kernel holds right after boot, booted with each value of
# sysctl.vm.mem_profiling= given (default: 0 never 1): MemTotal - MemFree,
# Slab, Percpu and VmallocUsed from /proc/meminfo, page_ext's boot line and
# the per-CPU first chunk's static size and the bytes /proc/allocinfo counts,
# one boot each, in one table
# (scripts/guest/memory.sh reads them in the guest). The figures behind
# Documentation/benchmarks.rst's "What profiling holds while off".
#
# Usage: scripts/memory.sh KERNEL_DIR [VALUE...]   VALUE "-" boots without the parameter;
# VALUE+on (0+on, -+on) switches profiling on first, timed (switch_us), and
# gives the figures after that. MEMORY_PERCPU=N holds N per-CPU areas of
# 32 KiB (alloctag_test's hold_percpu) first, to make per-CPU chunks; the
# last column is how many chunks made until then the switch-on gave tag
# vectors.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kdir=${1:?usage: scripts/memory.sh KERNEL_DIR [VALUE...]}
shift
[ $# -gt 0 ] || set -- 0 never 1
image=$kdir/arch/x86/boot/bzImage
[ -f "$image" ] || die "no $image"
initrd=$BUILD_DIR/initramfs-memory-$(basename "$kdir").cpio.gz
"$ALLOCTAG_ROOT/scripts/mkinitramfs.sh" "$kdir" "$initrd" >/dev/null
out=$(mktemp -d)
trap '[ -n "${KEEP_LOGS:-}" ] || rm -rf "$out"' EXIT

printf '%-8s %9s %9s %8s %8s %8s %10s %10s %10s %6s %9s %s\n' value total_kB used_kB Slab_kB Percpu_kB Vmalloc_kB page_ext_B pcpu_static counted_B sysctl switch_us vectors
for v in "$@"; do
	args=(alloctag_run=memory)
	boot=${v%+on}
	[ "$boot" = "$v" ] || args+=(memory_switch)
	[ "$boot" = - ] || args+=("sysctl.vm.mem_profiling=$boot")
	[ -z "${MEMORY_PERCPU:-}" ] || args+=("memory_percpu=$MEMORY_PERCPU")
	"$ALLOCTAG_ROOT/scripts/run-qemu.sh" "$image" "$initrd" "$out/$v.log" "${args[@]}" >/dev/null ||
		die "the boot with '$v' failed ($out/$v.log)"
	get() { sed -n "s/^memory: $1 *//p" "$out/$v.log" | tr -d '\r' | head -n 1; }
	! grep -q '^memory: percpu_hold failed' "$out/$v.log" || die "holding per-CPU areas failed ($out/$v.log)"
	printf '%-8s %9s %9s %8s %8s %8s %10s %10s %10s %6s %9s %s\n' "$v" "$(get MemTotal)" \
		$(($(get MemTotal) - $(get MemFree))) "$(get Slab)" "$(get Percpu)" "$(get VmallocUsed)" \
		"$(get page_ext | sed 's/^$/0/')" "$(get percpu | awk '{print $2}')" "$(get counted)" "$(get sysctl)" \
		"$(get switch_us | sed 's/^$/-/')" "$(get vectors | sed 's/^$/-/')"
done
