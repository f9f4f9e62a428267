// SPDX-License-Identifier: GPL-2.0

//! Selections of code tags, written in `/proc/allocinfo`'s own words, and the marks that users
//! of selections (fault injection, capture) put on the tags they chose.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)
//!
//! A selection is up to [`MAX_SELECTORS`] selectors separated by blanks, all of which a tag must
//! match: `FILE:LINE`, `FILE` (the tag's file or a path suffix of it at a `/`), `func:NAME` and
//! `module:NAME`. A `FILE`, `NAME` with `*`, `?` or `[` is a glob over the whole name
//! ([`super::glob`]), as the `allocinfo` tool matches names. A user owns a bit field of
//! `struct codetag`'s `flags` ([`Field`]), in which the registry stores the user's mark on each
//! tag its selections match, so that an allocator hook tests one word of the tag it already has.

use super::{glob, Codetag};
use core::{fmt, num::NonZeroU32, sync::atomic::Ordering};
use kernel::{alloc::flags::GFP_KERNEL, prelude::*};

/// The most selectors in one selection.
pub(crate) const MAX_SELECTORS: usize = 4;

/// The longest selector, in bytes.
const MAX_SELECTOR_LEN: usize = 256;

// Every selector's text compiles.
const _: () = assert!(MAX_SELECTOR_LEN <= glob::MAX_LEN);

/// What a selector compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The file, or a path suffix of it, and the line when not 0.
    File {
        line: u32,
    },
    Function,
    Module,
}

/// One selector: a kind and the text it compares, compiled when it is a glob.
struct Selector {
    kind: Kind,
    text: KVec<u8>,
    glob: Option<glob::Glob>,
}

/// Returns whether `path` is `suffix` or ends with `/` and `suffix`.
fn path_ends_with(path: &[u8], suffix: &[u8]) -> bool {
    match path.len().checked_sub(suffix.len()) {
        Some(0) => path == suffix,
        Some(at) => path[at - 1] == b'/' && &path[at..] == suffix,
        None => false,
    }
}

impl Selector {
    /// Parses one selector.
    fn parse(word: &[u8]) -> Result<Self> {
        if word.is_empty()
            || word.len() > MAX_SELECTOR_LEN
            || !word.iter().all(u8::is_ascii_graphic)
        {
            return Err(EINVAL);
        }
        let (kind, text) = if let Some(name) = word.strip_prefix(b"func:") {
            (Kind::Function, name)
        } else if let Some(name) = word.strip_prefix(b"module:") {
            (Kind::Module, name)
        } else {
            match word.iter().rposition(|&c| c == b':') {
                Some(colon) => {
                    let line = core::str::from_utf8(&word[colon + 1..]).map_err(|_| EINVAL)?;
                    let line: u32 = line.parse().map_err(|_| EINVAL)?;
                    if line == 0 {
                        return Err(EINVAL);
                    }
                    (Kind::File { line }, &word[..colon])
                }
                None => (Kind::File { line: 0 }, word),
            }
        };
        // Rust function names hold `::`; files and modules have no `:`.
        if text.is_empty() || kind != Kind::Function && text.contains(&b':') {
            return Err(EINVAL);
        }
        let glob = if glob::is_glob(text) {
            Some(glob::Glob::new(text)?)
        } else {
            None
        };
        let mut owned = KVec::with_capacity(text.len(), GFP_KERNEL)?;
        owned.extend_from_slice(text, GFP_KERNEL)?;
        Ok(Self {
            kind,
            text: owned,
            glob,
        })
    }

    fn matches(&self, tag: &Codetag) -> bool {
        let text = self.text.as_slice();
        let name_is = |name: &[u8]| match &self.glob {
            Some(glob) => glob.matches(name),
            None => name == text,
        };
        match self.kind {
            Kind::File { line } => {
                (line == 0 || line == tag.lineno())
                    && match &self.glob {
                        Some(glob) => glob.matches(tag.filename().as_bytes()),
                        None => path_ends_with(tag.filename().as_bytes(), text),
                    }
            }
            Kind::Function => name_is(tag.function().as_bytes()),
            Kind::Module => tag.modname().is_some_and(|m| name_is(m.as_bytes())),
        }
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = core::str::from_utf8(&self.text).map_err(|_| fmt::Error)?;
        match self.kind {
            Kind::File { line: 0 } => f.write_str(text),
            Kind::File { line } => write!(f, "{text}:{line}"),
            Kind::Function => write!(f, "func:{text}"),
            Kind::Module => write!(f, "module:{text}"),
        }
    }
}

/// A selection: the tags that match every one of its selectors.
pub(crate) struct Selection {
    selectors: KVec<Selector>,
}

impl Selection {
    /// Parses selectors separated by blanks. Refuses an empty selection, more than
    /// [`MAX_SELECTORS`], and selectors that are not in `/proc/allocinfo`'s words.
    pub(crate) fn parse<'a>(words: impl Iterator<Item = &'a [u8]>) -> Result<Self> {
        let mut selectors = KVec::new();
        for word in words {
            if selectors.len() == MAX_SELECTORS {
                return Err(EINVAL);
            }
            selectors.push(Selector::parse(word)?, GFP_KERNEL)?;
        }
        if selectors.is_empty() {
            return Err(EINVAL);
        }
        Ok(Self { selectors })
    }

    /// Returns whether `tag` matches every selector.
    pub(crate) fn matches(&self, tag: &Codetag) -> bool {
        self.selectors.iter().all(|s| s.matches(tag))
    }

    /// Returns whether this selection reads the same as `other`.
    pub(crate) fn same_as(&self, other: &Selection) -> bool {
        self.selectors.len() == other.selectors.len()
            && self
                .selectors
                .iter()
                .zip(other.selectors.iter())
                .all(|(a, b)| a.kind == b.kind && a.text == b.text)
    }
}

/// Shows the selectors as they were written, separated by one space.
impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.selectors.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
    }
}

/// A bit field of `struct codetag`'s `flags` that one user of selections owns. Bits 0 to 7 are
/// left to the kernel (mainline's `CODETAG_FLAG_INACCURATE` is bit 0).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Field {
    shift: u32,
    width: u32,
}

impl Field {
    /// Fault injection's field: a site slot number plus one.
    #[cfg_attr(not(CONFIG_ALLOCTAG_FAULT_INJECTION), allow(dead_code))]
    pub(crate) const FAULT: Self = Self {
        shift: 8,
        width: 12,
    };

    /// Capture's field: a site slot number plus one. `ALLOCTAG_CAPTURE_MASK` in
    /// include/linux/alloctag_capture.h is its mask, which the allocator hooks test inline.
    #[cfg_attr(not(CONFIG_ALLOCTAG_CAPTURE), allow(dead_code))]
    pub(crate) const CAPTURE: Self = Self {
        shift: 20,
        width: 12,
    };

    pub(crate) const fn mask(self) -> u32 {
        ((1u32 << self.width) - 1) << self.shift
    }

    /// Returns the largest mark the field holds.
    pub(crate) const fn max(self) -> u32 {
        (1u32 << self.width) - 1
    }

    /// Returns the field of `tag`: 0 when unmarked. Lock-free, for the allocator hooks.
    #[inline]
    pub(crate) fn get(self, tag: &Codetag) -> u32 {
        (tag.flags().load(Ordering::Acquire) & self.mask()) >> self.shift
    }

    /// Stores `value` (at most [`Field::max`]) in the field of `tag`, keeping the other bits.
    pub(crate) fn set(self, tag: &Codetag, value: u32) {
        let bits = (value << self.shift) & self.mask();
        let _ = tag
            .flags()
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |f| {
                Some((f & !self.mask()) | bits)
            });
    }
}

/// A user of selections: the field it owns and what marking a tag means to it. The registry
/// calls these with its write lock held.
///
/// `mark` and `owner` run in any task context an allocation runs in, atomic ones included
/// (spinlocks held, interrupts off, on PREEMPT_RT too): a dynamic tag is made at its call
/// site's first allocation, and the registry, taken with a trylock there, marks it before that
/// allocation goes on ([`super::made_dynamic`]). So they must not sleep, allocate or take a
/// lock that can sleep: they only touch atomics. `unmark` runs in process context only
/// (deselection, module unload), and may sleep.
pub(crate) struct Marker {
    /// The field that holds the user's marks.
    pub(crate) field: Field,
    /// Returns the mark for a tag that selection `id` newly matches; `None` leaves the tag
    /// unmarked (the user is out of room and counts it). Any task context; never sleeps.
    pub(crate) mark: fn(id: u32, tag: &Codetag) -> Option<NonZeroU32>,
    /// Takes the mark `value` back: its tag is deselected or its module is going. Process
    /// context.
    pub(crate) unmark: fn(value: u32),
    /// Called once after a walk that took marks back, before the registry's write lock is
    /// dropped (and so before a going module's memory can go): the user finishes what the
    /// marks it took back need, in one go rather than once per tag. A user may instead run it
    /// itself outside the lock, between `Registry::take_back` and `Registry::hand_over`,
    /// holding `flushing()`. Process context.
    pub(crate) flush: fn(),
    /// Returns the id of the selection that made the mark `value`.
    pub(crate) owner: fn(value: u32) -> u32,
}

/// What a new selection matched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Matched {
    /// Tags that match the selection.
    pub(crate) tags: usize,
    /// Of those, tags this selection marked: the others were marked by an earlier selection of
    /// the same user or the user had no room.
    pub(crate) marked: usize,
}

// The hooks test the fields inline in C: the masks there must be these.
#[cfg(CONFIG_ALLOCTAG_FAULT_INJECTION)]
const _: () = assert!(Field::FAULT.mask() == kernel::bindings::ALLOCTAG_FAULT_MASK);
#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
const _: () = assert!(Field::CAPTURE.mask() == kernel::bindings::ALLOCTAG_CAPTURE_MASK);
