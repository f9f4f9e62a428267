#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark and differential check of the Rust core against the kernel's
# C core (Documentation/benchmarks.rst). Not part of scripts/test.sh.
#
# Builds three kernels from the same tree and configuration
# (scripts/configs/bench-common.config), differing only in:
#   (a) kernel-bench-nop:  MEM_ALLOC_PROFILING=n
#   (b) kernel-bench-c:    MEM_ALLOC_PROFILING=y, the kernel's C core
#   (c) kernel-bench-rust: MEM_ALLOC_PROFILING=y, alloctag's Rust core, booted
#       with sysctl.vm.mem_profiling=1,page_ext (page tags in page_ext, as (b)'s)
# with the benchmark modules (tests/bench/), and one initramfs for all three
# (scripts/mkinitramfs.sh --bench). Then boots them in QEMU (TCG), in turn,
# BENCH_ROUNDS times, and BENCH_ICOUNT_ROUNDS more times each with -icount;
# each boot dumps /proc/allocinfo and runs the benchmark (scripts/bench/guest.sh).
# Prints the markdown tables of scripts/bench/report.py, which it also writes
# to $BUILD_DIR/bench/results.md next to the console logs.
#
# With BENCH_FAULT=1 it builds and compares instead (c) and
#   (d) kernel-bench-fault: (c) with per-call-site fault injection built in
# (bench-rust.config leaves it out; DEBUG_FS is in all), under -icount only,
# and prints the fault-injection table: nothing armed, a rule armed
# elsewhere, and every benchmark site armed with probability 0 (results in
# $BUILD_DIR/bench-fault).
#
# With BENCH_CAPTURE=1 it compares (c) and
#   (e) kernel-bench-capture: (c) with capture of live objects and waste
# accounting built in, under -icount only: nothing selected, a site selected
# that never allocates, and every benchmark site selected (each allocation
# recorded and its record freed); and booted again with waste accounting's
# slots reserved (configuration "waste"): waste accounting off, then on;
# results in $BUILD_DIR/bench-capture.
#
# With BENCH_PGFLAGS=1 it compares (a), (c) and
#   (f) pgflags: kernel-bench-rust booted with sysctl.vm.mem_profiling=1,compressed
# (page tags in page flags instead of page_ext; no build of its own), under
# -icount only, profiling on and off; results in $BUILD_DIR/bench-pgflags.
#
# With BENCH_NODE=1 it compares, under -icount only, on two NUMA nodes of
# one vCPU and 1 GiB each (numa.config added, ACPI's SRAT):
#   (g) kernel-bench-numanone: (e) with NUMA, per-node counting not built in
#       (it depends on capture, whose keys choose the slab hooks' variants)
#   (h) kernel-bench-numa:     (g) with per-node counting built in, off
#   (i) numaon: (h) booted with alloctag.per_node=on (no build of its own)
# profiling on and off; results in $BUILD_DIR/bench-node. The benchmark's
# memory is the allocating CPU's node's, the common case.
#
# BENCH_KERNELS (default "nop c rust") picks the kernels to build and boot,
# e.g. "c rust". With BENCH_BIG=1 each is built with
# scripts/configs/bench-big.config added (a few thousand tags) as
# kernel-bench-big-KERNEL (fragment bench-big-KERNEL.config), and the results
# go to $BUILD_DIR/bench-big.
#
# Environment: BENCH_ROUNDS (default 7), BENCH_ICOUNT_ROUNDS (default 2),
# BENCH_PASSES (benchmark passes per TCG boot, default 3),
# BENCH_ICOUNT (QEMU -icount options, default shift=0,sleep=off),
# BENCH_SKIP_BUILD=1 (reuse the kernels as built), QEMU_TIMEOUT (per boot,
# default 600 s), BENCH_TAGS (a module of that many allocation call sites
# loaded in every boot, tests/modules/alloctag_bench_tags.c; default 0, none),
# BENCH_QUERY_REPS (repetitions of each user-space
# /proc/allocinfo query, tests/bench/allocinfo_query.c, default 20),
# BENCH_CPUS (possible CPUs: QEMU's -smp N and maxcpus=2; the kernels are built
# with scripts/configs/bench-cpus.config added, NR_CPUS=256, as
# kernel-bench-cpus-KERNEL, results in $BUILD_DIR/bench-cpusN; default 0,
# -smp 2 and the usual kernels). At 224 CPUs an -icount boot takes hours (the
# idle vCPUs) and a TCG boot's allocator loops most of an hour: the figures
# in benchmarks.rst come from its kernels booted with scripts/bench/scale.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ROUNDS=${BENCH_ROUNDS:-7}
ICOUNT_ROUNDS=${BENCH_ICOUNT_ROUNDS:-2}
PASSES=${BENCH_PASSES:-3}
ICOUNT=${BENCH_ICOUNT:-shift=0,sleep=off}
read -r -a KERNELS <<<"${BENCH_KERNELS:-nop c rust}"
QUERY=1
EXTRA_FRAGMENTS=()
out=$BUILD_DIR/bench
if [ "${BENCH_FAULT:-0}" = 1 ]; then
	KERNELS=(rust fault)
	ROUNDS=0
	QUERY=0
	out=$BUILD_DIR/bench-fault
elif [ "${BENCH_CAPTURE:-0}" = 1 ]; then
	# BENCH_KERNELS may boot fewer, e.g. "rust capture" for more rounds of
	# the off figures: the report pairs them with the other's logs kept.
	read -r -a KERNELS <<<"${BENCH_KERNELS:-rust capture waste}"
	ROUNDS=0
	QUERY=0
	out=$BUILD_DIR/bench-capture
elif [ "${BENCH_PGFLAGS:-0}" = 1 ]; then
	KERNELS=(nop rust pgflags)
	ROUNDS=0
	QUERY=0
	out=$BUILD_DIR/bench-pgflags
elif [ "${BENCH_NODE:-0}" = 1 ]; then
	read -r -a KERNELS <<<"${BENCH_KERNELS:-numanone numa numaon}"
	ROUNDS=0
	QUERY=0
	out=$BUILD_DIR/bench-node
fi
for k in "${KERNELS[@]}"; do
	case $k in nop | c | rust | fault | capture | waste | pgflags | numanone | numa | numaon) ;;
	*) die "BENCH_KERNELS: $k is none of nop c rust fault capture waste pgflags numanone numa numaon" ;;
	esac
done
# The kernel a configuration boots: pgflags is the Rust core's, booted with
# page tags in page flags; waste is capture's, booted with waste
# accounting's slots reserved, for the phase with it on (the capture boot,
# without them, measures it off as a kernel boots by default).
image_of() {
	case $1 in
	*pgflags) echo "${1%pgflags}rust" ;;
	*waste) echo "${1%waste}capture" ;;
	*numaon) echo "${1%on}" ;;
	*) echo "$1" ;;
	esac
}
# The Rust core puts page tags in page flags by default where they fit: its
# kernels' rows are page_ext's (as the C core's), asked for with ,page_ext;
# (f) is the page-flags row.
extra_cmdline() {
	case $1 in
	*pgflags) echo "sysctl.vm.mem_profiling=1,compressed" ;;
	*waste) echo "sysctl.vm.mem_profiling=1,page_ext alloctag.waste_slots=on" ;;
	*rust | *capture | *fault) echo "sysctl.vm.mem_profiling=1,page_ext" ;;
	*numanone | *numa) echo "sysctl.vm.mem_profiling=1,page_ext bench_capture=0" ;;
	*numaon) echo "sysctl.vm.mem_profiling=1,page_ext alloctag.per_node=on bench_capture=0" ;;
	esac
}
# BENCH_BIG=1: the same kernels with bench-big.config added (a few thousand
# tags), built as kernel-bench-big-KERNEL, results in $BUILD_DIR/bench-big.
PREFIX=
if [ "${BENCH_BIG:-0}" = 1 ]; then
	PREFIX=big-
	EXTRA_FRAGMENTS=("$ALLOCTAG_ROOT/scripts/configs/bench-big.config")
	out=$BUILD_DIR/bench-big
	KERNELS=("${KERNELS[@]/#/big-}")
fi
# BENCH_CPUS=N: N possible CPUs, 2 of them online, on kernels of NR_CPUS=256:
# QEMU gives N vCPUs and maxcpus=2 boots two (6.12's x86 counts possible CPUs
# from the firmware's tables, where QEMU's hotpluggable vCPUs did not show;
# possible_cpus= only lowers that count).
SMP=(-smp 2)
CPUS_CMDLINE=
# BENCH_NODE=1: two nodes of one vCPU and 1 GiB each, as run-qemu.sh's QEMU_NUMA.
if [ "${BENCH_NODE:-0}" = 1 ]; then
	[ "${BENCH_CPUS:-0}" = 0 ] && [ "${BENCH_BIG:-0}" = 0 ] || die "BENCH_NODE goes with neither BENCH_CPUS nor BENCH_BIG"
	EXTRA_FRAGMENTS=("$ALLOCTAG_ROOT/scripts/configs/numa.config")
	SMP+=(-object memory-backend-ram,id=m0,size=1024M -numa node,nodeid=0,cpus=0,memdev=m0
		-object memory-backend-ram,id=m1,size=1024M -numa node,nodeid=1,cpus=1,memdev=m1)
fi
if [ "${BENCH_CPUS:-0}" != 0 ]; then
	case $BENCH_CPUS in *[!0-9]*) die "BENCH_CPUS must be a number, not '$BENCH_CPUS'" ;; esac
	[ "$BENCH_CPUS" -ge 2 ] && [ "$BENCH_CPUS" -le 256 ] || die "BENCH_CPUS must be 2 to 256"
	[ -z "$PREFIX" ] || die "BENCH_CPUS and BENCH_BIG are not made to go together"
	PREFIX=cpus-
	EXTRA_FRAGMENTS=("$ALLOCTAG_ROOT/scripts/configs/bench-cpus.config")
	out=$out-cpus$BENCH_CPUS
	KERNELS=("${KERNELS[@]/#/cpus-}")
	SMP=(-smp "$BENCH_CPUS")
	CPUS_CMDLINE=" maxcpus=2"
fi
export BENCH_KERNELS="${KERNELS[*]}"
# BENCH_TAGS=N: a module of N allocation call sites (tests/bench/
# alloctag_bench_tags.c) loaded in every boot, for /proc/allocinfo at a few
# thousand tags; results in $out-tagsN.
export BENCH_TAGS=${BENCH_TAGS:-0}
[ "$BENCH_TAGS" = 0 ] || out=$out-tags$BENCH_TAGS
initrd=$out/initramfs-bench.cpio.gz
CMDLINE="console=ttyS0 panic=-1 oops=panic loglevel=5 nokaslr tsc=reliable alloctag_run=bench bench_query=$QUERY bench_query_reps=${BENCH_QUERY_REPS:-20}$CPUS_CMDLINE"

# The guest clock. TCG cannot calibrate the TSC and jiffies are 4 ms coarse,
# so the guest is told the TSC's frequency: under TCG the guest TSC is the
# host's, under -icount it counts virtual nanoseconds (1 GHz). tsc=reliable
# keeps the clocksource watchdog from trading it for jiffies, which TCG loses.
[ -n "${BENCH_TSC_KHZ:-}" ] || BENCH_TSC_KHZ=$(host_tsc_khz)
[ "${BENCH_TSC_KHZ:-0}" -gt 0 ] || die "host TSC frequency unknown: set BENCH_TSC_KHZ"
# Under TCG each boot runs the benchmark PASSES times (the report takes the
# median); under -icount, whose figures repeat, once.
TCG_CMDLINE="$CMDLINE tsc_early_khz=$BENCH_TSC_KHZ bench_passes=$PASSES"
ICOUNT_CMDLINE="$CMDLINE tsc_early_khz=1000000 bench_passes=1"

t_start=$(date +%s)
stage_times=()
stage() { stage_times+=("$1: $(($(date +%s) - $2)) s"); }

"$ALLOCTAG_ROOT/scripts/install-deps.sh"
"$ALLOCTAG_ROOT/scripts/prepare-tree.sh"

# The build host, in /proc/version, tells the guest script which kernel it
# runs on; it is no configuration option, so the three configs stay equal
# but for the profiling options.
if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
	for k in "${KERNELS[@]}"; do
		[ "$(image_of "$k")" = "$k" ] || continue
		t=$(date +%s)
		# kernel-bench-cpus-K: bench-K.config with bench-cpus.config added.
		base=bench-$k
		[ "${BENCH_CPUS:-0}" = 0 ] || base=bench-${k#cpus-}
		# (g) and (h): (e)'s configuration with NUMA, (g) without per-node counting.
		fragments=("${EXTRA_FRAGMENTS[@]}")
		case $k in numa | numanone) base=bench-capture ;; esac
		[ "$k" != numanone ] || fragments+=("$ALLOCTAG_ROOT/scripts/configs/bench-numanone.config")
		KBUILD_BUILD_USER=alloctag-bench KBUILD_BUILD_HOST=$k KERNEL_CONFIG=$base \
			nice -n 19 "$ALLOCTAG_ROOT/scripts/build-kernel.sh" "bench-$k" \
			"$ALLOCTAG_ROOT/scripts/configs/bench-common.config" "${fragments[@]}"
		stage "build kernel-bench-$k" "$t"
	done
fi
mapfile -t BUILT < <(for k in "${KERNELS[@]}"; do image_of "$k"; done | awk '!seen[$0]++')
for k in "${BUILT[@]}"; do
	cfg=$BUILD_DIR/kernel-bench-$k/.config
	[ -f "$BUILD_DIR/kernel-bench-$k/arch/x86/boot/bzImage" ] || die "kernel-bench-$k not built"
	log "kernel-bench-$k: $(grep -E '^(# )?CONFIG_MEM_ALLOC_PROFILING(_RUST)?[= ]' "$cfg" | tr '\n' ' ')"
done
# The three .config files must differ in the profiling options only, and in
# what MEM_ALLOC_PROFILING selects (CODE_TAGGING, which selects KALLSYMS;
# PAGE_EXTENSION; SLAB_OBJ_EXT; the Rust core's STACKTRACE; and
# ALLOCTAG_STACKDEPOT, on with profiling and debugfs in either core, with the
# STACKDEPOT it selects), and in the kernel's FAULT_INJECTION, which (d)
# sets because its fault injection depends on it.
PROFILING_OPTIONS='^CONFIG_(MEM_ALLOC_PROFILING[A-Z_]*|CODE_TAGGING|PAGE_EXTENSION|SLAB_OBJ_EXT|KALLSYMS|KALLSYMS_ABSOLUTE_PERCPU|FAULT_INJECTION|ALLOCTAG_FAULT_INJECTION|ALLOCTAG_SELECTION|ALLOCTAG_CAPTURE|ALLOCTAG_PER_NODE|ALLOCTAG_WASTE|ALLOCTAG_STACKDEPOT|STACKDEPOT|STACKDEPOT_MAX_FRAMES|STACKTRACE)='
options() { grep '^CONFIG_' "$BUILD_DIR/kernel-bench-$1/.config" | grep -Ev "$PROFILING_OPTIONS"; }
for ((i = 1; i < ${#BUILT[@]}; i++)); do
	a=${BUILT[$((i - 1))]} b=${BUILT[$i]}
	diff <(options "$a") <(options "$b") >&2 ||
		die "kernel-bench-$a and kernel-bench-$b differ in more than the profiling options (above)"
done

mkdir -p "$out"
# Only the logs of the kernels booted now are replaced: a later run of other
# kernels (BENCH_KERNELS) into the same directory adds to them, and the
# report pairs the boots of the same round number across the two runs.
for k in "${KERNELS[@]}"; do
	rm -f "$out"/boot-"$k"-*.log
done
# The modules of the kernels built: pgflags boots kernel-bench-rust.
BENCH_KERNELS="${BUILT[*]}" "$ALLOCTAG_ROOT/scripts/mkinitramfs.sh" --bench "$initrd"

# boot KERNEL LOG CMDLINE [QEMU option ...]: one boot, checked as
# scripts/run-qemu.sh checks one (same QEMU flags, plus the options given).
boot() {
	local k=$1 logfile=$2 cmdline="$3 $(extra_cmdline "$1")" rc=0
	shift 3
	local qemu=(qemu-system-x86_64 -nodefaults -no-reboot -display none
		-accel tcg,thread=single -cpu max "${SMP[@]}" -m 2G "$@"
		-bios qboot.rom -serial stdio
		-kernel "$BUILD_DIR/kernel-bench-$(image_of "$k")/arch/x86/boot/bzImage" -initrd "$initrd"
		-append "$cmdline")
	timeout "${QEMU_TIMEOUT:-600}" nice -n 10 "${qemu[@]}" </dev/null 2>&1 |
		tr -d '\r' >"$logfile" || rc=$?
	local BAD='(Oops|BUG:|WARNING:|Kernel panic|general protection fault|Call Trace:|INFO: possible|circular locking|inconsistent lock state|KASAN:|UBSAN:|detected stall|blocked for more than)'
	if grep -Eq "$BAD" "$logfile"; then
		grep -E -m 5 -A 3 "$BAD" "$logfile" >&2
		die "kernel report on the console ($logfile)"
	fi
	[ "$rc" != 124 ] || die "timed out after ${QEMU_TIMEOUT:-600} s ($logfile)"
	grep -q '^alloctag-guest: done rc=0$' "$logfile" ||
		{ tail -20 "$logfile" >&2; die "guest script failed ($logfile)"; }
	grep -Eq '^alloctag-bench-info: clocksource=tsc(-early)?$' "$logfile" ||
		die "the guest clock is not the TSC ($logfile)"
	if [ "${BENCH_CPUS:-0}" != 0 ]; then
		grep -q "^alloctag-bench-info: cpus_possible=0-$((BENCH_CPUS - 1))\$" "$logfile" ||
			die "the guest has $(sed -n 's/^alloctag-bench-info: cpus_possible=//p' "$logfile") possible CPUs, not 0-$((BENCH_CPUS - 1)) ($logfile)"
	fi
	if [ "${k%pgflags}" != "$k" ]; then
		grep -q '^alloctag-bench-info: mem_profiling_compressed=1$' "$logfile" ||
			die "page tags are not in page flags ($logfile)"
	elif grep -q '^alloctag-bench-info: mem_profiling_compressed=1$' "$logfile"; then
		die "page tags are in page flags, not page_ext ($logfile)"
	fi
	# The NUMA boots: the nodes and CPUs asked for, per-node counting as asked.
	case $k in
	*numa*)
		grep -q '^alloctag-bench-info: nodes=0-1 cpus0=0 cpus1=1$' "$logfile" ||
			die "the guest's nodes are not two of one CPU each: $(grep 'bench-info: nodes=' "$logfile") ($logfile)"
		local want=off
		case $k in *numaon) want=on ;; *numanone) want=none ;; esac
		grep -q "^alloctag-bench-info: per_node=$want\$" "$logfile" ||
			die "per-node counting is not $want: $(grep 'bench-info: per_node=' "$logfile") ($logfile)"
		;;
	esac
}

# Rounds: every kernel boots once per round, the first kernel rotating, so
# that the ratios of one round compare boots made close in time.
t=$(date +%s)
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < ${#KERNELS[@]}; i++)); do
		k=${KERNELS[$(((r - 1 + i) % ${#KERNELS[@]}))]}
		log "round $r/$ROUNDS: kernel-bench-$k (TCG)"
		boot "$k" "$out/boot-$k-tcg-r$r.log" "$TCG_CMDLINE"
	done
done
stage "$ROUNDS TCG rounds" "$t"
t=$(date +%s)
for ((r = 1; r <= ICOUNT_ROUNDS; r++)); do
	for k in "${KERNELS[@]}"; do
		log "icount round $r/$ICOUNT_ROUNDS: kernel-bench-$k (-icount $ICOUNT)"
		boot "$k" "$out/boot-$k-icount-r$r.log" "$ICOUNT_CMDLINE" -icount "$ICOUNT"
	done
done
stage "$ICOUNT_ROUNDS icount rounds" "$t"

dirty=$(git -C "$ALLOCTAG_ROOT" status --porcelain 2>/dev/null | wc -l)
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "command=scripts/bench.sh (BENCH_ROUNDS=$ROUNDS BENCH_ICOUNT_ROUNDS=$ICOUNT_ROUNDS BENCH_PASSES=$PASSES BENCH_KERNELS=\"${KERNELS[*]#big-}\" BENCH_BIG=${BENCH_BIG:-0} BENCH_FAULT=${BENCH_FAULT:-0} BENCH_CAPTURE=${BENCH_CAPTURE:-0} BENCH_PGFLAGS=${BENCH_PGFLAGS:-0} BENCH_NODE=${BENCH_NODE:-0} BENCH_TAGS=$BENCH_TAGS BENCH_QUERY_REPS=${BENCH_QUERY_REPS:-20} BENCH_CPUS=${BENCH_CPUS:-0})"
	echo "commit=$(git -C "$ALLOCTAG_ROOT" rev-parse --short HEAD 2>/dev/null) ($dirty files changed)"
	echo "host=$(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	echo "qemu=$(qemu-system-x86_64 --version | head -1), -accel tcg,thread=single -cpu max ${SMP[*]} -m 2G"
	echo "kernel=Linux $(make -s -C "$SRC_TREE" kernelversion), tinyconfig + bench-common.config${EXTRA_FRAGMENTS[0]:+ + ${EXTRA_FRAGMENTS[0]##*/}}"
	echo "kernels=${KERNELS[*]}"
	echo "cmdline=$TCG_CMDLINE"
	echo "icount_cmdline=$ICOUNT_CMDLINE"
	echo "rounds=$ROUNDS"
	echo "passes=$PASSES"
	echo "icount=$ICOUNT"
	echo "icount_rounds=$ICOUNT_ROUNDS"
} >"$out/run.env"

if [ "${BENCH_FAULT:-0}" = 1 ]; then
	python3 "$ALLOCTAG_ROOT/scripts/bench/report.py" --fault "$out" "$BUILD_DIR" >"$out/results.md"
elif [ "${BENCH_CAPTURE:-0}" = 1 ]; then
	python3 "$ALLOCTAG_ROOT/scripts/bench/report.py" --capture "$out" "$BUILD_DIR" >"$out/results.md"
elif [ "${BENCH_PGFLAGS:-0}" = 1 ]; then
	python3 "$ALLOCTAG_ROOT/scripts/bench/report.py" --pgflags "$out" "$BUILD_DIR" >"$out/results.md"
elif [ "${BENCH_NODE:-0}" = 1 ]; then
	python3 "$ALLOCTAG_ROOT/scripts/bench/report.py" --node "$out" "$BUILD_DIR" >"$out/results.md"
else
	BENCH_PREFIX=$PREFIX python3 "$ALLOCTAG_ROOT/scripts/bench/report.py" "$out" "$BUILD_DIR" >"$out/results.md"
fi
cat "$out/results.md"
echo
echo "Total runtime: $(($(date +%s) - t_start)) s ($(printf '%s; ' "${stage_times[@]}"))"
