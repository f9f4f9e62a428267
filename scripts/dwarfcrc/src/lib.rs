// SPDX-License-Identifier: GPL-2.0

//! CRCs of exported symbols computed from the DWARF of the objects that
//! define them, for `CONFIG_MODVERSIONS` with Rust.
//!
//! genksyms reads C source, so it cannot version a Rust symbol; rust/exports.c
//! declares each one `extern int`, which versions nothing. This tool reads
//! the symbols' types from the DWARF that the compilers (rustc and the C
//! compiler alike) emit and prints the `#SYMVER` lines that modpost reads
//! from an object's `.cmd` file.

pub mod describe;
pub mod elf;
pub mod index;

use std::fmt;

/// What went wrong, said once.
#[derive(Debug)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// A symbol's CRC: CRC-32 of its description.
pub fn crc(description: &str) -> u32 {
    crc32fast::hash(description.as_bytes())
}
