#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""KTAP on stdin -> one line "STATUS NAME" per test result, for scripts/manifest.sh.

Usage: ktap-results.py KUNIT_DIR kunit|guest

The KTAP is parsed by the kernel's own parser, KUNIT_DIR/kunit_parser.py
(tools/testing/kunit/, what `kunit.py parse` runs); this only names its
tests and maps their status. STATUS is pass, fail or skip.

  kunit  a KUnit run's KTAP (kernel test suites at the first level, their
         cases below): each case as SUITE.CASE, a parameterised case's
         parameters also as SUITE.CASE.PARAM; the suites themselves are not
         listed (tests/manifest/README)
  guest  tests/guest/run.sh's KTAP: each test by its own name, a test's
         subtests (tests/guest/suites.sh's kunit:SUITE.CASE) after it

Only a test with a result line ("ok N NAME", "not ok N NAME") is listed,
with the status that line gives: one the parser made up for a plan not met,
or whose "# Subtest:" line came but not its result line (a run that ended
inside it), is left out, and the manifest check names it as a test that
did not run.
"""

import io
import sys


def main() -> int:
	if len(sys.argv) != 3 or sys.argv[2] not in ('kunit', 'guest'):
		print(__doc__.split('\n\n')[1], file=sys.stderr)
		return 2
	sys.path.insert(0, sys.argv[1])
	# pylint: disable=import-outside-toplevel,import-error
	import kunit_parser
	from kunit_printer import Printer

	# The parser prints its human-readable report as it goes: not wanted here.
	kunit_parser.stdout = Printer(io.StringIO())
	status = {
		kunit_parser.TestStatus.SUCCESS: 'pass',
		kunit_parser.TestStatus.SKIPPED: 'skip',
	}
	# The parser keeps no mark of a result line; it sets the status from
	# one, and may change it later (a subtest's crash): note it then.
	parse_test_result = kunit_parser.parse_test_result

	def noted_result(lines, test, expected_num):
		found = parse_test_result(lines, test, expected_num)
		if found:
			test.result_line_status = test.status
		return found

	kunit_parser.parse_test_result = noted_result
	root = kunit_parser.parse_run_tests(sys.stdin)
	kunit = sys.argv[2] == 'kunit'

	def walk(test, path, depth):
		for sub in test.subtests:
			name = f'{path}.{sub.name}' if kunit and path else sub.name
			result = getattr(sub, 'result_line_status', None)
			if result and depth >= (2 if kunit else 1):
				print(status.get(result, 'fail'), name)
			walk(sub, name if kunit else '', depth + 1)

	walk(root, '', 1)
	return 0


if __name__ == '__main__':
	sys.exit(main())
