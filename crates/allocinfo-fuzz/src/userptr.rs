// SPDX-License-Identifier: GPL-2.0
//! User pointers the kernel must refuse or read with care: the address of
//! an unmapped page, a read-only page of zeros followed by one that no
//! access may touch, and writable bytes followed by such a page.
//!
//! Neither address may ever be mapped readable while the fuzzer runs: the
//! threads map and unmap memory all the time (and so do the allocator and
//! the thread library), and a page unmapped by one thread is the first hole
//! the kernel's top-down mmap fills for another. Then a command "from an
//! unmapped page" reads that thread's page instead, a read-only page of
//! zeros: a GET_AT at position 0 that the kernel rightly takes, and whose
//! answer it cannot write out (seed 18190237380155095618 reported it as a
//! refused GET_AT that moved GET_NEXT).

/// A page in no mapping now or later: far below where the kernel places
/// the binary, its heap and every mapping it chooses (top-down from below
/// the stack), above `vm.mmap_min_addr`. Checked by [`check_unmapped`].
const UNMAPPED: usize = 0x1000_0000;

/// The address of a page that is not mapped, and never is during the run.
pub(crate) fn unmapped() -> *const u8 {
    UNMAPPED as *const u8
}

/// Whether the page at `p` is mapped (`msync()` answers `ENOMEM` for an
/// address in no mapping).
fn is_mapped(p: *const u8) -> bool {
    // SAFETY: msync only looks the page up; `MS_ASYNC` writes nothing back.
    unsafe { libc::msync(p.cast_mut().cast(), 4096, libc::MS_ASYNC) == 0 }
}

/// Checks that [`unmapped`] is not mapped; an error message if it is.
pub(crate) fn check_unmapped() -> Result<(), String> {
    if is_mapped(unmapped()) {
        return Err(format!(
            "{UNMAPPED:#x}, the fuzzer's unmapped page, is mapped"
        ));
    }
    Ok(())
}

/// A read-only page of zeros, followed by a page that no access may touch
/// (`PROT_NONE`, kept mapped so that no other mapping takes its place): or
/// null when nothing could be mapped.
pub(crate) fn ro_page() -> *const u8 {
    // SAFETY: a fresh anonymous mapping of two pages, kept for the run: the
    // first read-only, the second inaccessible.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            2 * 4096,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return std::ptr::null();
        }
        libc::mprotect(p.cast::<u8>().add(4096).cast(), 4096, libc::PROT_NONE);
        p.cast()
    }
}

/// The end of `len` writable bytes (or more, whole pages) followed by a page
/// that no access may touch (`PROT_NONE`, kept mapped as [`ro_page`]'s): an
/// array of `len` bytes ending there fits exactly, one that starts later
/// straddles the end. Null when nothing could be mapped.
pub(crate) fn rw_before_guard(len: usize) -> *mut u8 {
    let rw = len.max(1).div_ceil(4096) * 4096;
    // SAFETY: a fresh anonymous mapping, kept for the run: `rw` bytes
    // writable, then one inaccessible page.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            rw + 4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        libc::mprotect(p.cast::<u8>().add(rw).cast(), 4096, libc::PROT_NONE);
        p.cast::<u8>().add(rw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel writes an array ending at [`rw_before_guard`]'s end, and
    /// refuses to write the page after it.
    #[test]
    fn the_guard_after_writable_bytes_refuses_writes() {
        let len = 5000;
        let end = rw_before_guard(len);
        assert!(!end.is_null());
        // SAFETY: /dev/zero opened read-only; each read writes into the
        // mapping above or into its guard page, which the kernel refuses.
        unsafe {
            let fd = libc::open(c"/dev/zero".as_ptr(), libc::O_RDONLY);
            assert!(fd >= 0);
            let start = end.sub(len);
            *start = 1;
            assert_eq!(libc::read(fd, start.cast(), len), len as isize);
            assert_eq!(*start, 0);
            assert_eq!(libc::read(fd, end.cast(), 16), -1);
            assert_eq!(crate::shared::errno(), libc::EFAULT);
            libc::close(fd);
        }
        assert!(is_mapped(end));
    }

    /// The finding of seed 18190237380155095618: other threads' mappings
    /// never land on the unmapped page, nor on the page after the read-only
    /// one.
    #[test]
    fn refused_addresses_stay_refused_while_others_map() {
        let ro = ro_page();
        assert!(!ro.is_null());
        let refused = [unmapped() as usize, ro as usize + 4096];
        check_unmapped().unwrap();
        let taken = std::thread::spawn(|| {
            (0..64)
                .map(|_| {
                    // SAFETY: an anonymous one-page mapping, kept until the
                    // end of the test.
                    let p = unsafe {
                        libc::mmap(
                            std::ptr::null_mut(),
                            4096,
                            libc::PROT_READ,
                            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                            -1,
                            0,
                        )
                    };
                    assert_ne!(p, libc::MAP_FAILED);
                    p as usize
                })
                .collect::<Vec<_>>()
        })
        .join()
        .unwrap();
        let landed: Vec<_> = taken.iter().filter(|p| refused.contains(p)).collect();
        for p in &taken {
            // SAFETY: each is a page mapped above and used no more.
            unsafe { libc::munmap(*p as *mut libc::c_void, 4096) };
        }
        assert!(
            landed.is_empty(),
            "mappings at refused addresses: {landed:x?}"
        );
        check_unmapped().unwrap();
        // SAFETY: `ro` is the read-only page mapped above; its first byte is a zero.
        assert_eq!(unsafe { *ro }, 0);
    }
}
