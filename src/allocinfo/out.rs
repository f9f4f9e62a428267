// SPDX-License-Identifier: GPL-2.0

//! A writer of bytes into a fixed buffer, with a decimal writer for numbers: what the lines of
//! `/proc/allocinfo` are made with (src/allocinfo/text.rs), where `core::fmt` was twice as slow
//! as the C core's `seq_buf_printf()`.
//!
//! C header: [`include/linux/seq_buf.h`](srctree/include/linux/seq_buf.h)
//!
//! It needs nothing but `core`: the benchmark module (tests/bench/alloctag_bench_rust.rs), a
//! crate of its own, which can depend on no other of our objects, builds this file in with
//! `#[path]` and times this very code.

/// A writer into a byte buffer that fails, writing nothing more, once the buffer is full.
pub(crate) struct Out<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> Out<'a> {
    /// Writes into `buf` from its start.
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    /// Returns how many bytes were written.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Appends `bytes`; `None` when they do not fit.
    pub(crate) fn put(&mut self, bytes: &[u8]) -> Option<()> {
        let end = self.len.checked_add(bytes.len())?;
        self.buf.get_mut(self.len..end)?.copy_from_slice(bytes);
        self.len = end;
        Some(())
    }

    /// Appends `value` in decimal, after `-` when `negative`, right-aligned in `width`
    /// columns with spaces, as `printf("%*llu")` and `printf("%*lli")` do.
    pub(crate) fn put_number(&mut self, negative: bool, value: u64, width: usize) -> Option<()> {
        let mut digits = [0u8; 21];
        let mut at = digits.len();
        let mut rest = value;
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        if negative {
            at -= 1;
            digits[at] = b'-';
        }
        let number = &digits[at..];
        for _ in number.len()..width {
            self.put(b" ")?;
        }
        self.put(number)
    }
}
