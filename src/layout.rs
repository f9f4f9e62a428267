// SPDX-License-Identifier: GPL-2.0

//! Build-time checks that bindgen lays out every kernel struct field that this crate (and the
//! kernel crate's call-site API, rust/kernel/alloc_tag.rs and jump_label.rs) reads or writes
//! where C does.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)
//!
//! Rust reaches C structs through bindgen's translation, which is not checked against C (the
//! kernel builds bindings with `--no-layout-tests`), and it can be wrong: bindgen 0.73 put
//! `task_struct`'s fields from `se` on 64 bytes after C's. src/layout.c, the one list of the
//! fields, has the C compiler write their offsets and sizes (Kbuild's `layout_generated.rs`,
//! as asm-offsets.h is made), and each is compared here with bindgen's: a mismatch fails the
//! build, naming the field. A field is added to layout.c alone.

/// C's offsets and sizes, and the constants src/layout.c defines, as Kbuild generates them from
/// its assembly (`layout_generated.rs`): one `layout!()` line for each `OFFSET()`, `SIZE()` or
/// `DEFINE()` that C's preprocessor kept, with the value and the C expression it came from.
mod c {
    use core::mem::{offset_of, size_of};
    use kernel::bindings;

    /// Fails the build unless bindgen's offset of `$type.$field` (or size of `$type`) is C's
    /// `$value`; a value of any other C expression becomes the constant `$name`.
    macro_rules! layout {
        // bindgen renames a field named with a Rust keyword: `ref_`.
        ($name:ident, $value:literal, offsetof(struct $type:ident, ref)) => {
            layout!($name, $value, offsetof(struct $type, ref_));
        };
        ($name:ident, $value:literal, offsetof(struct $type:ident, $field:ident)) => {
            const _: () = assert!(
                offset_of!(bindings::$type, $field) == $value,
                concat!(
                    "bindgen's offset of ",
                    stringify!($type),
                    ".",
                    stringify!($field),
                    " is not C's"
                )
            );
        };
        ($name:ident, $value:literal, sizeof(struct $type:ident)) => {
            const _: () = assert!(
                size_of::<bindings::$type>() == $value,
                concat!("bindgen's size of struct ", stringify!($type), " is not C's")
            );
        };
        ($name:ident, $value:literal, $($c:tt)*) => {
            pub(crate) const $name: usize = $value;
        };
    }

    include!(env!("ALLOCTAG_LAYOUT"));
}

/// What takes the bits of `page->flags`, as `NR_UNUSED_PAGEFLAG_BITS` counts them
/// (linux/page-flags-layout.h): constants, not a layout check.
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) mod page_flags {
    pub(crate) use super::c::{
        PGFLAGS_FLAGS as FLAGS, PGFLAGS_KASAN_TAG as KASAN_TAG, PGFLAGS_LAST_CPUPID as LAST_CPUPID,
        PGFLAGS_LONG as LONG, PGFLAGS_LRU_GEN as LRU_GEN, PGFLAGS_LRU_REFS as LRU_REFS,
        PGFLAGS_NODES as NODES, PGFLAGS_SECTIONS as SECTIONS, PGFLAGS_ZONES as ZONES,
    };
}

/// The largest per-CPU allocation the kernel makes (`PCPU_MIN_UNIT_SIZE`, include/linux/percpu.h);
/// a larger one is refused with a warning.
#[cfg(all(CONFIG_MEM_ALLOC_PROFILING_RUST, CONFIG_MODULES))]
pub(crate) const PCPU_MAX_ALLOC: usize = c::PCPU_MIN_UNIT_SIZE;
