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

/// The sample of `tag` with `calls` and `bytes`, labelled with its module,
/// `unloaded` for a module's tag kept after its unload, and `accurate: no`
/// where the kernel marked its counts incomplete.
fn add_site(b: &mut Builder, tag: &Tag, calls: i64, bytes: i64) {
    let object = tag.module.as_deref().unwrap_or("vmlinux");
    let loc = b.location(object, &tag.function, &tag.file, i64::from(tag.line), "");
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
    b.sample(vec![loc], vec![calls, bytes], &labels);
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
