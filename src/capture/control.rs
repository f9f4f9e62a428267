// SPDX-License-Identifier: GPL-2.0

//! The debugfs files of capture, next to fault injection's `fail`:
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)
//!
//! - `/sys/kernel/debug/alloctag/capture` (0600; writes need `CAP_SYS_ADMIN`), one command per
//!   write: `add SELECTOR...`, `remove ID`, `clear`, `limit N`. A bad command fails with
//!   `EINVAL` (or `EEXIST`, `ENOSPC`, `EBUSY`, `ENOENT`), logs why, and changes nothing.
//!   Reading lists the pool and each selection with its sites:
//!
//!   ```text
//!   capture limit=4096 size=4096 used=3 dropped=0 busy=0
//!   selection 1 sites=1 unmarked=0 select=module:m func:f
//!   site selection=1 live=3 live_bytes=192 untracked=0 untracked_bytes=0 lib/m.c:42 [m] func:f
//!   ```
//!
//! - `live`, `live_stacks`, `live_processes` (0400): the reports ([`super::report`]).
//!
//! debugfs, as for fault injection: a debugging tool, root's, absent under lockdown.

use super::{report, report::View, sites};
use crate::{
    codetag::{self, Selection, MAX_SELECTORS},
    seq::SeqWriter,
};
use core::{
    ffi::{c_int, c_void},
    fmt::Write,
};
use kernel::{bindings, c_str, prelude::*, str::CStr, uaccess::UserSlice};

/// The longest command accepted.
const MAX_COMMAND: usize = 1024;

/// A parsed command.
enum Command {
    Add(Selection),
    Remove(u32),
    Clear,
    Limit(usize),
}

/// Parses a decimal number word.
fn number<T: core::str::FromStr>(word: Option<&[u8]>) -> Result<T> {
    core::str::from_utf8(word.ok_or(EINVAL)?)
        .map_err(|_| EINVAL)?
        .parse()
        .map_err(|_| EINVAL)
}

/// Parses one command; every word must be understood.
fn parse(text: &[u8]) -> Result<Command> {
    let mut it = text
        .split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    let command = match it.next() {
        Some(b"add") => {
            let mut selectors = KVec::<&[u8]>::with_capacity(MAX_SELECTORS + 1, GFP_KERNEL)?;
            for word in it.by_ref() {
                selectors.push(word, GFP_KERNEL)?;
            }
            Command::Add(Selection::parse(selectors.iter().copied())?)
        }
        Some(b"remove") => Command::Remove(number(it.next())?),
        Some(b"clear") => Command::Clear,
        Some(b"limit") => Command::Limit(number(it.next())?),
        _ => return Err(EINVAL),
    };
    if it.next().is_some() {
        return Err(EINVAL);
    }
    Ok(command)
}

/// Runs one command.
pub(crate) fn run(text: &[u8]) -> Result {
    match parse(text)? {
        Command::Add(selection) => {
            let (id, matched) = super::add(selection)?;
            let unmarked = sites::unmarked(id);
            if unmarked > 0 {
                pr_warn!("capture: selection {id}: {unmarked} matching sites not captured: no slot left\n");
            }
            pr_info!(
                "capture: selection {id}: {} sites match, {} captured\n",
                matched.tags,
                matched.marked
            );
            Ok(())
        }
        Command::Remove(id) => super::remove(id),
        Command::Clear => {
            super::clear();
            Ok(())
        }
        Command::Limit(n) => super::set_limit(n),
    }
}

/// Shows the pool, the selections and their sites.
fn show(w: &mut impl Write) -> core::fmt::Result {
    let registry = codetag::read();
    let (used, size, dropped, busy) = super::stats();
    writeln!(
        w,
        "capture limit={} size={size} used={used} dropped={dropped} busy={busy}",
        super::limit()
    )?;
    let records = report::snapshot().map_err(|_| core::fmt::Error)?;
    for id in super::ids(&registry) {
        let Some(selection) = registry.selection(&sites::MARKER, id) else {
            continue;
        };
        let mut n = 0usize;
        sites::for_each(|owner, _| n += usize::from(owner == id));
        writeln!(
            w,
            "selection {id} sites={n} unmarked={} select={selection}",
            sites::unmarked(id)
        )?;
        let mut result = Ok(());
        sites::for_each(|owner, tag| {
            if owner != id || result.is_err() {
                return;
            }
            let mine = records.iter().filter(|r| core::ptr::eq(r.tag, tag));
            let (live, bytes) = mine.fold((0usize, 0usize), |(n, b), r| (n + 1, b + r.bytes));
            let (untracked, untracked_bytes) = report::untracked(tag, &records);
            result = writeln!(
                w,
                "site selection={id} live={live} live_bytes={bytes} untracked={untracked} \
                 untracked_bytes={untracked_bytes} {tag}"
            );
        });
        result?;
    }
    Ok(())
}

/// Writes the text of the file named `name` into `m`.
///
/// # Safety
///
/// `m` must be a seq_file in its `show` callback.
unsafe fn show_named(m: *mut bindings::seq_file, view: Option<View>) -> c_int {
    // SAFETY: The caller passes a seq_file in `show`.
    let mut w = unsafe { SeqWriter::new(m) };
    let _ = match view {
        None => show(&mut w),
        Some(view) => report::write(&mut w, view),
    };
    0
}

macro_rules! seq_file {
    ($open:ident, $show:ident, $view:expr) => {
        /// seq_file's `show`.
        ///
        /// # Safety
        ///
        /// Called by seq_file with a valid seq_file.
        unsafe extern "C" fn $show(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
            // SAFETY: seq_file calls `show` with a valid `m`.
            unsafe { show_named(m, $view) }
        }

        /// `open` of the file.
        ///
        /// # Safety
        ///
        /// Called by debugfs with a valid inode and file.
        unsafe extern "C" fn $open(
            _inode: *mut bindings::inode,
            file: *mut bindings::file,
        ) -> c_int {
            // SAFETY: `file` is being opened; the `show` is valid.
            unsafe { bindings::single_open(file, Some($show), core::ptr::null_mut()) }
        }
    };
}

seq_file!(open_control, show_control, None);
seq_file!(open_objects, show_objects, Some(View::Objects));
seq_file!(open_stacks, show_stacks, Some(View::Stacks));
seq_file!(open_processes, show_processes, Some(View::Processes));

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
        pr_warn!("capture: command longer than {MAX_COMMAND} bytes refused\n");
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
            pr_warn!("capture: '{shown}' refused: {e:?}\n");
            e.to_errno() as isize
        }
    }
}

/// A file's operations: a `file_operations` holds a module pointer, so is not `Sync` by itself.
#[repr(transparent)]
struct Fops(bindings::file_operations);

// SAFETY: The operations are never written, and their module pointer is null.
unsafe impl Sync for Fops {}

/// Operations of a seq_file opened by `open`, written by `write` if any.
const fn fops(
    open: unsafe extern "C" fn(*mut bindings::inode, *mut bindings::file) -> c_int,
    write: Option<
        unsafe extern "C" fn(
            *mut bindings::file,
            *const kernel::ffi::c_char,
            usize,
            *mut bindings::loff_t,
        ) -> isize,
    >,
) -> Fops {
    Fops(bindings::file_operations {
        open: Some(open),
        read: Some(bindings::seq_read),
        write,
        llseek: Some(bindings::seq_lseek),
        release: Some(bindings::single_release),
        // SAFETY: All-zero is a valid `file_operations`: no owner (built in), no other
        // callbacks.
        ..unsafe { core::mem::zeroed() }
    })
}

static CONTROL: Fops = fops(open_control, Some(write));
static OBJECTS: Fops = fops(open_objects, None);
static STACKS: Fops = fops(open_stacks, None);
static PROCESSES: Fops = fops(open_processes, None);

/// Creates the files in `/sys/kernel/debug/alloctag/`. Without debugfs (disabled or locked
/// down) there are none, and nothing is ever captured.
pub(crate) fn register() -> Result {
    let name = c_str!("alloctag");
    // SAFETY: The name is static; a null parent is debugfs's root.
    let mut dir = unsafe { bindings::debugfs_lookup(name.as_char_ptr(), core::ptr::null_mut()) };
    if dir.is_null() || kernel::error::from_err_ptr(dir).is_err() {
        // SAFETY: As above.
        dir = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), core::ptr::null_mut()) };
    } else {
        // SAFETY: `debugfs_lookup` took a reference; the directory stays, as debugfs's.
        unsafe { bindings::dput(dir) };
    }
    let files: [(&CStr, u16, &'static Fops); 4] = [
        (c_str!("capture"), 0o600, &CONTROL),
        (c_str!("live"), 0o400, &OBJECTS),
        (c_str!("live_stacks"), 0o400, &STACKS),
        (c_str!("live_processes"), 0o400, &PROCESSES),
    ];
    for (name, mode, fops) in files {
        // SAFETY: `dir` is a dentry or an error pointer, which `debugfs_create_file` accepts;
        // the name and the operations are static.
        unsafe {
            bindings::debugfs_create_file(
                name.as_char_ptr(),
                mode,
                dir,
                core::ptr::null_mut(),
                &fops.0,
            )
        };
    }
    Ok(())
}
