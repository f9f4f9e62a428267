//! Walking the tags with their figures split by CPU (or node):
//! `ALLOCINFO_IOC_GET_SPLIT`, as [`walk`](crate::walk) walks `GET_AT` and
//! `GET_NEXT`: the number of shares first (`nr` 0), then position 0, then
//! `ALLOCINFO_SPLIT_NEXT` until `ENOENT`, between two reads of the content
//! id, repeated while modules loaded or unloaded during the walk.

use crate::abi::{
    ALLOCINFO_SPLIT_CPU, ALLOCINFO_SPLIT_NEXT, ALLOCINFO_SPLIT_NODE, AllocinfoFilter,
    AllocinfoGetSplit, AllocinfoSplitEntry, AllocinfoTagData,
};
use crate::client::{Device, Error, read_id, retry};
use std::io;

/// What to split by, and which tags to take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitSpec {
    /// `ALLOCINFO_SPLIT_CPU` or `ALLOCINFO_SPLIT_NODE`.
    pub by: u32,
    /// With a CPU or node, only tags holding at least `min_at` bytes there.
    pub at: Option<(u32, i64)>,
}

impl SplitSpec {
    /// The split's name in messages: `CPU` or `node`.
    pub fn noun(&self) -> &'static str {
        match self.by {
            ALLOCINFO_SPLIT_NODE => "node",
            _ => "CPU",
        }
    }
}

impl Default for SplitSpec {
    fn default() -> Self {
        SplitSpec {
            by: ALLOCINFO_SPLIT_CPU,
            at: None,
        }
    }
}

/// A tag and its shares, indexed by CPU (or node); they add up to the
/// tag's figures, each may be negative.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitTag {
    pub data: AllocinfoTagData,
    pub shares: Vec<AllocinfoSplitEntry>,
}

/// The answers of a consistent split walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitWalk {
    pub tags: Vec<SplitTag>,
    /// Shares per tag: `nr_cpu_ids` (or `nr_node_ids`).
    pub width: usize,
    pub content_id: u64,
    /// Walks made: 1 unless modules loaded or unloaded during one.
    pub attempts: u32,
}

const REQUEST: &str = "ALLOCINFO_IOC_GET_SPLIT";

/// `GET_SPLIT`'s failures: `ENOTTY` is a kernel without it (mainline's
/// ioctls only; reading the text would give no shares either), and
/// `EOPNOTSUPP` a split the kernel does not count.
fn split_error(spec: &SplitSpec, e: io::Error) -> Error {
    match e.raw_os_error() {
        Some(libc::ENOTTY) => Error::NoSplit,
        Some(libc::EOPNOTSUPP) => Error::SplitNotCounted(spec.noun()),
        _ => Error::Request {
            request: REQUEST,
            error: e,
        },
    }
}

/// One request: `Ok(false)` for `ENOENT`, no more matching tags.
fn get(
    dev: &mut dyn Device,
    spec: &SplitSpec,
    req: &mut AllocinfoGetSplit,
    entries: &mut [AllocinfoSplitEntry],
) -> Result<bool, Error> {
    match retry(|| dev.get_split(req, entries)) {
        Ok(()) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(split_error(spec, e)),
    }
}

/// Every tag matching `filter` (and `spec.at`), with its shares.
pub fn walk_split(
    dev: &mut dyn Device,
    filter: &AllocinfoFilter,
    spec: &SplitSpec,
    attempts: u32,
) -> Result<SplitWalk, Error> {
    let attempts = attempts.max(1);
    let (at, min_at) = match spec.at {
        Some((at, min)) => (i32::try_from(at).unwrap_or(i32::MAX), min),
        None => (-1, 0),
    };
    for attempt in 1..=attempts {
        let before = read_id(dev)?;
        let mut req = AllocinfoGetSplit::new(0, *filter, spec.by, at, min_at, 0);
        get(dev, spec, &mut req, &mut [])?;
        let width = req.nr as usize;
        let mut entries = vec![AllocinfoSplitEntry::default(); width];
        let mut tags = Vec::new();
        req = AllocinfoGetSplit::new(0, *filter, spec.by, at, min_at, req.nr);
        let nr = req.nr;
        while get(dev, spec, &mut req, &mut entries)? {
            let n = (req.nr as usize).min(width);
            tags.push(SplitTag {
                data: req.data,
                shares: entries[..n].to_vec(),
            });
            req.flags = ALLOCINFO_SPLIT_NEXT;
            req.nr = nr;
        }
        if read_id(dev)? == before {
            return Ok(SplitWalk {
                tags,
                width,
                content_id: before,
                attempts: attempt,
            });
        }
    }
    Err(Error::Unstable(attempts))
}
