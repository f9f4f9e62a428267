// SPDX-License-Identifier: GPL-2.0

//! The captured sites as the reports and the control file's listing see them: each site's
//! tag address (compared, never dereferenced once the registry is unlocked), selection,
//! counters and name, read with the registry locked; its records counted in afterwards; and
//! what its counters hold beyond them (the untracked remainder).
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)

use super::{sites, sort::sort_by_key};
use crate::{
    codetag::{self, Codetag},
    seq::TextWriter,
};
use core::fmt::Write;
use kernel::{
    alloc::{
        flags::{GFP_KERNEL_ACCOUNT, GFP_NOWAIT},
        KVVec,
    },
    prelude::*,
};

/// A captured site as a report sees it.
pub(super) struct SiteRow {
    /// The tag's address: compared with records' tag pointers, never dereferenced once the
    /// registry is unlocked.
    pub(super) tag: usize,
    /// The selection that captures it.
    pub(super) owner: u32,
    /// Its place among the captured sites, as the sites' table lists them.
    pub(super) order: usize,
    /// Its counters, read with the registry locked.
    pub(super) calls: u64,
    pub(super) bytes: i64,
    /// Its records: how many, and their bytes.
    pub(super) live: u64,
    pub(super) live_bytes: u64,
    /// Its name, `FILE:LINE [MODULE] func:NAME`, in [`SiteTable::names`].
    pub(super) name: (usize, usize),
}

/// The captured sites and their names, with what their counters hold beyond their records.
pub(super) struct SiteTable {
    /// Sorted by `tag`.
    pub(super) rows: KVVec<SiteRow>,
    names: KVVec<u8>,
}

/// The name of a site whose record outlived its site's slot: it cannot happen (records go
/// before their tag is unmarked), but a report says so rather than guess.
pub(super) const UNKNOWN: &str = "?";

impl SiteTable {
    /// Reads the captured sites, with the registry locked by the caller (`registry`).
    pub(super) fn new(registry: &codetag::Registry) -> Result<Self> {
        let mut n = 0;
        sites::for_each(registry, |_, _| n += 1);
        let mut rows = KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
        let mut names = KVVec::new();
        let mut result = Ok(());
        sites::for_each(registry, |owner, tag| {
            if result.is_err() || rows.len() == rows.capacity() {
                return;
            }
            let start = names.len();
            result = write!(TextWriter(&mut names), "{}", tag.codetag()).map_err(|_| ENOMEM);
            let counters = tag.read();
            let row = SiteRow {
                tag: core::ptr::from_ref(tag.codetag()) as usize,
                owner,
                order: rows.len(),
                calls: counters.calls,
                bytes: counters.bytes,
                live: 0,
                live_bytes: 0,
                name: (start, names.len()),
            };
            // Within the capacity reserved above: never allocates.
            let _ = rows.push(row, GFP_NOWAIT);
        });
        result?;
        sort_by_key(&mut rows, |r| r.tag);
        Ok(Self { rows, names })
    }

    /// Returns the index of the site whose tag `tag` is, and counts `bytes` as its record's.
    pub(super) fn count(&mut self, tag: *const Codetag, bytes: usize) -> Option<usize> {
        let tag = tag as usize;
        let (mut lo, mut hi) = (0, self.rows.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.rows[mid].tag.cmp(&tag) {
                core::cmp::Ordering::Less => lo = mid + 1,
                core::cmp::Ordering::Greater => hi = mid,
                core::cmp::Ordering::Equal => {
                    let row = &mut self.rows[mid];
                    row.live += 1;
                    row.live_bytes = row.live_bytes.saturating_add(bytes as u64);
                    return Some(mid);
                }
            }
        }
        None
    }

    /// Forgets the records counted so far.
    pub(super) fn clear_counts(&mut self) {
        for row in self.rows.iter_mut() {
            row.live = 0;
            row.live_bytes = 0;
        }
    }

    /// The name of site `i`, or [`UNKNOWN`].
    pub(super) fn name(&self, i: usize) -> &str {
        self.rows
            .get(i)
            .and_then(|r| self.names.get(r.name.0..r.name.1))
            .and_then(|n| core::str::from_utf8(n).ok())
            .unwrap_or(UNKNOWN)
    }

    /// What site `row`'s counters hold beyond its records: objects and bytes.
    pub(super) fn untracked(row: &SiteRow) -> (u64, i64) {
        (
            row.calls.saturating_sub(row.live),
            row.bytes.saturating_sub(row.live_bytes as i64).max(0),
        )
    }

    /// What all the sites' counters hold beyond their records.
    pub(super) fn untracked_total(&self) -> (u64, i64) {
        self.rows.iter().fold((0, 0), |(n, b), row| {
            let (rn, rb) = Self::untracked(row);
            (n + rn, b.saturating_add(rb))
        })
    }
}
