//! `allocinfo man`: manual pages from the command line's own definition
//! (clap_mangen), one per command as git and systemd ship them
//! (`allocinfo-top(1)`, `allocinfo-fail-add(1)`), each with its options
//! and its examples under EXAMPLES.

use crate::messages::{usage, write_stdout};
use crate::outfile;
use anyhow::{Context, Result};
use clap::{Args, Command};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ManArgs {
    /// The command whose page to print, e.g. `top` or `fail add` [default: allocinfo's own].
    #[arg(value_name = "COMMAND", num_args = 0..=2)]
    pub command: Vec<String>,
    /// Write every page into DIR (allocinfo.1, allocinfo-top.1, ...) instead.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
}

/// Prints or writes the pages of `root`, the whole command line (`Cli::command()`, passed by
/// the dispatcher so that this module need not know the command line that includes it).
pub fn run(a: ManArgs, root: Command) -> Result<()> {
    let mut root = root.disable_help_subcommand(true);
    root.build();
    if let Some(dir) = &a.dir {
        for (name, cmd) in pages(&root, "allocinfo") {
            let path = dir.join(format!("{name}.1"));
            outfile::write(&path, &page(&cmd, &name)?)?;
        }
        return Ok(());
    }
    let mut cmd = root;
    let mut name = "allocinfo".to_owned();
    for word in &a.command {
        cmd = cmd
            .find_subcommand(word)
            .cloned()
            .ok_or_else(|| usage(format!("no command {word:?} in {name}")))?;
        name = format!("{name}-{word}");
    }
    write_stdout(&page(&cmd, &name)?)
}

/// Every page: the command's and, below it, each subcommand's.
fn pages(cmd: &clap::Command, name: &str) -> Vec<(String, clap::Command)> {
    let mut out = vec![(name.to_owned(), cmd.clone())];
    for sub in cmd.get_subcommands() {
        out.extend(pages(sub, &format!("{name}-{}", sub.get_name())));
    }
    out
}

/// One page, in roff: clap_mangen's sections, the examples (the help's
/// text after the options) under EXAMPLES, and the pages of the
/// subcommands under SEE ALSO.
fn page(cmd: &clap::Command, name: &str) -> Result<Vec<u8>> {
    let cmd = cmd.clone().name(name.to_owned());
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    (|| -> std::io::Result<()> {
        man.render_title(&mut out)?;
        man.render_name_section(&mut out)?;
        man.render_synopsis_section(&mut out)?;
        man.render_description_section(&mut out)?;
        if cmd.get_arguments().any(|a| !a.is_hide_set()) {
            man.render_options_section(&mut out)?;
        }
        if cmd.has_subcommands() {
            man.render_subcommands_section(&mut out)?;
        }
        if let Some(text) = cmd.get_after_long_help().or(cmd.get_after_help()) {
            out.extend_from_slice(b".SH EXAMPLES\n.nf\n");
            for line in text.to_string().lines() {
                out.extend_from_slice(roff_line(line).as_bytes());
                out.push(b'\n');
            }
            out.extend_from_slice(b".fi\n");
        }
        let subs: Vec<String> = cmd
            .get_subcommands()
            .map(|s| format!("{name}-{}(1)", s.get_name()))
            .collect();
        if !subs.is_empty() {
            out.extend_from_slice(format!(".SH \"SEE ALSO\"\n{}\n", subs.join(", ")).as_bytes());
        }
        man.render_version_section(&mut out)
    })()
    .context(name.to_owned())?;
    Ok(out)
}

/// A line of text as roff prints it: backslashes escaped, minus signs as
/// minus signs, and a leading `.` or `'` not taken for a request.
fn roff_line(line: &str) -> String {
    let text = line.replace('\\', "\\e").replace('-', "\\-");
    if text.starts_with(['.', '\'']) {
        format!("\\&{text}")
    } else {
        text
    }
}
