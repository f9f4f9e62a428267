#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Grafts alloctag into a Linux 6.12 source tree, idempotently, for
# development: runs every patch of the series that scripts/series.sh
# describes, with the project's files as symlinks into this checkout (so
# that they stay the single source) and each edit of a kernel file guarded
# by a marker, so that re-running changes nothing. scripts/export-patches.sh
# makes the same changes as a patch series of real files.
#
# Usage: scripts/graft.sh [TREE]    (default: the build directory's tree)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$ALLOCTAG_ROOT/scripts/series.sh"

tree=${1:-$SRC_TREE}
[ -f "$tree/lib/alloc_tag.c" ] || die "$tree is not a Linux 6.12 tree"
SERIES_MODE=graft

for p in "${SERIES[@]}"; do
	run_patch "$p"
done
# A file the series no longer names leaves a dangling link: drop it.
find "$tree/lib/alloctag" -xtype l -delete
