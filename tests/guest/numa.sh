# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# In-guest tests of the NUMA boot (scripts/build-matrix.sh, configuration
# numa: QEMU with two nodes, run-qemu.sh's QEMU_NUMA). The boot says which
# CPUs it gave each node, alloctag_numa=CPUS0/CPUS1/... on the kernel command
# line (cpulist syntax), and every test first checks that the guest sees
# exactly that: a kernel that cannot read ACPI's SRAT boots with one node
# and every test here would pass vacuously on it. alloctag_numa_memless=N
# says node N has no memory (run-qemu.sh's QEMU_NUMA_MEMLESS).

# Checks the guest's nodes, their CPUs and which have memory against
# alloctag_numa= and alloctag_numa_memless=.
numa_topology_as_asked() {
	_nt_want=$(sed -n 's/.*alloctag_numa=\([^ ]*\).*/\1/p' /proc/cmdline)
	_nt_memless=$(sed -n 's/.*alloctag_numa_memless=\([0-9]*\).*/\1/p' /proc/cmdline)
	[ -n "$_nt_want" ] || fail "booted without alloctag_numa=: $(cat /proc/cmdline)" || return 1
	_nt_i=0
	for _nt_cpus in $(echo "$_nt_want" | tr / ' '); do
		_nt_dir=/sys/devices/system/node/node$_nt_i
		[ -d "$_nt_dir" ] || fail "no node $_nt_i: online nodes $(cat /sys/devices/system/node/online 2>/dev/null)" || return 1
		[ "$(cat "$_nt_dir/cpulist")" = "$_nt_cpus" ] ||
			fail "node $_nt_i has CPUs $(cat "$_nt_dir/cpulist"), not $_nt_cpus" || return 1
		_nt_mem=$(awk '$3 == "MemTotal:" { print $4 }' "$_nt_dir/meminfo")
		if [ "$_nt_i" = "$_nt_memless" ]; then
			[ "$_nt_mem" = 0 ] || fail "node $_nt_i has $_nt_mem kB of memory, not none" || return 1
		else
			[ "$_nt_mem" -gt 0 ] || fail "node $_nt_i has no memory" || return 1
		fi
		_nt_i=$((_nt_i + 1))
	done
	[ "$(cat /sys/devices/system/node/online)" = "0-$((_nt_i - 1))" ] ||
		fail "online nodes $(cat /sys/devices/system/node/online), not 0-$((_nt_i - 1))"
}

test_boot_numa_topology_is_as_asked() {
	numa_topology_as_asked
}

# GET_SPLIT's per-CPU view across nodes: objects allocated on the first CPU
# of the last node and freed on CPU 0 (of node 0) show as that CPU's share
# and CPU 0's negative one.
test_boot_numa_split_by_cpu_across_nodes() {
	numa_topology_as_asked
	far=$(sed -n 's/.*alloctag_numa=[^ ]*\/\([0-9]*\).*/\1/p' /proc/cmdline)
	[ -n "$far" ] && [ "$far" != 0 ] || fail "no CPU of another node than CPU 0's"
	trap 'rmmod alloctag_test 2>/dev/null' EXIT
	probe_baseline
	read -r bf cf <<-EOT
		$(split_probe_share "$far")
	EOT
	read -r bz cz <<-EOT
		$(split_probe_share 0)
	EOT
	taskset -c "$far" capwriter "$PROBE_HOLD" "$PROBE_N" >/dev/null || fail "allocating on CPU $far"
	read -r b1 c1 <<-EOT
		$(probe_counts)
	EOT
	held=$((b1 - b0))
	[ "$c1" = $((c0 + PROBE_N)) ] && [ "$held" -gt 0 ] || fail "after $PROBE_N allocations: $b1 $c1, from $b0 $c0"
	[ "$(split_probe_share "$far")" = "$((bf + held)) $((cf + PROBE_N))" ] ||
		fail "CPU $far has $(split_probe_share "$far"), from $bf $cf, after $held bytes there"
	taskset -c 0 capwriter "$PROBE_HOLD" 0 >/dev/null || fail "freeing on CPU 0"
	[ "$(split_probe_share 0)" = "$((bz - held)) $((cz - PROBE_N))" ] ||
		fail "CPU 0 has $(split_probe_share 0), from $bz $cz, after the free there"
	[ "$(probe_counts)" = "$b0 $c0" ] || fail "after the free: $(probe_counts), not $b0 $c0"
}

NUMA_MODULE=/lib/modules/alloctag_numa.ko
NUMA_HOLD=/sys/kernel/debug/alloctag_numa/hold
NUMA_NODES=/sys/kernel/debug/alloctag_numa/nodes

# Loads tests/modules/alloctag_numa.ko (unloaded when the test ends) and
# sets far, the first CPU of the last node.
numa_module_loaded() {
	far=$(sed -n 's/.*alloctag_numa=[^ ]*\/\([0-9]*\).*/\1/p' /proc/cmdline)
	[ -e "$NUMA_HOLD" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	trap 'rmmod alloctag_numa 2>/dev/null' EXIT
	insmod "$NUMA_MODULE" || fail "insmod $NUMA_MODULE"
}

# Prints "BYTES CALLS" of CPU $2's share of alloctag_numa's function $1.
numa_share() {
	"$SPLIT" site alloctag_numa "$1" >/tmp/numa-site || fail "allocinfo_split site $1 failed" || return 1
	awk -v c="cpu$2" '$1 == c { print $2, $3; n++ } END { exit n != 1 }' /tmp/numa-site
}

# tests/modules/alloctag_numa.c's allocations for node 1 made on CPU 0 (of
# node 0) land on node 1, whichever way (slab, page, vmalloc), and count as
# CPU 0's share; freed on a CPU of node 1 they leave that CPU's share
# negative by as much and the site at 0 0.
test_boot_numa_remote_allocations_per_cpu() {
	numa_topology_as_asked
	numa_module_loaded || return 1
	for k in slab page vmalloc; do
		site=hold_${k}_node
		[ "$(numa_share "$site" 0)" = "0 0" ] || fail "$site: CPU 0 starts at $(numa_share "$site" 0)"
		taskset -c 0 capwriter "$NUMA_HOLD" "$k 1 3" >/dev/null || fail "$k for node 1 on CPU 0"
		grep -qx "$k 1 1 1" "$NUMA_NODES" || fail "not on node 1: $(cat "$NUMA_NODES")"
		read -r b c <<-EOT
			$(numa_share "$site" 0)
		EOT
		[ "$b" -ge $((3 * 4096 / 8)) ] && [ "$c" -ge 3 ] || fail "$site: CPU 0 has $b $c after 3 allocations"
		[ "$(awk -v f="func:$site" '$5 == f { print $1, $2 }' "$PROC_ALLOCINFO")" = "$b $c" ] ||
			fail "$site: the text has $(awk -v f="func:$site" '$5 == f { print $1, $2 }' "$PROC_ALLOCINFO"), CPU 0 $b $c"
		taskset -c "$far" capwriter "$NUMA_HOLD" free >/dev/null || fail "freeing on CPU $far"
		[ "$(numa_share "$site" "$far")" = "-$b -$c" ] ||
			fail "$site: CPU $far has $(numa_share "$site" "$far") after freeing $b $c there"
		[ "$(awk -v f="func:$site" '$5 == f { print $1, $2 }' "$PROC_ALLOCINFO")" = "0 0" ] ||
			fail "$site: not 0 0 after the free"
	done
}

# Per-node counting, booted on (alloctag.per_node=on: the numa-node boot of
# scripts/build-matrix.sh). Node shares are node 0, node 1, then per-CPU
# memory's (node2 here: nr_node_ids).

# Prints "BYTES CALLS" of node share $2 of alloctag_numa's function $1.
numa_node_share() {
	SPLIT_BY=node "$SPLIT" site alloctag_numa "$1" >/tmp/numa-node-site ||
		fail "allocinfo_split site $1 by node failed" || return 1
	awk -v n="node$2" '$1 == n { print $2, $3; k++ } END { exit k != 1 }' /tmp/numa-node-site
}

# Prints "BYTES CALLS" of alloctag_numa's function $1 in /proc/allocinfo.
numa_text() {
	awk -v f="func:$1" '$5 == f { print $1, $2 }' "$PROC_ALLOCINFO"
}

# Prints the node pairs ("nid0:B nid1:B percpu:B") of alloctag_numa's
# function $1 in /proc/allocinfo: format 2.0's with per-node counting on
# (the numa-node boot), none in 1.0 (the numa-switch boot).
numa_pairs() {
	awk -v f="func:$1" '$5 == f {
		s = ""
		for (i = 6; i <= NF; i++)
			if ($i ~ /^(nid[0-9]+|percpu):/)
				s = s (s == "" ? "" : " ") $i
		print s
	}' "$PROC_ALLOCINFO"
}

# Prints the pairs numa_pairs should print for node 1 holding $1 bytes.
numa_pairs_want() {
	if head -n 1 "$PROC_ALLOCINFO" | grep -q 'version: 2.0'; then
		echo "nid0:0 nid1:$1 percpu:0"
	fi
}

# Booted on, per-node counting says so, and stays: it was decided before the
# first count, so a write of 0 is refused (EBUSY) and changes nothing.
test_boot_numa_node_switch_as_booted() {
	numa_topology_as_asked
	[ -e /sys/kernel/debug/alloctag/status ] || mount -t debugfs none /sys/kernel/debug
	grep -qx 'per_node: on (alloctag.per_node=on)' /sys/kernel/debug/alloctag/status ||
		fail "status: $(grep per_node: /sys/kernel/debug/alloctag/status)"
	dmesg | grep -q 'alloctag: per-node counting on: 3 slots per tag' ||
		fail "the boot does not say per-node counting is on"
	[ "$(cat /proc/sys/vm/mem_profiling_per_node)" = 1 ] ||
		fail "vm.mem_profiling_per_node reads $(cat /proc/sys/vm/mem_profiling_per_node)"
	got=$(rawwrite /proc/sys/vm/mem_profiling_per_node 0) || true
	[ "$got" = EBUSY ] || fail "writing 0 after the first count: '$got', not EBUSY"
	[ "$(cat /proc/sys/vm/mem_profiling_per_node)" = 1 ] || fail "a refused write changed it"
	[ "$("$SPLIT" width)" -gt 0 ] && [ "$(SPLIT_BY=node "$SPLIT" width)" = 3 ] ||
		fail "the node split's width is $(SPLIT_BY=node "$SPLIT" width), not 3 (2 nodes and per-CPU memory)"
}

# Booted with allocinfo.version=2.0 too: every line of /proc/allocinfo ends
# with the bytes of node 0, node 1 and per-CPU memory, which add up to the
# line's bytes; and allocinfo reads them from a saved profile.
test_boot_numa_node_text_pairs_add_up() {
	numa_topology_as_asked
	head -n 1 "$PROC_ALLOCINFO" | grep -qx 'allocinfo - version: 2.0' ||
		fail "not booted with allocinfo.version=2.0: $(head -n 1 "$PROC_ALLOCINFO")"
	cat "$PROC_ALLOCINFO" >/tmp/numa-2.0.txt
	awk 'NR > 2 {
		n = 0; s = 0; names = ""
		for (i = 4; i <= NF; i++)
			if ($i ~ /^(nid[0-9]+|percpu):/) {
				split($i, kv, ":")
				s += kv[2]; n++; names = names " " kv[1]
			}
		if (names != " nid0 nid1 percpu" || s != $1) {
			print "line " NR ": " $0
			bad++
		}
		lines++
	} END { exit bad != 0 || lines < 100 }' /tmp/numa-2.0.txt >/tmp/numa-2.0.bad ||
		fail "lines whose node pairs are not node 0, node 1 and percpu adding up to their bytes: $(head -n 5 /tmp/numa-2.0.bad)"
	# The pages the kernel holds are on both nodes.
	awk 'NR > 2 { for (i = 4; i <= NF; i++) { split($i, kv, ":"); if (kv[1] == "nid0") a += kv[2]; if (kv[1] == "nid1") b += kv[2] } }
		END { exit !(a > 0 && b > 0) }' /tmp/numa-2.0.txt || fail "no bytes on one of the nodes"
	allocinfo top --split node --csv -n 0 /tmp/numa-2.0.txt >/tmp/numa-top.csv ||
		fail "allocinfo top --split node of the saved profile failed"
	total=$(awk 'NR > 2 { s += $1 } END { print s }' /tmp/numa-2.0.txt)
	# The node_bytes column (15) of every share of every row adds up to
	# the profile's bytes.
	[ "$(awk -F, 'NR > 1 { s += $15 } END { print s }' /tmp/numa-top.csv)" = "$total" ] ||
		fail "allocinfo's node shares add up to $(awk -F, 'NR > 1 { s += $15 } END { print s }' /tmp/numa-top.csv), not $total"
}

# alloctag_numa's allocations on node 1, from CPU 0 (node 0: counted on the
# tag's slot of node 1, in no CPU's share) and from a CPU of node 1 (counted
# per CPU), then freed from CPU 0: each step's node figures exact, adding up
# to the text's, and 0 after the free.
test_boot_numa_node_remote_allocations_exact() {
	numa_topology_as_asked
	numa_module_loaded || return 1
	for k in slab page vmalloc; do
		numa_node_exact "$k" "$far"
	done
}

# numa_node_exact KIND FAR: test_boot_numa_node_remote_allocations_exact's
# steps for one kind of alloctag_numa's allocations; FAR is a CPU of node 1.
numa_node_exact() {
	k=$1 far=$2 site=hold_$1_node
	for n in 0 1 2; do
		[ "$(numa_node_share "$site" "$n")" = "0 0" ] ||
			fail "$site: node share $n starts at $(numa_node_share "$site" "$n")"
	done
	taskset -c 0 capwriter "$NUMA_HOLD" "$k 1 3" >/dev/null || fail "$k for node 1 on CPU 0"
	grep -qx "$k 1 1 1" "$NUMA_NODES" || fail "not on node 1: $(cat "$NUMA_NODES")"
	read -r b c <<-EOT
		$(numa_text "$site")
	EOT
	# vmalloc's are four pages and its area, each a call
	[ "$c" -ge 3 ] && [ "$b" -ge 1536 ] || fail "$site: $b $c after 3 allocations"
	[ "$k" != page ] || [ "$b" = $((3 * 4096)) ] || fail "$site: $b bytes for 3 pages"
	[ "$(numa_node_share "$site" 1)" = "$b $c" ] ||
		fail "$site: node 1 has $(numa_node_share "$site" 1), the site $b $c"
	[ "$(numa_pairs "$site")" = "$(numa_pairs_want "$b")" ] ||
		fail "$site: the text's pairs are '$(numa_pairs "$site")', not '$(numa_pairs_want "$b")'"
	for n in 0 2; do
		[ "$(numa_node_share "$site" "$n")" = "0 0" ] ||
			fail "$site: node share $n is $(numa_node_share "$site" "$n") after allocations on node 1"
	done
	[ "$(numa_share "$site" 0)" = "0 0" ] ||
		fail "$site: CPU 0 has $(numa_share "$site" 0): another node's memory is counted per node"
	taskset -c "$far" capwriter "$NUMA_HOLD" "$k 1 2" >/dev/null || fail "$k for node 1 on CPU $far"
	read -r b2 c2 <<-EOT
		$(numa_text "$site")
	EOT
	[ "$c2" -ge 5 ] || fail "$site: $b2 $c2 after 5 allocations"
	[ "$(numa_node_share "$site" 1)" = "$b2 $c2" ] ||
		fail "$site: node 1 has $(numa_node_share "$site" 1), the site $b2 $c2"
	[ "$(numa_share "$site" "$far")" = "$((b2 - b)) $((c2 - c))" ] ||
		fail "$site: CPU $far has $(numa_share "$site" "$far") after its 2 allocations of $((b2 - b)) bytes on its node"
	[ "$(numa_pairs "$site")" = "$(numa_pairs_want "$b2")" ] ||
		fail "$site: the text's pairs are '$(numa_pairs "$site")', not '$(numa_pairs_want "$b2")'"
	cat "$PROC_ALLOCINFO" >/tmp/numa-held.txt
	taskset -c 0 capwriter "$NUMA_HOLD" free >/dev/null || fail "freeing on CPU 0"
	[ "$(numa_text "$site")" = "0 0" ] || fail "$site: $(numa_text "$site") after the free"
	[ "$(numa_pairs "$site")" = "$(numa_pairs_want 0)" ] ||
		fail "$site: the text's pairs are '$(numa_pairs "$site")' after the free"
	if [ -n "$(numa_pairs_want 0)" ]; then
		# allocinfo diff of the text: node 1 (column 19) fell by the
		# bytes (column 22), and no other share changed.
		cat "$PROC_ALLOCINFO" >/tmp/numa-freed.txt
		allocinfo diff --split node --csv /tmp/numa-held.txt /tmp/numa-freed.txt >/tmp/numa-diff.csv ||
			fail "allocinfo diff --split node failed"
		[ "$(awk -F, -v f="$site" '$7 == f && $19 != "" { print $19 ":" $22 }' /tmp/numa-diff.csv)" = "1:-$b2" ] ||
			fail "$site: allocinfo diff --split node says $(awk -F, -v f="$site" '$7 == f { print $19 ":" $22 }' /tmp/numa-diff.csv), not 1:-$b2"
	fi
	for n in 0 1 2; do
		[ "$(numa_node_share "$site" "$n")" = "0 0" ] ||
			fail "$site: node share $n is $(numa_node_share "$site" "$n") after the free"
	done
}

# A process's anonymous pages moved from node 0 to node 1 with move_pages(2)
# (tests/guest/tools/numa_migrate.c): the tag that charged them shows node 0
# down and node 1 up by exactly their bytes and calls, its total unchanged.
test_boot_numa_node_migration_moves_the_charge() {
	numa_topology_as_asked
	# khugepaged, a kernel thread, may collapse other processes' pages
	# between numa_migrate's two reads, moving the anonymous fault's tag by
	# more (a run saw node 0 down 1,088 pages, 1,024 of them collapsed):
	# no collapses meanwhile.
	thp=/sys/kernel/mm/transparent_hugepage/enabled
	was=
	if [ -w "$thp" ]; then
		was=$(sed 's/.*\[\(.*\)\].*/\1/' "$thp")
		echo never >"$thp"
	fi
	taskset -c 0 numa_migrate 64 0 1 >/tmp/numa-migrate.out 2>&1 ||
		fail "no tag moved 64 pages from node 0 to node 1: $(head -20 /tmp/numa-migrate.out)"
	grep -q '^moved ' /tmp/numa-migrate.out || fail "$(cat /tmp/numa-migrate.out)"
	# and back, from a CPU of node 1
	far=$(sed -n 's/.*alloctag_numa=[^ ]*\/\([0-9]*\).*/\1/p' /proc/cmdline)
	taskset -c "$far" numa_migrate 64 1 0 >/tmp/numa-migrate.out 2>&1 ||
		fail "no tag moved 64 pages from node 1 to node 0: $(head -20 /tmp/numa-migrate.out)"
	[ -z "$was" ] || echo "$was" >"$thp"
}

# The first switch-on fails at the per-CPU chunks' tag vectors
# (pcpu_alloc_tags_late()'s own allocation), after it made the dynamic tags'
# first chunk, which it keeps for the next: ENOMEM, profiling still off.
numa_switch_on_fails_keeping_the_first_chunk() {
	fail_ctl=/sys/kernel/debug/alloctag/fail
	dynamic_made 0
	site=$(awk '$4 == "func:pcpu_alloc_tags_late" { print $3; exit }' "$PROC_ALLOCINFO")
	[ -n "$site" ] || fail "no site of pcpu_alloc_tags_late in $PROC_ALLOCINFO" || return 1
	switch_on_fails_at "$site" '' "the per-CPU chunks' tag vectors"
	dynamic_made 64
}

# A node without memory (the numa-memless boot of scripts/build-matrix.sh,
# booted on: node 1 has CPUs and no memory). Memory asked for by one of its
# CPUs (no node given) comes from node 0 and counts there, slab, page and vmalloc
# alike; node 1 holds nothing; the free from CPU 0 takes it all back. (Its
# CPUs' memory is never their node's: every count of theirs takes the tag's
# slot, the remote path.)
test_boot_numa_memless_counts_where_the_memory_is() {
	numa_topology_as_asked || return 1
	numa_module_loaded || return 1
	[ "$(cat /sys/devices/system/node/has_memory)" = 0 ] ||
		fail "nodes with memory: $(cat /sys/devices/system/node/has_memory), not 0"
	for k in slab page vmalloc; do
		site=hold_${k}_node
		taskset -c "$far" capwriter "$NUMA_HOLD" "$k -1 3" >/dev/null || fail "$k for no node on CPU $far"
		grep -qx "$k 0 0 0" "$NUMA_NODES" || fail "not on node 0: $(cat "$NUMA_NODES")"
		read -r b c <<-EOT
			$(numa_text "$site")
		EOT
		[ "$c" -ge 3 ] && [ "$b" -ge 1536 ] || fail "$site: $b $c after 3 allocations"
		[ "$(numa_node_share "$site" 0)" = "$b $c" ] ||
			fail "$site: node 0 has $(numa_node_share "$site" 0), the site $b $c"
		for n in 1 2; do
			[ "$(numa_node_share "$site" "$n")" = "0 0" ] ||
				fail "$site: node share $n is $(numa_node_share "$site" "$n"), with all on node 0"
		done
		taskset -c 0 capwriter "$NUMA_HOLD" free >/dev/null || fail "freeing on CPU 0"
		[ "$(numa_text "$site")" = "0 0" ] || fail "$site: $(numa_text "$site") after the free"
		for n in 0 1 2; do
			[ "$(numa_node_share "$site" "$n")" = "0 0" ] ||
				fail "$site: node share $n is $(numa_node_share "$site" "$n") after the free"
		done
	done
}

# Booted 0 (the numa-unarmed boot of scripts/build-matrix.sh): a module that
# comes while profiling is off waits on a list for the first switch-on to give
# its tags counters; where that list cannot grow (its allocation failed by a
# fault rule), its tags get them at once, with slots as per-node counting is
# set then. From that load on the setting is fixed, as after the first count:
# writing the other value is EBUSY and changes nothing, the module gone too.
test_boot_numa_unarmed_module_fixes_per_node() {
	numa_topology_as_asked
	per_node=/proc/sys/vm/mem_profiling_per_node
	fail_ctl=/sys/kernel/debug/alloctag/fail
	[ -e "$fail_ctl" ] || mount -t debugfs none /sys/kernel/debug
	[ "$(cat /proc/sys/vm/mem_profiling)" = 0 ] || fail "not booted 0"
	[ "$(rawwrite "$per_node" 1)" = 1 ] || fail "writing 1 refused"
	got=$(rawwrite "$per_node" 0) || true
	[ "$got" = 1 ] || fail "writing 0 before any module came: '$got'"
	[ "$(rawwrite "$per_node" 1)" = 1 ] || fail "writing 1 again refused"
	site=$(awk '$3 ~ /alloc_tag\/counters\.rs:[0-9]+$/ && /alloctag_module_counters/ { print $3; exit }' "$PROC_ALLOCINFO")
	[ -n "$site" ] || fail "no site of alloctag_module_counters in $PROC_ALLOCINFO" || return 1
	trap 'rmmod alloctag_test 2>/dev/null' EXIT
	echo "add $site" >"$fail_ctl" || fail "add $site refused" || return 1
	loadmod /lib/modules/alloctag_test.ko || fail "the load failed with the list's allocation failed"
	injected=$(cat "$fail_ctl")
	echo clear >"$fail_ctl"
	case "$injected" in *' injected=1 '*) ;; *) fail "the list's allocation was not failed once: $injected" ;; esac
	grep -q '^alloctag_test ' /proc/modules || fail "alloctag_test is not loaded"
	got=$(rawwrite "$per_node" 0) || true
	[ "$got" = EBUSY ] || fail "writing 0 with a module's tags counted per node: '$got', not EBUSY"
	[ "$(cat "$per_node")" = 1 ] || fail "a refused write changed it"
	rmmod alloctag_test || fail "rmmod alloctag_test"
	trap - EXIT
	got=$(rawwrite "$per_node" 0) || true
	[ "$got" = EBUSY ] || fail "writing 0 after the module went: '$got', not EBUSY"
	echo 1 >/proc/sys/vm/mem_profiling || fail "switching profiling on"
	dmesg | grep -q 'alloctag: per-node counting on: 3 slots per tag' ||
		fail "the switch-on does not say per-node counting is on"
}

# Booted 0 (the numa-switch boot of scripts/build-matrix.sh): per-node
# counting is turned on by a write before profiling first turns on, which
# bad input leaves off; it counts exactly from the switch-on, and is fixed
# from then on. A switch-on that fails after making the dynamic tags' first
# chunk (with its slots, kept for the next one) fixes it too.
test_boot_numa_switch_on_before_the_first_count() {
	numa_topology_as_asked
	per_node=/proc/sys/vm/mem_profiling_per_node
	status=/sys/kernel/debug/alloctag/status
	[ -e "$status" ] || mount -t debugfs none /sys/kernel/debug
	[ "$(cat /proc/sys/vm/mem_profiling)" = 0 ] || fail "not booted 0"
	[ "$(cat "$per_node")" = 0 ] || fail "$per_node reads $(cat "$per_node") at boot"
	grep -qx 'per_node: off' "$status" || fail "status: $(grep per_node: "$status")"
	for bad in 2 -1 x 1x; do
		got=$(rawwrite "$per_node" "$bad") || true
		[ "$got" = EINVAL ] || fail "writing '$bad': '$got', not EINVAL"
		[ "$(cat "$per_node")" = 0 ] || fail "writing '$bad' changed it"
	done
	! SPLIT_BY=node "$SPLIT" width 2>/dev/null || fail "a node split with per-node counting off"
	[ "$(rawwrite "$per_node" 1)" = 1 ] || fail "writing 1 refused"
	[ "$(cat "$per_node")" = 1 ] || fail "$per_node reads $(cat "$per_node") after writing 1"
	grep -qx 'per_node: on (vm.mem_profiling_per_node)' "$status" ||
		fail "status: $(grep per_node: "$status")"
	! dmesg | grep -q 'per-node counting on' || fail "counting per node before profiling is on"
	numa_switch_on_fails_keeping_the_first_chunk
	got=$(rawwrite "$per_node" 0) || true
	[ "$got" = EBUSY ] || fail "writing 0 once the first chunk has its slots: '$got', not EBUSY"
	[ "$(cat "$per_node")" = 1 ] || fail "a refused write changed it"
	[ "$(rawwrite "$per_node" 1)" = 1 ] || fail "writing 1 again refused"
	echo 1 >/proc/sys/vm/mem_profiling || fail "switching profiling on"
	dmesg | grep -q 'alloctag: per-node counting on: 3 slots per tag' ||
		fail "the switch-on does not say per-node counting is on"
	[ "$(SPLIT_BY=node "$SPLIT" width)" = 3 ] || fail "the node split's width is not 3"
	got=$(rawwrite "$per_node" 0) || true
	[ "$got" = EBUSY ] || fail "writing 0 after the first count: '$got', not EBUSY"
	[ "$(cat "$per_node")" = 1 ] || fail "a refused write changed it"
	numa_module_loaded || return 1
	numa_node_exact page "$far"
	numa_node_exact slab "$far"
}

# Last of the numa-memless boot (per-node counting on, in format 1.0, which
# the fuzzer's allocinfo-check reads), as it leaves profiling as it flipped
# it. The in-tree fuzzer (tests/guest/fuzz.sh's) for a short while: its
# GET_SPLIT oracle learns the node split's width (nr_node_ids + 1) and checks
# answers by node against it, while node 1's CPUs count on the slots.
test_boot_numa_memless_fuzzer_checks_node_splits() {
	numa_topology_as_asked || return 1
	command -v allocinfo-fuzz >/dev/null || fail "no /bin/allocinfo-fuzz" || return 1
	rc=0
	allocinfo-fuzz 30 >/tmp/numa-fuzz.out 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "allocinfo-fuzz exited $rc: $(grep -A 8 -E "^fuzz: FAIL" /tmp/numa-fuzz.out)"
	grep -Eq '^fuzz: [1-9][0-9]* ioctl GET_SPLIT answers by node checked \(widths 4, 3\)$' /tmp/numa-fuzz.out ||
		fail "no GET_SPLIT by node checked: $(grep 'by node' /tmp/numa-fuzz.out)"
}
