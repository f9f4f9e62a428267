// SPDX-License-Identifier: GPL-2.0

//! A Rust module that allocates at call sites of its own, for alloctag's tests: while it is
//! loaded, `/proc/allocinfo` lists each of them with this file and line, `[alloctag_rust_sample]`
//! and the function.

use core::mem::MaybeUninit;
use kernel::{
    alloc::{flags::GFP_KERNEL, KBox, KVBox, KVec, VBox},
    alloc_hooks, alloc_page, kbox, kvec_push, kvec_with_capacity,
    page::Page,
    prelude::*,
};

module! {
    type: RustSample,
    name: "alloctag_rust_sample",
    author: "alloctag developers",
    description: "Allocates at call sites of its own",
    license: "GPL",
}

struct RustSample {
    _config: KBox<[u8; 1000]>,
    _table: VBox<MaybeUninit<[u64; 4096]>>,
    _buffer: KVBox<MaybeUninit<[u8; 20000]>>,
    _ids: KVec<u32>,
    _page: Page,
}

impl RustSample {
    fn allocate() -> Result<Self> {
        let config = kbox!([0u8; 1000], GFP_KERNEL)?;
        let table = alloc_hooks!(VBox::<[u64; 4096]>::new_uninit(GFP_KERNEL))?;
        let buffer = alloc_hooks!(KVBox::<[u8; 20000]>::new_uninit(GFP_KERNEL))?;
        let mut ids = kvec_with_capacity!(64, GFP_KERNEL)?;
        kvec_push!(ids, 7, GFP_KERNEL)?;
        let page = alloc_page!(GFP_KERNEL)?;
        Ok(Self {
            _config: config,
            _table: table,
            _buffer: buffer,
            _ids: ids,
            _page: page,
        })
    }
}

impl kernel::Module for RustSample {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Self::allocate()
    }
}
