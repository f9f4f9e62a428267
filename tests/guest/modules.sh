# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of module load and unload. Sourced by run.sh.

TEST_MODULE=/lib/modules/alloctag_test.ko

HOLDER_MODULE=/lib/modules/alloctag_holder.ko
HOLDER_RELEASE=/sys/module/alloctag_holder/parameters/release

MANY_MODULE=/lib/modules/alloctag_many_tags.ko

# A module of 5,000 call sites: 80,000 bytes of counters, more than one
# per-CPU allocation (32 KiB) and than the per-CPU module reserve (64 KiB),
# so with 6.12's static per-CPU counters its load failed with a warning from
# mm/percpu.c. Its tags get counters when it comes, in blocks: it loads,
# every site is listed, the last block's last site counts the object it
# holds, and the unload drops them all, without a warning.
test_module_many_tags_load_and_go() {
	dmesg -c >/dev/null
	insmod "$MANY_MODULE" site=4999 hold=1 || fail "insmod failed: $(dmesg | tail -5)" || return 1
	dmesg | grep -q 'alloctag-bench-tags: sites=5000$' || fail "no sites=5000 in the log"
	loaded_tags | grep '\[alloctag_many_tags\]' >/tmp/many-tags
	[ "$(wc -l </tmp/many-tags)" = 5000 ] || fail "$(wc -l </tmp/many-tags) sites listed, not 5,000"
	awk '$1 != 0 || $2 != 0' /tmp/many-tags >/tmp/many-held
	cat /tmp/many-held
	[ "$(wc -l </tmp/many-held)" = 1 ] || fail "not one site holding memory"
	grep -qE '^ *(8|16|32) +1 .* func:alloctag_bench_site_4999 ?$' /tmp/many-held ||
		fail "alloctag_bench_site_4999 does not hold its one object"
	rmmod alloctag_many_tags || fail "rmmod failed"
	[ "$(grep -c '\[alloctag_many_tags\]' "$PROC_ALLOCINFO")" = 0 ] || fail "lines left after unload"
	dmesg | grep -E 'WARNING|percpu|Could not allocate|no memory for the counters' && fail "the log warned"
	return 0
}

# (An earlier test's leak=1 leaves an unloaded instance's line listed for
# good: these count loaded code's tags only, loaded_tags.)
test_module_tags_come_and_go() {
	[ "$(loaded_tags | grep -c '\[alloctag_test\]')" = 0 ]
	insmod "$TEST_MODULE"
	loaded_tags | grep '\[alloctag_test\]' >/tmp/module-tags
	bytes=$(awk '{ sum += $1 } END { print sum + 0 }' /tmp/module-tags)
	rmmod alloctag_test
	cat /tmp/module-tags
	# kmalloc(3000), vmalloc(4 pages) and 4 pages, each at its own line.
	[ "$(wc -l </tmp/module-tags)" -ge 3 ]
	[ "$bytes" -ge $((3000 + 8 * 4096)) ]
	grep -q 'tests/modules/alloctag_test.c:[0-9]* \[alloctag_test\] func:alloctag_test_init $' /tmp/module-tags
	[ "$(loaded_tags | grep -c '\[alloctag_test\]')" = 0 ]
}

# leak=1 keeps one allocation at unload, for good: the unload warns once, the
# kernel goes on, and that call site stays listed (marked unloaded in the
# ioctl's answers) while the module's other tags go.
test_module_unload_with_live_allocation_warns() {
	dmesg -c >/dev/null
	unloaded_tags | grep '\[alloctag_test\] func:alloctag_test_init ' >/tmp/leak-before || true
	insmod "$TEST_MODULE" leak=1
	rmmod alloctag_test
	log=$(dmesg)
	# One line for the module: its totals, then its sites, largest first.
	echo "$log" | grep -E 'module alloctag_test has [0-9]+ bytes in 1 allocations at module unload, at 1 call site, listed until freed: [^ ]*alloctag_test.c:[0-9]+ \[alloctag_test\] func:alloctag_test_init has [0-9]+ bytes in 1 allocations$' ||
		{ echo "no warning in: $log"; return 1; }
	[ "$(echo "$log" | grep -c 'at module unload')" = 1 ] || fail "not one line for the module: $log" 
	unloaded_tags | grep '\[alloctag_test\]' >/tmp/leak-after
	cat /tmp/leak-after
	[ "$(grep -c ' func:alloctag_test_init unloaded:yes $' /tmp/leak-after)" = $(($(wc -l </tmp/leak-before) + 1)) ] ||
		fail "not one more kept line of alloctag_test_init"
	grep -v ' func:alloctag_test_init unloaded:yes $' /tmp/leak-after && fail "other tags kept"
	[ "$(loaded_tags | grep -c '\[alloctag_test\]')" = 0 ] || fail "listed as loaded"
	cat /proc/allocinfo >/dev/null
}

# Prints the number of /proc/vmallocinfo areas that the module loader made
# (module code and data, allocated through execmem; the caller vmallocinfo
# names depends on what the compiler inlined).
module_areas() {
	grep -cE 'execmem|module_memory_alloc|move_module|load_module' /proc/vmallocinfo || true
}

# A module built for the C core (its tag has static per-CPU counters) is
# refused when it comes, and its tag section goes within seconds, with no
# "in use" line: the core leaves the refused tags without counters, and the
# loader gives up the section before it frees the module's per-CPU area,
# whose counters here read non-zero, as garbage left there would.
test_module_built_for_ccore_refused_and_freed() {
	dmesg -c >/dev/null
	used_before=$(settled_module_tags)
	loadmod /lib/modules/alloctag_ccore.ko 2>/dev/null && fail "the module loaded" && return 1
	log=$(dmesg)
	echo "$log" | grep -q 'module alloctag_ccore: its 1 allocation tags get no counters (they have static ones: built for the C core): not loaded' ||
		fail "no refusal in the log: $log" || return 1
	if echo "$log" | grep 'code tags in use'; then
		fail "the refused module's tags read in use"
		return 1
	fi
	module_tags_back_to "$used_before" 10 "the refused module's tag section stayed"
}

# A module unloaded while allocations it made live, freed later by another
# module (alloctag_holder): its call sites with live bytes stay listed, with
# their counts, file, line, function and module, marked unloaded (version
# 2.0's pair in the ioctl's dump, and its filter), until the last is freed;
# then they go within seconds, and their memory with them. Only its tags
# stay: its code and data go at unload (the loader placed its tags apart),
# its other tags' lines go too. A reload is a new instance, listed apart.
test_module_leak_listed_until_freed() {
	trap 'rmmod alloctag_test 2>/dev/null || true; rmmod alloctag_holder 2>/dev/null || true' EXIT
	insmod "$HOLDER_MODULE"
	used_before=$(settled_module_tags)
	kept_before=$(status_word unloaded_modules 1)
	insmod "$TEST_MODULE" hold=1
	loaded_tags | grep '\[alloctag_test\] func:hold_' | awk '$1 != 0' >/tmp/kept-loaded
	areas_loaded=$(module_areas)
	used_loaded=$(status_word module_tags 6)
	rmmod alloctag_test
	areas_kept=$(module_areas)
	unloaded_tags | grep '\[alloctag_test\] func:hold_' >/tmp/kept
	cat /tmp/kept
	# hold_kmalloc, hold_pages and hold_vmalloc, as they were before the unload.
	[ "$(wc -l </tmp/kept)" = 3 ] || fail "not the 3 hold_* sites kept"
	sed 's/ unloaded:yes $/ /' /tmp/kept | cmp -s - /tmp/kept-loaded ||
		fail "kept lines differ from the loaded ones: $(cat /tmp/kept-loaded)"
	for f in hold_kmalloc hold_pages hold_vmalloc; do
		grep -q "^ *[1-9][0-9]* *[1-9][0-9]* .*/alloctag_test.c:[0-9]* \[alloctag_test\] func:$f unloaded:yes $" /tmp/kept ||
			fail "$f not kept with its bytes"
		grep -q "\[alloctag_test\] func:$f $" "$PROC_ALLOCINFO" || fail "$f not in 1.0's text"
	done
	[ "$(loaded_tags | grep -c '\[alloctag_test\]')" = 0 ] || fail "listed as loaded"
	# Only the tags stay: the module's tag section, and its names' copies.
	[ "$(status_word unloaded_modules 1)" = $((kept_before + 1)) ] || fail "not one more unloaded module kept"
	[ "$(status_word module_tags 6)" = "$used_loaded" ] || fail "the kept tags' memory changed at unload"
	[ "$(status_word unloaded_modules 3)" -gt 0 ] || fail "no names copied"
	guest_note "loader areas in vmallocinfo: $areas_loaded loaded, $areas_kept after the unload; tags $((used_loaded - used_before)) bytes, names $(status_word unloaded_modules 3) bytes"
	# Where vmallocinfo names the loader as their caller, the module's own
	# areas went at unload.
	if [ "$areas_loaded" -gt 0 ]; then
		[ "$areas_kept" -lt "$areas_loaded" ] || fail "the module's memory stayed at unload"
	fi

	# Loaded again: a new instance beside the kept one.
	insmod "$TEST_MODULE"
	[ "$(grep -c '\[alloctag_test\] func:hold_kmalloc $' "$PROC_ALLOCINFO")" = 2 ] ||
		fail "the reload is not listed beside the kept instance"
	[ "$(unloaded_tags | grep -c '\[alloctag_test\] func:hold_')" = 3 ] || fail "the reload changed the kept lines"
	rmmod alloctag_test

	echo 1 >"$HOLDER_RELEASE"
	wait_unlisted '\[alloctag_test\] func:hold_' || return 1
	[ "$(grep -c '\[alloctag_test\] func:hold_' "$PROC_ALLOCINFO")" = 0 ] || fail "hold_* lines left"
	# The tags' memory goes at the check after the one that dropped the lines.
	module_tags_back_to "$used_before" 30 "the kept tags' memory was not freed" || return 1
	[ "$(status_word unloaded_modules 1)" = "$kept_before" ] || fail "the unloaded module is still kept"
	rmmod alloctag_holder
	trap - EXIT
}

# 100 loads of a module whose allocations outlive it (hold=1: alloctag_holder
# keeps them), each unloaded, while a reader reads /proc/allocinfo all along:
# each unload keeps that instance's tag section and its listed tags' names,
# nothing of its code or data; once the holder frees the objects, all of it
# goes.
test_module_leak_cycles_keep_only_tags() {
	trap 'kill $reader 2>/dev/null || true; rmmod alloctag_test 2>/dev/null || true; rmmod alloctag_holder 2>/dev/null || true' EXIT
	insmod "$HOLDER_MODULE"
	while :; do cat "$PROC_ALLOCINFO" >/dev/null; done &
	reader=$!
	used_before=$(settled_module_tags)
	areas_before=$(module_areas)
	mapped_before=$(status_word module_tags 4)
	chunks_before=$(status_word module_tags 2)
	kept_before=$(status_word unloaded_modules 1)
	names_before=$(status_word unloaded_modules 3)
	vmalloc_before=$(sed -n 's/^VmallocUsed: *\([0-9]*\) kB/\1/p' /proc/meminfo)
	percpu_before=$(sed -n 's/^Percpu: *\([0-9]*\) kB/\1/p' /proc/meminfo)
	i=0
	while [ $i -lt 100 ]; do
		insmod "$TEST_MODULE" hold=1 || fail "load $i failed" || return 1
		rmmod alloctag_test || fail "unload $i failed" || return 1
		if [ $i = 0 ]; then
			tags=$(($(status_word module_tags 6) - used_before))
			names=$(($(status_word unloaded_modules 3) - names_before))
		fi
		i=$((i + 1))
	done
	kill $reader
	areas=$(module_areas)
	used=$(($(status_word module_tags 6) - used_before))
	mapped=$(($(status_word module_tags 4) - mapped_before))
	kept=$(($(status_word unloaded_modules 1) - kept_before))
	named=$(($(status_word unloaded_modules 3) - names_before))
	vmalloc_after=$(sed -n 's/^VmallocUsed: *\([0-9]*\) kB/\1/p' /proc/meminfo)
	percpu_after=$(sed -n 's/^Percpu: *\([0-9]*\) kB/\1/p' /proc/meminfo)
	held=$(unloaded_tags | awk '/\[alloctag_test\] func:hold_vmalloc / { sum += $1 } END { print sum + 0 }')
	guest_note "100 cycles: $kept kept, tags $used bytes ($tags a cycle), names $named bytes ($names a cycle), chunks +$mapped bytes, loader areas $areas_before then $areas, VmallocUsed $vmalloc_before then $vmalloc_after kB ($held bytes of it held vmalloc objects), Percpu $percpu_before then $percpu_after kB"
	[ "$kept" = 100 ] || fail "$kept unloaded instances kept, not 100"
	[ "$tags" -gt 0 ] && [ "$used" = $((100 * tags)) ] || fail "tags kept: $used bytes, not 100 x $tags"
	[ "$names" -gt 0 ] && [ "$named" = $((100 * names)) ] || fail "names kept: $named bytes, not 100 x $names"
	# No loader area stays (an earlier test's may go meanwhile) but the
	# chunks of module data memory made for the kept tags (one more when
	# 100 instances' tags outgrow the first).
	chunks=$(($(status_word module_tags 2) - chunks_before))
	[ "$areas" -le $((areas_before + chunks)) ] ||
		fail "loader areas: $areas, more than $areas_before and $chunks new chunks of tags: $(grep -E 'execmem|module_memory_alloc|move_module|load_module' /proc/vmallocinfo | tail -5)"
	[ "$(unloaded_tags | grep -c '\[alloctag_test\] func:hold_kmalloc unloaded:yes $')" = 100 ] ||
		fail "not 100 kept hold_kmalloc lines"
	echo 1 >"$HOLDER_RELEASE"
	wait_unlisted '\[alloctag_test\] func:hold_' || return 1
	module_tags_back_to "$used_before" 30 "kept tags' memory not freed" || return 1
	[ "$(status_word unloaded_modules 3)" = "$names_before" ] || fail "names' copies not freed"
	rmmod alloctag_holder
	trap - EXIT
}

# A fault rule and an unloaded module's kept call sites: a rule armed before
# the unload keeps its mark on a kept site (which can no longer allocate:
# its code is gone, so the rule never fires there) until the site goes; a
# rule added after the unload marks no kept site. (pid=1: the rules never
# fire on the loads here.)
test_module_fault_rule_on_kept_sites() {
	fail_ctl=/sys/kernel/debug/alloctag/fail
	[ -e "$fail_ctl" ] || mount -t debugfs none /sys/kernel/debug
	echo clear >"$fail_ctl" || fail "clear refused"
	trap 'echo clear >"$fail_ctl" 2>/dev/null || true; rmmod alloctag_test 2>/dev/null || true; rmmod alloctag_holder 2>/dev/null || true' EXIT
	insmod "$HOLDER_MODULE"
	echo "add module:alloctag_test func:hold_kmalloc pid=1" >"$fail_ctl" || fail "add refused"
	insmod "$TEST_MODULE" hold=1
	grep -q '^rule 1 .* injected=0 sites=1 ' "$fail_ctl" || fail "rule 1 does not hold hold_kmalloc: $(cat "$fail_ctl")"
	rmmod alloctag_test
	grep -q '^rule 1 .* injected=0 sites=1 ' "$fail_ctl" || fail "rule 1 lost the kept site: $(cat "$fail_ctl")"
	echo "add module:alloctag_test pid=1" >"$fail_ctl" || fail "second add refused"
	grep -q '^rule 2 .* sites=0 ' "$fail_ctl" || fail "rule 2 marked kept sites: $(cat "$fail_ctl")"
	echo 1 >"$HOLDER_RELEASE"
	wait_unlisted '\[alloctag_test\] func:hold_' || return 1
	# The marks go with the module, at the check after the one that dropped the lines.
	_n=0
	while ! grep -q '^rule 1 .* injected=0 sites=0 ' "$fail_ctl" && [ $_n -lt 150 ]; do
		sleep 0.2
		_n=$((_n + 1))
	done
	grep -q '^rule 1 .* injected=0 sites=0 ' "$fail_ctl" || fail "rule 1 kept a site that went: $(cat "$fail_ctl")"
	echo clear >"$fail_ctl"
	rmmod alloctag_holder
	trap - EXIT
}

# Per-CPU areas count exactly where their chunk has a tag vector: every
# chunk but the first (mm/percpu.c, patch 20), on this boot's profiling from
# boot, debug checks included. 80 areas of 32 KiB (2.5 MiB a CPU) fill the
# first chunk; 4 more land after it and count, their bytes on every CPU;
# freeing all takes back what was counted and nothing more.
test_module_percpu_areas_count_exactly() {
	dmesg -c >/dev/null
	insmod "$TEST_MODULE" || fail "insmod failed" || return 1
	[ -e /sys/kernel/debug/alloctag_test ] || mount -t debugfs none /sys/kernel/debug
	hold=/sys/kernel/debug/alloctag_test/hold_percpu
	held() { awk '$4 == "[alloctag_test]" && $5 == "func:hold_percpu" { print $1, $2 }' "$PROC_ALLOCINFO"; }
	capwriter "$hold" 80 >/dev/null || fail "holding 80 per-CPU areas failed"
	before=$(held)
	capwriter "$hold" 84 >/dev/null || fail "holding 4 more per-CPU areas failed"
	after=$(held)
	cpus=$(grep -c '^processor' /proc/cpuinfo)
	calls=$((${after#* } - ${before#* }))
	bytes=$((${after% *} - ${before% *}))
	[ "$calls" = 4 ] && [ $((bytes % 4)) = 0 ] && [ $((bytes / 4)) -ge $((32768 * cpus)) ] ||
		fail "4 more areas moved hold_percpu from '$before' to '$after', on $cpus CPUs"
	capwriter "$hold" 0 >/dev/null || fail "freeing the per-CPU areas failed"
	[ "$(held)" = "0 0" ] || fail "hold_percpu reads '$(held)' after the frees"
	rmmod alloctag_test || fail "rmmod failed"
	dmesg | grep -E 'WARNING|alloc_tag was not set' && fail "the log warned"
	return 0
}
