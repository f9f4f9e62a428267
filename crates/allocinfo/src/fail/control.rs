//! `allocinfo fail`: commands to the control file and its listing.

use super::args::{FailArgs, FailCmd};
use crate::debugfs::{Control, Trust};
use crate::messages::usage;
use crate::select::Target;
use allocinfo_format::fail::{Command, OtherLines, find, parse};
use allocinfo_output::Document;
use allocinfo_output::fail::{armed, json, table};
use anyhow::{Context, Result, anyhow, bail};
use std::io::Write;

pub fn run(args: FailArgs) -> Result<()> {
    // Printed once the command succeeded; a write error names stdout.
    let mut out = Vec::new();
    run_in(args, Trust::Debugfs, &mut out)?;
    crate::messages::write_stdout(&out)
}

fn run_in(args: FailArgs, trust: Trust, out: &mut dyn Write) -> Result<()> {
    let path = args.control.as_path();
    match args.command {
        FailCmd::Add(a) => {
            let command = Command::Add(a.select.selectors.clone(), a.knobs());
            CONTROL.send(path, &command, trust).context("fail add")?;
            // A plain file given as --control holds the command just written:
            // skip such lines, and a listing that cannot be read is no error.
            let rules = CONTROL
                .read(path)
                .and_then(|text| parse(&text, OtherLines::Skip).map_err(anyhow::Error::msg))
                .unwrap_or_default();
            let rule = find(&rules, &a.select.selectors);
            writeln!(out, "{}", armed(rule, &a.select.selectors))?;
        }
        FailCmd::Remove(a) => {
            let target = a.target().map_err(usage)?;
            let (command, done) = match target {
                Target::Id(id) => (Command::Remove(id), format!("removed rule {id}")),
                Target::All => (Command::Clear, "removed all rules".to_owned()),
                Target::Selection(selectors) => {
                    let text = CONTROL.read(path).context("fail remove")?;
                    let rules = parse(&text, OtherLines::Refuse)
                        .map_err(|e| anyhow!("fail remove: {}: {e}", path.display()))?;
                    let Some(rule) = find(&rules, &selectors) else {
                        bail!(
                            "fail remove: no rule's selection is exactly '{}' \
                             (see allocinfo fail list)",
                            selectors.join(" ")
                        );
                    };
                    let id = rule.id;
                    (Command::Remove(id), format!("removed rule {id}"))
                }
            };
            CONTROL.send(path, &command, trust).context("fail remove")?;
            writeln!(out, "{done}")?;
        }
        FailCmd::List(a) => {
            let text = CONTROL.read(path).context("fail list")?;
            let rules = parse(&text, OtherLines::Refuse)
                .map_err(|e| anyhow!("fail list: {}: {e}", path.display()))?;
            Document::either(a.json(), a.pretty, || json(&rules), || table(&rules)).write(out)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The fault-injection control file.
const CONTROL: Control = Control {
    name: "fail",
    config: "CONFIG_ALLOCTAG_FAULT_INJECTION",
    reasons: &[
        (
            2,
            "No such file or directory (no rule with that id; see allocinfo fail list)",
        ),
        (
            17,
            "File exists (a rule with the same selection is already armed)",
        ),
        (
            28,
            "No space left on device (all 32 rules are in use; remove one first)",
        ),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Cmd};
    use clap::Parser;
    use std::io;
    use std::path::{Path, PathBuf};

    const LISTING: &str = "\
rule 1 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=2 sites=1 unarmed=0 select=module:m func:f
site rule=1 injected=2 lib/m.c:42 [m] func:f
rule 4 probability=100 interval=1 times=-1 space=0 verbose=1 pid=0 injected=0 sites=0 unarmed=0 select=func:kernel::alloc::f
";

    /// A plain file standing in for the control file, holding `text`, in a
    /// directory removed when the test drops it.
    fn control(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fail");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    /// Runs `allocinfo fail --control FILE ARGS` with `file` trusted.
    fn fail(file: &Path, args: &[&str]) -> Result<String> {
        let mut argv = vec!["allocinfo", "fail", "--control", file.to_str().unwrap()];
        argv.extend_from_slice(args);
        let Cmd::Fail(a) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!()
        };
        let mut out = Vec::new();
        run_in(a, Trust::AnyFile, &mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn add_writes_one_command_line() {
        let (_dir, file) = control("");
        let args = [
            "add",
            "module:foo",
            "lib/m.c:042",
            "--probability",
            "50",
            "--interval",
            "2",
            "--times",
            "-1",
            "--space",
            "64K",
            "--fault-verbosity",
            "0",
            "--pid",
            "1",
        ];
        assert_eq!(
            fail(&file, &args).unwrap(),
            "armed: module:foo lib/m.c:42 (rule id not shown by the kernel)\n"
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "add module:foo lib/m.c:42 probability=50 interval=2 times=-1 space=65536 verbose=0 pid=1\n"
        );
        let (_dir, file) = control("");
        fail(&file, &["add", "func:kernel::alloc::f"]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "add func:kernel::alloc::f\n"
        );
    }

    #[test]
    fn add_reports_the_rule_the_kernel_lists() {
        // The command overwrites the start of the file: padding keeps the
        // listing after it intact.
        let (_dir, file) = control(&format!("{}\n{LISTING}", "#".repeat(64)));
        assert_eq!(
            fail(&file, &["add", "module:m", "func:f"]).unwrap(),
            "armed rule 1: module:m func:f (1 site)\n"
        );
        assert_eq!(
            fail(&file, &["add", "func:kernel::alloc::f"]).unwrap(),
            "armed rule 4: func:kernel::alloc::f (no call site matches yet)\n"
        );
    }

    #[test]
    fn remove_one_or_all() {
        let (_dir, file) = control("");
        assert_eq!(fail(&file, &["remove", "32"]).unwrap(), "removed rule 32\n");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "remove 32\n");
        let (_dir, file) = control("");
        assert_eq!(
            fail(&file, &["remove", "--all"]).unwrap(),
            "removed all rules\n"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "clear\n");
    }

    #[test]
    fn remove_by_selection() {
        // The listing is read first, then the command overwrites its start.
        let (_dir, file) = control(LISTING);
        assert_eq!(
            fail(&file, &["remove", "func:kernel::alloc::f"]).unwrap(),
            "removed rule 4\n"
        );
        assert!(
            std::fs::read_to_string(&file)
                .unwrap()
                .starts_with("remove 4\n")
        );
        let (_dir, file) = control(LISTING);
        let err = fail(&file, &["remove", "module:m"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "fail remove: no rule's selection is exactly 'module:m' (see allocinfo fail list)"
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            LISTING,
            "nothing written"
        );
    }

    /// Where the file is trusted, errno is the kernel's answer: /dev/full
    /// fails every write with ENOSPC, as a full rule table does.
    #[test]
    fn kernel_refusals() {
        let err = fail(&PathBuf::from("/dev/full"), &["add", "func:f"]).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "fail add: the kernel refused 'add func:f': No space left on device \
             (all 32 rules are in use; remove one first)"
        );
    }

    #[test]
    fn errno_messages() {
        let add = Command::Add(vec!["module:m".into()], vec![]);
        let msg = |errno| {
            let e = io::Error::from_raw_os_error(errno);
            CONTROL.refused(&add, &e).to_string()
        };
        assert_eq!(
            msg(22),
            "the kernel refused 'add module:m': Invalid argument (see dmesg for why)"
        );
        assert!(msg(17).contains("already armed"));
        assert!(msg(28).contains("all 32 rules"));
        assert!(msg(1).contains("CAP_SYS_ADMIN"));
        assert!(msg(5).ends_with("Input/output error (os error 5)"));
    }
}
