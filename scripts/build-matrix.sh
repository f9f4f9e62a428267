#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The build matrix: configurations that the test kernel does not cover, each
# built in its own directory with CONFIG_WERROR=y and no warning at all.
#
#   up     tinyconfig with scripts/configs/up.config: the Rust core on a
#          uniprocessor kernel (SMP=n) without sysctl (PROC_SYSCTL=n, hence
#          SYSCTL=n), with modules and the test module; built into
#          $BUILD_DIR/kernel-up and booted once in QEMU with the test
#          initramfs running scripts/guest/smoke.sh (/proc/allocinfo, and
#          the test modules' tags at insmod and rmmod).
#   ccore  the kernel's C core (MEM_ALLOC_PROFILING_RUST=n) with our Rust
#          KUnit suites, through kunit.py, from tests/kunit/ccore.kunitconfig
#          into $BUILD_DIR/kernel-ccore. Its cases must be those of
#          tests/manifest/kunit-ccore.txt, and the case the test kernel skips
#          (turning profiling off) must pass here.
#   off    tinyconfig with scripts/configs/off.config: memory allocation
#          profiling not built in, with the mm/ options that build every
#          file the graft edits; built into $BUILD_DIR/kernel-off, not
#          booted: the graft's hooks and headers must compile away.
#
#   series the patch series (scripts/export-patches.sh), applied with git am
#          to a fresh checkout of the pristine tree, gives exactly the
#          grafted tree (scripts/check-series.sh); that checkout,
#          $BUILD_DIR/linux-series, is what a carrier builds.
#   arm64  tinyconfig with scripts/configs/arm64.config, cross-built for
#          arm64 (clang, LLVM=-19) with every alloctag option on, from the
#          series' tree ($BUILD_DIR/linux-series, made by the series
#          configuration; or $MATRIX_ARM64_TREE), into $BUILD_DIR/kernel-arm64, and
#          booted once in qemu-system-aarch64 (virt) with an arm64 initramfs
#          running scripts/guest/smoke.sh: /proc/allocinfo, the modules' tags
#          at their lines, the Rust call sites' tags as the sysctl flips the
#          profiling key (the kernel crate's arm64 jump-label entries), the
#          debugfs files. Keeps x86-only assumptions out.
#   kcsan  the Rust core under the kernel concurrency sanitizer, through
#          kunit.py, from tests/kunit/kcsan.kunitconfig into
#          $BUILD_DIR/kernel-kcsan: the KUnit suites (cases as in
#          tests/manifest/kunit-kcsan.txt), then the stress tests of
#          tests/guest/stress.sh on the same kernel, on 4 vCPUs with the
#          sysctl flipping. Both run on multi-threaded TCG, so that vCPUs
#          run at once as KCSAN needs. A KCSAN report fails it when
#          alloctag's code or test modules take part, unless
#          tests/kcsan/upstream.txt lists it as a race of 6.12's own
#          functions; races with no part of alloctag in them are named on
#          the configuration's line.
#   kasan  the nodebug kernel with ACPI's NUMA and KASAN
#          (scripts/configs/numa.config and kasan.config on top of
#          nodebug.config) into $BUILD_DIR/kernel-kasan, booted on two NUMA
#          nodes with tests/guest/numa.sh (numa_boot), and at 0
#          and 0,page_ext with tests/guest/boot.sh's first switch-on tests
#          (counters, page_ext and the per-CPU chunks' tag vectors made at
#          run time, all or nothing under fault rules, readers and a module
#          of 5,000 sites racing it), which the test kernel's read-only
#          sysctl keeps from it; any kernel report fails it.
#   debian tinyconfig with scripts/configs/debian.config: the options that
#          shape page flags, per-CPU areas and module loading as Debian's
#          amd64 configuration sets them (NODES_SHIFT=10, NR_CPUS=8192,
#          NUMA_BALANCING, LRU_GEN, ZONE_DEVICE, MODVERSIONS, and BTF for
#          vmlinux and modules, which pahole makes), built with gcc-12 as
#          Debian builds, into $BUILD_DIR/kernel-debian, and booted
#          once with scripts/guest/smoke.sh and page tags asked for in page
#          flags: its C and Rust modules carry CRCs and load, and so does a
#          C module built out of tree against its headers package
#          (scripts/build-extmod.sh), one with a changed CRC is refused, and
#          page tags stay in page_ext, as the boot log and the status file
#          say; as Debian leaves FAULT_INJECTION off, it has capture and
#          waste accounting and no fault injection (its .config and debugfs
#          files).
#
# Checks kcsan beside the others, in two lanes (below). Prints one line per
# configuration, in the order asked, and ends with "matrix: N passed, N
# failed", counting configurations; one that fails to build, warns, fails to
# boot or fails a test counts as failed, and the exit code is then 1. Logs go
# to $BUILD_DIR/matrix-logs. Needs the grafted tree (scripts/prepare-tree.sh,
# which scripts/test.sh runs first).
#
# --build-only makes the configurations' trees and kernels and checks
# nothing: scripts/test.sh runs it in the background at the lowest priority
# from its start, so that the builds take the core its single-threaded QEMU
# stages leave idle. The checks run every step again and find it done (a no-op
# make); whatever failed is built again and reported there.
#
# Usage: scripts/build-matrix.sh [--build-only] [series] [up] [ccore] [off] [arm64] [kcsan] [kasan] [debian]
#        (default: all)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kernel_env

ALL=(series up ccore off arm64 kcsan kasan debian)
build_only=
if [ "${1:-}" = --build-only ]; then
	build_only=1
	shift
fi
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=("${ALL[@]}")
for c in "${configs[@]}"; do
	case " ${ALL[*]} " in *" $c "*) ;; *) die "unknown configuration: $c (known: ${ALL[*]})" ;; esac
done
[ -f "$SRC_TREE/lib/alloctag/Kbuild" ] || die "no grafted tree at $SRC_TREE: run scripts/prepare-tree.sh"

logs=$BUILD_DIR/matrix-logs
mkdir -p "$logs"
passed=0
failed=0
detail= # what the configuration's line says besides ok / FAILED
why=    # why it failed
series_done= # the series' tree was made in this run

# CONFIG_WERROR makes C and Rust warnings errors (-Werror, and -Dwarnings in
# KBUILD_RUSTFLAGS) and ld's orphan sections too, but not objtool's, modpost's
# ("WARNING: modpost:") or the linker's other warnings: any of those in the
# build output fails the configuration as well. Prints the first few.
build_warnings() {
	grep -iE '(^|[^a-z])warning:' "$1" | head -n "${2:-10}"
}

# Fails when the background build of configuration $1 (--build-only, run
# by scripts/test.sh), whose make the check's own then finds done, printed a
# warning. Its log is read once: it is renamed *.checked, so that a later
# check alone does not judge an old build.
build_only_warnings() {
	local f=$logs/$1-build-only.log w
	[ -f "$f" ] || return 0
	w=$(build_warnings "$f") || true
	mv "$f" "$f.checked"
	[ -z "$w" ] || { why="warnings in the background build ($f.checked):"$'\n'"$w"; return 1; }
}

run_series() {
	local out log=$logs/series.log t0=$SECONDS
	log "series: scripts/check-series.sh"
	if ! out=$("$ALLOCTAG_ROOT/scripts/check-series.sh" 2>"$log"); then
		why="$(tail -n 20 "$log")"
		return 1
	fi
	detail="${out#series: }, $((SECONDS - t0)) s"
	series_done=1
}

# Builds configuration $1 (scripts/build-kernel.sh, from $KERNEL_TREE) into
# its log, and fails on an error or any warning. Sets why on failure.
checked_build() {
	local build_log=$logs/$1-build.log
	if ! "$ALLOCTAG_ROOT/scripts/build-kernel.sh" "$@" >"$build_log" 2>&1; then
		why="build failed ($build_log):"$'\n'"$(grep -E -m 10 -B 2 -A 6 '(error|warning)(\[[A-Za-z0-9_]+\])?:' "$build_log" || tail -n 20 "$build_log")"
		return 1
	fi
	if [ -n "$(build_warnings "$build_log")" ]; then
		why="warnings in the build ($build_log):"$'\n'"$(build_warnings "$build_log")"
		return 1
	fi
}

# Boots kernel $2 of configuration $1 once with an initramfs running
# scripts/guest/smoke.sh; its console goes to $3, the rest of the arguments
# to the kernel's command line. Sets why on failure.
smoke_boot() {
	local name=$1 image=$2 console=$3 build_log=$logs/$1-build.log
	shift 3
	log "$name: booting it (scripts/guest/smoke.sh)"
	"$ALLOCTAG_ROOT/scripts/mkinitramfs.sh" "$BUILD_DIR/kernel-$name" "$BUILD_DIR/initramfs-$name.cpio.gz" >>"$build_log" 2>&1 ||
		{ why="mkinitramfs.sh failed ($build_log)"; return 1; }
	if ! QEMU_TIMEOUT=${QEMU_TIMEOUT:-300} "$ALLOCTAG_ROOT/scripts/run-qemu.sh" "$image" \
		"$BUILD_DIR/initramfs-$name.cpio.gz" "$console" alloctag_run=smoke "$@" >>"$build_log" 2>&1; then
		why="boot failed ($console):"$'\n'"$(grep -E '^(smoke: not ok|run-qemu:)' "$console" "$build_log" || tail -n 20 "$console")"
		return 1
	fi
}

run_up() {
	local out=$BUILD_DIR/kernel-up build_log=$logs/up-build.log console=$logs/up-console.log
	local t0=$SECONDS t_build opt
	log "up: building $out (tinyconfig + scripts/configs/up.config)"
	KERNEL_TREE=$SRC_TREE checked_build up || return 1
	t_build=$((SECONDS - t0))
	# build-kernel.sh checks the fragment's "=y" lines; the "is not set"
	# ones, which are the point of this configuration, are checked here.
	for opt in CONFIG_SMP CONFIG_PROC_SYSCTL CONFIG_SYSCTL; do
		has_config "$opt" n "$out/.config" || { why="$opt is set in $out/.config"; return 1; }
	done
	for opt in CONFIG_WERROR CONFIG_MEM_ALLOC_PROFILING_RUST; do
		has_config "$opt" y "$out/.config" || { why="$opt is not set in $out/.config"; return 1; }
	done
	[ -f "$out/lib/alloctag/tests/modules/alloctag_test.ko" ] || { why="no alloctag_test.ko in $out"; return 1; }

	t0=$SECONDS
	smoke_boot up "$out/arch/x86/boot/bzImage" "$console" || return 1
	# The guest's own view: one CPU and no /proc/sys, as configured.
	grep -qx 'smoke: cpus=1' "$console" || { why="guest does not see 1 CPU ($console)"; return 1; }
	grep -qx 'smoke: sysctl=none' "$console" || { why="guest has /proc/sys/vm/mem_profiling ($console)"; return 1; }
	detail="build ${t_build} s, boot $((SECONDS - t0)) s, $(grep -c '^smoke: ok' "$console") smoke checks ok"
}

# Judges the kunit.py run of configuration $1 (ccore, kcsan): its output $2,
# its exit code $3, started at $4 (SECONDS). kunit.py prints the build's
# stderr (its warnings) before it boots: none may be there, nor in the
# background build's log; every case passed or was skipped, and one passed.
# Sets detail to the counts and, on failure, why. The console after the
# build is the caller's to judge (reports, manifest).
kunit_judged() {
	local name=$1 kunit_log=$2 rc=$3 t0=$4 p f s w
	w=$(sed '/Starting KUnit Kernel/q' "$kunit_log" | build_warnings /dev/stdin) || true
	[ -z "$w" ] || { why="warnings in the build ($kunit_log):"$'\n'"$w"; return 1; }
	build_only_warnings "$name" || return 1
	read -r p f s < <(sed -n 's/.*Ran [0-9]* tests*: \(.*\)/\1/p' "$kunit_log" | tail -n 1 |
		awk -F', ' '{ for (i = 1; i <= NF; i++) { split($i, kv, ": "); n[kv[1]] = kv[2] } }
			END { print n["passed"] + 0, n["failed"] + n["crashed"] + n["errors"] + 0, n["skipped"] + 0 }')
	# Skipped cases are not failures, but say so: a case skipped here runs nowhere.
	detail="kunit $p passed, $f failed, $s skipped, $((SECONDS - t0)) s"
	if [ "$rc" != 0 ] || [ "$f" != 0 ] || [ "$p" = 0 ]; then
		why="kunit.py exit $rc ($kunit_log):"$'\n'"$(grep -E -m 20 'ERROR|error:|not ok|FAILED|CRASHED' "$kunit_log" || tail -n 20 "$kunit_log")"
		return 1
	fi
}

# The KUnit case that the test kernel skips and only ccore runs.
CCORE_MUST_RUN=alloctag_counters.disabled_profiling_freezes_counters

# Runs scripts/kunit.sh on ccore's configuration and directory; KUNIT_CMD
# (run or build) passes through.
ccore_kunit() {
	KUNIT_BUILD_DIR=$BUILD_DIR/kernel-ccore KUNITCONFIG=$ALLOCTAG_ROOT/tests/kunit/ccore.kunitconfig \
		KUNIT_QEMU_ARGS='-accel tcg,thread=single -smp 2' "$ALLOCTAG_ROOT/scripts/kunit.sh"
}

run_ccore() {
	local out=$BUILD_DIR/kernel-ccore kunit_log=$logs/ccore-kunit.log rc=0 t0=$SECONDS
	log "ccore: kunit.py run into $out (tests/kunit/ccore.kunitconfig)"
	# kunit.py writes test.log only when it boots: an older one must not be
	# judged as this run's.
	rm -f "$out/test.log"
	ccore_kunit >"$kunit_log" 2>&1 || rc=$?
	kunit_judged ccore "$kunit_log" "$rc" "$t0" || return 1
	# As in scripts/test.sh: kunit.py judges only the KTAP results.
	if grep -Eq "$KERNEL_REPORTS" "$out/test.log" 2>/dev/null; then
		why="kernel report on the console ($out/test.log):"$'\n'"$(grep -E -m 5 -A 3 "$KERNEL_REPORTS" "$out/test.log")"
		return 1
	fi
	# The manifest (tests/manifest/kunit-ccore.txt): every case of the suites
	# built here ran, and none skipped that it does not list as skipped.
	if ! mout=$("$ALLOCTAG_ROOT/scripts/manifest.sh" check kunit-ccore "$out/test.log" 2>&1); then
		why="the KUnit results differ from tests/manifest/kunit-ccore.txt:"$'\n'"$mout"
		return 1
	fi
	# The case that the debug test kernel skips (MEM_ALLOC_PROFILING_DEBUG
	# forbids turning profiling off) runs nowhere else: it must pass here,
	# whatever the manifest says.
	# (The results first, then grep: under pipefail, grep -q leaving at its
	# match could fail the pipeline with the writer's SIGPIPE.)
	local results
	results=$("$ALLOCTAG_ROOT/scripts/manifest.sh" results kunit-ccore "$out/test.log") || results=
	if ! grep -qx "pass $CCORE_MUST_RUN" <<<"$results"; then
		why="$CCORE_MUST_RUN did not pass here (skipped or missing: $(grep -m 1 'disabled_profiling_freezes_counters' "$out/test.log" || echo 'not in the log')), and no other configuration runs it"
		return 1
	fi
	# Proof that the kernel's C core, not ours, was built, with our suites.
	if [ ! -f "$out/lib/alloc_tag.o" ] || [ -f "$out/lib/alloctag/src/glue.o" ]; then
		why="$out did not build the C core (lib/alloc_tag.o)"
		return 1
	fi
	[ -f "$out/lib/alloctag/src/alloctag.o" ] ||
		{ why="$out did not build our KUnit suites (lib/alloctag/src/alloctag.o)"; return 1; }
}

# One watchpoint per 400 instrumented accesses on average, ten times 6.12's
# default (kcsan.skip_watch=4000): a race planted in alloctag's page hook
# (a plain read and write of a counter in alloctag_page_ext_add(), on every
# page allocation of every CPU) was reported 3 times in one stress boot at
# 400 and not once in three at 4000 (2026-11-27). A KCSAN run of hours, as
# syzbot's, finds races by time; this one has a minute.
KCSAN_SKIP_WATCH=400

# Runs scripts/kunit.sh on kcsan's configuration and directory; KUNIT_CMD
# (run or build) passes through. Multi-threaded TCG: single-threaded TCG
# runs one vCPU for up to 100 ms before the next, and a KCSAN watch lasts
# 80 us, so another vCPU's access would almost never fall in one.
kcsan_kunit() {
	KUNIT_BUILD_DIR=$BUILD_DIR/kernel-kcsan KUNITCONFIG=$ALLOCTAG_ROOT/tests/kunit/kcsan.kunitconfig \
		KUNIT_QEMU_ARGS='-accel tcg,thread=multi -smp 2' "$ALLOCTAG_ROOT/scripts/kunit.sh" "$@"
}

# first_switch_on_boots CONFIG KDIR INITRD [NAME=VALUE...] [-- ARG...]: boots
# CONFIG's kernel KDIR at 0 and 0,page_ext with tests/guest/boot.sh's first
# switch-on tests (the param-0 boots'), run-qemu.sh's environment NAME=VALUE
# and the kernel arguments ARG besides; consoles in $logs/CONFIG-BOOT.log.
# Adds each boot's passes to detail; sets why and fails on a failed or
# skipped test or a kernel report (of the console filtered by KCSAN's list,
# where there is one).
first_switch_on_boots() {
	local config=$1 out=$2 initrd=$3 b name value tests n console reports t0
	local -a envs=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	[ $# = 0 ] || shift
	for b in "param-0|0|test_boot_param_0_*,!test_boot_param_0_shared_*,!test_boot_param_0_page_ext_*" \
		"param-0-pageext|0,page_ext|test_boot_param_0_page_ext_*"; do
		IFS='|' read -r name value tests <<<"$b"
		console=$logs/$config-$name.log
		t0=$SECONDS
		log "$config: booting it at $value with the first switch-on's tests ($tests)"
		if ! env QEMU_FAULT_INJECTION=1 QEMU_TIMEOUT="${QEMU_TIMEOUT:-900}" "${envs[@]}" \
			"$ALLOCTAG_ROOT/scripts/run-qemu.sh" "$out/arch/x86/boot/bzImage" "$initrd" "$console" \
			alloctag_run=tests "alloctag_kernel=$config" "alloctag_tests=$tests" "$@" \
			"sysctl.vm.mem_profiling=$value" >>"$build_log" 2>&1; then
			reports=$console
			[ ! -f "$console.kcsan" ] || reports=$console.kcsan
			why="$name boot failed ($console):"$'\n'"$(grep -E -m 5 -A 12 "$KERNEL_REPORTS" "$reports" 2>/dev/null ||
				grep -E '^(guest-test: not ok|run-qemu:)' "$console" "$build_log" || tail -n 20 "$console")"
			return 1
		fi
		n=$(grep -c '^guest-test: ok ' "$console" || true)
		if [ "$n" = 0 ] || grep -q '^guest-test: not ok' "$console" || grep -q '# SKIP' "$console"; then
			why="$name boot: $n passed, $(grep -c '^guest-test: not ok' "$console" || true) failed or skipped ($console)"
			return 1
		fi
		detail="$detail; $name $n passed, $((SECONDS - t0)) s"
	done
}

# Boots $2 (configuration $1) on two NUMA nodes of two vCPUs each
# (run-qemu.sh's QEMU_NUMA), telling the guest so (alloctag_numa=), with
# tests/guest/numa.sh's tests, which first check that the guest sees those
# nodes and CPUs: every one of them must pass. Five times: per-node
# counting off (test_boot_numa_*, but test_boot_numa_node_*,
# test_boot_numa_switch_* and test_boot_numa_memless_*), booted on
# (alloctag.per_node=on, in format 2.0 for the text's node pairs) with
# test_boot_numa_node_*, booted 0 with test_boot_numa_switch_*, which turn
# it on before profiling, booted 0 with test_boot_numa_unarmed_*, whose
# module comes while profiling is off, and booted on with node 1 given no memory
# (QEMU_NUMA_MEMLESS, alloctag_numa_memless=1) with test_boot_numa_memless_*,
# the in-tree fuzzer's node splits among them.
numa_boot() {
	local config=$1 out=$2 initrd=$3 name console t0=$SECONDS n want all node switch unarmed memless no_mem tests extra
	local f=$ALLOCTAG_ROOT/tests/guest/numa.sh
	all=$(grep -c '^test_boot_numa_[a-z_]* *()' "$f")
	node=$(grep -c '^test_boot_numa_node_[a-z_]* *()' "$f")
	switch=$(grep -c '^test_boot_numa_switch_[a-z_]* *()' "$f")
	unarmed=$(grep -c '^test_boot_numa_unarmed_[a-z_]* *()' "$f")
	memless=$(grep -c '^test_boot_numa_memless_[a-z_]* *()' "$f")
	for name in numa numa-node numa-switch numa-unarmed numa-memless; do
		console=$logs/$config-$name.log
		case $name in
		numa)
			want=$((all - node - switch - unarmed - memless)) extra=
			tests='test_boot_numa_*,!test_boot_numa_node_*,!test_boot_numa_switch_*,!test_boot_numa_unarmed_*,!test_boot_numa_memless_*' ;;
		numa-node) want=$node tests='test_boot_numa_node_*' extra='alloctag.per_node=on allocinfo.version=2.0' ;;
		numa-switch) want=$switch tests='test_boot_numa_switch_*' extra=sysctl.vm.mem_profiling=0 ;;
		numa-unarmed) want=$unarmed tests='test_boot_numa_unarmed_*' extra=sysctl.vm.mem_profiling=0 ;;
		*) want=$memless tests='test_boot_numa_memless_*' extra='alloctag.per_node=on alloctag_numa_memless=1' ;;
		esac
		log "$config: booting it on two NUMA nodes with tests/guest/numa.sh's $want tests ($tests $extra)"
		# numa-memless: node 1 without memory; and the in-tree fuzzer,
		# whose fault rules make warn_alloc()'s reports by design.
		no_mem=0
		[ "$name" != numa-memless ] || no_mem=1
		# shellcheck disable=SC2086 # $extra: none or more words
		if ! QEMU_SMP=4 QEMU_NUMA=2 QEMU_NUMA_MEMLESS=$no_mem QEMU_FAULT_INJECTION=$no_mem \
			QEMU_TIMEOUT="${QEMU_TIMEOUT:-900}" \
			"$ALLOCTAG_ROOT/scripts/run-qemu.sh" "$out/arch/x86/boot/bzImage" "$initrd" "$console" \
			alloctag_run=tests "alloctag_kernel=$config" "alloctag_tests=$tests" $extra \
			alloctag_numa=0-1/2-3 >>"$build_log" 2>&1; then
			why="$name boot failed ($console):"$'\n'"$(grep -E -m 5 -A 12 "$KERNEL_REPORTS" "$console" ||
				grep -E '^(guest-test: (not ok|#)|run-qemu:)' "$console" "$build_log" | tail -n 20)"
			return 1
		fi
		n=$(grep -c '^guest-test: ok ' "$console" || true)
		if [ "$n" != "$want" ] || grep -q '^guest-test: not ok' "$console" || grep -q '# SKIP' "$console"; then
			why="$name boot: $n of $want passed ($console)"
			return 1
		fi
		detail="$detail; $name $n passed, $((SECONDS - t0)) s"
		t0=$SECONDS
	done
}

run_kcsan() {
	local out=$BUILD_DIR/kernel-kcsan kunit_log=$logs/kcsan-kunit.log build_log=$logs/kcsan-build.log
	local console=$logs/kcsan-stress.log rc=0 t0=$SECONDS mout others
	local kcsan_list=$ALLOCTAG_ROOT/tests/kcsan/upstream.txt
	log "kcsan: kunit.py run into $out (tests/kunit/kcsan.kunitconfig)"
	rm -f "$out/test.log"
	# With page tags in page flags and waste accounting's slots, as the test
	# kernel's second KUnit run: every waste case runs, and the page hooks
	# take the page-flags path; the stress boot takes page_ext's.
	kcsan_kunit --kernel_args kcsan.skip_watch=$KCSAN_SKIP_WATCH \
		--kernel_args sysctl.vm.mem_profiling=1,compressed \
		--kernel_args alloctag.waste_slots=on \
		--kernel_args numa=fake=2 --kernel_args alloctag.per_node=on >"$kunit_log" 2>&1 || rc=$?
	kunit_judged kcsan "$kunit_log" "$rc" "$t0" || return 1
	# A KCSAN report ("BUG: KCSAN: data-race in ...") is one of these, but
	# for those not alloctag's to answer for (kcsan_drop_listed).
	if ! kcsan_drop_listed "$kcsan_list" "$out/test.log" >"$out/test.log.kcsan" 2>>"$kunit_log" ||
		! grep -q "^kcsan: [0-9]* listed, [0-9]* not alloctag's, left out\$" "$kunit_log"; then
		why="the KCSAN reports of $out/test.log could not be checked"
		return 1
	fi
	if grep -Eq "$KERNEL_REPORTS" "$out/test.log.kcsan"; then
		why="kernel report on the KUnit console ($out/test.log):"$'\n'"$(grep -E -m 5 -A 12 "$KERNEL_REPORTS" "$out/test.log.kcsan")"
		return 1
	fi
	has_config CONFIG_KCSAN y "$out/.config" || { why="$out/.config has no CONFIG_KCSAN"; return 1; }
	if ! mout=$("$ALLOCTAG_ROOT/scripts/manifest.sh" check kunit-kcsan "$out/test.log" 2>&1); then
		why="the KUnit results differ from tests/manifest/kunit-kcsan.txt:"$'\n'"$mout"
		return 1
	fi

	# The stress tests (module load and unload racing readers, allocators,
	# capture and the sysctl) on 4 vCPUs.
	t0=$SECONDS
	log "kcsan: booting it with the stress tests (tests/guest/stress.sh)"
	: >"$build_log"
	"$ALLOCTAG_ROOT/scripts/mkinitramfs.sh" "$out" "$BUILD_DIR/initramfs-kcsan.cpio.gz" >>"$build_log" 2>&1 ||
		{ why="mkinitramfs.sh failed ($build_log)"; return 1; }
	if ! QEMU_SMP=4 QEMU_TCG_THREAD=multi QEMU_KCSAN_LIST=$kcsan_list QEMU_TIMEOUT=${QEMU_TIMEOUT:-900} "$ALLOCTAG_ROOT/scripts/run-qemu.sh" \
		"$out/arch/x86/boot/bzImage" "$BUILD_DIR/initramfs-kcsan.cpio.gz" "$console" \
		alloctag_run=tests alloctag_kernel=kcsan kunit.enable=0 'alloctag_tests=test_stress_*' \
		alloctag_stress_toggle=1 kcsan.skip_watch=$KCSAN_SKIP_WATCH \
		sysctl.vm.mem_profiling=1,page_ext numa=fake=2 alloctag.per_node=on >>"$build_log" 2>&1; then
		why="stress boot failed ($console):"$'\n'"$(grep -E -m 5 -A 12 "$KERNEL_REPORTS" "$console.kcsan" 2>/dev/null ||
			grep -E '^(guest-test: not ok|run-qemu:)' "$console" "$build_log" || tail -n 20 "$console")"
		return 1
	fi
	# Every stress test ran and passed (run-qemu.sh checked the guest's exit
	# code): at least the one that races modules, readers and the sysctl.
	grep -Eqx 'guest-test: ok [0-9]+ test_stress_modules_readers_allocators' "$console" ||
		{ why="the stress test did not pass ($console)"; return 1; }
	detail="$detail; stress $(grep -c '^guest-test: ok ' "$console") passed, $((SECONDS - t0)) s"

	# The first switch-on of a kernel booted 0 (tests/guest/boot.sh's
	# param-0 tests: the counters, the dynamic tags' first chunk, and page
	# flags or page_ext made at that moment; all or nothing under fault
	# rules; while readers run and a module of 5,000 sites loads) under
	# lockdep, PREEMPT, the atomic-sleep checks and KCSAN, which neither the
	# test kernel (its debug checks keep the sysctl read-only) nor nodebug
	# has. QEMU_FAULT_INJECTION: the failed allocations' warn_alloc().
	first_switch_on_boots kcsan "$out" "$BUILD_DIR/initramfs-kcsan.cpio.gz" QEMU_SMP=2 QEMU_TCG_THREAD=multi \
		"QEMU_KCSAN_LIST=$kcsan_list" -- kunit.enable=0 "kcsan.skip_watch=$KCSAN_SKIP_WATCH" || return 1
	# Races of 6.12's own code, met but not alloctag's: named, not failed.
	others=$(grep -h "^kcsan: not alloctag's: " "$kunit_log" "$build_log" | sort | uniq -c |
		sed "s/ *\([0-9]*\) kcsan: not alloctag's: BUG: KCSAN: data-race in /\1x /" | paste -sd ';' -) || true
	[ -z "$others" ] || detail="$detail; KCSAN reports of 6.12's own code: $others"
}

# The kasan configuration's build: nodebug's fragment, then numa's (ACPI's
# NUMA, for its boot on two nodes), then kasan's.
kasan_fragments=("$ALLOCTAG_ROOT/scripts/configs/numa.config" "$ALLOCTAG_ROOT/scripts/configs/kasan.config")
kasan_build() {
	KERNEL_CONFIG=nodebug KERNEL_TREE=$SRC_TREE checked_build kasan "${kasan_fragments[@]}"
}

run_kasan() {
	local out=$BUILD_DIR/kernel-kasan t0=$SECONDS console
	local build_log=$logs/kasan-build.log
	log "kasan: building $out (tinyconfig + nodebug.config + numa.config + kasan.config)"
	kasan_build || return 1
	has_config CONFIG_KASAN y "$out/.config" || { why="$out/.config has no CONFIG_KASAN"; return 1; }
	detail="build $((SECONDS - t0)) s"
	"$ALLOCTAG_ROOT/scripts/mkinitramfs.sh" "$out" "$BUILD_DIR/initramfs-kasan.cpio.gz" >>"$build_log" 2>&1 ||
		{ why="mkinitramfs.sh failed ($build_log)"; return 1; }
	first_switch_on_boots kasan "$out" "$BUILD_DIR/initramfs-kasan.cpio.gz" || return 1
	numa_boot kasan "$out" "$BUILD_DIR/initramfs-kasan.cpio.gz" || return 1
	for console in "$logs"/kasan-param-0.log "$logs"/kasan-param-0-pageext.log "$logs"/kasan-numa.log \
		"$logs"/kasan-numa-node.log "$logs"/kasan-numa-switch.log "$logs"/kasan-numa-memless.log; do
		grep -q 'KernelAddressSanitizer initialized' "$console" ||
			{ why="KASAN did not say it initialized ($console)"; return 1; }
	done
}

run_off() {
	local out=$BUILD_DIR/kernel-off t0=$SECONDS
	log "off: building $out (tinyconfig + scripts/configs/off.config)"
	KERNEL_TREE=$SRC_TREE checked_build off || return 1
	# build-kernel.sh checks the fragment's "=y" lines; the "is not set"
	# one is the point of this configuration.
	has_config CONFIG_MEM_ALLOC_PROFILING n "$out/.config" ||
		{ why="$out/.config has CONFIG_MEM_ALLOC_PROFILING"; return 1; }
	[ -f "$out/vmlinux" ] || { why="no $out/vmlinux"; return 1; }
	detail="build $((SECONDS - t0)) s"
}

# The arm64 kernel's build and boot, as run_up's, on the other architecture
# and with every option on.
# Sets tree to the source tree arm64 builds from: $MATRIX_ARM64_TREE, or, as
# a carrier builds it, the series applied to the pristine tree, made here
# (log: series.log) if the series configuration did not run before.
arm64_tree() {
	tree=${MATRIX_ARM64_TREE:-$BUILD_DIR/linux-series}
	[ -n "${MATRIX_ARM64_TREE:-}" ] || [ -n "$series_done" ] ||
		{ "$ALLOCTAG_ROOT/scripts/check-series.sh" >"$logs/series.log" 2>&1 && series_done=1; }
}

run_arm64() {
	local tree
	arm64_tree ||
		{ why="the series' tree could not be made ($logs/series.log):"$'\n'"$(tail -n 5 "$logs/series.log")"; return 1; }
	local out=$BUILD_DIR/kernel-arm64 build_log=$logs/arm64-build.log console=$logs/arm64-console.log
	local t0=$SECONDS t_build opt want
	[ -f "$tree/lib/alloctag/Kbuild" ] || { why="no alloctag in the source tree $tree (MATRIX_ARM64_TREE)"; return 1; }
	log "arm64: cross-building $out from $tree (tinyconfig + scripts/configs/arm64.config)"
	KERNEL_TREE=$tree checked_build arm64 || return 1
	t_build=$((SECONDS - t0))
	# build-kernel.sh checks that the fragment's lines stuck; this checks
	# the architecture.
	has_config CONFIG_ARM64 y "$out/.config" || { why="$out/.config is not an arm64 configuration"; return 1; }
	for opt in alloctag_test alloctag_rust_sample alloctag_rust_plain; do
		[ -f "$out/lib/alloctag/tests/modules/$opt.ko" ] || { why="no $opt.ko in $out"; return 1; }
	done

	t0=$SECONDS
	# Waste accounting's slots reserved, for the smoke test's exact figures
	# of objects from kmalloc-256, whose slabs predate turning it on.
	smoke_boot arm64 "$out/arch/arm64/boot/Image" "$console" alloctag.waste_slots=on || return 1
	# The guest's own view: two CPUs, the sysctl on and writable (the Rust
	# call sites were checked with it off and on again), every debugfs file
	# of the core, fault injection, capture and waste accounting.
	grep -qx 'smoke: cpus=2' "$console" || { why="guest does not see 2 CPUs ($console)"; return 1; }
	grep -qx 'smoke: sysctl=1' "$console" || { why="guest's sysctl does not read 1 ($console)"; return 1; }
	grep -qx 'smoke: ok - no alloctag_rust_plain tag made with profiling off' "$console" ||
		{ why="the Rust call sites were not checked with profiling off ($console)"; return 1; }
	want='smoke: debugfs=capture dynamic_tags fail live live_processes live_stacks status waste'
	grep -qx "$want" "$console" ||
		{ why="guest's debugfs files differ: $(grep '^smoke: debugfs=' "$console" || echo none), expected ${want#smoke: } ($console)"; return 1; }
	detail="build ${t_build} s, boot $((SECONDS - t0)) s, $(sed -n 's/^smoke: \([0-9]*\) tags$/\1/p' "$console") tags, $(grep -c '^smoke: ok' "$console") smoke checks ok"
}

# The Debian-shaped kernel (scripts/configs/debian.config): built with GCC and
# MODVERSIONS as Debian builds, its modules (C and Rust) carry CRCs, boot and
# load; a module whose CRC was changed is refused; asked for page tags in page
# flags, it keeps them in page_ext as Debian's page-flag layout leaves too
# few bits, and says so. With Debian's BTF: vmlinux and the modules carry it.
run_debian() {
	local out=$BUILD_DIR/kernel-debian build_log=$logs/debian-build.log console=$logs/debian-console.log
	local t0=$SECONDS t_build m crc_args sections
	log "debian: building $out (tinyconfig + scripts/configs/debian.config, gcc-12)"
	KERNEL_TREE=$SRC_TREE checked_build debian || return 1
	t_build=$((SECONDS - t0))
	for m in CONFIG_CC_IS_GCC CONFIG_MODVERSIONS CONFIG_RUST CONFIG_MEM_ALLOC_PROFILING_RUST CONFIG_WERROR \
		CONFIG_DEBUG_INFO_BTF CONFIG_DEBUG_INFO_BTF_MODULES; do
		has_config "$m" y "$out/.config" || { why="$m is not set in $out/.config"; return 1; }
	done
	# What a distribution gets without asking (Kconfig): capture and waste
	# accounting, and, without the kernel's FAULT_INJECTION, no fault
	# injection.
	for m in CONFIG_ALLOCTAG_CAPTURE CONFIG_ALLOCTAG_WASTE; do
		has_config "$m" y "$out/.config" || { why="$m is not set in $out/.config"; return 1; }
	done
	for m in CONFIG_FAULT_INJECTION CONFIG_ALLOCTAG_FAULT_INJECTION; do
		has_config "$m" n "$out/.config" || { why="$m is set in $out/.config"; return 1; }
	done
	# Without the debug checks vmlinux's tags, C's and Rust's, have no static
	# per-CPU counters: the first switch-on makes them (src/alloc_tag/counters.rs).
	m=$(grep -cE '_alloc_tag_cntr|COUNTERS' "$out/System.map") && [ "$m" != 0 ] &&
		{ why="$out/System.map has $m static tag counters"; return 1; }
	# Read whole before grep: grep -q would stop llvm-readelf with SIGPIPE, a
	# failure under pipefail.
	for m in "$out/vmlinux" $out/lib/alloctag/tests/modules/{alloctag_test,alloctag_rust_plain}.ko; do
		sections=$(llvm-readelf-19 -S "$m") && grep -q ' \.BTF ' <<<"$sections" ||
			{ why="$m has no .BTF section"; return 1; }
	done
	# An out-of-tree C module, built against the headers package as DKMS builds.
	"$ALLOCTAG_ROOT/scripts/build-extmod.sh" debian >>"$build_log" 2>&1 ||
		{ why="the out-of-tree module did not build against the headers ($build_log)"; return 1; }
	for m in $out/lib/alloctag/tests/modules/{alloctag_test,alloctag_rust_sample,alloctag_rust_plain}.ko \
		"$BUILD_DIR/extmod/debian/alloctag_extmod.ko"; do
		[ -f "$m" ] || { why="no $m"; return 1; }
		crc=$(module_byte "$m" __versions "" 255) || { why="$m has no __versions: built without CRCs"; return 1; }
	done
	# A Rust module's imports of C (its helpers) are versioned, not only
	# module_layout.
	for m in $out/lib/alloctag/tests/modules/{alloctag_rust_sample,alloctag_rust_plain}.ko; do
		module_byte "$m" __versions rust_helper_ 255 >/dev/null ||
			{ why="$m's imports of C functions carry no CRC"; return 1; }
	done
	# And its imports of Rust's long names too (patch 16: CRCs from DWARF,
	# in __version_ext_crcs).
	for m in $out/lib/alloctag/tests/modules/{alloctag_rust_sample,alloctag_rust_plain}.ko; do
		module_byte "$m" __version_ext_names _R 255 >/dev/null ||
			{ why="$m's imports of Rust symbols carry no CRC"; return 1; }
	done
	crc_args=$(crc_smoke_args "$out") || { why="no CRC to change in the test modules"; return 1; }

	t0=$SECONDS
	# Waste accounting's slots reserved, as arm64 boots, for the smoke test's
	# exact figures.
	# shellcheck disable=SC2086 # crc_args: words to split
	smoke_boot debian "$out/arch/x86/boot/bzImage" "$console" sysctl.vm.mem_profiling=1,compressed \
		alloctag.waste_slots=on $crc_args || return 1
	why=$(crc_smoke_missing "$console") || return 1
	grep -Eqx 'smoke: page_tags=page_ext free_bits=[0-9]+ needed_bits=[0-9]+' "$console" ||
		{ why="page tags are not in page_ext: $(grep '^smoke: page_tags=' "$console" || echo 'no status') ($console)"; return 1; }
	# Debian's page-flag layout, to the bit.
	grep -q "alloctag: they need [0-9]* bits; page->flags' 64 bits hold flags 24, .* nodes 10 (NODES_SHIFT), zones 3, last_cpupid 21 (NUMA_BALANCING, NR_CPUS), .* lru_gen 3 (LRU_GEN), lru_refs 2 (LRU_GEN), unused 1$" "$console" ||
		{ why="the boot log does not give Debian's page-flag layout: $(grep "they need" "$console" || echo 'no line') ($console)"; return 1; }
	# No fault injection's control file; capture's and waste's are there.
	want='smoke: debugfs=capture dynamic_tags live live_processes live_stacks status waste'
	grep -qx "$want" "$console" ||
		{ why="guest's debugfs files differ: $(grep '^smoke: debugfs=' "$console" || echo none), expected ${want#smoke: } ($console)"; return 1; }
	# Built off by default (debian.config): without the parameter it boots 0,
	# switchable, with no page_ext, which the first switch-on makes
	# (scripts/guest/smoke.sh, smoke_switch).
	smoke_boot debian "$out/arch/x86/boot/bzImage" "$logs/debian-off-console.log" smoke_switch || return 1
	for m in 'booted 0 by default, switchable' 'page_ext made at the switch-on' \
		'32768 bytes of pages (order 3) count exactly'; do
		grep -qx "smoke: ok - $m" "$logs/debian-off-console.log" ||
			{ why="booted without the parameter, not '$m' ($logs/debian-off-console.log)"; return 1; }
	done
	# And off costs what never costs: Slab + Percpu + page_ext within 64 KiB
	# (scripts/memory.sh, one boot each).
	"$ALLOCTAG_ROOT/scripts/memory.sh" "$out" never - >"$logs/debian-memory.txt" 2>>"$build_log" ||
		{ why="scripts/memory.sh failed ($build_log)"; return 1; }
	m=$(awk '$1 == "never" { n = ($4 + $5) * 1024 + $7 } $1 == "-" { d = ($4 + $5) * 1024 + $7 }
		END { if (n == "" || d == "") exit 1; print d - n }' "$logs/debian-memory.txt") ||
		{ why="no figures in $logs/debian-memory.txt"; return 1; }
	[ "${m#-}" -le 65536 ] ||
		{ why="booted off it holds $m bytes more than never (Slab + Percpu + page_ext; $logs/debian-memory.txt)"; return 1; }
	detail="build ${t_build} s, boot $((SECONDS - t0)) s, $(sed -n 's/^smoke: \(page_tags=.*\)$/\1/p' "$console"), $(grep -c '^smoke: ok' "$console") + $(grep -c '^smoke: ok' "$logs/debian-off-console.log") smoke checks ok, off holds $m B over never"
}

# The builds alone (--build-only), with their output on stdout.
build_config() {
	case "$1" in
	series) "$ALLOCTAG_ROOT/scripts/check-series.sh" && series_done=1 ;;
	up | off | debian) KERNEL_TREE=$SRC_TREE "$ALLOCTAG_ROOT/scripts/build-kernel.sh" "$1" ;;
	ccore) KUNIT_CMD=build ccore_kunit 2>&1 | tee "$logs/ccore-build-only.log" ;;
	kcsan) KUNIT_CMD=build kcsan_kunit 2>&1 | tee "$logs/kcsan-build-only.log" ;;
	kasan) KERNEL_CONFIG=nodebug KERNEL_TREE=$SRC_TREE "$ALLOCTAG_ROOT/scripts/build-kernel.sh" kasan \
		"${kasan_fragments[@]}" ;;
	arm64)
		local tree
		arm64_tree || log "matrix: the series' tree could not be made ($logs/series.log)"
		KERNEL_TREE=$tree "$ALLOCTAG_ROOT/scripts/build-kernel.sh" arm64
		;;
	esac
}
if [ -n "$build_only" ]; then
	for c in "${configs[@]}"; do
		log "matrix: building $c (--build-only)"
		build_config "$c" || log "matrix: building $c failed (its check will say why)"
	done
	exit 0
fi

# Checks configuration $1 and prints its line.
check_config() {
	detail='' why=''
	if "run_$1"; then
		printf 'matrix: %-6s ok (%s)\n' "$1" "$detail"
	else
		printf 'matrix: %-6s FAILED%s: %s\n' "$1" "${detail:+ ($detail)}" "$why"
	fi
}

# Two lanes side by side, as the guest stage's boots run: kcsan (its KUnit
# run, stress boot and two first switch-on boots, the longest) in one, the
# others in the other (arm64 builds from the series' tree, so they share
# one). Most checks are a QEMU boot, one host thread, and the builds are
# done: on 2 cores one lane alone leaves a core idle. Each lane's lines go to
# a file, printed in the configurations' order once both are done; every
# check writes its own logs and initramfs.
lanes=("" "")
for c in "${configs[@]}"; do
	if [ "$c" = kcsan ]; then lanes[0]="${lanes[0]} $c"; else lanes[1]="${lanes[1]} $c"; fi
done
lane_pids=()
for i in 0 1; do
	[ -n "${lanes[$i]}" ] || continue
	# shellcheck disable=SC2086 # one word per configuration
	(for c in ${lanes[$i]}; do check_config "$c"; done >"$logs/lane-$i.out") &
	lane_pids+=($!)
done
wait "${lane_pids[@]}" || true
for c in "${configs[@]}"; do
	line=$(grep -h "^matrix: $c " "$logs"/lane-[01].out 2>/dev/null | tail -n 1 || true)
	if [ -z "$line" ]; then
		echo "matrix: $c FAILED: its check printed nothing"
		failed=$((failed + 1))
		continue
	fi
	# The line and what follows it (a failure's reasons), up to the next line.
	awk -v c="$c" '$0 ~ "^matrix: " { on = ($2 == c) } on' "$logs"/lane-[01].out
	case "$line" in *" ok ("*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
done
rm -f "$logs"/lane-[01].out
echo "matrix: $passed passed, $failed failed"
[ "$failed" = 0 ]
