// SPDX-License-Identifier: GPL-2.0
//! User pointers the kernel must refuse or read with care: the address of
//! an unmapped page, and a read-only page of zeros followed by an unmapped
//! one.

/// Maps `pages` read-only pages of zeros and unmaps all but the first `keep`: the address of
/// the first, or null when nothing could be mapped.
fn map_then_unmap(pages: usize, keep: usize) -> *const u8 {
    let len = pages * 4096;
    // SAFETY: a fresh anonymous mapping of `len` bytes; only its first `keep` pages stay mapped
    // (read-only, for the run), and the rest is unmapped at once, its address kept for the
    // kernel to refuse.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return std::ptr::null();
        }
        libc::munmap(p.cast::<u8>().add(keep * 4096).cast(), len - keep * 4096);
        p.cast()
    }
}

/// The address of a page that was mapped and is not any more.
pub(crate) fn unmapped() -> *const u8 {
    map_then_unmap(1, 0)
}

/// A read-only page of zeros, followed by an unmapped one.
pub(crate) fn ro_page() -> *const u8 {
    map_then_unmap(2, 1)
}
