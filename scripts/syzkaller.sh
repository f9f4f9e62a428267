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
# (an error or a warning). Then syz-extract computes the descriptions'
# constants against the grafted tree, configured and prepared in KBUILD
# (default $BUILD_DIR/kernel-test), and the script fails unless they are
# contrib/syzkaller/alloctag.txt.const, byte for byte (that file is
# syz-extract's output; the host test checks its values against the
# header). Last it builds syzkaller's manager, fuzzer and executor from the
# copy (about 3 minutes on 2 cores with Go's cache cold). The fuzzing kernel
# and the syz-manager run are the next stage (not here yet).
#
# Found with it: syzkaller's compiler refuses a len as output
# ("len type must not be used as output"): GET_SPLIT's nr is described as
# input only.
#
# Usage: scripts/syzkaller.sh SYZKALLER_TREE [KBUILD]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=${1:?usage: scripts/syzkaller.sh SYZKALLER_TREE [KBUILD] (a syzkaller source tree)}
kbuild=${2:-$BUILD_DIR/kernel-test}
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

# What the copy changes so that it builds offline: the snapshot of the tree
# lacks GCE's vendored API (vendor/google.golang.org/api/compute/v1), which
# only GCE code uses. vm/vm.go stops registering the gce and cuttlefish VM
# types, and pkg/gce becomes a stand-in whose NewContext() fails (syz-manager
# calls it only for its web address; syz-extract reaches pkg/gce through
# pkg/build -> vm).
sed -i '/"github.com\/google\/syzkaller\/vm\/gce"/d; /"github.com\/google\/syzkaller\/vm\/cuttlefish"/d' "$src/vm/vm.go"
rm -rf "$src/pkg/gce" "$src/vm/gce" "$src/vm/cuttlefish"
mkdir -p "$src/pkg/gce"
cat >"$src/pkg/gce/gce.go" <<'GO'
// Package gce is alloctag's stand-in (scripts/syzkaller.sh): no GCE here.
package gce

import "errors"

// Context has the fields syz-manager reads.
type Context struct {
	ExternalIP string
}

// NewContext fails: the machine is no GCE instance.
func NewContext(customZoneID string) (*Context, error) {
	return nil, errors.New("gce: not built in (scripts/syzkaller.sh)")
}
GO

log "syzkaller: building syz-sysgen and syz-extract ($(go version))"
for tool in syz-sysgen syz-extract; do
	(cd "$src" && GOFLAGS=-mod=vendor go build -o "bin/$tool" "./sys/$tool") ||
		die "building $tool from $tree failed"
done

log "syzkaller: compiling the descriptions (syz-sysgen)"
rc=0
(cd "$src" && ./bin/syz-sysgen -src . -out "$out/gen") >"$out/sysgen.log" 2>&1 || rc=$?
if [ "$rc" != 0 ] || grep -q 'alloctag' "$out/sysgen.log"; then
	cat "$out/sysgen.log" >&2
	die "syz-sysgen: exit code $rc ($out/sysgen.log)"
fi
log "syzkaller: syz-sysgen compiled every Linux description with alloctag's, without a word about them"

[ -f "$kbuild/include/generated/autoconf.h" ] || die "$kbuild is no configured, prepared kernel build directory"
log "syzkaller: syz-extract against $SRC_TREE ($kbuild)"
rm -f "$src/sys/linux/alloctag.txt.const"
(cd "$src" && ./bin/syz-extract -os linux -arch amd64 -sourcedir "$SRC_TREE" -builddir "$kbuild" alloctag.txt) \
	>"$out/extract.log" 2>&1 || { cat "$out/extract.log" >&2; die "syz-extract failed ($out/extract.log)"; }
cp "$src/sys/linux/alloctag.txt.const" "$out/alloctag.txt.const"
if ! diff -u "$ALLOCTAG_ROOT/contrib/syzkaller/alloctag.txt.const" "$out/alloctag.txt.const" >&2; then
	die "syz-extract's constants differ from contrib/syzkaller/alloctag.txt.const (above): copy $out/alloctag.txt.const over it"
fi
log "syzkaller: syz-extract's constants are contrib/syzkaller/alloctag.txt.const"

# The run's tools, for the next stage: syz-manager, and syz-fuzzer,
# syz-execprog and syz-executor for the guest (the executor with the host's
# gcc, static). The copy is no git checkout: its revision is given.
log "syzkaller: building syz-manager, syz-fuzzer, syz-execprog and syz-executor"
(cd "$src" && make REV=alloctag GITREVDATE=0 manager fuzzer execprog executor) >"$out/make.log" 2>&1 ||
	{ tail -n 20 "$out/make.log" >&2; die "building syzkaller failed ($out/make.log)"; }
log "syzkaller: built in $src/bin"
