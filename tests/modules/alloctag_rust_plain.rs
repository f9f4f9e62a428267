// SPDX-License-Identifier: GPL-2.0

//! A Rust module that allocates through the kernel crate's plain APIs only, with no tagging
//! macro, for alloctag's tests: while it is loaded, `/proc/allocinfo` still lists each
//! allocation at its own line of this file, with `[alloctag_rust_plain]` and the function, and
//! the work item that `Queue::try_spawn` allocates for it at its line of
//! `rust/kernel/workqueue.rs`.

use kernel::{
    alloc::{flags::GFP_KERNEL, KBox, KVec},
    bindings, fmt,
    prelude::*,
    str::CString,
    sync::Arc,
    workqueue,
};

module! {
    type: RustPlain,
    name: "alloctag_rust_plain",
    author: "alloctag developers",
    description: "Allocates with the kernel crate's plain APIs",
    license: "GPL",
}

struct RustPlain {
    _config: KBox<[u8; 3000]>,
    _table: KVec<u64>,
    _ids: KVec<u32>,
    _shared: Arc<u64>,
    _name: CString,
}

impl RustPlain {
    // Not inlined into `init`: the tags name this function.
    #[inline(never)]
    fn allocate() -> Result<Self> {
        let config = KBox::new([0u8; 3000], GFP_KERNEL)?;
        let table = KVec::<u64>::with_capacity(700, GFP_KERNEL)?;
        let mut ids = KVec::new();
        ids.push(7u32, GFP_KERNEL)?;
        let shared = Arc::new(42u64, GFP_KERNEL)?;
        let name = CString::try_from_fmt(fmt!("alloctag-plain-{}", 1))?;
        Ok(Self {
            _config: config,
            _table: table,
            _ids: ids,
            _shared: shared,
            _name: name,
        })
    }
}

impl kernel::Module for RustPlain {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let plain = Self::allocate()?;
        // The kernel crate allocates the work item itself, at a line of its own.
        workqueue::system().try_spawn(GFP_KERNEL, || {})?;
        Ok(plain)
    }
}

impl Drop for RustPlain {
    fn drop(&mut self) {
        // The work item's code is this module's: it must have run before the module goes.
        // SAFETY: `system_wq` is set up at boot and never freed.
        unsafe { bindings::__flush_workqueue(bindings::system_wq) };
    }
}
