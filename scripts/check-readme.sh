#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's commands as a user runs them, read from the README itself
# (readme_command, lib.sh), so that what it prints is what the test command
# runs. (The patch series' two commands run in the build matrix's "series",
# scripts/check-series.sh, the same way.)
#
#   demo     `scripts/demo.sh`: exits 0, and the console shows every section
#            of scripts/guest/demo.sh, each with at least one line of output
#            and no shell error among them.
#   package  `scripts/package.sh NAME` for NAME=nodebug: the linux-image and
#            linux-headers packages are sound for dpkg-deb, the image holds
#            exactly the kernel that kernel-nodebug built, with the Rust core
#            configured, and the headers hold the grafted headers that
#            out-of-tree modules include.
#
# Prints "readme: NAME ok" or "readme: NAME FAILED (why)" per command and
# ends with "readme: N passed, N failed"; exits 1 on any failure. Logs go to
# $BUILD_DIR/test-logs/readme-NAME.log.
#
# Usage: scripts/check-readme.sh [demo] [package]    (default: both)
#        scripts/check-readme.sh --demo-console LOG   (the demo's console
#        check alone: prints what is wrong with LOG, exits 1 if anything)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ALL=(demo package)
checks=("$@")
[ ${#checks[@]} -gt 0 ] || checks=("${ALL[@]}")
logs=$BUILD_DIR/test-logs
mkdir -p "$logs"
passed=0
failed=0

# Runs the README's command that starts with $1, with the placeholder words
# given as WORD=VALUE, from the checkout, into $2: readme_run CMD LOG [W=V...]
readme_run() {
	local cmd log=$2 kv
	cmd=$(readme_command "$1") || return 1 # (set -e is off inside the if that calls the checks)
	shift 2
	for kv in "$@"; do
		cmd=$(sed "s|\\b${kv%%=*}\\b|${kv#*=}|g" <<<"$cmd")
	done
	echo "\$ $cmd" >"$log"
	(cd "$ALLOCTAG_ROOT" && bash -c "$cmd") >>"$log" 2>&1 </dev/null
}

# The demo's console: each "### " header of scripts/guest/demo.sh's
# section(), as many as the script has, each followed by a line of output;
# none of busybox's or the shell's complaints. Prints what is wrong.
demo_console_problems() {
	local console=$1 want
	want=$(grep -cE '^[[:space:]]*section "' "$ALLOCTAG_ROOT/scripts/guest/demo.sh")
	awk -v want="$want" '
		/^### / { if (n && !lines) print "section \"" title "\" printed nothing"
			n++; title = substr($0, 5); lines = 0; next }
		n && NF && !/^alloctag-guest: / { lines++ }
		/(: not found|No such file or directory|can.t open|Invalid argument|Permission denied|Segmentation fault|DEMO FAILED)/ { print "line: " $0 }
		END {
			if (n && !lines) print "section \"" title "\" printed nothing"
			if (n != want) print n " sections shown, scripts/guest/demo.sh has " want
		}' "$console"
}

check_demo() {
	local log=$logs/readme-demo.log console=$BUILD_DIR/demo-console.log problems
	rm -f "$console"
	readme_run scripts/demo.sh "$log" || { why="exit $?, see $log"; return 1; }
	[ -f "$console" ] || { why="no console log $console"; return 1; }
	problems=$(demo_console_problems "$console")
	[ -z "$problems" ] || { why=$(head -n 3 <<<"$problems" | paste -sd ';'); return 1; }
	detail="$(grep -c '^### ' "$console") sections"
}

check_package() {
	local name=nodebug log=$logs/readme-package.log dir image headers release x
	dir=$BUILD_DIR/packages/$name
	readme_run scripts/package.sh "$log" NAME=$name || { why="exit $?, see $log"; return 1; }
	image=$(ls "$dir"/linux-image-[0-9]*.deb 2>/dev/null | grep -v -- -dbg_ | head -n 1)
	headers=$(ls "$dir"/linux-headers-*.deb 2>/dev/null | head -n 1)
	[ -n "$image" ] && [ -n "$headers" ] || { why="no linux-image or linux-headers package in $dir"; return 1; }
	for x in "$image" "$headers"; do
		dpkg-deb --info "$x" >/dev/null 2>&1 || { why="dpkg-deb --info refuses $x"; return 1; }
	done
	release=$(cat "$BUILD_DIR/kernel-$name/include/config/kernel.release")
	x=$BUILD_DIR/packages/$name.x
	rm -rf "$x"
	mkdir -p "$x/image" "$x/headers"
	dpkg-deb -x "$image" "$x/image"
	dpkg-deb -x "$headers" "$x/headers"
	cmp -s "$x/image/boot/vmlinuz-$release" "$BUILD_DIR/kernel-$name/arch/x86/boot/bzImage" ||
		{ why="the image package's vmlinuz-$release is not kernel-$name's bzImage"; return 1; }
	grep -qx 'CONFIG_MEM_ALLOC_PROFILING_RUST=y' "$x/image/boot/config-$release" ||
		{ why="the image package's config has no CONFIG_MEM_ALLOC_PROFILING_RUST=y"; return 1; }
	# alloc_tag.h as grafted: the hook's test that only the graft adds.
	grep -q 'alloctag_tag_wanted' "$x/headers/usr/src/linux-headers-$release/include/linux/alloc_tag.h" ||
		{ why="the headers package's include/linux/alloc_tag.h is not the grafted one"; return 1; }
	detail="$(basename "$image"), $(basename "$headers")"
	rm -rf "$x"
}

if [ "${1:-}" = --demo-console ]; then
	problems=$(demo_console_problems "${2:?usage: --demo-console LOG}")
	[ -z "$problems" ] || { printf '%s\n' "$problems"; exit 1; }
	exit 0
fi

for c in "${checks[@]}"; do
	case " ${ALL[*]} " in *" $c "*) ;; *) die "unknown check: $c (known: ${ALL[*]})" ;; esac
	why= detail=
	t0=$SECONDS
	if "check_$c"; then
		printf 'readme: %-7s ok (%s, %d s)\n' "$c" "$detail" "$((SECONDS - t0))"
		passed=$((passed + 1))
	else
		printf 'readme: %-7s FAILED (%s)\n' "$c" "$why"
		failed=$((failed + 1))
	fi
done
echo "readme: $passed passed, $failed failed"
[ "$failed" = 0 ]
