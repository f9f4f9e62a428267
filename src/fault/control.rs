// SPDX-License-Identifier: GPL-2.0

//! The control file, `/sys/kernel/debug/alloctag/fail`.
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)
//!
//! debugfs, as failslab and fail_page_alloc: fault injection is a testing tool, and debugfs
//! is root's. Under lockdown the file is there, but debugfs refuses every open of it with
//! `EPERM` (its mode allows writing; [`crate::debugfs`]): once lockdown is raised no rule can
//! be armed, listed or removed but through a file opened before (debugfs checks at open).
//! Mode 0600, and writes also need `CAP_SYS_ADMIN`, as the kernel's fault-injection knobs do.
//! One command per write:
//!
//! - `add SELECTOR... [probability=P] [interval=N] [times=N] [space=N] [verbose=N] [pid=N]`
//! - `remove ID`
//! - `clear`
//!
//! A bad command fails with `EINVAL` (or `EEXIST`, `ENOSPC`), logs why, and changes nothing.
//! Reading lists each rule and its armed sites:
//!
//! ```text
//! rule 1 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=2 sites=1 unarmed=0 select=module:m func:f
//! site rule=1 injected=2 lib/m.c:42 [m] func:f
//! ```

use super::{arm, disarm, disarm_all, rule::Config, sites, MAX_RULES, RULES};
use crate::{
    codetag::{self, Selection, MAX_SELECTORS},
    debugfs::{self, single_open, Fops},
};
use core::fmt::Write;
use kernel::{c_str, prelude::*};

/// Splits `text` into words separated by blanks.
fn words(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
}

/// A parsed command.
enum Command {
    Add(Selection, Config),
    Remove(u32),
    Clear,
}

/// Parses one command; every word must be understood.
fn parse(text: &[u8]) -> Result<Command> {
    let mut it = words(text);
    match it.next() {
        Some(b"add") => {
            let mut config = Config::default();
            let mut selectors = KVec::<&[u8]>::with_capacity(MAX_SELECTORS + 1, GFP_KERNEL)?;
            for word in it {
                if word.contains(&b'=') {
                    config.set(word)?;
                } else {
                    selectors.push(word, GFP_KERNEL)?;
                }
            }
            Ok(Command::Add(
                Selection::parse(selectors.iter().copied())?,
                config,
            ))
        }
        Some(b"remove") => {
            let id = it.next().ok_or(EINVAL)?;
            let id: u32 = core::str::from_utf8(id)
                .map_err(|_| EINVAL)?
                .parse()
                .map_err(|_| EINVAL)?;
            if it.next().is_some() || id == 0 || id as usize > MAX_RULES {
                return Err(EINVAL);
            }
            Ok(Command::Remove(id))
        }
        Some(b"clear") if it.next().is_none() => Ok(Command::Clear),
        _ => Err(EINVAL),
    }
}

/// Runs one command.
fn run(text: &[u8]) -> Result {
    match parse(text)? {
        Command::Add(selection, config) => {
            let (id, matched) = arm(selection, &config)?;
            let unarmed = sites::unarmed(id as usize - 1);
            if unarmed > 0 {
                pr_warn!("fail: rule {id}: {unarmed} matching sites left unarmed: no slot left\n");
            }
            pr_info!(
                "fail: rule {id} armed: {} sites match, {} armed\n",
                matched.tags,
                matched.marked
            );
            Ok(())
        }
        Command::Remove(id) => disarm(id),
        Command::Clear => {
            disarm_all();
            Ok(())
        }
    }
}

/// Shows the rules and their sites.
fn show(w: &mut impl Write) -> core::fmt::Result {
    let registry = codetag::read();
    for (index, rule) in RULES.iter().enumerate() {
        let id = index as u32 + 1;
        let Some(selection) = registry.selection(&sites::MARKER, id) else {
            continue;
        };
        let c = rule.config();
        let mut armed = 0usize;
        sites::for_each(&registry, index, |_, _| armed += 1);
        writeln!(
            w,
            "rule {id} probability={} interval={} times={} space={} verbose={} pid={} \
             injected={} sites={armed} unarmed={} select={selection}",
            c.probability,
            c.interval,
            c.times,
            c.space,
            c.verbose,
            c.pid,
            rule.injected(),
            sites::unarmed(index),
        )?;
        let mut result = Ok(());
        sites::for_each(&registry, index, |tag, injected| {
            if result.is_ok() {
                result = writeln!(w, "site rule={id} injected={injected} {tag}");
            }
        });
        result?;
    }
    Ok(())
}

single_open!(open, show);

debugfs::command_write!(write, "fail", run);

static FOPS: Fops = Fops::seq(open, Some(write));

/// Creates `/sys/kernel/debug/alloctag/fail`. Without debugfs (not built, or booted with
/// `debugfs=off`) there is no control file, and nothing is ever armed; under lockdown there is
/// one that does not open.
pub(crate) fn register() -> Result {
    debugfs::create_file(c_str!("fail"), 0o600, &FOPS);
    Ok(())
}
