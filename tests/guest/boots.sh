# SPDX-License-Identifier: GPL-2.0
#
# Boots of the test kernel with other command lines, sourced by
# scripts/test.sh, which defines boot(). Each runs the test_boot_* functions
# matching its alloctag_tests= pattern.
