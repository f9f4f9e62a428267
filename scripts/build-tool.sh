#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds the userspace tools for the guest as static binaries: allocinfo,
# allocinfo-check, the guest tests' read checkers (crates/allocinfo-check),
# and allocinfo-fuzz, the fuzzer of tests/guest/fuzz.sh (crates/allocinfo-fuzz).
#
# The binaries of an earlier build are deleted first: when a build fails,
# scripts/mkinitramfs.sh finds no tool to pack instead of an old one, and
# the guest tests that need it fail (they need /bin/allocinfo or
# /bin/allocinfo-check) rather than test what an earlier tree built. Each
# tool is built on its own, so that one failing leaves the other built, and
# allocinfo-check gets only its own crates' features (a smaller binary).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -f "$ALLOCTAG_ROOT/Cargo.toml" ] || exit 0
cd "$ALLOCTAG_ROOT"
release=$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release
tools=(allocinfo allocinfo-check allocinfo-fuzz)
for t in "${tools[@]}"; do
	rm -f "$release/$t"
done
rc=0
for t in "${tools[@]}"; do
	if ! RUSTFLAGS='-C target-feature=+crt-static' \
		cargo build --quiet --release -p "$t" --target x86_64-unknown-linux-gnu; then
		log "building $t failed"
		rc=1
	elif [ ! -x "$release/$t" ]; then
		log "cargo built no $release/$t"
		rc=1
	fi
done
exit $rc
