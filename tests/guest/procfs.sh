# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of /proc/allocinfo. Sourced by run.sh; each test_* function
# runs in a subshell with set -e. test_rw_ ones freeze the counters by
# turning profiling off, which needs a writable sysctl (nodebug kernel).

test_allocinfo_header() {
	[ "$(sed -n 1p "$PROC_ALLOCINFO")" = 'allocinfo - version: 1.0' ]
	[ "$(sed -n 2p "$PROC_ALLOCINFO")" = '#     <size>  <calls> <tag info>' ]
}

test_allocinfo_lines_match_format() {
	n=$(tail -n +3 "$PROC_ALLOCINFO" | wc -l)
	echo "$n tags"
	[ "$n" -gt 1000 ]
	# %12lli %8llu file:line [module] func:name, then one space.
	bad=$(tail -n +3 "$PROC_ALLOCINFO" |
		grep -Ev '^ *-?[0-9]{1,12} +[0-9]{1,8} [^ ]+:[0-9]+ (\[[A-Za-z0-9_]+\] )?func:[^ ]+ $' |
		head -5)
	[ -z "$bad" ] || { echo "bad lines: $bad"; return 1; }
	# The fields are right-aligned to 12 and 8 columns when they fit.
	bad=$(tail -n +3 "$PROC_ALLOCINFO" | awk 'length($1) <= 12 && substr($0, 1, 12) !~ / *-?[0-9]+$/ { print; exit }')
	[ -z "$bad" ] || { echo "misaligned: $bad"; return 1; }
}

test_allocinfo_has_core_tags() {
	grep -q ' mm/slub.c:[0-9]* func:alloc_slab_page $' "$PROC_ALLOCINFO"
	# Boot allocates pages for page_ext and the slabs: they are not zero.
	awk '$3 ~ /^mm\/slub.c:/ && $4 == "func:alloc_slab_page" && $1 > 0 { found = 1 }
		END { exit !found }' "$PROC_ALLOCINFO"
}

# Reads /proc/allocinfo whole and in chunks of several sizes, each chunk
# size straddling lines differently, into /tmp.
read_chunked() {
	cat "$PROC_ALLOCINFO" >/tmp/full
	dd if="$PROC_ALLOCINFO" of=/tmp/bs64 bs=64 2>/dev/null
	dd if="$PROC_ALLOCINFO" of=/tmp/bs512 bs=512 2>/dev/null
	dd if="$PROC_ALLOCINFO" of=/tmp/bs1000 bs=1000 2>/dev/null
}

# The tag info (file:line [module] func:name) of each line of file $1.
tag_info() {
	awk 'NR > 2 { $1 = $2 = ""; print }' "$1"
}

test_allocinfo_chunked_reads_list_the_same_tags() {
	# With profiling on the counters move between reads, but each chunked
	# read must still list every tag once, in the same order, with no line
	# torn or repeated where a read resumed.
	read_chunked
	tag_info /tmp/full >/tmp/tags-full
	[ "$(wc -l </tmp/tags-full)" -gt 1000 ]
	for bs in 64 512 1000; do
		tag_info /tmp/bs$bs >/tmp/bs$bs.tags
		cmp /tmp/tags-full /tmp/bs$bs.tags || fail "bs=$bs lists other tags"
		[ "$(head -n 2 /tmp/bs$bs)" = "$(head -n 2 /tmp/full)" ] || fail "bs=$bs header"
	done
}

test_rw_allocinfo_chunked_reads_equal_full_read() {
	# With profiling off, to the byte.
	restore_sysctl_on_exit
	set_sysctl 0
	read_chunked
	dd if="$PROC_ALLOCINFO" of=/tmp/bs1 bs=1 count=20000 2>/dev/null
	set_sysctl 1
	cmp /tmp/full /tmp/bs64
	cmp /tmp/full /tmp/bs512
	cmp /tmp/full /tmp/bs1000
	head -c 20000 /tmp/full | cmp - /tmp/bs1
}

# The way people read it: GNU sort -g and -h and numfmt, from coreutils in
# /usr/bin (named in full: busybox's shell runs its own applets first).
test_allocinfo_sorts_by_size() {
	# A copy: its numbers hold still while sort reads it.
	cp "$PROC_ALLOCINFO" /tmp/frozen
	max=$(tail -n +3 /tmp/frozen | awk '{ print $1 }' | /usr/bin/sort -n | tail -n 1)
	[ "$(/usr/bin/sort -g /tmp/frozen | tail -n 1 | awk '{ print $1 }')" = "$max" ]
	[ "$(/usr/bin/sort -h /tmp/frozen | tail -n 1 | awk '{ print $1 }')" = "$max" ]
	# As Documentation/mm/allocation-profiling.rst shows it: the header lines
	# sort first, tail leaves them out, numfmt turns sizes into IEC units.
	/usr/bin/sort -g /tmp/frozen | tail -n 20 | /usr/bin/numfmt --to=iec >/tmp/iec
	[ "$(wc -l </tmp/iec)" = 20 ]
	[ "$(grep -Ec '^ *[0-9.]+[KMG]? +[0-9]+ [^ ]+:[0-9]+ ' /tmp/iec)" = 20 ]
	tail -n 1 /tmp/iec | grep -Eq '^ *[0-9.]+[KMG] '
}

test_allocinfo_mode_0400() {
	[ "$(stat -c %a "$PROC_ALLOCINFO")" = 400 ]
}
