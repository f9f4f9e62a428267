# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# shellcheck disable=SC2016 # awk programs and conditions, in single quotes
#
# In-guest tests of /proc/allocinfo's ioctls, mainline's ABI (magic 0xA6,
# include/uapi/linux/alloc_tag.h), through tests/guest/tools/allocinfo_ioctl.c.
# Sourced by run.sh; each test_* function runs in a subshell under set -e.
#
# The ioctls return names cut to their last 63 characters (mainline's
# allocinfo_str()), so the text is compared after cutting its names the same
# way (ioctl_norm). Counters move between two reads of a busy kernel: the tag
# lists (names, lines, order) are compared exactly; the numbers exactly only
# with the counters frozen (test_rw_*) or for the tags whose numbers did not
# move across the reads (ioctl_snap reads the text before and after, in the
# same process as the dump).

IOCTL=allocinfo_ioctl
IOCTL_TEST_MODULE=/lib/modules/alloctag_test.ko
IOCTL_RUST_SAMPLE=/lib/modules/alloctag_rust_sample.ko
IOCTL_U64_MAX=18446744073709551615

# Normalizes allocinfo lines on stdin (the text less its header, or the
# tool's dump) to "BYTES CALLS FILE:LINE [MODULE] func:NAME", single-spaced,
# each name cut to its last 63 characters, [] for built-in code, without
# mainline's " accurate:no". A line of another shape comes out "unparsed: ...".
ioctl_norm() {
	awk '
	function cut63(s) { return length(s) > 63 ? substr(s, length(s) - 62) : s }
	{
		if (!match($0, /^ *-?[0-9]+ +[0-9]+ /)) { print "unparsed: " $0; next }
		rest = substr($0, RLENGTH + 1)
		sub(/ accurate:no $/, " ", rest)
		k = split(rest, w, " ")
		mod = ""
		if (k == 3 && w[2] ~ /^\[.*\]$/)
			mod = substr(w[2], 2, length(w[2]) - 2)
		else if (k != 2) { print "unparsed: " $0; next }
		if (w[k] !~ /^func:/ || !match(w[1], /:[0-9]+$/)) { print "unparsed: " $0; next }
		file = substr(w[1], 1, RSTART - 1)
		line = substr(w[1], RSTART + 1)
		fn = substr(w[k], 6)
		print $1, $2, cut63(file) ":" line, "[" cut63(mod) "]", "func:" cut63(fn)
	}'
}

# The tag info (FILE:LINE [MODULE] func:NAME) of normalized file $1.
ioctl_info() {
	cut -d' ' -f3- "$1"
}

# Runs the tool's dump (or another listing command, $1) with the remaining
# arguments into /tmp/io-raw, normalized into file $2; fails on its failure.
ioctl_dump_to() {
	_io_cmd=$1 _io_out=$2
	shift 2
	if ! "$IOCTL" "$_io_cmd" "$@" >/tmp/io-raw 2>/tmp/io-err; then
		head -n 20 /tmp/io-err
		fail "$IOCTL $_io_cmd $* failed"
		return 1
	fi
	ioctl_norm </tmp/io-raw >"$_io_out" || return 1
	if grep '^unparsed' "$_io_out"; then
		fail "$IOCTL $_io_cmd printed lines of another shape"
		return 1
	fi
}

# ioctl_snap [FILTER...]: the text into /tmp/io-t1, the dump with FILTER
# into /tmp/io-d (both normalized) and the text again (ioctl_snap_t2), read by
# one process between two equal content ids (no module came or went
# meanwhile): a reader's own memory (its page tables, its pages, its
# seq_file) counts the same in all three. Like ioctl_dump_to, it returns at
# a failure also where set -e is off.
ioctl_snap() {
	if ! "$IOCTL" snapshot /tmp/io-r1 /tmp/io-rd /tmp/io-r2 "$@" 2>/tmp/io-err; then
		head -n 20 /tmp/io-err
		fail "$IOCTL snapshot $* failed"
		return 1
	fi
	ioctl_norm </tmp/io-r1 >/tmp/io-t1 || return 1
	ioctl_norm </tmp/io-rd >/tmp/io-d || return 1
	if grep -h '^unparsed' /tmp/io-t1 /tmp/io-d; then
		fail "lines of another shape"
		return 1
	fi
}

# Normalizes ioctl_snap's second read of the text into /tmp/io-t2.
ioctl_snap_t2() {
	ioctl_norm </tmp/io-r2 >/tmp/io-t2 || return 1
	if grep '^unparsed' /tmp/io-t2; then
		fail "lines of another shape"
		return 1
	fi
}

# Fails unless files $1 (expected) and $2 (got) are equal; shows how not.
ioctl_same() {
	cmp -s "$1" "$2" && return 0
	echo "expected $(wc -l <"$1") lines, got $(wc -l <"$2"):"
	diff "$1" "$2" | head -n 20 || true
	fail "${3:-they differ}"
}

# ioctl_expect AWK_CONDITION [NAME=VALUE...] -- FILTER...
# Fails unless the dump with FILTER lists exactly the tags of the text, in
# order, whose normalized line satisfies AWK_CONDITION ($1 bytes, $2 calls,
# $3 FILE:LINE, $4 [MODULE], $5 func:NAME; NAME=VALUE become awk variables;
# line(s) is the line number of $3). Compares the tag info, not the numbers.
ioctl_expect() {
	_io_cond=$1
	shift
	_io_vars=
	while [ "$1" != -- ]; do
		_io_vars="$_io_vars -v $1"
		shift
	done
	shift
	if [ "$_io_cond" = 0 ]; then
		# Nothing expected: the text is not needed.
		ioctl_dump_to dump /tmp/io-d "$@"
		[ ! -s /tmp/io-d ] || { head -n 5 /tmp/io-d; fail "filter $* lists tags"; }
		echo "filter $*: none"
		return 0
	fi
	ioctl_snap "$@"
	set -f
	# shellcheck disable=SC2086 # vars are -v NAME=VALUE words
	awk $_io_vars "function line(s) { sub(/.*:/, \"\", s); return s } $_io_cond" /tmp/io-t1 >/tmp/io-e
	set +f
	ioctl_info /tmp/io-e >/tmp/io-ei
	ioctl_info /tmp/io-d >/tmp/io-di
	ioctl_same /tmp/io-ei /tmp/io-di "filter $* lists other tags than the text"
	echo "filter $*: $(wc -l </tmp/io-di) tags"
}

# ioctl_expect_sizes AWK_CONDITION [NAME=VALUE...] -- FILTER...
# ioctl_expect for filters on bytes: compares only the tags whose numbers
# were the same in both reads of the text (a tag that moved may rightly be
# in or out); the tool itself checks that each tag it got has its bytes in
# range. Tries 3 times, as a tag can move and come back between the reads.
ioctl_expect_sizes() {
	for _io_try in 1 2 3; do
		if (ioctl_expect_sizes_once "$@") >/tmp/io-sz 2>&1; then
			cat /tmp/io-sz
			return 0
		fi
		echo "try $_io_try:"
		cat /tmp/io-sz
	done
	fail "size filter $* disagrees with the text"
}

# Runs in a condition, where set -e does not apply: every step checks.
ioctl_expect_sizes_once() {
	_io_cond=$1
	shift
	_io_vars=
	while [ "$1" != -- ]; do
		_io_vars="$_io_vars -v $1"
		shift
	done
	shift
	ioctl_snap "$@" || return 1
	ioctl_snap_t2 || return 1
	# Tags whose line is the same in both reads: their bytes held still.
	awk 'NR == FNR { a[FNR] = $0; next } a[FNR] == $0 { print }' /tmp/io-t1 /tmp/io-t2 >/tmp/io-stable || return 1
	[ "$(wc -l </tmp/io-stable)" -gt "$(($(wc -l </tmp/io-t1) / 2))" ] ||
		fail "fewer than half the tags held still" || return 1
	set -f
	# shellcheck disable=SC2086
	awk $_io_vars "$_io_cond" /tmp/io-stable >/tmp/io-e1 || return 1
	set +f
	cut -d' ' -f3- /tmp/io-e1 >/tmp/io-e || return 1
	# The tags got that held still, in the order got.
	awk 'NR == FNR { s[$3 " " $4 " " $5] = 1; next } s[$3 " " $4 " " $5] { print $3, $4, $5 }' \
		/tmp/io-stable /tmp/io-d >/tmp/io-g || return 1
	ioctl_same /tmp/io-e /tmp/io-g "filter $* lists other tags than the text" || return 1
	echo "filter $*: $(wc -l </tmp/io-d) tags, $(wc -l </tmp/io-g) of them still"
}

# The FILE:LINE of the first tag of the text of function $1 (normalized).
ioctl_site_of() {
	tail -n +3 "$PROC_ALLOCINFO" | ioctl_norm | awk -v f="func:$1" '$5 == f { print $3; exit }'
}

test_ioctl_lists_every_tag_in_text_order() {
	ioctl_snap
	n=$(wc -l </tmp/io-t1)
	echo "$n tags"
	[ "$n" -gt 500 ] || fail "only $n tags in the text"
	ioctl_info /tmp/io-t1 >/tmp/io-ti
	ioctl_info /tmp/io-d >/tmp/io-di
	ioctl_same /tmp/io-ti /tmp/io-di "GET_AT(0) + GET_NEXT lists other tags than the text"
	# GET_NEXT alone from a fresh fd, and the kselftest's retry loop, list the same.
	ioctl_dump_to next-dump /tmp/io-n
	ioctl_info /tmp/io-n >/tmp/io-ni
	ioctl_same /tmp/io-ti /tmp/io-ni "GET_NEXT alone lists other tags than the text"
	ioctl_dump_to retry-dump /tmp/io-r
	ioctl_info /tmp/io-r >/tmp/io-ri
	ioctl_same /tmp/io-ti /tmp/io-ri "retry-dump lists other tags than the text"
	# Built-in code has an empty modname: the text's lines without [module].
	[ "$(grep -c ' \[\] func:' /tmp/io-d)" = "$(tail -n +3 "$PROC_ALLOCINFO" | grep -vc ' \[[^]]*\] func:')" ] ||
		fail "built-in tags do not have an empty modname"
}

test_ioctl_counters_match_text() {
	# Busy tags move between the reads: the tags whose numbers held still
	# across both reads of the text must have those numbers in the dump.
	for try in 1 2 3 4 5; do
		ioctl_snap
		ioctl_snap_t2
		awk 'FNR == 1 { f++ } f == 1 { a[FNR] = $0 } f == 2 { b[FNR] = $0 }
			f == 3 && a[FNR] == $0 { still++; if (b[FNR] != $0) { bad++; if (bad <= 5) print "text: " $0 "\nioctl: " b[FNR] } }
			END { print still + 0, bad + 0 > "/tmp/io-counts" }' /tmp/io-t1 /tmp/io-d /tmp/io-t2 >/tmp/io-bad
		read -r still bad </tmp/io-counts
		echo "try $try: $still of $(wc -l </tmp/io-t1) tags held still, $bad differ"
		cat /tmp/io-bad
		# A tag can move and come back between the reads (equal in both
		# texts, not in the dump), and a busy moment leaves few tags still:
		# either way, read again.
		if [ "$still" -gt "$(($(wc -l </tmp/io-t1) / 2))" ]; then
			[ "$bad" = 0 ] && return 0
			why="the ioctl's counters differ from the text's"
		else
			why="fewer than half the tags held still"
		fi
	done
	fail "$why, in each of 5 tries"
}

test_rw_ioctl_equals_frozen_text() {
	# Profiling off: no counter moves, so the dump is the text line for line,
	# to the byte where no name was cut.
	restore_sysctl_on_exit
	set_sysctl 0
	counters_frozen || fail "counters move with profiling off"
	tail -n +3 "$PROC_ALLOCINFO" >/tmp/io-ft
	"$IOCTL" dump >/tmp/io-fd || fail "dump failed"
	"$IOCTL" next-dump >/tmp/io-fn || fail "next-dump failed"
	set_sysctl 1
	ioctl_norm </tmp/io-ft >/tmp/io-ftn
	ioctl_norm </tmp/io-fd >/tmp/io-fdn
	ioctl_same /tmp/io-ftn /tmp/io-fdn "the frozen dump differs from the text"
	cmp /tmp/io-fd /tmp/io-fn || fail "GET_NEXT alone differs from GET_AT + GET_NEXT"
	awk 'function long(l,   w, k, i, s) {
			k = split(l, w, " ")
			for (i = 3; i <= k; i++) {
				s = w[i]
				sub(/^func:/, "", s); sub(/:[0-9]+$/, "", s)
				if (length(s) > 63) return 1
			}
			return 0
		}
		{ sub(/ accurate:no $/, " ") }
		NR == FNR { t[FNR] = $0; next }
		!long(t[FNR]) { n++; if (t[FNR] != $0) { print "text:  \"" t[FNR] "\"\nioctl: \"" $0 "\""; exit 1 } }
		END { print n " lines equal to the byte" }' /tmp/io-ft /tmp/io-fd
}

test_ioctl_function_filter() {
	ioctl_expect '$5 == "func:" f' f=alloc_slab_page -- --function alloc_slab_page
	[ -s /tmp/io-d ] || fail "no alloc_slab_page tag"
	# The function with the most tags, and one with a single tag.
	f=$(tail -n +3 "$PROC_ALLOCINFO" | ioctl_norm | awk '{ print $5 }' | sort | uniq -c | sort -n | tail -n 1 | awk '{ print substr($2, 6) }')
	ioctl_expect '$5 == "func:" f' f="$f" -- --function "$f"
	[ "$(wc -l </tmp/io-d)" -ge 2 ] || fail "the commonest function has one tag"
	f=$(tail -n +3 "$PROC_ALLOCINFO" | ioctl_norm | awk '{ print $5 }' | sort | uniq -c | awk '$1 == 1 { print substr($2, 6); exit }')
	ioctl_expect '$5 == "func:" f' f="$f" -- --function "$f"
	[ "$(wc -l </tmp/io-d)" = 1 ] || fail "not one tag for $f"
	# Whole names only, case and all: no prefix, no substring, no other case.
	ioctl_expect '0' -- --function alloc_slab
	ioctl_expect '0' -- --function lloc_slab_page
	ioctl_expect '0' -- --function ALLOC_SLAB_PAGE
	ioctl_expect '0' -- --function ""
}

test_ioctl_file_filter() {
	ioctl_expect '$3 ~ "^mm/slub\\.c:"' -- --file mm/slub.c
	[ -s /tmp/io-d ] || fail "no mm/slub.c tag"
	f=$(tail -n +3 "$PROC_ALLOCINFO" | ioctl_norm | awk '{ sub(/:[0-9]+$/, "", $3); print $3 }' | sort | uniq -c | sort -n | tail -n 1 | awk '{ print $2 }')
	ioctl_expect 'substr($3, 1, length(f) + 1) == f ":"' f="$f" -- --file "$f"
	ioctl_expect '0' -- --file mm/slub
	ioctl_expect '0' -- --file slub.c
}

test_ioctl_line_filter() {
	site=$(ioctl_site_of alloc_slab_page)
	l=${site##*:}
	ioctl_expect 'line($3) == l' l="$l" -- --line "$l"
	grep -q " $site \[\] func:alloc_slab_page\$" /tmp/io-d || fail "$site not found by its line"
	ioctl_expect '0' -- --line 0
	# 64 bits compared: 2^32 + line is no line (not cut to 32 bits).
	ioctl_expect '0' -- --line $((4294967296 + l))
	ioctl_expect '$3 == s' s="$site" -- --file "${site%:*}" --line "$l"
}

test_ioctl_module_filter_and_content_id() {
	id0=$("$IOCTL" content-id)
	for _ in 1 2 3; do /bin/true; done
	[ "$("$IOCTL" content-id)" = "$id0" ] || fail "the content id moved with no module load"
	ioctl_expect '0' -- --module alloctag_test
	insmod "$IOCTL_TEST_MODULE"
	trap 'rmmod alloctag_test 2>/dev/null || true' EXIT
	id1=$("$IOCTL" content-id)
	[ "$id1" != "$id0" ] || fail "insmod left the content id at $id0"
	ioctl_expect '$4 == "[alloctag_test]"' -- --module alloctag_test
	[ "$(wc -l </tmp/io-d)" -ge 3 ] || fail "fewer than 3 tags of alloctag_test"
	ioctl_expect '$4 == "[alloctag_test]" && $5 == "func:alloctag_test_init"' -- \
		--module alloctag_test --function alloctag_test_init
	[ -s /tmp/io-d ] || fail "no alloctag_test_init tag"
	# An empty modname selects built-in code: NULL modname in the kernel.
	ioctl_expect '$4 == "[]"' -- --module ""
	ioctl_expect '0' -- --module alloctag_tes
	ioctl_expect '0' -- --module "[alloctag_test]"
	ioctl_expect '$4 == "[]" && $3 ~ "^mm/slub\\.c:"' -- --module "" --file mm/slub.c
	ioctl_expect '0' -- --module alloctag_test --file mm/slub.c
	rmmod alloctag_test
	trap - EXIT
	id2=$("$IOCTL" content-id)
	[ "$id2" != "$id1" ] || fail "rmmod left the content id at $id1"
	# Not back to id0: a walk across a load and an unload must see a change.
	[ "$id2" != "$id0" ] || fail "load + unload brought the content id back to $id0"
	ioctl_expect '0' -- --module alloctag_test
	echo "content ids: $id0 $id1 $id2"
}

test_ioctl_rust_module_filter() {
	[ -e "$IOCTL_RUST_SAMPLE" ] || fail "no $IOCTL_RUST_SAMPLE"
	id0=$("$IOCTL" content-id)
	insmod "$IOCTL_RUST_SAMPLE"
	trap 'rmmod alloctag_rust_sample 2>/dev/null || true' EXIT
	[ "$("$IOCTL" content-id)" != "$id0" ] || fail "insmod left the content id"
	ioctl_expect '$4 == "[alloctag_rust_sample]" && $5 == "func:" f' \
		f=alloctag_rust_sample::RustSample::allocate -- \
		--module alloctag_rust_sample --function alloctag_rust_sample::RustSample::allocate
	[ "$(wc -l </tmp/io-d)" = 6 ] || fail "not the sample's 6 call sites"
	rmmod alloctag_rust_sample
	trap - EXIT
	ioctl_expect '0' -- --module alloctag_rust_sample
}

test_ioctl_size_filters() {
	ioctl_expect_sizes '$1 >= 0 && $1 <= 0' -- --max 0
	ioctl_expect_sizes '$1 < 0 || $1 >= 4096' -- --min 4096
	ioctl_expect_sizes '$1 >= 1 && $1 <= 65536' -- --min 1 --max 65536
	# Unsigned: a sum the text shows negative is above 2^63; 2^64-1 keeps all.
	ioctl_expect_sizes '$1 < 0' -- --min 9223372036854775808
	ioctl_expect_sizes '1' -- --max "$IOCTL_U64_MAX"
	# A tag's own size finds it: a tag that held still across two reads, the
	# last such with bytes (boot-time ones hold still); again if it moved.
	for try in 1 2 3; do
		ioctl_snap
		ioctl_snap_t2
		awk 'NR == FNR { a[FNR] = $0; next } a[FNR] == $0 && $1 > 0 { one = $0 } END { print one }' \
			/tmp/io-t1 /tmp/io-t2 >/tmp/io-one
		read -r b _ site _ </tmp/io-one || true
		[ -n "$b" ] || fail "no tag with bytes held still"
		ioctl_dump_to dump /tmp/io-b --min "$b" --max "$b"
		grep -qF " $site " /tmp/io-b && break
		[ "$try" != 3 ] || fail "$site not found by its size $b"
	done
	echo "$site found by its size $b among $(wc -l </tmp/io-b) tags"
}

test_ioctl_combined_filters() {
	site=$(ioctl_site_of alloc_slab_page)
	ioctl_expect '$5 == "func:alloc_slab_page" && $3 ~ "^mm/slub\\.c:"' -- \
		--function alloc_slab_page --file mm/slub.c
	ioctl_expect '$3 == s && $5 == "func:alloc_slab_page"' s="$site" -- \
		--function alloc_slab_page --line "${site##*:}"
	ioctl_expect '0' -- --function alloc_slab_page --file mm/page_alloc.c
	ioctl_expect '$5 == "func:alloc_slab_page" && $4 == "[]"' -- --function alloc_slab_page --module ""
	# Every filter at once, each letting the tag through: exactly that tag.
	ioctl_expect '$3 == s && $5 == "func:alloc_slab_page"' s="$site" -- \
		--function alloc_slab_page --file "${site%:*}" --line "${site##*:}" --module "" \
		--inaccurate 0 --min 0 --max "$IOCTL_U64_MAX"
	[ "$(wc -l </tmp/io-d)" = 1 ] || fail "not exactly the one tag"
	# One of them failing it: nothing.
	ioctl_expect '0' -- --function alloc_slab_page --file "${site%:*}" --line "${site##*:}" --module x
	ioctl_expect_sizes '($1 < 0 || $1 >= 1) && $3 ~ "^mm/slub\\.c:"' -- --file mm/slub.c --min 1
	ioctl_expect_sizes '$1 == 0 && $4 == "[]"' -- --module "" --max 0
}

# Makes alloctag_test's cache_object tag inaccurate: alloctag_test cache=1
# allocates one object from a slab cache of its own, whose first slab is
# new; with every slab extension vector allocation failing
# (alloc_slab_obj_exts's call site armed, per-call-site fault injection),
# that slab gets none, the object goes uncounted, and its tag is marked
# inaccurate, as mainline marks it (mm/slub.c). The module stays loaded (the
# caller unloads it) and no rule stays armed.
ioctl_make_inaccurate_tag() {
	_io_ctl=/sys/kernel/debug/alloctag/fail
	[ -e "$_io_ctl" ] || mount -t debugfs none /sys/kernel/debug
	[ -w "$_io_ctl" ] || fail "no $_io_ctl" || return 1
	echo clear >"$_io_ctl"
	echo "add func:alloc_slab_obj_exts times=1000 verbose=0" >"$_io_ctl" ||
		fail "arming alloc_slab_obj_exts refused" || return 1
	if ! insmod "$IOCTL_TEST_MODULE" cache=1; then
		echo clear >"$_io_ctl"
		fail "insmod cache=1 failed"
		return 1
	fi
	echo clear >"$_io_ctl"
}

# Succeeds when this boot has /proc/allocinfo in mainline's version 2.0.
ioctl_text_is_v2() {
	grep -qw 'allocinfo.version=2.0' /proc/cmdline
}

test_ioctl_accuracy_filter() {
	# An inaccurate tag to find: without one, the filter's "inaccurate 1"
	# and the text's marks would be two empty lists, equal by default.
	trap 'echo clear >/sys/kernel/debug/alloctag/fail 2>/dev/null; rmmod alloctag_test 2>/dev/null || true' EXIT
	ioctl_make_inaccurate_tag
	# The dump marks a tag whose counter.accurate is 0 with " accurate:no".
	"$IOCTL" dump >/tmp/io-acc || fail "dump failed"
	grep ' accurate:no $' /tmp/io-acc | ioctl_norm | cut -d' ' -f3- >/tmp/io-acc1
	grep -v ' accurate:no $' /tmp/io-acc | ioctl_norm | cut -d' ' -f3- >/tmp/io-acc0
	grep -q ' \[alloctag_test\] func:cache_object$' /tmp/io-acc1 ||
		fail "alloctag_test's cache_object is not marked inaccurate in the dump"
	ioctl_dump_to dump /tmp/io-a1 --inaccurate 1
	ioctl_info /tmp/io-a1 >/tmp/io-a1i
	ioctl_same /tmp/io-acc1 /tmp/io-a1i "inaccurate 1 does not list the inaccurate tags"
	ioctl_dump_to dump /tmp/io-a0 --inaccurate 0
	ioctl_info /tmp/io-a0 >/tmp/io-a0i
	ioctl_same /tmp/io-acc0 /tmp/io-a0i "inaccurate 0 does not list the accurate tags"
	ioctl_dump_to dump /tmp/io-a2 --inaccurate 2
	ioctl_info /tmp/io-a2 >/tmp/io-a2i
	ioctl_same /tmp/io-acc1 /tmp/io-a2i "inaccurate 2 is not inaccurate 1"
	echo "$(wc -l </tmp/io-acc1) inaccurate tags, $(wc -l </tmp/io-acc0) accurate"
	# The text marks the same tags in mainline's version 2.0
	# (allocinfo.version=2.0: the version-2 boot runs this test), and none
	# in 6.12's 1.0, which stays byte for byte.
	grep ' accurate:no $' "$PROC_ALLOCINFO" | ioctl_norm | cut -d' ' -f3- >/tmp/io-acct
	if ioctl_text_is_v2; then
		ioctl_same /tmp/io-acc1 /tmp/io-acct "the text (version 2.0) marks other tags inaccurate"
	else
		[ ! -s /tmp/io-acct ] || fail "the text (version 1.0) marks tags: $(head -n 3 /tmp/io-acct)"
	fi
	rmmod alloctag_test
}

# Tags with a file or function name over 63 characters (up to 3 of them):
# the ioctl returns its last 63 characters, and those, not the whole name
# nor a shorter end of it, find the tag as a filter. Module names are at
# most 55 characters (MODULE_NAME_LEN), never cut.
ioctl_find_long_names() {
	tail -n +3 "$PROC_ALLOCINFO" | awk '
	function cut63(s) { return length(s) > 63 ? substr(s, length(s) - 62) : s }
	{
		fn = $NF
		if (fn == "accurate:no")
			fn = $(NF - 1)
		sub(/^func:/, "", fn)
		file = $3
		line = $3
		sub(/:[0-9]+$/, "", file)
		sub(/.*:/, "", line)
		if (length(file) > 63 || length(fn) > 63)
			print cut63(file), line, cut63(fn), file, fn
	}' >/tmp/io-long
	echo "$(wc -l </tmp/io-long) tags with a name over 63 characters"
}

ioctl_check_long_names() {
	ioctl_find_long_names
	[ -s /tmp/io-long ] || fail "no tag with a name over 63 characters" || return 1
	# The first 3, and every tag of alloctag_test (its long-named site).
	{
		head -n 3 /tmp/io-long
		grep -F 'alloctag_test' /tmp/io-long
	} | sort -u >/tmp/io-long3
	: >/tmp/io-checked-long
	while read -r cfile line cfn file fn <&3; do
		echo "$file:$line func:$fn" | tee -a /tmp/io-checked-long
		if [ ${#fn} -gt 63 ]; then
			[ ${#cfn} = 63 ] || fail "function cut to ${#cfn} characters: $cfn"
			ioctl_expect '$5 == "func:" f' f="$cfn" -- --function "$cfn"
			grep -qF " $cfile:$line " /tmp/io-d || fail "the cut name $cfn does not find the tag"
			ioctl_expect '0' -- --function "$fn"
			ioctl_expect '0' -- --function "${cfn#?}"
		fi
		if [ ${#file} -gt 63 ]; then
			[ ${#cfile} = 63 ] || fail "file cut to ${#cfile} characters: $cfile"
			ioctl_expect 'substr($3, 1, length(f) + 1) == f ":"' f="$cfile" -- --file "$cfile"
			grep -qF " $cfile:$line " /tmp/io-d || fail "the cut file $cfile does not find the tag"
			ioctl_expect '0' -- --file "$file"
			ioctl_expect '0' -- --file "${cfile#?}"
		fi
	done 3</tmp/io-long3
}

# The test module's call site with a function name (66 characters) and a
# file name (86, through a #line) over 63: tests/modules/alloctag_test.c.
IOCTL_LONG_FUNC=alloctag_test_function_with_a_name_longer_than_the_ioctls_63_bytes
IOCTL_LONG_FILE=lib/alloctag/tests/modules/alloctag_test_long_file_name_past_the_allocinfo_ioctls_63.c

test_ioctl_long_names() {
	insmod "$IOCTL_TEST_MODULE" longname=1 || fail "insmod longname=1 failed"
	trap 'rmmod alloctag_test 2>/dev/null || true' EXIT
	grep -q " $IOCTL_LONG_FILE:[0-9]* \[alloctag_test\] func:$IOCTL_LONG_FUNC \$" "$PROC_ALLOCINFO" ||
		fail "no long-named site of alloctag_test in $PROC_ALLOCINFO"
	ioctl_check_long_names
	# Both of its names were checked, each cut to its last 63 characters.
	grep -q "^$IOCTL_LONG_FILE:[0-9]* func:$IOCTL_LONG_FUNC\$" /tmp/io-checked-long ||
		fail "alloctag_test's long names were not checked"
	rmmod alloctag_test
}

test_ro_ioctl_long_names_present() {
	# The test kernel has its KUnit suites built in, whose Rust call sites
	# have long paths (alloctag::tests::callsite::callsite_tag_names_...):
	# test_ioctl_long_names tests the cut names on at least one tag there.
	ioctl_find_long_names
	head -n 3 /tmp/io-long
	[ -s /tmp/io-long ] || fail "no tag with a name over 63 characters to test"
}

test_ioctl_bad_input_and_state() {
	# Every bad input, the iterator state across failed calls, and mainline's
	# exact results where a call fails late (tests/guest/tools/allocinfo_ioctl.c).
	"$IOCTL" check-errors >/tmp/io-check 2>&1 || {
		grep -v '^ok' /tmp/io-check
		fail "$(grep -c '^not ok' /tmp/io-check) checks failed"
	}
	echo "$(grep -c '^ok' /tmp/io-check) checks passed"
	# And the file still lists every tag afterwards.
	"$IOCTL" dump | ioctl_norm | cut -d' ' -f3- >/tmp/io-after
	tail -n +3 "$PROC_ALLOCINFO" | ioctl_norm | cut -d' ' -f3- >/tmp/io-text-after
	ioctl_same /tmp/io-text-after /tmp/io-after "the tags differ after the bad inputs"
}

test_ioctl_bad_input_writes_no_kernel_report() {
	dmesg -c >/dev/null
	"$IOCTL" check-errors >/dev/null 2>&1 || true
	log=$(dmesg)
	if echo "$log" | grep -E 'BUG:|WARNING:|Oops|Call Trace|cut here|KASAN|UBSAN|circular locking|general protection|allocinfo|alloc_tag|alloctag|ioctl'; then
		echo "dmesg after the bad inputs:"
		echo "$log" | tail -n 20
		fail "the bad inputs wrote to the kernel log"
	fi
}

test_inject_ioctl_inaccurate_tags() {
	# The inaccurate tag of ioctl_make_inaccurate_tag (alloctag_test's
	# cache_object): the ioctl's inaccurate filter must list exactly the
	# tags whose accurate is 0.
	trap 'echo clear >/sys/kernel/debug/alloctag/fail 2>/dev/null; rmmod alloctag_test 2>/dev/null || true' EXIT
	ioctl_make_inaccurate_tag
	ioctl_dump_to dump /tmp/io-in --inaccurate 1
	echo "$(wc -l </tmp/io-in) inaccurate tags:"
	head -n 10 /tmp/io-in
	grep -q ' \[alloctag_test\] func:cache_object$' /tmp/io-in ||
		fail "alloctag_test's cache_object is not marked inaccurate"
	ioctl_expect '$5 == "func:cache_object"' -- --module alloctag_test --function cache_object --inaccurate 1
	ioctl_expect '0' -- --module alloctag_test --function cache_object --inaccurate 0
	# The whole dump marks (accurate 0) exactly what inaccurate 1 lists.
	"$IOCTL" dump >/tmp/io-all || fail "dump failed"
	grep ' accurate:no $' /tmp/io-all | ioctl_norm | cut -d' ' -f3- >/tmp/io-allno
	ioctl_info /tmp/io-in >/tmp/io-ini
	ioctl_same /tmp/io-allno /tmp/io-ini "inaccurate 1 does not list the tags marked inaccurate"
	ioctl_dump_to dump /tmp/io-ac --inaccurate 0
	[ $(($(wc -l </tmp/io-ac) + $(wc -l </tmp/io-in))) = "$(wc -l </tmp/io-all)" ] ||
		fail "inaccurate 0 and 1 do not make up all tags"
	# The inject boot's text is version 1.0: no marks there (the version-2
	# boot checks the marks through test_ioctl_accuracy_filter).
	ioctl_text_is_v2 && fail "the inject boot has allocinfo.version=2.0"
	if grep -q ' accurate:no $' "$PROC_ALLOCINFO"; then
		fail "the text (version 1.0) marks tags inaccurate"
	fi
	rmmod alloctag_test
}
