// SPDX-License-Identifier: GPL-2.0

//! The debugfs files of capture, next to fault injection's `fail`:
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)
//!
//! - `/sys/kernel/debug/alloctag/capture` (0600; writes need `CAP_SYS_ADMIN`), one command per
//!   write: `add SELECTOR...`, `remove ID`, `clear`, `limit N`. A bad command fails with
//!   `EINVAL` (or `EEXIST`, `ENOSPC`, `EBUSY`, `ENOENT`), logs why, and changes nothing.
//!   Reading lists the pool and each selection with its sites:
//!
//!   ```text
//!   capture limit=4096 size=4096 used=3 dropped=0 busy=0
//!   selection 1 sites=1 unmarked=0 select=module:m func:f
//!   site selection=1 live=3 live_bytes=192 untracked=0 untracked_bytes=0 lib/m.c:42 [m] func:f
//!   ```
//!
//! - `live`, `live_stacks`, `live_processes` (0400): the reports ([`super::report`]).
//!
//! Each file's text is made when it is opened and read item by item ([`crate::seq::Listing`]);
//! the control file's only when it is opened for reading.
//!
//! debugfs, as for fault injection: a debugging tool, root's. Under lockdown the files are
//! there, but debugfs refuses every open of the control file (its mode allows writing), and
//! the reports, read-only, refuse their own opens ([`crate::debugfs`]).

use super::{
    report::{self, Report, View},
    site_table::{SiteTable, UNKNOWN},
    sites,
    sort::sort_by_key,
};
use crate::{
    codetag::{self, Selection, MAX_SELECTORS},
    debugfs,
    seq::{listing_fops, Lines, Listing, SeqWriter, TextWriter},
};
use core::fmt::{self, Write};
use kernel::{
    alloc::{
        flags::{GFP_KERNEL, GFP_KERNEL_ACCOUNT},
        KVVec,
    },
    c_str,
    prelude::*,
};

/// A parsed command.
enum Command {
    Add(Selection),
    Remove(u32),
    Clear,
    Limit(usize),
}

/// Parses a decimal number word.
fn number<T: core::str::FromStr>(word: Option<&[u8]>) -> Result<T> {
    core::str::from_utf8(word.ok_or(EINVAL)?)
        .map_err(|_| EINVAL)?
        .parse()
        .map_err(|_| EINVAL)
}

/// Parses one command; every word must be understood.
fn parse(text: &[u8]) -> Result<Command> {
    let mut it = text
        .split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    let command = match it.next() {
        Some(b"add") => {
            let mut selectors = KVec::<&[u8]>::with_capacity(MAX_SELECTORS + 1, GFP_KERNEL)?;
            for word in it.by_ref() {
                selectors.push(word, GFP_KERNEL)?;
            }
            Command::Add(Selection::parse(selectors.iter().copied())?)
        }
        Some(b"remove") => Command::Remove(number(it.next())?),
        Some(b"clear") => Command::Clear,
        Some(b"limit") => Command::Limit(number(it.next())?),
        _ => return Err(EINVAL),
    };
    if it.next().is_some() {
        return Err(EINVAL);
    }
    Ok(command)
}

/// Runs one command.
pub(crate) fn run(text: &[u8]) -> Result {
    match parse(text)? {
        Command::Add(selection) => {
            let (id, matched) = super::add(selection)?;
            let unmarked = sites::unmarked(id);
            if unmarked > 0 {
                pr_warn!("capture: selection {id}: {unmarked} matching sites not captured: no slot left\n");
            }
            pr_info!(
                "capture: selection {id}: {} sites match, {} captured\n",
                matched.tags,
                matched.marked
            );
            Ok(())
        }
        Command::Remove(id) => super::remove(id),
        Command::Clear => {
            super::clear();
            Ok(())
        }
        Command::Limit(n) => super::set_limit(n),
    }
}

debugfs::command_write!(write, "capture", run);

listing_fops!(
    CONTROL,
    open_control,
    Control,
    |readable| Control::new(readable),
    Some(write)
);
listing_fops!(
    OBJECTS,
    open_objects,
    Report,
    Report::new(View::Objects),
    None
);
listing_fops!(STACKS, open_stacks, Report, Report::new(View::Stacks), None);
listing_fops!(
    PROCESSES,
    open_processes,
    Report,
    Report::new(View::Processes),
    None
);

/// Creates the files in `/sys/kernel/debug/alloctag/`. Without debugfs (not built, or booted
/// with `debugfs=off`) there are none, and nothing is ever captured; under lockdown they are
/// there and do not open.
///
/// Returns whether the control file was made: without it no selection could be seen or ended.
pub(crate) fn register() -> Result<bool> {
    let control = debugfs::create_file(c_str!("capture"), 0o600, &CONTROL);
    debugfs::create_file(c_str!("live"), 0o400, &OBJECTS);
    debugfs::create_file(c_str!("live_stacks"), 0o400, &STACKS);
    debugfs::create_file(c_str!("live_processes"), 0o400, &PROCESSES);
    Ok(control)
}

/// The control file's listing: the pool, then each selection with its sites, made when the
/// file is opened for reading and shown a line at a time.
struct Control(Lines);

impl Control {
    /// Makes the listing, or for an open that cannot read (`readable` false: only to send
    /// commands) none. Process context.
    ///
    /// An open to write takes no lock and allocates nothing here, so that `clear`, which frees
    /// the pool, can be sent whatever the pool holds and whatever room the opener's memory
    /// cgroup has left. A reading open counts the records in place, per site
    /// ([`report::count`]): what it allocates is bounded by the sites and selections (at most
    /// 1024 and 32), not by the records.
    fn new(readable: bool) -> Result<Self> {
        if !readable {
            return Ok(Self(Lines::new()));
        }
        let (used, size, dropped, busy) = super::stats();
        // The sites, the selections' texts and the records' counts, with the registry locked.
        let registry = codetag::read();
        let mut table = SiteTable::new(&registry)?;
        let mut selections = KVVec::new();
        let mut selection_text = KVVec::new();
        for id in super::ids() {
            if let Some(selection) = registry.selection(&sites::MARKER, id) {
                let start = selection_text.len();
                write!(TextWriter(&mut selection_text), "{selection}").map_err(|_| ENOMEM)?;
                selections.push((id, start, selection_text.len()), GFP_KERNEL_ACCOUNT)?;
            }
        }
        report::count(&registry, &mut table)?;
        drop(registry);
        // The sites in the order of the sites' table.
        sort_by_key(&mut table.rows, |r| r.order);
        let mut out = Lines::new();
        out.line(format_args!(
            "capture limit={} size={size} used={used} dropped={dropped} busy={busy}",
            super::limit()
        ))?;
        for &(id, start, end) in selections.iter() {
            let n = table.rows.iter().filter(|r| r.owner == id).count();
            let selection = core::str::from_utf8(&selection_text[start..end]).unwrap_or(UNKNOWN);
            out.line(format_args!(
                "selection {id} sites={n} unmarked={} select={selection}",
                sites::unmarked(id)
            ))?;
            for (i, row) in table.rows.iter().enumerate() {
                if row.owner != id {
                    continue;
                }
                let (untracked, untracked_bytes) = SiteTable::untracked(row);
                out.line(format_args!(
                    "site selection={id} live={} live_bytes={} untracked={untracked} \
                     untracked_bytes={untracked_bytes} {}",
                    row.live,
                    row.live_bytes,
                    table.name(i)
                ))?;
            }
        }
        Ok(Self(out))
    }
}

impl Listing for Control {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn show(&mut self, i: usize, w: &mut SeqWriter) -> fmt::Result {
        self.0.show(i, w)
    }
}
