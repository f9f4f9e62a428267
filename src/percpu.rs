// SPDX-License-Identifier: GPL-2.0

//! Per-CPU variables.
//!
//! C headers: [`include/linux/percpu-defs.h`](srctree/include/linux/percpu-defs.h),
//! [`include/linux/cpumask.h`](srctree/include/linux/cpumask.h)
//!
//! Only what reading per-CPU counters needs: the address of one possible CPU's instance of a
//! `__percpu` variable, as `per_cpu_ptr()` and `for_each_possible_cpu()` compute it in C.

use kernel::bindings;

/// Returns whether `cpu` is in `cpu_possible_mask`.
fn cpu_possible(cpu: usize) -> bool {
    const BITS: usize = usize::BITS as usize;
    // SAFETY: `__cpu_possible_mask` is set up before any initcall runs and only grows, by
    // whole words that are never torn; reading one word of it is what `cpumask_test_cpu()` does.
    let word = unsafe { bindings::__cpu_possible_mask.bits[cpu / BITS] };
    word & (1 << (cpu % BITS)) != 0
}

/// Returns the number of CPU ids, the bound of every CPU mask.
#[cfg(not(any(CONFIG_NR_CPUS = "1", CONFIG_FORCE_NR_CPUS)))]
fn nr_cpu_ids() -> usize {
    // SAFETY: `nr_cpu_ids` is fixed during early boot, before any of our code runs.
    unsafe { bindings::nr_cpu_ids as usize }
}

/// Returns the number of CPU ids: `NR_CPUS`, a constant in C when it is 1 or forced.
#[cfg(any(CONFIG_NR_CPUS = "1", CONFIG_FORCE_NR_CPUS))]
fn nr_cpu_ids() -> usize {
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

/// Calls `f` with the address of each possible CPU's instance of the per-CPU variable `ptr`.
///
/// # Safety
///
/// `ptr` must be a `__percpu` address (of a `DEFINE_PER_CPU` variable, a `.data..percpu` static
/// or an `alloc_percpu()` area) of a `T`.
pub(crate) unsafe fn for_each_possible_cpu<T>(ptr: *const T, mut f: impl FnMut(*const T)) {
    for cpu in 0..nr_cpu_ids() {
        if cpu_possible(cpu) {
            f(ptr.wrapping_byte_add(per_cpu_offset(cpu)));
        }
    }
}
