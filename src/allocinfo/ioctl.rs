// SPDX-License-Identifier: GPL-2.0

//! The ioctls of `/proc/allocinfo`: mainline's ABI, byte for byte.
//!
//! C header: [`include/uapi/linux/alloc_tag.h`](srctree/include/uapi/linux/alloc_tag.h)
//!
//! - `ALLOCINFO_IOC_CONTENT_ID`: a number that changes whenever a module adds or drops tags;
//!   a reader compares it before and after a walk, and walks again if it changed.
//! - `ALLOCINFO_IOC_GET_AT`: the `pos`-th tag (from 0) of those matching a filter, in
//!   `/proc/allocinfo`'s order; the filter is kept for `GET_NEXT`.
//! - `ALLOCINFO_IOC_GET_NEXT`: the next matching tag; without a `GET_AT` before it, the first.
//! - `ALLOCINFO_IOC_GET_SPLIT`, alloctag's: `GET_AT` (or, with `ALLOCINFO_SPLIT_NEXT`,
//!   `GET_NEXT`) that also writes the tag's figures split by CPU ([`super::split`]) to a user
//!   array, and can keep only the tags holding at least some bytes on one CPU. Its split and
//!   filter are kept as `GET_AT`'s filter is, for its `_NEXT` and for `GET_NEXT`; a `GET_AT`
//!   drops them. `nr` 0 asks for the array's length and changes nothing; a shorter array is
//!   `EINVAL`, checked before anything changes, as are the split, its CPU and unknown flags.
//!
//! Each open file has its own position, apart from `read()`'s. The registry is read-locked
//! only while tags are looked at, never while user memory is copied. Edge cases are
//! mainline's (mm/alloc_tag.c): `ENOENT` past the end, after which `GET_NEXT` starts again
//! from the first match; an unknown command is `ENOTTY`. What `GET_AT` checks before it looks
//! at the tags changes nothing when it fails: an argument it cannot read (`EFAULT`), a bad
//! filter (`EINVAL`), a `pos` at or beyond the number of tags (`ENOENT`). Past those checks the
//! state changes before the answer is written out: `GET_AT` replaces the filter and moves the
//! position (to the end, with `ENOENT`, when `pos` is beyond the matches), `GET_NEXT` moves
//! past the tag it found; so an answer that cannot be written out (`EFAULT`: a read-only
//! buffer) leaves the filter and position changed, and that tag is skipped.

use super::{
    filter::{copy_name, Filter},
    split::{self, Split},
};
use crate::{
    alloc_tag::{AllocTag, ALLOC_TAGS},
    codetag::{self, Cursor},
};
use core::mem::{offset_of, size_of};
use kernel::{
    alloc::{flags::GFP_KERNEL_ACCOUNT, KVVec},
    bindings,
    prelude::*,
    uaccess::UserSlice,
};

/// Makes an ioctl number as the `_IOC()` macro of include/uapi/asm-generic/ioctl.h does.
const fn ioc(dir: u32, nr: u32, size: usize) -> u32 {
    (dir << 30) | ((size as u32) << 16) | (0xA6 << 8) | nr
}
const IOC_WRITE: u32 = 1;
const IOC_READ: u32 = 2;

/// `ALLOCINFO_IOC_CONTENT_ID`.
const IOC_CONTENT_ID: u32 = ioc(IOC_READ, 0, size_of::<bindings::allocinfo_content_id>());
/// `ALLOCINFO_IOC_GET_AT`.
const IOC_GET_AT: u32 = ioc(
    IOC_READ | IOC_WRITE,
    1,
    size_of::<bindings::allocinfo_get_at>(),
);
/// `ALLOCINFO_IOC_GET_NEXT`.
const IOC_GET_NEXT: u32 = ioc(IOC_READ, 2, size_of::<bindings::allocinfo_tag_data>());
/// `ALLOCINFO_IOC_GET_SPLIT`.
const IOC_GET_SPLIT: u32 = ioc(
    IOC_READ | IOC_WRITE,
    3,
    size_of::<bindings::allocinfo_get_split>(),
);

/// Where the ioctls of one open file stand.
pub(crate) struct IoctlState {
    /// Whether a `GET_AT` or `GET_NEXT` placed `at`; `GET_NEXT` starts over when not.
    positioned: bool,
    /// The position after the last tag returned.
    at: Cursor,
    /// The filter of the last `GET_AT` or `GET_SPLIT` that got past its checks.
    filter: Filter,
    /// The split of the last `GET_SPLIT` that got past its checks, unless a `GET_AT` came after.
    split: Option<Split>,
}

impl IoctlState {
    /// The state of a newly opened file.
    pub(crate) fn new() -> Self {
        Self {
            positioned: false,
            at: Cursor::START,
            filter: Filter::all(),
            split: None,
        }
    }

    /// Runs ioctl `cmd` with the user pointer `arg`.
    pub(crate) fn ioctl(&mut self, cmd: u32, arg: usize) -> Result {
        match cmd {
            IOC_CONTENT_ID => content_id(arg),
            IOC_GET_AT => self.get_at(arg),
            IOC_GET_NEXT => self.get_next(arg),
            IOC_GET_SPLIT => self.get_split(arg),
            // procfs turns it into ENOTTY for user space.
            _ => Err(ENOIOCTLCMD),
        }
    }

    /// `GET_AT`. Past its checks it sets the filter and position before it writes the answer
    /// out: a failure to write it (`EFAULT`) leaves them changed.
    fn get_at(&mut self, arg: usize) -> Result {
        let mut params = Zeroed::<bindings::allocinfo_get_at>::new();
        UserSlice::new(arg, size_of::<bindings::allocinfo_get_at>())
            .reader()
            .read_slice(params.bytes_mut())?;
        let filter = Filter::new(&params.get().filter)?;
        let pos = params.get().pos;
        self.find(Some((pos, filter, None)), |tag, counters| {
            fill(&mut params.get_mut().data, tag, counters)
        })?;
        UserSlice::new(arg, size_of::<bindings::allocinfo_get_at>())
            .writer()
            .write_slice(params.bytes())
    }

    /// `GET_NEXT`. It moves past the tag it found before it writes the tag out: a failure to
    /// write it (`EFAULT`) skips that tag.
    fn get_next(&mut self, arg: usize) -> Result {
        let mut data = Zeroed::<bindings::allocinfo_tag_data>::new();
        self.find(None, |tag, counters| fill(data.get_mut(), tag, counters))?;
        UserSlice::new(arg, size_of::<bindings::allocinfo_tag_data>())
            .writer()
            .write_slice(data.bytes())
    }

    /// `GET_SPLIT`: as `GET_AT`, or with `ALLOCINFO_SPLIT_NEXT` as `GET_NEXT`, and the tag's
    /// shares written to the user's array before the answer. The array is allocated before the
    /// registry is locked, charged to the caller, `nr_cpu_ids` entries of 16 bytes, freed on
    /// return.
    fn get_split(&mut self, arg: usize) -> Result {
        let mut params = Zeroed::<bindings::allocinfo_get_split>::new();
        UserSlice::new(arg, size_of::<bindings::allocinfo_get_split>())
            .reader()
            .read_slice(params.bytes_mut())?;
        let p = params.get();
        if p.flags & !bindings::ALLOCINFO_SPLIT_NEXT != 0 {
            return Err(EINVAL);
        }
        let next = p.flags & bindings::ALLOCINFO_SPLIT_NEXT != 0;
        let (split, at) = if next {
            (self.split.ok_or(EINVAL)?, None)
        } else {
            let split = Split::new(p)?;
            (split, Some((p.pos, Filter::new(&p.filter)?, Some(split))))
        };
        let width = split.width();
        // At most `NR_CPUS`: fits in `nr`.
        let nr = width as u32;
        if p.nr == 0 {
            // Only `nr` is written: the rest of the caller's struct is left as it is.
            return UserSlice::new(arg + offset_of!(bindings::allocinfo_get_split, nr), 4)
                .writer()
                .write_slice(&nr.to_ne_bytes());
        }
        if (p.nr as usize) < width {
            return Err(EINVAL);
        }
        // A 32-bit kernel's user addresses fit in `usize`; a larger one is no address.
        let entries = usize::try_from(p.entries).map_err(|_| EFAULT)?;
        // 16 bytes per CPU id: 128 KiB at `NR_CPUS` 8192, from vmalloc when kmalloc's pages
        // are fragmented.
        let len = width * split::ENTRY;
        let mut shares = KVVec::from_elem(0u8, len, GFP_KERNEL_ACCOUNT)?;
        self.find(at, |tag, _| {
            let sum = split.fill(tag, &mut shares);
            fill(&mut params.get_mut().data, tag, Some(sum));
        })?;
        params.get_mut().nr = nr;
        UserSlice::new(entries, len).writer().write_slice(&shares)?;
        UserSlice::new(arg, size_of::<bindings::allocinfo_get_split>())
            .writer()
            .write_slice(params.bytes())
    }

    /// Finds the `pos`-th tag matching a new filter and split (`GET_AT`), which it keeps, or,
    /// with `at` `None`, the next match after the position (`GET_NEXT`), and calls `found` with
    /// it under the registry's read lock. Moves the position past the tag; `ENOENT` past the
    /// end, after which the next search starts again from the first match. A `pos` at or
    /// beyond the number of tags changes nothing.
    fn find(
        &mut self,
        at: Option<(u64, Filter, Option<Split>)>,
        found: impl FnOnce(&AllocTag, Option<crate::alloc_tag::Counters>),
    ) -> Result {
        let Some(handle) = ALLOC_TAGS.handle() else {
            return Err(ENOENT);
        };
        let registry = codetag::read();
        let mut skip = 0;
        let next = at.is_none();
        match at {
            Some((pos, filter, split)) => {
                if pos >= registry.count(handle) as u64 {
                    return Err(ENOENT);
                }
                self.filter = filter;
                self.split = split;
                self.at = Cursor::START;
                skip = pos;
            }
            None if !self.positioned => {
                self.at = Cursor::START;
                self.positioned = true;
            }
            None => {}
        }
        let mut tags = registry.tags(handle, self.at);
        let hit = loop {
            let Some(tag) = tags.next() else {
                break None;
            };
            let mut counters = None;
            if self.filter.matches(tag, &mut counters)
                && self.split.as_ref().map_or(true, |s| s.matches(tag))
            {
                if skip == 0 {
                    break Some((tag, counters));
                }
                skip -= 1;
            }
        };
        self.at = tags.cursor();
        let Some((tag, counters)) = hit else {
            // `GET_NEXT` starts again from the first match; `GET_AT` leaves the flag as it was.
            if next {
                self.positioned = false;
            }
            return Err(ENOENT);
        };
        self.positioned = true;
        found(tag, counters);
        Ok(())
    }
}

fn content_id(arg: usize) -> Result {
    let mut params = Zeroed::<bindings::allocinfo_content_id>::new();
    if let Some(handle) = ALLOC_TAGS.handle() {
        params.get_mut().id = codetag::read().generation(handle);
    }
    UserSlice::new(arg, size_of::<bindings::allocinfo_content_id>())
        .writer()
        .write_slice(params.bytes())
}

/// Fills `data` with `tag`'s names, trimmed, and its counters, summed now unless the filter
/// already summed them.
fn fill(
    data: &mut bindings::allocinfo_tag_data,
    tag: &AllocTag,
    counters: Option<crate::alloc_tag::Counters>,
) {
    let ct = tag.codetag();
    copy_name(
        &mut data.tag.modname,
        ct.modname().map_or(&b""[..], |m| m.as_bytes()),
    );
    copy_name(&mut data.tag.function, ct.function().as_bytes());
    copy_name(&mut data.tag.filename, ct.filename().as_bytes());
    data.tag.lineno = ct.lineno().into();
    let counters = counters.unwrap_or_else(|| tag.read());
    // As in C, the signed sum goes out as the `__u64` of the ABI.
    data.counter.bytes = counters.bytes as u64;
    data.counter.calls = counters.calls;
    data.counter.accurate = ct.accurate().into();
    data.counter.unloaded = ct.unloaded().into();
    // A `GET_AT` argument came from user space: nothing of it goes back.
    data.counter.pad = [0; 6];
}

/// A C struct of the ABI that starts all zero and is only changed field by field, so that its
/// bytes can go to user space without leaking kernel memory.
///
/// # Invariants
///
/// Every byte of `value` is initialised: it was made zeroed, and fields are only written in
/// place.
struct Zeroed<T> {
    value: T,
}

/// The ABI structs, which are all integers and byte arrays with no implicit padding (checked
/// below), so all-zero bytes are valid and every byte is a field's.
///
/// # Safety
///
/// All-zero bytes must be a valid value of the type, and any bytes read from user space too.
/// The type must have no padding: every byte belongs to an integer or integer-array field, so
/// that a typed copy of the value keeps every byte (`Zeroed::bytes()` sends them all out).
unsafe trait Abi: Sized {}

// SAFETY: One integer; its size is checked below.
unsafe impl Abi for bindings::allocinfo_content_id {}
// SAFETY: Integers and byte arrays only, which fill it: the offsets and sizes checked below leave
// no gap.
unsafe impl Abi for bindings::allocinfo_tag_data {}
// SAFETY: As for `allocinfo_tag_data`, with a `__u64` and the filter's integers and arrays.
unsafe impl Abi for bindings::allocinfo_get_at {}
// SAFETY: As for `allocinfo_get_at`, with `__u32`, `__s32`, `__s64` and `__u64` fields that
// fill the gap between the filter and the answer (offsets checked below).
unsafe impl Abi for bindings::allocinfo_get_split {}

// The numbers mainline's header gives on x86_64 (and every 64-bit ABI), checked as the kernel
// builds: a field moved or resized, implicit padding (each struct's fields fill it), or an
// ioctl number that changed fails the build. `pad` is `[u8; 6]`: `fill()` assigns one.
const _: () = {
    use bindings::{
        allocinfo_content_id as Id, allocinfo_counter as Counter, allocinfo_filter as Filt,
        allocinfo_get_at as GetAt, allocinfo_tag as Tag, allocinfo_tag_data as Data,
    };
    assert!(size_of::<Id>() == 8 && offset_of!(Id, id) == 0);
    assert!(bindings::ALLOCINFO_STR_SIZE == 64);
    assert!(size_of::<Tag>() == 200);
    assert!(offset_of!(Tag, modname) == 0 && offset_of!(Tag, function) == 64);
    assert!(offset_of!(Tag, filename) == 128 && offset_of!(Tag, lineno) == 192);
    assert!(size_of::<Counter>() == 24 && core::mem::align_of::<Counter>() == 8);
    assert!(offset_of!(Counter, bytes) == 0 && offset_of!(Counter, calls) == 8);
    assert!(offset_of!(Counter, accurate) == 16 && offset_of!(Counter, unloaded) == 17);
    assert!(offset_of!(Counter, pad) == 18 && size_of::<[u8; 6]>() + 18 == size_of::<Counter>());
    assert!(size_of::<Data>() == 224);
    assert!(offset_of!(Data, tag) == 0 && offset_of!(Data, counter) == 200);
    assert!(size_of::<Filt>() == 232);
    assert!(offset_of!(Filt, mask) == 0 && offset_of!(Filt, fields) == 8);
    assert!(offset_of!(Filt, min_size) == 208 && offset_of!(Filt, max_size) == 216);
    assert!(offset_of!(Filt, inaccurate) == 224);
    assert!(size_of::<GetAt>() == 464);
    assert!(offset_of!(GetAt, pos) == 0 && offset_of!(GetAt, filter) == 8);
    assert!(offset_of!(GetAt, data) == 240);
    assert!(IOC_CONTENT_ID == 0x8008_a600);
    assert!(IOC_GET_AT == 0xc1d0_a601);
    assert!(IOC_GET_NEXT == 0x80e0_a602);
    {
        use bindings::{allocinfo_get_split as Split, allocinfo_split_entry as Entry};
        assert!(size_of::<Entry>() == split::ENTRY && offset_of!(Entry, bytes) == 0);
        assert!(offset_of!(Entry, calls) == 8);
        assert!(offset_of!(Split, pos) == 0 && offset_of!(Split, filter) == 8);
        assert!(offset_of!(Split, by) == 240 && offset_of!(Split, flags) == 244);
        assert!(offset_of!(Split, at) == 248 && offset_of!(Split, nr) == 252);
        assert!(offset_of!(Split, min_at) == 256 && offset_of!(Split, entries) == 264);
        assert!(offset_of!(Split, data) == 272 && size_of::<Split>() == 496);
        assert!(IOC_GET_SPLIT == 0xc1f0_a603);
        assert!(bindings::ALLOCINFO_SPLIT_CPU == 0 && bindings::ALLOCINFO_SPLIT_NODE == 1);
        assert!(bindings::ALLOCINFO_SPLIT_NEXT == 1);
    }
    assert!(super::filter::STR_SIZE == bindings::ALLOCINFO_STR_SIZE as usize);
    assert!(super::filter::MASKS == 0xff);
};

impl<T: Abi> Zeroed<T> {
    fn new() -> Self {
        // INVARIANT: All bytes are zero.
        Self {
            // SAFETY: By `Abi`'s contract all-zero bytes are a valid `T`.
            value: unsafe { core::mem::zeroed() },
        }
    }

    fn get(&self) -> &T {
        &self.value
    }

    fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// Returns the bytes to fill from user space.
    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `value` is `size_of::<T>()` initialised bytes (the type invariant), and by
        // `Abi`'s contract any bytes are a valid `T`.
        unsafe {
            core::slice::from_raw_parts_mut((&raw mut self.value).cast::<u8>(), size_of::<T>())
        }
    }

    /// Returns the bytes to copy to user space.
    fn bytes(&mut self) -> &[u8] {
        self.bytes_mut()
    }
}
