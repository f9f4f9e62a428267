// SPDX-License-Identifier: GPL-2.0

//! Per-CPU variables.
//!
//! C headers: [`include/linux/percpu-defs.h`](srctree/include/linux/percpu-defs.h),
//! [`include/linux/cpumask.h`](srctree/include/linux/cpumask.h)
//!
//! Only what reading per-CPU counters needs: the address of one CPU's instance of a `__percpu`
//! variable, as `per_cpu_ptr()` and `for_each_possible_cpu()` compute it in C, for each possible
//! CPU or only for those that have run ([`for_each_counting_cpu`]).
//!
//! A machine may have many more possible CPUs than ever come up (a VM sized for hot-added
//! vCPUs: `possible_cpus=224` with 4 online), and a read of every tag's counters summed each
//! possible CPU's instance, as 6.12's C core does. An instance is written only by its own CPU
//! (`this_cpu_add()`), and `alloc_percpu()` zeroes every one, so a CPU that has never run holds
//! zeros: summing the CPUs that have run gives the same sum for a fraction of the reads.

#[cfg(CONFIG_SMP)]
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::bindings;

/// Bits in a word of a CPU mask.
const BITS: usize = usize::BITS as usize;

/// Returns word `i` of `cpu_possible_mask`.
fn possible_word(i: usize) -> usize {
    // SAFETY: `__cpu_possible_mask` is set up before any initcall runs and only grows, by
    // whole words that are never torn; reading one word of it is what `cpumask_test_cpu()` does.
    // `i < BITS_TO_LONGS(nr_cpu_ids)`, within the mask (callers).
    unsafe { bindings::__cpu_possible_mask.bits[i] }
}

/// Returns word `i` of the mask of CPUs that have run since boot (`cpus_booted_once_mask`: the
/// boot CPU from `boot_cpu_hotplug_init()`, early in `start_kernel()`, and each other CPU from
/// `notify_cpu_starting()`, as it comes up the first time; never cleared). A CPU that comes up
/// allocates before its bit is set only in the few steps of its bring-up that precede it, and
/// those counts show as soon as the bit is.
#[cfg(CONFIG_SMP)]
fn counting_word(i: usize) -> usize {
    // SAFETY: Bits are only ever set, with `set_bit()`, which never tears a word; reading one
    // word is what `cpumask_test_cpu()` does. `i` is within the mask, as above.
    let word = unsafe { AtomicUsize::from_ptr(&raw mut bindings::cpus_booted_once_mask.bits[i]) }
        .load(Ordering::Relaxed);
    // Only possible CPUs have instances.
    word & possible_word(i)
}

/// Without SMP the one CPU is the one that runs.
#[cfg(not(CONFIG_SMP))]
fn counting_word(i: usize) -> usize {
    possible_word(i)
}

/// Returns the number of CPU ids, the bound of every CPU mask.
#[cfg(not(any(CONFIG_NR_CPUS = "1", CONFIG_FORCE_NR_CPUS)))]
pub(crate) fn nr_cpu_ids() -> usize {
    // SAFETY: `nr_cpu_ids` is fixed during early boot, before any of our code runs.
    unsafe { bindings::nr_cpu_ids as usize }
}

/// Returns the number of CPU ids: `NR_CPUS`, a constant in C when it is 1 or forced.
#[cfg(any(CONFIG_NR_CPUS = "1", CONFIG_FORCE_NR_CPUS))]
pub(crate) fn nr_cpu_ids() -> usize {
    bindings::CONFIG_NR_CPUS as usize
}

/// Returns the offset from a `__percpu` address to `cpu`'s instance.
#[cfg(CONFIG_SMP)]
fn per_cpu_offset(cpu: usize) -> usize {
    // SAFETY: `cpu < nr_cpu_ids <= NR_CPUS`, the length of `__per_cpu_offset`, which is fixed
    // during early boot, when the per-CPU areas are set up.
    unsafe { bindings::__per_cpu_offset[cpu] }
}

/// Returns the offset from a `__percpu` address to `cpu`'s instance: without SMP the one
/// instance is the variable itself (include/asm-generic/percpu.h).
#[cfg(not(CONFIG_SMP))]
fn per_cpu_offset(_cpu: usize) -> usize {
    0
}

/// Calls `f` with each CPU whose bit `word` sets and the address of its instance of `ptr`.
fn for_each_cpu_in<T>(ptr: *const T, word: fn(usize) -> usize, mut f: impl FnMut(usize, *const T)) {
    let ids = nr_cpu_ids();
    for i in 0..ids.div_ceil(BITS) {
        let mut bits = word(i);
        while bits != 0 {
            let cpu = i * BITS + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if cpu < ids {
                f(cpu, ptr.wrapping_byte_add(per_cpu_offset(cpu)));
            }
        }
    }
}

/// Calls `f` with the address of each possible CPU's instance of the per-CPU variable `ptr`.
///
/// # Safety
///
/// `ptr` must be a `__percpu` address (of a `DEFINE_PER_CPU` variable, a `.data..percpu` static
/// or an `alloc_percpu()` area) of a `T`.
#[cfg_attr(not(CONFIG_ALLOCTAG_WASTE), allow(dead_code))]
pub(crate) unsafe fn for_each_possible_cpu<T>(ptr: *const T, mut f: impl FnMut(*const T)) {
    for_each_cpu_in(ptr, possible_word, |_, p| f(p))
}

/// Calls `f` with the address of the instance of the per-CPU variable `ptr` of each CPU that
/// has run since boot. The others' instances are as `alloc_percpu()` (or the per-CPU area's
/// initial copy) made them: a reader of counters that only their own CPU writes (`this_cpu_*`)
/// and that start at zero misses nothing.
///
/// # Safety
///
/// As [`for_each_possible_cpu`].
pub(crate) unsafe fn for_each_counting_cpu<T>(ptr: *const T, mut f: impl FnMut(*const T)) {
    for_each_cpu_in(ptr, counting_word, |_, p| f(p))
}

/// As [`for_each_counting_cpu`], with each CPU's id: the per-CPU view of counters.
///
/// # Safety
///
/// As [`for_each_possible_cpu`].
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) unsafe fn for_each_counting_cpu_id<T>(ptr: *const T, f: impl FnMut(usize, *const T)) {
    for_each_cpu_in(ptr, counting_word, f)
}

/// Returns the address of `cpu`'s instance of the per-CPU variable `ptr` if `cpu` has run since
/// boot ([`for_each_counting_cpu`]); `None` for another CPU, whose instance holds zeros, or is
/// not there.
///
/// # Safety
///
/// As [`for_each_possible_cpu`].
#[cfg(CONFIG_MEM_ALLOC_PROFILING_RUST)]
pub(crate) unsafe fn on_counting_cpu<T>(ptr: *const T, cpu: usize) -> Option<*const T> {
    if cpu >= nr_cpu_ids() || counting_word(cpu / BITS) & (1 << (cpu % BITS)) == 0 {
        return None;
    }
    Some(ptr.wrapping_byte_add(per_cpu_offset(cpu)))
}
