#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A rehearsal of carrying the series onto the next 6.12.y point release, run
# by hand (not by the test command); Documentation/patches.rst shows its
# output. Debian offers no 6.12.y newer than the linux-source-6.12 the series
# is made for, so the "update" is simulated on a branch of the pristine tree
# with two changes of the kind that 6.12.y brings
# (scripts/rehearsal/6.12.118-simulated.patch):
#
#   - mainline's 354ad60e123d ("mm/slab: only warn once when allocating slab
#     obj extensions fails"), backported: it rewrites the WARN that patch 10
#     (accuracy) replaces, so git am -3 stops there with a conflict;
#   - a line of context of patch 2's hunk in __free_pages() changed (a
#     comment added): plain git am would refuse the hunk; git am -3 merges it
#     by itself.
#
# Then it runs the README's commands (export, git am -3), shows the conflict,
# resolves it by keeping the series' side of the conflicting hunk (the
# series' version already warns once, and marks the tag inaccurate), and
# goes on with git am --continue to the end.
#
# Usage: scripts/rehearse-update.sh    (works in $BUILD_DIR/rehearsal)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=$BUILD_DIR/rehearsal
out=$BUILD_DIR/rehearsal-series
export GIT_AUTHOR_NAME="stable simulation" GIT_AUTHOR_EMAIL=stable@localhost
export GIT_COMMITTER_NAME="stable simulation" GIT_COMMITTER_EMAIL=stable@localhost
step() { printf '\n$ %s\n' "$*"; }

pristine_worktree "$tree"
# The simulated 6.12.118: scripts/rehearsal/6.12.118-simulated.patch.
git -C "$tree" am -q "$ALLOCTAG_ROOT/scripts/rehearsal/6.12.118-simulated.patch"
step "git -C linux-6.12.118 log --oneline -1"
git -C "$tree" log --oneline -1 | cat

export_cmd=$(readme_command scripts/export-patches.sh)
am_cmd=$(readme_command "git am")
step "${export_cmd//OUTDIR/series}"
(cd "$ALLOCTAG_ROOT" && bash -c "${export_cmd//OUTDIR/$out}") 2>&1 | tail -n 1
step "cd linux-6.12.118 && ${am_cmd//OUTDIR/../series}"
if (cd "$tree" && bash -c "${am_cmd//OUTDIR/$out}") 2>&1; then
	die "the series applied without a conflict: the rehearsal shows nothing"
fi
step "git diff    # the conflict"
git -C "$tree" diff | cat
# The series' side of each conflict: between ======= and >>>>>>>.
step "keep the series' side of the conflict, then git add mm/slub.c && git am --continue"
awk '/^<<<<<<< /{skip = 1; next} /^=======$/{skip = 0; next} /^>>>>>>> /{next} !skip' \
	"$tree/mm/slub.c" >"$tree/mm/slub.c.new"
mv "$tree/mm/slub.c.new" "$tree/mm/slub.c"
git -C "$tree" add -f mm/slub.c
git -C "$tree" am --continue 2>&1 | tail -n 3
step "git log --oneline linux-6.12.118.. | wc -l; the backport and the comment are kept"
git -C "$tree" log --oneline HEAD~15..HEAD | wc -l
grep -n 'free_unref_page(page, order); /\* the whole block \*/' "$tree/mm/page_alloc.c"
grep -n -A 3 'alloc_slab_obj_exts(slab, s, flags, false)) {' "$tree/mm/slub.c" | head -n 4
