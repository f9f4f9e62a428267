# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of /proc/allocinfo's ioctls, mainline's ABI (magic 0xA6,
# include/uapi/linux/alloc_tag.h), through tests/guest/tools/allocinfo_ioctl.c.
# Sourced by run.sh; each test_* function runs in a subshell under set -e.
#
# The ioctl's output is compared with the text by allocinfo-check
# (crates/allocinfo-check, on the tested parser of crates/allocinfo-format;
# without /bin/allocinfo-check every comparison fails). The ioctls return
# names cut to their last 63 characters (mainline's allocinfo_str()), so the
# text's names are cut the same way before they are compared, and the
# dump's are taken as written. Counters move between two reads of a busy
# kernel: the tag lists (names, lines, order) are compared exactly; the
# numbers exactly only with the counters frozen (test_rw_*) or for the tags
# whose numbers did not move across the reads (ioctl_snap reads the text
# before and after, in the same process as the dump).

IOCTL=allocinfo_ioctl
IOCTL_TEST_MODULE=/lib/modules/alloctag_test.ko
IOCTL_RUST_SAMPLE=/lib/modules/alloctag_rust_sample.ko
IOCTL_U64_MAX=18446744073709551615

# Runs the tool's dump (or another listing command, $1) with the remaining
# arguments into file $2; fails on its failure.
ioctl_dump_to() {
	_io_cmd=$1 _io_out=$2
	shift 2
	if ! "$IOCTL" "$_io_cmd" "$@" >"$_io_out" 2>/tmp/io-err; then
		head -n 20 /tmp/io-err
		fail "$IOCTL $_io_cmd $* failed"
		return 1
	fi
}

# ioctl_snap [FILTER...]: the text (less its header) into /tmp/io-t1, the
# dump with FILTER into /tmp/io-d and the text again into /tmp/io-t2, read by
# one process between two equal content ids (no module came or went
# meanwhile): a reader's own memory (its page tables, its pages, its
# seq_file) counts the same in all three. Like ioctl_dump_to, it returns at
# a failure also where set -e is off.
ioctl_snap() {
	if ! "$IOCTL" snapshot /tmp/io-t1 /tmp/io-d /tmp/io-t2 "$@" 2>/tmp/io-err; then
		head -n 20 /tmp/io-err
		fail "$IOCTL snapshot $* failed"
		return 1
	fi
}

# ioctl_expect [--at-least N | --exactly N] FILTER...
# Fails unless the dump with FILTER lists exactly the tags of the text, in
# order, that FILTER selects with mainline's meaning (allocinfo-check tags:
# whole names, "" the built-in module, the line in 64 bits, bytes as
# unsigned), and, if asked, at least or exactly N of them. Compares the tag
# info, not the numbers.
ioctl_expect() {
	_io_n=
	case "$1" in --at-least | --exactly) _io_n="$1 $2" && shift 2 ;; esac
	ioctl_snap "$@" || return 1
	# shellcheck disable=SC2086 # _io_n is an option and its value, or nothing
	_io_got=$(allocinfo-check tags /tmp/io-t1 /tmp/io-d $_io_n "$@") ||
		fail "filter $* lists other tags than the text" || return 1
	echo "filter $*: $_io_got"
}

# ioctl_expect_none FILTER...: the dump with FILTER lists no tag.
# ioctl_expect_no_loaded MODULE: the module filter finds no tag of loaded
# code (an earlier test's leak=1 instance stays listed, marked unloaded).
ioctl_expect_no_loaded() {
	ioctl_dump_to dump /tmp/io-d --module "$1" || return 1
	grep -v ' unloaded:yes $' /tmp/io-d >/tmp/io-loaded || true
	allocinfo-check count /tmp/io-loaded --exactly 0 >/dev/null ||
		fail "filter --module $1 lists loaded code's tags: $(head -n 5 /tmp/io-loaded)"
}

ioctl_expect_none() {
	ioctl_dump_to dump /tmp/io-d "$@" || return 1
	allocinfo-check count /tmp/io-d --exactly 0 >/dev/null || {
		head -n 5 /tmp/io-d
		fail "filter $* lists tags"
		return 1
	}
	echo "filter $*: none"
}

# ioctl_expect_sizes FILTER...
# ioctl_expect for filters on bytes: compares only the tags whose numbers
# were the same in both reads of the text (a tag that moved may rightly be
# in or out; allocinfo-check stable-tags); the ioctl tool itself checks that
# each tag it got has its bytes in range. Tries 3 times, as a tag can move
# and come back between the reads.
ioctl_expect_sizes() {
	for _io_try in 1 2 3; do
		if ioctl_snap "$@" >/tmp/io-sz 2>&1 &&
			allocinfo-check stable-tags /tmp/io-t1 /tmp/io-d /tmp/io-t2 "$@" >>/tmp/io-sz 2>&1; then
			echo "filter $*: $(cat /tmp/io-sz)"
			return 0
		fi
		echo "try $_io_try:"
		cat /tmp/io-sz
	done
	fail "size filter $* disagrees with the text"
}

# The FILE:LINE of the first tag of the text of function $1 (names cut).
ioctl_site_of() {
	allocinfo-check site "$PROC_ALLOCINFO" "$1"
}

test_ioctl_lists_every_tag_in_text_order() {
	ioctl_snap
	# (Built-in code must have an empty modname, which the dump prints as
	# no [module]: the text's lines without one. The comparison of the
	# tags, modules included, checks it.)
	allocinfo-check tags /tmp/io-t1 /tmp/io-d --at-least 501 ||
		fail "GET_AT(0) + GET_NEXT lists other tags than the text (or 500 or fewer)"
	# GET_NEXT alone from a fresh fd, and the kselftest's retry loop, list the same.
	ioctl_dump_to next-dump /tmp/io-n
	allocinfo-check tags /tmp/io-t1 /tmp/io-n || fail "GET_NEXT alone lists other tags than the text"
	ioctl_dump_to retry-dump /tmp/io-r
	allocinfo-check tags /tmp/io-t1 /tmp/io-r || fail "retry-dump lists other tags than the text"
}

test_ioctl_counters_match_text() {
	# Busy tags move between the reads: the tags whose numbers held still
	# across both reads of the text must have those numbers in the dump.
	# (allocinfo-check counters: more than half must have held still.)
	for try in 1 2 3 4 5; do
		ioctl_snap
		# A tag can move and come back between the reads (equal in both
		# texts, not in the dump), and a busy moment leaves few tags still:
		# either way, read again.
		if why=$(allocinfo-check counters /tmp/io-t1 /tmp/io-d /tmp/io-t2 2>&1); then
			echo "try $try: $why"
			return 0
		fi
		echo "try $try: $why"
	done
	fail "in each of 5 tries: $why"
}

test_rw_ioctl_equals_frozen_text() {
	# Profiling off: no counter moves, so the dump is the text line for line,
	# to the byte where no name was cut.
	restore_sysctl_on_exit
	set_sysctl 0
	counters_frozen || fail "counters move with profiling off"
	cat "$PROC_ALLOCINFO" >/tmp/io-ft
	"$IOCTL" dump >/tmp/io-fd || fail "dump failed"
	"$IOCTL" next-dump >/tmp/io-fn || fail "next-dump failed"
	set_sysctl 1
	# Record for record, and byte for byte where no name is cut.
	allocinfo-check frozen /tmp/io-ft /tmp/io-fd || fail "the frozen dump differs from the text"
	cmp /tmp/io-fd /tmp/io-fn || fail "GET_NEXT alone differs from GET_AT + GET_NEXT"
}

test_ioctl_function_filter() {
	ioctl_expect --at-least 1 --function alloc_slab_page
	# The function with the most tags, and one with a single tag.
	f=$(allocinfo-check pick commonest-function "$PROC_ALLOCINFO")
	ioctl_expect --at-least 2 --function "$f"
	f=$(allocinfo-check pick lone-function "$PROC_ALLOCINFO")
	ioctl_expect --exactly 1 --function "$f"
	# Whole names only, case and all: no prefix, no substring, no other case.
	ioctl_expect_none --function alloc_slab
	ioctl_expect_none --function lloc_slab_page
	ioctl_expect_none --function ALLOC_SLAB_PAGE
	ioctl_expect_none --function ""
}

test_ioctl_file_filter() {
	ioctl_expect --at-least 1 --file mm/slub.c
	f=$(allocinfo-check pick commonest-file "$PROC_ALLOCINFO")
	ioctl_expect --at-least 2 --file "$f"
	ioctl_expect_none --file mm/slub
	ioctl_expect_none --file slub.c
}

test_ioctl_line_filter() {
	site=$(ioctl_site_of alloc_slab_page)
	l=${site##*:}
	ioctl_expect --at-least 1 --line "$l"
	allocinfo-check count /tmp/io-d --file "${site%:*}" --line "$l" --module "" \
		--function alloc_slab_page --at-least 1 || fail "$site not found by its line"
	ioctl_expect_none --line 0
	# 64 bits compared: 2^32 + line is no line (not cut to 32 bits).
	ioctl_expect_none --line $((4294967296 + l))
	ioctl_expect --at-least 1 --file "${site%:*}" --line "$l"
}

test_ioctl_module_filter_and_content_id() {
	id0=$("$IOCTL" content-id)
	for _ in 1 2 3; do /bin/true; done
	[ "$("$IOCTL" content-id)" = "$id0" ] || fail "the content id moved with no module load"
	ioctl_expect_no_loaded alloctag_test
	insmod "$IOCTL_TEST_MODULE"
	trap 'rmmod alloctag_test 2>/dev/null || true' EXIT
	id1=$("$IOCTL" content-id)
	[ "$id1" != "$id0" ] || fail "insmod left the content id at $id0"
	ioctl_expect --at-least 3 --module alloctag_test
	ioctl_expect --at-least 1 --module alloctag_test --function alloctag_test_init
	# An empty modname selects built-in code: NULL modname in the kernel.
	ioctl_expect --at-least 1 --module ""
	ioctl_expect_none --module alloctag_tes
	ioctl_expect_none --module "[alloctag_test]"
	ioctl_expect --at-least 1 --module "" --file mm/slub.c
	ioctl_expect_none --module alloctag_test --file mm/slub.c
	rmmod alloctag_test
	trap - EXIT
	id2=$("$IOCTL" content-id)
	[ "$id2" != "$id1" ] || fail "rmmod left the content id at $id1"
	# Not back to id0: a walk across a load and an unload must see a change.
	[ "$id2" != "$id0" ] || fail "load + unload brought the content id back to $id0"
	ioctl_expect_no_loaded alloctag_test
	echo "content ids: $id0 $id1 $id2"
}

test_ioctl_rust_module_filter() {
	[ -e "$IOCTL_RUST_SAMPLE" ] || fail "no $IOCTL_RUST_SAMPLE"
	id0=$("$IOCTL" content-id)
	insmod "$IOCTL_RUST_SAMPLE"
	trap 'rmmod alloctag_rust_sample 2>/dev/null || true' EXIT
	[ "$("$IOCTL" content-id)" != "$id0" ] || fail "insmod left the content id"
	ioctl_expect --exactly 6 --module alloctag_rust_sample \
		--function alloctag_rust_sample::RustSample::allocate ||
		fail "not the sample's 6 call sites"
	rmmod alloctag_rust_sample
	trap - EXIT
	ioctl_expect_none --module alloctag_rust_sample
}

test_ioctl_size_filters() {
	ioctl_expect_sizes --max 0
	ioctl_expect_sizes --min 4096
	ioctl_expect_sizes --min 1 --max 65536
	# Unsigned: a sum the text shows negative is above 2^63; 2^64-1 keeps all.
	ioctl_expect_sizes --min 9223372036854775808
	ioctl_expect_sizes --max "$IOCTL_U64_MAX"
	# A tag's own size finds it: a tag that held still across two reads, the
	# last such with bytes (boot-time ones hold still); again if it moved.
	# The dump by size is a snapshot too: the tag may be the reader's own
	# (the text's seq_file), live only while a process reads the text.
	for try in 1 2 3; do
		ioctl_snap
		one=$(allocinfo-check held-size /tmp/io-t1 /tmp/io-t2)
		b=${one%% *} site=${one#* }
		ioctl_snap --min "$b" --max "$b"
		allocinfo-check count /tmp/io-d --file "${site%:*}" --line "${site##*:}" --at-least 1 >/dev/null && break
		[ "$try" != 3 ] || fail "$site not found by its size $b"
	done
	echo "$site found by its size $b among $(allocinfo-check count /tmp/io-d) tags"
}

test_ioctl_combined_filters() {
	site=$(ioctl_site_of alloc_slab_page)
	ioctl_expect --at-least 1 --function alloc_slab_page --file mm/slub.c
	ioctl_expect --at-least 1 --function alloc_slab_page --line "${site##*:}"
	ioctl_expect_none --function alloc_slab_page --file mm/page_alloc.c
	ioctl_expect --at-least 1 --function alloc_slab_page --module ""
	# Every filter at once, each letting the tag through: exactly that tag.
	ioctl_expect --exactly 1 --function alloc_slab_page --file "${site%:*}" --line "${site##*:}" \
		--module "" --inaccurate 0 --min 0 --max "$IOCTL_U64_MAX" || fail "not exactly the one tag"
	# One of them failing it: nothing.
	ioctl_expect_none --function alloc_slab_page --file "${site%:*}" --line "${site##*:}" --module x
	ioctl_expect_sizes --file mm/slub.c --min 1
	ioctl_expect_sizes --module "" --max 0
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
	allocinfo-check count /tmp/io-acc --module alloctag_test --function cache_object \
		--inaccurate 1 --exactly 1 >/dev/null ||
		fail "alloctag_test's cache_object is not marked inaccurate in the dump"
	ioctl_dump_to dump /tmp/io-a1 --inaccurate 1
	n1=$(allocinfo-check tags /tmp/io-acc /tmp/io-a1 --inaccurate 1) ||
		fail "inaccurate 1 does not list the inaccurate tags"
	ioctl_dump_to dump /tmp/io-a0 --inaccurate 0
	n0=$(allocinfo-check tags /tmp/io-acc /tmp/io-a0 --inaccurate 0) ||
		fail "inaccurate 0 does not list the accurate tags"
	ioctl_dump_to dump /tmp/io-a2 --inaccurate 2
	allocinfo-check tags /tmp/io-acc /tmp/io-a2 --inaccurate 1 >/dev/null ||
		fail "inaccurate 2 is not inaccurate 1"
	echo "inaccurate: $n1, accurate: $n0"
	# The text marks the same tags in mainline's version 2.0
	# (allocinfo.version=2.0: the version-2 boot runs this test), and none
	# in 6.12's 1.0, which stays byte for byte.
	cat "$PROC_ALLOCINFO" >/tmp/io-acct
	if ioctl_text_is_v2; then
		allocinfo-check tags --both /tmp/io-acct /tmp/io-acc --inaccurate 1 --at-least 1 ||
			fail "the text (version 2.0) marks other tags inaccurate"
	else
		allocinfo-check count /tmp/io-acct --inaccurate 1 --exactly 0 >/dev/null ||
			fail "the text (version 1.0) marks tags"
	fi
	rmmod alloctag_test
}

# Tags with a file or function name over 63 characters (up to 3 of them):
# the ioctl returns its last 63 characters, and those, not the whole name
# nor a shorter end of it, find the tag as a filter. Module names are at
# most 55 characters (MODULE_NAME_LEN), never cut.
ioctl_find_long_names() {
	allocinfo-check long-names "$PROC_ALLOCINFO" >/tmp/io-long
	echo "$(wc -l </tmp/io-long) tags with a name over 63 characters"
}

# cut_name_finds function|file NAME CUT FILE LINE: the tag at FILE:LINE (as
# the ioctl gives the file) has a name NAME over 63 characters, which the
# ioctl gives as CUT: its last 63 characters, which find the tag as a
# filter, where NAME and a shorter end of it find none.
cut_name_finds() {
	[ ${#3} = 63 ] || fail "$1 cut to ${#3} characters: $3" || return 1
	ioctl_expect --at-least 1 "--$1" "$3" || return 1
	allocinfo-check count /tmp/io-d --file "$4" --line "$5" --at-least 1 >/dev/null ||
		fail "the cut $1 $3 does not find the tag" || return 1
	ioctl_expect_none "--$1" "$2" || return 1
	ioctl_expect_none "--$1" "${3#?}"
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
			cut_name_finds function "$fn" "$cfn" "$cfile" "$line" || return 1
		fi
		if [ ${#file} -gt 63 ]; then
			cut_name_finds file "$file" "$cfile" "$cfile" "$line" || return 1
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
	allocinfo-check count "$PROC_ALLOCINFO" --file "$IOCTL_LONG_FILE" --module alloctag_test \
		--function "$IOCTL_LONG_FUNC" --exactly 1 >/dev/null ||
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
	"$IOCTL" dump >/tmp/io-after || fail "dump failed"
	cat "$PROC_ALLOCINFO" >/tmp/io-text-after
	allocinfo-check tags /tmp/io-text-after /tmp/io-after || fail "the tags differ after the bad inputs"
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
	echo "$(allocinfo-check count /tmp/io-in) inaccurate tags:"
	head -n 10 /tmp/io-in
	allocinfo-check count /tmp/io-in --module alloctag_test --function cache_object --exactly 1 >/dev/null ||
		fail "alloctag_test's cache_object is not marked inaccurate"
	# The text of version 1.0 shows no marks: the whole dump, which does, is
	# what the filtered dumps are compared with.
	"$IOCTL" dump >/tmp/io-all || fail "dump failed"
	ioctl_dump_to dump /tmp/io-d --module alloctag_test --function cache_object --inaccurate 1
	allocinfo-check tags /tmp/io-all /tmp/io-d --module alloctag_test --function cache_object \
		--inaccurate 1 --exactly 1 || fail "the filter does not find the inaccurate cache_object"
	ioctl_expect_none --module alloctag_test --function cache_object --inaccurate 0
	# The whole dump marks (accurate 0) exactly what inaccurate 1 lists,
	# and inaccurate 0 lists exactly the others.
	allocinfo-check tags /tmp/io-all /tmp/io-in --inaccurate 1 ||
		fail "inaccurate 1 does not list the tags marked inaccurate"
	ioctl_dump_to dump /tmp/io-ac --inaccurate 0
	allocinfo-check tags /tmp/io-all /tmp/io-ac --inaccurate 0 ||
		fail "inaccurate 0 does not list the tags not marked inaccurate"
	# The inject boot's text is version 1.0: no marks there (the version-2
	# boot checks the marks through test_ioctl_accuracy_filter).
	ioctl_text_is_v2 && fail "the inject boot has allocinfo.version=2.0"
	cat "$PROC_ALLOCINFO" >/tmp/io-text
	allocinfo-check count /tmp/io-text --inaccurate 1 --exactly 0 >/dev/null ||
		fail "the text (version 1.0) marks tags inaccurate"
	rmmod alloctag_test
}
