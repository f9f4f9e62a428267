#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Configures and builds the test kernel with tools/testing/kunit/kunit.py from
# tests/kunit/.kunitconfig and runs the KUnit suites in QEMU. The build in
# $BUILD_DIR/kernel-test is reused by the in-guest tests.
#
# Usage: scripts/kunit.sh [extra kunit.py run arguments]
# KUNIT_CMD=build configures and builds only (kunit.py build), as the build
# matrix's --build-only does ahead of its checks; KUNIT_CMD=exec runs the
# suites on the kernel built before (kunit.py exec), as the test command's
# second KUnit run does with other kernel arguments.
#
# Two vCPUs, as the build matrix's ccore has always had: kunit.py's x86_64
# QEMU has one, and the suites' concurrency cases then only took turns
# (src/tests/overlap.rs now checks that they ran at once).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kernel_env

# The build matrix runs other configurations through here with
# KUNIT_BUILD_DIR, KUNITCONFIG and KUNIT_QEMU_ARGS.
cmd=${KUNIT_CMD:-run}
case "$cmd" in run | build | exec) ;; *) die "KUNIT_CMD must be run, build or exec, not '$cmd'" ;; esac
args=(--arch=x86_64 --build_dir="${KUNIT_BUILD_DIR:-$BUILD_DIR/kernel-test}"
	--kunitconfig="${KUNITCONFIG:-$ALLOCTAG_ROOT/tests/kunit/.kunitconfig}")
[ "$cmd" = exec ] || args+=(--jobs="$JOBS")
[ "$cmd" = build ] || args+=(--timeout="${KUNIT_TIMEOUT:-600}"
	--qemu_args="${KUNIT_QEMU_ARGS:--accel tcg,thread=single -smp 2}")
for o in "${KMAKE_OPTS[@]}"; do
	args+=(--make_options "$o")
done
if [ "$cmd" != build ]; then
	for a in $(tcg_clock_args) $(tcg_guest_args); do
		args+=(--kernel_args "$a")
	done
fi
# exec builds nothing: it holds neither, so that it keeps no graft waiting.
if [ "$cmd" != exec ]; then
	tree_lock -x "${KUNIT_BUILD_DIR:-$BUILD_DIR/kernel-test}"
	tree_lock -s "$SRC_TREE"
fi
cd "$SRC_TREE"
kunit=(python3 tools/testing/kunit/kunit.py)
[ "$cmd" != build ] || exec "${kunit[@]}" build "${args[@]}" "$@"
# The console reaches kunit.py's parser through ktap_only (scripts/lib.sh),
# which leaves out the kernel's messages between KTAP lines: kunit.py's own
# parse once lost count of the suites over one. A failed build or boot fails
# here; failed, crashed or missing tests fail the parse.
set +e
"${kunit[@]}" "$cmd" --raw_output=all "${args[@]}" "$@" | ktap_only | "${kunit[@]}" parse
rcs=("${PIPESTATUS[@]}")
[ "${rcs[0]}" = 0 ] || exit "${rcs[0]}"
exit "${rcs[2]}"
