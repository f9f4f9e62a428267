//! The structures and numbers of `include/uapi/linux/alloc_tag.h`, mainline's
//! `/proc/allocinfo` ioctl ABI with alloctag's extension (a counter's
//! `unloaded`, the filter bit `ALLOCINFO_FILTER_UNLOADED`), byte for byte
//! (`#[repr(C)]`). The names are
//! the C names in Rust's case: `struct allocinfo_tag_data` is
//! [`AllocinfoTagData`]. `tests/abi.rs` checks every size, alignment, offset
//! and number against the C header.

/// `ALLOCINFO_STR_SIZE`: the names' buffers, NUL included. Longer names keep
/// their last `ALLOCINFO_STR_SIZE - 1` bytes.
pub const ALLOCINFO_STR_SIZE: usize = 64;

/// `struct allocinfo_content_id`: changes when modules load or unload.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocinfoContentId {
    pub id: u64,
}

/// `struct allocinfo_tag`: where a tag is. NUL-terminated names; `modname`
/// is empty for built-in code.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocinfoTag {
    pub modname: [u8; ALLOCINFO_STR_SIZE],
    pub function: [u8; ALLOCINFO_STR_SIZE],
    pub filename: [u8; ALLOCINFO_STR_SIZE],
    pub lineno: u64,
}

/// `struct allocinfo_counter`, `__attribute__((aligned(8)))`, its tail
/// padding explicit as in mainline since "alloc_tag: avoid implicit padding
/// in uapi" (same size and ioctl numbers).
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocinfoCounter {
    pub bytes: u64,
    pub calls: u64,
    /// 0 when the kernel lost counts for this tag.
    pub accurate: u8,
    /// alloctag's extension, in what was padding (mainline leaves it 0): 1
    /// when the tag's module was unloaded while allocations it made were
    /// live; the tag is listed until they are freed.
    pub unloaded: u8,
    /// Zero.
    pub pad: [u8; 6],
}

/// `struct allocinfo_tag_data`: one answer.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocinfoTagData {
    pub tag: AllocinfoTag,
    pub counter: AllocinfoCounter,
}

pub const ALLOCINFO_FILTER_MODNAME: u32 = 0;
pub const ALLOCINFO_FILTER_FUNCTION: u32 = 1;
pub const ALLOCINFO_FILTER_FILENAME: u32 = 2;
pub const ALLOCINFO_FILTER_LINENO: u32 = 3;
pub const ALLOCINFO_FILTER_INACCURATE: u32 = 4;
pub const ALLOCINFO_FILTER_MIN_SIZE: u32 = 5;
pub const ALLOCINFO_FILTER_MAX_SIZE: u32 = 6;
/// alloctag's: only the tags of unloaded modules (no value field).
pub const ALLOCINFO_FILTER_UNLOADED: u32 = 7;
/// `__ALLOCINFO_FILTER_LAST`.
pub const __ALLOCINFO_FILTER_LAST: u32 = ALLOCINFO_FILTER_UNLOADED;

pub const ALLOCINFO_FILTER_MASK_MODNAME: u64 = 1 << ALLOCINFO_FILTER_MODNAME;
pub const ALLOCINFO_FILTER_MASK_FUNCTION: u64 = 1 << ALLOCINFO_FILTER_FUNCTION;
pub const ALLOCINFO_FILTER_MASK_FILENAME: u64 = 1 << ALLOCINFO_FILTER_FILENAME;
pub const ALLOCINFO_FILTER_MASK_LINENO: u64 = 1 << ALLOCINFO_FILTER_LINENO;
pub const ALLOCINFO_FILTER_MASK_INACCURATE: u64 = 1 << ALLOCINFO_FILTER_INACCURATE;
pub const ALLOCINFO_FILTER_MASK_MIN_SIZE: u64 = 1 << ALLOCINFO_FILTER_MIN_SIZE;
pub const ALLOCINFO_FILTER_MASK_MAX_SIZE: u64 = 1 << ALLOCINFO_FILTER_MAX_SIZE;
pub const ALLOCINFO_FILTER_MASK_UNLOADED: u64 = 1 << ALLOCINFO_FILTER_UNLOADED;
/// `ALLOCINFO_FILTER_MASKS`: every filter bit.
pub const ALLOCINFO_FILTER_MASKS: u64 = (1 << (__ALLOCINFO_FILTER_LAST + 1)) - 1;

/// `struct allocinfo_filter`: the fields whose bit is in `mask` must match.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocinfoFilter {
    pub mask: u64,
    /// Names, compared with the tag's trimmed names; and `lineno`.
    pub fields: AllocinfoTag,
    /// Bytes, inclusive.
    pub min_size: u64,
    /// Bytes, inclusive.
    pub max_size: u64,
    /// Matches tags whose `accurate` is `!inaccurate`.
    pub inaccurate: u64,
}

/// `struct allocinfo_get_at`: in `pos` and `filter`, out `data`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocinfoGetAt {
    /// The `pos`-th matching tag, from 0.
    pub pos: u64,
    /// Kept by the kernel on the open file for `GET_NEXT`.
    pub filter: AllocinfoFilter,
    pub data: AllocinfoTagData,
}

/// alloctag's `ALLOCINFO_SPLIT_CPU`: a tag's counters as each CPU counted
/// them, CPU 0 to `nr_cpu_ids - 1`.
pub const ALLOCINFO_SPLIT_CPU: u32 = 0;
/// alloctag's `ALLOCINFO_SPLIT_NODE`: by the node of the memory, node 0 to
/// `nr_node_ids - 1`, then per-CPU memory, on every node (`EOPNOTSUPP` without
/// per-node counting).
pub const ALLOCINFO_SPLIT_NODE: u32 = 1;
/// `__ALLOCINFO_SPLIT_LAST`.
pub const __ALLOCINFO_SPLIT_LAST: u32 = ALLOCINFO_SPLIT_NODE;
/// `ALLOCINFO_SPLIT_NEXT`, `GET_SPLIT`'s flag: the next match after the
/// last, with the kept filter and split, as `GET_NEXT`.
pub const ALLOCINFO_SPLIT_NEXT: u32 = 1 << 0;

/// `struct allocinfo_split_entry`: one CPU's or node's share of a tag.
/// Signed: memory freed on another CPU than the one that allocated it
/// leaves the first positive and the second negative; shares add up to the
/// tag's figures.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocinfoSplitEntry {
    pub bytes: i64,
    pub calls: i64,
}

/// `struct allocinfo_get_split`, alloctag's `GET_SPLIT`: in `pos`, `filter`,
/// `by`, `flags`, `at`, `min_at`, `nr` and `entries`; out `nr` and `data`,
/// and `nr` entries at `entries`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocinfoGetSplit {
    /// As `GET_AT`'s; not read with `ALLOCINFO_SPLIT_NEXT`.
    pub pos: u64,
    /// As `GET_AT`'s, kept; not read with `ALLOCINFO_SPLIT_NEXT`.
    pub filter: AllocinfoFilter,
    /// `ALLOCINFO_SPLIT_*`, kept.
    pub by: u32,
    /// `ALLOCINFO_SPLIT_NEXT` or 0.
    pub flags: u32,
    /// A CPU or node, or -1: with one, only tags holding at least `min_at`
    /// bytes there. Kept.
    pub at: i32,
    /// In: room at `entries`; 0 asks for the length and changes nothing.
    /// Out: entries written. Fewer than needed is `EINVAL`.
    pub nr: u32,
    pub min_at: i64,
    /// User address of `nr` [`AllocinfoSplitEntry`].
    pub entries: u64,
    pub data: AllocinfoTagData,
}

/// `ALLOCINFO_IOC_BASE`, the ioctl magic.
pub const ALLOCINFO_IOC_BASE: u32 = 0xA6;
pub const _ALLOCINFO_IOC_CONTENT_ID: u32 = 0;
pub const _ALLOCINFO_IOC_GET_AT: u32 = 1;
pub const _ALLOCINFO_IOC_GET_NEXT: u32 = 2;
pub const _ALLOCINFO_IOC_GET_SPLIT: u32 = 3;

/// The type of ioctl(2)'s request argument (`unsigned long` in glibc, `int`
/// in musl).
#[cfg(target_os = "linux")]
pub type Request = libc::Ioctl;

/// `_IOR(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_CONTENT_ID, struct allocinfo_content_id)`
#[cfg(target_os = "linux")]
pub const ALLOCINFO_IOC_CONTENT_ID: Request =
    libc::_IOR::<AllocinfoContentId>(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_CONTENT_ID);
/// `_IOWR(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_GET_AT, struct allocinfo_get_at)`
#[cfg(target_os = "linux")]
pub const ALLOCINFO_IOC_GET_AT: Request =
    libc::_IOWR::<AllocinfoGetAt>(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_GET_AT);
/// `_IOR(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_GET_NEXT, struct allocinfo_tag_data)`
#[cfg(target_os = "linux")]
pub const ALLOCINFO_IOC_GET_NEXT: Request =
    libc::_IOR::<AllocinfoTagData>(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_GET_NEXT);
/// `_IOWR(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_GET_SPLIT, struct allocinfo_get_split)`
#[cfg(target_os = "linux")]
pub const ALLOCINFO_IOC_GET_SPLIT: Request =
    libc::_IOWR::<AllocinfoGetSplit>(ALLOCINFO_IOC_BASE, _ALLOCINFO_IOC_GET_SPLIT);

impl AllocinfoTag {
    /// All names empty, line 0.
    pub const ZERO: AllocinfoTag = AllocinfoTag {
        modname: [0; ALLOCINFO_STR_SIZE],
        function: [0; ALLOCINFO_STR_SIZE],
        filename: [0; ALLOCINFO_STR_SIZE],
        lineno: 0,
    };
}

impl Default for AllocinfoTag {
    fn default() -> Self {
        Self::ZERO
    }
}

impl AllocinfoTagData {
    pub const ZERO: AllocinfoTagData = AllocinfoTagData {
        tag: AllocinfoTag::ZERO,
        counter: AllocinfoCounter {
            bytes: 0,
            calls: 0,
            accurate: 0,
            unloaded: 0,
            pad: [0; 6],
        },
    };

    /// Size of the structure in bytes.
    pub const SIZE: usize = size_of::<AllocinfoTagData>();

    /// Reads a structure as the kernel writes it (native byte order), from
    /// a buffer of exactly [`Self::SIZE`] bytes.
    pub fn from_bytes(buf: &[u8; Self::SIZE]) -> AllocinfoTagData {
        use std::mem::offset_of;
        let u64_at = |off: usize| u64::from_ne_bytes(buf[off..off + 8].try_into().unwrap());
        let name_at = |off: usize| -> [u8; ALLOCINFO_STR_SIZE] {
            buf[off..off + ALLOCINFO_STR_SIZE].try_into().unwrap()
        };
        let tag = offset_of!(AllocinfoTagData, tag);
        let counter = offset_of!(AllocinfoTagData, counter);
        AllocinfoTagData {
            tag: AllocinfoTag {
                modname: name_at(tag + offset_of!(AllocinfoTag, modname)),
                function: name_at(tag + offset_of!(AllocinfoTag, function)),
                filename: name_at(tag + offset_of!(AllocinfoTag, filename)),
                lineno: u64_at(tag + offset_of!(AllocinfoTag, lineno)),
            },
            counter: AllocinfoCounter {
                bytes: u64_at(counter + offset_of!(AllocinfoCounter, bytes)),
                calls: u64_at(counter + offset_of!(AllocinfoCounter, calls)),
                accurate: buf[counter + offset_of!(AllocinfoCounter, accurate)],
                unloaded: buf[counter + offset_of!(AllocinfoCounter, unloaded)],
                pad: buf[counter + offset_of!(AllocinfoCounter, pad)..][..6]
                    .try_into()
                    .unwrap(),
            },
        }
    }
}

impl Default for AllocinfoTagData {
    fn default() -> Self {
        Self::ZERO
    }
}

impl AllocinfoFilter {
    /// No filter: every tag matches.
    pub const NONE: AllocinfoFilter = AllocinfoFilter {
        mask: 0,
        fields: AllocinfoTag::ZERO,
        min_size: 0,
        max_size: 0,
        inaccurate: 0,
    };
}

impl Default for AllocinfoFilter {
    fn default() -> Self {
        Self::NONE
    }
}

impl AllocinfoGetAt {
    /// A request for the `pos`-th tag matching `filter`.
    pub fn new(pos: u64, filter: AllocinfoFilter) -> AllocinfoGetAt {
        AllocinfoGetAt {
            pos,
            filter,
            data: AllocinfoTagData::ZERO,
        }
    }
}

impl AllocinfoGetSplit {
    /// A request for the `pos`-th tag matching `filter`, split `by`, with
    /// room for `nr` shares (0 asks for the number); `at` is -1 for no CPU
    /// or node condition.
    pub fn new(pos: u64, filter: AllocinfoFilter, by: u32, at: i32, min_at: i64, nr: u32) -> Self {
        AllocinfoGetSplit {
            pos,
            filter,
            by,
            flags: 0,
            at,
            nr,
            min_at,
            entries: 0,
            data: AllocinfoTagData::ZERO,
        }
    }
}
