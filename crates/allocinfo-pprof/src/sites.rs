//! A profile of `/proc/allocinfo`'s call sites: one sample each, its live
//! allocations and bytes, at one location (function, file and line) in its
//! mapping (`vmlinux` or its module).

use crate::{Builder, LabelValue, SAMPLE_TYPES};
use allocinfo_format::{Profile, Tag};
use std::collections::HashMap;

/// What a profile says of where it came from.
#[derive(Clone, Debug, Default)]
pub struct SiteOptions {
    /// Comment lines: the source, the format, the base of a delta.
    pub comments: Vec<String>,
    /// When it was read, nanoseconds since the epoch (0: not said).
    pub time_nanos: i64,
}

/// A call site's labels: its module, `unloaded` for a module's tag kept
/// after its unload, and `accurate: no` where the kernel marked its counts
/// incomplete.
fn site_labels(tag: &Tag) -> Vec<(&'static str, LabelValue<'_>)> {
    let mut labels = Vec::new();
    if let Some(m) = &tag.module {
        labels.push(("module", LabelValue::Str(m)));
    }
    if tag.is_unloaded() {
        labels.push(("unloaded", LabelValue::Str("yes")));
    }
    if !tag.is_accurate() {
        labels.push(("accurate", LabelValue::Str("no")));
    }
    labels
}

/// The location of `tag`'s call site: its function, file and line, in its
/// module's mapping (vmlinux's for built-in code).
pub(crate) fn site_location(b: &mut Builder, tag: &Tag) -> u64 {
    let object = tag.module.as_deref().unwrap_or("vmlinux");
    b.location(object, &tag.function, &tag.file, i64::from(tag.line), "")
}

/// The sample of `tag` with `calls` and `bytes`, with its labels.
fn add_site(b: &mut Builder, tag: &Tag, calls: i64, bytes: i64) {
    let loc = site_location(b, tag);
    b.sample(vec![loc], vec![calls, bytes], &site_labels(tag));
}

fn builder(opts: &SiteOptions) -> Builder {
    let mut b = Builder::new(&SAMPLE_TYPES, "inuse_space");
    for c in &opts.comments {
        b.comment(c);
    }
    b.time_nanos(opts.time_nanos);
    b
}

/// `calls` as pprof's signed value.
fn signed(calls: u64) -> i64 {
    i64::try_from(calls).unwrap_or(i64::MAX)
}

/// The profile of `profile`'s call sites that hold anything (a site at
/// `0 0` is no sample): the samples' totals are the profile's.
pub fn from_profile(profile: &Profile, opts: &SiteOptions) -> crate::proto::Profile {
    let mut b = builder(opts);
    for tag in &profile.tags {
        if tag.bytes != 0 || tag.calls != 0 {
            add_site(&mut b, tag, signed(tag.calls), tag.bytes);
        }
    }
    b.finish()
}

/// What tells a call site from the others in two profiles: its line as
/// printed, and whether it is an unloaded module's.
type Key = (String, bool);

/// A call site's sums: calls, bytes.
type Sums = HashMap<Key, (i64, i64)>;

fn key(tag: &Tag) -> Key {
    (tag.location().to_string(), tag.is_unloaded())
}

/// Each call site of `profile` once, in the order first listed, with its
/// sums (a site listed twice, as a module loaded twice, is summed).
fn sums(profile: &Profile) -> (Vec<&Tag>, Sums) {
    let mut order = Vec::new();
    let mut sums = Sums::new();
    for t in &profile.tags {
        let e = sums.entry(key(t)).or_insert_with(|| {
            order.push(t);
            (0, 0)
        });
        e.0 = e.0.wrapping_add(signed(t.calls));
        e.1 = e.1.wrapping_add(t.bytes);
    }
    (order, sums)
}

/// The difference from `old` to `new`, call site by call site (a delta
/// profile, as `go tool pprof -diff_base` makes one): a site's sample is
/// what it holds more now, negative where it holds less, and a site only in
/// `old` (its module unloaded) falls by all it held. Sites that did not
/// change are no sample.
pub fn delta(old: &Profile, new: &Profile, opts: &SiteOptions) -> crate::proto::Profile {
    let (old_order, before) = sums(old);
    let (new_order, after) = sums(new);
    let mut b = builder(opts);
    for t in new_order {
        let k = key(t);
        let (nc, nb) = after[&k];
        let (oc, ob) = before.get(&k).copied().unwrap_or_default();
        let (dc, db) = (nc.wrapping_sub(oc), nb.wrapping_sub(ob));
        if dc != 0 || db != 0 {
            add_site(&mut b, t, dc, db);
        }
    }
    for t in old_order {
        let k = key(t);
        if !after.contains_key(&k) {
            let (oc, ob) = before[&k];
            if oc != 0 || ob != 0 {
                add_site(&mut b, t, oc.wrapping_neg(), ob.wrapping_neg());
            }
        }
    }
    b.finish()
}

/// How a profile's call sites are split: by CPU or by NUMA node, and
/// whether the shares have calls (the kernel's ioctl) or bytes only (the
/// text's node pairs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitKind {
    /// `cpu` or `node`: the label's key.
    pub by: &'static str,
    /// Whether the shares have calls.
    pub calls: bool,
}

/// The profile of call sites split by CPU or node: one sample per site and
/// share that is not zero, labelled with its number, `cpu` or `node`
/// (numbers in the unit of that name, so that `-tagfocus=node=1` selects:
/// pprof drops a number label of 0 without a unit), or for the last share of
/// a node split, per-CPU memory's, `memory: percpu`; besides the site's own
/// labels. Shares without calls (the
/// text's) give each share's bytes with 0 objects and the site's calls in
/// one more sample without the label, so that both totals stay exact.
pub fn from_shares(
    tagged: &[(Tag, Vec<[i64; 2]>)],
    kind: SplitKind,
    opts: &SiteOptions,
) -> crate::proto::Profile {
    let mut b = builder(opts);
    for (tag, shares) in tagged {
        let loc = site_location(&mut b, tag);
        let last = shares.len().saturating_sub(1);
        for (i, &[bytes, calls]) in shares.iter().enumerate() {
            let calls = if kind.calls { calls } else { 0 };
            if bytes == 0 && calls == 0 {
                continue;
            }
            let mut labels = site_labels(tag);
            if kind.by == "node" && i == last {
                labels.push(("memory", LabelValue::Str("percpu")));
            } else {
                labels.push((kind.by, LabelValue::Num(i as i64, kind.by)));
            }
            b.sample(vec![loc], vec![calls, bytes], &labels);
        }
        if !kind.calls && tag.calls != 0 {
            b.sample(vec![loc], vec![signed(tag.calls), 0], &site_labels(tag));
        }
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's shares (with calls) give one sample per share that is not
    /// zero, labelled with its CPU; their sums are the sites'.
    #[test]
    fn shares_with_calls_are_one_sample_each() {
        let tag: Tag = "4160 3 mm/a.c:1 [m] func:f".parse().unwrap();
        let tagged = vec![(tag, vec![[4096, 1], [0, 0], [64, 2]])];
        let kind = SplitKind {
            by: "cpu",
            calls: true,
        };
        let p = from_shares(&tagged, kind, &SiteOptions::default());
        assert_eq!(p.sample.len(), 2);
        let values: Vec<&[i64]> = p.sample.iter().map(|s| s.value.as_slice()).collect();
        assert_eq!(values, [&[1, 4096][..], &[2, 64][..]]);
        let cpu = p.string_table.iter().position(|s| s == "cpu").unwrap() as i64;
        let nums: Vec<i64> = p
            .sample
            .iter()
            .map(|s| s.label.iter().find(|l| l.key == cpu).unwrap().num)
            .collect();
        assert_eq!(nums, [0, 2]);
    }
}
