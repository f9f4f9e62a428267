// SPDX-License-Identifier: GPL-2.0
//! GET_SPLIT, alloctag's ioctl (include/uapi/linux/alloc_tag.h,
//! src/allocinfo/ioctl.rs and split.rs): its arguments at random and at
//! their edges, what the ABI lets it answer for them, and what the fuzzer
//! knows afterwards of the split the open file keeps (which
//! `ALLOCINFO_SPLIT_NEXT` needs). The calls themselves are the ioctl
//! thread's (`ioctls`, `split_calls`).

use allocinfo_ioctl::abi::*;
use rand::{Rng, RngExt};

/// What the fuzzer knows of the split an open file keeps: none kept (a new
/// file, or after a GET_AT that answered), one kept (after a GET_SPLIT that
/// answered), or not known (after a call that failed past the point where
/// the kernel replaces the filter and split).
pub(crate) type Kept = Option<bool>;

/// A GET_SPLIT's arguments, whose pointer to the struct is readable and
/// writable: all that decides its answer but the tags.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Case {
    pub(crate) by: u32,
    pub(crate) flags: u32,
    pub(crate) at: i32,
    pub(crate) nr: u32,
    /// The number of shares, `nr_cpu_ids`, as `nr` 0 answered.
    pub(crate) width: u32,
    /// Whether the kernel takes the filter (`ioctls::filter_ok`).
    pub(crate) filter_ok: bool,
    /// Whether `entries` is writable for `width` entries.
    pub(crate) entries_ok: bool,
    pub(crate) kept: Kept,
}

/// The answers the ABI allows a GET_SPLIT: success, and these errnos.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Allowed {
    pub(crate) ok: bool,
    pub(crate) errs: Vec<i32>,
}

impl Allowed {
    fn only(e: i32) -> Self {
        Self {
            ok: false,
            errs: vec![e],
        }
    }

    pub(crate) fn allows(&self, r: Result<(), i32>) -> bool {
        match r {
            Ok(()) => self.ok,
            Err(e) => self.errs.contains(&e),
        }
    }
}

/// What GET_SPLIT may answer in `c`, in the kernel's order of checks:
/// unknown flags; with `ALLOCINFO_SPLIT_NEXT` no split kept, else the split
/// (by node `EOPNOTSUPP`, unknown `EINVAL`), its CPU and the filter; `nr` 0
/// answers the width, a smaller `nr` than the width is `EINVAL`; then the
/// search (`ENOENT` past the matches) and the entries' write (`EFAULT`).
pub(crate) fn allowed(c: &Case) -> Allowed {
    if c.flags & !ALLOCINFO_SPLIT_NEXT != 0 {
        return Allowed::only(libc::EINVAL);
    }
    let mut errs = Vec::new();
    if c.flags & ALLOCINFO_SPLIT_NEXT != 0 {
        match c.kept {
            Some(false) => return Allowed::only(libc::EINVAL),
            None => errs.push(libc::EINVAL),
            Some(true) => {}
        }
    } else {
        if c.by == ALLOCINFO_SPLIT_NODE {
            return Allowed::only(libc::EOPNOTSUPP);
        }
        if c.by != ALLOCINFO_SPLIT_CPU
            || !(c.at == -1 || (c.at >= 0 && (c.at as u32) < c.width))
            || !c.filter_ok
        {
            return Allowed::only(libc::EINVAL);
        }
    }
    let ok = if c.nr == 0 {
        true
    } else if c.nr < c.width {
        if !errs.contains(&libc::EINVAL) {
            errs.push(libc::EINVAL);
        }
        false
    } else {
        errs.push(libc::ENOENT);
        if !c.entries_ok {
            errs.push(libc::EFAULT);
        }
        c.entries_ok
    };
    Allowed { ok, errs }
}

/// What the fuzzer knows of the kept split after GET_SPLIT answered `r` in
/// `c`. `_NEXT` and the refusals before the search change nothing; `nr` 0
/// neither. A search that found a tag keeps this split (even when the
/// entries could not be written out); `ENOENT` may have kept it or not (a
/// `pos` beyond the number of tags changes nothing).
pub(crate) fn kept_after(c: &Case, r: Result<(), i32>) -> Kept {
    let searched = c.flags == 0 && c.nr != 0;
    match r {
        _ if !searched => c.kept,
        Ok(()) => Some(true),
        Err(libc::EINVAL | libc::EOPNOTSUPP) => c.kept,
        Err(libc::EFAULT) if !c.entries_ok => Some(true),
        Err(libc::ENOENT) if c.kept == Some(true) => Some(true),
        Err(_) => None,
    }
}

/// What the fuzzer knows of the kept split after a GET_AT answered `r`: one
/// that searched drops it, and one refused before its search keeps it.
pub(crate) fn kept_after_get_at(kept: Kept, r: Result<(), i32>) -> Kept {
    match (kept, r) {
        (_, Ok(())) | (Some(false), _) => Some(false),
        _ => None,
    }
}

/// `nr_cpu_ids` from /sys/devices/system/cpu/possible (`0-3`, `0,2-5`): the
/// last possible CPU plus one.
pub(crate) fn cpus_from_possible(text: &str) -> Option<u32> {
    text.trim()
        .split(',')
        .map(|r| r.rsplit('-').next()?.trim().parse::<u32>().ok())
        .try_fold(None::<u32>, |max, n| Some(max.max(Some(n?))))?
        .map(|m| m + 1)
}

/// `by`: the CPU split mostly, the node split, and unknown ones.
pub(crate) fn random_by(rng: &mut impl Rng) -> u32 {
    match rng.random_range(0..10) {
        0 => ALLOCINFO_SPLIT_NODE,
        1 => __ALLOCINFO_SPLIT_LAST + 1,
        2 => rng.random(),
        _ => ALLOCINFO_SPLIT_CPU,
    }
}

/// `flags`: none, `ALLOCINFO_SPLIT_NEXT`, and unknown bits.
pub(crate) fn random_flags(rng: &mut impl Rng) -> u32 {
    match rng.random_range(0..20) {
        0..=9 => 0,
        10..=16 => ALLOCINFO_SPLIT_NEXT,
        17 => rng.random(),
        _ => (1 << rng.random_range(1..32)) | rng.random_range(0..=ALLOCINFO_SPLIT_NEXT),
    }
}

/// `at`: none (-1), a CPU, the first past the last, and out of range below.
pub(crate) fn random_at(rng: &mut impl Rng, width: u32) -> i32 {
    let width = i32::try_from(width).unwrap_or(i32::MAX);
    match rng.random_range(0..20) {
        0..=7 => -1,
        8..=14 => rng.random_range(0..width.max(1)),
        15 => width - 1,
        16 => width,
        17 => -2,
        18 => i32::MIN,
        _ => rng.random(),
    }
}

/// `min_at`: none, small, negative (a CPU that freed more than it
/// allocated), and the extremes.
pub(crate) fn random_min_at(rng: &mut impl Rng) -> i64 {
    match rng.random_range(0..10) {
        0..=4 => 0,
        5 | 6 => rng.random_range(0..65536),
        7 => -rng.random_range(1..65536),
        8 => *[i64::MAX, i64::MIN]
            .get(rng.random_range(0..2))
            .unwrap_or(&0),
        _ => rng.random(),
    }
}

/// `nr`: 0 (the query), too small, exact, more, and huge.
pub(crate) fn random_nr(rng: &mut impl Rng, width: u32) -> u32 {
    match rng.random_range(0..20) {
        0..=2 => 0,
        3 => width.saturating_sub(1),
        4 => 1,
        5..=13 => width,
        14 | 15 => width.saturating_add(1),
        16 => u32::MAX,
        _ => rng.random(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{SeedableRng, rngs::ChaCha8Rng};

    const EINVAL: i32 = libc::EINVAL;
    const ENOENT: i32 = libc::ENOENT;
    const EFAULT: i32 = libc::EFAULT;

    fn case() -> Case {
        Case {
            by: ALLOCINFO_SPLIT_CPU,
            flags: 0,
            at: -1,
            nr: 4,
            width: 4,
            filter_ok: true,
            entries_ok: true,
            kept: Some(false),
        }
    }

    fn errs(ok: bool, errs: &[i32]) -> Allowed {
        Allowed {
            ok,
            errs: errs.to_vec(),
        }
    }

    /// Each refusal of src/allocinfo/ioctl.rs, in its order.
    #[test]
    fn get_split_answers_as_the_abi_says() {
        let c = case();
        assert_eq!(allowed(&c), errs(true, &[ENOENT]));
        // Unknown flags first, whatever else is wrong.
        for flags in [2, 3, 1 << 31] {
            let bad = Case {
                flags,
                by: 7,
                nr: 0,
                ..c
            };
            assert_eq!(allowed(&bad), errs(false, &[EINVAL]), "{flags:#x}");
        }
        // The splits: by node is not supported, unknown ones are refused.
        assert_eq!(
            allowed(&Case {
                by: ALLOCINFO_SPLIT_NODE,
                nr: 0,
                ..c
            }),
            errs(false, &[libc::EOPNOTSUPP])
        );
        assert_eq!(allowed(&Case { by: 2, ..c }), errs(false, &[EINVAL]));
        // A CPU: -1 or below the width.
        for (at, ok) in [(-1, true), (0, true), (3, true), (4, false), (-2, false)] {
            let a = allowed(&Case { at, nr: 0, ..c });
            assert_eq!(a.ok, ok, "at {at}");
        }
        assert_eq!(
            allowed(&Case {
                filter_ok: false,
                ..c
            }),
            errs(false, &[EINVAL])
        );
        // nr: 0 asks, fewer than the width is refused, more is room.
        assert_eq!(allowed(&Case { nr: 0, ..c }), errs(true, &[]));
        assert_eq!(allowed(&Case { nr: 3, ..c }), errs(false, &[EINVAL]));
        assert_eq!(allowed(&Case { nr: u32::MAX, ..c }), errs(true, &[ENOENT]));
        // Entries it cannot write: EFAULT, unless nothing matched.
        assert_eq!(
            allowed(&Case {
                entries_ok: false,
                ..c
            }),
            errs(false, &[ENOENT, EFAULT])
        );
        assert_eq!(
            allowed(&Case {
                entries_ok: false,
                nr: 0,
                ..c
            }),
            errs(true, &[])
        );
    }

    /// `_NEXT` reads neither the split, nor the CPU, nor the filter: only
    /// whether a split is kept.
    #[test]
    fn get_split_next_needs_a_kept_split() {
        let next = Case {
            flags: ALLOCINFO_SPLIT_NEXT,
            by: ALLOCINFO_SPLIT_NODE,
            at: -5,
            filter_ok: false,
            ..case()
        };
        assert_eq!(allowed(&next), errs(false, &[EINVAL]));
        assert_eq!(
            allowed(&Case {
                kept: Some(true),
                ..next
            }),
            errs(true, &[ENOENT])
        );
        assert_eq!(
            allowed(&Case {
                kept: Some(true),
                nr: 0,
                ..next
            }),
            errs(true, &[])
        );
        assert_eq!(
            allowed(&Case {
                kept: Some(true),
                nr: 1,
                ..next
            }),
            errs(false, &[EINVAL])
        );
        // Not known: EINVAL, or what a kept split allows.
        assert_eq!(
            allowed(&Case { kept: None, ..next }),
            errs(true, &[EINVAL, ENOENT])
        );
        assert_eq!(
            allowed(&Case {
                kept: None,
                nr: 2,
                ..next
            }),
            errs(false, &[EINVAL])
        );
        let a = allowed(&Case {
            kept: None,
            entries_ok: false,
            ..next
        });
        assert!(!a.allows(Ok(())) && a.allows(Err(EFAULT)) && a.allows(Err(EINVAL)));
    }

    #[test]
    fn what_is_known_of_the_kept_split() {
        let c = case();
        assert_eq!(kept_after(&c, Ok(())), Some(true));
        assert_eq!(kept_after(&Case { nr: 0, ..c }, Ok(())), Some(false));
        assert_eq!(kept_after(&c, Err(EINVAL)), Some(false));
        assert_eq!(kept_after(&c, Err(libc::EOPNOTSUPP)), Some(false));
        assert_eq!(kept_after(&c, Err(ENOENT)), None);
        let kept = Case {
            kept: Some(true),
            ..c
        };
        assert_eq!(kept_after(&kept, Err(ENOENT)), Some(true));
        let bad_entries = Case {
            entries_ok: false,
            ..c
        };
        assert_eq!(kept_after(&bad_entries, Err(EFAULT)), Some(true));
        // _NEXT and unknown flags change nothing.
        for flags in [ALLOCINFO_SPLIT_NEXT, 2] {
            assert_eq!(kept_after(&Case { flags, ..c }, Ok(())), Some(false));
            assert_eq!(kept_after(&Case { flags, ..kept }, Err(ENOENT)), Some(true));
        }
        assert_eq!(kept_after_get_at(Some(true), Ok(())), Some(false));
        assert_eq!(kept_after_get_at(Some(true), Err(ENOENT)), None);
        assert_eq!(kept_after_get_at(Some(false), Err(EFAULT)), Some(false));
        assert_eq!(kept_after_get_at(None, Ok(())), Some(false));
        assert_eq!(kept_after_get_at(None, Err(EINVAL)), None);
    }

    #[test]
    fn nr_cpu_ids_from_the_possible_cpus() {
        assert_eq!(cpus_from_possible("0\n"), Some(1));
        assert_eq!(cpus_from_possible("0-3\n"), Some(4));
        assert_eq!(cpus_from_possible("0,2-5"), Some(6));
        assert_eq!(cpus_from_possible("0-7,16-31\n"), Some(32));
        assert_eq!(cpus_from_possible(""), None);
        assert_eq!(cpus_from_possible("0-x"), None);
    }

    /// The random arguments reach every edge.
    #[test]
    fn random_arguments_reach_the_edges() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let width = 4;
        let nrs: Vec<u32> = (0..2000).map(|_| random_nr(&mut rng, width)).collect();
        for want in [0, 1, 3, 4, 5, u32::MAX] {
            assert!(nrs.contains(&want), "nr {want}");
        }
        let ats: Vec<i32> = (0..2000).map(|_| random_at(&mut rng, width)).collect();
        for want in [-1, 0, 3, 4, -2, i32::MIN] {
            assert!(ats.contains(&want), "at {want}");
        }
        let bys: Vec<u32> = (0..500).map(|_| random_by(&mut rng)).collect();
        for want in [ALLOCINFO_SPLIT_CPU, ALLOCINFO_SPLIT_NODE, 2] {
            assert!(bys.contains(&want), "by {want}");
        }
        let flags: Vec<u32> = (0..500).map(|_| random_flags(&mut rng)).collect();
        assert!(flags.contains(&0) && flags.contains(&ALLOCINFO_SPLIT_NEXT));
        assert!(flags.iter().any(|f| f & !ALLOCINFO_SPLIT_NEXT != 0));
        let mins: Vec<i64> = (0..500).map(|_| random_min_at(&mut rng)).collect();
        assert!(mins.contains(&0) && mins.iter().any(|&m| m < 0));
    }
}
