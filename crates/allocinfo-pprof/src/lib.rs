//! Kernel allocation profiles in pprof's format (`profile.proto`, gzipped):
//! what `go tool pprof`, Grafana Pyroscope, Parca and Google Cloud Profiler
//! read, so that a kernel's call sites and the stacks of its live objects sit
//! next to a fleet's user-space heap profiles.
//!
//! - [`from_profile`]: one sample per call site of `/proc/allocinfo` (or the
//!   difference between two, [`delta`]), sample types `inuse_objects`/count
//!   and `inuse_space`/bytes as pprof names heap profiles, one location per
//!   call site with its function, file and line.
//! - [`from_capture`]: one sample per group of live objects (capture's `live`
//!   report) with the same stack, process and kind, the whole stack as the
//!   kernel's stack depot recorded it.
//!
//! The messages ([`proto`]) are written from the format's definition with
//! prost; [`encode`] gzips them, as pprof writes them.

pub mod proto;

mod builder;
mod capture;
mod sites;

pub use builder::{Builder, LabelValue};
pub use capture::from_capture;
pub use sites::{SiteOptions, SplitKind, delta, from_profile, from_shares};

use flate2::{Compression, write::GzEncoder};
use prost::Message;
use std::io::{Read, Write};

/// The sample types of every profile here, in this order: a sample's values
/// are its live allocations (objects) and their bytes.
pub const SAMPLE_TYPES: [(&str, &str); 2] = [("inuse_objects", "count"), ("inuse_space", "bytes")];

/// `profile` as pprof stores it: the message, gzipped.
pub fn encode(profile: &proto::Profile) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    // Writing into a Vec cannot fail.
    let _ = gz.write_all(&profile.encode_to_vec());
    gz.finish().unwrap_or_default()
}

/// Reads back what [`encode`] wrote.
pub fn decode(bytes: &[u8]) -> Result<proto::Profile, String> {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut raw)
        .map_err(|e| format!("not gzip: {e}"))?;
    proto::Profile::decode(raw.as_slice()).map_err(|e| format!("not a profile.proto message: {e}"))
}
