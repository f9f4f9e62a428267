// SPDX-License-Identifier: GPL-2.0

//! The module loader's side of the registry: finding a module's (or vmlinux's) tags by their
//! section's symbols, and the calls the loader makes at load and unload.
//!
//! C header: [`include/linux/codetag.h`](srctree/include/linux/codetag.h)

use super::REGISTRY;
#[cfg(CONFIG_MODULES)]
use core::ffi::c_void;
use kernel::{bindings, c_str, prelude::*, str::CStr};

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

/// Returns a name for `module` in messages.
///
/// # Safety
///
/// `module` must be null or point to a module that lives for `'a`.
pub(crate) unsafe fn name<'a>(module: *mut bindings::module) -> &'a CStr {
    if module.is_null() {
        return c_str!("(built-in)");
    }
    // SAFETY: The caller guarantees that `module` lives for `'a`; its name is a NUL-terminated
    // array.
    unsafe { CStr::from_char_ptr((*module).name.as_ptr()) }
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
    let _no_flush = super::selections::no_flush();
    // Let the module's pending kfree_rcu() frees happen before its tags are checked.
    kvfree_rcu_barrier();
    // SAFETY: The caller guarantees `module`; when this returns `false` the loader keeps its
    // memory for good.
    #[cfg_attr(not(CONFIG_MODULES), allow(unused_variables))]
    let (memory_ok, kept) = unsafe { REGISTRY.write().unload_module(module, true) };
    #[cfg(CONFIG_MODULES)]
    if kept {
        // SAFETY: Queues the glue's static delayed work; process context.
        unsafe { bindings::alloctag_reap_later() };
    }
    memory_ok
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

/// Drops the tags kept for unloaded modules whose allocations are all freed, with their memory.
/// Returns 0 when no tag is kept any more, 1 when tags are kept and nothing changed (the next
/// pass may wait), 2 when something moved towards being freed (the next pass should come soon).
///
/// Called by the glue's delayed work (src/glue.c) while tags are kept.
#[cfg(CONFIG_MODULES)]
#[no_mangle]
pub(crate) extern "C" fn alloctag_codetag_reap() -> u32 {
    // No tag goes while a deselection flushes outside the registry's lock.
    #[cfg(CONFIG_ALLOCTAG_SELECTION)]
    let _no_flush = super::selections::no_flush();
    let reaped = REGISTRY.write().reap();
    match (reaped.kept, reaped.changed) {
        (false, _) => 0,
        (true, false) => 1,
        (true, true) => 2,
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
#[cfg(CONFIG_MODULES)]
c_declared!(alloctag_codetag_reap);
