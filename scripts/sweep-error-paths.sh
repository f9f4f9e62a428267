#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Error-path sweeper: runs in the guest (scripts/sweep.sh boots the test
# kernel with it), as root, POSIX sh for busybox.
#
#   sweep-error-paths.sh [-a] [-p 'MODULE PARAMS'] [-w 'WORKLOAD COMMAND'] MODULE.ko
#
# Loads the module once to list its allocation call sites (its [module]
# lines in /proc/allocinfo), then for each site in turn: arms that site to
# fail once (/sys/kernel/debug/alloctag/fail: "add module:M FILE:LINE
# times=1"), loads the module, runs the workload if it loaded, unloads it,
# and records:
#   injected  whether the armed site was reached (the rule's injected count)
#   load      whether the load failed (and with which message) or succeeded
#   outcome   "load failed cleanly", "ran degraded" (loaded with the failure),
#             "not reached", or LEAK (a tag of the module kept bytes at
#             unload: the loader's "... at module unload" warning) or REPORT
#             (a kernel report on the log: BUG, WARNING, KASAN, lockdep, ...;
#             the allocation-failure reports warn_alloc() makes by design are
#             left out)
# and prints a table site -> outcome. Exits 1 on any LEAK or REPORT, 2 on a
# usage or setup error, and 3 when no site was reached at all (nothing was
# injected, so the sweep tested no error path), unless -a allows that.
#
# INSMOD names the loader (default insmod). It must try a load once:
# busybox insmod retries a failed finit_module() with init_module(), so the
# test initramfs sets INSMOD=loadmod (tests/guest/tools/loadmod.c).
set -u
INSMOD=${INSMOD:-insmod}

CTL=/sys/kernel/debug/alloctag/fail
REPORTS='(Oops|BUG:|WARNING:|Kernel panic|general protection fault|Call Trace:|INFO: possible|circular locking|inconsistent lock state|KASAN:|UBSAN:|detected stall|blocked for more than)'

params=
workload=
allow_unreached=
while getopts ap:w: opt; do
	case "$opt" in
	a) allow_unreached=1 ;;
	p) params=$OPTARG ;;
	w) workload=$OPTARG ;;
	*) echo "usage: $0 [-a] [-p PARAMS] [-w WORKLOAD] MODULE.ko" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || { echo "usage: $0 [-a] [-p PARAMS] [-w WORKLOAD] MODULE.ko" >&2; exit 2; }
ko=$1
[ -f "$ko" ] || { echo "sweep: no module file $ko" >&2; exit 2; }
mod=$(basename "$ko" .ko | tr - _)

[ -e "$CTL" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -w "$CTL" ] || { echo "sweep: no $CTL (CONFIG_ALLOCTAG_FAULT_INJECTION, debugfs, root)" >&2; exit 2; }
grep -q "^$mod " /proc/modules && { echo "sweep: $mod is loaded already" >&2; exit 2; }

# Prints the kernel log since the last call, then clears it.
log_since() { dmesg -c 2>/dev/null; }

# Prints the reports of the log on stdin, less warn_alloc()'s by-design
# allocation-failure reports with their stack traces.
# Only the report's own lines are left out (as scripts/run-qemu.sh does): its
# header, then dump_stack()'s lines up to its </TASK>; any other line ends it
# and is checked, so a real report printed meanwhile is still caught.
reports() {
	awk '{ line = $0; sub(/^\[ *[0-9]+\.[0-9]+\] /, "", line) }
		line ~ /(page allocation failure|vmalloc error): / { skip = 1; next }
		skip && line ~ /^ *<\/TASK>$/ { skip = 0; next }
		skip && (line ~ /^CPU: [0-9]+ UID: [0-9]+ PID: [0-9]+ Comm: / ||
			line ~ /^(Tainted: \[|Hardware name: |Workqueue: )/ ||
			line ~ /^Call Trace:$/ || line ~ /^ *<\/?(TASK|IRQ)>$/ ||
			line ~ /^ +(\? )?[A-Za-z0-9_.$]+\+0x[0-9a-f]+\/0x[0-9a-f]+( \[[^]]+\])?$/) { next }
		{ skip = 0; print }' | grep -E "$REPORTS"
}

# The module's sites, FILE:LINE, from one plain load (and workload).
log_since >/dev/null
# shellcheck disable=SC2086 # the parameters are words
$INSMOD "$ko" $params || { echo "sweep: $mod does not load even without injection" >&2; exit 2; }
[ -z "$workload" ] || sh -c "$workload" >/dev/null 2>&1
sites=$(awk -v m="[$mod]" '$4 == m { print $3 }' /proc/allocinfo | sort -u)
rmmod "$mod" || { echo "sweep: $mod does not unload even without injection" >&2; exit 2; }
if log_since | grep -q "module $mod has .* at module unload"; then
	echo "sweep: $mod leaks even without injection" >&2
	exit 1
fi
[ -n "$sites" ] || { echo "sweep: $mod has no allocation call sites" >&2; exit 2; }

echo "clear" >"$CTL"
bad=0
reached=0
rows=
for site in $sites; do
	echo "add module:$mod $site times=1 verbose=1" >"$CTL" || {
		echo "sweep: arming $site failed" >&2
		exit 2
	}
	# shellcheck disable=SC2086
	if out=$($INSMOD "$ko" $params 2>&1); then
		load=loaded
		[ -z "$workload" ] || sh -c "$workload" >/dev/null 2>&1
	else
		load="failed: $(echo "$out" | sed 's/.*: //' | head -n 1)"
	fi
	injected=$(awk '/^rule / { for (i = 2; i <= NF; i++) if ($i ~ /^injected=/) { sub("injected=", "", $i); print $i } }' "$CTL")
	echo "clear" >"$CTL"
	if grep -q "^$mod " /proc/modules && ! rmmod "$mod" 2>/dev/null; then
		load="$load, unload failed"
	fi
	log=$(log_since)
	outcome=
	if echo "$log" | grep -q "module $mod has .* at module unload"; then
		outcome=LEAK
		echo "$log" | grep "at module unload" | sed 's/^/    /'
	fi
	if echo "$log" | reports >/dev/null; then
		outcome="${outcome:+$outcome+}REPORT"
		echo "$log" | reports | head -n 5 | sed 's/^/    /'
	fi
	if [ "${injected:-0}" != 0 ]; then
		reached=$((reached + 1))
	fi
	if [ -n "$outcome" ]; then
		bad=1
	elif [ "${injected:-0}" = 0 ]; then
		outcome="not reached"
	elif [ "$load" = loaded ]; then
		outcome="ran degraded"
	else
		outcome="load failed cleanly"
	fi
	rows="$rows$site|${injected:-0}|$load|$outcome
"
done

printf '\nerror-path sweep of %s (%s)\n' "$mod" "$ko"
printf '%s' "$rows" | awk -F'|' '
	BEGIN { printf "%-56s %8s  %-28s %s\n", "SITE", "INJECTED", "LOAD", "OUTCOME" }
	{ printf "%-56s %8s  %-28s %s\n", $1, $2, $3, $4 }'
if [ "$bad" = 1 ]; then
	echo "sweep: $mod: FAILED (a leak or a kernel report above)"
	exit 1
fi
if [ "$reached" = 0 ] && [ -z "$allow_unreached" ]; then
	echo "sweep: $mod: FAILED: no site was reached, nothing was injected (-a allows that)"
	exit 3
fi
echo "sweep: $mod: ok ($reached of $(echo "$sites" | wc -w) sites reached)"
