#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The test command: host tests (cargo test), KUnit (kunit.py, in QEMU) and the
# in-guest integration tests (our initramfs, in QEMU), on a test kernel with
# KASAN, lockdep and atomic-sleep checks. Ends with one line
# "N passed, N failed" counting all three; exits non-zero on any failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

logs=$BUILD_DIR/test-logs
mkdir -p "$logs"
total_pass=0
total_fail=0

# Records a stage's counts: count NAME PASSED FAILED
count() {
	printf '%-6s %s passed, %s failed\n' "$1:" "$2" "$3"
	total_pass=$((total_pass + $2))
	total_fail=$((total_fail + $3))
}

"$ALLOCTAG_ROOT/scripts/install-deps.sh" || die "installing dependencies failed"
"$ALLOCTAG_ROOT/scripts/prepare-tree.sh" || die "preparing the kernel tree failed"

# 1. Host: the cargo workspace.
log "host tests: cargo test --workspace"
(cd "$ALLOCTAG_ROOT" && cargo test --workspace 2>&1) | tee "$logs/host.log"
host_rc=${PIPESTATUS[0]}
read -r p f < <(awk '/^test result:/ { p += $4; f += $6 } END { print p + 0, f + 0 }' "$logs/host.log")
[ "$host_rc" = 0 ] || [ "$f" -gt 0 ] || f=1 # a build failure is a failure
count host "$p" "$f"
host_counts="$p $f"

# 2. KUnit, which also builds the test kernel reused below.
log "KUnit: tools/testing/kunit/kunit.py run (builds $BUILD_DIR/kernel-test)"
"$ALLOCTAG_ROOT/scripts/kunit.sh" 2>&1 | tee "$logs/kunit.log"
kunit_rc=${PIPESTATUS[0]}
read -r p f < <(sed -n 's/.*Ran [0-9]* tests*: \(.*\)/\1/p' "$logs/kunit.log" | tail -n 1 |
	awk -F', ' '{ for (i = 1; i <= NF; i++) { split($i, kv, ": "); n[kv[1]] = kv[2] } }
		END { print n["passed"] + 0, n["failed"] + n["crashed"] + n["errors"] + 0 }')
[ "$kunit_rc" = 0 ] || [ "$f" -gt 0 ] || f=1
# kunit.py judges the KTAP results only; a kernel report during the run (a
# lockdep or KASAN splat, a sleep in atomic context) fails the stage too.
if grep -Eq "$KERNEL_REPORTS" "$BUILD_DIR/kernel-test/test.log" 2>/dev/null; then
	echo "kunit: kernel report on the console ($BUILD_DIR/kernel-test/test.log):"
	grep -E -m 5 -A 3 "$KERNEL_REPORTS" "$BUILD_DIR/kernel-test/test.log"
	f=$((f + 1))
fi
count kunit "$p" "$f"
kunit_counts="$p $f"

# 3. In-guest integration tests on the same kernel, KUnit off.
kernel=$BUILD_DIR/kernel-test/arch/x86/boot/bzImage
guest_pass=0
guest_fail=0
if [ -f "$kernel" ]; then
	"$ALLOCTAG_ROOT/scripts/build-tool.sh" || log "allocinfo tool not built; its guest tests will fail"
	"$ALLOCTAG_ROOT/scripts/mkinitramfs.sh" "$BUILD_DIR/kernel-test" "$BUILD_DIR/initramfs-test.cpio.gz"
	# boot NAME [kernel command line ...]: one boot running the selected tests.
	boot() {
		local name=$1 rc=0
		shift
		log "guest tests: boot '$name' ($*)"
		QEMU_TIMEOUT=${QEMU_TIMEOUT:-600} "$ALLOCTAG_ROOT/scripts/run-qemu.sh" "$kernel" \
			"$BUILD_DIR/initramfs-test.cpio.gz" "$logs/guest-$name.log" \
			kunit.enable=0 alloctag_run=tests "$@" || rc=1
		grep '^guest-test: ' "$logs/guest-$name.log"
		local p f
		p=$(grep -c '^guest-test: ok ' "$logs/guest-$name.log")
		f=$(grep -c '^guest-test: not ok ' "$logs/guest-$name.log")
		# A boot that failed outside a test (report, timeout) counts as a failure.
		if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			echo "guest-test: not ok - boot '$name' (see $logs/guest-$name.log)"
			f=1
		fi
		guest_pass=$((guest_pass + p))
		guest_fail=$((guest_fail + f))
	}
	boot default
	set -f # the test patterns stay patterns
	while read -r name args; do
		case "$name" in '' | '#'*) continue ;; esac
		# shellcheck disable=SC2086 # one word per command line word
		boot "$name" $args
	done <"$ALLOCTAG_ROOT/tests/guest/boots.txt"
	set +f
else
	echo "guest-test: not ok - no test kernel at $kernel"
	guest_fail=1
fi
count guest "$guest_pass" "$guest_fail"

echo
echo "summary: host $host_counts, kunit $kunit_counts, guest $guest_pass $guest_fail (passed failed)"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ] && [ "$total_pass" -gt 0 ]
