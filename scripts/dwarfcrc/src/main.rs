// SPDX-License-Identifier: GPL-2.0

//! `dwarfcrc [--describe] OBJECT... < NAMES`: a `#SYMVER NAME CRC` line for
//! each name read, one per line, from the DWARF of the objects; with
//! `--describe`, the text each CRC is taken over instead.

use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use dwarfcrc::{Error, describe, elf, index::Index};

fn run() -> Result<(), Error> {
    let mut describe_only = false;
    let mut paths = Vec::new();
    for arg in std::env::args_os().skip(1) {
        if arg == "--describe" {
            describe_only = true;
        } else {
            paths.push(PathBuf::from(arg));
        }
    }
    if paths.is_empty() {
        return Err(Error(
            "usage: dwarfcrc [--describe] OBJECT... < NAMES".into(),
        ));
    }
    let objects = paths
        .iter()
        .map(|p| elf::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let index = Index::new(&objects)?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut missing = Vec::new();
    for line in io::stdin().lock().lines() {
        let line = line.map_err(|e| Error(format!("stdin: {e}")))?;
        let name = line.trim();
        if name.is_empty() {
            continue;
        }
        let Some(loc) = index.symbol(name) else {
            missing.push(name.to_owned());
            continue;
        };
        let text = describe::symbol(&index, loc)?;
        let written = if describe_only {
            writeln!(out, "{name} {text}")
        } else {
            writeln!(out, "#SYMVER {name} 0x{:08x}", dwarfcrc::crc(&text))
        };
        written.map_err(|e| Error(format!("stdout: {e}")))?;
    }
    out.flush().map_err(|e| Error(format!("stdout: {e}")))?;
    if !missing.is_empty() {
        return Err(Error(format!(
            "no DWARF for {} symbol(s), first {}: build with debug information",
            missing.len(),
            missing[0]
        )));
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dwarfcrc: {e}");
            ExitCode::FAILURE
        }
    }
}
