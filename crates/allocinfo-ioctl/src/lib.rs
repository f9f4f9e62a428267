//! The `/proc/allocinfo` ioctl interface, mainline's ABI
//! (`include/uapi/linux/alloc_tag.h`): the structures ([`abi`]), filters
//! with the kernel's semantics ([`TagFilter`]), the conversion of answers
//! into the text model's [`Tag`](allocinfo_format::Tag) ([`decode`]), and a
//! client that walks the matching tags ([`walk`], [`ProcFile`]).
//!
//! The kernel answers `ALLOCINFO_IOC_GET_AT` with the `pos`-th tag matching
//! a filter and keeps the filter on the open file; `ALLOCINFO_IOC_GET_NEXT`
//! gives the next match; both fail with `ENOENT` past the last one.
//! `ALLOCINFO_IOC_CONTENT_ID` changes when modules load or unload: a walk is
//! consistent when the id is the same before and after it. Kernels without
//! the interface (Linux 6.12) fail with `ENOTTY`: read the text instead.
//!
//! alloctag's `ALLOCINFO_IOC_GET_SPLIT` gives a tag's figures per CPU
//! ([`walk_split`]); mainline kernels answer it with `ENOTTY`.
//!
//! Names longer than [`NAME_MAX`] bytes keep their last [`NAME_MAX`] bytes,
//! in answers and in the filter's comparisons.

pub mod abi;
mod client;
pub mod fake;
mod filter;
mod split;
mod tag;

pub use client::{DEFAULT_ATTEMPTS, Device, Error, ProcFile, Walk, walk};
pub use filter::TagFilter;
pub use split::{SplitSpec, SplitTag, SplitWalk, walk_split};
pub use tag::{
    DecodeError, NAME_MAX, as_reported, decode, decode_name, encode, encode_name, may_be_trimmed,
    trim_name, trimmed_bytes,
};
