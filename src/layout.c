// SPDX-License-Identifier: GPL-2.0
/*
 * C's layout of every kernel struct field that alloctag's Rust reads or
 * writes: the one list of them. Kbuild turns each OFFSET() and SIZE() here,
 * with its value and expression, into a layout!() line of
 * layout_generated.rs, as the kernel turns asm-offsets.c into asm-offsets.h,
 * and src/layout.rs asserts that bindgen's structs agree, so a layout
 * bindgen gets wrong fails the build instead of reading the wrong field:
 * bindgen 0.73 placed task_struct's fields from se on 64 bytes off (it
 * wrapped a 52-byte padding in an 8-byte-aligned array). What the
 * preprocessor drops here is not checked there. A DEFINE() of another
 * expression becomes a Rust constant.
 *
 * C glue because only the C compiler knows C's layout.
 */
#define COMPILE_OFFSETS
#include <linux/alloc_tag.h>
#include <linux/codetag.h>
#include <linux/fs.h>
#include <linux/jump_label.h>
#include <linux/kbuild.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sysctl.h>
#include <kunit/test.h>
#include <uapi/linux/alloc_tag.h>
#include "../include/alloctag_capture_info.h"
#include "../include/alloctag_waste.h"

#define SIZE(sym, type) DEFINE(sym, sizeof(struct type))

void alloctag_layout(void);

void alloctag_layout(void)
{
	SIZE(CODETAG_SIZE, codetag);
	OFFSET(CODETAG_FLAGS, codetag, flags);
	OFFSET(CODETAG_LINENO, codetag, lineno);
	OFFSET(CODETAG_MODNAME, codetag, modname);
	OFFSET(CODETAG_FUNCTION, codetag, function);
	OFFSET(CODETAG_FILENAME, codetag, filename);
#ifdef CONFIG_MEM_ALLOC_PROFILING_RUST
	OFFSET(CODETAG_INDEX, codetag, index);
#endif

	SIZE(ALLOC_TAG_SIZE, alloc_tag);
	OFFSET(ALLOC_TAG_CT, alloc_tag, ct);
	OFFSET(ALLOC_TAG_COUNTERS, alloc_tag, counters);
	SIZE(ALLOC_TAG_COUNTERS_SIZE, alloc_tag_counters);
	OFFSET(ALLOC_TAG_COUNTERS_BYTES, alloc_tag_counters, bytes);
	OFFSET(ALLOC_TAG_COUNTERS_CALLS, alloc_tag_counters, calls);
#ifdef CONFIG_ALLOCTAG_WASTE
	OFFSET(ALLOC_TAG_WASTE, alloc_tag, waste);
	SIZE(WASTE_COUNTERS_SIZE, alloctag_waste_counters);
	OFFSET(WASTE_COUNTERS_ALLOCS, alloctag_waste_counters, allocs);
	OFFSET(WASTE_COUNTERS_FREES, alloctag_waste_counters, frees);
	OFFSET(WASTE_COUNTERS_BYTES, alloctag_waste_counters, bytes);
	OFFSET(WASTE_COUNTERS_REQUESTED, alloctag_waste_counters, requested);
#endif
#ifdef CONFIG_ALLOCTAG_PER_NODE
	OFFSET(CODETAG_NODE_SLOTS, codetag, node_slots);
#endif
	SIZE(CODETAG_BYTES_SIZE, codetag_bytes);
	OFFSET(CODETAG_BYTES_CT, codetag_bytes, ct);
	OFFSET(CODETAG_BYTES_BYTES, codetag_bytes, bytes);

#if defined(CONFIG_MEM_ALLOC_PROFILING_RUST) && defined(CONFIG_MODULES)
	/* Not a layout: the largest per-CPU allocation, a macro of sizes. */
	DEFINE(PCPU_MIN_UNIT_SIZE, PCPU_MIN_UNIT_SIZE);
#endif

	OFFSET(TASK_ALLOC_TAG, task_struct, alloc_tag);
	/* Read by rust/kernel/jump_label.rs where no jump entry can be emitted. */
	OFFSET(STATIC_KEY_ENABLED, static_key, enabled);
	/* Read by the jump-label test (src/tests/jump_label.rs). */
#if defined(CONFIG_JUMP_LABEL) && defined(CONFIG_HAVE_ARCH_JUMP_LABEL_RELATIVE)
	SIZE(JUMP_ENTRY_SIZE, jump_entry);
	OFFSET(JUMP_ENTRY_CODE, jump_entry, code);
	OFFSET(JUMP_ENTRY_KEY, jump_entry, key);
#endif
	/* Without modules struct module is incomplete. */
#ifdef CONFIG_MODULES
	OFFSET(MODULE_NAME, module, name);
#endif
	OFFSET(SEQ_FILE_BUF, seq_file, buf);
	OFFSET(SEQ_FILE_SIZE, seq_file, size);
	OFFSET(SEQ_FILE_COUNT, seq_file, count);
	OFFSET(SEQ_FILE_PRIVATE, seq_file, private);
	OFFSET(SEQ_FILE_LOCK, seq_file, lock);
	OFFSET(FILE_PRIVATE_DATA, file, private_data);

	SIZE(CTL_TABLE_SIZE, ctl_table);
	OFFSET(CTL_TABLE_PROCNAME, ctl_table, procname);
	OFFSET(CTL_TABLE_DATA, ctl_table, data);
	OFFSET(CTL_TABLE_MAXLEN, ctl_table, maxlen);
	OFFSET(CTL_TABLE_MODE, ctl_table, mode);
	OFFSET(CTL_TABLE_PROC_HANDLER, ctl_table, proc_handler);
	OFFSET(CTL_TABLE_POLL, ctl_table, poll);
	OFFSET(CTL_TABLE_EXTRA1, ctl_table, extra1);
	OFFSET(CTL_TABLE_EXTRA2, ctl_table, extra2);

	SIZE(FILE_OPERATIONS_SIZE, file_operations);
	OFFSET(FILE_OPERATIONS_OPEN, file_operations, open);
	OFFSET(FILE_OPERATIONS_READ, file_operations, read);
	OFFSET(FILE_OPERATIONS_WRITE, file_operations, write);
	OFFSET(FILE_OPERATIONS_LLSEEK, file_operations, llseek);
	OFFSET(FILE_OPERATIONS_RELEASE, file_operations, release);
	SIZE(PROC_OPS_SIZE, proc_ops);
	OFFSET(PROC_OPS_OPEN, proc_ops, proc_open);
	OFFSET(PROC_OPS_READ_ITER, proc_ops, proc_read_iter);
	OFFSET(PROC_OPS_LSEEK, proc_ops, proc_lseek);
	OFFSET(PROC_OPS_RELEASE, proc_ops, proc_release);
	OFFSET(PROC_OPS_IOCTL, proc_ops, proc_ioctl);
	SIZE(SEQ_OPERATIONS_SIZE, seq_operations);
	OFFSET(SEQ_OPERATIONS_START, seq_operations, start);
	OFFSET(SEQ_OPERATIONS_STOP, seq_operations, stop);
	OFFSET(SEQ_OPERATIONS_NEXT, seq_operations, next);
	OFFSET(SEQ_OPERATIONS_SHOW, seq_operations, show);

	SIZE(ALLOCINFO_TAG_DATA_SIZE, allocinfo_tag_data);
	SIZE(ALLOCINFO_GET_AT_SIZE, allocinfo_get_at);
	SIZE(ALLOCINFO_CONTENT_ID_SIZE, allocinfo_content_id);

	SIZE(CAPTURE_INFO_SIZE, alloctag_capture_info);
	OFFSET(CAPTURE_INFO_REF, alloctag_capture_info, ref);
	OFFSET(CAPTURE_INFO_TAG, alloctag_capture_info, tag);
	OFFSET(CAPTURE_INFO_OBJECT, alloctag_capture_info, object);
	OFFSET(CAPTURE_INFO_BYTES, alloctag_capture_info, bytes);
	OFFSET(CAPTURE_INFO_TIME_NS, alloctag_capture_info, time_ns);
	OFFSET(CAPTURE_INFO_PID, alloctag_capture_info, pid);
	OFFSET(CAPTURE_INFO_TGID, alloctag_capture_info, tgid);
	OFFSET(CAPTURE_INFO_COMM, alloctag_capture_info, comm);
	OFFSET(CAPTURE_INFO_CPU, alloctag_capture_info, cpu);
	OFFSET(CAPTURE_INFO_GFP, alloctag_capture_info, gfp);
	OFFSET(CAPTURE_INFO_STACK, alloctag_capture_info, stack);
	OFFSET(CAPTURE_INFO_KIND, alloctag_capture_info, kind);
	OFFSET(CAPTURE_INFO_ORDER, alloctag_capture_info, order);
	OFFSET(CAPTURE_INFO_CONTEXT, alloctag_capture_info, context);

#ifdef CONFIG_MEM_ALLOC_PROFILING_RUST
	/*
	 * What takes page->flags' bits (linux/page-flags-layout.h), for the log
	 * line that says why page tags cannot go there: the fields as
	 * NR_UNUSED_PAGEFLAG_BITS counts them (last_cpupid by its shift). That
	 * count, negative where last_cpupid did not fit, comes from
	 * alloctag_pgflags_free_bits(): these constants are unsigned.
	 */
	DEFINE(PGFLAGS_LONG, BITS_PER_LONG);
	DEFINE(PGFLAGS_FLAGS, NR_PAGEFLAGS);
	DEFINE(PGFLAGS_SECTIONS, SECTIONS_WIDTH);
	DEFINE(PGFLAGS_NODES, NODES_WIDTH);
	DEFINE(PGFLAGS_ZONES, ZONES_WIDTH);
	DEFINE(PGFLAGS_LAST_CPUPID, LAST_CPUPID_SHIFT);
	DEFINE(PGFLAGS_KASAN_TAG, KASAN_TAG_WIDTH);
	DEFINE(PGFLAGS_LRU_GEN, LRU_GEN_WIDTH);
	DEFINE(PGFLAGS_LRU_REFS, LRU_REFS_WIDTH);
#endif
#ifdef CONFIG_KUNIT
	SIZE(KUNIT_CASE_SIZE, kunit_case);
	OFFSET(KUNIT_CASE_RUN_CASE, kunit_case, run_case);
	OFFSET(KUNIT_CASE_NAME, kunit_case, name);
	SIZE(KUNIT_SUITE_SIZE, kunit_suite);
	OFFSET(KUNIT_SUITE_NAME, kunit_suite, name);
	OFFSET(KUNIT_SUITE_TEST_CASES, kunit_suite, test_cases);
	SIZE(KUNIT_LOC_SIZE, kunit_loc);
	OFFSET(KUNIT_LOC_FILE, kunit_loc, file);
	OFFSET(KUNIT_LOC_LINE, kunit_loc, line);
	SIZE(KUNIT_ASSERT_SIZE, kunit_assert);
	SIZE(KUNIT_UNARY_ASSERT_SIZE, kunit_unary_assert);
	OFFSET(KUNIT_UNARY_ASSERT_ASSERT, kunit_unary_assert, assert);
	OFFSET(KUNIT_UNARY_ASSERT_CONDITION, kunit_unary_assert, condition);
	OFFSET(KUNIT_UNARY_ASSERT_EXPECTED_TRUE, kunit_unary_assert, expected_true);
#endif
}
