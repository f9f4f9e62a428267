// SPDX-License-Identifier: GPL-2.0

//! What a module leaves behind when it unloads with live allocations: one log line per module,
//! with its totals and its largest call sites.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)
//!
//! 6.12 warns once per live call site (a `WARN()` with a stack trace each, which also panics
//! `panic_on_warn` machines) and mainline logs the first one it finds. The line here names the
//! module, what it still holds in all, at how many call sites, and the [`LARGEST`] that hold the
//! most bytes, largest first: `module M has B bytes in C allocations at module unload, at N call
//! sites, listed until freed[; the 3 largest]: SITE has B bytes in C allocations; ...`. Static tags
//! (src/alloc_tag/mod.rs) and Rust's dynamic tags (src/alloc_tag/dynamic/unload.rs) report through
//! it. Nothing here allocates: module unload cannot fail.

use super::{AllocTag, Counters};
use core::fmt;
use kernel::{prelude::*, str::CStr};

/// The most call sites the line names.
pub(crate) const LARGEST: usize = 3;

/// The live allocations of one unloading module, gathered one tag at a time.
#[derive(Default)]
pub(crate) struct Leaks<'a> {
    total: Counters,
    sites: usize,
    largest: [Option<(&'a AllocTag, Counters)>; LARGEST],
}

impl<'a> Leaks<'a> {
    /// Counts `tag`, whose counters read `counters`, if they are not zero.
    pub(crate) fn add(&mut self, tag: &'a AllocTag, counters: Counters) {
        if counters.is_zero() {
            return;
        }
        self.total.bytes = self.total.bytes.wrapping_add(counters.bytes);
        self.total.calls = self.total.calls.wrapping_add(counters.calls);
        self.sites += 1;
        // Largest first; ties keep the order the tags came in.
        let at = self.largest.iter().position(|e| match e {
            None => true,
            Some((_, c)) => counters.bytes > c.bytes,
        });
        if let Some(at) = at {
            self.largest[at..].rotate_right(1);
            self.largest[at] = Some((tag, counters));
        }
    }

    /// Returns whether any allocation is live.
    pub(crate) fn any(&self) -> bool {
        self.sites != 0
    }

    /// Logs the module's line, if any allocation is live.
    pub(crate) fn report(&self, module: &CStr) {
        if self.any() {
            pr_warn!("{}\n", self.line(module));
        }
    }

    /// Returns the module's line, as [`Leaks::report`] logs it.
    pub(crate) fn line<'b>(&'b self, module: &'b CStr) -> impl fmt::Display + 'b {
        Line {
            leaks: self,
            module,
        }
    }
}

/// The log line of [`Leaks::report`].
struct Line<'a, 'b> {
    leaks: &'b Leaks<'a>,
    module: &'b CStr,
}

impl fmt::Display for Line<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = self.leaks;
        let named = l.largest.iter().flatten().count();
        // The counts come first: a line too long for the log loses only the end of its last
        // site (long Rust function names).
        write!(
            f,
            "module {} has {} bytes in {} allocations at module unload, at {} call site{}, \
             listed until freed",
            self.module,
            l.total.bytes,
            l.total.calls,
            l.sites,
            if l.sites == 1 { "" } else { "s" }
        )?;
        if l.sites > named {
            write!(f, "; the {named} largest")?;
        }
        for (i, (tag, counters)) in l.largest.iter().flatten().enumerate() {
            write!(
                f,
                "{}{} has {} bytes in {} allocations",
                if i == 0 { ": " } else { "; " },
                tag.codetag(),
                counters.bytes,
                counters.calls
            )?;
        }
        Ok(())
    }
}
