//! `allocinfo capture` and `allocinfo live`: the call sites whose live
//! objects the kernel records, and those objects. The files' models and
//! parsers are `allocinfo_format::capture`, their outputs
//! `allocinfo_output::capture`; [`control`] talks to the files.

pub mod args;
pub mod control;
