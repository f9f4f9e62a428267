# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# report LINE: puts LINE on the console for the host to read, through the
# kernel log. Sourced by /init, the test runner (tests/guest/run.sh) and the
# smoke test; installed as /alloctag/report.sh.
#
# Not through the console's tty: the tty sends a line in pieces, one transmit
# interrupt at a time, so a kernel message printed meanwhile lands inside it
# and the host no longer finds the line; and what the tty still held when
# /init rebooted was lost (a CI boot lost its last three lines, its verdict
# among them). A kernel log record reaches the console whole, in order with
# the kernel's own messages and before the reboot's. /dev/kmsg refuses a
# record over 1024 bytes: a longer line is cut to 900 characters. Each call
# opens /dev/kmsg anew, so its rate limit (per open file) never applies.
# The record's level is KERN_CRIT ("<2>"): a console prints a record only
# below its console_loglevel, which `quiet` (the demo's) lowers to 4 and
# `loglevel=3` to 3; at the default level (4, KERN_WARNING) the demo's
# verdict never reached the host. Without /dev/kmsg the line goes to
# standard output.
report() {
	_report=$*
	[ "${#_report}" -le 900 ] || _report="${_report:0:900} [cut]"
	printf '<2>%s\n' "$_report" 2>/dev/null >/dev/kmsg || printf '%s\n' "$_report"
}
