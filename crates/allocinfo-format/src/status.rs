//! alloctag's status file, `/sys/kernel/debug/alloctag/status`: where the
//! kernel keeps page tags (`status/parse.rs`), and whether vmlinux's tags fit in
//! the free bits of `page->flags`, or which Kconfig changes would free
//! enough of them (`status/fit.rs`). No I/O.
//!
//! `page_flags`' `unused` is 6.12's `NR_UNUSED_PAGEFLAG_BITS`, which counts
//! last_cpupid by its shift even where it does not fit in page flags (and
//! lives in `struct page` instead): it is then negative, and `free_bits`
//! is 0. The fields, `unused` included, add up to `long` all the same, and
//! vmlinux's tags are short by `needed_bits - unused`.
//!
//! The file is one `key: value` a line; keys this tool does not know are
//! skipped (later kernels may add lines), a key it needs that is missing is
//! an error naming it. The last two, `module_tags` (the module data memory
//! that holds loaded and unloaded modules' tags) and `unloaded_modules` (the
//! modules unloaded with live allocations, whose tags are kept), came later:
//! an older kernel's file has neither, and they are then not reported.

mod fit;
mod parse;

pub use fit::{Change, Fit, Fix, Fixes, MAX_INDEX_BITS, fixes};
pub use parse::{
    Counters, Layout, ModuleTags, PageExt, PageTags, Status, UnloadedModules, parse_layout,
};

/// `n thing`, `n things`.
pub fn plural(n: impl Into<u64>, thing: &str) -> String {
    let n = n.into();
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}
