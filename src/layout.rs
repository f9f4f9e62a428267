// SPDX-License-Identifier: GPL-2.0

//! Build-time checks that bindgen lays out every kernel struct field that this crate (and the
//! kernel crate's call-site API, rust/kernel/alloc_tag.rs and jump_label.rs) reads or writes
//! where C does.
//!
//! C header: [`include/linux/alloc_tag.h`](srctree/include/linux/alloc_tag.h)
//!
//! Rust reaches C structs through bindgen's translation, which is not checked against C (the
//! kernel builds bindings with `--no-layout-tests`), and it can be wrong: bindgen 0.73 put
//! `task_struct`'s fields from `se` on 64 bytes after C's. src/layout.c has the C compiler
//! write the offsets and sizes into constants (Kbuild's `layout_generated.rs`, as
//! asm-offsets.h is made), and each is compared here with bindgen's: a mismatch fails the
//! build, naming the field.

use core::mem::{offset_of, size_of};
use kernel::bindings;

/// C's offsets and sizes, generated from src/layout.c by Kbuild.
mod c {
    include!(env!("ALLOCTAG_LAYOUT"));
}

/// Fails the build unless bindgen's offset of `$type.$field` (or size of `$type`) is C's
/// `c::$name`.
macro_rules! same {
    ($name:ident, size $type:ident) => {
        const _: () = assert!(
            size_of::<bindings::$type>() == c::$name,
            concat!(
                "bindgen's size of struct ",
                stringify!($type),
                " is not C's"
            )
        );
    };
    ($name:ident, $type:ident . $field:ident) => {
        const _: () = assert!(
            offset_of!(bindings::$type, $field) == c::$name,
            concat!(
                "bindgen's offset of ",
                stringify!($type),
                ".",
                stringify!($field),
                " is not C's"
            )
        );
    };
}

same!(CODETAG_SIZE, size codetag);
same!(CODETAG_FLAGS, codetag.flags);
same!(CODETAG_LINENO, codetag.lineno);
same!(CODETAG_MODNAME, codetag.modname);
same!(CODETAG_FUNCTION, codetag.function);
same!(CODETAG_FILENAME, codetag.filename);
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
same!(CODETAG_INDEX, codetag.index);

same!(ALLOC_TAG_SIZE, size alloc_tag);
same!(ALLOC_TAG_CT, alloc_tag.ct);
same!(ALLOC_TAG_COUNTERS, alloc_tag.counters);
same!(ALLOC_TAG_COUNTERS_SIZE, size alloc_tag_counters);
same!(ALLOC_TAG_COUNTERS_BYTES, alloc_tag_counters.bytes);
same!(ALLOC_TAG_COUNTERS_CALLS, alloc_tag_counters.calls);
#[cfg(CONFIG_ALLOCTAG_WASTE)]
same!(ALLOC_TAG_WASTE, alloc_tag.waste);
#[cfg(CONFIG_ALLOCTAG_WASTE)]
same!(WASTE_COUNTERS_SIZE, size alloctag_waste_counters);
#[cfg(CONFIG_ALLOCTAG_WASTE)]
same!(WASTE_COUNTERS_ALLOCS, alloctag_waste_counters.allocs);
#[cfg(CONFIG_ALLOCTAG_WASTE)]
same!(WASTE_COUNTERS_FREES, alloctag_waste_counters.frees);
#[cfg(CONFIG_ALLOCTAG_WASTE)]
same!(WASTE_COUNTERS_BYTES, alloctag_waste_counters.bytes);
#[cfg(CONFIG_ALLOCTAG_WASTE)]
same!(WASTE_COUNTERS_REQUESTED, alloctag_waste_counters.requested);
same!(CODETAG_BYTES_SIZE, size codetag_bytes);
same!(CODETAG_BYTES_CT, codetag_bytes.ct);
same!(CODETAG_BYTES_BYTES, codetag_bytes.bytes);

same!(TASK_ALLOC_TAG, task_struct.alloc_tag);
// Read by rust/kernel/jump_label.rs where no jump-label entry can be emitted.
same!(STATIC_KEY_ENABLED, static_key.enabled);
// Read by the jump-label test (src/tests/jump_label.rs), with relative entries.
#[cfg(all(CONFIG_JUMP_LABEL, CONFIG_HAVE_ARCH_JUMP_LABEL_RELATIVE))]
same!(JUMP_ENTRY_SIZE, size jump_entry);
#[cfg(all(CONFIG_JUMP_LABEL, CONFIG_HAVE_ARCH_JUMP_LABEL_RELATIVE))]
same!(JUMP_ENTRY_CODE, jump_entry.code);
#[cfg(all(CONFIG_JUMP_LABEL, CONFIG_HAVE_ARCH_JUMP_LABEL_RELATIVE))]
same!(JUMP_ENTRY_KEY, jump_entry.key);
// Without modules `struct module` is incomplete in C.
#[cfg(CONFIG_MODULES)]
same!(MODULE_NAME, module.name);
same!(SEQ_FILE_BUF, seq_file.buf);
same!(SEQ_FILE_SIZE, seq_file.size);
same!(SEQ_FILE_COUNT, seq_file.count);
same!(SEQ_FILE_PRIVATE, seq_file.private);
same!(SEQ_FILE_LOCK, seq_file.lock);
same!(FILE_PRIVATE_DATA, file.private_data);

same!(CTL_TABLE_SIZE, size ctl_table);
same!(CTL_TABLE_PROCNAME, ctl_table.procname);
same!(CTL_TABLE_DATA, ctl_table.data);
same!(CTL_TABLE_MAXLEN, ctl_table.maxlen);
same!(CTL_TABLE_MODE, ctl_table.mode);
same!(CTL_TABLE_PROC_HANDLER, ctl_table.proc_handler);
same!(CTL_TABLE_POLL, ctl_table.poll);
same!(CTL_TABLE_EXTRA1, ctl_table.extra1);
same!(CTL_TABLE_EXTRA2, ctl_table.extra2);

same!(FILE_OPERATIONS_SIZE, size file_operations);
same!(FILE_OPERATIONS_OPEN, file_operations.open);
same!(FILE_OPERATIONS_READ, file_operations.read);
same!(FILE_OPERATIONS_WRITE, file_operations.write);
same!(FILE_OPERATIONS_LLSEEK, file_operations.llseek);
same!(FILE_OPERATIONS_RELEASE, file_operations.release);
same!(PROC_OPS_SIZE, size proc_ops);
same!(PROC_OPS_OPEN, proc_ops.proc_open);
same!(PROC_OPS_READ_ITER, proc_ops.proc_read_iter);
same!(PROC_OPS_LSEEK, proc_ops.proc_lseek);
same!(PROC_OPS_RELEASE, proc_ops.proc_release);
same!(PROC_OPS_IOCTL, proc_ops.proc_ioctl);
same!(SEQ_OPERATIONS_SIZE, size seq_operations);
same!(SEQ_OPERATIONS_START, seq_operations.start);
same!(SEQ_OPERATIONS_STOP, seq_operations.stop);
same!(SEQ_OPERATIONS_NEXT, seq_operations.next);
same!(SEQ_OPERATIONS_SHOW, seq_operations.show);

same!(ALLOCINFO_TAG_DATA_SIZE, size allocinfo_tag_data);
same!(ALLOCINFO_GET_AT_SIZE, size allocinfo_get_at);
same!(ALLOCINFO_CONTENT_ID_SIZE, size allocinfo_content_id);

same!(CAPTURE_INFO_SIZE, size alloctag_capture_info);
same!(CAPTURE_INFO_REF, alloctag_capture_info.ref_);
same!(CAPTURE_INFO_TAG, alloctag_capture_info.tag);
same!(CAPTURE_INFO_OBJECT, alloctag_capture_info.object);
same!(CAPTURE_INFO_BYTES, alloctag_capture_info.bytes);
same!(CAPTURE_INFO_TIME_NS, alloctag_capture_info.time_ns);
same!(CAPTURE_INFO_PID, alloctag_capture_info.pid);
same!(CAPTURE_INFO_TGID, alloctag_capture_info.tgid);
same!(CAPTURE_INFO_COMM, alloctag_capture_info.comm);
same!(CAPTURE_INFO_CPU, alloctag_capture_info.cpu);
same!(CAPTURE_INFO_GFP, alloctag_capture_info.gfp);
same!(CAPTURE_INFO_STACK, alloctag_capture_info.stack);
same!(CAPTURE_INFO_KIND, alloctag_capture_info.kind);
same!(CAPTURE_INFO_ORDER, alloctag_capture_info.order);
same!(CAPTURE_INFO_CONTEXT, alloctag_capture_info.context);

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

#[cfg(CONFIG_KUNIT)]
mod kunit {
    use super::*;

    same!(KUNIT_CASE_SIZE, size kunit_case);
    same!(KUNIT_CASE_RUN_CASE, kunit_case.run_case);
    same!(KUNIT_CASE_NAME, kunit_case.name);
    same!(KUNIT_SUITE_SIZE, size kunit_suite);
    same!(KUNIT_SUITE_NAME, kunit_suite.name);
    same!(KUNIT_SUITE_TEST_CASES, kunit_suite.test_cases);
    same!(KUNIT_LOC_SIZE, size kunit_loc);
    same!(KUNIT_LOC_FILE, kunit_loc.file);
    same!(KUNIT_LOC_LINE, kunit_loc.line);
    same!(KUNIT_ASSERT_SIZE, size kunit_assert);
    same!(KUNIT_UNARY_ASSERT_SIZE, size kunit_unary_assert);
    same!(KUNIT_UNARY_ASSERT_ASSERT, kunit_unary_assert.assert);
    same!(KUNIT_UNARY_ASSERT_CONDITION, kunit_unary_assert.condition);
    same!(
        KUNIT_UNARY_ASSERT_EXPECTED_TRUE,
        kunit_unary_assert.expected_true
    );
}
