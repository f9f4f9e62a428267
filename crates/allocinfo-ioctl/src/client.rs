//! Walking the tags that match a filter, consistently: the content id is
//! read before and after each walk, and the walk is repeated while modules
//! loaded or unloaded during it.

use crate::abi::{
    AllocinfoFilter, AllocinfoGetAt, AllocinfoGetSplit, AllocinfoSplitEntry, AllocinfoTagData,
};
use std::io;
use std::path::Path;

/// How many walks [`walk`] tries by default before giving up.
pub const DEFAULT_ATTEMPTS: u32 = 16;

/// The requests, on one open file (the kernel keeps the filter of
/// `GET_AT` there for `GET_NEXT`, and `GET_SPLIT`'s for its next).
/// [`ProcFile`] sends them to the kernel; tests use fakes.
pub trait Device {
    /// `ALLOCINFO_IOC_CONTENT_ID`.
    fn content_id(&mut self) -> io::Result<u64>;
    /// `ALLOCINFO_IOC_GET_AT`: fills `req.data`.
    fn get_at(&mut self, req: &mut AllocinfoGetAt) -> io::Result<()>;
    /// `ALLOCINFO_IOC_GET_NEXT`.
    fn get_next(&mut self, data: &mut AllocinfoTagData) -> io::Result<()>;
    /// alloctag's `ALLOCINFO_IOC_GET_SPLIT`, its shares written to
    /// `entries` (the implementation sets `req.entries`; `req.nr` is at
    /// most `entries.len()`). A device without it answers `ENOTTY`, as a
    /// mainline kernel does.
    fn get_split(
        &mut self,
        req: &mut AllocinfoGetSplit,
        entries: &mut [AllocinfoSplitEntry],
    ) -> io::Result<()> {
        let _ = (req, entries);
        Err(io::Error::from_raw_os_error(libc::ENOTTY))
    }
}

/// Why a walk failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `ENOTTY`: the kernel has no such ioctl (Linux 6.12): read the text.
    #[error("the kernel has no /proc/allocinfo ioctl (ENOTTY)")]
    Unsupported,
    /// Opening the file failed.
    #[error("opening {path}: {error}")]
    Open { path: String, error: io::Error },
    /// A request failed otherwise.
    #[error("{request}: {error}")]
    Request {
        request: &'static str,
        error: io::Error,
    },
    /// `GET_SPLIT` answered `ENOTTY`: a kernel with mainline's ioctls only.
    #[error("this kernel has no per-CPU counters to read (no ALLOCINFO_IOC_GET_SPLIT, ENOTTY)")]
    NoSplit,
    /// `GET_SPLIT` answered `EOPNOTSUPP`: the kernel does not count by this
    /// split (by node: per-node counting off, or not built).
    #[error(
        "this kernel does not count allocations per {0}: per-node counting is off \
         (alloctag.per_node=on at boot, or 1 in /proc/sys/vm/mem_profiling_per_node before \
         profiling first turns on) (EOPNOTSUPP)"
    )]
    SplitNotCounted(&'static str),
    /// Modules loaded or unloaded during every walk tried.
    #[error("the profile changed during each of {0} walks (modules loading or unloading)")]
    Unstable(u32),
}

impl Error {
    fn request(request: &'static str, source: io::Error) -> Error {
        if source.raw_os_error() == Some(libc::ENOTTY) {
            Error::Unsupported
        } else {
            Error::Request {
                request,
                error: source,
            }
        }
    }
}

/// The answers of a consistent walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walk {
    /// The matching tags, in the kernel's order.
    pub tags: Vec<AllocinfoTagData>,
    /// The content id before and after the walk.
    pub content_id: u64,
    /// Walks made: 1 unless modules loaded or unloaded during one.
    pub attempts: u32,
}

/// Repeats a request interrupted by a signal.
pub(crate) fn retry(mut f: impl FnMut() -> io::Result<()>) -> io::Result<()> {
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// `Ok(false)` for `ENOENT`: no more matching tags.
fn more(r: io::Result<()>, request: &'static str) -> Result<bool, Error> {
    match r {
        Ok(()) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(Error::request(request, e)),
    }
}

pub(crate) fn read_id(dev: &mut dyn Device) -> Result<u64, Error> {
    let mut id = 0;
    retry(|| dev.content_id().map(|v| id = v))
        .map_err(|e| Error::request("ALLOCINFO_IOC_CONTENT_ID", e))?;
    Ok(id)
}

/// Every tag matching `filter`: `GET_AT` position 0, then `GET_NEXT` until
/// `ENOENT`, between two reads of the content id; repeated, at most
/// `attempts` times, while the id changed during the walk.
pub fn walk(dev: &mut dyn Device, filter: &AllocinfoFilter, attempts: u32) -> Result<Walk, Error> {
    let attempts = attempts.max(1);
    for attempt in 1..=attempts {
        let before = read_id(dev)?;
        let mut tags = Vec::new();
        let mut req = AllocinfoGetAt::new(0, *filter);
        if more(retry(|| dev.get_at(&mut req)), "ALLOCINFO_IOC_GET_AT")? {
            tags.push(req.data);
            loop {
                let mut data = AllocinfoTagData::ZERO;
                if !more(retry(|| dev.get_next(&mut data)), "ALLOCINFO_IOC_GET_NEXT")? {
                    break;
                }
                tags.push(data);
            }
        }
        if read_id(dev)? == before {
            return Ok(Walk {
                tags,
                content_id: before,
                attempts: attempt,
            });
        }
    }
    Err(Error::Unstable(attempts))
}

/// `/proc/allocinfo` (or another path), open for the ioctls.
#[derive(Debug)]
pub struct ProcFile {
    file: std::fs::File,
}

impl ProcFile {
    /// Opens `path` read-only.
    pub fn open(path: &Path) -> Result<ProcFile, Error> {
        std::fs::File::open(path)
            .map(|file| ProcFile { file })
            .map_err(|error| Error::Open {
                path: path.display().to_string(),
                error,
            })
    }
}

/// A structure of the ABI and the one request that takes it: a request's
/// number encodes its argument's size, so each structure goes with exactly
/// its own request.
///
/// # Safety
///
/// `REQUEST` must be the request whose argument is `Self`, and every bit
/// pattern the kernel may write must be a valid `Self`. The kernel must
/// write nothing but `Self`'s bytes: a structure that points the kernel at
/// other memory (GET_SPLIT's `entries`) is not an `IoctlArg`.
#[cfg(target_os = "linux")]
unsafe trait IoctlArg {
    const REQUEST: crate::abi::Request;
}

// SAFETY: CONTENT_ID's argument is `struct allocinfo_content_id`, an integer.
#[cfg(target_os = "linux")]
unsafe impl IoctlArg for crate::abi::AllocinfoContentId {
    const REQUEST: crate::abi::Request = crate::abi::ALLOCINFO_IOC_CONTENT_ID;
}

// SAFETY: GET_AT's argument is `struct allocinfo_get_at`: integers and byte arrays.
#[cfg(target_os = "linux")]
unsafe impl IoctlArg for AllocinfoGetAt {
    const REQUEST: crate::abi::Request = crate::abi::ALLOCINFO_IOC_GET_AT;
}

// SAFETY: GET_NEXT's argument is `struct allocinfo_tag_data`: integers and byte arrays.
#[cfg(target_os = "linux")]
unsafe impl IoctlArg for AllocinfoTagData {
    const REQUEST: crate::abi::Request = crate::abi::ALLOCINFO_IOC_GET_NEXT;
}

#[cfg(target_os = "linux")]
impl ProcFile {
    /// ioctl(2) of `T`'s request with a pointer to `arg`.
    fn ioctl<T: IoctlArg>(&self, arg: &mut T) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: `arg` is a live, exclusively borrowed value of the structure
        // that `T::REQUEST` takes, and the kernel writes only its bytes, any
        // of which make a valid `T` (`IoctlArg`'s contract).
        let rc = unsafe { libc::ioctl(self.file.as_raw_fd(), T::REQUEST, arg as *mut T) };
        rc_result(rc)
    }
}

/// ioctl(2)'s result: the error it set when it returned -1.
#[cfg(target_os = "linux")]
fn rc_result(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(target_os = "linux")]
impl Device for ProcFile {
    fn content_id(&mut self) -> io::Result<u64> {
        let mut id = crate::abi::AllocinfoContentId::default();
        self.ioctl(&mut id)?;
        Ok(id.id)
    }

    fn get_at(&mut self, req: &mut AllocinfoGetAt) -> io::Result<()> {
        self.ioctl(req)
    }

    fn get_next(&mut self, data: &mut AllocinfoTagData) -> io::Result<()> {
        self.ioctl(data)
    }

    fn get_split(
        &mut self,
        req: &mut AllocinfoGetSplit,
        entries: &mut [AllocinfoSplitEntry],
    ) -> io::Result<()> {
        // The kernel writes `nr` entries at `entries`: never more than the
        // buffer holds.
        if req.nr as usize > entries.len() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        req.entries = entries.as_mut_ptr() as u64;
        use std::os::fd::AsRawFd;
        let request = crate::abi::ALLOCINFO_IOC_GET_SPLIT;
        let fd = self.file.as_raw_fd();
        let arg = req as *mut AllocinfoGetSplit;
        // The kernel writes `*req` (integers and bytes, any of which are
        // valid) and at most `req.nr` entries at `req.entries`, `entries`:
        // exclusively borrowed, and at least that long (checked above).
        // SAFETY: `arg` and `entries` are live and exclusively borrowed, as said.
        let rc = unsafe { libc::ioctl(fd, request, arg) };
        rc_result(rc)
    }
}

/// Elsewhere there is no such kernel: every request fails with `ENOTTY`.
#[cfg(not(target_os = "linux"))]
impl Device for ProcFile {
    fn content_id(&mut self) -> io::Result<u64> {
        Err(io::Error::from_raw_os_error(libc::ENOTTY))
    }

    fn get_at(&mut self, _: &mut AllocinfoGetAt) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::ENOTTY))
    }

    fn get_next(&mut self, _: &mut AllocinfoTagData) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::ENOTTY))
    }
}
