// SPDX-License-Identifier: GPL-2.0
//! The test modules of /lib/modules: loaded and unloaded with one
//! finit_module() each, the tags each adds learnt for allocinfo-check's
//! table before the run ([`learn`]), and the thread that churns them during
//! it ([`modules`]).

use crate::shared::{ALLOCINFO, Shared, errname, errno, read_all};
use allocinfo_check::{Kind, table};
use rand::{RngExt, rngs::ChaCha8Rng, seq::IndexedRandom};
use std::ffi::CString;
use std::fs;
use std::os::fd::AsRawFd;

const MODDIR: &str = "/lib/modules";

/// A test module and parameters to load it with.
type Module = (&'static str, &'static [&'static str]);

/// The test modules loaded and unloaded, with parameters to pick from.
pub(crate) const MODULES: &[Module] = &[
    (
        "alloctag_test",
        &[
            "",
            "hold=1",
            "cache=1",
            "longname=1",
            "leak=1",
            "hold=x",
            "nosuch=1",
        ],
    ),
    ("alloctag_holder", &[""]),
    ("alloctag_errpath", &["", "bogus"]),
    ("alloctag_rust_sample", &[""]),
    ("alloctag_rust_plain", &[""]),
];

/// How often a Rust module's line may be listed where the sysctl is
/// writable ([`learn`]).
const KEPT_RUST_TAGS: usize = 64;

fn load(module: &str, params: &str) -> Result<(), i32> {
    let f = fs::File::open(format!("{MODDIR}/{module}.ko"))
        .map_err(|e| e.raw_os_error().unwrap_or(0))?;
    let p = CString::new(params).map_err(|_| libc::EINVAL)?;
    // SAFETY: finit_module(2) with an open file and a NUL-terminated string.
    let r = unsafe { libc::syscall(libc::SYS_finit_module, f.as_raw_fd(), p.as_ptr(), 0) };
    if r == 0 { Ok(()) } else { Err(errno()) }
}

pub(crate) fn unload(module: &str) -> bool {
    let Ok(name) = CString::new(module) else {
        return false;
    };
    // SAFETY: delete_module(2) with a NUL-terminated name.
    unsafe { libc::syscall(libc::SYS_delete_module, name.as_ptr(), libc::O_NONBLOCK) == 0 }
}

fn loaded(module: &str) -> bool {
    fs::metadata(format!("/sys/module/{module}")).is_ok()
}

/// allocinfo-check's table: vmlinux's tags (V) from a read without test
/// modules, and each test module's (C: at most once, gone when unloaded)
/// from a read while it alone is loaded. The modules that do not load are
/// left out of the run.
///
/// With `kept_rust_tags` (vm.mem_profiling writable, so that a free made
/// while profiling is off leaves its call site's counters up) a Rust
/// module's line may be listed up to [`KEPT_RUST_TAGS`] times: a module's
/// dynamic tags whose counters do not read zero at unload stay listed
/// (Documentation/alloctag.rst, "Rust call sites": "Module unload"), and
/// the next load of the module makes the line's tag again.
pub(crate) fn learn(kept_rust_tags: bool) -> Result<(String, Vec<&'static Module>), String> {
    for (m, _) in MODULES {
        unload(m);
    }
    let base = read_all(ALLOCINFO).ok_or("cannot read /proc/allocinfo")?;
    let mut t = table(Kind::Vmlinux, &base, None)?;
    let mut mods = Vec::new();
    for entry in MODULES {
        let m = entry.0;
        if let Err(e) = load(m, "") {
            println!("fuzz: # {m} does not load ({}): left out", errname(e));
            continue;
        }
        let read = read_all(ALLOCINFO).ok_or("cannot read /proc/allocinfo")?;
        let rows = table(Kind::Churned, &read, Some(m));
        if !unload(m) {
            return Err(format!("cannot unload {m}: {}", errname(errno())));
        }
        for row in rows?.lines() {
            match row.split_once("\t1\t") {
                Some((kind, info)) if kept_rust_tags && info.contains(".rs:") => {
                    t.push_str(&format!("{kind}\t{KEPT_RUST_TAGS}\t{info}\n"))
                }
                _ => {
                    t.push_str(row);
                    t.push('\n');
                }
            }
        }
        mods.push(entry);
    }
    Ok((t, mods))
}

/// alloctag_test's file that allocates at hold_object()'s call site in
/// its writer's context (N more objects, 64 at most; 0 frees them).
const HOLD: &str = "/sys/kernel/debug/alloctag_test/hold";

/// Loads and unloads the test modules, with random parameters; while
/// alloctag_test is loaded, allocates and frees at its hold_object() call
/// site, which fault-injection rules and capture selections may select.
pub(crate) fn modules(sh: &Shared, mut rng: ChaCha8Rng, mods: &[&Module]) {
    let mut n = [0u64; 4];
    while sh.running() {
        if rng.random_bool(0.5) {
            let units: u32 = rng.random_range(0..=8);
            if fs::write(HOLD, units.to_string()).is_ok() {
                n[3] += 1;
            }
            continue;
        }
        let Some((m, params)) = mods.choose(&mut rng).copied() else {
            return;
        };
        if loaded(m) {
            n[2] += u64::from(unload(m));
        } else {
            let p = params.choose(&mut rng).copied().unwrap_or("");
            n[usize::from(load(m, p).is_err())] += 1;
        }
    }
    sh.count("module loads".into(), n[0]);
    sh.count("module loads failed".into(), n[1]);
    sh.count("module unloads".into(), n[2]);
    sh.count("hold writes accepted".into(), n[3]);
}
