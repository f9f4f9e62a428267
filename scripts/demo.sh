#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo: installs what is missing, builds the demo kernel with alloctag
# grafted in, boots it in QEMU and shows /proc/allocinfo and the
# vm.mem_profiling sysctl at work on the terminal.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$ALLOCTAG_ROOT/scripts/install-deps.sh"
"$ALLOCTAG_ROOT/scripts/prepare-tree.sh"
"$ALLOCTAG_ROOT/scripts/build-kernel.sh" demo
"$ALLOCTAG_ROOT/scripts/build-tool.sh" || log "allocinfo tool not built; the demo goes on without it"
"$ALLOCTAG_ROOT/scripts/mkinitramfs.sh" "$BUILD_DIR/kernel-demo" "$BUILD_DIR/initramfs-demo.cpio.gz"
log "booting the demo kernel"
VERBOSE=1 "$ALLOCTAG_ROOT/scripts/run-qemu.sh" \
	"$BUILD_DIR/kernel-demo/arch/x86/boot/bzImage" "$BUILD_DIR/initramfs-demo.cpio.gz" \
	"$BUILD_DIR/demo-console.log" quiet alloctag_run=demo alloctag.waste_slots=on
