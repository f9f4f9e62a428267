#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Folds what was edited in the grafted tree's kernel files into one patch of
# the series, and writes the patch files again (Documentation/patches.rst,
# "Changing a patch"). The kernel files are those the series edits, and any
# FILE named besides (a file the series does not edit yet).
#
# It applies patches/series with git am to a checkout of the pristine tree
# ($BUILD_DIR/patches-work), commits the grafted tree's content of those
# files as a fixup of patch N and lets git rebase --autosquash move it
# there: the later patches are rebased onto the changed one, as on any git
# branch. On a conflict it stops and says how to go on. Then git
# format-patch writes patches/ anew (--zero-commit, so that a patch that did
# not change comes out byte for byte the same) and patches/series with it.
#
# patches-work must come from patches/ as they are: --write refuses a
# patches-work that was applied from other patch files (an older checkout's,
# or before a patch file was edited by hand), which would write them back.
#
# Usage: scripts/refresh-patch.sh N [FILE...]   N: the patch's number (7 or 0007)
#        scripts/refresh-patch.sh --apply        patches-work from patches/, to
#                                                change messages or order with git
#        scripts/refresh-patch.sh --write        after a resolved conflict or --apply:
#                                                write patches/ from patches-work
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$ALLOCTAG_ROOT/scripts/series.sh"

work=$BUILD_DIR/patches-work
# What patches-work was applied from: a digest of patches/ at the time.
stamp=$work.applied
name=$(git -C "$ALLOCTAG_ROOT" config user.name || echo "alloctag developers")
email=$(git -C "$ALLOCTAG_ROOT" config user.email || echo "alloctag@localhost")
export GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email

# A digest of the patch files and patches/series.
patches_digest() {
	(cd "$PATCHES_DIR" && cat series [0-9][0-9][0-9][0-9]-*.patch) | sha256sum | cut -d' ' -f1
}

# Makes $work patches/ applied, and records from what.
apply_patches() {
	local list p
	rm -f "$stamp"
	pristine_worktree "$work"
	list=$(series_patches) # an assignment: its die stops the refresh
	for p in $list; do
		git -C "$work" am -q --empty=keep "$p" || die "patches/${p##*/} does not apply: fix it by hand first"
	done
	patches_digest >"$stamp"
}

# Writes patches/ from the commits base..HEAD of $work.
write_patches() {
	local out list key i m
	local -a new old
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(patches_digest)" ] ||
		die "$work was not applied from patches/ as they are now: run scripts/refresh-patch.sh --apply (or N), redo the change there, then --write"
	[ -z "$(git -C "$work" status --porcelain --untracked-files=no)" ] ||
		die "$work has changes not committed (a rebase to finish?)"
	out=$(mktemp -d)
	git -C "$work" format-patch -q --full-index --zero-commit --no-signature -o "$out" base..HEAD
	mapfile -t new < <(cd "$out" && ls [0-9][0-9][0-9][0-9]-*.patch)
	list=$(series_patches) # an assignment: its die stops the refresh
	mapfile -t old <<<"$list"
	old=("${old[@]##*/}")
	# patches/files names patches by file name, which a new subject or
	# order changes: each name there goes to the new patch of the same
	# subject, or else, with as many patches as before, of the same place.
	# A name that matches none stops it before patches/ changes.
	declare -A renamed=()
	while read -r key; do
		for m in "${new[@]}"; do
			[ "${m#[0-9][0-9][0-9][0-9]-}" != "${key#[0-9][0-9][0-9][0-9]-}" ] || renamed[$key]=$m
		done
		if [ -z "${renamed[$key]:-}" ] && [ ${#new[@]} = ${#old[@]} ]; then
			for i in "${!old[@]}"; do
				[ "${old[$i]}" != "$key" ] || renamed[$key]=${new[$i]}
			done
		fi
		[ -n "${renamed[$key]:-}" ] ||
			die "patches/files names $key, which $work no longer makes: rename it there to its patch's new name (in $out), then --write again"
	done < <(grep '^[0-9][0-9][0-9][0-9]-.*\.patch$' "$PATCHES_DIR/files")
	rm -f "$PATCHES_DIR"/[0-9][0-9][0-9][0-9]-*.patch
	mv "$out"/*.patch "$PATCHES_DIR/"
	rmdir "$out"
	{
		sed -n '/^#/p' "$PATCHES_DIR/series"
		printf '%s\n' "${new[@]}"
	} >"$PATCHES_DIR/series.new"
	mv "$PATCHES_DIR/series.new" "$PATCHES_DIR/series"
	for key in "${!renamed[@]}"; do
		[ "$key" = "${renamed[$key]}" ] ||
			sed -i "s|^$key\$|${renamed[$key]}.new|" "$PATCHES_DIR/files"
	done
	sed -i 's|^\([0-9]\{4\}-.*\.patch\)\.new$|\1|' "$PATCHES_DIR/files"
	patches_digest >"$stamp"
	git -C "$ALLOCTAG_ROOT" status --short -- patches/
}

case "${1:-}" in
--write)
	write_patches
	exit 0
	;;
--apply)
	apply_patches
	echo "==> $work: patches/ applied; change it with git, then scripts/refresh-patch.sh --write"
	exit 0
	;;
esac

n=${1:?usage: scripts/refresh-patch.sh N [FILE...]}
shift
case "$n" in '' | *[!0-9]*) die "N must be a patch's number, not '$n'" ;; esac
n=$((10#$n))
list=$(series_patches) # an assignment: its die stops the refresh
mapfile -t patches <<<"$list"
[ "$n" -ge 1 ] && [ "$n" -le "${#patches[@]}" ] || die "there is no patch $n (1 to ${#patches[@]})"
[ -f "$SRC_TREE/.alloctag-graft/files" ] || die "no grafted tree at $SRC_TREE: run scripts/prepare-tree.sh"

apply_patches

mapfile -t files < <(cat "$SRC_TREE/.alloctag-graft/files")
files+=("$@")
# A file the series did not edit yet: the graft takes its pristine content
# from the tree the first time, which now holds the edit; give it the
# pristine tree's instead.
for f in "$@"; do
	[ -e "$SRC_TREE/.alloctag-graft/pristine/$f" ] && continue
	mkdir -p "$(dirname "$SRC_TREE/.alloctag-graft/pristine/$f")"
	git -C "$work" show "base:$f" >"$SRC_TREE/.alloctag-graft/pristine/$f" ||
		die "$f is not in the pristine tree"
done
for f in "${files[@]}"; do
	[ -e "$SRC_TREE/$f" ] || die "$SRC_TREE/$f does not exist"
	[ ! -L "$SRC_TREE/$f" ] || die "$f is one of this checkout's files (a link), not a kernel file: edit it here"
	mkdir -p "$(dirname "$work/$f")"
	cp "$SRC_TREE/$f" "$work/$f"
done
git -C "$work" add -f -- "${files[@]}"
git -C "$work" diff --cached --quiet &&
	die "the grafted tree's kernel files are as the series makes them: nothing to fold into patch $n"
git -C "$work" diff --cached --stat | cat
target=$(git -C "$work" rev-list --reverse base..HEAD | sed -n "${n}p")
git -C "$work" commit -q --fixup="$target"
if ! GIT_SEQUENCE_EDITOR=: git -C "$work" rebase -q -i --autosquash --empty=keep base; then
	die "the change does not rebase cleanly onto the patches after $n: resolve it in $work
(git status, edit, git add, git rebase --continue), then run scripts/refresh-patch.sh --write"
fi
write_patches
