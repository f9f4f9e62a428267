// SPDX-License-Identifier: GPL-2.0

//! Read-write semaphores guarding Rust data.
//!
//! C header: [`include/linux/rwsem.h`](srctree/include/linux/rwsem.h)
//!
//! 6.12's `kernel` crate has no read-write lock. This one wraps a `struct rw_semaphore` that C
//! defines with `DECLARE_RWSEM()`, which gives it a lockdep class at build time, so that the
//! lock works before any initcall and needs no run-time setup.

use core::{
    cell::UnsafeCell,
    marker::PhantomData,
    ops::{Deref, DerefMut},
};
use kernel::bindings;

/// The C glue's `struct rw_semaphore`, seen from Rust only by its address: on kernels whose
/// `arch_spinlock_t` is empty (`SMP=n`) the struct is not FFI-safe by value.
#[repr(C)]
pub(crate) struct RwSemStorage {
    _opaque: [u8; 0],
}

/// Declares the `struct rw_semaphore` `$sem` that the C glue defines with `DECLARE_RWSEM()`
/// (the C macro gives it its lockdep class) and evaluates to its address; with `$data`, to a
/// [`RwSem`] that guards `$data` with it. Used in a static's initializer, inside an `unsafe`
/// block whose safety comment says that `$sem` guards nothing else.
///
/// # Safety
///
/// `$sem` must be defined with `DECLARE_RWSEM()`, and used by nothing but what this makes
/// ([`RwSem::new`]'s requirement).
macro_rules! c_rwsem {
    ($sem:ident) => {{
        extern "C" {
            // Seen as our opaque storage type: not FFI-safe by value on every configuration.
            static mut $sem: $crate::rwsem::RwSemStorage;
        }
        (&raw mut $sem).cast::<kernel::bindings::rw_semaphore>()
    }};
    ($sem:ident, $data:expr $(,)?) => {
        $crate::rwsem::RwSem::new($crate::rwsem::c_rwsem!($sem), $data)
    };
}
pub(crate) use c_rwsem;

/// A read-write semaphore and the data it guards.
///
/// # Invariants
///
/// `sem` points to an initialized `struct rw_semaphore` that lives forever and guards only
/// `data`: `data` is read only with `sem` held for reading or writing, and written only with
/// `sem` held for writing.
pub(crate) struct RwSem<T> {
    sem: *mut bindings::rw_semaphore,
    data: UnsafeCell<T>,
}

// SAFETY: Readers on several threads share `&T`, so `T: Sync`; a writer may change `T` from
// any thread, so `T: Send`.
unsafe impl<T: Send + Sync> Sync for RwSem<T> {}

impl<T> RwSem<T> {
    /// Guards `data` with `sem`.
    ///
    /// # Safety
    ///
    /// `sem` must point to a `struct rw_semaphore` defined with `DECLARE_RWSEM()` that nothing
    /// else uses.
    pub(crate) const unsafe fn new(sem: *mut bindings::rw_semaphore, data: T) -> Self {
        // INVARIANT: The caller guarantees that `sem` is initialized, static and ours alone.
        Self {
            sem,
            data: UnsafeCell::new(data),
        }
    }

    /// Takes the lock for reading; may sleep.
    pub(crate) fn read(&self) -> ReadGuard<'_, T> {
        // SAFETY: By the type invariant `sem` is initialized.
        unsafe { bindings::down_read(self.sem) };
        // INVARIANT: The lock is held for reading.
        ReadGuard {
            lock: self,
            _not_send: PhantomData,
        }
    }

    /// Takes the lock for reading if that needs no wait; never sleeps.
    pub(crate) fn try_read(&self) -> Option<ReadGuard<'_, T>> {
        // SAFETY: By the type invariant `sem` is initialized.
        if unsafe { bindings::down_read_trylock(self.sem) } == 0 {
            return None;
        }
        // INVARIANT: The lock is held for reading.
        Some(ReadGuard {
            lock: self,
            _not_send: PhantomData,
        })
    }

    /// Takes the lock for writing if that needs no wait; never sleeps.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    pub(crate) fn try_write(&self) -> Option<WriteGuard<'_, T>> {
        // SAFETY: By the type invariant `sem` is initialized.
        if unsafe { bindings::down_write_trylock(self.sem) } == 0 {
            return None;
        }
        // INVARIANT: The lock is held for writing.
        Some(WriteGuard {
            lock: self,
            _not_send: PhantomData,
        })
    }

    /// Takes the lock for writing; may sleep.
    pub(crate) fn write(&self) -> WriteGuard<'_, T> {
        // SAFETY: By the type invariant `sem` is initialized.
        unsafe { bindings::down_write(self.sem) };
        // INVARIANT: The lock is held for writing.
        WriteGuard {
            lock: self,
            _not_send: PhantomData,
        }
    }
}

/// Shared access to the data of a [`RwSem`].
///
/// Not `Send`: a semaphore is released by the task that took it (owner tracking, lockdep).
///
/// # Invariants
///
/// The guard holds `lock` for reading.
#[must_use = "the lock unlocks immediately when the guard is unused"]
pub(crate) struct ReadGuard<'a, T> {
    lock: &'a RwSem<T>,
    _not_send: PhantomData<*mut ()>,
}

impl<T> Deref for ReadGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: By the type invariant the lock is held for reading, so no one writes `data`.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> Drop for ReadGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant this guard holds the lock for reading.
        unsafe { bindings::up_read(self.lock.sem) };
    }
}

/// Exclusive access to the data of a [`RwSem`].
///
/// Not `Send`, as [`ReadGuard`].
///
/// # Invariants
///
/// The guard holds `lock` for writing.
#[must_use = "the lock unlocks immediately when the guard is unused"]
pub(crate) struct WriteGuard<'a, T> {
    lock: &'a RwSem<T>,
    _not_send: PhantomData<*mut ()>,
}

impl<T> Deref for WriteGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: By the type invariant the lock is held for writing: no one else accesses
        // `data`.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for WriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: As in `deref`, and `&mut self` makes this the only reference.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for WriteGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant this guard holds the lock for writing.
        unsafe { bindings::up_write(self.lock.sem) };
    }
}
