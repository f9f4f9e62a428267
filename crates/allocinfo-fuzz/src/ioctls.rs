// SPDX-License-Identifier: GPL-2.0
//! The ioctl thread: /proc/allocinfo's ioctls, mainline's three and
//! alloctag's GET_SPLIT (and unknown ones), with random commands, filters,
//! positions, splits and user pointers, on one file. They must fail as the
//! ABI says for bad pointers, filters and splits, answer what the filter
//! asks for, a refused GET_AT must leave GET_NEXT's place, and GET_SPLIT
//! must write the width it answers to `nr` 0 and no more, and keep its
//! filter for GET_NEXT as GET_AT does. GET_SPLIT's calls are in
//! `split_calls`, its arguments and allowed answers in `split`.

use crate::shared::{ALLOCINFO, Shared, errname, errno};
use crate::split::{self, Kept};
use crate::split_calls::{SplitBuffers, get_split, split_widths};
use crate::userptr::{ro_page, unmapped};
use allocinfo_fuzz::shown;
use allocinfo_ioctl::abi::*;
use rand::{Rng, RngExt, rngs::ChaCha8Rng, seq::IndexedRandom};
use std::fs;
use std::os::fd::AsRawFd;

fn name(rng: &mut impl Rng) -> [u8; ALLOCINFO_STR_SIZE] {
    let mut out = [0u8; ALLOCINFO_STR_SIZE];
    const NAMES: &[&str] = &[
        "",
        "alloctag_test",
        "dup_mm",
        "copy_process",
        "__d_alloc",
        "alloc_inode",
        "alloctag_test_init",
        "kernel/fork.c",
        "fs/dcache.c",
        "mm/slub.c",
        "mm/vmalloc.c",
        "lib/alloctag/tests/modules/alloctag_test.c",
        "*",
    ];
    match rng.random_range(0..6) {
        0 => rng.fill(&mut out[..]),
        1 => out.fill(b'a'),
        _ => {
            let n = NAMES.choose(rng).copied().unwrap_or("");
            out[..n.len()].copy_from_slice(n.as_bytes());
        }
    }
    out
}

pub(crate) fn random_filter(rng: &mut impl Rng) -> AllocinfoFilter {
    AllocinfoFilter {
        // Most filters match some tags: none, or one field.
        mask: match rng.random_range(0..10) {
            0 => rng.random(),
            1 => 1 << rng.random_range(0..64),
            2 | 3 => rng.random_range(0..=ALLOCINFO_FILTER_MASKS),
            4..=6 => 0,
            _ => 1 << rng.random_range(0..=__ALLOCINFO_FILTER_LAST),
        },
        fields: AllocinfoTag {
            modname: name(rng),
            function: name(rng),
            filename: name(rng),
            lineno: if rng.random_bool(0.8) {
                rng.random_range(0..3000)
            } else {
                rng.random()
            },
        },
        min_size: if rng.random_bool(0.5) {
            rng.random_range(0..65536)
        } else {
            rng.random()
        },
        max_size: if rng.random_bool(0.5) {
            rng.random_range(0..1 << 30)
        } else {
            rng.random()
        },
        inaccurate: rng.random_range(0..3),
    }
}

pub(crate) fn cut_name(b: &[u8; ALLOCINFO_STR_SIZE]) -> Option<&[u8]> {
    b.iter().position(|&c| c == 0).map(|n| &b[..n])
}

/// Whether the kernel must take the filter: known bits only (alloctag's
/// `ALLOCINFO_FILTER_UNLOADED` among them), and a minimum size not above
/// the maximum.
pub(crate) fn filter_ok(f: &AllocinfoFilter) -> bool {
    let sizes = ALLOCINFO_FILTER_MASK_MIN_SIZE | ALLOCINFO_FILTER_MASK_MAX_SIZE;
    f.mask & !ALLOCINFO_FILTER_MASKS == 0 && !(f.mask & sizes == sizes && f.min_size > f.max_size)
}

/// What is wrong with an answer's `unloaded`: a flag (0 or 1), and 1 for
/// every answer to `ALLOCINFO_FILTER_UNLOADED`.
fn unloaded_wrong(d: &AllocinfoTagData, f: Option<&AllocinfoFilter>) -> Option<String> {
    let unloaded = d.counter.unloaded;
    if unloaded > 1 {
        return Some(format!("ioctl answer with unloaded {unloaded}, not 0 or 1"));
    }
    let asked = f.is_some_and(|f| f.mask & ALLOCINFO_FILTER_MASK_UNLOADED != 0);
    (asked && unloaded == 0).then(|| {
        format!(
            "GET_AT/GET_NEXT with the unloaded filter answered a loaded module's tag: {:?} line {}",
            shown(cut_name(&d.tag.function).unwrap_or_default(), 64),
            d.tag.lineno
        )
    })
}

/// Fills `g` from a successful GET_AT or GET_NEXT and checks the answer:
/// each name NUL-terminated, and the filter's exact fields matched.
pub(crate) fn check_answer(sh: &Shared, d: &AllocinfoTagData, f: Option<&AllocinfoFilter>) {
    let t = &d.tag;
    let (Some(m), Some(func), Some(file)) = (
        cut_name(&t.modname),
        cut_name(&t.function),
        cut_name(&t.filename),
    ) else {
        sh.fail(&format!(
            "ioctl answer with a name without a NUL: {:?}",
            shown(&t.function, 64)
        ));
    };
    if func.is_empty() || file.is_empty() {
        sh.fail(&format!(
            "ioctl answer with an empty name: file {:?} line {} function {:?} module {:?} ({} bytes in {} calls)",
            shown(file, 64),
            t.lineno,
            shown(func, 64),
            shown(m, 64),
            d.counter.bytes,
            d.counter.calls,
        ));
    }
    if let Some(why) = unloaded_wrong(d, f) {
        sh.fail(&why);
    }
    let Some(f) = f else { return };
    let want = |bit: u64, got: &[u8], fld: &[u8; ALLOCINFO_STR_SIZE], what: &str| {
        if f.mask & bit != 0
            && let Some(w) = cut_name(fld)
            && w.len() < ALLOCINFO_STR_SIZE - 1
            && got != w
        {
            sh.fail(&format!(
                "GET_AT/GET_NEXT with {what} {:?} answered {what} {:?}",
                shown(w, 64),
                shown(got, 64)
            ));
        }
    };
    want(
        ALLOCINFO_FILTER_MASK_MODNAME,
        m,
        &f.fields.modname,
        "module",
    );
    want(
        ALLOCINFO_FILTER_MASK_FUNCTION,
        func,
        &f.fields.function,
        "function",
    );
    want(
        ALLOCINFO_FILTER_MASK_FILENAME,
        file,
        &f.fields.filename,
        "file",
    );
    if f.mask & ALLOCINFO_FILTER_MASK_LINENO != 0 && t.lineno != f.fields.lineno {
        sh.fail(&format!(
            "GET_AT/GET_NEXT with line {} answered line {}",
            f.fields.lineno, t.lineno
        ));
    }
}

pub(crate) fn ioctl(fd: i32, cmd: Request, arg: *mut u8) -> Result<(), i32> {
    // SAFETY: the ioctl's argument is a buffer of the size the command
    // names, or an address the kernel must refuse.
    let r = unsafe { libc::ioctl(fd, cmd, arg) };
    if r == 0 { Ok(()) } else { Err(errno()) }
}

pub(crate) fn content_id(fd: i32) -> Option<u64> {
    let mut id = AllocinfoContentId { id: 0 };
    ioctl(fd, ALLOCINFO_IOC_CONTENT_ID, (&raw mut id).cast())
        .ok()
        .map(|_| id.id)
}

/// The commands the kernel knows.
const KNOWN: [Request; 4] = [
    ALLOCINFO_IOC_CONTENT_ID,
    ALLOCINFO_IOC_GET_AT,
    ALLOCINFO_IOC_GET_NEXT,
    ALLOCINFO_IOC_GET_SPLIT,
];

/// The ioctls with random commands, arguments and pointers.
pub(crate) fn ioctls(sh: &Shared, mut rng: ChaCha8Rng) {
    // Succeeded, refused, GET_AT answers checked, GET_SPLIT answers checked,
    // of them by node.
    let mut n = [0u64; 5];
    let ro = ro_page();
    let ro_end = ro.wrapping_add(4096);
    let widths = split_widths(sh);
    let mut bufs = SplitBuffers::new(ro, widths.max());
    let mut file = fs::File::open(ALLOCINFO).ok();
    // A new file keeps no split.
    let mut kept = Kept::Nothing;
    while sh.running() {
        if file.is_none() || rng.random_bool(0.02) {
            file = fs::File::open(ALLOCINFO).ok();
            kept = Kept::Nothing;
        }
        let Some(fd) = file.as_ref().map(|f| f.as_raw_fd()) else {
            sh.fail("cannot open /proc/allocinfo");
        };
        let cmd = match rng.random_range(0..26) {
            0..=4 => ALLOCINFO_IOC_CONTENT_ID,
            5..=11 => ALLOCINFO_IOC_GET_AT,
            12..=17 => ALLOCINFO_IOC_GET_NEXT,
            18 => libc::_IOWR::<AllocinfoGetAt>(ALLOCINFO_IOC_BASE, rng.random_range(3..256)),
            19 => loop {
                // Not a known command by chance: its argument here is
                // GET_AT's, smaller than GET_SPLIT's.
                let c = rng.random::<u32>() as Request;
                if !KNOWN.contains(&c) {
                    break c;
                }
            },
            _ => ALLOCINFO_IOC_GET_SPLIT,
        };
        if cmd == ALLOCINFO_IOC_GET_SPLIT {
            get_split(sh, &mut rng, fd, widths, &mut kept, &mut bufs, &mut n);
            continue;
        }
        let known = KNOWN.contains(&cmd);
        let mut g = AllocinfoGetAt {
            pos: if rng.random_bool(0.8) {
                rng.random_range(0..200)
            } else {
                rng.random()
            },
            filter: random_filter(&mut rng),
            data: AllocinfoTagData::ZERO,
        };
        let filter_ok = filter_ok(&g.filter);
        let mut next = AllocinfoTagData::ZERO;
        let mut id = AllocinfoContentId { id: 0 };
        let size = std::mem::size_of::<AllocinfoGetAt>();
        let ptr_kind = rng.random_range(0..12);
        let (arg, bad): (*mut u8, &str) = match ptr_kind {
            0 => (std::ptr::null_mut(), "NULL"),
            1 => (unmapped().cast_mut(), "an unmapped page"),
            2 => (ro.cast_mut(), "a read-only page"),
            3 => (
                ro_end.wrapping_sub(rng.random_range(1..size)).cast_mut(),
                "a read-only page's end",
            ),
            4 => (0xffff_8880_0000_0000usize as *mut u8, "a kernel address"),
            _ if cmd == ALLOCINFO_IOC_GET_NEXT => ((&raw mut next).cast(), ""),
            _ if cmd == ALLOCINFO_IOC_CONTENT_ID => ((&raw mut id).cast(), ""),
            _ => ((&raw mut g).cast(), ""),
        };
        let r = ioctl(fd, cmd, arg);
        n[usize::from(r.is_err())] += 1;
        if cmd == ALLOCINFO_IOC_GET_AT {
            kept = split::kept_after_get_at(kept, r);
        }
        if !known {
            if r != Err(libc::ENOTTY) {
                sh.fail(&format!(
                    "unknown ioctl {cmd:#x} on /proc/allocinfo: {:?}, not ENOTTY",
                    r.map_err(errname)
                ));
            }
            continue;
        }
        if !bad.is_empty() {
            // Every command writes its answer out: a pointer it cannot
            // write to must fail, and with EFAULT unless the filter or the
            // position was refused first (GET_AT reads before it writes),
            // or the walk was at its end (GET_NEXT).
            let may = match (cmd, ptr_kind) {
                (c, 2 | 3) if c == ALLOCINFO_IOC_GET_AT => {
                    vec![libc::EFAULT, libc::EINVAL, libc::ENOENT]
                }
                (c, _) if c == ALLOCINFO_IOC_GET_NEXT => vec![libc::EFAULT, libc::ENOENT],
                _ => vec![libc::EFAULT],
            };
            match r {
                Ok(()) => sh.fail(&format!("ioctl {cmd:#x} with {bad} succeeded")),
                Err(e) if !may.contains(&e) => sh.fail(&format!(
                    "ioctl {cmd:#x} with {bad}: {}, not EFAULT",
                    errname(e)
                )),
                Err(_) => continue,
            }
        }
        match cmd {
            c if c == ALLOCINFO_IOC_CONTENT_ID => {
                if let Err(e) = r {
                    sh.fail(&format!("CONTENT_ID: {}", errname(e)));
                }
            }
            c if c == ALLOCINFO_IOC_GET_AT => match r {
                Ok(()) if !filter_ok => sh.fail(&format!(
                    "GET_AT took a bad filter: mask {:#x} min {} max {}",
                    g.filter.mask, g.filter.min_size, g.filter.max_size
                )),
                Ok(()) => {
                    n[2] += 1;
                    check_answer(sh, &g.data, Some(&g.filter));
                    refused_get_at_keeps_place(sh, &mut rng, fd, &g);
                }
                Err(e) if e == libc::EINVAL && !filter_ok => {}
                Err(e) if e == libc::ENOENT && filter_ok => {}
                Err(e) => sh.fail(&format!(
                    "GET_AT (mask {:#x}, pos {}): {}",
                    g.filter.mask,
                    g.pos,
                    errname(e)
                )),
            },
            _ => match r {
                Ok(()) => check_answer(sh, &next, None),
                Err(e) if e == libc::ENOENT => {}
                Err(e) => sh.fail(&format!("GET_NEXT: {}", errname(e))),
            },
        }
    }
    sh.count("ioctls succeeded".into(), n[0]);
    sh.count("ioctls refused".into(), n[1]);
    sh.count("ioctl GET_AT answers checked".into(), n[2]);
    sh.count("ioctl GET_SPLIT answers checked".into(), n[3]);
    sh.count(
        format!(
            "ioctl GET_SPLIT answers by node checked (widths {}, {})",
            widths.cpu,
            widths
                .node
                .map_or("node split refused".into(), |w| w.to_string())
        ),
        n[4],
    );
}

/// Whether to check that a walk keeps its place, about one time in three:
/// only for filters on names and lines, whose matches do not move by
/// themselves as sizes and accuracy do.
pub(crate) fn place_check_wanted(rng: &mut impl Rng, filter: &AllocinfoFilter) -> bool {
    let moving = ALLOCINFO_FILTER_MASK_MIN_SIZE
        | ALLOCINFO_FILTER_MASK_MAX_SIZE
        | ALLOCINFO_FILTER_MASK_INACCURATE;
    filter.mask & moving == 0 && rng.random_bool(0.3)
}

/// After GET_AT answered tag P, a GET_AT refused before it looks at the
/// tags (a bad filter, an argument it cannot read) must leave the place:
/// GET_NEXT then answers what GET_AT at P + 1 answers on another file,
/// unless tags came or went meanwhile (the content id moved). Only for
/// filters on names and lines: sizes and accuracy move by themselves.
fn refused_get_at_keeps_place(sh: &Shared, rng: &mut impl Rng, fd: i32, g: &AllocinfoGetAt) {
    if !place_check_wanted(rng, &g.filter) {
        return;
    }
    let Some(id0) = content_id(fd) else { return };
    let mut first = AllocinfoGetAt {
        pos: g.pos,
        filter: g.filter,
        data: AllocinfoTagData::ZERO,
    };
    if ioctl(fd, ALLOCINFO_IOC_GET_AT, (&raw mut first).cast()).is_err() {
        return;
    }
    let (arg, how): (*mut u8, &str) = if rng.random_bool(0.5) {
        (std::ptr::null_mut(), "from NULL")
    } else {
        (unmapped().cast_mut(), "from an unmapped page")
    };
    let mut bad = AllocinfoGetAt {
        pos: 0,
        filter: AllocinfoFilter {
            mask: 1 << 40,
            ..g.filter
        },
        data: AllocinfoTagData::ZERO,
    };
    let (r, how) = if rng.random_bool(0.5) {
        (ioctl(fd, ALLOCINFO_IOC_GET_AT, arg), how)
    } else {
        (
            ioctl(fd, ALLOCINFO_IOC_GET_AT, (&raw mut bad).cast()),
            "with an unknown mask bit",
        )
    };
    if r.is_ok() {
        sh.fail(&format!("GET_AT {how} succeeded"));
    }
    let mut next = AllocinfoTagData::ZERO;
    let rn = ioctl(fd, ALLOCINFO_IOC_GET_NEXT, (&raw mut next).cast());
    let Ok(other) = fs::File::open(ALLOCINFO) else {
        return;
    };
    let mut want = AllocinfoGetAt {
        pos: g.pos + 1,
        filter: g.filter,
        data: AllocinfoTagData::ZERO,
    };
    let rw = ioctl(
        other.as_raw_fd(),
        ALLOCINFO_IOC_GET_AT,
        (&raw mut want).cast(),
    );
    if content_id(fd) != Some(id0) {
        return;
    }
    let same = match (rn, rw) {
        (Ok(()), Ok(())) => next.tag == want.data.tag,
        (Err(a), Err(b)) => a == b,
        _ => false,
    };
    if !same {
        sh.fail(&format!(
            "a GET_AT refused {how} moved GET_NEXT: after pos {} (mask {:#x}) it answered {:?} line {} ({:?}), GET_AT at pos {} answers {:?} line {} ({:?})",
            g.pos,
            g.filter.mask,
            shown(cut_name(&next.tag.function).unwrap_or_default(), 64),
            next.tag.lineno,
            rn.map_err(errname),
            g.pos + 1,
            shown(cut_name(&want.data.tag.function).unwrap_or_default(), 64),
            want.data.tag.lineno,
            rw.map_err(errname),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(mask: u64) -> AllocinfoFilter {
        AllocinfoFilter {
            mask,
            ..AllocinfoFilter::NONE
        }
    }

    /// Bit 7 (alloctag's unloaded filter) is known; bits above it are
    /// refused, and so is a minimum above the maximum.
    #[test]
    fn filters_the_kernel_must_take() {
        assert!(filter_ok(&mask(0)));
        assert!(filter_ok(&mask(ALLOCINFO_FILTER_MASK_UNLOADED)));
        assert!(filter_ok(&mask(0xff)));
        assert!(!filter_ok(&mask(1 << 8)));
        assert!(!filter_ok(&mask(1 << 40)));
        let sizes = ALLOCINFO_FILTER_MASK_MIN_SIZE | ALLOCINFO_FILTER_MASK_MAX_SIZE;
        let f = AllocinfoFilter {
            min_size: 2,
            max_size: 1,
            ..mask(sizes)
        };
        assert!(!filter_ok(&f));
        assert!(filter_ok(&AllocinfoFilter {
            mask: ALLOCINFO_FILTER_MASK_MIN_SIZE,
            ..f
        }));
        // The random filters reach the unloaded bit alone.
        use rand::SeedableRng;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let alone = (0..2000)
            .map(|_| random_filter(&mut rng).mask)
            .filter(|&m| m == ALLOCINFO_FILTER_MASK_UNLOADED)
            .count();
        assert!(alone > 10, "{alone}");
    }

    #[test]
    fn answers_to_the_unloaded_filter_are_unloaded() {
        let mut d = AllocinfoTagData::ZERO;
        d.tag.function[..9].copy_from_slice(b"foo_probe");
        d.tag.lineno = 12;
        let unloaded = mask(ALLOCINFO_FILTER_MASK_UNLOADED);
        assert_eq!(unloaded_wrong(&d, None), None);
        assert_eq!(unloaded_wrong(&d, Some(&mask(0))), None);
        assert_eq!(
            unloaded_wrong(&d, Some(&unloaded)).unwrap(),
            "GET_AT/GET_NEXT with the unloaded filter answered a loaded module's tag: \"foo_probe\" line 12"
        );
        d.counter.unloaded = 1;
        assert_eq!(unloaded_wrong(&d, Some(&unloaded)), None);
        assert_eq!(unloaded_wrong(&d, None), None);
        d.counter.unloaded = 2;
        assert!(unloaded_wrong(&d, None).unwrap().contains("not 0 or 1"));
    }
}
