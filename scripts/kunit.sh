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
	--qemu_args="${KUNIT_QEMU_ARGS:--accel tcg,thread=single}")
for o in "${KMAKE_OPTS[@]}"; do
	args+=(--make_options "$o")
done
if [ "$cmd" != build ]; then
	for a in $(tcg_clock_args); do
		args+=(--kernel_args "$a")
	done
fi
cd "$SRC_TREE"
exec python3 tools/testing/kunit/kunit.py "$cmd" "${args[@]}" "$@"
