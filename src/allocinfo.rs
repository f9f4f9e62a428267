// SPDX-License-Identifier: GPL-2.0

//! `/proc/allocinfo`: every allocation tag with its bytes and calls, as text and through
//! mainline's ioctls.
//!
//! C headers: [`include/linux/proc_fs.h`](srctree/include/linux/proc_fs.h),
//! [`include/linux/seq_file.h`](srctree/include/linux/seq_file.h),
//! [`include/uapi/linux/alloc_tag.h`](srctree/include/uapi/linux/alloc_tag.h)
//!
//! Reading ([`text`]): each open file keeps a [`Reader`] at the tag it stands on, so a read
//! that continues where the last one stopped resumes there instead of walking from the first
//! tag. The registry is read-locked from seq_file's `start` to its `stop`, that is within one
//! `read()` (seq_file copies to user space after `stop`), and lines are written straight into
//! seq_file's buffer ([`crate::seq::SeqState`]).
//!
//! The ioctls ([`ioctl`], with [`filter`] and, for alloctag's `GET_SPLIT`, [`split`]) have their own position per open file. They and
//! `read()` on one file are serialized by the seq_file's mutex.

mod filter;
mod ioctl;
mod out;
mod split;
mod text;

use crate::{
    alloc_tag::{AllocTag, AllocTags, Counters, Share, ALLOC_TAGS},
    codetag::Reader,
    profiling::EarlyParam,
    seq::{SeqOps, SeqState, SeqWriter},
};
use core::ffi::{c_int, c_uint};
use kernel::{alloc::flags::GFP_KERNEL_ACCOUNT, bindings, c_str, prelude::*, str::CStr};

#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) use {filter::*, out::Out, text::*};

/// The state of one open `/proc/allocinfo`.
struct FileState {
    /// Where `read()` stands.
    tags: Reader<AllocTags>,
    /// Where the ioctls stand.
    ioctl: ioctl::IoctlState,
    /// A line's node shares ([`AllocTag::read_nodes`]): one per slot in version 2.0 with
    /// per-node counting built in, else none.
    nodes: KVVec<Share>,
}

impl FileState {
    /// Reads `tag`'s figures for its line, with its node shares where the line shows them.
    fn read<'a>(nodes: &'a mut [Share], tag: &AllocTag) -> (Counters, &'a [Share]) {
        #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
        if !nodes.is_empty() {
            if let Some(sum) = tag.read_nodes(nodes) {
                return (sum, nodes);
            }
        }
        (tag.read(), &nodes[..0])
    }
}

impl SeqState for FileState {
    /// Locks the registry until `stop`, and moves to the tag at `pos`.
    fn start(&mut self, pos: i64) -> bool {
        self.tags.lock();
        self.tags.seek(pos)
    }

    fn next(&mut self, pos: i64) -> bool {
        self.tags.seek(pos)
    }

    /// Unlocks the registry. seq_file calls it after every `start`.
    fn stop(&mut self) {
        self.tags.unlock();
    }

    /// The header before the first tag, then the tag's line, written into the seq_file's
    /// buffer. When they do not fit, the buffer is marked overflowed, and seq_file calls
    /// `start` again for the same position with a larger buffer.
    fn show(&mut self, w: &mut SeqWriter) {
        let Some(tag) = self.tags.tag() else {
            return;
        };
        let mut out = out::Out::new(w.free());
        let v2 = text::version_2();
        let (counters, nodes) = Self::read(&mut self.nodes, tag);
        let written = (self.tags.pos() != 0
            || text::put_header(&mut out, crate::alloc_tag::counters::armed_at()).is_some())
            && text::put_line(&mut out, counters, tag.codetag(), v2, nodes).is_some();
        let len = out.len();
        w.commit(written.then_some(len));
    }
}

static SEQ_OPS: bindings::seq_operations = SeqOps::<FileState>::OPS;

/// `open` of `/proc/allocinfo`: a seq_file with a fresh [`FileState`].
///
/// # Safety
///
/// Called by procfs with a valid inode and file.
unsafe extern "C" fn open(_inode: *mut bindings::inode, file: *mut bindings::file) -> c_int {
    // Bounded by `nr_node_ids`: at most 1,025 shares of 16 bytes.
    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
    let slots = if text::version_2() {
        crate::alloc_tag::node::slots()
    } else {
        0
    };
    #[cfg(not(CONFIG_ALLOCTAG_PER_NODE))]
    let slots = 0;
    let state = KVVec::from_elem(Share::default(), slots, GFP_KERNEL_ACCOUNT)
        .map_err(Error::from)
        .map(|nodes| FileState {
            tags: Reader::new(&ALLOC_TAGS),
            ioctl: ioctl::IoctlState::new(),
            nodes,
        });
    // SAFETY: `file` is being opened with `PROC_OPS`, whose release is `FileState`'s.
    unsafe { SeqOps::open(file, &SEQ_OPS, state) }
}

/// `ioctl` of `/proc/allocinfo`.
///
/// # Safety
///
/// Called by procfs with a file that [`open`] opened.
unsafe extern "C" fn unlocked_ioctl(file: *mut bindings::file, cmd: c_uint, arg: usize) -> isize {
    // SAFETY: `open` made `private_data` a seq_file, alive until `release`.
    let m = unsafe { (*file).private_data.cast::<bindings::seq_file>() };
    // The seq_file's mutex serializes the ioctls with each other and with `read()` on the
    // file, as it serializes reads; it is not held by the caller here.
    // SAFETY: `m` is a live seq_file; its mutex is initialised by `seq_open`.
    unsafe { bindings::mutex_lock(&raw mut (*m).lock) };
    // SAFETY: `m` was opened by `open` and its mutex is held.
    let result = unsafe { SeqOps::<FileState>::state(m) }
        .ioctl
        .ioctl(cmd, arg);
    // SAFETY: Locked above.
    unsafe { bindings::mutex_unlock(&raw mut (*m).lock) };
    match result {
        Ok(()) => 0,
        Err(e) => e.to_errno() as isize,
    }
}

/// `compat_ioctl` of `/proc/allocinfo`: the structs are laid out alike for 32-bit callers.
///
/// # Safety
///
/// As for [`unlocked_ioctl`].
#[cfg(CONFIG_COMPAT)]
unsafe extern "C" fn compat_ioctl(file: *mut bindings::file, cmd: c_uint, arg: usize) -> isize {
    // SAFETY: As the caller guarantees. A 32-bit user pointer zero-extends (`compat_ptr()`).
    unsafe { unlocked_ioctl(file, cmd, arg & 0xffff_ffff) }
}

static PROC_OPS: bindings::proc_ops = bindings::proc_ops {
    proc_open: Some(open),
    proc_read_iter: Some(bindings::seq_read_iter),
    proc_lseek: Some(bindings::seq_lseek),
    proc_release: Some(SeqOps::<FileState>::release),
    proc_ioctl: Some(unlocked_ioctl),
    #[cfg(CONFIG_COMPAT)]
    proc_compat_ioctl: Some(compat_ioctl),
    // SAFETY: All-zero is a valid `proc_ops`: no flags and no other callbacks.
    ..unsafe { core::mem::zeroed() }
};

/// Creates `/proc/allocinfo`, mode 0400.
pub(crate) fn register() -> Result {
    crate::seq::proc_create(c_str!("allocinfo"), 0o400, &PROC_OPS)
}

/// Parses `allocinfo.version=`.
///
/// # Safety
///
/// Called by the kernel's parameter parser with null or a NUL-terminated string.
unsafe extern "C" fn setup_version(value: *mut u8) -> c_int {
    if value.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: A non-null value is a NUL-terminated string, as the caller guarantees.
    match text::set_version(unsafe { CStr::from_char_ptr(value) }) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

#[used]
#[link_section = ".init.setup"]
static VERSION_PARAMETER: EarlyParam = EarlyParam::new(c_str!("allocinfo.version"), setup_version);
