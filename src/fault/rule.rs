// SPDX-License-Identifier: GPL-2.0

//! One armed rule: the kernel's fault-injection knobs for the call sites of one selection.
//!
//! C header: [`include/linux/fault-inject.h`](srctree/include/linux/fault-inject.h)
//!
//! The knobs mean what they mean for failslab and fail_page_alloc
//! (Documentation/fault-injection/fault-injection.rst), evaluated in `should_fail_ex()`'s order:
//! task filter, `times`, `space`, `interval`, `probability`. Only `times` is exact under
//! concurrency here: it is decremented with a compare-and-swap, so `times=N` fails exactly N
//! allocations however many CPUs race.

use core::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};
use kernel::{bindings, prelude::*};

/// The knobs of a rule, as written to the control file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Config {
    /// Percent of the eligible allocations to fail, 0 to 100.
    pub(crate) probability: u32,
    /// Fail only every `interval`-th eligible allocation; at least 1.
    pub(crate) interval: u64,
    /// Failures left to inject; -1 for no limit.
    pub(crate) times: i64,
    /// Bytes to let through before the first failure.
    pub(crate) space: i64,
    /// 0: silent; 1: a line per failure; 2: the line and a stack dump.
    pub(crate) verbose: u32,
    /// Fail only in tasks of this thread group; 0 for any.
    pub(crate) pid: i32,
}

impl Default for Config {
    /// Every allocation at the selected sites fails, each with a line in the log.
    fn default() -> Self {
        Self {
            probability: 100,
            interval: 1,
            times: -1,
            space: 0,
            verbose: 1,
            pid: 0,
        }
    }
}

impl Config {
    /// Sets the knob named in `word` (`name=value`). Refuses unknown names and values out of
    /// range, leaving `self` unchanged.
    pub(crate) fn set(&mut self, word: &[u8]) -> Result {
        let eq = word.iter().position(|&c| c == b'=').ok_or(EINVAL)?;
        let (name, value) = (&word[..eq], &word[eq + 1..]);
        let value = core::str::from_utf8(value).map_err(|_| EINVAL)?;
        let int = |min: i64, max: i64| -> Result<i64> {
            let v: i64 = value.parse().map_err(|_| EINVAL)?;
            if v < min || v > max {
                return Err(EINVAL);
            }
            Ok(v)
        };
        match name {
            b"probability" => self.probability = int(0, 100)? as u32,
            b"interval" => self.interval = int(1, i64::MAX)? as u64,
            b"times" => self.times = int(-1, i64::MAX)?,
            b"space" => self.space = int(0, i64::MAX)?,
            b"verbose" => self.verbose = int(0, 2)? as u32,
            b"pid" => self.pid = int(0, i32::MAX.into())? as i32,
            _ => return Err(EINVAL),
        }
        Ok(())
    }
}

/// Whether a rule slot is in use.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum State {
    Free = 0,
    Armed = 1,
}

/// A rule slot: the knobs, live, and what they did.
pub(crate) struct Rule {
    state: AtomicU8,
    probability: AtomicU32,
    interval: AtomicU64,
    times: AtomicI64,
    space: AtomicI64,
    verbose: AtomicU32,
    pid: AtomicI32,
    /// Eligible allocations seen, for `interval`.
    count: AtomicU64,
    /// Failures injected.
    injected: AtomicU64,
}

impl Rule {
    /// A free slot.
    pub(crate) const fn new() -> Self {
        Self {
            state: AtomicU8::new(State::Free as u8),
            probability: AtomicU32::new(0),
            interval: AtomicU64::new(1),
            times: AtomicI64::new(0),
            space: AtomicI64::new(0),
            verbose: AtomicU32::new(0),
            pid: AtomicI32::new(0),
            count: AtomicU64::new(0),
            injected: AtomicU64::new(0),
        }
    }

    /// Returns whether the slot holds a rule.
    pub(crate) fn is_armed(&self) -> bool {
        self.state.load(Ordering::Acquire) == State::Armed as u8
    }

    /// Arms the slot with `config`. Called with the registry locked for writing.
    pub(crate) fn arm(&self, config: &Config) {
        self.probability
            .store(config.probability, Ordering::Relaxed);
        self.interval.store(config.interval, Ordering::Relaxed);
        self.times.store(config.times, Ordering::Relaxed);
        self.space.store(config.space, Ordering::Relaxed);
        self.verbose.store(config.verbose, Ordering::Relaxed);
        self.pid.store(config.pid, Ordering::Relaxed);
        self.count.store(0, Ordering::Relaxed);
        self.injected.store(0, Ordering::Relaxed);
        self.state.store(State::Armed as u8, Ordering::Release);
    }

    /// Frees the slot, once no hook can see it any more.
    pub(crate) fn free(&self) {
        self.state.store(State::Free as u8, Ordering::Release);
    }

    /// Returns the knobs as they are now: `times` is what is left.
    pub(crate) fn config(&self) -> Config {
        Config {
            probability: self.probability.load(Ordering::Relaxed),
            interval: self.interval.load(Ordering::Relaxed),
            times: self.times.load(Ordering::Relaxed),
            space: self.space.load(Ordering::Relaxed),
            verbose: self.verbose.load(Ordering::Relaxed),
            pid: self.pid.load(Ordering::Relaxed),
        }
    }

    /// Returns the failures injected.
    pub(crate) fn injected(&self) -> u64 {
        self.injected.load(Ordering::Relaxed)
    }

    /// Returns the log verbosity.
    pub(crate) fn verbose(&self) -> u32 {
        self.verbose.load(Ordering::Relaxed)
    }

    /// Decides whether an allocation of `size` bytes fails, as `should_fail_ex()` does, and
    /// counts the failure. Never sleeps; any context.
    pub(crate) fn should_fail(&self, size: usize) -> bool {
        let pid = self.pid.load(Ordering::Relaxed);
        if pid != 0 {
            // SAFETY: Reading the context has no precondition.
            if !unsafe { bindings::alloctag_in_task() } {
                return false;
            }
            // SAFETY: Reading the current task's thread group id has no precondition.
            if unsafe { bindings::alloctag_current_tgid() } != pid {
                return false;
            }
        }
        if self.times.load(Ordering::Relaxed) == 0 {
            return false;
        }
        let size = i64::try_from(size).unwrap_or(i64::MAX);
        if self.space.load(Ordering::Relaxed) > size {
            self.space.fetch_sub(size, Ordering::Relaxed);
            return false;
        }
        let interval = self.interval.load(Ordering::Relaxed);
        if interval > 1 {
            let n = self.count.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
            if n % interval != 0 {
                return false;
            }
        }
        let probability = self.probability.load(Ordering::Relaxed);
        // SAFETY: `__get_random_u32_below()` works in any context but NMI, which the hook
        // excludes.
        if probability < 100 && probability <= unsafe { bindings::__get_random_u32_below(100) } {
            return false;
        }
        let took = self
            .times
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| match t {
                -1 => Some(-1),
                0 => None,
                t => Some(t - 1),
            });
        if took.is_err() {
            return false;
        }
        self.injected.fetch_add(1, Ordering::Relaxed);
        true
    }
}
