// SPDX-License-Identifier: GPL-2.0

//! alloctag: memory allocation profiling with a Rust core. This is the crate's root (Kbuild's
//! `src/alloctag.o`); the allocation tag type is [`alloc_tag`], in src/alloc_tag/.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)
//!
//! The layers, from the bottom: per-CPU data ([`percpu`]) and locks ([`rwsem`]); the generic
//! code-tag library ([`codetag`]); allocation tags, its first user ([`alloc_tag`]); the user
//! interfaces: `/proc/allocinfo` ([`allocinfo`]), the sysctl and the boot parameter
//! ([`profiling`]), and where page tags live ([`status`], in debugfs). Per-call-site fault
//! injection ([`fault`]) uses the library's selections and has its control file in debugfs; so
//! does capture ([`capture`]), the second level: the live objects of chosen call sites, with
//! process, stack and age. Waste accounting ([`waste`]) counts,
//! per call site, the bytes requested against those handed out, and the allocations and frees,
//! in `/proc/allocwaste`. The allocator hooks stay in C
//! (include/linux/alloc_tag.h, mm/).
//!
//! Without `CONFIG_MEM_ALLOC_PROFILING_RUST` only the tag type and the KUnit tests are built,
//! and they test the kernel's C core.

/// Fails the build unless `$name`, a Rust function defined for C, has the type of its C
/// declaration as bindgen read it (include/alloctag_glue.h, or the kernel header that C's core
/// declares it in): the two function items coerce to one function pointer type only if their
/// signatures agree.
// The C core's configuration builds none of the Rust functions defined for C.
#[cfg_attr(not(CONFIG_MEM_ALLOC_PROFILING_RUST), allow(unused_macros))]
macro_rules! c_declared {
    ($name:ident) => {
        const _: () = {
            let _ = if true { kernel::bindings::$name } else { $name };
        };
    };
}

mod alloc_tag;
mod codetag;
mod keys;
#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
mod kunit;
mod layout;
mod percpu;

#[cfg(CONFIG_ALLOCTAG_CAPTURE)]
mod capture;
#[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, CONFIG_DEBUG_FS))]
mod debugfs;
#[cfg(CONFIG_ALLOCTAG_FAULT_INJECTION)]
mod fault;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod seq;
#[cfg(CONFIG_ALLOCTAG_WASTE)]
mod waste;

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod allocinfo;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod profiling;
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
mod rwsem;
#[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, CONFIG_DEBUG_FS))]
mod status;

#[cfg(CONFIG_ALLOCTAG_KUNIT_TEST)]
mod tests;

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
use kernel::prelude::*;

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
module! {
    type: AllocTagCore,
    name: "alloctag",
    author: "alloctag developers",
    description: "Memory allocation profiling core",
    license: "GPL",
}

/// The profiling core, set up at `device_initcall` time, as C's `alloc_tag_init()`.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
struct AllocTagCore;

#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
impl kernel::Module for AllocTagCore {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // Each step says what failed: without it, /proc/allocinfo is just missing.
        let step = |what: &'static str| {
            move |e: &Error| pr_err!("alloctag: {what} failed: {e:?}; profiling has no files\n")
        };
        alloc_tag::ALLOC_TAGS
            .register()
            .inspect_err(step("registering the allocation tags"))?;
        // SAFETY: The pool holds allocation tags.
        unsafe { alloc_tag::ALLOC_TAGS.add_dynamic(alloc_tag::dynamic::pool()) }
            .inspect_err(step("listing the dynamic tags"))?;
        profiling::register_sysctl().inspect_err(step("vm.mem_profiling"))?;
        allocinfo::register().inspect_err(step("/proc/allocinfo"))?;
        #[cfg(CONFIG_DEBUG_FS)]
        status::register();
        #[cfg(CONFIG_ALLOCTAG_FAULT_INJECTION)]
        fault::register().inspect_err(step("fault injection"))?;
        #[cfg(CONFIG_ALLOCTAG_CAPTURE)]
        {
            let control_file = capture::register().inspect_err(step("capture"))?;
            capture::apply_boot_selections(control_file);
        }
        #[cfg(CONFIG_ALLOCTAG_WASTE)]
        {
            waste::register().inspect_err(step("waste accounting"))?;
            waste::start_at_boot();
        }
        Ok(Self)
    }
}
