//! An in-memory kernel that answers the ioctls as the header describes
//! them, for tests of code that walks tags ([`crate::walk`]) without a
//! kernel that has them. Its filter is written from the header, apart from
//! [`TagFilter::matches`](crate::TagFilter::matches), so that tests comparing
//! the two compare two readings of the ABI.

use crate::abi::*;
use crate::client::Device;
use allocinfo_format::Tag;
use std::io;

/// The kernel: tags in order, one open file's cursor, and the failures to
/// simulate.
#[derive(Clone, Debug)]
pub struct FakeKernel {
    /// The tags, as [`crate::encode`] gives them (names trimmed).
    pub tags: Vec<AllocinfoTagData>,
    /// The filter of the last `GET_AT` and the index of the last answer.
    cursor: Option<(AllocinfoFilter, usize)>,
    pub content_id: u64,
    /// A module loads (the content id changes) at these `GET_NEXT` calls,
    /// counted from 1.
    pub module_loads_at: Vec<usize>,
    get_next_calls: usize,
    /// The next request fails with `EINTR`.
    pub interrupt_once: bool,
    /// A kernel without the ioctls: every request fails with `ENOTTY`.
    pub enotty: bool,
    /// `GET_SPLIT` by CPU: `nr_cpu_ids`; 0 is a mainline kernel, which
    /// answers `ENOTTY`.
    pub cpus: usize,
    /// `GET_SPLIT` by node: `nr_node_ids`; `None` answers `EOPNOTSUPP`, as
    /// kernels do until they count per node.
    pub nodes: Option<usize>,
    /// Shares given for a tag (by its index), instead of [`fake_shares`].
    pub shares: std::collections::BTreeMap<usize, Vec<AllocinfoSplitEntry>>,
    /// `GET_SPLIT`'s kept filter and split (`by`, `at`, `min_at`), and
    /// the index of its last answer.
    split_cursor: Option<(AllocinfoFilter, u32, i32, i64, usize)>,
}

impl FakeKernel {
    pub fn new(tags: &[Tag]) -> FakeKernel {
        FakeKernel {
            tags: tags.iter().map(crate::encode).collect(),
            cursor: None,
            content_id: 7,
            module_loads_at: Vec::new(),
            get_next_calls: 0,
            interrupt_once: false,
            enotty: false,
            cpus: 4,
            nodes: None,
            shares: Default::default(),
            split_cursor: None,
        }
    }

    fn check(&mut self) -> io::Result<()> {
        if self.enotty {
            return Err(io::Error::from_raw_os_error(libc::ENOTTY));
        }
        if std::mem::take(&mut self.interrupt_once) {
            return Err(io::Error::from_raw_os_error(libc::EINTR));
        }
        Ok(())
    }
}

fn cstr(buf: &[u8; ALLOCINFO_STR_SIZE]) -> &[u8] {
    &buf[..buf.iter().position(|&b| b == 0).unwrap_or(buf.len())]
}

/// Made-up shares of the `i`-th tag over `width` CPUs that add up to its
/// figures: most on CPU `i % width`, one call's worth on the next CPU
/// when it has two calls or more, and every third tag with a negative
/// share (memory freed on another CPU than the one that allocated it).
pub fn fake_shares(i: usize, d: &AllocinfoTagData, width: usize) -> Vec<AllocinfoSplitEntry> {
    let mut v = vec![AllocinfoSplitEntry::default(); width];
    if width == 0 {
        return v;
    }
    let (bytes, calls) = (d.counter.bytes as i64, d.counter.calls as i64);
    let p = i % width;
    v[p] = AllocinfoSplitEntry { bytes, calls };
    if width > 1 && calls >= 2 {
        let per = bytes / calls;
        v[(i + 1) % width] = AllocinfoSplitEntry {
            bytes: per,
            calls: 1,
        };
        v[p].bytes -= per;
        v[p].calls -= 1;
    }
    if width > 2 && i % 3 == 2 {
        v[(i + 2) % width] = AllocinfoSplitEntry {
            bytes: -64,
            calls: -1,
        };
        v[p].bytes += 64;
        v[p].calls += 1;
    }
    v
}

impl FakeKernel {
    /// The shares of the `i`-th tag, `width` of them.
    fn shares_of(&self, i: usize, width: usize) -> Vec<AllocinfoSplitEntry> {
        match self.shares.get(&i) {
            Some(v) => {
                let mut v = v.clone();
                v.resize(width, AllocinfoSplitEntry::default());
                v
            }
            None => fake_shares(i, &self.tags[i], width),
        }
    }

    /// `GET_SPLIT` as the header describes it; `entries` stands for the
    /// user memory at `req.entries`.
    fn split(
        &mut self,
        req: &mut AllocinfoGetSplit,
        entries: &mut [AllocinfoSplitEntry],
    ) -> io::Result<()> {
        let err = |e| Err(io::Error::from_raw_os_error(e));
        if self.cpus == 0 {
            return err(libc::ENOTTY);
        }
        if req.flags & !ALLOCINFO_SPLIT_NEXT != 0 {
            return err(libc::EINVAL);
        }
        let next = req.flags & ALLOCINFO_SPLIT_NEXT != 0;
        let (filter, by, at, min_at, from) = if next {
            self.get_next_calls += 1;
            if self.module_loads_at.contains(&self.get_next_calls) {
                self.content_id += 1;
            }
            match self.split_cursor {
                Some((f, by, at, min_at, last)) => (f, by, at, min_at, last + 1),
                None => return err(libc::EINVAL),
            }
        } else {
            (req.filter, req.by, req.at, req.min_at, 0)
        };
        let width = match by {
            ALLOCINFO_SPLIT_CPU => self.cpus,
            ALLOCINFO_SPLIT_NODE => match self.nodes {
                Some(n) => n,
                None => return err(libc::EOPNOTSUPP),
            },
            _ => return err(libc::EINVAL),
        };
        if at < -1 || at >= 0 && at as usize >= width {
            return err(libc::EINVAL);
        }
        if req.nr == 0 {
            req.nr = width as u32;
            return Ok(());
        }
        if (req.nr as usize) < width || entries.len() < width {
            return err(libc::EINVAL);
        }
        let sizes = ALLOCINFO_FILTER_MASK_MIN_SIZE | ALLOCINFO_FILTER_MASK_MAX_SIZE;
        if filter.mask & !ALLOCINFO_FILTER_MASKS != 0
            || filter.mask & sizes == sizes && filter.min_size > filter.max_size
        {
            return err(libc::EINVAL);
        }
        let matching: Vec<usize> = (from..self.tags.len())
            .filter(|&i| kernel_matches(&filter, &self.tags[i]))
            .filter(|&i| at < 0 || self.shares_of(i, width)[at as usize].bytes >= min_at)
            .collect();
        let skip = if next { 0 } else { req.pos as usize };
        let Some(&i) = matching.get(skip) else {
            return err(libc::ENOENT);
        };
        entries[..width].copy_from_slice(&self.shares_of(i, width));
        req.nr = width as u32;
        req.data = self.tags[i];
        self.split_cursor = Some((filter, by, at, min_at, i));
        Ok(())
    }
}

/// The kernel's test of one tag, field by field as the header documents.
pub fn kernel_matches(f: &AllocinfoFilter, d: &AllocinfoTagData) -> bool {
    let on = |bit: u64| f.mask & bit != 0;
    let (t, c) = (&d.tag, &d.counter);
    !(on(ALLOCINFO_FILTER_MASK_MODNAME) && cstr(&t.modname) != cstr(&f.fields.modname)
        || on(ALLOCINFO_FILTER_MASK_FUNCTION) && cstr(&t.function) != cstr(&f.fields.function)
        || on(ALLOCINFO_FILTER_MASK_FILENAME) && cstr(&t.filename) != cstr(&f.fields.filename)
        || on(ALLOCINFO_FILTER_MASK_LINENO) && t.lineno != f.fields.lineno
        || on(ALLOCINFO_FILTER_MASK_INACCURATE) && u64::from(c.accurate != 0) == f.inaccurate
        || on(ALLOCINFO_FILTER_MASK_MIN_SIZE) && c.bytes < f.min_size
        || on(ALLOCINFO_FILTER_MASK_MAX_SIZE) && c.bytes > f.max_size
        || on(ALLOCINFO_FILTER_MASK_UNLOADED) && c.unloaded == 0)
}

impl Device for FakeKernel {
    fn content_id(&mut self) -> io::Result<u64> {
        self.check()?;
        Ok(self.content_id)
    }

    fn get_at(&mut self, req: &mut AllocinfoGetAt) -> io::Result<()> {
        self.check()?;
        let f = &req.filter;
        let sizes = ALLOCINFO_FILTER_MASK_MIN_SIZE | ALLOCINFO_FILTER_MASK_MAX_SIZE;
        if f.mask & !ALLOCINFO_FILTER_MASKS != 0
            || f.mask & sizes == sizes && f.min_size > f.max_size
        {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let found = self
            .tags
            .iter()
            .enumerate()
            .filter(|(_, d)| kernel_matches(&req.filter, d))
            .nth(req.pos as usize);
        let (i, d) = found.ok_or(io::Error::from_raw_os_error(libc::ENOENT))?;
        req.data = *d;
        self.cursor = Some((req.filter, i));
        Ok(())
    }

    fn get_next(&mut self, data: &mut AllocinfoTagData) -> io::Result<()> {
        self.check()?;
        self.get_next_calls += 1;
        if self.module_loads_at.contains(&self.get_next_calls) {
            self.content_id += 1;
        }
        let (filter, last) = self
            .cursor
            .ok_or(io::Error::from_raw_os_error(libc::EINVAL))?;
        let (i, d) = self
            .tags
            .iter()
            .enumerate()
            .skip(last + 1)
            .find(|(_, d)| kernel_matches(&filter, d))
            .ok_or(io::Error::from_raw_os_error(libc::ENOENT))?;
        *data = *d;
        self.cursor = Some((filter, i));
        Ok(())
    }

    fn get_split(
        &mut self,
        req: &mut AllocinfoGetSplit,
        entries: &mut [AllocinfoSplitEntry],
    ) -> io::Result<()> {
        self.check()?;
        self.split(req, entries)
    }
}
