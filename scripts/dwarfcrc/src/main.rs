// SPDX-License-Identifier: GPL-2.0

//! `dwarfcrc [--describe] --exports-of EXPORTER OBJECT...`: a
//! `#SYMVER NAME CRC` line for each name that EXPORTER exports (its
//! `__export_symbol_NAME` symbols), from the DWARF of the OBJECTs that define
//! them; with `--describe`, the text each CRC is taken over instead. A name
//! that no OBJECT describes is an error.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use dwarfcrc::{Error, describe, elf, index::Index};

const USAGE: &str = "usage: dwarfcrc [--describe] --exports-of EXPORTER OBJECT...";

fn run() -> Result<(), Error> {
    let mut describe_only = false;
    let mut exporter = None;
    let mut paths = Vec::new();
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--describe" {
            describe_only = true;
        } else if arg == "--exports-of" {
            exporter = Some(PathBuf::from(
                args.next().ok_or_else(|| Error(USAGE.into()))?,
            ));
        } else {
            paths.push(PathBuf::from(arg));
        }
    }
    let Some(exporter) = exporter.filter(|_| !paths.is_empty()) else {
        return Err(Error(USAGE.into()));
    };
    let names = elf::exports(&exporter)?;
    if names.is_empty() {
        return Err(Error(format!("{} exports nothing", exporter.display())));
    }
    let objects = paths
        .iter()
        .map(|p| elf::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let index = Index::new(&objects)?;
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut missing = Vec::new();
    for name in &names {
        let Some(loc) = index.symbol(name) else {
            missing.push(name.as_str());
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
    if let Some(first) = missing.first() {
        return Err(Error(format!(
            "no DWARF describes {} symbol(s), the first {first}: an alias of an identical \
             function, or an object built without full debug information",
            missing.len()
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
