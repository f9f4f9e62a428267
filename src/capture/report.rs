// SPDX-License-Identifier: GPL-2.0

//! The reports of the live objects, as text: one object per record, oldest first, with its
//! stack; the records grouped by stack, as slub's `alloc_traces` and page_owner's `show_stacks`
//! do; and grouped by process. Each ends with the untracked remainder: what the captured
//! sites' counters hold beyond their records, allocated before capture started (or dropped).
//!
//! C header: [`include/linux/stackdepot.h`](srctree/include/linux/stackdepot.h)
//!
//! Every line is `WORD key=value ...`, values without blanks, except `site=`, which comes last
//! and reads as in `/proc/allocinfo`; stack frames follow their line, indented by two spaces,
//! as `%pS` prints them (one that kallsyms cannot name as `%pK` prints its address).
//!
//! A report is made once, when its file is opened ([`Report::new`]): the records are copied
//! and the sites read with the registry read-locked, which is then given back; matching each
//! record to its site (a binary search by tag address, never dereferenced), sorting and
//! grouping happen after. A read shows the report item by item ([`Listing`]), so a large
//! report is never rebuilt while it is read, and module load and unload, `/proc/allocinfo` and
//! `show_mem()` never wait for its formatting. Making a report, or the control file's listing
//! ([`Control`]), takes O(records x log sites).

use super::{
    pool::{self, Kind, Record},
    site_table::SiteTable,
    sort::sort_by_key,
};
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
use crate::alloc_tag::AllocTag;
use crate::{
    codetag,
    seq::{Listing, SeqWriter},
};
use core::{
    cmp::Reverse,
    fmt::{self, Write},
};
use kernel::{
    alloc::{
        flags::{GFP_KERNEL_ACCOUNT, GFP_NOWAIT},
        KVVec,
    },
    bindings,
    prelude::*,
};

/// Which report.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    Objects,
    Stacks,
    Processes,
}

/// How many times a copy starts over when capture restarts with a new pool meanwhile.
const SNAPSHOT_TRIES: usize = 4;

/// Copies the records, with the registry locked by the caller (`_registry`) so that their tags
/// stay while it is held; `EAGAIN` when capture restarted with a new pool during each of
/// [`SNAPSHOT_TRIES`] copies.
///
/// The pool is copied [`pool::HOLD_RECORDS`] records per hold of its lock, which keeps
/// interrupts off: never the whole pool at once (96 MiB at the largest limit). So the copy is
/// not one instant's view: each record in it was live at some moment of the copy; an object
/// live throughout is in it once; one allocated or freed meanwhile may or may not be. An
/// address freed and allocated again meanwhile, seen twice, is kept once, as its newer
/// allocation.
pub(crate) fn snapshot(_registry: &codetag::Registry) -> Result<KVVec<Record>> {
    for _ in 0..SNAPSHOT_TRIES {
        if let Some(mut records) = copy_pool()? {
            drop_duplicates(&mut records);
            return Ok(records);
        }
    }
    Err(EAGAIN)
}

/// One copy of the pool, batch by batch; `None` when capture restarted with a new pool
/// meanwhile. Room for each batch is allocated before the lock is taken (nothing allocates under
/// it), charged to the opener's memory cgroup.
fn copy_pool() -> Result<Option<KVVec<Record>>> {
    let mut out = KVVec::new();
    let mut from = Some(0);
    let mut pool_id = None;
    while let Some(start) = from {
        out.reserve(pool::HOLD_RECORDS, GFP_KERNEL_ACCOUNT)?;
        let state = pool::lock();
        if *pool_id.get_or_insert(state.pool_id) != state.pool_id {
            return Ok(None);
        }
        from = state.table.as_ref().and_then(|table| {
            table.for_each_from(start, pool::HOLD_RECORDS, |r| {
                // Within the room reserved above: this never allocates.
                let _ = out.push(*r, GFP_NOWAIT);
            })
        });
    }
    Ok(Some(out))
}

/// Counts the records into `table` per site, with the registry locked by the caller
/// (`_registry`), as the pool stands: nothing is copied, so what this needs is the table's,
/// bounded by the number of sites, whatever the number of records. `EAGAIN` when capture
/// restarted with a new pool during each of [`SNAPSHOT_TRIES`] passes.
///
/// The pool is gone through [`pool::HOLD_RECORDS`] records per hold of its lock, as
/// [`snapshot`] does, so each record counted was live at some moment of the pass. Only records
/// made before the pass started are counted: an address freed and allocated again meanwhile
/// may take a slot that the pass has yet to reach, and would be counted twice.
pub(super) fn count(_registry: &codetag::Registry, table: &mut SiteTable) -> Result {
    'tries: for _ in 0..SNAPSHOT_TRIES {
        table.clear_counts();
        // SAFETY: Reading the clock has no precondition.
        let start = unsafe { bindings::alloctag_capture_now() };
        let mut from = Some(0);
        let mut pool_id = None;
        while let Some(at) = from {
            let state = pool::lock();
            if *pool_id.get_or_insert(state.pool_id) != state.pool_id {
                continue 'tries;
            }
            from = state.table.as_ref().and_then(|t| {
                t.for_each_from(at, pool::HOLD_RECORDS, |r| {
                    if r.time_ns <= start {
                        table.count(r.tag, r.bytes);
                    }
                })
            });
            drop(state);
            // SAFETY: Process context (an open), holding only the registry's read lock, which
            // may sleep; the pool's lock was dropped above.
            unsafe { bindings::alloctag_capture_cond_resched() };
        }
        return Ok(());
    }
    Err(EAGAIN)
}

/// Keeps, of the records of one key, the newest: the address was freed and allocated again
/// while the pool was copied.
fn drop_duplicates(records: &mut KVVec<Record>) {
    sort_by_key(records, |r| (r.key(), r.time_ns));
    let len = records.len();
    let mut kept = 0;
    for i in 0..len {
        if i + 1 < len && records[i + 1].key() == records[i].key() {
            continue;
        }
        records.swap(kept, i);
        kept += 1;
    }
    // SAFETY: `kept <= len`; a `Record` is `Copy`, so the records cut off need no drop.
    unsafe { records.set_len(kept) };
}

/// Writes a task name with every byte that is not printable or is blank as `?`, so that it is
/// one word.
struct Word<'a>(&'a str);

impl fmt::Display for Word<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            f.write_char(if c.is_ascii_graphic() { c } else { '?' })?;
        }
        Ok(())
    }
}

fn context(r: &Record) -> &'static str {
    match r.context {
        0 => "task",
        1 => "softirq",
        _ => "hardirq",
    }
}

/// At least `KSYM_SYMBOL_LEN`, a C expression that bindgen cannot give: the longest
/// `name+0xoff/0xsize [module build-id]` that `sprint_symbol()` writes.
const SYMBOL_LEN: usize = 1024;

/// Writes the frames of stack depot handle `stack`, one per line, as `%pS` does, but a frame
/// that kallsyms cannot name (in a module unloaded since) as `%pK` does: a stack may outlive
/// its module, and `%pS` would show such an address raw, whatever `kptr_restrict` says.
fn write_stack(w: &mut impl Write, stack: u32, buf: &mut [u8]) -> fmt::Result {
    if stack == 0 {
        return writeln!(w, "  (no stack: the stack depot was full)");
    }
    let mut entries: *mut usize = core::ptr::null_mut();
    // SAFETY: `stack` is a handle that the depot returned; saved stacks are never freed (no
    // `STACK_DEPOT_FLAG_GET`).
    let n = unsafe { bindings::stack_depot_fetch(stack, (&raw mut entries).cast()) };
    for i in 0..n as usize {
        // SAFETY: The depot returned `n` entries at `entries`, which stay.
        let addr = unsafe { *entries.add(i) };
        // SAFETY: `buf` has the size passed, at least `KSYM_SYMBOL_LEN` bytes, as the helper
        // needs; it writes at most that, NUL included.
        let len = unsafe {
            bindings::alloctag_capture_format_frame(buf.as_mut_ptr().cast(), buf.len(), addr as _)
        };
        let len = (len.max(0) as usize).min(buf.len());
        let name = core::str::from_utf8(&buf[..len]).unwrap_or("?");
        writeln!(w, "  {name}")?;
    }
    Ok(())
}

/// A kernel address (or a pfn) as `%pK` shows it to the reader, in hexadecimal: zeros at
/// `kptr_restrict=2`, the value at 1 to a reader with `CAP_SYSLOG`, hashed otherwise.
struct Kptr(usize);

impl fmt::Display for Kptr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 24];
        // SAFETY: `buf` has the size passed; the helper writes at most that, NUL included.
        let len = unsafe {
            bindings::alloctag_capture_format_kptr(buf.as_mut_ptr().cast(), buf.len(), self.0 as _)
        };
        let text = buf.get(..len.max(0) as usize).unwrap_or(&[]);
        f.write_str(core::str::from_utf8(text).unwrap_or("?"))
    }
}

/// Writes the line of the record `r`, whose site is named `site`.
fn write_object(w: &mut impl Write, r: &Record, site: &str, now: u64) -> fmt::Result {
    write!(
        w,
        "object age_ns={} bytes={} pid={} tgid={} comm={} cpu={} ctx={} gfp={:#x} ",
        now.saturating_sub(r.time_ns),
        r.bytes,
        r.pid,
        r.tgid,
        Word(r.comm()),
        r.cpu,
        context(r),
        r.gfp,
    )?;
    match r.kind {
        Kind::Slab => write!(w, "kind=slab addr=0x{}", Kptr(r.object))?,
        Kind::Pages => write!(w, "kind=pages order={} pfn=0x{}", r.order, Kptr(r.object))?,
    }
    writeln!(w, " site={site}")
}

/// The records of one group: counts, bytes, ages, and the processes seen.
struct Group {
    count: usize,
    bytes: usize,
    age_min: u64,
    age_max: u64,
    /// Saturates; the kernel has no 128-bit division (`__udivti3`).
    age_sum: u64,
}

impl Group {
    fn of<'a>(records: impl Iterator<Item = &'a Record>, now: u64) -> Self {
        let mut g = Self {
            count: 0,
            bytes: 0,
            age_min: u64::MAX,
            age_max: 0,
            age_sum: 0,
        };
        for r in records {
            let age = now.saturating_sub(r.time_ns);
            g.count += 1;
            g.bytes = g.bytes.saturating_add(r.bytes);
            g.age_min = g.age_min.min(age);
            g.age_max = g.age_max.max(age);
            g.age_sum = g.age_sum.saturating_add(age);
        }
        g
    }

    fn age_avg(&self) -> u64 {
        self.age_sum / self.count.max(1) as u64
    }
}

/// The most distinct processes listed on a stack's line.
const MAX_PIDS: usize = 8;

/// Writes the line of a group of records with one stack and the site named `site`.
fn write_stack_group(
    w: &mut impl Write,
    group: &[Entry],
    site: &str,
    now: u64,
    buf: &mut [u8],
) -> fmt::Result {
    let Some(first) = group.first().map(|e| &e.record) else {
        return Ok(());
    };
    let g = Group::of(group.iter().map(|e| &e.record), now);
    write!(
        w,
        "stack count={} bytes={} age_min_ns={} age_avg_ns={} age_max_ns={} pids=",
        g.count,
        g.bytes,
        g.age_min,
        g.age_avg(),
        g.age_max
    )?;
    // The distinct thread groups, in the order of the records (oldest first).
    let mut seen = 0;
    for (i, r) in group.iter().map(|e| &e.record).enumerate() {
        if group[..i].iter().any(|o| o.record.tgid == r.tgid) {
            continue;
        }
        if seen == MAX_PIDS {
            w.write_str(",...")?;
            break;
        }
        if seen > 0 {
            w.write_char(',')?;
        }
        write!(w, "{}:{}", r.tgid, Word(r.comm()))?;
        seen += 1;
    }
    writeln!(w, " site={site}")?;
    write_stack(w, first.stack, buf)
}

/// Returns the objects and bytes that `tag`'s counters hold beyond its records in `records`.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn untracked(tag: &AllocTag, records: &[Record]) -> (u64, i64) {
    let ct = tag.codetag();
    let counters = tag.read();
    let (mut n, mut b) = (0u64, 0i64);
    for r in records.iter().filter(|r| core::ptr::eq(r.tag, ct)) {
        n += 1;
        b += r.bytes as i64;
    }
    (
        counters.calls.saturating_sub(n),
        counters.bytes.saturating_sub(b).max(0),
    )
}

/// One record of a report, with the index of its site in the report's [`SiteTable`].
#[derive(Clone, Copy)]
struct Entry {
    record: Record,
    site: usize,
}

/// Copies the records and reads the sites, with the registry locked until both are taken, and
/// gives each record its site's index.
fn take() -> Result<(KVVec<Entry>, SiteTable)> {
    let registry = codetag::read();
    let records = snapshot(&registry)?;
    let mut table = SiteTable::new(&registry)?;
    drop(registry);
    let mut entries = KVVec::with_capacity(records.len(), GFP_KERNEL_ACCOUNT)?;
    for record in records.iter() {
        let site = table.count(record.tag, record.bytes).unwrap_or(usize::MAX);
        // Within the capacity reserved above: never allocates.
        let _ = entries.push(
            Entry {
                record: *record,
                site,
            },
            GFP_NOWAIT,
        );
    }
    Ok((entries, table))
}

/// One process's line: its thread group, its objects and bytes, and one of its records.
struct Process {
    tgid: i32,
    objects: usize,
    bytes: usize,
    first: usize,
}

/// A report, made when its file is opened and shown item by item: each object, stack group or
/// process is one item, and the untracked remainder the last.
pub(crate) struct Report {
    view: View,
    now: u64,
    entries: KVVec<Entry>,
    table: SiteTable,
    /// Stacks: the runs of `entries` with one stack and site, as (start, end).
    runs: KVVec<(usize, usize)>,
    /// Processes, most bytes first.
    processes: KVVec<Process>,
    untracked: (u64, i64),
    dropped: u64,
    busy: u64,
    /// The stack frames' buffer (`sprint_symbol()`'s).
    buf: KVVec<u8>,
}

// SAFETY: The records' tag pointers are compared, never dereferenced, once the report is made;
// their stack handles are the depot's, which never frees a stack.
unsafe impl Send for Report {}

impl Report {
    /// Makes the report `view`. Process context.
    pub(crate) fn new(view: View) -> Result<Self> {
        // SAFETY: Asking lockdown has no precondition.
        kernel::error::to_result(unsafe { bindings::alloctag_capture_locked_down() })?;
        let (mut entries, table) = take()?;
        let untracked = table.untracked_total();
        let (_, _, dropped, busy) = super::stats();
        // SAFETY: Reading the clock has no precondition.
        let now = unsafe { bindings::alloctag_capture_now() };
        let mut runs = KVVec::new();
        let mut processes = KVVec::new();
        match view {
            View::Objects => sort_by_key(&mut entries, |e| e.record.time_ns),
            View::Stacks => {
                sort_by_key(&mut entries, |e| (e.record.stack, e.site, e.record.time_ns));
                let mut start = 0;
                while start < entries.len() {
                    let key = (entries[start].record.stack, entries[start].site);
                    let end = entries[start..]
                        .iter()
                        .position(|e| (e.record.stack, e.site) != key)
                        .map_or(entries.len(), |n| start + n);
                    runs.push((start, end), GFP_KERNEL_ACCOUNT)?;
                    start = end;
                }
            }
            View::Processes => {
                sort_by_key(&mut entries, |e| e.record.tgid);
                let mut start = 0;
                while start < entries.len() {
                    let tgid = entries[start].record.tgid;
                    let end = entries[start..]
                        .iter()
                        .position(|e| e.record.tgid != tgid)
                        .map_or(entries.len(), |n| start + n);
                    let bytes = entries[start..end].iter().map(|e| e.record.bytes).sum();
                    processes.push(
                        Process {
                            tgid,
                            objects: end - start,
                            bytes,
                            first: start,
                        },
                        GFP_KERNEL_ACCOUNT,
                    )?;
                    start = end;
                }
                // Most bytes first, then by tgid.
                sort_by_key(&mut processes, |p| (Reverse(p.bytes), p.tgid));
            }
        }
        Ok(Self {
            view,
            now,
            entries,
            table,
            runs,
            processes,
            untracked,
            dropped,
            busy,
            buf: KVVec::from_elem(0u8, SYMBOL_LEN, GFP_KERNEL_ACCOUNT)?,
        })
    }

    /// The items before the untracked remainder.
    fn items(&self) -> usize {
        match self.view {
            View::Objects => self.entries.len(),
            View::Stacks => self.runs.len(),
            View::Processes => self.processes.len(),
        }
    }
}

impl Listing for Report {
    fn len(&self) -> usize {
        self.items() + 1
    }

    fn show(&mut self, i: usize, w: &mut SeqWriter) -> fmt::Result {
        show(self, i, w)
    }
}

/// Writes item `i` of `report` into `w`.
fn show(report: &mut Report, i: usize, w: &mut impl Write) -> fmt::Result {
    if i == report.items() {
        let (objects, bytes) = report.untracked;
        return writeln!(
            w,
            "untracked objects={objects} bytes={bytes} dropped={} busy={}",
            report.dropped, report.busy
        );
    }
    match report.view {
        View::Objects => {
            let Some(e) = report.entries.get(i) else {
                return Ok(());
            };
            write_object(w, &e.record, report.table.name(e.site), report.now)?;
            write_stack(w, e.record.stack, &mut report.buf)
        }
        View::Stacks => {
            let Some(&(start, end)) = report.runs.get(i) else {
                return Ok(());
            };
            let group = &report.entries[start..end];
            let site = report.table.name(group[0].site);
            write_stack_group(w, group, site, report.now, &mut report.buf)
        }
        View::Processes => {
            let Some(p) = report.processes.get(i) else {
                return Ok(());
            };
            writeln!(
                w,
                "process tgid={} comm={} objects={} bytes={}",
                p.tgid,
                Word(report.entries[p.first].record.comm()),
                p.objects,
                p.bytes
            )
        }
    }
}

/// Writes the whole report `view`, as reading its file shows it.
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
pub(crate) fn write(w: &mut impl Write, view: View) -> Result {
    let mut report = Report::new(view)?;
    for i in 0..report.len() {
        show(&mut report, i, w).map_err(|_| ENOMEM)?;
    }
    Ok(())
}
