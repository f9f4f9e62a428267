#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# In the guest, for scripts/sweep.sh: runs the error-path sweeper on each
# module of alloctag_sweep=MODULE[:WORKLOAD][,...] ('+' for spaces in the
# workload). Exits 1 when any sweep failed.
set -u
# One finit_module() per load (tests/guest/tools/loadmod.c).
export INSMOD=loadmod
mods=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	alloctag_sweep=*) mods=${arg#alloctag_sweep=} ;;
	esac
done
rc=0
for m in $(echo "$mods" | tr , ' '); do
	name=${m%%:*}
	workload=
	[ "$name" = "$m" ] || workload=$(echo "${m#*:}" | tr + ' ')
	/alloctag/sweep-error-paths.sh ${workload:+-w "$workload"} "/lib/modules/$name.ko" || rc=1
done
exit $rc
