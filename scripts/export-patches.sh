#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Writes alloctag as a patch series for the pristine Linux 6.12 tree
# (Debian's linux-source-6.12): a cover letter and one patch per concern.
# Each patch is made by applying its patch file (patches/series) with git am
# to a git copy of the pristine tree and amending the commit with the files
# of this checkout that it adds (patches/files, copied, no symlinks); the
# series is git format-patch's, with full blob ids so that `git am -3` can
# fall back to a three-way merge on a 6.12.y tree whose lines moved. The
# cover letter is patches/0000-cover-letter.txt (its first line the subject).
#
# The cover letter is written as 0000-cover-letter.txt, not .patch: git am
# stops at a mail with no diff ("Patch is empty"), and the README's command,
# `git am -3 OUTDIR/*.patch`, must apply the series as printed (the build
# matrix's "series" runs it so, scripts/check-series.sh). git send-email
# takes it as it is.
#
# Usage: scripts/export-patches.sh OUTDIR
# Apply: cd linux-6.12.y && git am -3 OUTDIR/*.patch
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$ALLOCTAG_ROOT/scripts/series.sh"

out=${1:?usage: scripts/export-patches.sh OUTDIR}
# OUTDIR is emptied first: never the checkout or a folder of it (patches/).
case "$(realpath -m "$out")/" in
"$ALLOCTAG_ROOT"/*) die "OUTDIR must be outside this checkout, not $out" ;;
esac
# The checkout the series is made in, kept for the next export (which then
# rewrites only the files the series touches).
tree=${SERIES_WORKTREE:-$BUILD_DIR/series-work}
pristine_worktree "$tree"
SERIES_MODE=export

# The committer is the checkout's, and the dates its HEAD's, so that
# exporting the same commit twice writes the same series; the author and
# the message are each patch file's.
name=$(git -C "$ALLOCTAG_ROOT" config user.name || echo "alloctag developers")
email=$(git -C "$ALLOCTAG_ROOT" config user.email || echo "alloctag@localhost")
date=$(git -C "$ALLOCTAG_ROOT" log -1 --format=%cI 2>/dev/null || date -u -Iseconds)
export GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email GIT_COMMITTER_DATE=$date

list=$(series_patches) # assignments: their die stops the export
mapfile -t patches <<<"$list"
SERIES_FILES=$(series_files)
for p in "${patches[@]}"; do
	# --empty=keep: a patch whose files are all this checkout's has a
	# message and no diff of kernel files.
	if ! am_out=$(git -C "$tree" am -q --empty=keep "$p" 2>&1); then
		printf '%s\n' "$am_out" >&2
		die "patches/${p##*/} does not apply to the pristine tree and the patches before it"
	fi
	add_files "$p"
	git -C "$tree" add -A -f
	git -C "$tree" commit -q --amend --no-edit --allow-empty
	git -C "$tree" diff --quiet HEAD~1 HEAD && die "series: patches/${p##*/} changes nothing (no diff, no files in patches/files)"
done

rm -rf "$out"
mkdir -p "$out"
# The cover letter's author is the committer.
GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email GIT_AUTHOR_DATE=$date \
	git -C "$tree" format-patch -q --full-index --cover-letter --no-signature -o "$(realpath "$out")" base..HEAD
cover=("$out"/0000-cover-letter.patch)
cp "$PATCHES_DIR/0000-cover-letter.txt" "$out/cover.txt"
awk -v subject="$(head -n 1 "$out/cover.txt")" -v blurb="$out/cover.txt" '
	/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subject) }
	/^\*\*\* BLURB HERE \*\*\*$/ {
		n = 0
		while ((getline line < blurb) > 0)
			if (n++ > 1) print line
		next
	}
	{ print }' "${cover[0]}" >"${cover[0]}.tmp"
mv "${cover[0]}.tmp" "$out/0000-cover-letter.txt"
rm -f "${cover[0]}" "$out/cover.txt"

# What a carrier gets must stand alone: real files, and nothing that names
# this checkout or the build directory.
! grep -l '^new file mode 120000' "$out"/*.patch || die "the series holds a symlink"
! grep -lF -e "$ALLOCTAG_ROOT" -e "$BUILD_DIR" "$out"/* || die "the series names the checkout or the build directory"
log "wrote $out/0000-cover-letter.txt and ${#patches[@]} patches, $(ls "$out"/*.patch | wc -l) files *.patch"
