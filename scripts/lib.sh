# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # the settings are for the scripts that source it
#
# Shared settings for the build, boot and test scripts. Source it, do not run it.

ALLOCTAG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Outside the checkout, so that every clone on this machine (CI's too)
# reuses the unpacked tree and the kernel builds, rebuilding only what changed.
BUILD_DIR=${ALLOCTAG_BUILD_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/alloctag}
# A link to a build directory that is gone is dropped, and a new one made.
if [ -L "$BUILD_DIR" ] && [ ! -e "$BUILD_DIR" ]; then
	rm -f "$BUILD_DIR"
fi
mkdir -p "$BUILD_DIR"
# Kbuild records absolute paths: always name the build by its real path.
BUILD_DIR=$(realpath "$BUILD_DIR")
SRC_TREE=$BUILD_DIR/linux
# Cargo's outputs there too, unless the caller names another place: a fresh
# clone's test command then builds only the workspace's own crates again,
# not their dependencies (two of a warm run's minutes otherwise).
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$BUILD_DIR/cargo-target}
JOBS=${JOBS:-$(nproc)}

# bindgen-cli, installed by scripts/install-deps.sh under a root named by its
# version, so that a new version changes Kbuild's command line and the
# bindings are made again. 0.71.1, not newer: 0.72 and 0.73 wrap a struct's
# padding in an 8-byte-aligned array, which moves every field after a padding
# that starts off an 8-byte boundary (task_struct's from se on, 64 bytes, on
# the test configuration). src/layout.rs fails the build if a field alloctag
# touches moves; this keeps the kernel crate's own accessors right too.
BINDGEN_VERSION=0.71.1
BINDGEN_ROOT=${CARGO_HOME:-$HOME/.cargo}/alloctag-bindgen-$BINDGEN_VERSION

# The kernel must be built with Debian's rustc (it ships the matching
# library sources); the rustup toolchain on PATH would mismatch crate versions.
kernel_env() {
	export PATH=/usr/bin:$PATH
	export LIBCLANG_PATH=/usr/lib/llvm-19/lib
	BINDGEN=${BINDGEN:-$BINDGEN_ROOT/bin/bindgen}
	KMAKE_OPTS=(LLVM=-19 RUSTC=/usr/bin/rustc HOSTRUSTC=/usr/bin/rustc
		BINDGEN="$BINDGEN" RUST_LIB_SRC=/usr/lib/rustlib/src/rust/library)
}

# Kernels named debian* (scripts/configs/debian.config) are built as Debian
# builds its kernels, with GCC (gcc-12, bookworm's); the Rust side as 6.12
# supports it there (bindgen reads GCC's flags). Switches KMAKE_OPTS
# (kernel_env's) to GCC for kernel $1, for it and for modules built against
# it. kernel_compiler NAME
kernel_compiler() {
	[[ $1 == debian* ]] || return 0
	local o tool gcc_opts=(CC=gcc-12 HOSTCC=gcc-12)
	for o in "${KMAKE_OPTS[@]}"; do
		[ "$o" = LLVM=-19 ] || gcc_opts+=("$o")
	done
	# Their MODVERSIONS version Rust's exports with scripts/dwarfcrc
	# (patch 16).
	tool=$(dwarfcrc_tool) || return 1
	gcc_opts+=("DWARFCRC=$tool")
	KMAKE_OPTS=("${gcc_opts[@]}")
}

# Builds scripts/dwarfcrc (CRCs of exported symbols from their DWARF) and
# prints its path.
dwarfcrc_tool() {
	(cd "$ALLOCTAG_ROOT" && cargo build --quiet --release -p dwarfcrc) >&2 ||
		die "building scripts/dwarfcrc failed"
	echo "$CARGO_TARGET_DIR/release/dwarfcrc"
}

# The architecture of the kernels built from scripts/configs/NAME.config: a
# fragment named arm64* is cross-built for arm64 (LLVM=-19 needs no gcc
# cross toolchain), any other for x86_64. kernel_arch NAME
kernel_arch() {
	case "$1" in
	arm64*) echo arm64 ;;
	*) echo x86_64 ;;
	esac
}

# Kernel reports that must never appear while our code runs, as grep -E.
KERNEL_REPORTS='(Oops|BUG:|WARNING:|Kernel panic|general protection fault|Call Trace:|INFO: possible|circular locking|inconsistent lock state|KASAN:|UBSAN:|detected stall|blocked for more than)'

log() { printf '==> %s\n' "$*" >&2; }

# Whether a .config sets an option as asked: has_config CONFIG y|m|n FILE
# (n: not set at all).
has_config() {
	if [ "$2" = n ]; then
		if grep -q "^$1=" "$3"; then return 1; fi
	else
		grep -qx "$1=$2" "$3"
	fi
}

# Prints console log $2 without the KCSAN reports that are not alloctag's
# to answer for. A report is a block from "BUG: KCSAN: data-race in A / B"
# (or "in A", a race of unknown origin) to its closing line of "=". Left
# out: a report whose racing functions a line of $1 (tests/kcsan/upstream.txt)
# starts with ("A/B" or "A"), when every other function of the line is a
# frame of its stacks and no racing function's name is alloctag's (alloctag,
# alloc_tag, codetag, pgalloc_tag, rust_helper_); and a report with no line
# that names alloctag at all (no frame of its code or of its test modules):
# a race between two of 6.12's own functions, met under the stress. Only the
# report's own lines decide: a line that is not one a KCSAN report prints is
# another CPU's (a printk, a guest program's line on the console) and is
# printed after the report, so a WARNING among them still fails the run. A
# block that never closes is printed whole, and so is one where printk says
# it dropped lines (one may have been an alloctag frame), and every report
# that is neither listed nor free of alloctag. Prints on stderr one line
# "kcsan: not alloctag's: TITLE" per report of the second kind, then
# "kcsan: N listed, M not alloctag's, left out".
kcsan_drop_listed() {
	awk -v list="$1" '
	BEGIN {
		while ((getline l < list) > 0) {
			if (l ~ /^#/ || l !~ /[^ \t]/) continue
			n++; nf[n] = split(l, f, /[ \t]+/)
			for (i = 1; i <= nf[n]; i++) fn[n, i] = f[i]
		}
	}
	function frame_in(name, k) {
		for (k = 1; k <= nb; k++)
			if (!alien[k] && blk[k] ~ ("^ *(\\? )?" name "\\+0x")) return 1
		return 0
	}
	# The lines of a KCSAN report (kernel/kcsan/report.c) and of the
	# dump_stack_print_info() it ends with.
	function report_line(l) {
		return l == "" || l ~ /^BUG: KCSAN: / ||
			l ~ /^(read|write|read-write|race at unknown origin)/ ||
			l ~ /^ *(\? )?[A-Za-z0-9_.$]+\+0x[0-9a-f]+\/0x[0-9a-f]+( \[[^]]+\])?$/ ||
			l ~ /^ *(\||\+->) / || l ~ /^ *(value|bits) changed: / ||
			l ~ /^Reported by Kernel Concurrency Sanitizer on:$/ ||
			l ~ /^(CPU: [0-9]+ UID: |Tainted: |Hardware name: |Workqueue: |Stopper: )/
	}
	function ours(i) {
		for (i = 1; i <= nb; i++)
			if (!alien[i] && blk[i] ~ /(alloctag|alloc_tag|codetag|pgalloc_tag|rust_helper_)/) return 1
		return 0
	}
	function listed(t, e, i, ok) {
		if (t !~ /^BUG: KCSAN: data-race in /) return 0
		sub(/^BUG: KCSAN: data-race in /, "", t)
		gsub(/\+0x[0-9a-f]+\/0x[0-9a-f]+/, "", t); gsub(/ \/ /, "/", t)
		if (t ~ /(alloctag|alloc_tag|codetag|pgalloc_tag|rust_helper_)/) return 0
		for (e = 1; e <= n; e++) {
			if (fn[e, 1] != t) continue
			ok = 1
			for (i = 2; i <= nf[e]; i++) if (!frame_in(fn[e, i])) ok = 0
			if (ok) return 1
		}
		return 0
	}
	# The lines of the block another CPU printed.
	function aliens(i) {
		for (i = 1; i <= nb; i++) if (alien[i]) print raw[i]
	}
	# printk dropped lines here: lines of the report, maybe an alloctag frame.
	function lost(i) {
		for (i = 1; i <= nb; i++) if (blk[i] ~ /printk messages dropped/) return 1
		return 0
	}
	function flush(closed, i) {
		if (closed && lost()) closed = 0
		if (closed && listed(title)) {
			dropped++
			aliens()
		} else if (closed && !ours()) {
			others++
			printf "kcsan: not alloctag'"'"'s: %s\n", title > "/dev/stderr"
			aliens()
		} else for (i = 1; i <= nb; i++) print raw[i]
		nb = 0; inrep = 0
	}
	{ line = $0; sub(/^\[ *[0-9]+\.[0-9]+\] /, "", line) }
	inrep && line ~ /^=+$/ { nb++; raw[nb] = $0; blk[nb] = line; alien[nb] = 0; flush(1); next }
	line ~ /^BUG: KCSAN: / { if (inrep) flush(0); inrep = 1; title = line; nb = 0 }
	inrep { nb++; raw[nb] = $0; blk[nb] = line; alien[nb] = !report_line(line); next }
	{ print }
	END {
		if (inrep) flush(0)
		printf "kcsan: %d listed, %d not alloctag'"'"'s, left out\n", dropped, others > "/dev/stderr"
	}
	' "$2"
}

# The host's TSC rate in kHz, measured by scripts/host/tsc-khz.c (built into
# the build directory); nothing where the host's TSC does not run at a
# constant rate or cannot be measured. Under TCG a guest's TSC is the host's.
host_tsc_khz() {
	local src=$ALLOCTAG_ROOT/scripts/host/tsc-khz.c tool=$BUILD_DIR/host/tsc-khz
	grep -qw constant_tsc /proc/cpuinfo 2>/dev/null || return 0
	if [ ! -x "$tool" ] || [ "$tool" -ot "$src" ]; then
		mkdir -p "$BUILD_DIR/host"
		# Built aside and renamed: boots may start side by side.
		{ clang-19 -O2 -o "$tool.$$" "$src" && mv -f "$tool.$$" "$tool"; } 2>/dev/null || return 0
	fi
	"$tool" 2>/dev/null || true
}

# Kernel command-line words that give an x86_64 guest under TCG its clock. A
# kernel without ACPI (nodebug, the test kernel, up, ccore) has no HPET or PM
# timer to calibrate the TSC against, and the PIT fails under TCG: it marks
# the TSC unstable and keeps time by jiffies, about 3.5 times slow.
# tsc_early_khz= gives it the host's rate, and tsc=reliable keeps the
# clocksource watchdog, which has no reference either, from discarding the
# TSC. Nothing where the rate is unknown: the guest falls back as before.
tcg_clock_args() {
	local khz
	khz=$(host_tsc_khz)
	[ -z "$khz" ] || echo "tsc_early_khz=$khz tsc=reliable"
}

# Kernel command-line words for every TCG guest: RCU's CPU stall timeout at
# its largest, 300 s (6.12's default is 21). One host thread runs all vCPUs
# (thread=single) while guest time follows the host's clock, so a host that
# builds kernels on both its cores can leave a vCPU unrun for tens of
# seconds: the stall report that follows is the host's, and failed a run
# (KERNEL_REPORTS). A CPU stuck for good is still reported, or the boot's
# timeout ends it; interrupts off for milliseconds were never the
# detector's to see (Documentation/testing.rst).
tcg_guest_args() {
	echo "rcupdate.rcu_cpu_stall_timeout=300"
}
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The pristine tree as a git repository, for the patch series: Debian's
# linux-source-6.12 as it unpacks, one commit tagged "base". Made once per
# tarball (about two minutes); PRISTINE_REPO names it.
PRISTINE_REPO=$BUILD_DIR/linux-pristine
LINUX_TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
pristine_repo() {
	local stamp=$PRISTINE_REPO.stamp want
	[ -f "$LINUX_TARBALL" ] || die "$LINUX_TARBALL missing: run scripts/install-deps.sh"
	want=$(stat -c '%s %Y' "$LINUX_TARBALL")
	pristine_made "$stamp" "$want" && return 0
	# Made by one run at a time (the lock held until the subshell exits);
	# another that waited for it finds it made.
	(
		set -e
		tree_lock -x "$PRISTINE_REPO"
		pristine_made "$stamp" "$want" && exit 0
		log "making the pristine repository $PRISTINE_REPO from $LINUX_TARBALL"
		rm -rf "$PRISTINE_REPO"
		unpack=$(mktemp -d "$BUILD_DIR/pristine.XXXXXX")
		tar -xJf "$LINUX_TARBALL" -C "$unpack"
		mv "$unpack/linux-source-6.12" "$PRISTINE_REPO"
		rmdir "$unpack"
		cd "$PRISTINE_REPO"
		git init -q
		git config core.autocrlf false
		# Uncompressed objects: the tree is written once and read locally,
		# and compressing 1.3 GB is most of the time the repository takes.
		git config core.compression 0
		git config core.looseCompression 0
		git add -A -f
		GIT_AUTHOR_NAME=linux-source GIT_AUTHOR_EMAIL=linux-source@localhost \
			GIT_COMMITTER_NAME=linux-source GIT_COMMITTER_EMAIL=linux-source@localhost \
			git commit -q -m "Linux $(make -s kernelversion) as Debian's linux-source-6.12 ships it"
		git tag base
		echo "$want" >"$stamp"
	)
}

# Whether the pristine repository was made from the tarball whose size and
# time are $2 (its stamp file $1). pristine_made STAMP WANT
pristine_made() {
	[ "$(cat "$1" 2>/dev/null)" = "$2" ] &&
		git -C "$PRISTINE_REPO" rev-parse -q --verify base >/dev/null 2>&1
}

# Makes $1 a checkout of the pristine tree at base with nothing else in it
# (git_worktree_reset).
pristine_worktree() {
	pristine_repo
	git_worktree_reset "$PRISTINE_REPO" "$1" base
}

# Takes directory $2 for the rest of this shell (and its children): -x alone,
# to rewrite it (a checkout's reset, a graft), or -s with others, to read it
# (a kernel build from a source tree) or to build in it. Its lock file is
# $2.lock. Every run on the machine (CI's, a session's) shares the build
# directory: a build that read a tree while it was being reset once compiled
# files as they were for a moment, and no later build redid them (the
# series' files get their old times back). Children see in
# ALLOCTAG_WORKTREES_HELD that an ancestor holds $2 alone, and do not wait
# for it. WORKTREE_LOCK_WAIT: seconds to wait for another run (default 3600,
# a fresh kernel build).
# tree_lock -x|-s DIR
tree_lock() {
	local mode=$1 dir fd
	dir=$(realpath -m "$2")
	case ":${ALLOCTAG_WORKTREES_HELD:-}:" in *":$dir:"*) return 0 ;; esac
	mkdir -p "$(dirname "$dir")"
	exec {fd}>"$dir.lock"
	if ! flock -n "$mode" "$fd"; then
		log "waiting for $dir: another run holds it ($dir.lock)"
		flock -w "${WORKTREE_LOCK_WAIT:-3600}" "$mode" "$fd" ||
			{ echo "error: $dir is in use by another run (lock $dir.lock)" >&2; return 1; }
	fi
	[ "$mode" = -s ] || export ALLOCTAG_WORKTREES_HELD=${ALLOCTAG_WORKTREES_HELD:-}:$dir
}

# Makes $2 a checkout of the repository $1 at $3 with nothing else in it: a
# worktree, made once (a full checkout) and then reset (which rewrites only
# the files that differ from $3).
#
# The checkouts live in the build directory that every run on the machine
# reuses, and a run stopped halfway (CI's timeout, a killed session) leaves
# git's lock files and a half-done git am in them. The lock on $2
# (tree_lock -x), held until this shell exits, tells those from a live run's:
# whoever holds it removes them.
git_worktree_reset() {
	local repo=$1 dir=$2 rev=$3 gitdir
	tree_lock -x "$dir" || return
	if [ "$(git -C "$dir" rev-parse --git-common-dir 2>/dev/null)" != "$repo/.git" ]; then
		rm -rf "$dir"
		git -C "$repo" worktree prune &&
			git -C "$repo" worktree add -q --detach "$dir" "$rev"
		return
	fi
	gitdir=$(git -C "$dir" rev-parse --absolute-git-dir) || return
	rm -f "$gitdir"/*.lock
	git -C "$dir" am --abort >/dev/null 2>&1 || true
	git -C "$dir" checkout -q --detach --force "$rev" &&
		git -C "$dir" clean -q -fdx
}

# A KUnit run's output (kunit.py run|exec --raw_output=all) on stdin -> the
# KTAP in it, for kunit.py parse, on stdout. kunit.py parses the console as
# it comes, and one kernel message between a suite's "KTAP version 1" and
# its "# Subtest:" line (the boot's late clocksource switch, in a CI run)
# made it lose count: it called the six passing suites after it errors and
# the run crashed. Before the first KTAP line kunit.py's own lines go to
# stderr and the boot's messages nowhere. From that line on, less its prefix
# (a printk time), an indented line is a subtest's or a failed
# expectation's and kept, and a line at column 0 is kept only when it is
# KTAP. The whole console stays in the build directory's test.log.
ktap_only() {
	awk '
	{ sub(/\r$/, "") }
	!started {
		p = index($0, "KTAP version ")
		if (!p) p = index($0, "TAP version ")
		if (p && substr($0, p) ~ /^K?TAP version [0-9]+$/) {
			started = 1
			prefix = p - 1
		} else {
			if ($0 ~ /kunit executor: /) print
			else if (!booted) print > "/dev/stderr"
			if ($0 ~ /Starting KUnit Kernel/) booted = 1
			next
		}
	}
	{ line = substr($0, prefix + 1) }
	line ~ /^[ \t]/ || line ~ /^(K?TAP version [0-9]|1\.\.[0-9]|ok |not ok |#)/ || line ~ /kunit executor: / {
		print line
		fflush()
	}'
}

# The README's command that starts with $1: the first line of one of its
# ```sh blocks that does, without its comment. The tests run what the README
# prints, so the two cannot drift apart. Fails when there is none.
readme_command() {
	awk -v w="$1" '
		/^```sh$/ { code = 1; next }
		/^```/ { code = 0 }
		code && index($0, w) == 1 { sub(/[ \t]+#.*$/, ""); print; found = 1; exit }
		END { exit !found }' "$ALLOCTAG_ROOT/README.md" ||
		die "the README gives no command starting with '$1'"
}

# Prints OFFSET:OCTAL, a byte of module $1 for smoke.sh to change
# (crc_smoke_args): in its section $2, just after the first NEEDLE $3 (the
# section's start if empty), and that byte XORed with $4, in octal. For
# __versions (struct modversion_info: an unsigned long, then the name) with
# no needle and 255: the low byte of the first CRC, complemented.
module_byte() {
	python3 - "$@" <<-'EOF'
		import struct, sys
		path, section, needle, mask = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode(), int(sys.argv[4])
		data = open(path, "rb").read()
		shoff, = struct.unpack_from("<Q", data, 0x28)
		shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
		sec = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
		names = sec[shstrndx][4]
		for s in sec:
		    name = data[names + s[0]:data.index(b"\0", names + s[0])]
		    if name != section or s[5] < 4:
		        continue
		    body = data[s[4]:s[4] + s[5]]
		    at = body.find(needle)
		    if at < 0:
		        break
		    off = s[4] + at + len(needle)
		    print(f"{off}:{mask ^ data[off]:o}")
		    sys.exit(0)
		sys.exit(f"no {sys.argv[2]} {sys.argv[3]} in {path}")
	EOF
}

# The kernel command-line words that make scripts/guest/smoke.sh try the
# CRC checks of MODVERSIONS on kernel build $1: a byte of a C symbol's CRC
# in alloctag_test.ko's __versions (smoke_crc=), one of a Rust symbol's in
# alloctag_rust_plain.ko's __version_ext_crcs (smoke_rustcrc=), and the
# first character of that module's vermagic release, 6 to 7
# (smoke_vermagic=).
crc_smoke_args() {
	local m=$1/lib/alloctag/tests/modules crc rustcrc vermagic
	crc=$(module_byte "$m/alloctag_test.ko" __versions "" 255) || return 1
	rustcrc=$(module_byte "$m/alloctag_rust_plain.ko" __version_ext_crcs "" 255) || return 1
	vermagic=$(module_byte "$m/alloctag_rust_plain.ko" .modinfo vermagic= 1) || return 1
	# Words without spaces: the caller splits them unquoted.
	echo "smoke_crc=$crc smoke_rustcrc=$rustcrc smoke_vermagic=$vermagic"
}

# Prints why, and fails, when console $1 lacks a verdict of the CRC checks
# (crc_smoke_args) or of the out-of-tree module's load.
crc_smoke_missing() {
	local want
	for want in 'a module with a changed CRC is refused' \
		'a Rust module with a changed CRC of a Rust symbol is refused' \
		'a Rust module built for another release loads: its CRCs agree' \
		'rmmod alloctag_extmod'; do
		grep -qx "smoke: ok - $want" "$1" || {
			echo "no 'smoke: ok - $want' in $1"
			return 1
		}
	done
}
