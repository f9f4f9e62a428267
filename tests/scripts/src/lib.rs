// SPDX-License-Identifier: GPL-2.0

//! Host tests of the build and test scripts' shared shell functions (scripts/lib.sh), and of
//! contrib/syzkaller's descriptions against the sources they describe, in `tests/`. The library
//! is empty: it makes cargo print a "Running unittests" line that names this package before its
//! tests, which scripts/manifest.sh reads the package from (without it, they were listed under
//! the package run before them).
