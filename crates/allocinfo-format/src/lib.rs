//! Model, parser and printer for `/proc/allocinfo`, the text interface of the
//! Linux kernel's memory allocation profiling (`CONFIG_MEM_ALLOC_PROFILING`).
//!
//! Two format versions exist. Linux 6.12 prints version 1.0:
//!
//! ```text
//! allocinfo - version: 1.0
//! #     <size>  <calls> <tag info>
//!         4096        1 mm/percpu.c:3191 func:pcpu_embed_first_chunk
//!       143360       35 fs/xfs/xfs_buf.c:411 [xfs] func:xfs_buf_alloc_pages
//! ```
//!
//! Each tag line is `printf("%12lli %8llu ", bytes, calls)`, then
//! `file:line [module] func:name` (the module only for loadable modules), then
//! a space. Version 2.0 may add `key:value` pairs such as `accurate:no` after
//! the function name, and alloctag's kernels `unloaded:yes` for a module
//! unloaded while allocations it made were live ([`Tag::is_accurate`],
//! [`Tag::is_unloaded`]). Unknown pairs are kept in [`Tag::extra`] and printed
//! back.
//!
//! The parser is liberal about whitespace and strict about structure: every
//! error names the 1-based input line and the reason, and it never panics.
//!
//! ```
//! use allocinfo_format::{Profile, COLUMN_HEADER};
//! let text = format!(
//!     "allocinfo - version: 1.0\n{COLUMN_HEADER}\n{}\n",
//!     "        4096        1 mm/percpu.c:3191 func:pcpu_embed_first_chunk "
//! );
//! let profile = Profile::parse(text.as_bytes()).unwrap();
//! assert_eq!(profile.tags[0].function, "pcpu_embed_first_chunk");
//! assert_eq!(profile.to_string(), text);
//! ```

pub mod capture;
pub mod duration;
pub mod fail;
mod model;
mod parse;
pub mod size;
pub mod status;
pub mod waste;

pub use model::{COLUMN_HEADER, OverflowError, Profile, Tag, Totals, Version};
pub use parse::{ParseError, ParseErrorKind};
