#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Grafts alloctag into a Linux 6.12 source tree, for development: applies the
# patch files of patches/series to the kernel files they edit, with git apply,
# and places this checkout's files as symlinks (scripts/series.sh), so that
# they stay the single source. scripts/export-patches.sh makes the same
# changes as a series of real files.
#
# Running it again after a change is cheap and exact: the kernel files the
# series edits are made afresh, in a scratch directory, from their pristine
# content (kept in TREE/.alloctag-graft/ when first grafted) and every patch;
# only a file whose result differs from the tree's is written, so the others
# keep their times and make rebuilds only what changed. A file the series
# no longer edits gets its pristine content back.
#
# A patch that does not apply (edited by hand, or a tree that is not 6.12 as
# Debian ships it) stops the graft with git apply's message, before the tree
# is touched.
#
# Usage: scripts/graft.sh [TREE]    (default: the build directory's tree)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$ALLOCTAG_ROOT/scripts/series.sh"

tree=${1:-$SRC_TREE}
[ -f "$tree/lib/alloc_tag.c" ] || die "$tree is not a Linux 6.12 tree"
tree=$(realpath "$tree")
SERIES_MODE=graft
state=$tree/.alloctag-graft
mapfile -t patches < <(series_patches)

# The kernel files the patches edit or add.
mapfile -t files < <(sed -n 's|^+++ b/\(.*\)$|\1|p' "${patches[@]}" | LC_ALL=C sort -u)

# Their pristine content, saved the first time the series edits them. A file
# that already carries alloctag's code was grafted some other way: it is no
# pristine copy.
mkdir -p "$state/pristine"
for f in "${files[@]}"; do
	[ -e "$state/pristine/$f" ] || [ -e "$state/absent/$f" ] && continue
	if [ -e "$tree/$f" ]; then
		! grep -q 'alloctag' "$tree/$f" ||
			die "$tree/$f already holds alloctag's code, and $state has no pristine copy of it: graft a pristine tree"
		mkdir -p "$(dirname "$state/pristine/$f")"
		cp -p "$tree/$f" "$state/pristine/$f"
	else
		mkdir -p "$(dirname "$state/absent/$f")"
		: >"$state/absent/$f"
	fi
done

# The series applied to the pristine files, in a scratch directory (git
# apply outside any repository: GIT_CEILING_DIRECTORIES keeps it from
# finding one above).
scratch=$(mktemp -d "${TMPDIR:-/tmp}/alloctag-graft.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/t"
for f in "${files[@]}"; do
	[ -e "$state/pristine/$f" ] || continue
	mkdir -p "$(dirname "$scratch/t/$f")"
	cp -p "$state/pristine/$f" "$scratch/t/$f"
done
for p in "${patches[@]}"; do
	grep -q '^+++ b/' "$p" || continue # a patch that only adds our files
	if ! out=$(cd "$scratch/t" && GIT_CEILING_DIRECTORIES=$scratch git apply --whitespace=error-all "$p" 2>&1); then
		printf '%s\n' "$out" >&2
		die "patches/${p##*/} does not apply to the pristine files and the patches before it"
	fi
done

# Into the tree: only what changed.
changed=0
for f in "${files[@]}"; do
	if ! cmp -s "$scratch/t/$f" "$tree/$f"; then
		mkdir -p "$(dirname "$tree/$f")"
		rm -f "$tree/$f" # a link left by an older layout
		cp "$scratch/t/$f" "$tree/$f"
		changed=$((changed + 1))
	fi
done
# Files the last graft edited and this series does not: pristine again.
if [ -f "$state/files" ]; then
	while IFS= read -r f; do
		printf '%s\n' "${files[@]}" | grep -qxF -- "$f" && continue
		if [ -e "$state/absent/$f" ]; then
			rm -f "$tree/$f" "$state/absent/$f"
		elif [ -e "$state/pristine/$f" ]; then
			cp -p "$state/pristine/$f" "$tree/$f"
			rm -f "$state/pristine/$f"
		fi
		changed=$((changed + 1))
	done <"$state/files"
fi
printf '%s\n' "${files[@]}" >"$state/files"
[ "$changed" = 0 ] || log "grafted ${#patches[@]} patches: $changed kernel files written"

for s in "${STEPS[@]}"; do
	run_files "$s"
done
# A file the series no longer names leaves a dangling link: drop it.
find "$tree/lib/alloctag" -xtype l -delete
