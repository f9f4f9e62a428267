#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs make in a kernel build directory with the project's toolchain, for
# quick rebuilds while developing: scripts/kmake.sh test lib/alloctag/
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kernel_env
name=${1:?build name (test, nodebug, arm64, debian)}
shift
kernel_compiler "$name"
tree_lock -x "$BUILD_DIR/kernel-$name"
tree_lock -s "$SRC_TREE"
exec make -C "$SRC_TREE" O="$BUILD_DIR/kernel-$name" ARCH="$(kernel_arch "$name")" "${KMAKE_OPTS[@]}" -j"$JOBS" "$@"
