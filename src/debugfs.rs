// SPDX-License-Identifier: GPL-2.0

//! alloctag's directory in debugfs, `/sys/kernel/debug/alloctag/`, and what its control files
//! share: seq_file-backed reads and one command per write.
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)
//!
//! debugfs, as the kernel's failslab and page_owner use it: these are root's debugging tools.
//! Under lockdown (`integrity` or `confidentiality`: both forbid `LOCKDOWN_DEBUGFS`) debugfs
//! still creates them, but 6.12's `debugfs_locked_down()` (fs/debugfs/file.c) refuses with
//! `EPERM` each open of a file whose mode has any bit but the read bits (0444), or that is
//! opened for writing, or whose operations have an ioctl or mmap, and `debugfs_setattr()`
//! (fs/debugfs/inode.c) each change of a file's mode or owner. So the control files (0600)
//! cannot be opened there, not even to read; the read-only ones (0400, 0444) open, and the
//! capture reports refuse their own opens, as they show addresses. debugfs checks at open: a
//! file opened before lockdown was raised stays usable. Booted with `debugfs=off`, debugfs
//! creates nothing.

use core::ffi::c_int;
use kernel::{bindings, c_str, str::CStr};
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
use kernel::{prelude::*, uaccess::UserSlice};

/// The longest command a control file accepts.
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
const MAX_COMMAND: usize = 1024;

/// `open` of a file.
pub(crate) type OpenFn = unsafe extern "C" fn(*mut bindings::inode, *mut bindings::file) -> c_int;

/// `release` of a file.
#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
pub(crate) type ReleaseFn =
    unsafe extern "C" fn(*mut bindings::inode, *mut bindings::file) -> c_int;

/// `write` of a file.
pub(crate) type WriteFn = unsafe extern "C" fn(
    *mut bindings::file,
    *const kernel::ffi::c_char,
    usize,
    *mut bindings::loff_t,
) -> isize;

/// A file's operations: a `file_operations` holds a module pointer, so is not `Sync` by itself.
#[repr(transparent)]
pub(crate) struct Fops(bindings::file_operations);

// SAFETY: The operations are never written, and their module pointer is null.
unsafe impl Sync for Fops {}

impl Fops {
    /// Operations of a seq_file opened by `open` (see [`single_open`]), written by `write` if
    /// any.
    pub(crate) const fn seq(open: OpenFn, write: Option<WriteFn>) -> Self {
        Self(bindings::file_operations {
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

    /// Operations of a seq_file shown item by item (`crate::seq::SeqOps`), opened by `open`,
    /// released by `release`, written by `write` if any.
    #[cfg(CONFIG_ALLOCTAG_CAPTURE)]
    pub(crate) const fn seq_state(
        open: OpenFn,
        release: ReleaseFn,
        write: Option<WriteFn>,
    ) -> Self {
        Self(bindings::file_operations {
            open: Some(open),
            read: Some(bindings::seq_read),
            write,
            llseek: Some(bindings::seq_lseek),
            release: Some(release),
            // SAFETY: As in `seq`.
            ..unsafe { core::mem::zeroed() }
        })
    }
}

/// Defines `$open`, the `open` of a seq_file whose whole text `$show` writes: `$show` takes a
/// `&mut SeqWriter` and returns a `core::fmt::Result`.
macro_rules! single_open {
    ($open:ident, $show:expr) => {
        /// `open` of the file.
        ///
        /// # Safety
        ///
        /// Called by debugfs with a valid inode and file.
        unsafe extern "C" fn $open(
            _inode: *mut kernel::bindings::inode,
            file: *mut kernel::bindings::file,
        ) -> core::ffi::c_int {
            /// seq_file's `show`.
            ///
            /// # Safety
            ///
            /// Called by seq_file with a valid seq_file.
            unsafe extern "C" fn single_open_show(
                m: *mut kernel::bindings::seq_file,
                _v: *mut core::ffi::c_void,
            ) -> core::ffi::c_int {
                // SAFETY: seq_file calls `show` with a valid `m`, used only during the call.
                let mut w = unsafe { $crate::seq::SeqWriter::new(m) };
                let _ = ($show)(&mut w);
                0
            }
            // SAFETY: `file` is being opened; `single_open_show` is a valid `show`.
            unsafe {
                kernel::bindings::single_open(file, Some(single_open_show), core::ptr::null_mut())
            }
        }
    };
}
pub(crate) use single_open;

/// Defines `$name`, the `write` of a control file: one command per write, run by `$run` (a
/// `fn(&[u8]) -> Result`), as [`write_command`] does, `$what` naming the file in messages.
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
macro_rules! command_write {
    ($name:ident, $what:literal, $run:path) => {
        /// `write` of the control file: one command.
        ///
        /// # Safety
        ///
        /// Called by the VFS with a file and a user buffer of `count` bytes.
        unsafe extern "C" fn $name(
            _file: *mut kernel::bindings::file,
            buf: *const kernel::ffi::c_char,
            count: usize,
            _ppos: *mut kernel::bindings::loff_t,
        ) -> isize {
            $crate::debugfs::write_command($what, buf, count, $run)
        }
    };
}
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
pub(crate) use command_write;

/// Creates `name` with `mode` and `fops` in `/sys/kernel/debug/alloctag/`, which the first
/// caller creates, and returns whether it did. Without debugfs (not built, or booted with
/// `debugfs=off`) nothing is created; under lockdown the file is created, and debugfs refuses
/// its opens unless it is read-only (see the module's documentation).
pub(crate) fn create_file(name: &'static CStr, mode: u16, fops: &'static Fops) -> bool {
    let dir_name = c_str!("alloctag");
    // SAFETY: The name is static; a null parent is debugfs's root.
    let mut dir =
        unsafe { bindings::debugfs_lookup(dir_name.as_char_ptr(), core::ptr::null_mut()) };
    if dir.is_null() || kernel::error::from_err_ptr(dir).is_err() {
        // SAFETY: As above.
        dir =
            unsafe { bindings::debugfs_create_dir(dir_name.as_char_ptr(), core::ptr::null_mut()) };
    } else {
        // SAFETY: `debugfs_lookup` took a reference; the directory stays, as debugfs's.
        unsafe { bindings::dput(dir) };
    }
    // SAFETY: `dir` is a dentry or an error pointer, which `debugfs_create_file` accepts; the
    // name and the operations are static.
    let file = unsafe {
        bindings::debugfs_create_file(
            name.as_char_ptr(),
            mode,
            dir,
            core::ptr::null_mut(),
            &fops.0,
        )
    };
    !file.is_null() && kernel::error::from_err_ptr(file).is_ok()
}

/// What a user wrote, as `%*pE` shows it in the log: a byte that is not printable ASCII, or a
/// backslash, as an escape (`\n`, `\t`, `\r`, `\\`, `\ooo`), so that nothing written can start
/// a line of its own or pass for another message.
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
struct Escaped<'a>(&'a [u8]);

#[cfg(CONFIG_ALLOCTAG_SELECTION)]
impl core::fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use core::fmt::Write;
        for &b in self.0 {
            match b {
                b'\n' => f.write_str("\\n")?,
                b'\t' => f.write_str("\\t")?,
                b'\r' => f.write_str("\\r")?,
                b'\\' => f.write_str("\\\\")?,
                b' '..=b'~' => f.write_char(char::from(b))?,
                _ => write!(f, "\\{b:03o}")?,
            }
        }
        Ok(())
    }
}

/// `text` without the white space at its end (`<[u8]>::trim_ascii_end` is from rustc 1.80;
/// 6.12 builds with 1.78).
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
fn trim_end(text: &[u8]) -> &[u8] {
    let len = text
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &text[..len]
}

/// The body of a control file's `write`: reads the command of `count` bytes at the user
/// address `buf` and runs it. Without `CAP_SYS_ADMIN` it fails with `EPERM`; a command `run`
/// refuses fails with its error and a log line "`what`: 'COMMAND' refused: ERROR", one longer
/// than `MAX_COMMAND` with `EINVAL` and a line that says so; each line rate-limited (10 per
/// 5 s, then "alloctag: refused commands: N callbacks suppressed").
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
pub(crate) fn write_command(
    what: &str,
    buf: *const kernel::ffi::c_char,
    count: usize,
    run: impl FnOnce(&[u8]) -> Result,
) -> isize {
    // SAFETY: Checking a capability of `current` has no precondition.
    if !unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as c_int) } {
        return EPERM.to_errno() as isize;
    }
    if count > MAX_COMMAND {
        // SAFETY: Asking a rate limit has no precondition (any context but NMI, as here).
        if unsafe { bindings::alloctag_oversized_log_ratelimit() } {
            pr_warn!("{what}: command longer than {MAX_COMMAND} bytes refused\n");
        }
        return EINVAL.to_errno() as isize;
    }
    let mut text = KVec::new();
    // `UserSlice` checks the user address range as it copies.
    if let Err(e) = UserSlice::new(buf as usize, count).read_all(&mut text, GFP_KERNEL) {
        return e.to_errno() as isize;
    }
    match run(&text) {
        Ok(()) => count as isize,
        Err(e) => {
            // Root's write (`CAP_SYS_ADMIN`, checked above), one line each, as
            // dynamic_debug's control file logs a refused query; rate-limited, as
            // `pr_warn_ratelimited!` would: a loop of bad writes must not flood the log.
            // SAFETY: Asking a rate limit has no precondition (any context but NMI, as here).
            if unsafe { bindings::alloctag_refused_log_ratelimit() } {
                pr_warn!("{what}: '{}' refused: {e:?}\n", Escaped(trim_end(&text)));
            }
            e.to_errno() as isize
        }
    }
}
