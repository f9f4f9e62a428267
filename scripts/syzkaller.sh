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
# (default: the fuzzing kernel below, built first), and the script fails unless they are
# contrib/syzkaller/alloctag.txt.const, byte for byte (that file is
# syz-extract's output; the host test checks its values against the
# header). Then it builds syzkaller's manager, fuzzer and executor from the
# copy (about 3 minutes on 2 cores with Go's cache cold).
#
# Then the run: it builds the fuzzing kernel, $BUILD_DIR/kernel-syzkaller
# (scripts/configs/syzkaller.config: the matrix's kasan configuration with
# KCOV and what syzkaller's image "9p" needs), and runs syz-manager on it for
# SYZ_MINUTES (default 60) minutes: one QEMU VM (TCG, 2 vCPUs, 2 GiB) whose
# root is the host's over virtio-9p, sshd started by syzkaller's generated
# init (the host needs openssh-server and ifupdown), two NUMA nodes of a
# CPU each with per-node counting on, enable_syscalls limited to what
# reaches alloctag (contrib/syzkaller/manager.json: its files, and the load
# and unload of the test modules, copied to /srv/alloctag-syzkaller/modules)
# and the allocation-heavy calls that drive the hooks while fault rules and
# capture selections are armed. Timeouts are syzkaller's for emulated targets
# (slowdown 10; the 2023 tree assumes KVM for x86 on x86). What it leaves in
# the manager's workdir (SYZ_WORKDIR, default /srv/alloctag-syzkaller): the
# corpus, the crashes with their logs, reports and reproducers; scripts/syzkaller.sh prints the manager's
# figures (executions, corpus, coverage, crashes) at the end, and the
# coverage of alloctag's C glue and of the allocation hooks, by function,
# from the manager's /funccover (scripts/syzkaller/report.py, into
# $BUILD_DIR/syzkaller/report.md). SYZ_MINUTES=0 stops after the build.
#
# Found with it: syzkaller's compiler refuses a len as output
# ("len type must not be used as output"): GET_SPLIT's nr is described as
# input only.
#
# Usage: [SYZ_MINUTES=N] scripts/syzkaller.sh SYZKALLER_TREE [KBUILD]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=${1:?usage: scripts/syzkaller.sh SYZKALLER_TREE [KBUILD] (a syzkaller source tree)}
kbuild=${2:-$BUILD_DIR/kernel-syzkaller}
minutes=${SYZ_MINUTES:-60}
case $minutes in '' | *[!0-9]*) die "SYZ_MINUTES must be a number of minutes, not '$minutes'" ;; esac
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
# The image "9p" init (vm/qemu/qemu.go) mounts a tmpfs on /run and makes
# only /var/run/sshd (a tmpfs of its own too), but the host's sshd (Debian's
# OpenSSH 9.2, whose privilege separation is no longer optional) refuses to
# start without /run/sshd: "Missing privilege separation directory".
sed -i 's|^mkdir -p /var/run/sshd/$|mkdir -p /var/run/sshd/ /run/sshd|' "$src/vm/qemu/qemu.go"
grep -qx 'mkdir -p /var/run/sshd/ /run/sshd' "$src/vm/qemu/qemu.go" ||
	die "vm/qemu/qemu.go of $tree has no 'mkdir -p /var/run/sshd/' line to extend"
# This tree's manager checks that the image is a file and makes its path
# absolute before vm/qemu compares it with "9p": let "9p" through as it is.
sed -i 's|^\tif cfg.Image != "" {$|\tif cfg.Image != "" \&\& cfg.Image != "9p" { // alloctag: image "9p"|' \
	"$src/pkg/mgrconfig/load.go"
grep -q 'cfg.Image != "9p" { // alloctag' "$src/pkg/mgrconfig/load.go" ||
	die "pkg/mgrconfig/load.go of $tree has no image check to let \"9p\" through"
# And vm/qemu's instance constructor calls Size() on the nil FileInfo that
# os.Stat() returns for a missing file: "9p" is none (fixed upstream later).
sed -i 's|if st, err := os.Stat(inst.image); err != nil \&\& st.Size() == 0 {|if st, err := os.Stat(inst.image); err == nil \&\& st.Size() == 0 { // alloctag|' \
	"$src/vm/qemu/qemu.go"
grep -q 'err == nil && st.Size() == 0 { // alloctag' "$src/vm/qemu/qemu.go" ||
	die "vm/qemu/qemu.go of $tree has no os.Stat(inst.image) test to mend"
# The host's scp (OpenSSH 9) copies through SFTP, which the init's
# sshd_config does not offer: "subsystem request failed on channel 0".
sed -i 's|^          PubkeyAuthentication yes$|          PubkeyAuthentication yes\n          Subsystem sftp internal-sftp|' \
	"$src/vm/qemu/qemu.go"
grep -q '^          Subsystem sftp internal-sftp$' "$src/vm/qemu/qemu.go" ||
	die "vm/qemu/qemu.go of $tree has no sshd_config to offer SFTP in"
# The init's /etc is an empty tmpfs: no /etc/hosts, so the fuzzer's Go
# resolver asks DNS for "localhost" (the manager's address through ssh's
# forward) and fails: "failed to create an RPC client: dial tcp: lookup
# localhost".
sed -i 's|^touch /etc/fstab$|touch /etc/fstab\necho "127.0.0.1 localhost" >/etc/hosts|' "$src/vm/qemu/qemu.go"
grep -q '^echo "127.0.0.1 localhost" >/etc/hosts$' "$src/vm/qemu/qemu.go" ||
	die "vm/qemu/qemu.go of $tree has no 'touch /etc/fstab' line to follow"
# The host's root holds mounts of other devices (/proc, /sys, /dev): over
# 9p without multidevs=remap their inode numbers collide, and the guest took
# the host's /proc and /sys for one directory, so that the init's sysfs
# mount hid its procfs ("SYZFAIL: open(/proc/self/ns/net) failed": no
# /proc/self at all, found with a debug init).
sed -i 's|"local,id=fsdev0,path=/,security_model=none,readonly",|"local,id=fsdev0,path=/,security_model=none,readonly,multidevs=remap", // alloctag|' \
	"$src/vm/qemu/qemu.go"
grep -q 'readonly,multidevs=remap", // alloctag' "$src/vm/qemu/qemu.go" ||
	die "vm/qemu/qemu.go of $tree has no 9p -fsdev option to add multidevs=remap to"
# The test modules with debugfs files are loaded before the fuzzer starts:
# its machine check disables an openat$ whose path (the first of a set)
# does not open, and their files exist only while they are loaded. The
# fuzzer unloads and loads them again as it likes. The host has no kmod's
# insmod: Debian's busybox-static has one.
sed -i 's|^touch /etc/fstab$|touch /etc/fstab\n/bin/busybox insmod /srv/alloctag-syzkaller/modules/alloctag_test.ko \|\| true\n/bin/busybox insmod /srv/alloctag-syzkaller/modules/alloctag_numa.ko \|\| true|' \
	"$src/vm/qemu/qemu.go"
grep -q '^/bin/busybox insmod /srv/alloctag-syzkaller/modules/alloctag_numa.ko || true$' "$src/vm/qemu/qemu.go" ||
	die "vm/qemu/qemu.go of $tree: the test modules' insmod lines did not go in"
# TCG, not KVM: the timeouts of an emulated target (pkg/mgrconfig/load.go
# gives them only where the host's and the target's arch differ).
sed -i 's/^\tslowdown := 1$/\tslowdown := 10 \/\/ alloctag: TCG (scripts\/syzkaller.sh)/' "$src/pkg/mgrconfig/load.go"
grep -q 'slowdown := 10 // alloctag' "$src/pkg/mgrconfig/load.go" ||
	die "pkg/mgrconfig/load.go of $tree has no 'slowdown := 1' to raise"

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

# The fuzzing kernel, built first: it is also what syz-extract reads, unless
# KBUILD names another configured tree (a fresh machine then needs no other
# kernel built).
kernel=$BUILD_DIR/kernel-syzkaller
if [ "$minutes" != 0 ] || [ -z "${2:-}" ]; then
	"$ALLOCTAG_ROOT/scripts/prepare-tree.sh" >"$out/tree.log" 2>&1 ||
		{ tail -n 20 "$out/tree.log" >&2; die "preparing the kernel tree failed ($out/tree.log)"; }
	log "syzkaller: building the fuzzing kernel (nodebug + numa + kasan + syzkaller.config)"
	KERNEL_CONFIG=nodebug "$ALLOCTAG_ROOT/scripts/build-kernel.sh" syzkaller \
		"$ALLOCTAG_ROOT/scripts/configs/numa.config" "$ALLOCTAG_ROOT/scripts/configs/kasan.config" \
		"$ALLOCTAG_ROOT/scripts/configs/syzkaller.config" >"$out/kernel.log" 2>&1 ||
		{ tail -n 20 "$out/kernel.log" >&2; die "building the fuzzing kernel failed ($out/kernel.log)"; }
	for opt in KCOV KCOV_ENABLE_COMPARISONS KASAN PROVE_LOCKING 9P_FS VIRTIO_NET ALLOCTAG_FAULT_INJECTION \
		ALLOCTAG_CAPTURE ALLOCTAG_WASTE ALLOCTAG_PER_NODE; do
		grep -qx "CONFIG_$opt=y" "$kernel/.config" || die "the fuzzing kernel lacks CONFIG_$opt"
	done
	! grep -qx 'CONFIG_MEM_ALLOC_PROFILING_DEBUG=y' "$kernel/.config" ||
		die "the fuzzing kernel has MEM_ALLOC_PROFILING_DEBUG"
fi

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
# The revision's date in the form prog/meta.go parses at start-up
# (20060102-150405), or every tool panics: the tree's newest file's.
revdate=$(find "$tree" -type f -printf '%T@\n' | sort -n | tail -n 1 | cut -d. -f1)
revdate=$(date -u -d "@$revdate" +%Y%m%d-%H%M%S)
(cd "$src" && make REV=alloctag GITREVDATE="$revdate" manager fuzzer execprog executor) >"$out/make.log" 2>&1 ||
	{ tail -n 20 "$out/make.log" >&2; die "building syzkaller failed ($out/make.log)"; }
log "syzkaller: built in $src/bin"

[ "$minutes" != 0 ] || exit 0

for tool in /usr/sbin/sshd /sbin/ifup ssh ssh-keygen; do
	command -v "$tool" >/dev/null ||
		die "no $tool: syzkaller's image \"9p\" runs the host's (apt-get install openssh-server ifupdown openssh-client)"
done
# The manager's configuration: contrib/syzkaller/manager.json with this
# machine's paths. The workdir holds the VM's init and ssh key, which the
# guest reads from the host's root over 9p after its init has mounted
# tmpfs on /root, /tmp, /var, /run and /etc: it must be elsewhere
# (SYZ_WORKDIR, default /srv/alloctag-syzkaller).
workdir=${SYZ_WORKDIR:-/srv/alloctag-syzkaller}
case $workdir in
/root | /root/* | /tmp | /tmp/* | /var | /var/* | /run | /run/* | /etc | /etc/*)
	die "SYZ_WORKDIR=$workdir: the guest's init hides it under a tmpfs" ;;
esac
mkdir -p "$workdir"
# The test modules the descriptions load (contrib/syzkaller/alloctag.txt),
# at the fixed path they name: the guest reads them over 9p.
modules=/srv/alloctag-syzkaller/modules
rm -rf "$modules"
mkdir -p "$modules"
find "$kernel/lib/alloctag/tests/modules" -name '*.ko' -exec cp {} "$modules/" \;
for ko in $(grep -o "$modules/[a-z_]*\.ko" "$ALLOCTAG_ROOT/contrib/syzkaller/alloctag.txt" | sort -u); do
	[ -f "$ko" ] || die "the fuzzing kernel built no $(basename "$ko") (CONFIG_ALLOCTAG_TEST_MODULE=m)"
done
port=56741
python3 - "$ALLOCTAG_ROOT/contrib/syzkaller/manager.json" "$out/manager.cfg" <<PY
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg.update({"workdir": "$workdir", "kernel_obj": "$kernel", "kernel_src": "$SRC_TREE",
            "kernel_build_src": "$SRC_TREE", "syzkaller": "$src", "http": "127.0.0.1:$port"})
cfg["vm"]["kernel"] = "$kernel/arch/x86/boot/bzImage"
json.dump(cfg, open(sys.argv[2], "w"), indent=1)
PY
log "syzkaller: syz-manager for $minutes minutes ($out/manager.cfg, log $out/manager.log, http://127.0.0.1:$port)"
"$src/bin/syz-manager" -config "$out/manager.cfg" >"$out/manager.log" 2>&1 &
manager=$!
trap 'kill -INT "$manager" 2>/dev/null || true' EXIT
end=$((SECONDS + minutes * 60))
while [ "$SECONDS" -lt "$end" ]; do
	kill -0 "$manager" 2>/dev/null || { tail -n 30 "$out/manager.log" >&2; die "syz-manager ended after $((SECONDS / 60)) of $minutes minutes"; }
	sleep 10
done
# Its figures and raw coverage before it stops (its web server goes with it).
curl -fsS "http://127.0.0.1:$port/" >"$out/summary.html" || die "the manager's page did not answer"
curl -fsS "http://127.0.0.1:$port/funccover" >"$out/funccover.csv" ||
	echo "syzkaller: the manager's coverage by function did not answer ($out/funccover.csv)" >&2
kill -INT "$manager"
wait "$manager" || true
trap - EXIT
python3 "$ALLOCTAG_ROOT/scripts/syzkaller/report.py" "$out" "$workdir" "$SRC_TREE" | tee "$out/report.md"
