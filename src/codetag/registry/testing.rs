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
                start: range.start.cast(),
                stop: range.end.cast(),
                gone: false,
                freeable: false,
                unused_once: false,
            },
            GFP_KERNEL,
        )?;
        ty.generation = ty.generation.wrapping_add(1);
        Ok(())
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
        if handle.registry != self.id {
            return Err(EINVAL);
        }
        let ty = self.types.get_mut(handle.index).ok_or(EINVAL)?;
        ty.dynamic = Some(tags);
        ty.generation = ty.generation.wrapping_add(1);
        Ok(())
    }

    /// Drops `module`'s tags, as unloading it would; for tests.
    ///
    /// # Safety
    ///
    /// `module` must be what [`Registry::add_test_module`] was given, or not in the registry.
    pub(crate) unsafe fn remove_test_module(&mut self, module: *mut bindings::module) -> bool {
        // SAFETY: The caller guarantees `module`; without lookup its symbols are not read.
        unsafe { self.unload_module(module, false) }.0
    }

    /// Has the selections in force mark the dynamic tags made since the last call, as a
    /// maker's call or the work item does for the kernel's registry; for tests.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    pub(crate) fn made_test_dynamic(&self) {
        self.made_dynamic();
    }
}
