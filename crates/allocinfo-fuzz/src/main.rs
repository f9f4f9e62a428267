//! `allocinfo-fuzz SECONDS [SEED] [--plant-refusal]`: the guest's fuzzer of
//! alloctag's user interfaces (tests/guest/fuzz.sh, Documentation/testing.rst).
//!
//! For SECONDS, threads write grammar-made and mutated commands to the
//! control files `fail`, `capture` and `waste` of /sys/kernel/debug/alloctag
//! and to vm.mem_profiling; call /proc/allocinfo's three ioctls (and
//! unknown ones) with random arguments and user pointers (NULL, unmapped,
//! read-only, straddling a mapping's end); load and unload the test modules
//! of /lib/modules with one finit_module() each (as `loadmod`: busybox
//! insmod retries a failed load); and read every file alloctag has. It
//! checks that a refused write leaves its file's state as it was, that a
//! write of a read-only sysctl fails, that the ioctls fail as the ABI says
//! for bad pointers and filters, that a refused GET_AT leaves GET_NEXT's
//! place, and, every few seconds, a read of /proc/allocinfo with the rules
//! of allocinfo-check (crates/allocinfo-check: the exact format, and every
//! tag of vmlinux and of the loaded modules). Kernel reports are the
//! host's to catch (scripts/run-qemu.sh).
//!
//! The log starts with `fuzz: seed N`; each thread's generator is seeded
//! from N and its index, so a seed gives each thread the same commands
//! again (their interleaving is the scheduler's). A failed check prints
//! `fuzz: FAIL seed N: WHAT` and exits 1; bad usage exits 2.
//!
//! `--plant-refusal` is the check's own test: the control-file threads
//! take every accepted `add` for a refused one, as a kernel that changed
//! state but returned an error would look, and the run must FAIL.

use allocinfo_check::{Kind, check_read, table};
use allocinfo_fuzz::{Ctl, command, shown, state};
use allocinfo_ioctl::abi::*;
use rand::{Rng, RngExt, SeedableRng, rngs::ChaCha8Rng, seq::IndexedRandom};
use std::ffi::CString;
use std::fs;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const DEBUGFS: &str = "/sys/kernel/debug/alloctag";
const ALLOCINFO: &str = "/proc/allocinfo";
const SYSCTL: &str = "/proc/sys/vm/mem_profiling";
const MODDIR: &str = "/lib/modules";

/// A test module and parameters to load it with.
type Module = (&'static str, &'static [&'static str]);

/// The test modules loaded and unloaded, with parameters to pick from.
const MODULES: &[Module] = &[
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

/// How often a Rust module's line may be listed where the sysctl is
/// writable ([`learn`]).
const KEPT_RUST_TAGS: usize = 64;

/// What the threads share.
struct Shared {
    seed: u64,
    deadline: Instant,
    stop: AtomicBool,
    plant_refusal: bool,
    /// vm.mem_profiling is read-only: every write must fail.
    sysctl_ro: bool,
    /// allocinfo-check's table: vmlinux's tags and each module's.
    table: String,
    counts: Mutex<Vec<(String, u64)>>,
    checks: AtomicU64,
}

impl Shared {
    fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed) && Instant::now() < self.deadline
    }

    /// Ends the run: prints the failure with the seed and exits 1.
    fn fail(&self, what: &str) -> ! {
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

    fn count(&self, name: String, n: u64) {
        if let Ok(mut c) = self.counts.lock() {
            c.push((name, n));
        }
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn errname(e: i32) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}

/// A whole read of `path`; None when it cannot be opened or read.
fn read_all(path: &str) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    fs::File::open(path).ok()?.read_to_end(&mut v).ok()?;
    Some(v)
}

/// Leaves nothing armed, selected or loaded.
fn cleanup() {
    for (file, cmd) in [("fail", "clear"), ("capture", "clear"), ("waste", "off")] {
        let _ = fs::write(format!("{DEBUGFS}/{file}"), cmd);
    }
    for (m, _) in MODULES {
        unload(m);
    }
}

fn load(module: &str, params: &str) -> Result<(), i32> {
    let f = fs::File::open(format!("{MODDIR}/{module}.ko"))
        .map_err(|e| e.raw_os_error().unwrap_or(0))?;
    let p = CString::new(params).map_err(|_| libc::EINVAL)?;
    // SAFETY: finit_module(2) with an open file and a NUL-terminated string.
    let r = unsafe { libc::syscall(libc::SYS_finit_module, f.as_raw_fd(), p.as_ptr(), 0) };
    if r == 0 { Ok(()) } else { Err(errno()) }
}

fn unload(module: &str) -> bool {
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
fn learn(kept_rust_tags: bool) -> Result<(String, Vec<&'static Module>), String> {
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

/// Writes commands to control file `ctl` at `path`; after each refused
/// one, the file's state must be what it was before.
fn control(sh: &Shared, mut rng: ChaCha8Rng, ctl: Ctl, path: &str) {
    let mut n = [0u64; 2];
    let c_path = CString::new(path).unwrap_or_default();
    let ro_page = ro_page();
    while sh.running() {
        let before = read_all(path).map(|b| state(ctl, &String::from_utf8_lossy(&b)));
        let (cmd, made) = command(&mut rng, ctl);
        // SAFETY: open(2) of a path.
        let fd = unsafe { libc::open(c_path.as_ptr(), libc::O_WRONLY) };
        if fd < 0 {
            let e = errno();
            if ctl == Ctl::Sysctl && (e == libc::EACCES || e == libc::EPERM) {
                n[1] += 1;
                thread::sleep(Duration::from_millis(50));
                continue;
            }
            sh.fail(&format!("open {path}: {}", errname(e)));
        }
        // What the write passes: the command, a prefix of its count, or a
        // pointer the kernel cannot read.
        let (ptr, len, how): (*const u8, usize, &str) = match rng.random_range(0..40) {
            0 => (std::ptr::null(), cmd.len().max(1), " from NULL"),
            1 => (unmapped(), cmd.len().max(1), " from an unmapped page"),
            2 if !cmd.is_empty() => (ro_page, cmd.len().min(4096), " from a page of zeros"),
            // (Not for fail: a rule's guard is at the command's end, and
            // command() cuts fail's commands before it guards them.)
            3 if !cmd.is_empty() && ctl != Ctl::Fail => {
                (cmd.as_ptr(), rng.random_range(0..cmd.len()), " cut short")
            }
            _ => (cmd.as_ptr(), cmd.len(), ""),
        };
        // SAFETY: write(2) from a buffer of at least len bytes, or from an
        // address the kernel checks.
        let r = unsafe { libc::write(fd, ptr.cast(), len) };
        let e = errno();
        // SAFETY: the fd opened above.
        unsafe { libc::close(fd) };
        let accepted = r >= 0;
        if accepted && ctl == Ctl::Sysctl && sh.sysctl_ro {
            sh.fail(&format!(
                "a write of the read-only vm.mem_profiling succeeded: \"{}\"",
                shown(&cmd, 160)
            ));
        }
        let planted = sh.plant_refusal && accepted && cmd.starts_with(b"add");
        if accepted && !planted {
            n[0] += 1;
            if ctl == Ctl::Sysctl {
                thread::sleep(Duration::from_millis(20));
            }
            // Rules and selections stay until removed: clear now and then so
            // that adds are not all refused for want of a slot.
            if matches!(ctl, Ctl::Fail | Ctl::Capture) && rng.random_bool(0.05) {
                let _ = fs::write(path, "clear");
            }
            continue;
        }
        n[1] += 1;
        let after = read_all(path).map(|b| state(ctl, &String::from_utf8_lossy(&b)));
        if before != after {
            let why = if planted {
                "accepted (taken as refused: --plant-refusal)".to_owned()
            } else {
                errname(e)
            };
            sh.fail(&format!(
                "{} write{how} of {:?} command \"{}\" was refused ({why}) but changed the file: before {:?}, after {:?}",
                ctl.name(),
                made,
                shown(&cmd, 160),
                before.unwrap_or_default(),
                after.unwrap_or_default()
            ));
        }
    }
    sh.count(format!("{} writes accepted", ctl.name()), n[0]);
    sh.count(format!("{} writes refused", ctl.name()), n[1]);
}

/// Maps `pages` read-only pages of zeros and unmaps all but the first `keep`: the address of
/// the first, or null when nothing could be mapped.
fn map_then_unmap(pages: usize, keep: usize) -> *const u8 {
    let len = pages * 4096;
    // SAFETY: a fresh anonymous mapping of `len` bytes; only its first `keep` pages stay mapped
    // (read-only, for the run), and the rest is unmapped at once, its address kept for the
    // kernel to refuse.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return std::ptr::null();
        }
        libc::munmap(p.cast::<u8>().add(keep * 4096).cast(), len - keep * 4096);
        p.cast()
    }
}

/// The address of a page that was mapped and is not any more.
fn unmapped() -> *const u8 {
    map_then_unmap(1, 0)
}

/// A read-only page of zeros, followed by an unmapped one.
fn ro_page() -> *const u8 {
    map_then_unmap(2, 1)
}

fn name(rng: &mut impl Rng) -> [u8; ALLOCINFO_STR_SIZE] {
    let mut out = [0u8; ALLOCINFO_STR_SIZE];
    const NAMES: &[&str] = &[
        "",
        "alloctag_test",
        "dup_mm",
        "copy_process",
        "__d_alloc",
        "alloc_inode",
        "alloctag_test_init",
        "kernel/fork.c",
        "fs/dcache.c",
        "mm/slub.c",
        "mm/vmalloc.c",
        "lib/alloctag/tests/modules/alloctag_test.c",
        "*",
    ];
    match rng.random_range(0..6) {
        0 => rng.fill(&mut out[..]),
        1 => out.fill(b'a'),
        _ => {
            let n = NAMES.choose(rng).copied().unwrap_or("");
            out[..n.len()].copy_from_slice(n.as_bytes());
        }
    }
    out
}

fn random_filter(rng: &mut impl Rng) -> AllocinfoFilter {
    AllocinfoFilter {
        // Most filters match some tags: none, or one field.
        mask: match rng.random_range(0..10) {
            0 => rng.random(),
            1 => 1 << rng.random_range(0..64),
            2 | 3 => rng.random_range(0..=ALLOCINFO_FILTER_MASKS),
            4..=6 => 0,
            _ => 1 << rng.random_range(0..=ALLOCINFO_FILTER_MAX_SIZE),
        },
        fields: AllocinfoTag {
            modname: name(rng),
            function: name(rng),
            filename: name(rng),
            lineno: if rng.random_bool(0.8) {
                rng.random_range(0..3000)
            } else {
                rng.random()
            },
        },
        min_size: if rng.random_bool(0.5) {
            rng.random_range(0..65536)
        } else {
            rng.random()
        },
        max_size: if rng.random_bool(0.5) {
            rng.random_range(0..1 << 30)
        } else {
            rng.random()
        },
        inaccurate: rng.random_range(0..3),
    }
}

fn cut_name(b: &[u8; ALLOCINFO_STR_SIZE]) -> Option<&[u8]> {
    b.iter().position(|&c| c == 0).map(|n| &b[..n])
}

/// Fills `g` from a successful GET_AT or GET_NEXT and checks the answer:
/// each name NUL-terminated, and the filter's exact fields matched.
fn check_answer(sh: &Shared, d: &AllocinfoTagData, f: Option<&AllocinfoFilter>) {
    let t = &d.tag;
    let (Some(m), Some(func), Some(file)) = (
        cut_name(&t.modname),
        cut_name(&t.function),
        cut_name(&t.filename),
    ) else {
        sh.fail(&format!(
            "ioctl answer with a name without a NUL: {:?}",
            shown(&t.function, 64)
        ));
    };
    if func.is_empty() || file.is_empty() {
        sh.fail(&format!(
            "ioctl answer with an empty name: file {:?} line {} function {:?} module {:?} ({} bytes in {} calls)",
            shown(file, 64),
            t.lineno,
            shown(func, 64),
            shown(m, 64),
            d.counter.bytes,
            d.counter.calls,
        ));
    }
    let Some(f) = f else { return };
    let want = |bit: u64, got: &[u8], fld: &[u8; ALLOCINFO_STR_SIZE], what: &str| {
        if f.mask & bit != 0
            && let Some(w) = cut_name(fld)
            && w.len() < ALLOCINFO_STR_SIZE - 1
            && got != w
        {
            sh.fail(&format!(
                "GET_AT/GET_NEXT with {what} {:?} answered {what} {:?}",
                shown(w, 64),
                shown(got, 64)
            ));
        }
    };
    want(
        ALLOCINFO_FILTER_MASK_MODNAME,
        m,
        &f.fields.modname,
        "module",
    );
    want(
        ALLOCINFO_FILTER_MASK_FUNCTION,
        func,
        &f.fields.function,
        "function",
    );
    want(
        ALLOCINFO_FILTER_MASK_FILENAME,
        file,
        &f.fields.filename,
        "file",
    );
    if f.mask & ALLOCINFO_FILTER_MASK_LINENO != 0 && t.lineno != f.fields.lineno {
        sh.fail(&format!(
            "GET_AT/GET_NEXT with line {} answered line {}",
            f.fields.lineno, t.lineno
        ));
    }
}

fn ioctl(fd: i32, cmd: Request, arg: *mut u8) -> Result<(), i32> {
    // SAFETY: the ioctl's argument is a buffer of the size the command
    // names, or an address the kernel must refuse.
    let r = unsafe { libc::ioctl(fd, cmd, arg) };
    if r == 0 { Ok(()) } else { Err(errno()) }
}

fn content_id(fd: i32) -> Option<u64> {
    let mut id = AllocinfoContentId { id: 0 };
    ioctl(fd, ALLOCINFO_IOC_CONTENT_ID, (&raw mut id).cast())
        .ok()
        .map(|_| id.id)
}

/// The ioctls with random commands, arguments and pointers.
fn ioctls(sh: &Shared, mut rng: ChaCha8Rng) {
    let mut n = [0u64; 3];
    let ro = ro_page();
    let ro_end = ro.wrapping_add(4096);
    let mut file = fs::File::open(ALLOCINFO).ok();
    while sh.running() {
        if file.is_none() || rng.random_bool(0.02) {
            file = fs::File::open(ALLOCINFO).ok();
        }
        let Some(fd) = file.as_ref().map(|f| f.as_raw_fd()) else {
            sh.fail("cannot open /proc/allocinfo");
        };
        let cmd = match rng.random_range(0..20) {
            0..=4 => ALLOCINFO_IOC_CONTENT_ID,
            5..=11 => ALLOCINFO_IOC_GET_AT,
            12..=17 => ALLOCINFO_IOC_GET_NEXT,
            18 => libc::_IOWR::<AllocinfoGetAt>(ALLOCINFO_IOC_BASE, rng.random_range(3..256)),
            _ => rng.random::<u32>() as Request,
        };
        let known = [
            ALLOCINFO_IOC_CONTENT_ID,
            ALLOCINFO_IOC_GET_AT,
            ALLOCINFO_IOC_GET_NEXT,
        ]
        .contains(&cmd);
        let mut g = AllocinfoGetAt {
            pos: if rng.random_bool(0.8) {
                rng.random_range(0..200)
            } else {
                rng.random()
            },
            filter: random_filter(&mut rng),
            data: AllocinfoTagData::ZERO,
        };
        let filter_ok = g.filter.mask & !ALLOCINFO_FILTER_MASKS == 0
            && !(g.filter.mask & ALLOCINFO_FILTER_MASK_MIN_SIZE != 0
                && g.filter.mask & ALLOCINFO_FILTER_MASK_MAX_SIZE != 0
                && g.filter.min_size > g.filter.max_size);
        let mut next = AllocinfoTagData::ZERO;
        let mut id = AllocinfoContentId { id: 0 };
        let size = std::mem::size_of::<AllocinfoGetAt>();
        let ptr_kind = rng.random_range(0..12);
        let (arg, bad): (*mut u8, &str) = match ptr_kind {
            0 => (std::ptr::null_mut(), "NULL"),
            1 => (unmapped().cast_mut(), "an unmapped page"),
            2 => (ro.cast_mut(), "a read-only page"),
            3 => (
                ro_end.wrapping_sub(rng.random_range(1..size)).cast_mut(),
                "a read-only page's end",
            ),
            4 => (0xffff_8880_0000_0000usize as *mut u8, "a kernel address"),
            _ if cmd == ALLOCINFO_IOC_GET_NEXT => ((&raw mut next).cast(), ""),
            _ if cmd == ALLOCINFO_IOC_CONTENT_ID => ((&raw mut id).cast(), ""),
            _ => ((&raw mut g).cast(), ""),
        };
        let r = ioctl(fd, cmd, arg);
        n[usize::from(r.is_err())] += 1;
        if !known {
            if r != Err(libc::ENOTTY) {
                sh.fail(&format!(
                    "unknown ioctl {cmd:#x} on /proc/allocinfo: {:?}, not ENOTTY",
                    r.map_err(errname)
                ));
            }
            continue;
        }
        if !bad.is_empty() {
            // Every command writes its answer out: a pointer it cannot
            // write to must fail, and with EFAULT unless the filter or the
            // position was refused first (GET_AT reads before it writes),
            // or the walk was at its end (GET_NEXT).
            let may = match (cmd, ptr_kind) {
                (c, 2 | 3) if c == ALLOCINFO_IOC_GET_AT => {
                    vec![libc::EFAULT, libc::EINVAL, libc::ENOENT]
                }
                (c, _) if c == ALLOCINFO_IOC_GET_NEXT => vec![libc::EFAULT, libc::ENOENT],
                _ => vec![libc::EFAULT],
            };
            match r {
                Ok(()) => sh.fail(&format!("ioctl {cmd:#x} with {bad} succeeded")),
                Err(e) if !may.contains(&e) => sh.fail(&format!(
                    "ioctl {cmd:#x} with {bad}: {}, not EFAULT",
                    errname(e)
                )),
                Err(_) => continue,
            }
        }
        match cmd {
            c if c == ALLOCINFO_IOC_CONTENT_ID => {
                if let Err(e) = r {
                    sh.fail(&format!("CONTENT_ID: {}", errname(e)));
                }
            }
            c if c == ALLOCINFO_IOC_GET_AT => match r {
                Ok(()) if !filter_ok => sh.fail(&format!(
                    "GET_AT took a bad filter: mask {:#x} min {} max {}",
                    g.filter.mask, g.filter.min_size, g.filter.max_size
                )),
                Ok(()) => {
                    n[2] += 1;
                    check_answer(sh, &g.data, Some(&g.filter));
                    refused_get_at_keeps_place(sh, &mut rng, fd, &g);
                }
                Err(e) if e == libc::EINVAL && !filter_ok => {}
                Err(e) if e == libc::ENOENT && filter_ok => {}
                Err(e) => sh.fail(&format!(
                    "GET_AT (mask {:#x}, pos {}): {}",
                    g.filter.mask,
                    g.pos,
                    errname(e)
                )),
            },
            _ => match r {
                Ok(()) => check_answer(sh, &next, None),
                Err(e) if e == libc::ENOENT => {}
                Err(e) => sh.fail(&format!("GET_NEXT: {}", errname(e))),
            },
        }
    }
    sh.count("ioctls succeeded".into(), n[0]);
    sh.count("ioctls refused".into(), n[1]);
    sh.count("ioctl GET_AT answers checked".into(), n[2]);
}

/// After GET_AT answered tag P, a GET_AT refused before it looks at the
/// tags (a bad filter, an argument it cannot read) must leave the place:
/// GET_NEXT then answers what GET_AT at P + 1 answers on another file,
/// unless tags came or went meanwhile (the content id moved). Only for
/// filters on names and lines: sizes and accuracy move by themselves.
fn refused_get_at_keeps_place(sh: &Shared, rng: &mut impl Rng, fd: i32, g: &AllocinfoGetAt) {
    let moving = ALLOCINFO_FILTER_MASK_MIN_SIZE
        | ALLOCINFO_FILTER_MASK_MAX_SIZE
        | ALLOCINFO_FILTER_MASK_INACCURATE;
    if g.filter.mask & moving != 0 || !rng.random_bool(0.3) {
        return;
    }
    let Some(id0) = content_id(fd) else { return };
    let mut first = AllocinfoGetAt {
        pos: g.pos,
        filter: g.filter,
        data: AllocinfoTagData::ZERO,
    };
    if ioctl(fd, ALLOCINFO_IOC_GET_AT, (&raw mut first).cast()).is_err() {
        return;
    }
    let (arg, how): (*mut u8, &str) = if rng.random_bool(0.5) {
        (std::ptr::null_mut(), "from NULL")
    } else {
        (unmapped().cast_mut(), "from an unmapped page")
    };
    let mut bad = AllocinfoGetAt {
        pos: 0,
        filter: AllocinfoFilter {
            mask: 1 << 40,
            ..g.filter
        },
        data: AllocinfoTagData::ZERO,
    };
    let (r, how) = if rng.random_bool(0.5) {
        (ioctl(fd, ALLOCINFO_IOC_GET_AT, arg), how)
    } else {
        (
            ioctl(fd, ALLOCINFO_IOC_GET_AT, (&raw mut bad).cast()),
            "with an unknown mask bit",
        )
    };
    if r.is_ok() {
        sh.fail(&format!("GET_AT {how} succeeded"));
    }
    let mut next = AllocinfoTagData::ZERO;
    let rn = ioctl(fd, ALLOCINFO_IOC_GET_NEXT, (&raw mut next).cast());
    let Ok(other) = fs::File::open(ALLOCINFO) else {
        return;
    };
    let mut want = AllocinfoGetAt {
        pos: g.pos + 1,
        filter: g.filter,
        data: AllocinfoTagData::ZERO,
    };
    let rw = ioctl(
        other.as_raw_fd(),
        ALLOCINFO_IOC_GET_AT,
        (&raw mut want).cast(),
    );
    if content_id(fd) != Some(id0) {
        return;
    }
    let same = match (rn, rw) {
        (Ok(()), Ok(())) => next.tag == want.data.tag,
        (Err(a), Err(b)) => a == b,
        _ => false,
    };
    if !same {
        sh.fail(&format!(
            "a GET_AT refused {how} moved GET_NEXT: after pos {} (mask {:#x}) it answered {:?} line {} ({:?}), GET_AT at pos {} answers {:?} line {} ({:?})",
            g.pos,
            g.filter.mask,
            shown(cut_name(&next.tag.function).unwrap_or_default(), 64),
            next.tag.lineno,
            rn.map_err(errname),
            g.pos + 1,
            shown(cut_name(&want.data.tag.function).unwrap_or_default(), 64),
            want.data.tag.lineno,
            rw.map_err(errname),
        ));
    }
}

/// alloctag_test's file that allocates at hold_object()'s call site in
/// its writer's context (N more objects, 64 at most; 0 frees them).
const HOLD: &str = "/sys/kernel/debug/alloctag_test/hold";

/// Loads and unloads the test modules, with random parameters; while
/// alloctag_test is loaded, allocates and frees at its hold_object() call
/// site, which fault-injection rules and capture selections may select.
fn modules(sh: &Shared, mut rng: ChaCha8Rng, mods: &[&Module]) {
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

/// Reads every file, whole or in random pieces at random offsets; checks
/// a whole read of /proc/allocinfo every few seconds.
fn reader(sh: &Shared, mut rng: ChaCha8Rng) {
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

fn check_allocinfo(sh: &Shared) {
    let Some(read) = read_all(ALLOCINFO) else {
        sh.fail("cannot read /proc/allocinfo");
    };
    if let Err(e) = check_read(&read, &sh.table, false) {
        let _ = fs::write("/tmp/fuzz-allocinfo", &read);
        sh.fail(&format!(
            "allocinfo-check on /proc/allocinfo (kept in /tmp/fuzz-allocinfo): {e}"
        ));
    }
    sh.checks.fetch_add(1, Ordering::Relaxed);
}

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
