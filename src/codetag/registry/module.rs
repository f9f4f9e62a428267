// SPDX-License-Identifier: GPL-2.0

//! The module loader's side of the registry: finding a module's (or vmlinux's) tags by their
//! section's symbols, the calls the loader makes at load and unload, and what the registry does
//! for them: listing a loading module's tags, keeping an unloading module's while they are in
//! use (the reaper that frees them later is in `reap`).
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)

#[cfg(CONFIG_ALLOCTAG_SELECTION)]
use super::selections;
use super::{area, names, Codetag, Range, Registry, TagIndex, TypeEntry, REGISTRY};
#[cfg(CONFIG_MODULES)]
use core::ffi::c_void;
use kernel::{alloc::flags::GFP_KERNEL, bindings, c_str, prelude::*, str::CStr};

/// The longest symbol name [`find_range`] looks up, with its NUL.
const SYMBOL_MAX: usize = 64;

/// Writes `prefix` and `section` into `buf` as a NUL-terminated string.
fn symbol_name<'a>(
    buf: &'a mut [u8; SYMBOL_MAX],
    prefix: &str,
    section: &CStr,
) -> Result<&'a [u8]> {
    let (prefix, section) = (prefix.as_bytes(), section.as_bytes());
    let len = prefix.len() + section.len();
    if len >= SYMBOL_MAX {
        return Err(EINVAL);
    }
    buf[..prefix.len()].copy_from_slice(prefix);
    buf[prefix.len()..len].copy_from_slice(section);
    buf[len] = 0;
    Ok(&buf[..=len])
}

/// Returns `module`'s (or vmlinux's, when null) range of the tags in `section`: `Ok(None)` when
/// it has none. Allocates nothing, so that module unload can call it.
///
/// # Safety
///
/// `module` must be null or point to a module that the loader keeps alive across the call.
pub(super) unsafe fn find_range(
    module: *mut bindings::module,
    section: &CStr,
    tag_size: usize,
) -> Result<Option<(*const u8, *const u8)>> {
    let mut buf = [0u8; SYMBOL_MAX];
    let mut find = |prefix: &str| -> Result<*const u8> {
        let name = symbol_name(&mut buf, prefix, section)?;
        // SAFETY: `name` is NUL-terminated; the caller guarantees `module`.
        Ok(unsafe { bindings::alloctag_find_symbol(module, name.as_ptr().cast()) } as *const u8)
    };
    let (start, stop) = (find("__start_")?, find("__stop_")?);
    if start.is_null() || stop.is_null() {
        return Err(ENOENT);
    }
    let whole_tags = (stop as usize)
        .checked_sub(start as usize)
        .and_then(|size| size.checked_rem(tag_size))
        == Some(0);
    if !whole_tags {
        return Err(EINVAL);
    }
    Ok((start != stop).then_some((start, stop)))
}

/// Returns `module`'s tags of type `T`, found by their section's symbols, whether or not the
/// registry lists them: for a type's own bookkeeping of a module that is not yet (or no longer)
/// listed. `None` where it has none, or its section is not a whole number of tags.
///
/// # Safety
///
/// `module` must point to a module whose memory lives for `'a`.
#[cfg(CONFIG_MODULES)]
pub(crate) unsafe fn section_tags<'a, T: super::TagType>(
    module: *mut bindings::module,
) -> Option<&'a [T::Tag]> {
    let size = core::mem::size_of::<T::Tag>();
    // SAFETY: The caller guarantees `module`.
    let (start, stop) = unsafe { find_range(module, T::SECTION, size) }.ok()??;
    let len = (stop as usize - start as usize) / size;
    // SAFETY: `find_range` checked that `start..stop` is a whole number of tags, which by
    // `TagType`'s safety requirement are `T::Tag`s, in the module's memory, alive for `'a`.
    Some(unsafe { core::slice::from_raw_parts(start.cast(), len) })
}

/// Waits for every pending `kvfree_rcu()`; may sleep.
#[cfg(CONFIG_TREE_RCU)]
pub(crate) fn kvfree_rcu_barrier() {
    // SAFETY: Called in process context.
    unsafe { bindings::kvfree_rcu_barrier() };
}

/// Waits for every pending `kvfree_rcu()`; may sleep. Tiny RCU's `kvfree_rcu_barrier()` is
/// this inline wrapper.
#[cfg(not(CONFIG_TREE_RCU))]
pub(crate) fn kvfree_rcu_barrier() {
    // SAFETY: Called in process context.
    unsafe { bindings::rcu_barrier() };
}

/// Adds the code tags of `module`, which has just been loaded.
///
/// Called by the module loader (kernel/module/main.c).
///
/// # Safety
///
/// `module` must be null or a module being loaded, which lives until
/// [`codetag_unload_module`] is called for it.
#[no_mangle]
pub(crate) unsafe extern "C" fn codetag_load_module(module: *mut bindings::module) {
    if !module.is_null() {
        // SAFETY: The caller guarantees `module`.
        unsafe { REGISTRY.write().load_module(module) };
    }
}

/// Drops the code tags of `module`, which is going away. Returns whether its memory may be
/// freed: its tags are unused, or kept apart from it (in their area, with copies of their
/// names), listed until their allocations are freed. `false` where they could not be: the
/// loader then keeps the module's memory for good, as 6.12 does.
///
/// Called by the module loader (kernel/module/main.c).
///
/// # Safety
///
/// `module` must be null or a module that the loader is freeing, alive across the call.
#[no_mangle]
pub(crate) unsafe extern "C" fn codetag_unload_module(module: *mut bindings::module) -> bool {
    if module.is_null() {
        return true;
    }
    // No tag goes while a deselection flushes outside the registry's lock.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    let _no_flush = selections::no_flush();
    // Let the module's pending kfree_rcu() frees happen before its tags are checked.
    kvfree_rcu_barrier();
    // SAFETY: The caller guarantees `module`; when this returns `false` the loader keeps its
    // memory for good.
    #[cfg_attr(not(CONFIG_MODULES), allow(unused_variables))]
    let unloaded = unsafe { REGISTRY.write().unload_module(module, true) };
    #[cfg(CONFIG_MODULES)]
    if unloaded.kept {
        // SAFETY: Queues the glue's static delayed work; process context.
        unsafe { bindings::alloctag_reap_later() };
    }
    unloaded.memory_free
}

/// Returns whether the loader places `module`'s section `name` of `size` bytes with
/// [`codetag_alloc_module_section`]: the section of a registered tag type's tags.
///
/// Called by the module loader (kernel/module/main.c), as it lays out the module.
///
/// # Safety
///
/// `name` must be a NUL-terminated string.
#[cfg(CONFIG_MODULES)]
#[no_mangle]
pub(crate) unsafe extern "C" fn codetag_module_section(
    _module: *mut bindings::module,
    name: *const u8,
    size: usize,
) -> bool {
    // SAFETY: The caller guarantees `name`.
    let name = unsafe { CStr::from_char_ptr(name) };
    size > 0 && REGISTRY.read().section_type(name).is_some()
}

/// Returns memory for a loading module's section `name` of `size` bytes aligned to `align`,
/// apart from the module's, or null (no memory): its tags can outlive the module.
///
/// Called by the module loader (kernel/module/main.c), in `move_module()`, for the sections
/// [`codetag_module_section`] names.
///
/// # Safety
///
/// `name` must be a NUL-terminated string. The memory is the loader's until
/// [`codetag_load_module`] or [`codetag_free_module_section`].
#[cfg(CONFIG_MODULES)]
#[no_mangle]
pub(crate) unsafe extern "C" fn codetag_alloc_module_section(
    _module: *mut bindings::module,
    name: *const u8,
    size: usize,
    align: usize,
) -> *mut c_void {
    // SAFETY: The caller guarantees `name`.
    let name = unsafe { CStr::from_char_ptr(name) };
    let mut registry = REGISTRY.write();
    let Some(ty) = registry.section_type(name) else {
        return core::ptr::null_mut();
    };
    registry
        .areas
        .alloc(size, align, ty)
        .map_or(core::ptr::null_mut(), |p| p.cast())
}

/// Gives up the memory at `addr` that [`codetag_alloc_module_section`] gave a module whose load
/// failed before [`codetag_load_module`]: the reaper frees it once its tags read unused twice;
/// nothing where the registry took it.
///
/// Called by the module loader (kernel/module/main.c).
///
/// # Safety
///
/// No code of the module whose load failed runs any more.
#[cfg(CONFIG_MODULES)]
#[no_mangle]
pub(crate) unsafe extern "C" fn codetag_free_module_section(addr: *mut c_void) {
    // Let the module's pending kfree_rcu() frees happen before its tags are checked.
    kvfree_rcu_barrier();
    let orphaned = REGISTRY
        .write()
        .free_loader_section(addr.cast_const().cast());
    if orphaned {
        // SAFETY: Queues the glue's static delayed work; process context.
        unsafe { bindings::alloctag_reap_later() };
    }
}

#[cfg(CONFIG_MODULES)]
c_declared!(codetag_load_module);
#[cfg(CONFIG_MODULES)]
c_declared!(codetag_unload_module);
#[cfg(CONFIG_MODULES)]
c_declared!(codetag_module_section);
#[cfg(CONFIG_MODULES)]
c_declared!(codetag_alloc_module_section);
#[cfg(CONFIG_MODULES)]
c_declared!(codetag_free_module_section);

/// Gives a loading module's tags of `ty` a block of `index`'s indices; where none is left,
/// tells the type, and the log.
///
/// # Safety
///
/// `module` must point to the module being loaded, whose tags `range` are.
unsafe fn index_module(
    index: &TagIndex,
    ty: &TypeEntry,
    range: &Range,
    module: *mut bindings::module,
) {
    // SAFETY: The caller guarantees the module, whose section `range` holds tags of `tag_size`
    // bytes, each beginning with a `struct codetag`; they stay until the range is dropped, which
    // removes the segment first or keeps the module's memory.
    match unsafe { index.add(range.start, range.len(ty.tag_size), ty.tag_size) } {
        Ok(_) | Err(ENODEV) => {}
        Err(e) => {
            pr_warn!(
                "module {}: no index for its {} code tags of type {} ({:?}): they are not \
                 counted where an index must name them\n",
                // SAFETY: The module is being loaded.
                unsafe { names::name(module) },
                range.len(ty.tag_size),
                ty.section,
                e
            );
            (ty.not_indexed)(range);
        }
    }
}

/// What [`Registry::unload_module`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Unloaded {
    /// The module's memory may be freed: its tags are unused, or apart from it (in their area,
    /// with copies of their names).
    pub(super) memory_free: bool,
    /// The registry keeps tags for an unloaded module: the reaper must run.
    pub(super) kept: bool,
}

impl Registry {
    /// Adds `module`'s tags of every type. A range that cannot be added (no memory) is not
    /// listed, and [`Registry::unload_module`] still finds it.
    ///
    /// # Safety
    ///
    /// `module` must point to a module being loaded, which lives until
    /// [`Registry::unload_module`] is called for it.
    // The type's index is only needed by selections.
    #[cfg_attr(not(CONFIG_ALLOCTAG_SELECTION), allow(unused_variables))]
    unsafe fn load_module(&mut self, module: *mut bindings::module) {
        let id = self.next_module_id;
        self.next_module_id += 1;
        for (index, ty) in self.types.iter_mut().enumerate() {
            // SAFETY: The caller guarantees `module`.
            let range = match unsafe { find_range(module, ty.section, ty.tag_size) } {
                Ok(Some((start, stop))) => Range {
                    id,
                    module,
                    // SAFETY: The caller guarantees `module`.
                    name: unsafe { names::ModuleName::of(module) },
                    start,
                    stop,
                    // The loader placed the section where `codetag_alloc_module_section` said;
                    // taken back if the range cannot be listed.
                    area: self.areas.take(start),
                    names: names::Names::NONE,
                    gone: false,
                    unused_once: false,
                },
                Ok(None) => continue,
                Err(e) => {
                    pr_warn!(
                        "Failed to load code tags of type {} from the module {}: {:?}\n",
                        ty.section,
                        // SAFETY: The caller guarantees `module`.
                        unsafe { names::name(module) },
                        e
                    );
                    continue;
                }
            };
            // INVARIANT: The tags live until `unload_module` or `reap` drop the range: in an
            // area, or in the module's memory, which the loader keeps while they are needed.
            if ty.ranges.push(range, GFP_KERNEL).is_ok() {
                ty.generation = ty.generation.wrapping_add(1);
                if let Some(index) = ty.index {
                    // SAFETY: The caller guarantees `module`, whose tags `range` are.
                    unsafe { index_module(index, ty, &range, module) };
                }
                (ty.loaded)(&range);
                // A selection in force also selects the new module's matching tags.
                #[cfg(CONFIG_ALLOCTAG_SELECTION)]
                selections::module_loaded(&self.selections, index, &range, ty.tag_size);
            } else {
                // Unlisted: the unload checks them still.
                if range.area {
                    self.areas.hand_over(
                        range.start,
                        area::Owner::Range,
                        area::Owner::Unlisted(module),
                    );
                }
                pr_warn!(
                    "Failed to list code tags of type {} of the module {}: {:?}\n",
                    ty.section,
                    // SAFETY: The caller guarantees `module`.
                    unsafe { names::name(module) },
                    ENOMEM
                );
            }
        }
    }

    /// Keeps `module`'s tags of every type, marked unloaded, until [`Registry::reap`] finds them
    /// unused at two passes in a row, this read being the first; only tags that read in use
    /// stay listed meanwhile.
    ///
    /// With `lookup`, tags of the module that the registry could not list at load (no memory)
    /// are orphaned, with their counters, until the reaper finds them unused twice; in use,
    /// the module's memory stays for good (their names are in it).
    ///
    /// # Safety
    ///
    /// `module` must point to a module that lives across the call; with `lookup`, one the
    /// module loader is unloading. Where [`Unloaded::memory_free`] is `false` the module's
    /// memory must stay for good.
    pub(super) unsafe fn unload_module(
        &mut self,
        module: *mut bindings::module,
        lookup: bool,
    ) -> Unloaded {
        let listed = |r: &Range| r.module == module && !r.gone;
        let mut unload_ok = true;
        // Tags that stay in the module's memory, which must then stay too.
        let mut in_module = false;
        for ty in self.types.iter() {
            if let Some(range) = ty.ranges.iter().find(|r| listed(r)) {
                unload_ok &= (ty.unload)(range, true);
            }
        }
        // Orphaned extents of the module wait for the reaper.
        let mut orphaned = false;
        if lookup {
            // Each leaves `unlisted` as it is orphaned.
            loop {
                let Some(placed) = self.areas.unlisted(module).next() else {
                    break;
                };
                let from = area::Owner::Unlisted(module);
                // SAFETY: The caller guarantees `module`; the extent's tags live.
                let unused = unsafe { self.free_unlisted(module, placed, from, true) };
                unload_ok &= unused;
                in_module |= !unused;
                orphaned = true;
            }
        }
        let mut kept = orphaned;
        for index in 0..self.types.len() {
            let ty = &mut self.types[index];
            let Some(i) = ty.ranges.iter().position(&listed) else {
                continue;
            };
            if unload_ok && !ty.ranges[i].area {
                // Tags in the module's own memory, which the loader frees when this returns:
                // the loader places a module's tags in an area once their type is registered
                // (at boot, before any module loads), so only the tests' stand-ins.
                (ty.free)(&ty.ranges[i]);
                self.drop_range(index, i);
                continue;
            }
            // Kept, even when its tags read unused: one sum read while a free is between its
            // `bytes` and `calls` updates can read zero, so the reaper frees them at its next
            // pass that finds them unused again, this read being the first (`unused_once`).
            // Listed for its live allocations, whose frees still count into it, and with its
            // selections' marks, which go when it does (capture's records of its objects stay
            // listed meanwhile). Its code is gone: no new allocation is charged to it.
            let tag_size = ty.tag_size;
            let range = &mut ty.ranges[i];
            range.gone = true;
            range.unused_once = unload_ok;
            for ct in range.codetags(tag_size) {
                ct.mark_unloaded();
            }
            // Unused, its tags can never be charged again nor leave a record: their selection
            // marks go now, as they did when such a module's tags went at unload.
            #[cfg(CONFIG_ALLOCTAG_SELECTION)]
            if unload_ok {
                selections::module_going(&self.selections, index, range, tag_size);
            }
            (ty.drop_unused)(range);
            // The tags stay where they are, in their area; their names, in the module's
            // read-only data, are copied out.
            let copied = if range.area {
                // SAFETY: The registry is locked for writing (`&mut self`) and the module is
                // going (the caller's loader unloads it).
                Some(unsafe { names::Names::copy(range.codetags(tag_size)) })
            } else {
                None
            };
            match copied {
                Some(Ok(copies)) => range.names = copies,
                Some(Err(_)) => {
                    pr_warn!(
                        "module {}: no memory to copy its kept tags' names: its memory stays\n",
                        range.name.as_cstr()
                    );
                    in_module = true;
                }
                None => in_module = true,
            }
            // INVARIANT: Gone: the module's pointer may be reused by another module.
            range.module = core::ptr::null_mut();
            ty.generation = ty.generation.wrapping_add(1);
            kept = true;
        }
        for (index, ty) in self.types.iter().enumerate() {
            if let Some(dynamic) = ty.dynamic {
                #[cfg(CONFIG_ALLOCTAG_SELECTION)]
                selections::dynamic_module_going(
                    &self.selections,
                    index,
                    dynamic,
                    module,
                    ty.tag_size,
                );
                #[cfg(not(CONFIG_ALLOCTAG_SELECTION))]
                let _ = index;
                kept |= dynamic.module_unload(module).kept;
            }
        }
        Unloaded {
            memory_free: unload_ok || !in_module,
            kept,
        }
    }

    /// Returns the index of the registered type whose section is `section`.
    #[cfg(CONFIG_MODULES)]
    fn section_type(&self, section: &CStr) -> Option<usize> {
        self.types
            .iter()
            .position(|ty| ty.section.as_bytes() == section.as_bytes())
    }

    /// Gives up the section at `start` that the loader placed for a module whose load failed
    /// before the registry took it: orphaned, it goes at the reaper's next check that finds its
    /// tags unused again ([`Registry::reap`]); where they are in use (an allocation made while
    /// the module's parameters were parsed, not freed), with a log line, once that allocation
    /// is freed. Returns whether the reaper must run.
    #[cfg(any(CONFIG_MODULES, CONFIG_ALLOCTAG_KUNIT_TEST))]
    pub(super) fn free_loader_section(&mut self, start: *const u8) -> bool {
        let Some((placed, area::Owner::Loader)) = self.areas.get(start) else {
            return false;
        };
        if let Some(ty) = self.types.get(placed.ty) {
            // SAFETY: As below.
            (ty.abandoned)(&unsafe { Range::unlisted(core::ptr::null_mut(), placed) });
        }
        // SAFETY: The module is not known here (null); the loader has not freed the section,
        // whose tags live across the call.
        if unsafe { self.free_unlisted(core::ptr::null_mut(), placed, area::Owner::Loader, false) }
        {
            return self.areas.get(start).is_some();
        }
        // Kept: its first tag, still in the loading module's memory, names the module.
        // SAFETY: `placed` is a whole section of tags, each starting with its `struct codetag`,
        // in memory the loader has not freed yet.
        let first = unsafe { &*placed.start.cast::<Codetag>() };
        pr_warn!(
            "code tags in use by a module whose load failed ({}): kept until freed\n",
            first.modname().unwrap_or(c_str!("?"))
        );
        true
    }
}
