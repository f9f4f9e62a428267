#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs everything the build, boot and test loop needs, idempotently:
# Debian packages (skipped when all are present), bindgen-cli from
# crates.io (skipped when a new enough bindgen is installed) and the arm64
# guest's busybox (skipped when present). With --packages, also what
# scripts/package.sh needs.
set -euo pipefail

PACKAGES=(
	rustc-web rust-web-src rust-web-clippy rustfmt-web
	clang-19 lld-19 llvm-19 libclang-19-dev
	flex bison bc libelf-dev libssl-dev cpio xz-utils make
	qemu-system-x86 busybox-static linux-source-6.12
	qemu-system-arm # the build matrix's arm64 configuration (qemu-system-aarch64)
	python3
	dwarves # pahole: BTF in the build matrix's debian configuration, as Debian's
	gcc libc6-dev # static guest test tools (scripts/mkinitramfs.sh)
	golang-go # go tool pprof reads allocinfo pprof's profiles (host tests)
	prometheus # promtool check metrics reads allocinfo metrics (host tests)
)

# scripts/package.sh also needs what the kernel's bindeb-pkg builds with.
if [ "${1:-}" = --packages ]; then
	PACKAGES+=(debhelper kmod rsync)
fi

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if ((${#missing[@]})); then
	echo "install-deps: installing ${missing[*]}"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
else
	echo "install-deps: Debian packages present"
fi

# The version and where it goes: scripts/lib.sh.
. "$(dirname "$0")/lib.sh"
bindgen="$BINDGEN_ROOT/bin/bindgen"
if [ -x "$bindgen" ] && "$bindgen" --version | grep -q "$BINDGEN_VERSION"; then
	echo "install-deps: bindgen $BINDGEN_VERSION present"
else
	echo "install-deps: installing bindgen-cli $BINDGEN_VERSION"
	cargo install --locked --quiet bindgen-cli --version "$BINDGEN_VERSION" \
		--root "$BINDGEN_ROOT"
fi

# The arm64 guest's busybox (scripts/build-matrix.sh arm64), from Debian's
# busybox-static:arm64. Not installed: it would replace the amd64 busybox
# that the x86 guests use (one /bin/busybox). Its .deb is fetched and the
# binary unpacked into the build directory instead, where
# scripts/mkinitramfs.sh takes it for an arm64 kernel.
arm64_busybox=$BUILD_DIR/arm64/busybox
if [ -x "$arm64_busybox" ]; then
	echo "install-deps: arm64 busybox present"
else
	echo "install-deps: fetching busybox-static:arm64 into $arm64_busybox"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		$SUDO dpkg --add-architecture arm64
		$SUDO apt-get update -qq
	fi
	deb_dir=$(mktemp -d)
	trap 'rm -rf "$deb_dir"' EXIT
	# apt-get download saves into the current directory. Lists older than
	# the archive name a .deb that is gone: update them once and retry.
	if ! (cd "$deb_dir" && apt-get download -qq busybox-static:arm64 2>/dev/null); then
		$SUDO apt-get update -qq
		(cd "$deb_dir" && apt-get download -qq busybox-static:arm64)
	fi
	dpkg-deb -x "$deb_dir"/busybox-static_*_arm64.deb "$deb_dir/root"
	mkdir -p "$(dirname "$arm64_busybox")"
	install -m 755 "$deb_dir/root/bin/busybox" "$arm64_busybox"
fi
