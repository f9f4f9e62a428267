#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The test command: host tests (cargo test), KUnit (kunit.py, in QEMU) on a
# test kernel with KASAN, lockdep, PREEMPT, fault injection and atomic-sleep
# checks, the in-guest integration tests (our initramfs, in QEMU) on that
# kernel and on a second one whose vm.mem_profiling sysctl can be written
# (tests/guest/boots.txt), the build matrix (scripts/build-matrix.sh) and
# the README's commands as it prints them (scripts/check-readme.sh).
# Ends with one line "N passed, N failed" counting all five; exits non-zero
# on any failure. After each stage its results are compared with the tests
# that tests/manifest/ says it must run (scripts/manifest.sh): a test that
# did not run, one that is not listed, an unexpected skip, or a boot or
# stage that ran or passed nothing counts as a failure, named. Refuses to
# start with a variable set that makes tests rewrite their expected files
# (UPDATE_GOLDEN and the like).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

logs=$BUILD_DIR/test-logs
mkdir -p "$logs"
# Each stage's line carries the time since the start, so that a run's log
# shows where its minutes went (the budget: docs/testing.rst).
log() { printf '==> [+%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }
total_pass=0
total_fail=0

# Records a stage's counts: count NAME PASSED FAILED
count() {
	printf '%-6s %s passed, %s failed\n' "$1:" "$2" "$3"
	total_pass=$((total_pass + $2))
	total_fail=$((total_fail + $3))
}

# The manifest (tests/manifest/, scripts/manifest.sh): after each stage its
# results are compared with the tests it must run. manifest_check UNIT LOG
# prints each difference (a listed test that did not run, one that ran but is
# not listed, a skip the manifest does not expect there, a unit that ran
# nothing or passed nothing) and sets $mbad to their number, which the stage
# counts as failures. The check never rewrites the manifest.
declare -A skipped=([host]=0 [kunit]=0 [guest]=0 [matrix]=0 [readme]=0)
manifest_check() {
	local out rc=0 stage=${1%%[-/]*} n
	# The unit's skipped tests, for the summary (the manifest says which may skip).
	n=$("$ALLOCTAG_ROOT/scripts/manifest.sh" results "$@" 2>/dev/null | grep -c '^skip ' || true)
	skipped[$stage]=$((${skipped[$stage]:-0} + n))
	out=$("$ALLOCTAG_ROOT/scripts/manifest.sh" check "$@" 2>&1) || rc=$?
	[ -z "$out" ] || printf '%s\n' "$out"
	mbad=$(grep -c '^manifest: not ok' <<<"$out" || true)
	# The checker itself failing (no manifest, a bad log) is a failure too.
	if [ "$rc" != 0 ] && [ "$mbad" = 0 ]; then
		echo "manifest: not ok - $1: scripts/manifest.sh check failed (exit $rc)"
		mbad=1
	fi
}

# Variables that make tests rewrite the files they compare with (golden
# outputs, snapshots) turn a failing comparison into a pass: refuse to run
# with any of them set. Besides the known names, any variable that the
# tests read (env::var in crates/ and tests/) whose name says it updates,
# blesses, overwrites or regenerates counts.
refuse_rewriting_env() {
	local v bad=
	local -a names=(UPDATE_GOLDEN UPDATE_EXPECT INSTA_UPDATE INSTA_FORCE_PASS TRYBUILD SNAPSHOTS BLESS)
	while read -r v; do
		names+=("$v")
	done < <(grep -rhoE 'env::var(_os)?\("[A-Za-z0-9_]+"\)|var_os\("[A-Za-z0-9_]+"\)' \
		"$ALLOCTAG_ROOT/crates" "$ALLOCTAG_ROOT/tests" 2>/dev/null |
		sed 's/.*("\(.*\)")/\1/' | grep -iE 'UPDATE|BLESS|OVERWRITE|REGEN|GOLDEN|SNAPSHOT' | sort -u)
	for v in $(printf '%s\n' "${names[@]}" | sort -u); do
		[ -z "${!v+x}" ] || bad="$bad $v"
	done
	[ -z "$bad" ] || die "refusing to run with$bad set: it makes the tests rewrite what they compare with, so they cannot fail (unset it)"
}
refuse_rewriting_env

# Variables that the stages read to run less, or to run something else than
# what they test (a shorter proptest, another kunit.py command or
# configuration, fewer vCPUs, another tree for arm64, ...): the test command
# runs with none of them, whatever the caller's environment holds, so that a
# pass means what the README says. (JOBS, the build directory and the
# toolchain's variables change where and how fast, not what is tested.)
clear_weakening_env() {
	local v cleared=
	for v in PROPTEST_CASES PROPTEST_MAX_SHRINK_ITERS KUNIT_CMD KUNITCONFIG KUNIT_QEMU_ARGS \
		KUNIT_TIMEOUT KUNIT_BUILD_DIR QEMU_FAULT_INJECTION QEMU_SMP QEMU_TIMEOUT \
		MATRIX_ARM64_TREE KERNEL_TREE SERIES_WORKTREE LINUX_TARBALL BINDGEN INSMOD \
		ALLOCINFO VERBOSE; do
		# Only what the caller's environment passed (exported): lib.sh sets
		# some of these itself, unexported, as defaults.
		if [[ "$(declare -p "$v" 2>/dev/null)" == "declare -x"* ]]; then
			cleared="$cleared $v"
			unset "$v"
		fi
	done
	[ -z "$cleared" ] || log "cleared from the environment, which would change what is tested:$cleared"
}
clear_weakening_env

# A boot named twice in tests/guest/boots.txt would run its tests twice
# under one name, and its log would hold only the second run's.
dup_boots=$(awk '$1 !~ /^#/ && NF { print $1 }' "$ALLOCTAG_ROOT/tests/guest/boots.txt" | sort | uniq -d)
[ -z "$dup_boots" ] || die "tests/guest/boots.txt names a boot more than once: $(echo $dup_boots)"

"$ALLOCTAG_ROOT/scripts/install-deps.sh" || die "installing dependencies failed"
"$ALLOCTAG_ROOT/scripts/prepare-tree.sh" || die "preparing the kernel tree failed"

# Kernels the QEMU stages need later build in the background at the lowest
# priority from here on, first kernel-nodebug (stage 3's second kernel), then
# the build matrix's (scripts/build-matrix.sh --build-only) in two lanes side
# by side: the series' tree, arm64 (which builds from it) and debian, and up, ccore,
# kcsan, kasan, then off. On this 2-core machine the QEMU stages (KUnit, the guest boots: one
# thread each) and the serial steps of a kernel build (rustc, the final link,
# kallsyms) leave a core idle; at nice 19 the builds take only that, and
# with two lanes one lane's serial steps leave the core to the other's
# compiles instead of idle. They judge nothing: stage 3 reads the nodebug
# build's exit code and log, and stage 4 runs the whole matrix again, which
# finds the builds done. Their own process group, so that an
# interrupted run stops them too; not their own session, which would give
# them their own scheduler autogroup, and an equal share of the CPU whatever
# their nice value.
nodebug_rc=$logs/build-nodebug.rc
rm -f "$nodebug_rc"
log "background: building kernel-nodebug, then the build matrix's kernels (logs: $logs/build-nodebug.log, $logs/matrix-build-*.log)"
# shellcheck disable=SC2016 # expanded by the background shell
perl -e 'setpgrp(0, 0); exec @ARGV or die "exec: $!"' nice -n 19 bash -c '
	"$1/scripts/build-kernel.sh" nodebug >"$2/build-nodebug.log" 2>&1
	echo $? >"$3.tmp" && mv "$3.tmp" "$3"
	"$1/scripts/build-matrix.sh" --build-only series arm64 debian >"$2/matrix-build-arm64.log" 2>&1 &
	"$1/scripts/build-matrix.sh" --build-only up ccore kcsan kasan off >"$2/matrix-build-ccore.log" 2>&1
	wait
' background "$ALLOCTAG_ROOT" "$logs" "$nodebug_rc" </dev/null &
background_pid=$!
trap 'kill -- -"$background_pid" 2>/dev/null || true' EXIT

# 1. Host: the cargo workspace.
log "host tests: cargo test --workspace"
(cd "$ALLOCTAG_ROOT" && cargo test --workspace 2>&1) | tee "$logs/host.log"
host_rc=${PIPESTATUS[0]}
read -r p f < <(awk '/^test result:/ { p += $4; f += $6 } END { print p + 0, f + 0 }' "$logs/host.log")
[ "$host_rc" = 0 ] || [ "$f" -gt 0 ] || f=1 # a build failure is a failure
manifest_check host "$logs/host.log"
f=$((f + mbad))
count host "$p" "$f"
host_counts="$p $f"

# 2. KUnit, which also builds the test kernel reused below.
log "KUnit: tools/testing/kunit/kunit.py run (builds $BUILD_DIR/kernel-test)"
# kunit.py writes the console to kernel-test/test.log only when it boots: an
# older one must not stand in for this run's.
rm -f "$BUILD_DIR/kernel-test/test.log"
# Page tags in page_ext (,page_ext): by default they go in page flags, as in
# the second run below.
"$ALLOCTAG_ROOT/scripts/kunit.sh" --kernel_args sysctl.vm.mem_profiling=1,page_ext 2>&1 | tee "$logs/kunit.log"
kunit_rc=${PIPESTATUS[0]}
# kunit.py starts the kernel only once its configuration and build
# succeeded: without that line the bzImage in kernel-test is an older
# build's, which the guest boots below must not use.
test_kernel_built=0
if grep -q 'Starting KUnit Kernel' "$logs/kunit.log"; then
	test_kernel_built=1
fi
# kunit_results LOG CONSOLE UNIT RC: the KUnit stage's counts of one run
# (kunit.py's KTAP verdicts, a kernel report on its console, the manifest),
# added to the stage's.
kunit_p=0
kunit_f=0
kunit_results() {
	local log=$1 console=$2 unit=$3 rc=$4 p f
	read -r p f < <(sed -n 's/.*Ran [0-9]* tests*: \(.*\)/\1/p' "$log" | tail -n 1 |
		awk -F', ' '{ for (i = 1; i <= NF; i++) { split($i, kv, ": "); n[kv[1]] = kv[2] } }
			END { print n["passed"] + 0, n["failed"] + n["crashed"] + n["errors"] + 0 }')
	[ "$rc" = 0 ] || [ "$f" -gt 0 ] || f=1
	# kunit.py judges the KTAP results only; a kernel report during the run
	# (a lockdep or KASAN splat, a sleep in atomic context) fails it too.
	if grep -Eq "$KERNEL_REPORTS" "$console" 2>/dev/null; then
		echo "kunit: kernel report on the console ($console):"
		grep -E -m 5 -A 3 "$KERNEL_REPORTS" "$console"
		f=$((f + 1))
	fi
	manifest_check "$unit" "$console"
	kunit_p=$((kunit_p + p))
	kunit_f=$((kunit_f + f + mbad))
}
kunit_results "$logs/kunit.log" "$BUILD_DIR/kernel-test/test.log" kunit-test "$kunit_rc"

# The same suites with page tags in page flags, on the kernel just built
# (booted with sysctl.vm.mem_profiling=1,compressed, mainline's spelling of
# the default where vmlinux's tags fit): every page hook then
# takes the other path. Waste accounting's slots are reserved in this run
# (alloctag.waste_slots=on): every slab vector's, and pages' in page_ext
# beside no tag; the first run has none, as by default, and so runs the
# cases of objects from the kmalloc() caches only here.
if [ "$test_kernel_built" = 1 ]; then
	log "KUnit: kunit.py exec with sysctl.vm.mem_profiling=1,compressed alloctag.waste_slots=on"
	cp "$BUILD_DIR/kernel-test/test.log" "$logs/kunit-test.console"
	rm -f "$BUILD_DIR/kernel-test/test.log"
	KUNIT_CMD=exec "$ALLOCTAG_ROOT/scripts/kunit.sh" \
		--kernel_args sysctl.vm.mem_profiling=1,compressed \
		--kernel_args alloctag.waste_slots=on 2>&1 | tee "$logs/kunit-pgflags.log"
	kunit_rc=${PIPESTATUS[0]}
	cp "$BUILD_DIR/kernel-test/test.log" "$logs/kunit-pgflags.console" 2>/dev/null ||
		: >"$logs/kunit-pgflags.console"
	# kernel-test/test.log stays the first run's (scripts/manifest.sh's default).
	cp "$logs/kunit-test.console" "$BUILD_DIR/kernel-test/test.log"
	kunit_results "$logs/kunit-pgflags.log" "$logs/kunit-pgflags.console" kunit-pgflags "$kunit_rc"
else
	manifest_check kunit-pgflags /dev/null
	kunit_f=$((kunit_f + 1 + mbad))
fi
count kunit "$kunit_p" "$kunit_f"
kunit_counts="$kunit_p $kunit_f"

# 3. In-guest integration tests: one boot per line of tests/guest/boots.txt,
# each on the kernel the line names: "test", the KUnit kernel above (KUnit
# off; MEM_ALLOC_PROFILING_DEBUG makes the sysctl read-only), or "nodebug"
# (scripts/configs/nodebug.config: the sysctl writable, no KASAN), built in
# the background since the start.
guest_pass=0
guest_fail=0
declare -A images=() initrds=()
# build-tool.sh deletes the old binary first: a failed build leaves none for
# mkinitramfs.sh to pack, and the tests of the tool fail in the guest.
"$ALLOCTAG_ROOT/scripts/build-tool.sh" || log "allocinfo tool not built; its guest tests will fail"
if [ "$test_kernel_built" = 1 ] && [ -f "$BUILD_DIR/kernel-test/arch/x86/boot/bzImage" ]; then
	images[test]=$BUILD_DIR/kernel-test/arch/x86/boot/bzImage
else
	log "guest tests: the test kernel was not built by this run's KUnit stage; its boots fail"
fi
# Whether kernel-nodebug, built in the background, built: waits for it.
nodebug_built() {
	log "guest tests: waiting for kernel-nodebug's background build (log: $logs/build-nodebug.log)"
	while [ ! -f "$nodebug_rc" ] && kill -0 "$background_pid" 2>/dev/null; do
		sleep 2
	done
	[ "$(cat "$nodebug_rc" 2>/dev/null)" = 0 ] && return
	# An image left by an earlier build is not what this tree builds.
	tail -n 20 "$logs/build-nodebug.log"
	return 1
}
# The kernel's extra pieces for the guest: its initramfs, and an out-of-tree
# module built against the kernel's headers package alone (a failed build
# leaves none, and tests/guest/extmod.sh fails).
prepare_guest() {
	local k=$1
	"$ALLOCTAG_ROOT/scripts/build-extmod.sh" "$k" >"$logs/extmod-$k.log" 2>&1 ||
		{ tail -n 20 "$logs/extmod-$k.log"; log "extmod: not built for kernel-$k; its guest test will fail"; }
	if "$ALLOCTAG_ROOT/scripts/mkinitramfs.sh" "$BUILD_DIR/kernel-$k" "$BUILD_DIR/initramfs-$k.cpio.gz"; then
		initrds[$k]=$BUILD_DIR/initramfs-$k.cpio.gz
	fi
}

# boot NAME KERNEL [QEMU_SMP=N] [QEMU_TIMEOUT=S] [kernel command line ...]:
# one boot running the tests that its command line selects.
boot() {
	local name=$1 kernel=$2 rc=0 p f res
	local -a env=("QEMU_TIMEOUT=${QEMU_TIMEOUT:-600}") cmdline=(alloctag_run=tests "alloctag_kernel=$kernel")
	shift 2
	while [ $# -gt 0 ]; do
		case "$1" in
		QEMU_SMP=* | QEMU_TIMEOUT=* | QEMU_FAULT_INJECTION=*) env+=("$1") ;;
		*) break ;;
		esac
		shift
	done
	[ "$kernel" = test ] && cmdline+=(kunit.enable=0)
	log "guest tests: boot '$name' on $kernel (${env[*]:1} $*)"
	# A boot that cannot run counts as a failure, like one that fails.
	# (Its log is emptied first: an earlier run's must not be counted.)
	: >"$logs/guest-$name.log"
	if [ -z "${initrds[$kernel]:-}" ]; then
		echo "guest-test: not ok - boot '$name': no $kernel kernel or initramfs"
		manifest_check "guest/$name" "$logs/guest-$name.log"
		guest_fail=$((guest_fail + 1 + mbad))
		return
	fi
	env "${env[@]}" "$ALLOCTAG_ROOT/scripts/run-qemu.sh" "${images[$kernel]}" "${initrds[$kernel]}" \
		"$logs/guest-$name.log" "${cmdline[@]}" "$@" || rc=1
	grep '^guest-test: ' "$logs/guest-$name.log"
	# Its KTAP's results, as the kernel's parser reads them (scripts/manifest.sh):
	# every test and subtest (tests/guest/suites.sh's KUnit cases).
	res=$("$ALLOCTAG_ROOT/scripts/manifest.sh" results "guest/$name" "$logs/guest-$name.log" 2>&1) || res=
	p=$(grep -c '^pass ' <<<"$res" || true)
	f=$(grep -c '^fail ' <<<"$res" || true)
	# A boot that failed outside a test (report, timeout) counts as a failure.
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "guest-test: not ok - boot '$name' (see $logs/guest-$name.log)"
		f=1
	fi
	manifest_check "guest/$name" "$logs/guest-$name.log"
	f=$((f + mbad))
	guest_pass=$((guest_pass + p))
	guest_fail=$((guest_fail + f))
}
# Two boots at once once the background builds are done (each QEMU is one
# thread; a warm run's builds finish within the KUnit stage), one while they
# run, so that they keep the other core. Each boot runs in a subshell that
# leaves its output, counts and seconds in files, printed and added as it ends.
boot_pids=()
declare -A boot_names=()
boot_slots() {
	if kill -0 "$background_pid" 2>/dev/null; then echo 1; else echo 2; fi
}
# Seconds each boot took, written as boots end and read by the next run.
boot_times=$BUILD_DIR/guest-boot-seconds
: >"$boot_times.new"
# Waits for one boot to end, then prints its output and adds its counts.
boot_collect() {
	local done_pid= name p f s t i
	wait -n -p done_pid "${boot_pids[@]}" || true
	[ -n "$done_pid" ] || return 0
	name=${boot_names[$done_pid]}
	for i in "${!boot_pids[@]}"; do
		[ "${boot_pids[$i]}" != "$done_pid" ] || unset 'boot_pids[i]'
	done
	boot_pids=("${boot_pids[@]}")
	cat "$logs/guest-$name.out"
	read -r p f s t <"$logs/guest-$name.counts" 2>/dev/null ||
		{ echo "guest-test: not ok - boot '$name': no result"; p=0 f=1 s=0 t=; }
	[ -z "$t" ] || { log "guest tests: boot '$name' took $t s"; echo "$name $t" >>"$boot_times.new"; }
	guest_pass=$((guest_pass + p))
	guest_fail=$((guest_fail + f))
	skipped[guest]=$((skipped[guest] + s))
}
# boot_bg NAME ...: boot in the background (the caller waits for a slot).
boot_bg() {
	local name=$1
	rm -f "$logs/guest-$name.counts"
	(
		guest_pass=0 guest_fail=0 skipped[guest]=0 start=$SECONDS
		boot "$@" >"$logs/guest-$name.out" 2>&1
		echo "$guest_pass $guest_fail ${skipped[guest]} $((SECONDS - start))" >"$logs/guest-$name.counts"
	) &
	boot_pids+=($!)
	boot_names[$!]=$name
}
# Every boot of both kernels in one queue, longest first by the last run's
# seconds (a boot without a record first of all, then the file's order), so
# that the boots that end a run are short ones and no slot idles long while
# the other finishes a long boot. A nodebug boot waits for kernel-nodebug's
# background build; test boots go first meanwhile.
set -f # the test patterns stay patterns
declare -A boot_kernel=() boot_args=() boot_secs=()
queue=()
while read -r name kernel args; do
	case "$name" in '' | '#'*) continue ;; esac
	case "$kernel" in
	test | nodebug) ;;
	*)
		echo "guest-test: not ok - boot '$name': unknown kernel '$kernel' in tests/guest/boots.txt"
		guest_fail=$((guest_fail + 1))
		continue
		;;
	esac
	boot_kernel[$name]=$kernel
	boot_args[$name]=$args
	queue+=("$name")
done <"$ALLOCTAG_ROOT/tests/guest/boots.txt"
if [ -f "$boot_times" ]; then
	while read -r name t; do
		[[ "$t" =~ ^[0-9]+$ ]] && boot_secs[$name]=$t
	done <"$boot_times"
fi
mapfile -t queue < <(for i in "${!queue[@]}"; do
	printf '%s %s %s\n' "${boot_secs[${queue[$i]}]:-999999}" "$i" "${queue[$i]}"
done | sort -k1,1nr -k2,2n | cut -d' ' -f3)
[ -z "${images[test]:-}" ] || prepare_guest test
nodebug_state=building
while [ "${#queue[@]}" -gt 0 ]; do
	while [ "${#boot_pids[@]}" -ge "$(boot_slots)" ]; do boot_collect; done
	if [ "$nodebug_state" = building ] &&
		{ [ -f "$nodebug_rc" ] || ! kill -0 "$background_pid" 2>/dev/null; }; then
		nodebug_state=done
		if nodebug_built; then
			images[nodebug]=$BUILD_DIR/kernel-nodebug/arch/x86/boot/bzImage
			prepare_guest nodebug
		fi
	fi
	next=
	for i in "${!queue[@]}"; do
		name=${queue[$i]}
		if [ "${boot_kernel[$name]}" = test ] || [ "$nodebug_state" = done ]; then
			next=$name
			unset 'queue[i]'
			queue=("${queue[@]}")
			break
		fi
	done
	if [ -z "$next" ]; then
		# Only nodebug boots are left, its kernel still building.
		if [ "${#boot_pids[@]}" -gt 0 ]; then boot_collect; else sleep 2; fi
		continue
	fi
	# shellcheck disable=SC2086 # one word per command line word
	boot_bg "$next" "${boot_kernel[$next]}" ${boot_args[$next]}
done
while [ "${#boot_pids[@]}" -gt 0 ]; do boot_collect; done
mv "$boot_times.new" "$boot_times"
set +f
# A boot of the manifest that boots.txt no longer has did not run.
for m in "$ALLOCTAG_ROOT"/tests/manifest/guest/*.txt; do
	b=$(basename "$m" .txt)
	if ! awk -v b="$b" '$1 == b { found = 1 } END { exit !found }' "$ALLOCTAG_ROOT/tests/guest/boots.txt"; then
		echo "manifest: not ok - guest/$b: tests/manifest/guest/$b.txt lists a boot that tests/guest/boots.txt does not have"
		guest_fail=$((guest_fail + 1))
	fi
done
count guest "$guest_pass" "$guest_fail"

# 4. The build matrix: configurations 6.12 allows that the kernels above do
# not cover (the patch series; SMP=n and no sysctl; the C core with our
# KUnit; arm64), warning-free.
log "build matrix: waiting for its background builds (logs: $logs/matrix-build-*.log)"
wait "$background_pid" || true
# run_counted NAME SCRIPT: runs a stage whose script ends with "NAME: N passed,
# N failed" and counts it, with its manifest, into ${NAME}_counts.
run_counted() {
	local name=$1 script=$2 rc p f
	"$ALLOCTAG_ROOT/scripts/$script" 2>&1 | tee "$logs/$name.log"
	rc=${PIPESTATUS[0]}
	read -r p f < <(sed -n "s/^$name: \([0-9]*\) passed, \([0-9]*\) failed\$/\1 \2/p" "$logs/$name.log" | tail -n 1)
	p=${p:-0}
	f=${f:-0}
	[ "$rc" = 0 ] || [ "$f" -gt 0 ] || f=1
	manifest_check "$name" "$logs/$name.log"
	f=$((f + mbad))
	count "$name" "$p" "$f"
	printf -v "${name}_counts" '%s %s' "$p" "$f"
}
log "build matrix: scripts/build-matrix.sh"
run_counted matrix build-matrix.sh

# 5. The README's commands as it prints them (scripts/check-readme.sh): the
# demo, which boots kernel-nodebug (built above), and a package of it, whose
# bindeb-pkg links the kernel again: so it comes last.
log "README commands: scripts/check-readme.sh"
run_counted readme check-readme.sh

echo
echo "summary: host $host_counts, kunit $kunit_counts, guest $guest_pass $guest_fail, matrix $matrix_counts, readme $readme_counts (passed failed)"
echo "skipped: host ${skipped[host]}, kunit ${skipped[kunit]}, guest ${skipped[guest]}, matrix ${skipped[matrix]}, readme ${skipped[readme]} (each one the manifest lists as skipped there)"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ] && [ "$total_pass" -gt 0 ]
