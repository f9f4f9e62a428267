// SPDX-License-Identifier: GPL-2.0

//! A Rust module that keeps one allocation when it is unloaded, for alloctag's tests: the
//! unload warns, naming this file and line, and the kernel goes on safely.

use kernel::{alloc::flags::GFP_KERNEL, alloc::KBox, kbox, prelude::*};

module! {
    type: RustLeak,
    name: "alloctag_rust_leak",
    author: "alloctag developers",
    description: "Keeps an allocation at unload",
    license: "GPL",
}

struct RustLeak {
    kept: Option<KBox<[u8; 512]>>,
}

impl kernel::Module for RustLeak {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Self {
            kept: Some(kbox!([0u8; 512], GFP_KERNEL)?),
        })
    }
}

impl Drop for RustLeak {
    fn drop(&mut self) {
        // Deliberately leaked: the point of this module.
        if let Some(kept) = self.kept.take() {
            KBox::leak(kept);
        }
    }
}
