// SPDX-License-Identifier: GPL-2.0
//! The reader threads: every file alloctag has, read whole or in random
//! pieces at random offsets, and a whole read of /proc/allocinfo checked
//! with allocinfo-check's rules every few seconds (and at the run's end).

use crate::shared::{ALLOCINFO, Shared, read_all};
use allocinfo_check::check_read;
use rand::{RngExt, rngs::ChaCha8Rng, seq::IndexedRandom};
use std::fs;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The files read.
const READ_FILES: &[&str] = &[
    "/proc/allocinfo",
    "/proc/allocwaste",
    "/proc/sys/vm/mem_profiling",
    "/proc/sys/vm/mem_profiling_compressed",
    "/sys/kernel/debug/alloctag/fail",
    "/sys/kernel/debug/alloctag/capture",
    "/sys/kernel/debug/alloctag/live",
    "/sys/kernel/debug/alloctag/live_stacks",
    "/sys/kernel/debug/alloctag/live_processes",
    "/sys/kernel/debug/alloctag/waste",
    "/sys/kernel/debug/alloctag/dynamic_tags",
];

/// Reads every file, whole or in random pieces at random offsets; checks
/// a whole read of /proc/allocinfo every few seconds.
pub(crate) fn reader(sh: &Shared, mut rng: ChaCha8Rng) {
    let mut n = 0u64;
    let mut last_check = Instant::now();
    let mut buf = vec![0u8; 1 << 16];
    while sh.running() {
        if last_check.elapsed() > Duration::from_secs(5) {
            check_allocinfo(sh);
            last_check = Instant::now();
        }
        let path = READ_FILES.choose(&mut rng).copied().unwrap_or(ALLOCINFO);
        let Ok(f) = fs::File::open(path) else {
            continue;
        };
        let fd = f.as_raw_fd();
        loop {
            let len = *[1usize, 7, 64, 4095, 4096, 65536]
                .choose(&mut rng)
                .unwrap_or(&4096);
            let r = if rng.random_bool(0.1) {
                let off: i64 = rng.random_range(0..1 << 20);
                // SAFETY: pread(2) into buf, of at most its length.
                unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), len, off) }
            } else {
                // SAFETY: read(2) into buf, of at most its length.
                unsafe { libc::read(fd, buf.as_mut_ptr().cast(), len) }
            };
            if r <= 0 || !sh.running() {
                break;
            }
        }
        n += 1;
    }
    sh.count("files read".into(), n);
}

/// How many unloaded instances of a test module's call site may be listed
/// beside the loaded one: a load with `leak=1` (or `hold=1`, until the
/// holder frees) leaves its live call sites listed after the unload, in
/// lines that version 1.0 cannot tell apart (Documentation/alloctag.rst,
/// "Module unload"). A bound, not a count: the fuzzer's loads are random.
const KEPT_INSTANCES: usize = 64;

pub(crate) fn check_allocinfo(sh: &Shared) {
    let Some(read) = read_all(ALLOCINFO) else {
        sh.fail("cannot read /proc/allocinfo");
    };
    if let Err(e) = check_read(&read, &sh.table, false, KEPT_INSTANCES) {
        let _ = fs::write("/tmp/fuzz-allocinfo", &read);
        sh.fail(&format!(
            "allocinfo-check on /proc/allocinfo (kept in /tmp/fuzz-allocinfo): {e}"
        ));
    }
    sh.checks.fetch_add(1, Ordering::Relaxed);
}
