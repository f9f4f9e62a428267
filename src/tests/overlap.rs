// SPDX-License-Identifier: GPL-2.0

//! Evidence that the threads of a concurrency test really ran at once, on more than one CPU:
//! a test whose name says "concurrent" or "racing" proves nothing on one CPU, where its
//! threads only take turns. The threads wrap each unit of their work in [`Overlap::work`];
//! the test then checks ([`Overlap::check`]) that more than one CPU is online, that the units
//! ran on more than one of them, and that some unit ran while a thread on another CPU was
//! inside one (a thread preempted inside a unit on the same CPU does not count).
//!
//! C header: [`include/linux/cpumask.h`](srctree/include/linux/cpumask.h)

use crate::kunit::{kunit_expect, Test};
use core::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use kernel::bindings;

/// How long threads go on working while no overlap was seen: under single-threaded TCG the
/// vCPUs take turns of up to 100 ms of the host's time, so the first overlap can take several.
const PATIENCE_NS: i64 = 5_000_000_000;

/// CPUs told apart: a unit's CPU is counted modulo this.
const CPUS: usize = 64;

/// What the threads of one test share.
pub(super) struct Overlap {
    /// Threads inside a unit of work now, by the CPU each entered on (modulo [`CPUS`]).
    inside: [AtomicUsize; CPUS],
    /// Units during which a thread that entered on another CPU was inside one too.
    overlapped: AtomicUsize,
    /// Units done.
    units: AtomicUsize,
    /// The CPUs the units ran on, modulo 64.
    cpus: AtomicU64,
    /// `ktime_get()` after which [`Overlap::run`] stops waiting for an overlap.
    deadline: AtomicI64,
}

impl Overlap {
    /// Nothing seen yet.
    pub(super) const fn new() -> Self {
        Self {
            inside: [const { AtomicUsize::new(0) }; CPUS],
            overlapped: AtomicUsize::new(0),
            units: AtomicUsize::new(0),
            cpus: AtomicU64::new(0),
            deadline: AtomicI64::new(0),
        }
    }

    /// Forgets what was seen, before a test's threads start.
    pub(super) fn reset(&self) {
        for n in &self.inside {
            n.store(0, Ordering::Relaxed);
        }
        self.overlapped.store(0, Ordering::Relaxed);
        self.units.store(0, Ordering::Relaxed);
        self.cpus.store(0, Ordering::Relaxed);
        // SAFETY: Reading the clock has no precondition.
        let now = unsafe { bindings::ktime_get() };
        self.deadline.store(now + PATIENCE_NS, Ordering::Relaxed);
    }

    /// Whether the units so far show concurrency: on two CPUs, one overlapping another.
    fn seen(&self) -> bool {
        self.overlapped.load(Ordering::Relaxed) > 0
            && self.cpus.load(Ordering::Relaxed).count_ones() > 1
    }

    /// Runs `unit` as units of work ([`Overlap::work`]) at least `min_units` times, and on until
    /// concurrency was seen or [`PATIENCE_NS`] passed since [`Overlap::reset`].
    pub(super) fn run(&self, min_units: usize, mut unit: impl FnMut()) {
        let mut done = 0;
        loop {
            self.work(&mut unit);
            done += 1;
            if done < min_units {
                continue;
            }
            // SAFETY: Reading the clock has no precondition.
            let now = unsafe { bindings::ktime_get() };
            if self.seen() || now > self.deadline.load(Ordering::Relaxed) {
                break;
            }
        }
    }

    /// Whether a thread that entered on a CPU other than `cpu` is inside a unit.
    fn other_cpu_inside(&self, cpu: usize) -> bool {
        self.inside
            .iter()
            .enumerate()
            .any(|(i, n)| i != cpu && n.load(Ordering::SeqCst) > 0)
    }

    /// Runs `f`, one unit of a thread's work, and records on which CPU it started and whether
    /// a thread on another CPU was inside a unit meanwhile.
    pub(super) fn work<R>(&self, f: impl FnOnce() -> R) -> R {
        // SAFETY: Reading the current CPU has no precondition. The thread may move at once;
        // it is counted on the CPU it entered on, and leaves from that count.
        let cpu = unsafe { bindings::alloctag_test_cpu() } as usize % CPUS;
        self.cpus.fetch_or(1 << cpu, Ordering::Relaxed);
        // SeqCst: of two threads that enter at once, at least one sees the other's entry.
        self.inside[cpu].fetch_add(1, Ordering::SeqCst);
        let before = self.other_cpu_inside(cpu);
        let r = f();
        let after = self.other_cpu_inside(cpu);
        self.inside[cpu].fetch_sub(1, Ordering::SeqCst);
        if before || after {
            self.overlapped.fetch_add(1, Ordering::Relaxed);
        }
        self.units.fetch_add(1, Ordering::Relaxed);
        r
    }

    /// Expects that the test ran concurrently: more than one CPU online, units on more than
    /// one of them, and some unit overlapping another thread's.
    pub(super) fn check(&self, test: &Test) {
        // SAFETY: Reading the online count has no precondition.
        let online = unsafe { bindings::alloctag_test_online_cpus() };
        let units = self.units.load(Ordering::Relaxed);
        let overlapped = self.overlapped.load(Ordering::Relaxed);
        let cpus = self.cpus.load(Ordering::Relaxed).count_ones();
        kunit_expect!(test, online > 1, "{online} CPU online: nothing ran at once");
        kunit_expect!(test, units > 0, "no unit of work done");
        kunit_expect!(test, cpus > 1, "the {units} units ran on {cpus} CPU");
        kunit_expect!(
            test,
            overlapped > 0,
            "none of the {units} units overlapped one on another CPU"
        );
    }
}
