#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The test manifest (tests/manifest/): the tests each part of scripts/test.sh
# must run, so that a test that goes missing, a suite that is not built, a
# case that skips where it must run or a boot that runs nothing fails the run
# instead of shrinking the count. tests/manifest/README says what each file
# lists.
#
# Usage:
#   scripts/manifest.sh check UNIT [LOG]    compare LOG's results with the
#                                           manifest; print one line
#                                           "manifest: not ok - ..." per
#                                           difference; exit 1 on any
#   scripts/manifest.sh update UNIT [LOG]   rewrite UNIT's manifest from LOG
#   scripts/manifest.sh results UNIT [LOG]  print LOG's results, "STATUS NAME"
#   scripts/manifest.sh units               list every unit of the manifest
#
# UNIT, its manifest and the LOG read by default ($BUILD_DIR: lib.sh):
#   host         tests/manifest/host.txt          cargo test --workspace, run
#                                                 by update (check: the last
#                                                 $BUILD_DIR/test-logs/host.log)
#   kunit-test   tests/manifest/kunit-test.txt    $BUILD_DIR/kernel-test/test.log
#   kunit-pgflags tests/manifest/kunit-pgflags.txt the same kernel booted with
#                page tags in page flags: $BUILD_DIR/test-logs/kunit-pgflags.console
#   kunit-ccore  tests/manifest/kunit-ccore.txt   $BUILD_DIR/kernel-ccore/test.log
#   kunit-kcsan  tests/manifest/kunit-kcsan.txt   $BUILD_DIR/kernel-kcsan/test.log
#   guest/BOOT   tests/manifest/guest/BOOT.txt    $BUILD_DIR/test-logs/guest-BOOT.log
#                (one per line of tests/guest/boots.txt)
#   matrix       tests/manifest/matrix.txt        $BUILD_DIR/test-logs/matrix.log
#   readme       tests/manifest/readme.txt        $BUILD_DIR/test-logs/readme.log
# "update guest" updates every boot's file from its log, "update all" every
# unit (host by running cargo test).
#
# A manifest line is a test's name, or "skip NAME" for a test that must be
# reported skipped there, or "may-skip NAME" for a guest test that skips
# when the machine cannot give its precondition (tests/guest/lib.sh's
# skip()); "#" starts a comment line. The check never writes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

MANIFEST=$ALLOCTAG_ROOT/tests/manifest

usage() {
	sed -n '/^# Usage:/,/^# A manifest line/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

manifest_file() {
	case "$1" in
	host | kunit-test | kunit-pgflags | kunit-ccore | kunit-kcsan | matrix | readme) echo "$MANIFEST/$1.txt" ;;
	guest/*) echo "$MANIFEST/$1.txt" ;;
	*) die "unknown unit '$1' (scripts/manifest.sh units lists them)" ;;
	esac
}

default_log() {
	case "$1" in
	host) echo "$BUILD_DIR/test-logs/host.log" ;;
	kunit-test) echo "$BUILD_DIR/kernel-test/test.log" ;;
	kunit-pgflags) echo "$BUILD_DIR/test-logs/kunit-pgflags.console" ;;
	kunit-ccore) echo "$BUILD_DIR/kernel-ccore/test.log" ;;
	kunit-kcsan) echo "$BUILD_DIR/kernel-kcsan/test.log" ;;
	guest/*) echo "$BUILD_DIR/test-logs/guest-${1#guest/}.log" ;;
	matrix) echo "$BUILD_DIR/test-logs/matrix.log" ;;
	readme) echo "$BUILD_DIR/test-logs/readme.log" ;;
	esac
}

# The boots of tests/guest/boots.txt, one name per line.
boots() {
	awk '$1 !~ /^#/ && NF { print $1 }' "$ALLOCTAG_ROOT/tests/guest/boots.txt"
}

# cargo test's output on stdin -> "STATUS NAME". A test is named
# PACKAGE:TARGET::PATH, TARGET being the file cargo names on its "Running"
# line (src/lib.rs, src/main.rs, tests/NAME.rs) and PACKAGE the crate of the
# last "Running unittests" line (cargo runs a package's unit tests before its
# integration tests: tests/query.rs is in two packages; a package of tests
# only, like tests/scripts, has an empty library for that line). Doc tests are
# doc:FILE - ITEM, without cargo's "(line N)", which moves with every edit.
parse_cargo() {
	awk '
	/^ *Running unittests / {
		pkg = $NF
		sub(/^.*\/deps\//, "", pkg); sub(/-[0-9a-f]+\)$/, "", pkg)
	}
	/^ *Running / { target = $0; sub(/^ *Running (unittests )?/, "", target); sub(/ .*/, "", target); doc = 0 }
	/^ *Doc-tests / { doc = 1 }
	/^test .* \.\.\. / {
		name = $0
		sub(/^test /, "", name)
		status = name
		sub(/ \.\.\. .*$/, "", name)
		sub(/^.* \.\.\. /, "", status)
		if (status ~ /^ok/) status = "pass"
		else if (status ~ /^ignored/) status = "skip"
		else status = "fail"
		if (doc) {
			sub(/ \(line [0-9]+\)( - compile( fail)?)?$/, "", name)
			print status, "doc:" name
		} else
			print status, pkg ":" target "::" name
	}'
}

# KTAP -> "STATUS NAME", by the kernel's own KTAP parser (tools/testing/kunit/
# kunit_parser.py, which `kunit.py parse` runs) through scripts/ktap-results.py,
# which names the tests and maps their status to pass, fail or skip.
KUNIT_TOOLS=$SRC_TREE/tools/testing/kunit
ktap_results() {
	[ -f "$KUNIT_TOOLS/kunit_parser.py" ] ||
		die "no $KUNIT_TOOLS/kunit_parser.py, the kernel's KTAP parser (scripts/prepare-tree.sh makes the tree)"
	python3 "$ALLOCTAG_ROOT/scripts/ktap-results.py" "$KUNIT_TOOLS" "$1"
}

# A KUnit console log (kunit.py writes it to BUILD/test.log) on stdin ->
# "STATUS SUITE.CASE" (parameterised cases also SUITE.CASE.PARAM). The KTAP
# is taken out of the console first (ktap_only, lib.sh: a kernel message
# inside it once made the parser lose count); kunit.py's lines before it,
# which ktap_only passes to stderr, are not results.
parse_ktap() {
	ktap_only 2>/dev/null | ktap_results kunit
}

# A guest boot's console on stdin -> "STATUS NAME": tests/guest/run.sh's KTAP,
# its lines prefixed "guest-test: " (the prefix tells them from the kernel's
# own lines, KTAP of its KUnit suites among them), and within it the KUnit
# cases that tests/guest/suites.sh reports as a test's subtests.
parse_guest() {
	sed -n 's/^guest-test: //p' | ktap_results guest
}

# scripts/build-matrix.sh's (or, with $1 readme, scripts/check-readme.sh's)
# lines on stdin -> "STATUS CONFIGURATION".
parse_matrix() {
	local p=${1:-matrix}
	sed -n "s/^$p: \\([a-z0-9_-]*\\) *ok\\( .*\\)\\{0,1\\}\$/pass \\1/p; s/^$p: \\([a-z0-9_-]*\\) *FAILED.*\$/fail \\1/p"
}

# results UNIT LOG
results() {
	[ -f "$2" ] || die "no log $2 for $1"
	case "$1" in
	host) parse_cargo <"$2" ;;
	kunit-*) parse_ktap <"$2" ;;
	guest/*) parse_guest <"$2" ;;
	matrix) parse_matrix <"$2" ;;
	readme) parse_matrix readme <"$2" ;;
	esac
}

# The manifest of UNIT as "STATUS NAME" lines, STATUS "run", "skip" or
# "may-skip".
expected() {
	sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' \
		-e 's/^\(may-skip\|skip\) \(.*\)$/\1 \2/;t' -e 's/^/run /' "$(manifest_file "$1")"
}

# check UNIT [LOG]: prints each difference; fails on any.
check() {
	local unit=$1 log=${2:-$(default_log "$1")} file
	file=$(manifest_file "$unit")
	local rel=${file#"$ALLOCTAG_ROOT"/}
	if [ ! -f "$file" ]; then
		echo "manifest: not ok - $unit: no manifest $rel (scripts/manifest.sh update $unit makes it from a run's log)"
		return 1
	fi
	local res
	if [ -f "$log" ]; then
		res=$(results "$unit" "$log")
	else
		res=
	fi
	{
		expected "$unit"
		echo "--"
		printf '%s\n' "$res"
	} | awk -v unit="$unit" -v rel="$rel" -v kunit="$([ "${unit#kunit-}" != "$unit" ] && echo 1)" '
	function say(s) { print "manifest: not ok - " unit ": " s; bad++ }
	$0 == "--" { part = 2; next }
	part != 2 {
		st = $1; name = substr($0, length($1) + 2)
		want[name] = st; wcount[name]++; order[++nw] = name
		if (kunit) { s = name; sub(/\..*/, "", s); suites[s] = 1 }
		next
	}
	NF == 0 { next }
	{
		st = $1; name = substr($0, length($1) + 2)
		got[name] = st; gcount[name]++; gorder[++ng] = name
		if (st == "pass") passes++
		if (kunit) { s = name; sub(/\..*/, "", s); ran[s] = 1 }
	}
	END {
		if (nw == 0) say("the manifest " rel " lists no test")
		if (ng == 0) say("no test ran")
		else if (passes == 0) say("0 tests passed")
		if (kunit)
			for (s in suites) if (!(s in ran))
				say("suite " s " did not run (not built? its Kconfig options, tests/kunit/*.kunitconfig)")
		for (i = 1; i <= nw; i++) {
			n = order[i]
			if (done[n]++) continue
			if (!(n in got)) { say(n " did not run (listed in " rel ")"); continue }
			if (gcount[n] != wcount[n])
				say(n " ran " gcount[n] " times, " rel " lists it " wcount[n] " times")
			if (want[n] == "skip" && got[n] != "skip")
				say(n " ran, but " rel " lists it as skipped here: if it now runs, take \"skip\" off its line")
			if (want[n] == "run" && got[n] == "skip")
				say(n " was skipped, and " rel " does not list it as skipped here")
		}
		for (i = 1; i <= ng; i++) {
			n = gorder[i]
			if (n in want || seen[n]++) continue
			say(n " ran but is not in " rel ": add it (scripts/manifest.sh update " unit ")")
		}
		exit bad > 0
	}'
}

header() {
	local unit=$1
	cat <<-EOF
		# Tests expected of $unit (tests/manifest/README).
		# Regenerate: scripts/manifest.sh update $unit [LOG]
	EOF
	case "$unit" in
	host) echo "# PACKAGE:TARGET::TEST, doc:FILE - ITEM; 'skip' = #[ignore]" ;;
	kunit-*) echo "# SUITE.CASE; 'skip NAME': KUnit must report it skipped in this configuration" ;;
	guest/*) echo "# tests/guest/*.sh functions that tests/guest/boots.txt's line '${unit#guest/}' runs" ;;
	matrix) echo "# configurations of scripts/build-matrix.sh" ;;
	readme) echo "# the README's commands that scripts/check-readme.sh runs" ;;
	esac
}

# update UNIT [LOG]
update() {
	local unit=$1 log=${2:-} file tmp
	file=$(manifest_file "$unit")
	if [ "$unit" = host ] && [ -z "$log" ]; then
		log=$(mktemp)
		# shellcheck disable=SC2064 # the file is known now; $log is local
		trap "rm -f '$log'" EXIT
		log "running cargo test --workspace in $ALLOCTAG_ROOT"
		(cd "$ALLOCTAG_ROOT" && cargo test --workspace 2>&1) >"$log" || true
	fi
	log=${log:-$(default_log "$unit")}
	tmp=$(results "$unit" "$log")
	[ -n "$tmp" ] || die "$log has no result of $unit: not updating $file"
	if grep -q '^fail ' <<<"$tmp"; then
		log "note: $(grep -c '^fail ' <<<"$tmp") tests of $unit failed in $log; listed all the same"
	fi
	mkdir -p "$(dirname "$file")"
	local may=
	[ ! -f "$file" ] || may=$(sed -n 's/^may-skip //p' "$file")
	{
		header "$unit"
		# Sorted by name, a skipped test among the others; a test the
		# file said may skip still may, whatever this run did.
		MAY=$may awk 'BEGIN { n = split(ENVIRON["MAY"], m, "\n"); for (i = 1; i <= n; i++) mayskip[m[i]] = 1 }
			{ st = $1; name = substr($0, length($1) + 2)
			  print name "\t" (name in mayskip ? "may-skip " : st == "skip" ? "skip " : "") name }' <<<"$tmp" |
			LC_ALL=C sort | cut -f 2-
	} >"$file.new"
	mv "$file.new" "$file"
	log "wrote ${file#"$ALLOCTAG_ROOT"/} ($(grep -vc '^#' "$file") tests, from $log)"
}

units() {
	echo host
	echo kunit-test
	echo kunit-pgflags
	boots | sed 's|^|guest/|'
	echo matrix
	echo kunit-ccore
	echo kunit-kcsan
	echo readme
}

cmd=${1:-}
[ $# -ge 1 ] && shift
case "$cmd" in
check)
	[ $# -ge 1 ] || usage
	check "$@"
	;;
update)
	[ $# -ge 1 ] || usage
	case "$1" in
	all)
		for u in $(units); do update "$u"; done
		;;
	guest)
		for b in $(boots); do update "guest/$b"; done
		;;
	*) update "$@" ;;
	esac
	;;
results)
	[ $# -ge 1 ] || usage
	results "$1" "${2:-$(default_log "$1")}"
	;;
units) units ;;
*) usage ;;
esac
