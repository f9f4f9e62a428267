# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The runner's own lines (report, scripts/guest/report.sh): they go through
# the kernel log, whole, so that no kernel message cuts one and the reboot
# loses none of them.

# The runner's lines are records of the kernel log: the one it wrote last
# before this test (the header, or the verdict of the test before, which
# comes after anything that test cleared with dmesg -c) is there.
test_report_lines_are_kernel_log_records() {
	dmesg | grep -Eq "^(\[ *[0-9]+\.[0-9]+\] )?guest-test: (# kernel '|(not )?ok [0-9]+ test_)" ||
		fail "no line of the runner in the kernel log: $(dmesg | tail -n 3)"
}

# A line longer than a kernel log record can be is cut, not lost.
test_report_cuts_a_long_line() {
	long=$(head -c 2000 /dev/zero | tr '\0' x)
	report "alloctag-report-test: $long"
	got=$(dmesg | sed -n 's/^\(\[ *[0-9]*\.[0-9]*\] \)\{0,1\}alloctag-report-test: //p')
	want="$(head -c 878 /dev/zero | tr '\0' x) [cut]"
	[ "$got" = "$want" ] || fail "got ${#got} characters, expected ${#want}: '$(echo "$got" | cut -c 1-40)...'"
}
