// SPDX-License-Identifier: GPL-2.0

//! A Rust module that keeps one allocation made through the kernel crate's plain API (no
//! tagging macro) when it is unloaded, for alloctag's tests: the allocation is charged to a
//! dynamic tag made for its line, and because that tag still counts the allocation at unload,
//! the core keeps it (listed in `/proc/allocinfo` with its bytes, no longer found by lookup)
//! instead of freeing it, and the unload warns, naming this file and line.

use kernel::{alloc::flags::GFP_KERNEL, alloc::KBox, prelude::*};

module! {
    type: RustLeakPlain,
    name: "alloctag_rust_leak_plain",
    author: "alloctag developers",
    description: "Keeps a plain-API allocation at unload",
    license: "GPL",
}

struct RustLeakPlain {
    kept: Option<KBox<[u8; 384]>>,
}

impl RustLeakPlain {
    // Not inlined into `init`: the tag names this function.
    #[inline(never)]
    fn allocate() -> Result<KBox<[u8; 384]>> {
        Ok(KBox::new([0u8; 384], GFP_KERNEL)?)
    }
}

impl kernel::Module for RustLeakPlain {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Self {
            kept: Some(Self::allocate()?),
        })
    }
}

impl Drop for RustLeakPlain {
    fn drop(&mut self) {
        // Deliberately leaked: the point of this module.
        if let Some(kept) = self.kept.take() {
            KBox::leak(kept);
        }
    }
}
