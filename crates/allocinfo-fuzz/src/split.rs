// SPDX-License-Identifier: GPL-2.0
//! GET_SPLIT, alloctag's ioctl (include/uapi/linux/alloc_tag.h,
//! src/allocinfo/ioctl.rs and split.rs): its arguments at random and at
//! their edges, what the ABI lets it answer for them, and what the fuzzer
//! knows afterwards of the split the open file keeps (which
//! `ALLOCINFO_SPLIT_NEXT` needs). The calls themselves are the ioctl
//! thread's (`ioctls`, `split_calls`).

use allocinfo_ioctl::abi::*;
use rand::{Rng, RngExt};

/// What the fuzzer knows of the split an open file keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kept {
    /// None: a new file, or after a GET_AT that answered.
    Nothing,
    /// One, of this many shares: after a GET_SPLIT that answered.
    Width(u32),
    /// Not known: after a call that failed past the point where the kernel
    /// replaces the filter and split.
    Unknown,
}

/// The widths of the splits, as GET_SPLIT's `nr` 0 answered on a new file:
/// by CPU `nr_cpu_ids`; by node `nr_node_ids + 1`, or none where the node
/// split is refused (`EOPNOTSUPP`: per-node counting off or not built).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Widths {
    pub(crate) cpu: u32,
    pub(crate) node: Option<u32>,
}

impl Widths {
    /// The width of split `by`: `None` for the node split where it is
    /// refused, and for unknown splits.
    pub(crate) fn of(&self, by: u32) -> Option<u32> {
        match by {
            ALLOCINFO_SPLIT_CPU => Some(self.cpu),
            ALLOCINFO_SPLIT_NODE => self.node,
            _ => None,
        }
    }

    /// The widest split: what a buffer must hold.
    pub(crate) fn max(&self) -> u32 {
        self.cpu.max(self.node.unwrap_or(0))
    }
}

/// A GET_SPLIT's arguments, whose pointer to the struct is readable and
/// writable: all that decides its answer but the tags.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Case {
    pub(crate) by: u32,
    pub(crate) flags: u32,
    pub(crate) at: i32,
    pub(crate) nr: u32,
    pub(crate) widths: Widths,
    /// Whether the kernel takes the filter (`ioctls::filter_ok`).
    pub(crate) filter_ok: bool,
    /// How many bytes `entries` can take (0: none, a bad pointer).
    pub(crate) room: u64,
    pub(crate) kept: Kept,
}

impl Case {
    /// Whether `entries` takes `width` entries.
    pub(crate) fn entries_ok(&self, width: u32) -> bool {
        u64::from(width) * size_of::<AllocinfoSplitEntry>() as u64 <= self.room
    }

    /// The widths the call may answer with: its split's, the kept one's
    /// for `_NEXT` (any for a kept split not known); none where it is
    /// refused before.
    pub(crate) fn widths(&self) -> Vec<u32> {
        if self.flags & ALLOCINFO_SPLIT_NEXT != 0 {
            match self.kept {
                Kept::Nothing => vec![],
                Kept::Width(w) => vec![w],
                Kept::Unknown => {
                    let mut w = vec![self.widths.cpu];
                    w.extend(self.widths.node.filter(|&n| n != self.widths.cpu));
                    w
                }
            }
        } else {
            self.widths.of(self.by).into_iter().collect()
        }
    }
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
/// (by node `EOPNOTSUPP` where it is refused, unknown `EINVAL`), its CPU or
/// node and the filter; `nr` 0 answers the width, a smaller `nr` than the
/// width is `EINVAL`; then the search (`ENOENT` past the matches) and the
/// entries' write (`EFAULT`). With a kept split not known, what any width
/// allows.
pub(crate) fn allowed(c: &Case) -> Allowed {
    if c.flags & !ALLOCINFO_SPLIT_NEXT != 0 {
        return Allowed::only(libc::EINVAL);
    }
    let mut errs = Vec::new();
    if c.flags & ALLOCINFO_SPLIT_NEXT != 0 {
        match c.kept {
            Kept::Nothing => return Allowed::only(libc::EINVAL),
            Kept::Unknown => errs.push(libc::EINVAL),
            Kept::Width(_) => {}
        }
    } else {
        if c.by == ALLOCINFO_SPLIT_NODE && c.widths.node.is_none() {
            return Allowed::only(libc::EOPNOTSUPP);
        }
        let Some(width) = c.widths.of(c.by) else {
            return Allowed::only(libc::EINVAL);
        };
        if !(c.at == -1 || (c.at >= 0 && (c.at as u32) < width)) || !c.filter_ok {
            return Allowed::only(libc::EINVAL);
        }
    }
    let mut ok = false;
    let mut allow = |e| {
        if !errs.contains(&e) {
            errs.push(e);
        }
    };
    for width in c.widths() {
        if c.nr == 0 {
            ok = true;
        } else if c.nr < width {
            allow(libc::EINVAL);
        } else {
            allow(libc::ENOENT);
            if c.entries_ok(width) {
                ok = true;
            } else {
                allow(libc::EFAULT);
            }
        }
    }
    Allowed { ok, errs }
}

/// What the fuzzer knows of the kept split after GET_SPLIT answered `r` in
/// `c`. `_NEXT` and the refusals before the search change nothing; `nr` 0
/// neither. A search that found a tag keeps this split (even when the
/// entries could not be written out); `ENOENT` may have kept it or not (a
/// `pos` beyond the number of tags changes nothing).
pub(crate) fn kept_after(c: &Case, r: Result<(), i32>) -> Kept {
    let searched = c.flags == 0 && c.nr != 0;
    let Some(width) = c.widths.of(c.by) else {
        return c.kept;
    };
    match r {
        _ if !searched => c.kept,
        Ok(()) => Kept::Width(width),
        Err(libc::EINVAL | libc::EOPNOTSUPP) => c.kept,
        Err(libc::EFAULT) if !c.entries_ok(width) => Kept::Width(width),
        Err(libc::ENOENT) if c.kept == Kept::Width(width) => c.kept,
        Err(_) => Kept::Unknown,
    }
}

/// What the fuzzer knows of the kept split after a GET_AT answered `r`: one
/// that searched drops it, and one refused before its search keeps it.
pub(crate) fn kept_after_get_at(kept: Kept, r: Result<(), i32>) -> Kept {
    match (kept, r) {
        (_, Ok(())) | (Kept::Nothing, _) => Kept::Nothing,
        _ => Kept::Unknown,
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

    /// Room for 8 entries.
    const ROOM: u64 = 8 * 16;

    fn case() -> Case {
        Case {
            by: ALLOCINFO_SPLIT_CPU,
            flags: 0,
            at: -1,
            nr: 4,
            widths: Widths { cpu: 4, node: None },
            filter_ok: true,
            room: ROOM,
            kept: Kept::Nothing,
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
        // The splits: by node is refused without per-node counting, unknown
        // ones are.
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
        for room in [0, 3 * 16] {
            assert_eq!(allowed(&Case { room, ..c }), errs(false, &[ENOENT, EFAULT]));
            assert_eq!(allowed(&Case { room, nr: 0, ..c }), errs(true, &[]));
        }
    }

    /// With per-node counting on, the node split has its own width: its
    /// node (or per-CPU memory's share) below it, its `nr` at least it.
    #[test]
    fn get_split_by_node_has_the_nodes_width() {
        let c = Case {
            by: ALLOCINFO_SPLIT_NODE,
            nr: 3,
            widths: Widths {
                cpu: 4,
                node: Some(3),
            },
            ..case()
        };
        assert_eq!(allowed(&c), errs(true, &[ENOENT]));
        for (at, ok) in [(-1, true), (2, true), (3, false), (-2, false)] {
            assert_eq!(allowed(&Case { at, nr: 0, ..c }).ok, ok, "at {at}");
        }
        assert_eq!(allowed(&Case { nr: 2, ..c }), errs(false, &[EINVAL]));
        // Room for the node split's 3 entries, not the CPU split's 4.
        let room = 3 * 16;
        assert_eq!(allowed(&Case { room, ..c }), errs(true, &[ENOENT]));
        assert_eq!(
            allowed(&Case {
                room,
                by: ALLOCINFO_SPLIT_CPU,
                nr: 4,
                ..c
            }),
            errs(false, &[ENOENT, EFAULT])
        );
        // What is kept is the node split's width.
        assert_eq!(kept_after(&c, Ok(())), Kept::Width(3));
        // _NEXT after it: its width, whatever `by` says now.
        let next = Case {
            flags: ALLOCINFO_SPLIT_NEXT,
            by: ALLOCINFO_SPLIT_CPU,
            kept: Kept::Width(3),
            ..c
        };
        assert_eq!(allowed(&next), errs(true, &[ENOENT]));
        assert_eq!(allowed(&Case { nr: 2, ..next }), errs(false, &[EINVAL]));
        // Not known which: what either width allows.
        let unknown = Case {
            kept: Kept::Unknown,
            nr: 3,
            ..next
        };
        assert_eq!(allowed(&unknown), errs(true, &[EINVAL, ENOENT]));
        // nr 4 with room for 3: the node split's answer, or the CPU
        // split's EFAULT.
        let a = allowed(&Case {
            room,
            nr: 4,
            ..unknown
        });
        assert!(a.ok && a.allows(Err(EFAULT)) && a.allows(Err(EINVAL)));
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
        let kept = Kept::Width(4);
        assert_eq!(allowed(&Case { kept, ..next }), errs(true, &[ENOENT]));
        assert_eq!(
            allowed(&Case {
                kept,
                nr: 0,
                ..next
            }),
            errs(true, &[])
        );
        assert_eq!(
            allowed(&Case {
                kept,
                nr: 1,
                ..next
            }),
            errs(false, &[EINVAL])
        );
        // Not known: EINVAL, or what a kept split allows.
        let unknown = Kept::Unknown;
        assert_eq!(
            allowed(&Case {
                kept: unknown,
                ..next
            }),
            errs(true, &[EINVAL, ENOENT])
        );
        assert_eq!(
            allowed(&Case {
                kept: unknown,
                nr: 2,
                ..next
            }),
            errs(false, &[EINVAL])
        );
        let a = allowed(&Case {
            kept: unknown,
            room: 0,
            ..next
        });
        assert!(!a.allows(Ok(())) && a.allows(Err(EFAULT)) && a.allows(Err(EINVAL)));
    }

    #[test]
    fn what_is_known_of_the_kept_split() {
        let c = case();
        let four = Kept::Width(4);
        assert_eq!(kept_after(&c, Ok(())), four);
        assert_eq!(kept_after(&Case { nr: 0, ..c }, Ok(())), Kept::Nothing);
        assert_eq!(kept_after(&c, Err(EINVAL)), Kept::Nothing);
        assert_eq!(
            kept_after(
                &Case {
                    by: ALLOCINFO_SPLIT_NODE,
                    ..c
                },
                Err(libc::EOPNOTSUPP)
            ),
            Kept::Nothing
        );
        assert_eq!(kept_after(&c, Err(ENOENT)), Kept::Unknown);
        let kept = Case { kept: four, ..c };
        assert_eq!(kept_after(&kept, Err(ENOENT)), four);
        // A kept split of another width: ENOENT leaves either.
        let other = Case {
            kept: Kept::Width(3),
            ..c
        };
        assert_eq!(kept_after(&other, Err(ENOENT)), Kept::Unknown);
        assert_eq!(kept_after(&Case { room: 0, ..c }, Err(EFAULT)), four);
        // _NEXT and unknown flags change nothing.
        for flags in [ALLOCINFO_SPLIT_NEXT, 2] {
            assert_eq!(kept_after(&Case { flags, ..c }, Ok(())), Kept::Nothing);
            assert_eq!(kept_after(&Case { flags, ..kept }, Err(ENOENT)), four);
        }
        assert_eq!(kept_after_get_at(four, Ok(())), Kept::Nothing);
        assert_eq!(kept_after_get_at(four, Err(ENOENT)), Kept::Unknown);
        assert_eq!(kept_after_get_at(Kept::Nothing, Err(EFAULT)), Kept::Nothing);
        assert_eq!(kept_after_get_at(Kept::Unknown, Ok(())), Kept::Nothing);
        assert_eq!(kept_after_get_at(Kept::Unknown, Err(EINVAL)), Kept::Unknown);
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
