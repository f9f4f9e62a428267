// SPDX-License-Identifier: GPL-2.0

//! Formatted output into a seq_file.
//!
//! C header: [`include/linux/seq_file.h`](srctree/include/linux/seq_file.h)

use core::fmt;
use kernel::bindings;

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
}

impl fmt::Write for SeqWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // SAFETY: By `new`'s contract `self.0` is a seq_file in `show`; `s` is valid for its
        // length.
        unsafe { bindings::seq_write(self.0, s.as_ptr().cast(), s.len()) };
        Ok(())
    }
}
