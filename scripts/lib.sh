# SPDX-License-Identifier: GPL-2.0
#
# Shared settings for the build, boot and test scripts. Source it, do not run it.

ALLOCTAG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${ALLOCTAG_BUILD_DIR:-$ALLOCTAG_ROOT/build}
SRC_TREE=$BUILD_DIR/linux
JOBS=${JOBS:-$(nproc)}

# The kernel must be built with Debian's rustc (it ships the matching
# library sources); the rustup toolchain on PATH would mismatch crate versions.
kernel_env() {
	export PATH=/usr/bin:$PATH
	export LIBCLANG_PATH=/usr/lib/llvm-19/lib
	BINDGEN=${BINDGEN:-${CARGO_HOME:-$HOME/.cargo}/bin/bindgen}
	KMAKE_OPTS=(LLVM=-19 RUSTC=/usr/bin/rustc HOSTRUSTC=/usr/bin/rustc
		BINDGEN="$BINDGEN" RUST_LIB_SRC=/usr/lib/rustlib/src/rust/library)
}

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
