// SPDX-License-Identifier: GPL-2.0

//! The control file, `/sys/kernel/debug/alloctag/fail`.
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)
//!
//! debugfs, as failslab and fail_page_alloc: fault injection is a testing tool, and debugfs
//! is root's and absent where lockdown forbids such tools. Mode 0600, and writes also need
//! `CAP_SYS_ADMIN`, as the kernel's fault-injection knobs do. One command per write:
//!
//! - `add SELECTOR... [probability=P] [interval=N] [times=N] [space=N] [verbose=N] [pid=N]`
//! - `remove ID`
//! - `clear`
//!
//! A bad command fails with `EINVAL` (or `EEXIST`, `ENOSPC`), logs why, and changes nothing.
//! Reading lists each rule and its armed sites:
//!
//! ```text
//! rule 1 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=2 sites=1 unarmed=0 select=module:m func:f
//! site rule=1 injected=2 lib/m.c:42 [m] func:f
//! ```

use super::{arm, disarm, disarm_all, rule::Config, sites, MAX_RULES, RULES};
use crate::{
    codetag::{self, Selection, MAX_SELECTORS},
    seq::SeqWriter,
};
use core::{
    ffi::{c_int, c_void},
    fmt::Write,
};
use kernel::{bindings, c_str, prelude::*, uaccess::UserSlice};

/// The longest command accepted.
const MAX_COMMAND: usize = 1024;

/// Splits `text` into words separated by blanks.
fn words(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
}

/// A parsed command.
enum Command {
    Add(Selection, Config),
    Remove(u32),
    Clear,
}

/// Parses one command; every word must be understood.
fn parse(text: &[u8]) -> Result<Command> {
    let mut it = words(text);
    match it.next() {
        Some(b"add") => {
            let mut config = Config::default();
            let mut selectors = KVec::<&[u8]>::with_capacity(MAX_SELECTORS + 1, GFP_KERNEL)?;
            for word in it {
                if word.contains(&b'=') {
                    config.set(word)?;
                } else {
                    selectors.push(word, GFP_KERNEL)?;
                }
            }
            Ok(Command::Add(
                Selection::parse(selectors.iter().copied())?,
                config,
            ))
        }
        Some(b"remove") => {
            let id = it.next().ok_or(EINVAL)?;
            let id: u32 = core::str::from_utf8(id)
                .map_err(|_| EINVAL)?
                .parse()
                .map_err(|_| EINVAL)?;
            if it.next().is_some() || id == 0 || id as usize > MAX_RULES {
                return Err(EINVAL);
            }
            Ok(Command::Remove(id))
        }
        Some(b"clear") if it.next().is_none() => Ok(Command::Clear),
        _ => Err(EINVAL),
    }
}

/// Runs one command.
fn run(text: &[u8]) -> Result {
    match parse(text)? {
        Command::Add(selection, config) => {
            let (id, matched) = arm(selection, &config)?;
            let unarmed = sites::unarmed(id as usize - 1);
            if unarmed > 0 {
                pr_warn!("fail: rule {id}: {unarmed} matching sites left unarmed: no slot left\n");
            }
            pr_info!(
                "fail: rule {id} armed: {} sites match, {} armed\n",
                matched.tags,
                matched.marked
            );
            Ok(())
        }
        Command::Remove(id) => disarm(id),
        Command::Clear => {
            disarm_all();
            Ok(())
        }
    }
}

/// Shows the rules and their sites.
fn show(w: &mut impl Write) -> core::fmt::Result {
    let registry = codetag::read();
    for (index, rule) in RULES.iter().enumerate() {
        let id = index as u32 + 1;
        let Some(selection) = registry.selection(&sites::MARKER, id) else {
            continue;
        };
        let c = rule.config();
        let mut armed = 0usize;
        sites::for_each(index, |_, _| armed += 1);
        writeln!(
            w,
            "rule {id} probability={} interval={} times={} space={} verbose={} pid={} \
             injected={} sites={armed} unarmed={} select={selection}",
            c.probability,
            c.interval,
            c.times,
            c.space,
            c.verbose,
            c.pid,
            rule.injected(),
            sites::unarmed(index),
        )?;
        let mut result = Ok(());
        sites::for_each(index, |tag, injected| {
            if result.is_ok() {
                result = writeln!(w, "site rule={id} injected={injected} {tag}");
            }
        });
        result?;
    }
    Ok(())
}

/// seq_file's `show` of the control file.
///
/// # Safety
///
/// Called by seq_file with a valid seq_file.
unsafe extern "C" fn show_file(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
    // SAFETY: seq_file calls `show` with a valid `m`.
    let mut w = unsafe { SeqWriter::new(m) };
    let _ = show(&mut w);
    0
}

/// `open` of the control file.
///
/// # Safety
///
/// Called by debugfs with a valid inode and file.
unsafe extern "C" fn open(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    // SAFETY: `file` is being opened; `show_file` is a valid `show`.
    unsafe { bindings::single_open(file, Some(show_file), core::ptr::null_mut()) }
}

/// `write` of the control file: one command.
///
/// # Safety
///
/// Called by the VFS with a valid file and a user buffer of `count` bytes.
unsafe extern "C" fn write(
    _file: *mut bindings::file,
    buf: *const kernel::ffi::c_char,
    count: usize,
    _ppos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: Checking a capability of `current` has no precondition.
    if !unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as c_int) } {
        return EPERM.to_errno() as isize;
    }
    if count > MAX_COMMAND {
        pr_warn!("fail: command longer than {MAX_COMMAND} bytes refused\n");
        return EINVAL.to_errno() as isize;
    }
    let mut text = KVec::new();
    if let Err(e) = UserSlice::new(buf as usize, count).read_all(&mut text, GFP_KERNEL) {
        return e.to_errno() as isize;
    }
    match run(&text) {
        Ok(()) => count as isize,
        Err(e) => {
            let shown = core::str::from_utf8(&text)
                .unwrap_or("(not UTF-8)")
                .trim_end();
            pr_warn!("fail: '{shown}' refused: {e:?}\n");
            e.to_errno() as isize
        }
    }
}

/// The control file's operations: a `file_operations` holds a module pointer, so is not
/// `Sync` by itself.
#[repr(transparent)]
struct Fops(bindings::file_operations);

// SAFETY: The operations are never written, and their module pointer is null.
unsafe impl Sync for Fops {}

static FOPS: Fops = Fops(bindings::file_operations {
    open: Some(open),
    read: Some(bindings::seq_read),
    write: Some(write),
    llseek: Some(bindings::seq_lseek),
    release: Some(bindings::single_release),
    // SAFETY: All-zero is a valid `file_operations`: no owner (built in), no other callbacks.
    ..unsafe { core::mem::zeroed() }
});

/// Creates `/sys/kernel/debug/alloctag/fail`. Without debugfs (disabled or locked down) there
/// is no control file, and nothing is ever armed.
pub(crate) fn register() -> Result {
    // SAFETY: The names are static; a null parent is debugfs's root.
    let dir = unsafe {
        bindings::debugfs_create_dir(c_str!("alloctag").as_char_ptr(), core::ptr::null_mut())
    };
    // SAFETY: `dir` is a dentry or an error pointer, which `debugfs_create_file` accepts;
    // `FOPS` is static.
    unsafe {
        bindings::debugfs_create_file(
            c_str!("fail").as_char_ptr(),
            0o600,
            dir,
            core::ptr::null_mut(),
            &FOPS.0,
        )
    };
    Ok(())
}
