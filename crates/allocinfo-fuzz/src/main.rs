//! `allocinfo-fuzz SECONDS [SEED] [--plant-refusal]`: the guest's fuzzer of
//! alloctag's user interfaces (tests/guest/fuzz.sh, Documentation/testing.rst).
//!
//! For SECONDS, threads write grammar-made and mutated commands to the
//! control files `fail`, `capture` and `waste` of
//! /sys/kernel/debug/alloctag and to vm.mem_profiling; call
//! /proc/allocinfo's ioctls, mainline's three and alloctag's GET_SPLIT (and
//! unknown ones), with random arguments and user pointers (NULL, unmapped,
//! read-only, straddling a mapping's end); load and unload the test modules
//! of /lib/modules with one finit_module() each (as `loadmod`: busybox
//! insmod retries a failed load); and read every file alloctag has. It
//! checks that a refused write leaves its file's state as it was, that a
//! write of a read-only sysctl fails, that the ioctls fail as the ABI says
//! for bad pointers, filters and splits, that a refused GET_AT leaves
//! GET_NEXT's place, that GET_SPLIT writes the width it answers and keeps
//! its filter for GET_NEXT, and, every few seconds, a read of
//! /proc/allocinfo with the rules of allocinfo-check
//! (crates/allocinfo-check: the exact format, and every tag of vmlinux and
//! of the loaded modules). Kernel reports are the host's to catch
//! (scripts/run-qemu.sh).
//!
//! The log starts with `fuzz: seed N`; each thread's generator is seeded
//! from N and its index, so a seed gives each thread the same commands
//! again (their interleaving is the scheduler's). A failed check prints
//! `fuzz: FAIL seed N: WHAT` and exits 1; bad usage exits 2.
//!
//! `--plant-refusal` is the check's own test: the control-file threads
//! take every accepted `add` for a refused one, as a kernel that changed
//! state but returned an error would look, and the run must FAIL.
//!
//! This file holds the arguments, the threads' start and the verdict; the
//! rest is by concern: `shared` (the threads' state, failure and cleanup),
//! `modules` (test module load, unload and churn), `control` (the
//! control-file writes), `userptr` (the bad user pointers), `ioctls` (the
//! ioctls), `split_calls` (the ioctls' GET_SPLIT calls), `split`
//! (GET_SPLIT's arguments and allowed answers) and `reader` (the reads and
//! allocinfo-check's), and the commands' grammars and mutations in the
//! library (`src/lib.rs`).

mod control;
mod ioctls;
mod modules;
mod reader;
mod shared;
mod split;
mod split_calls;
mod userptr;

use allocinfo_fuzz::Ctl;
use control::control;
use ioctls::ioctls;
use modules::{learn, modules};
use rand::{SeedableRng, rngs::ChaCha8Rng};
use reader::{check_allocinfo, reader};
use shared::{DEBUGFS, SYSCTL, Shared, cleanup, read_all};
use std::fs;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

fn usage() -> ! {
    eprintln!("usage: allocinfo-fuzz SECONDS [SEED] [--plant-refusal]");
    std::process::exit(2);
}

fn random_seed() -> u64 {
    let mut b = [0u8; 8];
    if fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok()
    {
        return u64::from_le_bytes(b);
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

fn main() {
    let mut plant_refusal = false;
    let mut nums = Vec::new();
    for a in std::env::args().skip(1) {
        if a == "--plant-refusal" {
            plant_refusal = true;
        } else {
            nums.push(a.parse::<u64>().unwrap_or_else(|_| usage()));
        }
    }
    let (secs, seed) = match nums[..] {
        [s] => (s, random_seed()),
        [s, seed] => (s, seed),
        _ => usage(),
    };
    println!("fuzz: seed {seed}");
    if fs::metadata(DEBUGFS).is_err() {
        // SAFETY: mount(2) of debugfs at its place, with NUL-terminated strings.
        unsafe {
            libc::mount(
                c"none".as_ptr(),
                c"/sys/kernel/debug".as_ptr(),
                c"debugfs".as_ptr(),
                0,
                std::ptr::null(),
            );
        }
    }
    for f in ["fail", "capture", "waste"] {
        if fs::metadata(format!("{DEBUGFS}/{f}")).is_err() {
            println!("fuzz: FAIL seed {seed}: no {DEBUGFS}/{f}");
            std::process::exit(1);
        }
    }
    if let Err(e) = userptr::check_unmapped() {
        println!("fuzz: FAIL seed {seed}: {e}");
        std::process::exit(1);
    }
    cleanup();
    let sysctl_mode = fs::metadata(SYSCTL)
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777);
    let sysctl_ro = sysctl_mode.as_ref().is_ok_and(|m| m & 0o222 == 0);
    let (tbl, mods) = match learn(!sysctl_ro) {
        Ok(x) => x,
        Err(e) => {
            println!("fuzz: FAIL seed {seed}: learning the tags: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "fuzz: {secs} s, {} modules, vm.mem_profiling mode {:o}{}",
        mods.len(),
        sysctl_mode.as_ref().copied().unwrap_or(0),
        if plant_refusal {
            ", planted refusals"
        } else {
            ""
        }
    );

    let sysctl_before = read_all(SYSCTL);
    let sh = Arc::new(Shared {
        seed,
        deadline: Instant::now() + Duration::from_secs(secs),
        stop: AtomicBool::new(false),
        plant_refusal,
        sysctl_ro,
        table: tbl,
        counts: Mutex::new(Vec::new()),
        checks: AtomicU64::new(0),
    });
    let rng_for =
        |i: u64| ChaCha8Rng::seed_from_u64(seed ^ (i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    let mut threads = Vec::new();
    for (i, (ctl, path)) in [
        (Ctl::Fail, format!("{DEBUGFS}/fail")),
        (Ctl::Capture, format!("{DEBUGFS}/capture")),
        (Ctl::Waste, format!("{DEBUGFS}/waste")),
        (Ctl::Sysctl, SYSCTL.to_owned()),
    ]
    .into_iter()
    .enumerate()
    {
        let sh = Arc::clone(&sh);
        let rng = rng_for(i as u64);
        threads.push(thread::spawn(move || control(&sh, rng, ctl, &path)));
    }
    {
        let sh = Arc::clone(&sh);
        let rng = rng_for(10);
        threads.push(thread::spawn(move || ioctls(&sh, rng)));
    }
    {
        let sh = Arc::clone(&sh);
        let rng = rng_for(11);
        threads.push(thread::spawn(move || modules(&sh, rng, &mods)));
    }
    for i in 0..2 {
        let sh = Arc::clone(&sh);
        let rng = rng_for(20 + i);
        threads.push(thread::spawn(move || reader(&sh, rng)));
    }
    for t in threads {
        if t.join().is_err() {
            sh.fail("a thread panicked");
        }
    }
    cleanup();
    check_allocinfo(&sh);
    if sysctl_ro && read_all(SYSCTL) != sysctl_before {
        sh.fail("the read-only vm.mem_profiling changed");
    }
    if let Ok(c) = sh.counts.lock() {
        for (what, n) in c.iter() {
            println!("fuzz: {n} {what}");
        }
    }
    println!(
        "fuzz: {} allocinfo-check reads passed",
        sh.checks.load(Ordering::Relaxed)
    );
    println!("fuzz: ok seed {seed}");
}
