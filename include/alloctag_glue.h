/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Functions shared between alloctag's Rust core and its C glue
 * (src/glue*.c, src/static_key.c): each is defined on one side and called
 * from the other.
 */
#ifndef _ALLOCTAG_GLUE_H
#define _ALLOCTAG_GLUE_H

#include <linux/alloc_tag.h>
#include <linux/jump_label.h>
#include <linux/module.h>
#include <linux/types.h>

/* In C (src/static_key.c), for Rust. */
bool alloctag_profiling_enabled(void);
void alloctag_static_key_set(struct static_key *key, bool enable);
void alloctag_tag_key_get(bool get);

/*
 * In C (src/static_key.c). alloc_tag.h declares it only where C's
 * alloc_hooks() tests it (without MEM_ALLOC_PROFILING_DEBUG); the kernel
 * crate's allocators test it in every configuration.
 */
DECLARE_STATIC_KEY_MAYBE(CONFIG_MEM_ALLOC_PROFILING_ENABLED_BY_DEFAULT, alloctag_tag_key);

/* In C (src/static_key.c), for the KUnit test of rust/kernel/jump_label.rs. */
DECLARE_STATIC_KEY_TRUE(alloctag_test_key_true);
DECLARE_STATIC_KEY_FALSE(alloctag_test_key_false);

/* In C (src/glue_test.c), for the KUnit suites. */
struct codetag;
struct page;
struct page *alloctag_test_page_of(const void *addr);
unsigned long alloctag_test_page_flags(const void *addr);
bool alloctag_test_page_owner_priv_1(const void *addr);
void alloctag_test_get_page(struct page *page);
void alloctag_test_put_page(struct page *page);
void alloctag_test_clear_page_tag_ref(struct page *page);
bool alloctag_test_page_tag(struct page *page, const struct codetag **ct);
unsigned int alloctag_test_cpu(void);
struct cred;
const struct cred *alloctag_test_drop_cap_sys_admin(void);
void alloctag_test_restore_creds(const struct cred *old);
unsigned int alloctag_test_online_cpus(void);
const struct codetag *alloctag_test_slab_object_tag(const void *obj);
int alloctag_test_page_variant(void);
bool alloctag_test_slab_plain(void);
int alloctag_test_counting(void);

/* In C (src/glue.c), for Rust. */
unsigned long alloctag_find_symbol(struct module *mod, const char *name);

/* In C (src/glue.c), for Rust's per-node counting (src/alloc_tag/node.rs). */
int alloctag_cpu_to_node(unsigned int cpu);

/* In Rust (src/alloc_tag/node.rs), for per-node counting's count (src/glue.c). */
void alloctag_node_slot_count(struct alloc_tag *tag, int nid, long bytes, long calls);

/* In C (src/glue.c), for Rust's fault injection (src/fault/) and tag index. */
void alloctag_rcu_read_lock(void);
void alloctag_rcu_read_unlock(void);

/* In C (src/glue.c), for Rust's fault injection: its log's rate limit. */
bool alloctag_fail_log_ratelimit(void);

/* In C (src/glue.c), for the control files (src/debugfs.rs): their logs' rate limits. */
bool alloctag_refused_log_ratelimit(void);
bool alloctag_oversized_log_ratelimit(void);

/* In C (src/glue_fault.c), for Rust's fault injection (src/fault/). */
bool alloctag_in_nmi(void);
bool alloctag_in_task(void);
pid_t alloctag_current_tgid(void);

/* In C (src/glue_dynamic.c), for Rust's dynamic tags (src/alloc_tag/dynamic.rs). */
void alloctag_dynamic_lock(void);
void alloctag_dynamic_unlock(void);
bool alloctag_irqs_disabled(void);
void alloctag_dynamic_select_later(void);
void alloctag_dynamic_grow_later(void);
struct module *alloctag_module_of(const void *addr, char *name, size_t len);
unsigned int alloctag_stack(unsigned long *entries, unsigned int n);
const char *alloctag_symbol(unsigned long addr, char *buf);

/* In C (src/glue_module.c), for the registry's module side: the reaper. */
void alloctag_reap_later(void);

/*
 * In C (src/glue_dynamic.c), for the kernel crate's allocators while a tag is wanted
 * (rust/kernel/alloc/allocator.rs, rust/kernel/page.rs): the _noprof
 * allocation, charged in interrupt context to the path's fallback tag; in
 * task context to the tag already current, else to the dynamic tag of the
 * Rust call site at location (a core::panic::Location), else to the
 * fallback.
 */
void *alloctag_rust_charged_krealloc(const void *p, size_t size, gfp_t flags,
				     const void *location);
void *alloctag_rust_charged_kvrealloc(const void *p, size_t size,
				      gfp_t flags, const void *location);
void *alloctag_rust_charged_vrealloc(const void *p, size_t size, gfp_t flags,
				     const void *location);
struct page *alloctag_rust_charged_alloc_pages(gfp_t gfp, unsigned int order,
					       const void *location);

/* In Rust (src/codetag/registry/module.rs), for C's reaper (src/glue_module.c). */
unsigned int alloctag_codetag_reap(void);

/* In Rust (src/alloc_tag/counters.rs), for C's module notifier (src/glue_module.c). */
int alloctag_module_counters(struct module *mod, unsigned long state);

/* In Rust (src/alloc_tag/dynamic.rs), for C (src/glue_dynamic.c). */
struct alloc_tag *alloctag_dynamic_tag(const void *location);
void alloctag_dynamic_select_work(void);
void alloctag_dynamic_grow(void);
void alloctag_dynamic_boot(void);
void alloctag_dynamic_stats(unsigned long *used, unsigned long *capacity,
			    unsigned long *overflows, unsigned long *made);

/* In C (src/glue_capture.c), for Rust's capture (src/capture/). */
unsigned long alloctag_capture_lock(void);
void alloctag_capture_unlock(unsigned long flags);
u64 alloctag_capture_now(void);
int alloctag_capture_format_kptr(char *buf, size_t size, unsigned long value);
int alloctag_capture_format_frame(char *buf, size_t size, unsigned long addr);
int alloctag_capture_locked_down(void);
gfp_t alloctag_capture_depot_gfp(gfp_t gfp);
int alloctag_capture_init(void);
bool alloctag_capture_pages_charged(unsigned long pfn, const struct codetag *ct);
void alloctag_capture_cond_resched(void);
void alloctag_capture_mems_get(void);
void alloctag_capture_mems_put(void);

/*
 * In C (src/glue_waste.c), for Rust's waste accounting (src/waste.rs): the
 * period that runs (0: off), which Rust writes.
 */
extern u32 alloctag_waste_current;
u64 alloctag_waste_now(void);

/* In Rust (src/capture/hook.rs), for the slow paths in src/glue_capture.c. */
struct alloctag_capture_info;
void alloctag_capture_insert(const struct alloctag_capture_info *info);
void alloctag_capture_busy_count(void);
void alloctag_capture_remove(const void *ref);
void alloctag_capture_split_piece(const void *head, const void *piece,
				  unsigned long pfn, unsigned long bytes,
				  u8 order);
void alloctag_capture_resize(const void *ref, unsigned long bytes, u8 order);
void alloctag_capture_shrink_record(const void *ref, unsigned int order);
void alloctag_capture_rekey(const void *from, const void *to,
			    unsigned long pfn);

/* In C (src/glue_pgflags.c), for Rust's early pages (src/alloc_tag/early.rs). */
void alloctag_page_ref_mark_empty(struct page *page);

/* In Rust (src/alloc_tag/early.rs), for page_ext's init callback (src/glue_pgflags.c). */
void alloctag_early_pages_done(void);

/* In C (src/glue_pgflags.c), for Rust's page tags in page flags (src/alloc_tag/index.rs). */
int alloctag_pgflags_bits(void);
int alloctag_pgflags_free_bits(void);
void alloctag_enable_compressed(void);
bool alloctag_compressed_enabled(void);

/* In Rust (src/alloc_tag/page_ext.rs), page_ext's callbacks (src/glue_pgflags.c). */
bool alloctag_page_ext_needed(void);
bool alloctag_page_ext_needed_later(void);

/* In C (src/glue_pgflags.c), for Rust's page tags in page_ext made late. */
int alloctag_page_ext_make(void);

#endif /* _ALLOCTAG_GLUE_H */
