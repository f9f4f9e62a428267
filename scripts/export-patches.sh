#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Writes alloctag as a patch series for the pristine Linux 6.12 tree
# (Debian's linux-source-6.12): a cover letter and one patch per concern,
# from the description in scripts/series.sh that scripts/graft.sh runs too.
# Each patch is made by running its steps on a git copy of the pristine tree,
# with the project's files copied (no symlinks), and committed; the series is
# git format-patch's, with full blob ids so that `git am -3` can fall back to
# a three-way merge on a 6.12.y tree whose lines moved.
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
# The checkout the series is made in, kept for the next export (which then
# rewrites only the files the series touches).
tree=${SERIES_WORKTREE:-$BUILD_DIR/series-work}
pristine_worktree "$tree"
SERIES_MODE=export

# The author is the checkout's, and the dates its HEAD's, so that exporting
# the same commit twice writes the same series.
name=$(git -C "$ALLOCTAG_ROOT" config user.name || echo "alloctag developers")
email=$(git -C "$ALLOCTAG_ROOT" config user.email || echo "alloctag@localhost")
date=$(git -C "$ALLOCTAG_ROOT" log -1 --format=%cI 2>/dev/null || date -u -Iseconds)
export GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email GIT_AUTHOR_DATE=$date
export GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email GIT_COMMITTER_DATE=$date

for p in "${SERIES[@]}"; do
	run_patch "$p"
	git -C "$tree" add -A -f
	git -C "$tree" diff --cached --quiet && die "series: patch_$p changes nothing"
	printf '%s\n\n%s\n\nSigned-off-by: %s <%s>\n' "$SUBJECT" "$BODY" "$name" "$email" |
		git -C "$tree" commit -q -F -
done

rm -rf "$out"
mkdir -p "$out"
git -C "$tree" format-patch -q --full-index --cover-letter --no-signature -o "$(realpath "$out")" base..HEAD
cover=("$out"/0000-cover-letter.patch)
series_cover >"$out/cover.txt"
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
log "wrote $out/0000-cover-letter.txt and ${#SERIES[@]} patches, $(ls "$out"/*.patch | wc -l) files *.patch"
