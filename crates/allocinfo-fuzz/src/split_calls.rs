// SPDX-License-Identifier: GPL-2.0
//! The ioctl thread's GET_SPLIT calls (`ioctls` picks the command): the
//! width it answers to `nr` 0, a GET_SPLIT with random arguments and
//! pointers, checked against what the ABI allows (`split`), and that a
//! GET_SPLIT keeps its filter for GET_NEXT as GET_AT does.

use crate::ioctls::{self, check_answer, content_id, cut_name, filter_ok, ioctl, random_filter};
use crate::shared::{ALLOCINFO, Shared, errname};
use crate::split::{self, Case, Kept, Widths};
use crate::userptr::{rw_before_guard, unmapped};
use allocinfo_fuzz::shown;
use allocinfo_ioctl::abi::*;
use rand::{Rng, RngExt};
use std::fs;
use std::os::fd::AsRawFd;

/// What GET_SPLIT leaves in entries it did not write.
const SENTINEL: AllocinfoSplitEntry = AllocinfoSplitEntry {
    bytes: 0x5a5a_5a5a_5a5a_5a5a,
    calls: -0x5a5a_5a5a,
};

/// GET_SPLIT's arrays: the read-only page
/// ([`ro_page`](crate::userptr::ro_page)), the end of writable memory
/// before an inaccessible page ([`rw_before_guard`]), and room for two
/// entries more than the width, filled with [`SENTINEL`].
pub(crate) struct SplitBuffers {
    ro: *const u8,
    guard_end: *mut u8,
    entries: Vec<AllocinfoSplitEntry>,
}

impl SplitBuffers {
    /// The arrays for GET_SPLIT's `width` shares, beside the read-only
    /// page `ro`.
    pub(crate) fn new(ro: *const u8, width: u32) -> Self {
        Self {
            ro,
            guard_end: rw_before_guard(width as usize * size_of::<AllocinfoSplitEntry>()),
            entries: vec![SENTINEL; width as usize + 2],
        }
    }
}

/// The widths of GET_SPLIT's splits: its answers to `nr` 0 on a new file.
/// By CPU `nr_cpu_ids`, which must be the possible CPUs' (when sysfs says);
/// by node `nr_node_ids + 1`, which must be one more than the possible
/// nodes' (when sysfs says), or `EOPNOTSUPP` where per-node counting is off.
pub(crate) fn split_widths(sh: &Shared) -> Widths {
    let Ok(f) = fs::File::open(ALLOCINFO) else {
        sh.fail("cannot open /proc/allocinfo");
    };
    let width = |by| {
        let mut g = AllocinfoGetSplit {
            pos: 0,
            filter: AllocinfoFilter::NONE,
            by,
            flags: 0,
            at: -1,
            nr: 0,
            min_at: 0,
            entries: 0,
            data: AllocinfoTagData::ZERO,
        };
        ioctl(f.as_raw_fd(), ALLOCINFO_IOC_GET_SPLIT, (&raw mut g).cast()).map(|()| g.nr)
    };
    let possible = |what| {
        fs::read_to_string(format!("/sys/devices/system/{what}/possible"))
            .ok()
            .and_then(|t| split::cpus_from_possible(&t))
    };
    let cpu = match width(ALLOCINFO_SPLIT_CPU) {
        Ok(n) if n != 0 && possible("cpu").is_none_or(|p| p == n) => n,
        r => sh.fail(&format!(
            "GET_SPLIT by CPU with nr 0 answered {:?}, the possible CPUs {:?}",
            r.map_err(errname),
            possible("cpu")
        )),
    };
    let node = match width(ALLOCINFO_SPLIT_NODE) {
        Err(libc::EOPNOTSUPP) => None,
        Ok(n) if n >= 2 && possible("node").is_none_or(|p| p + 1 == n) => Some(n),
        r => sh.fail(&format!(
            "GET_SPLIT by node with nr 0 answered {:?}, the possible nodes {:?}",
            r.map_err(errname),
            possible("node")
        )),
    };
    Widths { cpu, node }
}

/// A GET_SPLIT with random arguments and pointers on `fd`, whose kept split
/// the fuzzer knows as `kept`: its answer must be one the ABI allows
/// ([`split::allowed`]), and a success must answer the width, write no
/// entry past it (none for `nr` 0), give back its input as it came, and
/// answer what its filter asks for. The shares' sum is not compared with
/// the tag's figures: both move while the kernel reads them.
pub(crate) fn get_split(
    sh: &Shared,
    rng: &mut impl Rng,
    fd: i32,
    widths: Widths,
    kept: &mut Kept,
    bufs: &mut SplitBuffers,
    n: &mut [u64; 5],
) {
    let by = split::random_by(rng);
    // The width this call's arguments aim at: its split's, or the CPUs'.
    let width = widths.of(by).unwrap_or(widths.cpu);
    let len = width as usize * size_of::<AllocinfoSplitEntry>();
    bufs.entries.fill(SENTINEL);
    let ro_end = bufs.ro.wrapping_add(4096);
    let into_buffer = bufs.entries.as_mut_ptr() as u64;
    // Where the entries go, and how many bytes can be written there.
    let (entries, room, what): (u64, usize, &str) = match rng.random_range(0..16) {
        0 => (0, 0, "NULL"),
        1 => (unmapped() as u64, 0, "an unmapped page"),
        2 => (bufs.ro as u64, 0, "a read-only page"),
        3 => (
            ro_end.wrapping_sub(rng.random_range(1..=len)) as u64,
            0,
            "a read-only page's end",
        ),
        4 => (0xffff_8880_0000_0000, 0, "a kernel address"),
        5 if !bufs.guard_end.is_null() => (
            bufs.guard_end.wrapping_sub(len) as u64,
            len,
            "the end of writable memory",
        ),
        6 if !bufs.guard_end.is_null() => {
            let room = rng.random_range(1..len);
            (
                bufs.guard_end.wrapping_sub(room) as u64,
                room,
                "across the end of writable memory",
            )
        }
        _ => (
            into_buffer,
            bufs.entries.len() * size_of::<AllocinfoSplitEntry>(),
            "a buffer",
        ),
    };
    let mut g = AllocinfoGetSplit {
        pos: if rng.random_bool(0.8) {
            rng.random_range(0..200)
        } else {
            rng.random()
        },
        filter: random_filter(rng),
        by,
        flags: split::random_flags(rng),
        at: split::random_at(rng, width),
        nr: split::random_nr(rng, width),
        min_at: split::random_min_at(rng),
        entries,
        data: AllocinfoTagData::ZERO,
    };
    let given = g;
    let size = size_of::<AllocinfoGetSplit>();
    let (arg, bad): (*mut u8, &str) = match rng.random_range(0..12) {
        0 => (std::ptr::null_mut(), "NULL"),
        1 => (unmapped().cast_mut(), "an unmapped page"),
        2 => (bufs.ro.cast_mut(), "a read-only page"),
        3 => (
            ro_end.wrapping_sub(rng.random_range(1..size)).cast_mut(),
            "a read-only page's end",
        ),
        4 => (0xffff_8880_0000_0000usize as *mut u8, "a kernel address"),
        _ => ((&raw mut g).cast(), ""),
    };
    let r = ioctl(fd, ALLOCINFO_IOC_GET_SPLIT, arg);
    n[usize::from(r.is_err())] += 1;
    if !bad.is_empty() {
        // It reads its argument first: unreadable, EFAULT. The read-only
        // page's zeros are a valid query (by CPU, at 0, nr 0) whose answer
        // cannot be written out: EFAULT too, and nothing changed.
        if r != Err(libc::EFAULT) {
            sh.fail(&format!(
                "GET_SPLIT with {bad}: {:?}, not EFAULT",
                r.map_err(errname)
            ));
        }
        return;
    }
    let case = Case {
        by: given.by,
        flags: given.flags,
        at: given.at,
        nr: given.nr,
        widths,
        filter_ok: filter_ok(&given.filter),
        room: room as u64,
        kept: *kept,
    };
    let allowed = split::allowed(&case);
    if !allowed.allows(r) {
        sh.fail(&format!(
            "GET_SPLIT (by {}, flags {:#x}, at {}, nr {} of {widths:?}, mask {:#x}, pos {}, entries at {what}, split kept {:?}): {:?}; allowed: {}{}",
            given.by,
            given.flags,
            given.at,
            given.nr,
            given.filter.mask,
            given.pos,
            *kept,
            r.map_err(errname),
            if allowed.ok { "success, " } else { "" },
            allowed
                .errs
                .iter()
                .map(|&e| errname(e))
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    *kept = split::kept_after(&case, r);
    if r.is_err() {
        return;
    }
    let untouched_from = |from: usize| bufs.entries[from..].iter().all(|e| *e == SENTINEL);
    // The width it answers: its split's, or the kept one's (either, when
    // which is not known).
    if !case.widths().contains(&g.nr) {
        sh.fail(&format!(
            "GET_SPLIT (by {}, flags {:#x}, nr {}) answered nr {}, not the width {:?}",
            given.by,
            given.flags,
            given.nr,
            g.nr,
            case.widths()
        ));
    }
    let width = g.nr;
    if given.nr == 0 {
        if (AllocinfoGetSplit { nr: 0, ..g }) != given {
            sh.fail("GET_SPLIT with nr 0 changed more than nr");
        }
        if entries == into_buffer && !untouched_from(0) {
            sh.fail("GET_SPLIT with nr 0 wrote entries");
        }
        return;
    }
    n[3] += 1;
    if given.flags == 0 && given.by == ALLOCINFO_SPLIT_NODE {
        n[4] += 1;
    }
    if (AllocinfoGetSplit {
        nr: given.nr,
        data: given.data,
        ..g
    }) != given
    {
        sh.fail(&format!(
            "GET_SPLIT changed its input: {given:?} came back as {g:?}"
        ));
    }
    if entries == into_buffer && !untouched_from(width as usize) {
        sh.fail(&format!(
            "GET_SPLIT (nr {}) wrote past its width {width}",
            given.nr
        ));
    }
    let filter = (given.flags == 0).then_some(&given.filter);
    check_answer(sh, &g.data, filter);
    if given.flags == 0 && given.at == -1 {
        split_keeps_place(sh, rng, fd, &given, bufs);
    }
}

/// After GET_SPLIT answered the tag at `g.pos` of its filter (with no CPU
/// filter), GET_NEXT goes on with that filter, as after a GET_AT: it
/// answers what GET_AT at `pos + 1` answers on another file, and the
/// GET_SPLIT's tag is GET_AT's at `pos`, unless tags came or went meanwhile
/// (the content id moved). Only for filters on names and lines, as
/// [`ioctls::refused_get_at_keeps_place`](crate::ioctls::refused_get_at_keeps_place).
fn split_keeps_place(
    sh: &Shared,
    rng: &mut impl Rng,
    fd: i32,
    g: &AllocinfoGetSplit,
    bufs: &mut SplitBuffers,
) {
    if !ioctls::place_check_wanted(rng, &g.filter) {
        return;
    }
    let Some(id0) = content_id(fd) else { return };
    let mut first = AllocinfoGetSplit {
        entries: bufs.entries.as_mut_ptr() as u64,
        nr: bufs.entries.len() as u32,
        data: AllocinfoTagData::ZERO,
        ..*g
    };
    if ioctl(fd, ALLOCINFO_IOC_GET_SPLIT, (&raw mut first).cast()).is_err() {
        return;
    }
    let mut next = AllocinfoTagData::ZERO;
    let rn = ioctl(fd, ALLOCINFO_IOC_GET_NEXT, (&raw mut next).cast());
    let Ok(other) = fs::File::open(ALLOCINFO) else {
        return;
    };
    let get_at = |pos: u64| {
        let mut a = AllocinfoGetAt {
            pos,
            filter: g.filter,
            data: AllocinfoTagData::ZERO,
        };
        let r = ioctl(other.as_raw_fd(), ALLOCINFO_IOC_GET_AT, (&raw mut a).cast());
        (r, a.data)
    };
    let (r_at, at) = get_at(g.pos);
    let (rw, want) = get_at(g.pos + 1);
    if content_id(fd) != Some(id0) {
        return;
    }
    let same = match (rn, rw) {
        (Ok(()), Ok(())) => next.tag == want.tag,
        (Err(a), Err(b)) => a == b,
        _ => false,
    };
    if r_at.is_err() || at.tag != first.data.tag || !same {
        sh.fail(&format!(
            "GET_SPLIT at pos {} (mask {:#x}) answered {:?} line {}, GET_AT there {:?} line {} ({:?}); GET_NEXT after it {:?} line {} ({:?}), GET_AT at pos {} {:?} line {} ({:?})",
            g.pos,
            g.filter.mask,
            shown(cut_name(&first.data.tag.function).unwrap_or_default(), 64),
            first.data.tag.lineno,
            shown(cut_name(&at.tag.function).unwrap_or_default(), 64),
            at.tag.lineno,
            r_at.map_err(errname),
            shown(cut_name(&next.tag.function).unwrap_or_default(), 64),
            next.tag.lineno,
            rn.map_err(errname),
            g.pos + 1,
            shown(cut_name(&want.tag.function).unwrap_or_default(), 64),
            want.tag.lineno,
            rw.map_err(errname),
        ));
    }
}
