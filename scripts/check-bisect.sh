#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds each step of the patch series, as kernel practice asks of a series
# (it must bisect): exports it (scripts/export-patches.sh), then checks out
# each commit in turn in the export's checkout and builds it incrementally
# for x86_64 from tinyconfig plus scripts/configs/bisect.config
# (CONFIG_WERROR=y) into $BUILD_DIR/kernel-bisect. Not part of the test
# command (fifteen kernel builds); Documentation/patches.rst records the last
# run. Prints one line per step and "bisect: N built, N failed".
#
# Usage: scripts/check-bisect.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"

work=$BUILD_DIR/series-work
logs=$BUILD_DIR/bisect-logs
mkdir -p "$logs"
"$ALLOCTAG_ROOT/scripts/prepare-tree.sh" >/dev/null || die "preparing the kernel tree failed"
# The checkout is this run's from the export to the last step's build.
tree_lock -x "$work"
SERIES_WORKTREE=$work "$ALLOCTAG_ROOT/scripts/export-patches.sh" "$BUILD_DIR/bisect-series" >/dev/null ||
	die "exporting the series failed"
mapfile -t commits < <(git -C "$work" rev-list --reverse base..HEAD)
built=0
failed=0
i=0
for c in "${commits[@]}"; do
	i=$((i + 1))
	git -C "$work" checkout -q --detach "$c" || die "checkout of $c failed"
	subject=$(git -C "$work" log -1 --format=%s "$c")
	t0=$SECONDS
	if KERNEL_TREE=$work "$ALLOCTAG_ROOT/scripts/build-kernel.sh" bisect >"$logs/$i.log" 2>&1 &&
		! grep -iqE '(^|[^a-z])warning:' "$logs/$i.log"; then
		rust=$(grep -c '^CONFIG_MEM_ALLOC_PROFILING_RUST=y' "$BUILD_DIR/kernel-bisect/.config")
		printf 'bisect: %2d ok     (%4d s, Rust core %s) %s\n' "$i" "$((SECONDS - t0))" \
			"$([ "$rust" = 1 ] && echo on || echo off)" "$subject"
		built=$((built + 1))
	else
		printf 'bisect: %2d FAILED (%4d s, %s) %s\n' "$i" "$((SECONDS - t0))" "$logs/$i.log" "$subject"
		failed=$((failed + 1))
	fi
done
echo "bisect: $built built, $failed failed"
[ "$failed" = 0 ]
