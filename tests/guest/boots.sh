# SPDX-License-Identifier: GPL-2.0
#
# Boots of the test kernel with other command lines, sourced by
# scripts/test.sh, which defines boot(). Each runs the test_boot_* functions
# of tests/guest/boot.sh that its alloctag_tests= pattern selects.

boot param-0 sysctl.vm.mem_profiling=0 'alloctag_tests=test_boot_param_0_*'
boot param-1 sysctl.vm.mem_profiling=1 'alloctag_tests=test_boot_param_1_*'
boot param-never sysctl.vm.mem_profiling=never 'alloctag_tests=test_boot_param_never_*'
boot param-junk sysctl.vm.mem_profiling=junk 'alloctag_tests=test_boot_param_junk_*'
