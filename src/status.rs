// SPDX-License-Identifier: GPL-2.0

//! `/sys/kernel/debug/alloctag/status`: where page tags live, and why.
//!
//! C header: [`include/linux/alloctag_pgflags.h`](srctree/include/linux/alloctag_pgflags.h)
//!
//! Whether page tags fit in page flags is decided once at boot, and the log line that says so
//! scrolls away; `allocinfo status` reads this file instead, and says what would free bits.
//! One `key: value` a line, in a fixed order; later kernels may add keys, never change one.
//! Read-only (0400, no ioctl or mmap) and without addresses: root's (debugfs), and debugfs
//! opens it for reading under lockdown too ([`crate::debugfs`]).
//!
//! The test kernel booted with `sysctl.vm.mem_profiling=1,compressed`:
//!
//! ```text
//! page_tags: page_flags
//! compressed_requested: yes
//! free_bits: 41
//! index_bits: 16
//! needed_bits: 11
//! vmlinux_tags: 1068
//! indices_used: 1134
//! indices_capacity: 65536
//! tags_without_index: 0
//! page_flags: long 64 flags 21 sections 0 nodes 0 zones 2 last_cpupid 0 kasan_tag 0 lru_gen 0 lru_refs 0 unused 41
//! module_tags: chunks 1 mapped 65536 used 12880
//! unloaded_modules: 1 names 120
//! counters: made at 0.000000 s
//! page_ext: none
//! page_ext_requested: no
//! index_leaves: 1
//! ```
//!
//! `counters` says when the tags got their per-CPU counters, in seconds of boot time (as the
//! log's timestamps): the first time profiling turned on (in `mm_core_init()` when booted on;
//! 0 with the debug checks, as here, whose vmlinux tags have static counters), or `none` while
//! it never was and no tag holds any.
//!
//! `page_ext` says where page tags' page_ext (8 bytes a page) came from: `none` (page tags are
//! in page flags, as here, or profiling has not been on since a boot that reserved nothing),
//! `reserved at boot` (booted on, with the debug checks, or with flat memory), `reserved at
//! boot for another user` (page_owner, page_table_check or waste accounting's slots needed
//! page_ext at boot, and page tags' room could not be added later), or `made at the first
//! switch-on` (src/alloc_tag/page_ext.rs). `page_ext_requested` says whether the boot asked for
//! page tags in page_ext (`,page_ext`); without it they go in page flags where they fit.
//!
//! `index_leaves` counts the leaves of 4 KiB (512 indices each) of the index's table that name
//! modules' and dynamic tags for page flags. Booted `0`, tags indexed while off take indices but
//! no leaf until the first switch-on (src/alloc_tag/index.rs).
//!
//! `module_tags` is the memory that holds loaded and unloaded modules' tags (module data memory
//! in chunks, the bytes of tag sections in it); `unloaded_modules` counts the modules unloaded
//! while allocations they made live, whose tags stay listed, and the bytes of their names'
//! copies.

use crate::{
    alloc_tag::{
        index::{placement, PageFlags, Placement},
        page_ext::State,
    },
    codetag,
    debugfs::{self, single_open, Fops},
    seq::SeqWriter,
};
use core::fmt::{self, Write};
use kernel::c_str;

/// Writes the status, `p` being where page tags live.
fn write_status(w: &mut SeqWriter, p: &Placement) -> fmt::Result {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    writeln!(
        w,
        "page_tags: {}",
        if p.compressed {
            "page_flags"
        } else {
            "page_ext"
        }
    )?;
    writeln!(w, "compressed_requested: {}", yes_no(p.requested))?;
    writeln!(w, "free_bits: {}", p.free_bits)?;
    writeln!(w, "index_bits: {}", p.index_bits)?;
    writeln!(w, "needed_bits: {}", p.needed_bits)?;
    writeln!(w, "vmlinux_tags: {}", p.vmlinux_tags)?;
    writeln!(w, "indices_used: {}", p.usage.used)?;
    writeln!(w, "indices_capacity: {}", p.usage.capacity)?;
    writeln!(w, "tags_without_index: {}", p.usage.refused)?;
    writeln!(w, "page_flags: {}", PageFlags { options: false })?;
    let (area, names, kept) = codetag::read().area_usage();
    writeln!(
        w,
        "module_tags: chunks {} mapped {} used {}",
        area.chunks, area.mapped, area.used
    )?;
    writeln!(w, "unloaded_modules: {kept} names {names}")?;
    match crate::alloc_tag::counters::armed_at() {
        Some(ns) => writeln!(
            w,
            "counters: made at {}.{:06} s",
            ns / 1_000_000_000,
            ns % 1_000_000_000 / 1000
        ),
        None => writeln!(w, "counters: none"),
    }?;
    writeln!(
        w,
        "page_ext: {}",
        match crate::alloc_tag::page_ext::state() {
            State::None => "none",
            State::Booted => "reserved at boot",
            State::Shared => "reserved at boot for another user",
            State::Made => "made at the first switch-on",
        }
    )?;
    writeln!(w, "page_ext_requested: {}", yes_no(p.page_ext_requested))?;
    writeln!(w, "index_leaves: {}", p.usage.leaves)?;
    #[cfg(CONFIG_ALLOCTAG_PER_NODE)]
    writeln!(w, "per_node: {}", crate::alloc_tag::node::said())?;
    Ok(())
}

single_open!(open, |w: &mut SeqWriter| write_status(w, &placement()));

static FOPS: Fops = Fops::seq(open, None);

/// Creates `/sys/kernel/debug/alloctag/status`. Without debugfs (not built, or booted with
/// `debugfs=off`) there is no file; the boot log says the same.
pub(crate) fn register() {
    debugfs::create_file(c_str!("status"), 0o400, &FOPS);
}
