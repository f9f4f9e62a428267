#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Checks the patch series against the graft: exports it and applies it with
# git am to a fresh checkout of the pristine tree, each with the README's own
# command as it prints it (readme_command, lib.sh: `scripts/export-patches.sh
# OUTDIR`, `git am -3 OUTDIR/*.patch`), then checks the series' whitespace
# and compares the result with the grafted tree, file by file, following the
# graft's symlinks: the two must be equal. The tree it
# leaves, $BUILD_DIR/linux-series, is the series as a carrier would build
# it; the arm64 configuration of the build matrix builds from it.
#
# Usage: scripts/check-series.sh    (prints one line: what was checked)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -f "$SRC_TREE/lib/alloctag/Kbuild" ] || die "no grafted tree at $SRC_TREE: run scripts/prepare-tree.sh"
series=$BUILD_DIR/series
applied=$BUILD_DIR/linux-series

# The checkout is this run's from the times read below to the diff at the
# end: another run that applied its own series in between, and built from
# it, would be given these times back for its files (lib.sh, tree_lock).
tree_lock -x "$applied"

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
export_cmd=$(readme_command scripts/export-patches.sh)
am_cmd=$(readme_command "git am")
[[ "$export_cmd" == *OUTDIR* && "$am_cmd" == *OUTDIR* ]] ||
	die "the README's series commands name no OUTDIR: '$export_cmd', '$am_cmd'"
rm -rf "$series"
(cd "$ALLOCTAG_ROOT" && SERIES_WORKTREE=$applied bash -c "${export_cmd//OUTDIR/$series}") ||
	die "the README's '$export_cmd' failed"
pristine_worktree "$applied"
patches=("$series"/*.patch)
name=$(git -C "$ALLOCTAG_ROOT" config user.name || echo "alloctag developers")
email=$(git -C "$ALLOCTAG_ROOT" config user.email || echo "alloctag@localhost")
if ! am_out=$(cd "$applied" && GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email \
	bash -c "${am_cmd//OUTDIR/$series}" 2>&1); then
	printf '%s\n' "$am_out" | tail -n 20 >&2
	die "the README's '$am_cmd' does not apply the series to the pristine tree"
fi
# What git am --whitespace=error would refuse.
if ! ws=$(git -C "$applied" diff --check base HEAD); then
	printf '%s\n' "$ws" | head -n 20 >&2
	die "the series adds whitespace errors"
fi

while read -r mtime hash f; do
	[ -f "$applied/$f" ] && [ "$(git -C "$applied" hash-object "$f")" = "$hash" ] &&
		touch -d "@$mtime" "$applied/$f"
done <"$times"

# diff follows the graft's symlinks; only the series' git metadata and the
# graft's pristine copies (.alloctag-graft) are extra.
if ! differ=$(diff -rq --exclude=.git --exclude=.alloctag-graft "$applied" "$SRC_TREE" 2>&1); then
	printf '%s\n' "$differ" | head -n 20 >&2
	die "the series applied to the pristine tree differs from the grafted tree ($(printf '%s\n' "$differ" | wc -l) differences)"
fi
echo "series: ${#patches[@]} patches apply to $(git -C "$applied" log -1 --format=%s base) with git am -3 and give the grafted tree"
