#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Checks the patch series against the graft: exports it
# (scripts/export-patches.sh), applies it with git am to a fresh checkout of
# the pristine tree, and compares the result with the grafted tree, file by
# file, following the graft's symlinks: the two must be equal. The tree it
# leaves, $BUILD_DIR/linux-series, is the series as a carrier would build
# it; the arm64 configuration of the build matrix builds from it.
#
# Usage: scripts/check-series.sh    (prints one line: what was checked)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -f "$SRC_TREE/lib/alloctag/Kbuild" ] || die "no grafted tree at $SRC_TREE: run scripts/prepare-tree.sh"
series=$BUILD_DIR/series
"$ALLOCTAG_ROOT/scripts/export-patches.sh" "$series"

applied=$BUILD_DIR/linux-series
if git -C "$applied" rev-parse -q --verify HEAD >/dev/null 2>&1; then
	git -C "$applied" am --abort >/dev/null 2>&1 || true
	git -C "$applied" checkout -q --detach --force base
	git -C "$applied" clean -q -fdx
else
	rm -rf "$applied"
	git -C "$PRISTINE_REPO" worktree prune
	git -C "$PRISTINE_REPO" worktree add -q --detach "$applied" base
fi
patches=("$series"/0*.patch)
patches=("${patches[@]:1}") # the cover letter is not a patch
name=$(git -C "$ALLOCTAG_ROOT" config user.name || echo "alloctag developers")
email=$(git -C "$ALLOCTAG_ROOT" config user.email || echo "alloctag@localhost")
if ! am_out=$(GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email \
	git -C "$applied" am -3 --whitespace=error "${patches[@]}" 2>&1); then
	printf '%s\n' "$am_out" | tail -n 20 >&2
	die "the series does not apply to the pristine tree with git am -3"
fi

# diff follows the graft's symlinks; only the series' git metadata is extra.
if ! differ=$(diff -rq --exclude=.git "$applied" "$SRC_TREE" 2>&1); then
	printf '%s\n' "$differ" | head -n 20 >&2
	die "the series applied to the pristine tree differs from the grafted tree ($(printf '%s\n' "$differ" | wc -l) differences)"
fi
echo "series: ${#patches[@]} patches apply to $(git -C "$applied" log -1 --format=%s base) with git am -3 and give the grafted tree"
