//! `allocinfo fail`: the kernel's per-call-site allocation fault
//! injection. The control file's model and parser are
//! `allocinfo_format::fail`, its outputs `allocinfo_output::fail`;
//! [`control`] talks to the file.

pub mod args;
pub mod control;
