//! Turns parsed allocation profiles into reports: filter tags, group them
//! (by call site, module, directory, file or function), compare two profiles
//! and sort. Every command of the `allocinfo` tool (`top`, `diff`, `watch`)
//! is one [`Query`] producing one [`Report`]; printing is someone else's job.

mod filter;
mod key;
pub mod rates;

pub use filter::{Filter, NamePattern, PatternError, is_path_suffix};
pub use key::Key;

use allocinfo_format::{Profile, Tag, Totals};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::str::FromStr;

/// Name used for built-in (non-module) code when grouping or filtering by module.
pub const BUILTIN_MODULE: &str = "vmlinux";

/// How tags are grouped into rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GroupBy {
    /// One row per call site: file, line, module and function. Identical
    /// call sites (inline functions in headers) are merged; an unloaded
    /// module's call site is a row of its own beside the reloaded module's
    /// unless [`Query::fold`].
    #[default]
    Site,
    Module,
    Dir,
    File,
    Function,
    /// Totals by path prefix, as alloctop's tree view: `fs/` holds
    /// everything under it, `fs/xfs/` included (a tag counts in every
    /// directory above it, so shares add up to more than 100%).
    Tree,
}

impl GroupBy {
    pub const ALL: [GroupBy; 6] = [
        GroupBy::Site,
        GroupBy::Module,
        GroupBy::Dir,
        GroupBy::File,
        GroupBy::Function,
        GroupBy::Tree,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Site => "site",
            GroupBy::Module => "module",
            GroupBy::Dir => "dir",
            GroupBy::File => "file",
            GroupBy::Function => "function",
            GroupBy::Tree => "tree",
        }
    }
}

impl fmt::Display for GroupBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What rows are sorted by: numbers descending (largest first), the name
/// ascending; ties by bytes, then by key. [`Query::reverse`] flips it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SortKey {
    #[default]
    Bytes,
    Calls,
    /// Growth in bytes (diff and watch).
    DeltaBytes,
    /// Growth in calls (diff and watch).
    DeltaCalls,
    /// The row's name (call site, module, path...), A to Z.
    Name,
}

impl SortKey {
    pub const ALL: [SortKey; 5] = [
        SortKey::Bytes,
        SortKey::Calls,
        SortKey::DeltaBytes,
        SortKey::DeltaCalls,
        SortKey::Name,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SortKey::Bytes => "bytes",
            SortKey::Calls => "calls",
            SortKey::DeltaBytes => "delta-bytes",
            SortKey::DeltaCalls => "delta-calls",
            SortKey::Name => "name",
        }
    }

    /// The next key in the cycle bytes → calls → delta-bytes → delta-calls
    /// → name.
    pub fn next(self) -> SortKey {
        let i = SortKey::ALL.iter().position(|&k| k == self).unwrap_or(0);
        SortKey::ALL[(i + 1) % SortKey::ALL.len()]
    }

    pub fn is_delta(self) -> bool {
        matches!(self, SortKey::DeltaBytes | SortKey::DeltaCalls)
    }
}

impl fmt::Display for SortKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for a name that is not a [`GroupBy`] or [`SortKey`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {name:?} (expected one of: {expected})")]
pub struct UnknownName {
    what: &'static str,
    name: String,
    expected: String,
}

macro_rules! from_str_by_name {
    ($ty:ty, $what:literal) => {
        impl FromStr for $ty {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<Self, UnknownName> {
                <$ty>::ALL
                    .into_iter()
                    .find(|v| v.name() == s)
                    .ok_or_else(|| UnknownName {
                        what: $what,
                        name: s.to_owned(),
                        expected: <$ty>::ALL.map(|v| v.name()).join(", "),
                    })
            }
        }
    };
}
from_str_by_name!(GroupBy, "grouping");
from_str_by_name!(SortKey, "sort key");

/// Counters summed over the tags of one row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sums {
    pub bytes: i64,
    pub calls: u64,
    /// Number of tags (lines of the input) summed.
    pub tags: usize,
    /// False if any tag was marked `accurate:no`.
    pub accurate: bool,
    /// True if every tag was marked `unloaded:yes` (and there was one).
    pub unloaded: bool,
    /// Extra `key:value` pairs of the tags; the first value of each key wins,
    /// except that `accurate:no` wins over other `accurate` values and
    /// `unloaded:yes` stays only while [`Sums::unloaded`] holds.
    pub extra: Vec<(String, String)>,
}

impl Sums {
    fn empty() -> Sums {
        Sums {
            accurate: true,
            ..Sums::default()
        }
    }

    fn add(&mut self, tag: &Tag) {
        self.bytes = self.bytes.saturating_add(tag.bytes);
        self.calls = self.calls.saturating_add(tag.calls);
        self.unloaded = tag.is_unloaded() && (self.tags == 0 || self.unloaded);
        self.tags += 1;
        self.accurate &= tag.is_accurate();
        for (k, v) in &tag.extra {
            match self.extra.iter_mut().find(|(ek, _)| ek == k) {
                None => self.extra.push((k.clone(), v.clone())),
                Some((_, ev)) if k == "accurate" && v == "no" => *ev = v.clone(),
                Some(_) => {}
            }
        }
        // A row with a loaded part is not marked unloaded, in JSON's extra
        // pairs either.
        let unloaded = self.unloaded;
        self.extra.retain(|(k, _)| k != "unloaded" || unloaded);
    }
}

/// The tags with one line per call site, in the order of their first
/// line: the instances of a call site (an unloaded module's and the
/// reloaded module's, or identical call sites) summed, `accurate:no` if any
/// part had it and `unloaded:yes` only if every part had it (`allocinfo
/// query --fold`). Other pairs keep their first value.
pub fn fold_tags(tags: &[Tag]) -> Vec<Tag> {
    let mut at: HashMap<Key, usize> = HashMap::new();
    let mut out: Vec<(Tag, Sums)> = Vec::new();
    for tag in tags {
        let i = *at
            .entry(Key::of(tag, GroupBy::Site).folded())
            .or_insert_with(|| {
                out.push((tag.clone(), Sums::empty()));
                out.len() - 1
            });
        out[i].1.add(tag);
    }
    out.into_iter()
        .map(|(first, sums)| {
            let mut extra: Vec<(String, String)> = sums
                .extra
                .into_iter()
                .filter(|(k, _)| k != "accurate" && k != "unloaded")
                .collect();
            // In the order format 2.0 prints them, first.
            if sums.unloaded {
                extra.insert(0, ("unloaded".into(), "yes".into()));
            }
            if !sums.accurate {
                extra.insert(0, ("accurate".into(), "no".into()));
            }
            Tag {
                bytes: sums.bytes,
                calls: sums.calls,
                extra,
                ..first
            }
        })
        .collect()
}

/// How a row changed between two profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Only in the new profile.
    New,
    /// Only in the old profile.
    Gone,
    Changed,
    Unchanged,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Gone => "gone",
            Status::Changed => "changed",
            Status::Unchanged => "unchanged",
        }
    }
}

/// Old values and growth of a row (diff and watch only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub status: Status,
    pub old_bytes: i64,
    pub old_calls: u64,
    /// `new - old`, saturating.
    pub delta_bytes: i64,
    /// `new - old`, saturating.
    pub delta_calls: i64,
}

/// One line of a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub key: Key,
    /// Current values (the new profile in a diff; zero for gone rows).
    pub sums: Sums,
    pub change: Option<Change>,
}

impl Row {
    fn sort_value(&self, key: SortKey) -> i128 {
        let change = self.change.as_ref();
        match key {
            SortKey::Bytes => self.sums.bytes.into(),
            SortKey::Calls => self.sums.calls.into(),
            SortKey::DeltaBytes => change.map_or(0, |c| c.delta_bytes.into()),
            SortKey::DeltaCalls => change.map_or(0, |c| c.delta_calls.into()),
            SortKey::Name => 0,
        }
    }

    /// Share of `total` bytes, 0 when the total is not positive.
    pub fn share(&self, total: &Totals) -> f64 {
        if total.bytes > 0 {
            self.sums.bytes as f64 / total.bytes as f64
        } else {
            0.0
        }
    }
}

/// Number of rows per [`Status`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatusCounts {
    pub new: usize,
    pub gone: usize,
    pub changed: usize,
    pub unchanged: usize,
}

impl StatusCounts {
    fn of(rows: &[Row]) -> StatusCounts {
        let mut c = StatusCounts::default();
        for change in rows.iter().filter_map(|r| r.change.as_ref()) {
            *match change.status {
                Status::New => &mut c.new,
                Status::Gone => &mut c.gone,
                Status::Changed => &mut c.changed,
                Status::Unchanged => &mut c.unchanged,
            } += 1;
        }
        c
    }
}

/// The outcome of a [`Query`].
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub group_by: GroupBy,
    pub sort: SortKey,
    /// Totals of the whole (new) profile, before filtering.
    pub total: Totals,
    /// Totals of the old profile, for diff and watch.
    pub old_total: Option<Totals>,
    /// Rows that passed the filters, before the limit.
    pub matched_rows: usize,
    /// How many of the matched rows are new, gone, changed (diff and watch).
    pub counts: StatusCounts,
    /// The rows, sorted, at most `limit` of them.
    pub rows: Vec<Row>,
}

impl Report {
    /// Whether rows carry [`Change`]s (diff and watch).
    pub fn has_changes(&self) -> bool {
        self.old_total.is_some()
    }
}

/// What to compute: filters, grouping, order and number of rows.
#[derive(Clone, Debug, Default)]
pub struct Query {
    pub filter: Filter,
    pub group_by: GroupBy,
    pub sort: SortKey,
    /// At most this many rows; `None` for all.
    pub limit: Option<usize>,
    /// In a comparison, drop rows whose bytes and calls did not change.
    pub changed_only: bool,
    /// Reverse the order: smallest first, or the name Z to A.
    pub reverse: bool,
    /// By call site, one row for every instance of a call site: an
    /// unloaded module's and the reloaded module's summed, marked unloaded
    /// only if every part was. The other groupings always sum them.
    pub fold: bool,
}

impl Query {
    /// The row a tag adds to; by [`GroupBy::Tree`] its directory's, one of
    /// the rows of [`Key::tree`] it adds to.
    pub fn key(&self, tag: &Tag) -> Key {
        let key = Key::of(tag, self.group_by);
        if self.fold { key.folded() } else { key }
    }

    fn aggregate<'a>(&self, tags: impl IntoIterator<Item = &'a Tag>) -> BTreeMap<Key, Sums> {
        let mut groups: BTreeMap<Key, Sums> = BTreeMap::new();
        for tag in tags.into_iter().filter(|t| self.filter.matches(t)) {
            if self.group_by == GroupBy::Tree {
                for key in Key::tree(tag) {
                    groups.entry(key).or_insert_with(Sums::empty).add(tag);
                }
            } else {
                groups
                    .entry(self.key(tag))
                    .or_insert_with(Sums::empty)
                    .add(tag);
            }
        }
        groups
    }

    fn finish(&self, mut rows: Vec<Row>, total: Totals, old_total: Option<Totals>) -> Report {
        if let Some(min) = self.filter.min_bytes {
            rows.retain(|r| r.sums.bytes >= min);
        }
        let sort = self.sort;
        if sort == SortKey::Name {
            // Call sites by file, then line as a number; modules by the
            // name shown (vmlinux among the others).
            rows.sort_by(|a, b| match (&a.key, &b.key) {
                (Key::Module(_), Key::Module(_)) => a.key.to_string().cmp(&b.key.to_string()),
                _ => a.key.cmp(&b.key),
            });
        } else {
            rows.sort_by(|a, b| {
                b.sort_value(sort)
                    .cmp(&a.sort_value(sort))
                    .then_with(|| b.sums.bytes.cmp(&a.sums.bytes))
                    .then_with(|| a.key.cmp(&b.key))
            });
        }
        if self.reverse {
            rows.reverse();
        }
        let matched_rows = rows.len();
        let counts = StatusCounts::of(&rows);
        if let Some(limit) = self.limit {
            rows.truncate(limit);
        }
        Report {
            group_by: self.group_by,
            sort,
            total,
            old_total,
            matched_rows,
            counts,
            rows,
        }
    }

    /// The current state of one profile (`allocinfo top`).
    pub fn top(&self, profile: &Profile) -> Report {
        let rows = self
            .aggregate(&profile.tags)
            .into_iter()
            .map(|(key, sums)| Row {
                key,
                sums,
                change: None,
            })
            .collect();
        self.finish(rows, profile.totals(), None)
    }

    /// Growth from `old` to `new` per row (`allocinfo diff`, `allocinfo watch`).
    /// Rows only in `old` are [`Status::Gone`] with zero current values.
    pub fn diff(&self, old: &Profile, new: &Profile) -> Report {
        let mut old_groups = self.aggregate(&old.tags);
        let mut rows = Vec::new();
        for (key, sums) in self.aggregate(&new.tags) {
            let before = old_groups.remove(&key);
            let status = match &before {
                None => Status::New,
                Some(b) if b.bytes == sums.bytes && b.calls == sums.calls => Status::Unchanged,
                Some(_) => Status::Changed,
            };
            let before = before.unwrap_or_else(Sums::empty);
            rows.push(Row {
                change: Some(change(status, &before, &sums)),
                key,
                sums,
            });
        }
        for (key, before) in old_groups {
            let sums = Sums {
                extra: before.extra.clone(),
                unloaded: before.unloaded,
                ..Sums::empty()
            };
            rows.push(Row {
                change: Some(change(Status::Gone, &before, &sums)),
                key,
                sums,
            });
        }
        if self.changed_only {
            rows.retain(|r| {
                r.change
                    .as_ref()
                    .is_some_and(|c| c.status != Status::Unchanged)
            });
        }
        self.finish(rows, new.totals(), Some(old.totals()))
    }
}

fn change(status: Status, old: &Sums, new: &Sums) -> Change {
    let clamp = |v: i128| v.clamp(i64::MIN.into(), i64::MAX.into()) as i64;
    Change {
        status,
        old_bytes: old.bytes,
        old_calls: old.calls,
        delta_bytes: clamp(i128::from(new.bytes) - i128::from(old.bytes)),
        delta_calls: clamp(i128::from(new.calls) - i128::from(old.calls)),
    }
}
