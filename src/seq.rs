// SPDX-License-Identifier: GPL-2.0

//! seq_file: formatted output, and files shown item by item from a state kept per open file.
//!
//! C header: [`include/linux/seq_file.h`](srctree/include/linux/seq_file.h)
//!
//! A file shown by [`SeqState`] gets seq_file's `start`, `next`, `stop` and `show` from
//! [`SeqOps`]: seq_file's buffer then holds one item at a time, and when an item does not fit,
//! seq_file calls `start` again for that item with a larger buffer, so a read never rebuilds
//! more than one item. `/proc/allocinfo` and the capture files are shown this way.

use core::{
    ffi::{c_int, c_void},
    fmt,
    marker::PhantomData,
};
use kernel::{alloc::flags::GFP_KERNEL_ACCOUNT, bindings, prelude::*};

/// Writes formatted text into a seq_file; on overflow seq_file itself retries with a larger
/// buffer, so a write never fails here.
pub(crate) struct SeqWriter(*mut bindings::seq_file);

impl SeqWriter {
    /// Writes into `m`.
    ///
    /// # Safety
    ///
    /// `m` must be a seq_file in its `show` callback, valid while the writer is used.
    pub(crate) unsafe fn new(m: *mut bindings::seq_file) -> Self {
        Self(m)
    }

    /// The free part of the seq_file's buffer, to be written directly and then committed with
    /// [`SeqWriter::commit`].
    pub(crate) fn free(&mut self) -> &mut [u8] {
        // SAFETY: By `new`'s contract `self.0` is a seq_file in `show`, whose buffer is `size`
        // bytes of which `count` are used, and which is ours while seq_file calls us.
        unsafe {
            let m = &mut *self.0;
            core::slice::from_raw_parts_mut(
                m.buf.add(m.count).cast::<u8>(),
                m.size.saturating_sub(m.count),
            )
        }
    }

    /// Commits `len` bytes written into [`SeqWriter::free`], or, with `None`, marks the buffer
    /// overflowed, as `seq_commit()` does: seq_file then shows the item again with a larger
    /// buffer.
    pub(crate) fn commit(&mut self, len: Option<usize>) {
        // SAFETY: As in `free`.
        let m = unsafe { &mut *self.0 };
        m.count = match len {
            Some(len) => (m.count + len).min(m.size),
            None => m.size,
        };
    }
}

impl fmt::Write for SeqWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // SAFETY: By `new`'s contract `self.0` is a seq_file in `show`; `s` is valid for its
        // length.
        unsafe { bindings::seq_write(self.0, s.as_ptr().cast(), s.len()) };
        Ok(())
    }
}

/// The state of an open file that seq_file shows item by item, one per position.
///
/// seq_file calls `start` at the position to show, then alternately `show` and `next` until
/// either returns no item or the buffer is full, then `stop`, all within one `read()` and
/// with the seq_file's mutex held: the state is used by one thread at a time.
pub(crate) trait SeqState: Sized + Send + 'static {
    /// Moves to the item at `pos` at the start of a read; returns whether there is one.
    fn start(&mut self, pos: i64) -> bool;

    /// Moves to the item at `pos`, the one after the last shown; returns whether there is one.
    fn next(&mut self, pos: i64) -> bool {
        self.start(pos)
    }

    /// Ends the read: whatever `start` took (a lock) is given back here.
    fn stop(&mut self) {}

    /// Writes the current item.
    fn show(&mut self, w: &mut SeqWriter);
}

/// seq_file's operations for the state `T`, and the `open` and `release` that keep a `T` per
/// open file.
pub(crate) struct SeqOps<T>(PhantomData<T>);

impl<T: SeqState> SeqOps<T> {
    /// The operations, for a `static` of the file's (a `static` cannot be generic).
    pub(crate) const OPS: bindings::seq_operations = bindings::seq_operations {
        start: Some(Self::start),
        stop: Some(Self::stop),
        next: Some(Self::next),
        show: Some(Self::show),
    };

    /// Returns the state of seq_file `m`.
    ///
    /// # Safety
    ///
    /// `m` must be a seq_file opened by [`SeqOps::open`] with `T`, not yet released, with its
    /// mutex held by the caller (seq_file holds it in its callbacks).
    pub(crate) unsafe fn state<'a>(m: *mut bindings::seq_file) -> &'a mut T {
        // SAFETY: `open` set `private` to a `T` that lives until `release`, and the caller
        // guarantees exclusive use.
        unsafe { &mut *(*m).private.cast::<T>() }
    }

    /// The cookie that `start` and `next` return: non-null when there is an item.
    fn cookie(m: *mut bindings::seq_file, found: bool) -> *mut c_void {
        if found {
            m.cast()
        } else {
            core::ptr::null_mut()
        }
    }

    /// # Safety
    ///
    /// Called by seq_file with a seq_file opened by [`SeqOps::open`] and a valid `pos`.
    unsafe extern "C" fn start(
        m: *mut bindings::seq_file,
        pos: *mut bindings::loff_t,
    ) -> *mut c_void {
        // SAFETY: seq_file calls with its mutex held, on a file opened by `open`; `pos` is
        // valid.
        let found = unsafe { Self::state(m).start(*pos) };
        Self::cookie(m, found)
    }

    /// # Safety
    ///
    /// As for `start`.
    unsafe extern "C" fn next(
        m: *mut bindings::seq_file,
        _v: *mut c_void,
        pos: *mut bindings::loff_t,
    ) -> *mut c_void {
        // SAFETY: As in `start`.
        let found = unsafe {
            *pos += 1;
            Self::state(m).next(*pos)
        };
        Self::cookie(m, found)
    }

    /// # Safety
    ///
    /// As for `start`.
    unsafe extern "C" fn stop(m: *mut bindings::seq_file, _v: *mut c_void) {
        // SAFETY: As in `start`.
        unsafe { Self::state(m) }.stop();
    }

    /// # Safety
    ///
    /// As for `start`, between `start` and `stop`.
    unsafe extern "C" fn show(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
        // SAFETY: As in `start`; `m` is in its `show` callback.
        unsafe { Self::state(m).show(&mut SeqWriter::new(m)) };
        0
    }

    /// Opens `file` as a seq_file with `ops` (this type's [`SeqOps::OPS`]) and `state`.
    ///
    /// # Safety
    ///
    /// `file` must be a file being opened whose `release` is [`SeqOps::release`] with `T`, and
    /// `ops` must be `SeqOps::<T>::OPS`.
    pub(crate) unsafe fn open(
        file: *mut bindings::file,
        ops: &'static bindings::seq_operations,
        state: Result<T>,
    ) -> c_int {
        let state = match state.and_then(|s| KBox::new(s, GFP_KERNEL_ACCOUNT).map_err(Into::into)) {
            Ok(state) => state,
            Err(e) => return e.to_errno(),
        };
        // SAFETY: `file` is being opened; `ops` is static.
        let ret = unsafe { bindings::seq_open(file, ops) };
        if ret != 0 {
            return ret;
        }
        // SAFETY: `seq_open` succeeded, so `private_data` is the new seq_file, not yet seen by
        // anyone else.
        unsafe {
            let m = (*file).private_data.cast::<bindings::seq_file>();
            (*m).private = KBox::into_raw(state).cast();
        }
        0
    }

    /// `release` of a file opened by [`SeqOps::open`].
    ///
    /// # Safety
    ///
    /// Called by the VFS with a file that [`SeqOps::open`] opened with `T`.
    pub(crate) unsafe extern "C" fn release(
        inode: *mut bindings::inode,
        file: *mut bindings::file,
    ) -> c_int {
        // SAFETY: `open` made `private_data` a seq_file whose `private` is a boxed `T`,
        // released once, here.
        unsafe {
            let m = (*file).private_data.cast::<bindings::seq_file>();
            drop(KBox::from_raw((*m).private.cast::<T>()));
            bindings::seq_release(inode, file)
        }
    }
}

/// A text made once, when its file is opened, and shown one item per `show`.
#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
pub(crate) trait Listing: Send + 'static {
    /// The number of items.
    fn len(&self) -> usize;

    /// Writes item `i`, below [`Listing::len`].
    fn show(&mut self, i: usize, w: &mut SeqWriter) -> fmt::Result;
}

/// A [`Listing`] with the item it stands on: its [`SeqState`].
#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
pub(crate) struct Items<L> {
    listing: L,
    at: usize,
}

#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
impl<L: Listing> Items<L> {
    /// Shows `listing` from its first item.
    pub(crate) fn new(listing: L) -> Self {
        Self { listing, at: 0 }
    }
}

#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
impl<L: Listing> SeqState for Items<L> {
    fn start(&mut self, pos: i64) -> bool {
        match usize::try_from(pos) {
            Ok(at) if at < self.listing.len() => {
                self.at = at;
                true
            }
            _ => false,
        }
    }

    fn show(&mut self, w: &mut SeqWriter) {
        // A failed write leaves what fit; seq_file retries an overflowed item by itself.
        let _ = self.listing.show(self.at, w);
    }
}

/// Defines `$open`, the `open` of a file that shows the [`Listing`] that `$make` (an
/// expression of type `Result<$ty>`) makes, and `$fops`, its [`crate::debugfs::Fops`] with
/// `$write` (an `Option` of a write function). Given as `|readable| $make`, `$make` is told
/// whether the file is being opened for reading: an open only to write shows nothing, so it
/// need make nothing.
#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
macro_rules! listing_fops {
    ($fops:ident, $open:ident, $ty:ty, |$readable:ident| $make:expr, $write:expr) => {
        /// `open` of the file.
        ///
        /// # Safety
        ///
        /// Called by the VFS with a valid inode and file.
        unsafe extern "C" fn $open(
            _inode: *mut kernel::bindings::inode,
            file: *mut kernel::bindings::file,
        ) -> core::ffi::c_int {
            static OPS: kernel::bindings::seq_operations =
                $crate::seq::SeqOps::<$crate::seq::Items<$ty>>::OPS;
            // SAFETY: The VFS passes a valid file being opened, whose mode is set.
            let $readable: bool = unsafe { (*file).f_mode } & kernel::bindings::FMODE_READ != 0;
            let made: kernel::error::Result<$ty> = $make;
            // SAFETY: `file` is being opened with `$fops`, whose release is this type's.
            unsafe {
                $crate::seq::SeqOps::<$crate::seq::Items<$ty>>::open(
                    file,
                    &OPS,
                    made.map($crate::seq::Items::new),
                )
            }
        }

        static $fops: $crate::debugfs::Fops = $crate::debugfs::Fops::seq_state(
            $open,
            $crate::seq::SeqOps::<$crate::seq::Items<$ty>>::release,
            $write,
        );
    };
    ($fops:ident, $open:ident, $ty:ty, $make:expr, $write:expr) => {
        $crate::seq::listing_fops!($fops, $open, $ty, |_readable| $make, $write);
    };
}
#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
pub(crate) use listing_fops;

/// Appends formatted text to a byte vector.
#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
pub(crate) struct TextWriter<'a>(pub(crate) &'a mut KVVec<u8>);

#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
impl fmt::Write for TextWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL_ACCOUNT)
            .map_err(|_| fmt::Error)
    }
}

/// A [`Listing`] of lines of text, made whole when its file is opened.
#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
pub(crate) struct Lines {
    text: KVVec<u8>,
    /// Where each line ends in `text`.
    ends: KVVec<usize>,
}

#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
impl Lines {
    /// Makes an empty text.
    pub(crate) fn new() -> Self {
        Self {
            text: KVVec::new(),
            ends: KVVec::new(),
        }
    }

    /// Appends a line: `args` and a newline.
    pub(crate) fn line(&mut self, args: fmt::Arguments<'_>) -> Result {
        fmt::Write::write_fmt(&mut TextWriter(&mut self.text), args).map_err(|_| ENOMEM)?;
        self.text.push(b'\n', GFP_KERNEL_ACCOUNT)?;
        self.ends.push(self.text.len(), GFP_KERNEL_ACCOUNT)?;
        Ok(())
    }
}

#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
impl Listing for Lines {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn show(&mut self, i: usize, w: &mut SeqWriter) -> fmt::Result {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let line = self.text.get(start..self.ends[i]).unwrap_or_default();
        fmt::Write::write_str(w, core::str::from_utf8(line).unwrap_or("?"))
    }
}

/// Creates `/proc/NAME` with `mode`, a file that `ops` (seq_file-backed) serves.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) fn proc_create(
    name: &'static kernel::str::CStr,
    mode: u16,
    ops: &'static bindings::proc_ops,
) -> Result {
    // SAFETY: The name and the operations are static.
    let entry =
        unsafe { bindings::proc_create(name.as_char_ptr(), mode, core::ptr::null_mut(), ops) };
    if entry.is_null() {
        return Err(ENOMEM);
    }
    Ok(())
}
