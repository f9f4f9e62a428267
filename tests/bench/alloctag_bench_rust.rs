// SPDX-License-Identifier: GPL-2.0

//! alloctag benchmark, Rust part (scripts/bench.sh, Documentation/benchmarks.rst).
//!
//! Times a Rust allocation call site with a tag of its own, `alloc_hooks!(KBox::new_uninit())`,
//! against the same allocation with no tag, `KBox::new_uninit()`, which the kernel crate's
//! helper charges to its fallback tag; the C module's `c-krealloc-64` row is the same
//! allocation (`krealloc(NULL, 64)`) from a C call site. The loop is the C module's: batches
//! of 64 objects allocated, then dropped, the clock read around each batch, in the loading task
//! (which the guest script pins to CPU 0). Prints one line per test:
//!
//! `alloctag_bench_rust: test=T ops=N ns_per_op=X.YYY alloc_ns=A.AAA free_ns=F.FFF`
//!
//! Without `CONFIG_MEM_ALLOC_PROFILING`, `alloc_hooks!` is the expression alone, so the module
//! builds in every kernel of the benchmark.

use core::{fmt, mem::MaybeUninit};
use kernel::{
    alloc::{flags::GFP_KERNEL, AllocError, KBox},
    alloc_hooks,
    prelude::*,
    time::Ktime,
};

module! {
    type: RustBench,
    name: "alloctag_bench_rust",
    author: "alloctag developers",
    description: "alloctag benchmark: Rust call sites",
    license: "GPL",
}

/// Allocations per test, as the C module's default `ops`.
const OPS: usize = 20480;
/// Objects allocated before they are dropped, as the C module's default `batch`.
const BATCH: usize = 64;

type Object = KBox<MaybeUninit<[u8; 64]>>;

/// A Rust call site with a tag of its own.
#[inline(never)]
fn alloc_tagged() -> Result<Object, AllocError> {
    alloc_hooks!(KBox::<[u8; 64]>::new_uninit(GFP_KERNEL))
}

/// A Rust call site without a tag: charged to the fallback tag of `krealloc`.
#[inline(never)]
fn alloc_untagged() -> Result<Object, AllocError> {
    KBox::<[u8; 64]>::new_uninit(GFP_KERNEL)
}

fn now() -> i64 {
    Ktime::ktime_get().to_ns()
}

/// `ns / ops` with three decimals.
struct PerOp(i64, usize);

impl fmt::Display for PerOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let milli = self.0 * 1000 / self.1 as i64;
        write!(f, "{}.{:03}", milli / 1000, milli % 1000)
    }
}

fn fill(objs: &mut [Option<Object>], alloc: fn() -> Result<Object, AllocError>) -> Result {
    for o in objs.iter_mut() {
        *o = Some(alloc()?);
    }
    Ok(())
}

fn empty(objs: &mut [Option<Object>]) {
    for o in objs.iter_mut() {
        drop(o.take());
    }
}

fn run(name: &str, alloc: fn() -> Result<Object, AllocError>) -> Result {
    let mut objs: [Option<Object>; BATCH] = [const { None }; BATCH];
    // Warm up, as the C module does.
    for _ in 0..4 {
        let r = fill(&mut objs, alloc);
        empty(&mut objs);
        r?;
    }
    let (mut alloc_ns, mut free_ns) = (0i64, 0i64);
    for _ in 0..OPS / BATCH {
        let t0 = now();
        let r = fill(&mut objs, alloc);
        let t1 = now();
        empty(&mut objs);
        let t2 = now();
        r?;
        alloc_ns += t1 - t0;
        free_ns += t2 - t1;
    }
    let ops = OPS / BATCH * BATCH;
    pr_info!(
        "test={} ops={} ns_per_op={} alloc_ns={} free_ns={}\n",
        name,
        ops,
        PerOp(alloc_ns + free_ns, ops),
        PerOp(alloc_ns, ops),
        PerOp(free_ns, ops)
    );
    Ok(())
}

struct RustBench;

impl kernel::Module for RustBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        run("rust-alloc_hooks-64", alloc_tagged)?;
        run("rust-untagged-64", alloc_untagged)?;
        pr_info!("mode=rust finished\n");
        Ok(RustBench)
    }
}
