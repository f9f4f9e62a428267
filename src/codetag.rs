// SPDX-License-Identifier: GPL-2.0

//! Code tags: static structs that tagged call sites place in a linker section, found at run
//! time in vmlinux and in each loaded module.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)
//!
//! A tag type ([`TagType`]) names its section and the struct stored there, which starts with a
//! `struct codetag`. [`Registration::register`] adds a type to the [`Registry`] with vmlinux's
//! range of its section; the module loader calls [`codetag_load_module`] and
//! [`codetag_unload_module`], which add and drop each module's range under the registry's write
//! lock. Readers iterate under the read lock and can stop and resume later from a [`Cursor`], which
//! survives module load and unload between the two.
//!
//! Users such as fault injection choose tags with a [`Selection`]: the registry marks the tags
//! it matches in a [`Field`] of their flags, in vmlinux and in every module loaded while it is
//! in force, and takes the marks back when it ends or the module goes. Each user keeps the
//! tags it marked in a table of [`Sites`], whose slot numbers are the marks.
//!
//! Side data that has no room for a pointer names a tag, or memory of the tag's, by a small
//! number, through a [`LeafTable`] that the hooks read without a lock: the tag index (page tags
//! in page flags) and per-node counting's slots.

mod tag;
pub(crate) use tag::Codetag;
#[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, CONFIG_MODULES))]
pub(crate) use tag::CODETAG_FLAG_COUNTERS;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) use tag::CODETAG_FLAG_INACCURATE;
#[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, CONFIG_ALLOCTAG_KUNIT_TEST))]
pub(crate) use tag::{CODETAG_FLAG_DROPPED, CODETAG_FLAG_UNLOADED};

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod table;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) use table::{LeafTable, LEAF as TABLE_LEAF};
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod registry;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) use registry::*;
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
mod glob;
#[cfg(all(CONFIG_ALLOCTAG_SELECTION, CONFIG_ALLOCTAG_KUNIT_TEST))]
pub(crate) use glob::{matches as glob_backtracking, Glob};
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
mod select;
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
pub(crate) use select::*;
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
mod sites;
#[cfg(CONFIG_ALLOCTAG_SELECTION)]
pub(crate) use sites::{Reuse, Sites};
