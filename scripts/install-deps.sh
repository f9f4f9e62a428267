#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs everything the build, boot and test loop needs, idempotently:
# Debian packages (skipped when all are present) and bindgen-cli from
# crates.io (skipped when a new enough bindgen is installed). With
# --packages, also what scripts/package.sh needs.
set -euo pipefail

PACKAGES=(
	rustc-web rust-web-src rust-web-clippy rustfmt-web
	clang-19 lld-19 llvm-19 libclang-19-dev
	flex bison bc libelf-dev libssl-dev cpio xz-utils make
	qemu-system-x86 busybox-static linux-source-6.12
	python3
	gcc libc6-dev # static guest test tools (scripts/mkinitramfs.sh)
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

if ((${#missing[@]})); then
	echo "install-deps: installing ${missing[*]}"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
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
