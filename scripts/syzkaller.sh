#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# syzkaller on alloctag (issue 73), outside the test command as
# scripts/debian-full.sh is. This first stage compiles
# contrib/syzkaller/alloctag.txt with syzkaller's own description compiler:
# it builds syz-sysgen from SYZKALLER_TREE (a source tree of syzkaller that
# Debian's Go builds: commit 0a02ce36a of 2023-12-07 declares go 1.19 and
# vendors its modules, so it builds offline) in a copy under
# $BUILD_DIR/syzkaller, copies the descriptions and their .const into its
# sys/linux/, and runs syz-sysgen over all of syzkaller's Linux descriptions.
# It fails when syz-sysgen fails or says anything about alloctag's files
# (an error or a warning). The fuzzing kernel and the syz-manager run are
# the next stage (not here yet).
#
# Found with it: syzkaller's compiler refuses a len as output
# ("len type must not be used as output"): GET_SPLIT's nr is described as
# input only.
#
# Usage: scripts/syzkaller.sh SYZKALLER_TREE
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=${1:?usage: scripts/syzkaller.sh SYZKALLER_TREE (a syzkaller source tree)}
[ -f "$tree/go.mod" ] && [ -d "$tree/sys/linux" ] || die "$tree is no syzkaller source tree"
command -v go >/dev/null || die "no go (scripts/install-deps.sh installs golang-go)"
out=$BUILD_DIR/syzkaller
src=$out/src
mkdir -p "$out"

log "syzkaller: copying $tree to $src"
rm -rf "$src"
cp -a "$tree" "$src"
cp "$ALLOCTAG_ROOT/contrib/syzkaller/alloctag.txt" "$ALLOCTAG_ROOT/contrib/syzkaller/alloctag.txt.const" \
	"$src/sys/linux/"

log "syzkaller: building syz-sysgen ($(go version))"
(cd "$src" && GOFLAGS=-mod=vendor go build -o bin/syz-sysgen ./sys/syz-sysgen) ||
	die "building syz-sysgen from $tree failed"

log "syzkaller: compiling the descriptions (syz-sysgen)"
rc=0
(cd "$src" && ./bin/syz-sysgen -src . -out "$out/gen") >"$out/sysgen.log" 2>&1 || rc=$?
if [ "$rc" != 0 ] || grep -q 'alloctag' "$out/sysgen.log"; then
	cat "$out/sysgen.log" >&2
	die "syz-sysgen: exit code $rc ($out/sysgen.log)"
fi
log "syzkaller: syz-sysgen compiled every Linux description with alloctag's, without a word about them"
