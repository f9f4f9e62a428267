#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# In-guest test runner. Sources every tests/*.sh and runs each function named
# test_* in a subshell; a function passes when it returns 0. The host counts
# the "guest-test: ok" and "guest-test: not ok" lines.
#
# alloctag_tests=PATTERN on the kernel command line runs only the functions
# matching the shell pattern (default: test_*, less the boot_* ones that the
# host runs in boots of their own).

set -f # patterns stay patterns
pattern='test_*'
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	alloctag_tests=*) pattern=${arg#alloctag_tests=} ;;
	esac
done
set +f

passed=0
failed=0
for file in /alloctag/tests/*.sh; do
	. "$file"
done
# ash cannot list functions, so they are found in the files.
for t in $(sed -n 's/^\(test_[a-zA-Z0-9_]*\) *().*/\1/p' /alloctag/tests/*.sh); do
	# shellcheck disable=SC2254
	case "$t" in
	$pattern) ;;
	*) continue ;;
	esac
	if [ "$pattern" = 'test_*' ]; then
		case "$t" in test_boot_*) continue ;; esac
	fi
	out=$( (set -e; "$t") 2>&1)
	if [ $? -eq 0 ]; then
		echo "guest-test: ok - $t"
		passed=$((passed + 1))
	else
		echo "guest-test: not ok - $t"
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/guest-test: #   /'
		failed=$((failed + 1))
	fi
done
echo "guest-test: summary $passed passed, $failed failed"
[ "$failed" -eq 0 ]
