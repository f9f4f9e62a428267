// SPDX-License-Identifier: GPL-2.0
//! The control-file threads: grammar-made and mutated commands written to
//! `fail`, `capture`, `waste` and vm.mem_profiling, from good and bad user
//! pointers; a refused write must leave its file's state as it was, and a
//! write of a read-only sysctl must fail.

use crate::shared::{Shared, errname, errno, read_all};
use crate::userptr::{ro_page, unmapped};
use allocinfo_fuzz::{Ctl, command, shown, state};
use rand::{RngExt, rngs::ChaCha8Rng};
use std::ffi::CString;
use std::fs;
use std::thread;
use std::time::Duration;

/// Writes commands to control file `ctl` at `path`; after each refused
/// one, the file's state must be what it was before.
pub(crate) fn control(sh: &Shared, mut rng: ChaCha8Rng, ctl: Ctl, path: &str) {
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
