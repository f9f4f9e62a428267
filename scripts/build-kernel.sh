#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds a kernel from the grafted tree into $BUILD_DIR/kernel-NAME, from
# tinyconfig plus the fragment scripts/configs/NAME.config, for x86_64 or,
# when NAME starts with arm64, for arm64 (kernel_arch in lib.sh). The build
# directory is kept, so a second run rebuilds only what changed. The source
# tree is $SRC_TREE (lib.sh), or KERNEL_TREE when set (scripts/build-matrix.sh
# builds arm64 from another tree on request).
#
# Usage: scripts/build-kernel.sh NAME [extra config fragment ...]
# KERNEL_CONFIG=BASE builds kernel-NAME from scripts/configs/BASE.config
# instead (scripts/bench.sh: the same kernels with more fragments, built
# beside them).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kernel_env

name=${1:?config name}
shift
out=$BUILD_DIR/kernel-$name
frag=$ALLOCTAG_ROOT/scripts/configs/${KERNEL_CONFIG:-$name}.config
arch=$(kernel_arch "$name")
tree=${KERNEL_TREE:-$SRC_TREE}
mkdir -p "$out"
# Builds in $out alone, and reads $tree while nothing rewrites it (lib.sh).
tree_lock -x "$out"
tree_lock -s "$tree"
kernel_compiler "$name"
kmake() { make -s -C "$tree" O="$out" ARCH="$arch" "${KMAKE_OPTS[@]}" "$@"; }

# What the configuration is made from: the fragments, the tree's Kconfig
# files and tinyconfig's fragments, the toolchain that Kconfig probes, the
# make options. tinyconfig and olddefconfig take about 35 s (their compiler
# probes) where the build after them is a no-op, and the test command builds
# every kernel twice (in the background, then in its check): the
# configuration is made again only when one of these changed, or .config is
# not the one made last.
config_inputs() {
	printf '%s\n' "$arch" "$tree" "${KMAKE_OPTS[*]}"
	cat "$frag" "$@"
	(cd "$tree" && find -L . -path ./.git -prune -o -type f \( -name 'Kconfig*' \
		-o -path './kernel/configs/*' -o -path './arch/*/configs/*' \) -print0 |
		sort -z | xargs -0 sha256sum)
	clang-19 --version
	ld.lld-19 --version
	# The GCC that Kconfig probes where kernel_compiler chose it.
	case " ${KMAKE_OPTS[*]} " in *" CC=gcc-12 "*) gcc-12 --version ;; esac
	/usr/bin/rustc -vV
	"$BINDGEN" --version
}
stamp=$(config_inputs "$@" | sha256sum | cut -d' ' -f1)
if [ ! -f "$out/.config" ] ||
	[ "$(cat "$out/.config-stamp" 2>/dev/null)" != "$stamp $(sha256sum <"$out/.config")" ]; then
	rm -f "$out/.config-stamp"
	kmake tinyconfig >/dev/null
	cat "$frag" "$@" >>"$out/.config"
	kmake olddefconfig >/dev/null 2>&1
	made_config=1
fi

# A fragment option that Kconfig dropped (a missing dependency) is a bug here;
# one that a later fragment sets again (bench-cpus.config's NR_CPUS) is not.
fragments=("$frag" "$@")
for ((i = 0; i < ${#fragments[@]}; i++)); do
	# (A fragment of "is not set" lines only, bench-numanone.config, has none.)
	{ grep -E '^CONFIG_[A-Z0-9_]+=' "${fragments[$i]}" || true; } | while IFS= read -r line; do
		opt=${line%%=*}
		for later in "${fragments[@]:$((i + 1))}"; do
			if grep -Eq "^($opt=|# $opt is not set)" "$later"; then continue 2; fi
		done
		grep -qx "$line" "$out/.config" || die "$name: $line did not stick in .config"
	done
done

[ -z "${made_config:-}" ] || echo "$stamp $(sha256sum <"$out/.config")" >"$out/.config-stamp"

log "building kernel-$name ($(make -s -C "$tree" kernelversion))"
kmake -j"$JOBS" all
