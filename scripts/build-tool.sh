#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the userspace tool allocinfo as a static binary for the guest.
#
# The binary of an earlier build is deleted first: when this build fails,
# scripts/mkinitramfs.sh finds no tool to pack instead of an old one, and the
# guest tests of the tool fail (they need /bin/allocinfo) rather than test
# what an earlier tree built.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -f "$ALLOCTAG_ROOT/Cargo.toml" ] || exit 0
cd "$ALLOCTAG_ROOT"
tool=$ALLOCTAG_ROOT/target/x86_64-unknown-linux-gnu/release/allocinfo
rm -f "$tool"
RUSTFLAGS='-C target-feature=+crt-static' \
	cargo build --quiet --release -p allocinfo --target x86_64-unknown-linux-gnu
[ -x "$tool" ] || die "cargo built no $tool"
