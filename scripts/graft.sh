#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Grafts alloctag into a Linux 6.12 source tree, for development: applies the
# patch files of patches/series to the kernel files they edit, with git apply,
# and places this checkout's files (patches/files) as symlinks, so that
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
# No kernel build reads the tree while the graft rewrites it (lib.sh).
tree_lock -x "$tree"
SERIES_MODE=graft
state=$tree/.alloctag-graft
# Assignments, not process substitutions, so that series_patches' and
# series_files' die stops the graft.
list=$(series_patches)
mapfile -t patches <<<"$list"
SERIES_FILES=$(series_files)

# The kernel files the patches edit or add.
mapfile -t files < <(sed -n 's|^+++ b/\(.*\)$|\1|p' "${patches[@]}" | LC_ALL=C sort -u)
# A file is either a patch's (its diff) or this checkout's (patches/files).
declare -A by_patch=()
for f in "${files[@]}"; do
	by_patch[$f]=1
done
while read -r _ _ _ dest; do
	[ -z "${by_patch[$dest]:-}" ] || die "patches/files places $dest, which a patch's diff writes too"
done <<<"$SERIES_FILES"

# Their pristine content, saved the first time the series edits them. A file
# that already carries alloctag's code was grafted some other way: it is no
# pristine copy. Nor is a link into this checkout: a file of ours, which no
# patch may edit.
mkdir -p "$state/pristine" "$state/grafted"
for f in "${files[@]}"; do
	[ -e "$state/pristine/$f" ] || [ -e "$state/absent/$f" ] && continue
	# A link is a file an older graft placed (lib/alloctag/Kconfig and Kbuild
	# were, whole, until they became the patches' diffs): no pristine file.
	[ ! -L "$tree/$f" ] || rm -f "$tree/$f"
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
	if ! out=$(cd "$scratch/t" && env -u GIT_DIR -u GIT_WORK_TREE -u GIT_INDEX_FILE \
		GIT_CEILING_DIRECTORIES="$scratch" git apply --whitespace=error-all "$p" 2>&1); then
		printf '%s\n' "$out" >&2
		die "patches/${p##*/} does not apply to the pristine files and the patches before it"
	fi
done

# Into the tree: only what changed. A file that differs from what the last
# graft wrote was edited by hand: it is kept, and the graft stops, so that
# the edit is folded into its patch (scripts/refresh-patch.sh) or undone,
# never lost.
edited=()
for f in "${files[@]}"; do
	if [ -e "$tree/$f" ] && [ -e "$state/grafted/$f" ] && ! cmp -s "$state/grafted/$f" "$tree/$f" &&
		! cmp -s "$scratch/t/$f" "$tree/$f"; then
		edited+=("$f")
	fi
done
[ ${#edited[@]} = 0 ] || die "edited in $tree since the last graft: ${edited[*]}
fold each edit into its patch (scripts/refresh-patch.sh N), or undo it
(cp $state/grafted/FILE $tree/FILE), then graft again"
changed=0
for f in "${files[@]}"; do
	if ! cmp -s "$scratch/t/$f" "$tree/$f"; then
		mkdir -p "$(dirname "$tree/$f")"
		rm -f "$tree/$f" # a link left by an older layout
		cp "$scratch/t/$f" "$tree/$f"
		changed=$((changed + 1))
	fi
	mkdir -p "$(dirname "$state/grafted/$f")"
	cmp -s "$scratch/t/$f" "$state/grafted/$f" || cp "$scratch/t/$f" "$state/grafted/$f"
done
# Files the last graft edited and this series does not: pristine again.
if [ -f "$state/files" ]; then
	declare -A in_series=()
	for f in "${files[@]}"; do
		in_series[$f]=1
	done
	while IFS= read -r f; do
		# (Not printf | grep -q: under pipefail, grep's early exit fails
		# printf with SIGPIPE at random, and a file of the series was taken
		# for one it dropped.)
		[ -z "${in_series[$f]:-}" ] || continue
		if [ -e "$state/absent/$f" ]; then
			rm -f "$tree/$f" "$state/absent/$f"
		elif [ -e "$state/pristine/$f" ]; then
			# A new time: the objects built from the edited file are older.
			cp "$state/pristine/$f" "$tree/$f"
			rm -f "$state/pristine/$f"
		fi
		rm -f "$state/grafted/$f"
		changed=$((changed + 1))
	done <"$state/files"
fi
printf '%s\n' "${files[@]}" >"$state/files"
[ "$changed" = 0 ] || log "grafted ${#patches[@]} patches: $changed kernel files written"

for p in "${patches[@]}"; do
	add_files "$p"
done
# A file the series no longer names leaves a dangling link: drop it.
find "$tree/lib/alloctag" "$tree/rust/kernel" "$tree/Documentation/mm" -xtype l -delete
# Grafted from another checkout than last time: the links now name files
# whose times are this checkout's, which may be older than the objects built
# from the other's, though their content differs, and make would keep those
# objects. Every file the links name is made newer than any build. (A fresh
# clone's files are new anyway.)
if [ "$(cat "$state/root" 2>/dev/null)" != "$ALLOCTAG_ROOT" ]; then
	find "$tree" -path "$state" -prune -o -type l -lname "$ALLOCTAG_ROOT/*" -print0 |
		xargs -0 -r touch -c
	echo "$ALLOCTAG_ROOT" >"$state/root"
fi
