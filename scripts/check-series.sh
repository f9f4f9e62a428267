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
applied=$BUILD_DIR/linux-series

# The files the last run's series made, with their times and content: one
# that comes out the same again gets its time back, so that the arm64 build
# from this tree rebuilds only what changed.
times=$BUILD_DIR/linux-series.times
: >"$times"
if git -C "$applied" rev-parse -q --verify base >/dev/null 2>&1; then
	git -C "$applied" diff --name-only base HEAD 2>/dev/null | while IFS= read -r f; do
		[ -f "$applied/$f" ] && printf '%s %s %s\n' "$(stat -c %Y "$applied/$f")" \
			"$(git -C "$applied" hash-object "$f")" "$f"
	done >"$times" || true
fi

# The export is made in the same checkout, then the checkout goes back to
# base for git am: both rewrite only the files the series touches.
SERIES_WORKTREE=$applied "$ALLOCTAG_ROOT/scripts/export-patches.sh" "$series"
pristine_worktree "$applied"
patches=("$series"/0*.patch)
patches=("${patches[@]:1}") # the cover letter is not a patch
name=$(git -C "$ALLOCTAG_ROOT" config user.name || echo "alloctag developers")
email=$(git -C "$ALLOCTAG_ROOT" config user.email || echo "alloctag@localhost")
if ! am_out=$(GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email \
	git -C "$applied" am -3 --whitespace=error "${patches[@]}" 2>&1); then
	printf '%s\n' "$am_out" | tail -n 20 >&2
	die "the series does not apply to the pristine tree with git am -3"
fi

while read -r mtime hash f; do
	[ -f "$applied/$f" ] && [ "$(git -C "$applied" hash-object "$f")" = "$hash" ] &&
		touch -d "@$mtime" "$applied/$f"
done <"$times"

# diff follows the graft's symlinks; only the series' git metadata is extra.
if ! differ=$(diff -rq --exclude=.git "$applied" "$SRC_TREE" 2>&1); then
	printf '%s\n' "$differ" | head -n 20 >&2
	die "the series applied to the pristine tree differs from the grafted tree ($(printf '%s\n' "$differ" | wc -l) differences)"
fi
echo "series: ${#patches[@]} patches apply to $(git -C "$applied" log -1 --format=%s base) with git am -3 and give the grafted tree"
