// SPDX-License-Identifier: GPL-2.0

//! alloctag benchmark, Rust part (scripts/bench.sh, Documentation/benchmarks.rst).
//!
//! Times a Rust allocation call site with a static tag of its own,
//! `alloc_hooks!(KBox::new_uninit())` (`rust-alloc_hooks-64`), against the same allocation
//! through the plain API, `KBox::new_uninit()` (`rust-plain-64`), which the kernel crate charges
//! to its line through a dynamic tag, found by a lookup once made; the C module's
//! `c-krealloc-64` row is the same allocation (`krealloc(NULL, 64)`) from a C call site. The
//! loop is the C module's: batches of 64 objects allocated, then dropped, the clock read around
//! each batch, in the loading task (which the guest script pins to CPU 0), then the C module's
//! `pair_ns`, one allocation at a time. Prints one line per test:
//!
//! `alloctag_bench_rust: test=T ops=N ns_per_op=X.YYY alloc_ns=A.AAA free_ns=F.FFF pair_ns=P.PPP`
//!
//! `rust-first-use-64` is the first allocation (and its free) at each of [`FIRST_USE`]'s lines,
//! which makes the line's dynamic tag (the module's dynamic tags go at unload, so every load
//! makes them again).
//!
//! It then times making one `/proc/allocinfo` line two ways, to account for what the Rust
//! core's reads cost: `fmt-line` formats it as `src/allocinfo.rs` does (`writeln!` with
//! `{:12} {:8}` and the tag's `Display`, which writes each `CStr` a character at a time) into
//! a `KVec`; `bytes-line` writes the same bytes with the core's own writer, `Out` of
//! src/allocinfo/out.rs, built in here by `#[path]` (this module is a crate of its own). Both
//! must give the same line. Prints `test=fmt-line ops=N ns_per_op=X` (one op is one line).
//!
//! Without `CONFIG_MEM_ALLOC_PROFILING`, `alloc_hooks!` is the expression alone, so the module
//! builds in every kernel of the benchmark.

use core::{
    fmt::{self, Write},
    mem::MaybeUninit,
};
use kernel::{
    alloc::{flags::GFP_KERNEL, AllocError, KBox, KVec},
    alloc_hooks, c_str,
    prelude::*,
    str::CStr,
    time::Ktime,
};

/// The Rust core's writer of `/proc/allocinfo`'s lines, which needs only `core`.
#[path = "../../src/allocinfo/out.rs"]
mod out;
use out::Out;

module! {
    type: RustBench,
    name: "alloctag_bench_rust",
    author: "alloctag developers",
    description: "alloctag benchmark: Rust call sites",
    license: "GPL",
}

/// Allocations per test, as the C module's default `ops`.
const OPS: usize = 262144;
/// Objects allocated before they are dropped, as the C module's default `batch`.
const BATCH: usize = 64;

type Object = KBox<MaybeUninit<[u8; 64]>>;

/// A Rust call site with a tag of its own.
#[inline(never)]
fn alloc_tagged() -> Result<Object, AllocError> {
    alloc_hooks!(KBox::<[u8; 64]>::new_uninit(GFP_KERNEL))
}

/// A Rust call site through the plain API: charged to this line, a dynamic tag.
#[inline(never)]
fn alloc_plain() -> Result<Object, AllocError> {
    KBox::<[u8; 64]>::new_uninit(GFP_KERNEL)
}

/// Defines a function that allocates through the plain API at the line of the macro's call:
/// each call of the macro is a call site of its own.
macro_rules! plain_site {
    ($name:ident) => {
        #[inline(never)]
        fn $name() -> Result<Object, AllocError> {
            KBox::<[u8; 64]>::new_uninit(GFP_KERNEL)
        }
    };
}
plain_site!(first0);
plain_site!(first1);
plain_site!(first2);
plain_site!(first3);
plain_site!(first4);
plain_site!(first5);
plain_site!(first6);
plain_site!(first7);
plain_site!(first8);
plain_site!(first9);
plain_site!(first10);
plain_site!(first11);
plain_site!(first12);
plain_site!(first13);
plain_site!(first14);
plain_site!(first15);

/// Call sites, each used once per load: the first use makes its tag.
const FIRST_USE: [fn() -> Result<Object, AllocError>; 16] = [
    first0, first1, first2, first3, first4, first5, first6, first7, first8, first9, first10,
    first11, first12, first13, first14, first15,
];

/// Times the first allocation and free at each of [`FIRST_USE`]'s call sites.
fn run_first_use() -> Result {
    let (mut alloc_ns, mut free_ns) = (0i64, 0i64);
    for alloc in FIRST_USE {
        let t0 = now();
        let obj = alloc();
        let t1 = now();
        drop(obj);
        let t2 = now();
        alloc_ns += t1 - t0;
        free_ns += t2 - t1;
    }
    let ops = FIRST_USE.len();
    pr_info!(
        "test=rust-first-use-64 ops={} ns_per_op={} alloc_ns={} free_ns={}\n",
        ops,
        PerOp(alloc_ns + free_ns, ops),
        PerOp(alloc_ns, ops),
        PerOp(free_ns, ops)
    );
    Ok(())
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
    // One at a time, as the C module's `pair_ns`: no batch straddles two slabs.
    let t0 = now();
    for _ in 0..ops {
        let r = fill(&mut objs[..1], alloc);
        empty(&mut objs[..1]);
        r?;
    }
    let pair_ns = now() - t0;
    pr_info!(
        "test={} ops={} ns_per_op={} alloc_ns={} free_ns={} pair_ns={}\n",
        name,
        ops,
        PerOp(alloc_ns + free_ns, ops),
        PerOp(alloc_ns, ops),
        PerOp(free_ns, ops),
        PerOp(pair_ns, ops)
    );
    Ok(())
}

/// Lines made per line-formatting test.
const LINES: usize = 16384;

/// A tag as `src/codetag/tag.rs` displays one: `file:line [module] func:name`.
struct Tag {
    file: &'static CStr,
    line: u32,
    function: &'static CStr,
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} ", self.file, self.line)?;
        write!(f, "func:{}", self.function)
    }
}

/// Appends to a line, as `src/allocinfo.rs`'s `LineWriter`.
struct LineWriter<'a>(&'a mut KVec<u8>);

impl Write for LineWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0
            .extend_from_slice(s.as_bytes(), GFP_KERNEL)
            .map_err(|_| fmt::Error)
    }
}

/// The line of `src/allocinfo.rs`'s `write_line()`: `%12lli %8llu `, the tag, ` \n`.
fn fmt_line(v: &mut KVec<u8>, bytes: i64, calls: u64, tag: &Tag) -> fmt::Result {
    writeln!(LineWriter(v), "{:12} {:8} {} ", bytes, calls, tag)
}

/// The same line, by the core's writer, into `buf`; returns its length, or `None` when it does
/// not fit.
fn bytes_line(buf: &mut [u8], bytes: i64, calls: u64, tag: &Tag) -> Option<usize> {
    let mut out = Out::new(buf);
    out.put_number(bytes < 0, bytes.unsigned_abs(), 12)?;
    out.put(b" ")?;
    out.put_number(false, calls, 8)?;
    out.put(b" ")?;
    out.put(tag.file.as_bytes())?;
    out.put(b":")?;
    out.put_number(false, tag.line.into(), 0)?;
    out.put(b" func:")?;
    out.put(tag.function.as_bytes())?;
    out.put(b" \n")?;
    Some(out.len())
}

fn run_lines() -> Result {
    // A typical line: /proc/allocinfo's average is about 70 bytes.
    let tag = Tag {
        file: c_str!("fs/kernfs/dir.c"),
        line: 624,
        function: c_str!("__kernfs_new_node"),
    };
    let mut a = KVec::with_capacity(256, GFP_KERNEL)?;
    let mut b = [0u8; 256];
    fmt_line(&mut a, 837080, 6155, &tag).map_err(|_| ENOMEM)?;
    let len = bytes_line(&mut b, 837080, 6155, &tag).ok_or(ENOMEM)?;
    if a.as_slice() != &b[..len] {
        pr_err!("fmt-line and bytes-line differ\n");
        return Err(EINVAL);
    }
    for (name, by_fmt) in [("fmt-line", true), ("bytes-line", false)] {
        let t0 = now();
        for i in 0..LINES {
            // SAFETY: Only bytes are in the vector.
            unsafe { a.set_len(0) };
            let (bytes, calls) = (core::hint::black_box(837080 + i as i64), 6155 + i as u64);
            if by_fmt {
                fmt_line(&mut a, bytes, calls, &tag).map_err(|_| ENOMEM)?;
                core::hint::black_box(&a);
            } else {
                bytes_line(&mut b, bytes, calls, &tag).ok_or(ENOMEM)?;
                core::hint::black_box(&b);
            }
        }
        let ns = now() - t0;
        pr_info!(
            "test={} ops={} ns_per_op={}\n",
            name,
            LINES,
            PerOp(ns, LINES)
        );
    }
    Ok(())
}

struct RustBench;

impl kernel::Module for RustBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        run_first_use()?;
        run("rust-alloc_hooks-64", alloc_tagged)?;
        run("rust-plain-64", alloc_plain)?;
        run_lines()?;
        pr_info!("mode=rust finished\n");
        Ok(RustBench)
    }
}
