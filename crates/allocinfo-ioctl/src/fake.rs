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
}
