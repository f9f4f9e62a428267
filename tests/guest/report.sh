# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The runner's own lines (report, scripts/guest/report.sh): they go through
# the kernel log, whole, so that no kernel message cuts one and the reboot
# loses none of them.

# This run's header line is a record of the kernel log, at its start.
test_report_lines_are_kernel_log_records() {
	dmesg | grep -Eq "^(\[ *[0-9]+\.[0-9]+\] )?guest-test: # kernel '[^']*', tests " ||
		fail "the runner's header is not in the kernel log: $(dmesg | grep 'guest-test' | head -n 3)"
}

# A line longer than a kernel log record can be is cut, not lost.
test_report_cuts_a_long_line() {
	long=$(head -c 2000 /dev/zero | tr '\0' x)
	report "alloctag-report-test: $long"
	got=$(dmesg | sed -n 's/^\(\[ *[0-9]*\.[0-9]*\] \)\{0,1\}alloctag-report-test: //p')
	want="$(head -c 878 /dev/zero | tr '\0' x) [cut]"
	[ "$got" = "$want" ] || fail "got ${#got} characters, expected ${#want}: '$(echo "$got" | cut -c 1-40)...'"
}
