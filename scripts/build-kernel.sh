#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds a kernel from the grafted tree into $BUILD_DIR/kernel-NAME, from
# tinyconfig plus the fragment scripts/configs/NAME.config, for x86_64 or,
# when NAME starts with arm64, for arm64 (kernel_arch in lib.sh). The build
# directory is kept, so a second run rebuilds only what changed. The source
# tree is $SRC_TREE (lib.sh), or KERNEL_TREE when set (scripts/build-matrix.sh
# builds arm64 from another tree on request).
#
# Usage: scripts/build-kernel.sh NAME [extra config fragment ...]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kernel_env

name=${1:?config name}
shift
out=$BUILD_DIR/kernel-$name
arch=$(kernel_arch "$name")
tree=${KERNEL_TREE:-$SRC_TREE}
mkdir -p "$out"
kmake() { make -s -C "$tree" O="$out" ARCH="$arch" "${KMAKE_OPTS[@]}" "$@"; }

kmake tinyconfig >/dev/null
cat "$ALLOCTAG_ROOT/scripts/configs/$name.config" "$@" >>"$out/.config"
kmake olddefconfig >/dev/null 2>&1

# A fragment option that Kconfig dropped (a missing dependency) is a bug here.
for frag in "$ALLOCTAG_ROOT/scripts/configs/$name.config" "$@"; do
	grep -E '^CONFIG_[A-Z0-9_]+=' "$frag" | while IFS= read -r line; do
		grep -qx "$line" "$out/.config" || die "$name: $line did not stick in .config"
	done
done

log "building kernel-$name ($(make -s -C "$tree" kernelversion))"
kmake -j"$JOBS" all
