// SPDX-License-Identifier: GPL-2.0

//! Seams for the tests: a private registry given modules and dynamic tags by hand.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)

use super::{DynamicTags, Handle, Range, Registry, TagType};
use kernel::{alloc::flags::GFP_KERNEL, bindings, prelude::*};

impl Registry {
    /// Adds `tags` as the range of `module`, as loading it would; for tests.
    ///
    /// # Safety
    ///
    /// `module` must point to a `struct module` with a NUL-terminated name that lives while
    /// the range is in the registry.
    pub(crate) unsafe fn add_test_module<T: TagType>(
        &mut self,
        handle: Handle<T>,
        module: *mut bindings::module,
        tags: &'static [T::Tag],
    ) -> Result {
        if handle.registry != self.id {
            return Err(EINVAL);
        }
        let id = self.next_module_id;
        self.next_module_id += 1;
        let ty = self.types.get_mut(handle.index).ok_or(EINVAL)?;
        let range = tags.as_ptr_range();
        // INVARIANT: `tags` is static.
        ty.ranges.push(
            Range {
                id,
                module,
                // SAFETY: The caller guarantees `module`.
                name: unsafe { super::names::ModuleName::of(module) },
                start: range.start.cast(),
                stop: range.end.cast(),
                area: false,
                names: super::names::Names::NONE,
                gone: false,
                unused_once: false,
            },
            GFP_KERNEL,
        )?;
        ty.generation = ty.generation.wrapping_add(1);
        Ok(())
    }

    /// Copies `tags` into memory of the registry's, as the loader places a module's section,
    /// and adds them there as the range of `module`; returns the copies, which live until the
    /// range goes. For tests.
    ///
    /// # Safety
    ///
    /// `module` must point to a `struct module` with a NUL-terminated name that lives while
    /// the range is in the registry; the copies must not be used once it went.
    pub(crate) unsafe fn add_test_module_in_area<T: TagType>(
        &mut self,
        handle: Handle<T>,
        module: *mut bindings::module,
        tags: &[T::Tag],
    ) -> Result<&'static [T::Tag]> {
        if handle.registry != self.id || tags.is_empty() {
            return Err(EINVAL);
        }
        let size = core::mem::size_of_val(tags);
        let dest = self
            .areas
            .alloc(size, core::mem::align_of::<T::Tag>(), handle.index)?;
        // SAFETY: `dest` is `size` bytes of the area's, aligned for `T::Tag`, apart from
        // `tags`; tags are plain data, copied as the loader copies a section.
        unsafe { core::ptr::copy_nonoverlapping(tags.as_ptr(), dest.cast::<T::Tag>(), tags.len()) };
        let id = self.next_module_id;
        self.next_module_id += 1;
        let Some(ty) = self.types.get_mut(handle.index) else {
            self.areas.free_owned(dest, super::area::Owner::Loader);
            return Err(EINVAL);
        };
        let area = self.areas.take(dest);
        // INVARIANT: The tags live in their extent, which the range owns.
        let pushed = ty.ranges.push(
            Range {
                id,
                module,
                // SAFETY: The caller guarantees `module`.
                name: unsafe { super::names::ModuleName::of(module) },
                start: dest,
                stop: dest.wrapping_add(size),
                area,
                names: super::names::Names::NONE,
                gone: false,
                unused_once: false,
            },
            GFP_KERNEL,
        );
        if pushed.is_err() {
            self.areas.free(dest);
            return Err(ENOMEM);
        }
        ty.generation = ty.generation.wrapping_add(1);
        // SAFETY: `tags.len()` tags were copied to `dest`; the caller uses them only while the
        // range lives.
        Ok(unsafe { core::slice::from_raw_parts(dest.cast(), tags.len()) })
    }

    /// Gives a section of `len` bytes aligned to `align` in the memory of modules' tags, as
    /// the loader asks for one; for tests.
    pub(crate) fn alloc_test_section(&mut self, len: usize, align: usize) -> Result<*mut u8> {
        self.areas.alloc(len, align, 0)
    }

    /// Frees the orphaned section at `start` that the reaper has not freed; for tests, which
    /// must not leak it.
    pub(crate) fn forget_test_section(&mut self, start: *mut u8) {
        if let Some((_, owner @ super::area::Owner::Orphan { .. })) = self.areas.get(start) {
            self.areas.free_owned(start, owner);
        }
    }

    /// Gives up the section at `start` that no range took, as a failed load does: it is
    /// orphaned, until [`Registry::reap`] finds its tags unused twice; for tests.
    pub(crate) fn free_test_section(&mut self, start: *mut u8) {
        self.free_loader_section(start);
    }

    /// Lists `tags` after the sections' tags of `handle`'s type, as
    /// [`Registration::add_dynamic`] does for the kernel's registry; for tests.
    ///
    /// # Safety
    ///
    /// `tags` must hold tags of `T`'s type.
    pub(crate) unsafe fn add_test_dynamic<T: TagType>(
        &mut self,
        handle: Handle<T>,
        tags: &'static dyn DynamicTags,
    ) -> Result {
        // SAFETY: The caller guarantees `tags`.
        unsafe { self.add_dynamic(handle, tags) }
    }

    /// Drops `module`'s tags, as unloading it would; for tests.
    ///
    /// # Safety
    ///
    /// `module` must be what [`Registry::add_test_module`] was given, or not in the registry.
    pub(crate) unsafe fn remove_test_module(&mut self, module: *mut bindings::module) -> bool {
        // SAFETY: The caller guarantees `module`; without lookup its symbols are not read.
        unsafe { self.unload_module(module, false) }.memory_free
    }

    /// Has the selections in force mark the dynamic tags made since the last call, as a
    /// maker's call or the work item does for the kernel's registry; for tests.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    pub(crate) fn made_test_dynamic(&self) {
        self.made_dynamic();
    }
}
