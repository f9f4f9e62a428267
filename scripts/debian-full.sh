#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's own amd64 configuration (linux-config-6.12's
# config.amd64_none_amd64), changed only as the README tells a Debian user
# (RUST, MEM_ALLOC_PROFILING), built with Debian's compiler (gcc-12) from the
# grafted tree, and booted in QEMU: the smoke checks (scripts/guest/smoke.sh)
# and a stated set of Debian's own modules (DISTRO_MODULES below), each
# loaded with every tag of its alloc_tags section listed, then unloaded.
#
# Beside the README's two lines it changes only what a build outside
# Debian's packaging must: the certificate files Debian's source package
# carries (SYSTEM_TRUSTED_KEYS, SYSTEM_REVOCATION_KEYS: empty) and the test
# modules the smoke checks load (ALLOCTAG_TEST_MODULE=m). It prints every
# difference olddefconfig made to Debian's configuration (scripts/diffconfig).
#
# It builds the kernel image and only the stated modules (make's single .ko
# targets), not Debian's 4,000: an hour on 2 cores from nothing. It
# is not part of the test command; its last result is in
# Documentation/testing.rst ("Debian's own configuration").
#
# Usage: scripts/debian-full.sh [build|boot|all] (default all)
set -euo pipefail
# A failure inside $(...) stops the script too.
shopt -s inherit_errexit
. "$(dirname "$0")/lib.sh"
kernel_env

what=${1:-all}
case "$what" in build | boot | all) ;; *) die "usage: $0 [build|boot|all]" ;; esac
name=debian-full
out=$BUILD_DIR/kernel-$name
logs=$BUILD_DIR/debian-full-logs
debconf=/usr/src/linux-config-6.12/config.amd64_none_amd64.xz
kernel_compiler "$name" # GCC, as Debian builds
mkdir -p "$out" "$logs"
# boot builds nothing: it holds neither.
if [ "$what" != boot ]; then
	tree_lock -x "$out"
	tree_lock -s "$SRC_TREE"
fi
kmake() { make -s -C "$SRC_TREE" O="$out" ARCH=x86_64 "${KMAKE_OPTS[@]}" "$@"; }

# Debian's modules the guest loads, in load order, each after the modules
# it depends on (checked below from its .modinfo): a block driver, the
# device mapper, ext4 with its journal, XFS, nf_tables and KVM.
DISTRO_MODULES=(
	drivers/block/loop.ko
	drivers/md/dm-mod.ko
	lib/crc16.ko
	fs/mbcache.ko
	fs/jbd2/jbd2.ko
	fs/ext4/ext4.ko
	crypto/crc32c_generic.ko # libcrc32c's softdep: its init asks the crypto API for crc32c
	lib/libcrc32c.ko
	fs/xfs/xfs.ko
	net/netfilter/nfnetlink.ko
	net/netfilter/nf_tables.ko
	virt/lib/irqbypass.ko
	arch/x86/kvm/kvm.ko
)
TEST_MODULES=(lib/alloctag/tests/modules/{alloctag_test,alloctag_rust_sample,alloctag_rust_plain}.ko)

# A .modinfo field of module $1: one value per line.
modinfo_field() {
	local tmp
	tmp=$(mktemp)
	llvm-objcopy-19 -O binary --only-section=.modinfo "$1" "$tmp"
	tr '\0' '\n' <"$tmp" | sed -n "s/^$2=//p"
	rm -f "$tmp"
}

# The size in bytes of section $2 of ELF file $1; 0 without one.
section_size() {
	local hex
	hex=$(llvm-readelf-19 -S -W "$1" | sed 's/^ *\[ *[0-9]*\] *//' | awk -v s="$2" '$1 == s { print $5 }')
	echo $((16#${hex:-0}))
}

configure() {
	[ -f "$debconf" ] || die "no $debconf: apt-get install linux-config-6.12"
	xzcat "$debconf" >"$out/debian.config"
	cp "$out/debian.config" "$out/.config"
	"$SRC_TREE/scripts/config" --file "$out/.config" \
		--enable RUST --enable MEM_ALLOC_PROFILING \
		--module ALLOCTAG_TEST_MODULE \
		--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS ""
	kmake olddefconfig
	# What the build was asked for, and what Debian's configuration keeps.
	local opt
	for opt in CONFIG_RUST CONFIG_MEM_ALLOC_PROFILING CONFIG_MEM_ALLOC_PROFILING_RUST CONFIG_CC_IS_GCC \
		CONFIG_MODVERSIONS CONFIG_DEBUG_INFO_BTF CONFIG_MODULE_SIG; do
		has_config "$opt" y "$out/.config" || die "$opt is not set in $out/.config after olddefconfig"
	done
	has_config CONFIG_ALLOCTAG_TEST_MODULE m "$out/.config" || die "CONFIG_ALLOCTAG_TEST_MODULE is not m after olddefconfig"
	"$SRC_TREE/scripts/diffconfig" "$out/debian.config" "$out/.config" >"$logs/diffconfig.txt"
	log "debian-full: $(wc -l <"$logs/diffconfig.txt") options differ from Debian's ($logs/diffconfig.txt)"
}

build() {
	local t0=$SECONDS
	configure
	log "debian-full: building the image into $out ($(make -s -C "$SRC_TREE" kernelversion), ${KMAKE_OPTS[*]})"
	# Appended: a later, incremental run does not hide the first build's
	# warnings.
	echo "== $(date -u '+%F %T') build" >>"$logs/build.log"
	kmake -j"$JOBS" bzImage >>"$logs/build.log" 2>&1 || die "bzImage failed ($logs/build.log)"
	log "debian-full: image built in $((SECONDS - t0)) s; the modules"
	kmake -j"$JOBS" "${DISTRO_MODULES[@]}" "${TEST_MODULES[@]}" >>"$logs/build.log" 2>&1 ||
		die "the modules failed ($logs/build.log)"
	log "debian-full: built in $((SECONDS - t0)) s"
	# No warning, as Debian builds it (the compilers', rustc's, modpost's).
	if grep -iE '(^|[^a-z])warning(\[[A-Za-z0-9_]+\])?:' "$logs/build.log" >"$logs/warnings.txt"; then
		die "$(wc -l <"$logs/warnings.txt") warning lines in the build ($logs/warnings.txt)"
	fi
}

boot() {
	local m dep deps file size entry t0 crc_args why names=" " console=$logs/console.log
	[ -f "$out/arch/x86/boot/bzImage" ] || die "no $out/arch/x86/boot/bzImage: $0 build"
	# One tag's size, from the kernel's own debug information.
	entry=$(pahole -C alloc_tag "$out/vmlinux" | sed -n 's/.*size: \([0-9]*\),.*/\1/p')
	[ -n "$entry" ] || die "pahole found no struct alloc_tag in $out/vmlinux"
	# Each stated module's dependencies come before it.
	for m in "${DISTRO_MODULES[@]}"; do
		deps=$(modinfo_field "$out/$m" depends)
		for dep in ${deps//,/ }; do
			[[ $names == *" $dep "* ]] || die "$m depends on $dep, which DISTRO_MODULES does not load before it"
		done
		names+="$(modinfo_field "$out/$m" name) "
	done
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT # stage is global: the trap runs after boot returns
	mkdir -p "$stage/lib/modules/distro"
	for m in "${DISTRO_MODULES[@]}"; do
		file=${m##*/}
		file=${file%.ko}
		size=$(section_size "$out/$m" alloc_tags)
		cp "$out/$m" "$stage/lib/modules/distro/"
		echo "$file $((size / entry))" >>"$stage/lib/modules/distro/order"
	done
	# MODVERSIONS' checks, as the matrix's debian boot makes them: a C and a
	# Rust module with a changed CRC refused, a Rust module of another
	# release loaded, an out-of-tree C module built against the headers.
	"$ALLOCTAG_ROOT/scripts/build-extmod.sh" "$name" >"$logs/boot.log" 2>&1 ||
		die "the out-of-tree module did not build against the headers ($logs/boot.log)"
	crc_args=$(crc_smoke_args "$out") || die "no CRC to change in the test modules"
	"$ALLOCTAG_ROOT/scripts/mkinitramfs.sh" "$out" "$out/initramfs.cpio.gz" >>"$logs/boot.log" 2>&1 ||
		die "mkinitramfs.sh failed ($logs/boot.log)"
	# The kernel unpacks initramfs archives one after the other.
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >>"$out/initramfs.cpio.gz"
	# printk.time=0: Debian's PRINTK_TIME would put a time before the lines
	# the host reads (run-qemu.sh, the guest's verdict).
	log "debian-full: booting it (smoke checks, then $(wc -l <"$stage/lib/modules/distro/order") of Debian's modules)"
	t0=$SECONDS
	# shellcheck disable=SC2086 # crc_args: words to split
	QEMU_TIMEOUT=${QEMU_TIMEOUT:-900} "$ALLOCTAG_ROOT/scripts/run-qemu.sh" "$out/arch/x86/boot/bzImage" \
		"$out/initramfs.cpio.gz" "$console" alloctag_run=smoke sysctl.vm.mem_profiling=1,compressed alloctag.waste_slots=on printk.time=0 \
		$crc_args >>"$logs/boot.log" 2>&1 || die "boot failed ($console, $logs/boot.log)"
	why=$(crc_smoke_missing "$console") || die "$why"
	printf 'debian-full: booted in %s s, %s smoke checks ok\n' $((SECONDS - t0)) "$(grep -c '^smoke: ok' "$console")"
	grep -E '^smoke: (kernel|cpus|[0-9]+ tags|distro|page_tags)' "$console" || true
}

case "$what" in
build) build ;;
boot) boot ;;
all)
	build
	boot
	;;
esac
