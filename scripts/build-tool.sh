#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the userspace tool allocinfo as a static binary for the guest.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -f "$ALLOCTAG_ROOT/Cargo.toml" ] || exit 0
cd "$ALLOCTAG_ROOT"
RUSTFLAGS='-C target-feature=+crt-static' \
	cargo build --quiet --release -p allocinfo --target x86_64-unknown-linux-gnu
