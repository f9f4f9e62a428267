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
//! as `%pS` prints them.

use super::{
    pool::{self, Kind, Record},
    sites,
    sort::sort_by_key,
};
use crate::{
    alloc_tag::AllocTag,
    codetag::{self, Codetag},
};
use core::{
    cmp::Reverse,
    fmt::{self, Write},
};
use kernel::{
    alloc::{
        flags::{GFP_KERNEL, GFP_NOWAIT},
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

/// Copies the records, with the registry locked by the caller (`_registry`) so that their tags
/// stay while it is held. The copy is allocated before the pool's lock is taken: nothing
/// allocates under it.
pub(crate) fn snapshot(_registry: &codetag::Registry) -> Result<KVVec<Record>> {
    let size = pool::lock().table.as_ref().map_or(0, |t| t.usage().1);
    let mut out = KVVec::with_capacity(size, GFP_KERNEL)?;
    let state = pool::lock();
    if let Some(table) = state.table.as_ref() {
        table.for_each(|r| {
            // Within the capacity reserved above, so this never allocates; a pool made since
            // with more records is cut to the older size.
            if out.len() < out.capacity() {
                let _ = out.push(*r, GFP_NOWAIT);
            }
        });
    }
    drop(state);
    Ok(out)
}

/// The tag a record's tag pointer names.
///
/// # Safety
///
/// `r` must be a copy of a record that was in the pool while the caller held the registry
/// locked (read or write), as [`snapshot`] makes them, and the caller must still hold it: a
/// tag's records are freed when it is unmarked, under the registry's write lock, before the tag
/// can go.
unsafe fn tag(r: &Record) -> &Codetag {
    // SAFETY: By the caller's guarantee the tag is alive while the registry stays locked.
    unsafe { &*r.tag }
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

/// Writes the frames of stack depot handle `stack`, one per line, as `%pS` does.
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
        // SAFETY: `buf` holds at least `KSYM_SYMBOL_LEN` bytes, as `sprint_symbol()` needs.
        let len = unsafe { bindings::sprint_symbol(buf.as_mut_ptr().cast(), addr as _) };
        let len = (len.max(0) as usize).min(buf.len());
        let name = core::str::from_utf8(&buf[..len]).unwrap_or("?");
        writeln!(w, "  {name}")?;
    }
    Ok(())
}

/// Writes the line of the record `r`.
///
/// # Safety
///
/// As for [`tag`].
unsafe fn write_object(w: &mut impl Write, r: &Record, now: u64) -> fmt::Result {
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
        Kind::Slab => write!(w, "kind=slab addr={:#x}", r.object)?,
        Kind::Pages => write!(w, "kind=pages order={} pfn={:#x}", r.order, r.object)?,
    }
    // SAFETY: The caller guarantees `r`.
    let site = unsafe { tag(r) };
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

/// Writes the line of a group of records with one stack and site.
///
/// # Safety
///
/// As for [`tag`], for each record of `group`.
unsafe fn write_stack_group(
    w: &mut impl Write,
    group: &[Record],
    now: u64,
    buf: &mut [u8],
) -> fmt::Result {
    let Some(first) = group.first() else {
        return Ok(());
    };
    let g = Group::of(group.iter(), now);
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
    for (i, r) in group.iter().enumerate() {
        if group[..i].iter().any(|o| o.tgid == r.tgid) {
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
    // SAFETY: The caller guarantees the records.
    let site = unsafe { tag(first) };
    writeln!(w, " site={site}")?;
    write_stack(w, first.stack, buf)
}

/// Writes, for each process (thread group), its live objects and bytes at the captured sites,
/// most bytes first.
fn write_processes(w: &mut impl Write, records: &mut [Record]) -> fmt::Result {
    sort_by_key(records, |r| r.tgid);
    let mut groups = KVVec::<(i32, usize, usize, usize)>::new();
    let mut start = 0;
    while start < records.len() {
        let tgid = records[start].tgid;
        let end = records[start..]
            .iter()
            .position(|r| r.tgid != tgid)
            .map_or(records.len(), |n| start + n);
        let bytes = records[start..end].iter().map(|r| r.bytes).sum::<usize>();
        groups
            .push((tgid, end - start, bytes, start), GFP_KERNEL)
            .map_err(|_| fmt::Error)?;
        start = end;
    }
    // Most bytes first, then by tgid.
    sort_by_key(&mut groups, |g| (Reverse(g.2), g.0));
    for &(tgid, objects, bytes, first) in groups.iter() {
        writeln!(
            w,
            "process tgid={tgid} comm={} objects={objects} bytes={bytes}",
            Word(records[first].comm())
        )?;
    }
    Ok(())
}

/// Writes what the captured sites' counters hold beyond their records.
fn write_untracked(
    w: &mut impl Write,
    registry: &codetag::Registry,
    records: &[Record],
) -> fmt::Result {
    let (mut objects, mut bytes) = (0u64, 0i64);
    sites::for_each(registry, |_, tag| {
        let (n, b) = untracked(tag, records);
        objects += n;
        bytes += b;
    });
    let (_, _, dropped, busy) = super::stats();
    writeln!(
        w,
        "untracked objects={objects} bytes={bytes} dropped={dropped} busy={busy}"
    )
}

/// Returns the objects and bytes that `tag`'s counters hold beyond its records in `records`.
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

/// Writes the report `view`.
pub(crate) fn write(w: &mut impl Write, view: View) -> fmt::Result {
    let registry = codetag::read();
    let mut records = snapshot(&registry).map_err(|_| fmt::Error)?;
    // SAFETY: Reading the clock has no precondition.
    let now = unsafe { bindings::alloctag_capture_now() };
    let mut buf = KVVec::from_elem(0u8, SYMBOL_LEN, GFP_KERNEL).map_err(|_| fmt::Error)?;
    match view {
        View::Objects => {
            sort_by_key(&mut records, |r| r.time_ns);
            for r in records.iter() {
                // SAFETY: `records` is a snapshot made under the registry, still held.
                unsafe { write_object(w, r, now) }?;
                write_stack(w, r.stack, &mut buf)?;
            }
        }
        View::Stacks => {
            sort_by_key(&mut records, |r| (r.stack, r.tag as usize, r.time_ns));
            let mut start = 0;
            while start < records.len() {
                let key = (records[start].stack, records[start].tag);
                let end = records[start..]
                    .iter()
                    .position(|r| (r.stack, r.tag) != key)
                    .map_or(records.len(), |n| start + n);
                // SAFETY: As above.
                unsafe { write_stack_group(w, &records[start..end], now, &mut buf) }?;
                start = end;
            }
        }
        View::Processes => write_processes(w, &mut records)?,
    }
    write_untracked(w, &registry, &records)
}
