#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boots the test kernel (KASAN, lockdep, PREEMPT) and runs the error-path
# sweeper (scripts/sweep-error-paths.sh) in it on each module named:
#
#   scripts/sweep.sh [MODULE[:WORKLOAD]]...
#
# MODULE is a .ko of the initramfs /lib/modules (our test modules and
# rng-core), without .ko; WORKLOAD a command run while it is loaded, with
# '+' for spaces. Default: the test modules and rng-core. Exits non-zero
# when a sweep finds a leak or a kernel report.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mods=("$@")
[ ${#mods[@]} -gt 0 ] || mods=(alloctag_errpath alloctag_errpath_leaky alloctag_rust_sample rng-core)
"$ALLOCTAG_ROOT/scripts/install-deps.sh"
"$ALLOCTAG_ROOT/scripts/prepare-tree.sh"
"$ALLOCTAG_ROOT/scripts/kunit.sh" >"$BUILD_DIR/sweep-kunit.log" 2>&1 ||
	die "building the test kernel failed ($BUILD_DIR/sweep-kunit.log)"
"$ALLOCTAG_ROOT/scripts/mkinitramfs.sh" "$BUILD_DIR/kernel-test" "$BUILD_DIR/initramfs-test.cpio.gz"
log "booting the test kernel to sweep: ${mods[*]}"
VERBOSE=1 QEMU_FAULT_INJECTION=1 QEMU_TIMEOUT=${QEMU_TIMEOUT:-900} "$ALLOCTAG_ROOT/scripts/run-qemu.sh" \
	"$BUILD_DIR/kernel-test/arch/x86/boot/bzImage" "$BUILD_DIR/initramfs-test.cpio.gz" \
	"$BUILD_DIR/sweep-console.log" kunit.enable=0 alloctag_run=sweep \
	"alloctag_sweep=$(IFS=,; echo "${mods[*]}")" | tee "$BUILD_DIR/sweep.log"
grep -q "alloctag-guest: done rc=0" "$BUILD_DIR/sweep.log"
