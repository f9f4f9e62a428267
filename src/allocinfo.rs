// SPDX-License-Identifier: GPL-2.0

//! `/proc/allocinfo`: every allocation tag with its bytes and calls.
//!
//! C headers: [`include/linux/proc_fs.h`](srctree/include/linux/proc_fs.h),
//! [`include/linux/seq_file.h`](srctree/include/linux/seq_file.h)
//!
//! The format is 6.12's, byte for byte: two header lines, then one line per tag,
//! `%12lli %8llu file:line [module] func:name `. Each open file keeps a [`Cursor`] at the tag
//! it stands on, so a read that continues where the last one stopped resumes there instead of
//! walking from the first tag, and no lock is held between reads: the registry is read-locked
//! only while a line is made.

use crate::{
    alloc_tag::{Counters, ALLOC_TAGS},
    codetag::{self, Codetag, ReadPosition},
};
use core::{
    ffi::{c_int, c_void},
    fmt::{self, Write},
};
use kernel::{alloc::flags::GFP_KERNEL, bindings, c_str, prelude::*};

pub(crate) const HEADER: &str = "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n";

/// Writes the line of one tag: `%12lli %8llu `, the tag, a space and a newline, as 6.12 does.
pub(crate) fn write_line(w: &mut impl Write, counters: Counters, tag: &Codetag) -> fmt::Result {
    writeln!(w, "{:12} {:8} {} ", counters.bytes, counters.calls, tag)
}

/// The state of one open `/proc/allocinfo`.
struct ReadState {
    /// Where the reader stands.
    position: ReadPosition,
    /// The line of the tag it stands on.
    line: KVec<u8>,
}

/// Appends formatted text to a line, failing when memory runs out.
pub(crate) struct LineWriter<'a>(pub(crate) &'a mut KVec<u8>);

impl Write for LineWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| fmt::Error)
    }
}

impl ReadState {
    /// Moves to the tag at `pos` and makes its line. Returns `Ok(false)` past the last tag.
    fn seek(&mut self, pos: i64) -> Result<bool> {
        let Some(handle) = ALLOC_TAGS.handle() else {
            return Ok(false);
        };
        let registry = codetag::read();
        let Some(tag) = self.position.seek(&registry, handle, pos) else {
            return Ok(false);
        };
        // SAFETY: Only bytes are in the vector, so dropping none of them is right.
        unsafe { self.line.set_len(0) };
        write_line(&mut LineWriter(&mut self.line), tag.read(), tag.codetag())
            .map_err(|_| ENOMEM)?;
        Ok(true)
    }
}

/// Returns the state of the open file of `m`.
///
/// # Safety
///
/// `m` must be a seq_file opened by [`open`], not yet released, used by one thread at a time
/// (the seq_file's mutex).
unsafe fn state<'a>(m: *mut bindings::seq_file) -> &'a mut ReadState {
    // SAFETY: `open` set `private` to a `ReadState` that lives until `release`, and the caller
    // guarantees exclusive use.
    unsafe { &mut *(*m).private.cast::<ReadState>() }
}

/// Turns the result of a seek into what seq_file's `start` and `next` return.
fn seek_result(state: &mut ReadState, found: Result<bool>) -> *mut c_void {
    match found {
        Ok(true) => (state as *mut ReadState).cast(),
        Ok(false) => core::ptr::null_mut(),
        Err(e) => e.to_ptr(),
    }
}

/// seq_file's `start`.
///
/// # Safety
///
/// Called by seq_file with a seq_file opened by [`open`] and a valid `pos`.
unsafe extern "C" fn start(m: *mut bindings::seq_file, pos: *mut bindings::loff_t) -> *mut c_void {
    // SAFETY: seq_file calls with its mutex held, on a file opened by `open`.
    let state = unsafe { state(m) };
    // SAFETY: `pos` is valid.
    let found = state.seek(unsafe { *pos });
    seek_result(state, found)
}

/// seq_file's `next`.
///
/// # Safety
///
/// As for [`start`].
unsafe extern "C" fn next(
    m: *mut bindings::seq_file,
    _v: *mut c_void,
    pos: *mut bindings::loff_t,
) -> *mut c_void {
    // SAFETY: As in `start`.
    let state = unsafe { state(m) };
    // SAFETY: `pos` is valid.
    let pos = unsafe {
        *pos += 1;
        *pos
    };
    let found = state.seek(pos);
    seek_result(state, found)
}

/// seq_file's `stop`: nothing is held between calls.
///
/// # Safety
///
/// Called by seq_file; it touches nothing.
unsafe extern "C" fn stop(_m: *mut bindings::seq_file, _v: *mut c_void) {}

/// seq_file's `show`: the header before the first tag, then the tag's line.
///
/// # Safety
///
/// As for [`start`].
unsafe extern "C" fn show(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
    // SAFETY: As in `start`.
    let state = unsafe { state(m) };
    // On overflow seq_file retries with a larger buffer, calling `show` again for the same
    // position; the header goes with position 0 each time.
    // SAFETY: `m` is the seq_file; the data is valid for the given lengths.
    unsafe {
        if state.position.pos() == 0 {
            bindings::seq_write(m, HEADER.as_ptr().cast(), HEADER.len());
        }
        bindings::seq_write(m, state.line.as_ptr().cast(), state.line.len());
    }
    0
}

static SEQ_OPS: bindings::seq_operations = bindings::seq_operations {
    start: Some(start),
    stop: Some(stop),
    next: Some(next),
    show: Some(show),
};

/// `open` of `/proc/allocinfo`: a seq_file with a fresh [`ReadState`].
///
/// # Safety
///
/// Called by procfs with a valid inode and file.
unsafe extern "C" fn open(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    let state = match KBox::new(
        ReadState {
            position: ReadPosition::START,
            line: KVec::new(),
        },
        GFP_KERNEL,
    ) {
        Ok(state) => state,
        Err(_) => return ENOMEM.to_errno(),
    };
    // SAFETY: `file` is being opened; `SEQ_OPS` is static.
    let ret = unsafe { bindings::seq_open(file, &SEQ_OPS) };
    if ret != 0 {
        return ret;
    }
    // SAFETY: `seq_open` succeeded, so `private_data` is the new seq_file.
    unsafe {
        let m = (*file).private_data.cast::<bindings::seq_file>();
        (*m).private = KBox::into_raw(state).cast();
    }
    0
}

/// `release` of `/proc/allocinfo`.
///
/// # Safety
///
/// Called by procfs with a file that [`open`] opened.
unsafe extern "C" fn release(inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    // SAFETY: `open` made `private_data` a seq_file whose `private` is a boxed `ReadState`,
    // released once, here.
    unsafe {
        let m = (*file).private_data.cast::<bindings::seq_file>();
        drop(KBox::from_raw((*m).private.cast::<ReadState>()));
        bindings::seq_release(inode, file)
    }
}

static PROC_OPS: bindings::proc_ops = bindings::proc_ops {
    proc_open: Some(open),
    proc_read_iter: Some(bindings::seq_read_iter),
    proc_lseek: Some(bindings::seq_lseek),
    proc_release: Some(release),
    // SAFETY: All-zero is a valid `proc_ops`: no flags and no other callbacks.
    ..unsafe { core::mem::zeroed() }
};

/// Creates `/proc/allocinfo`, mode 0400.
pub(crate) fn register() -> Result {
    // SAFETY: The name and `PROC_OPS` are static.
    let entry = unsafe {
        bindings::proc_create(
            c_str!("allocinfo").as_char_ptr(),
            0o400,
            core::ptr::null_mut(),
            &PROC_OPS,
        )
    };
    if entry.is_null() {
        return Err(ENOMEM);
    }
    Ok(())
}
