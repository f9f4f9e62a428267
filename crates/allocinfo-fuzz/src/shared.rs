// SPDX-License-Identifier: GPL-2.0
//! What the fuzzer's threads share: the paths of alloctag's files, the run's
//! state ([`Shared`]: its seed, deadline, stop flag, allocinfo-check's table
//! and the threads' counts), how a failure ends the run, the errno helpers,
//! and the cleanup that leaves nothing armed, selected or loaded.

use crate::modules::{MODULES, unload};
use std::fs;
use std::io::Read;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

pub(crate) const DEBUGFS: &str = "/sys/kernel/debug/alloctag";
pub(crate) const ALLOCINFO: &str = "/proc/allocinfo";
pub(crate) const SYSCTL: &str = "/proc/sys/vm/mem_profiling";

/// What the threads share.
pub(crate) struct Shared {
    pub(crate) seed: u64,
    pub(crate) deadline: Instant,
    pub(crate) stop: AtomicBool,
    pub(crate) plant_refusal: bool,
    /// vm.mem_profiling is read-only: every write must fail.
    pub(crate) sysctl_ro: bool,
    /// allocinfo-check's table: vmlinux's tags and each module's.
    pub(crate) table: String,
    pub(crate) counts: Mutex<Vec<(String, u64)>>,
    pub(crate) checks: AtomicU64,
}

impl Shared {
    pub(crate) fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed) && Instant::now() < self.deadline
    }

    /// Ends the run: prints the failure with the seed and exits 1.
    pub(crate) fn fail(&self, what: &str) -> ! {
        // The first failure alone is printed; the other threads wait here
        // for the exit.
        if self.stop.swap(true, Ordering::SeqCst) {
            loop {
                thread::sleep(Duration::from_secs(1));
            }
        }
        println!("fuzz: FAIL seed {}: {what}", self.seed);
        cleanup();
        std::process::exit(1);
    }

    pub(crate) fn count(&self, name: String, n: u64) {
        if let Ok(mut c) = self.counts.lock() {
            c.push((name, n));
        }
    }
}

pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

pub(crate) fn errname(e: i32) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}

/// A whole read of `path`; None when it cannot be opened or read.
pub(crate) fn read_all(path: &str) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    fs::File::open(path).ok()?.read_to_end(&mut v).ok()?;
    Some(v)
}

/// Leaves nothing armed, selected or loaded.
pub(crate) fn cleanup() {
    for (file, cmd) in [("fail", "clear"), ("capture", "clear"), ("waste", "off")] {
        let _ = fs::write(format!("{DEBUGFS}/{file}"), cmd);
    }
    for (m, _) in MODULES {
        unload(m);
    }
}
