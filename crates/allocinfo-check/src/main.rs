//! `allocinfo-check`: the guest tests' read checkers (see the library's
//! documentation for why a Rust tool). Exit status: 0 the check passed
//! (its summary or result on stdout), 1 it failed (what is wrong on
//! stderr), 2 bad usage.

use allocinfo_check::{self as check, Expect, Filter, Kind, Listing, Outcome, Pick};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "allocinfo-check",
    about = "Checks reads of /proc/allocinfo and the allocinfo ioctl's output (guest tests)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Table lines of a read's tags for `read`: KIND V takes vmlinux's,
    /// P (pinned) and C (churned) MODULE's
    Table {
        #[arg(value_enum)]
        kind: KindArg,
        read: PathBuf,
        module: Option<String>,
    },
    /// Checks a read of /proc/allocinfo: exact format, and the tags of TABLE
    Read {
        read: PathBuf,
        table: PathBuf,
        /// No churned module's tag may be left
        #[arg(long = "final")]
        final_read: bool,
        /// Lines of each churned tag allowed beyond the table's (and in the
        /// final read): instances kept after an unload with live allocations
        #[arg(long, default_value_t = 0)]
        kept: usize,
    },
    /// Prints how many tags FILTER selects (names as written)
    Count {
        #[arg(value_name = "FILE")]
        listing: PathBuf,
        #[command(flatten)]
        filter: FilterArgs,
        #[command(flatten)]
        expect: ExpectArgs,
    },
    /// Prints "BYTES CALLS" of the one tag FILTER selects
    Get {
        #[arg(value_name = "FILE")]
        listing: PathBuf,
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// Every tag FILTER selects has 0 bytes in 0 calls (and there is one)
    Zero {
        #[arg(value_name = "FILE")]
        listing: PathBuf,
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// The tags FILTER selects have the same counters in both reads
    Unchanged {
        before: PathBuf,
        after: PathBuf,
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// GOT (the ioctl's dump with FILTER) lists exactly EXPECTED's tags that
    /// FILTER selects, names cut as the ioctl cuts them, in order; fails if
    /// EXPECTED (with --both, either file) lists no tag
    Tags {
        expected: PathBuf,
        got: PathBuf,
        /// Filter GOT too: both list the same selected tags
        #[arg(long)]
        both: bool,
        #[command(flatten)]
        filter: FilterArgs,
        #[command(flatten)]
        expect: ExpectArgs,
    },
    /// As `tags`, among the tags whose numbers held still from T1 to T2; a
    /// tag of DUMP that neither T1 nor T2 lists fails
    StableTags {
        t1: PathBuf,
        dump: PathBuf,
        t2: PathBuf,
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// The tags that held still from T1 to T2 have their numbers in DUMP
    Counters {
        t1: PathBuf,
        dump: PathBuf,
        t2: PathBuf,
    },
    /// With the counters frozen, DUMP is TEXT (byte for byte where no name is
    /// cut; both mark the same tags unloaded where TEXT can); fails if TEXT
    /// lists no tag
    Frozen { text: PathBuf, dump: PathBuf },
    /// Tags with a name over 63 characters: CUT_FILE LINE CUT_FUNCTION FILE FUNCTION
    LongNames {
        file: PathBuf,
        /// Fail when there is none
        #[arg(long)]
        some: bool,
    },
    /// A name to filter by, chosen among the tags
    Pick {
        #[arg(value_enum)]
        what: PickArg,
        file: PathBuf,
    },
    /// FILE:LINE (cut) of the first tag of FUNCTION
    Site { file: PathBuf, function: String },
    /// "BYTES FILE:LINE" of the last tag with bytes that held still from T1 to T2
    HeldSize { t1: PathBuf, t2: PathBuf },
}

#[derive(Clone, Copy, ValueEnum)]
enum KindArg {
    #[value(name = "V")]
    V,
    #[value(name = "P")]
    P,
    #[value(name = "C")]
    C,
}

#[derive(Clone, Copy, ValueEnum)]
enum PickArg {
    CommonestFunction,
    LoneFunction,
    CommonestFile,
}

/// The ioctl's filters, with mainline's meaning, and selectors of reads.
#[derive(Args)]
struct FilterArgs {
    /// Module name ("" for built-in code)
    #[arg(long)]
    module: Option<String>,
    #[arg(long)]
    function: Option<String>,
    #[arg(long)]
    file: Option<String>,
    #[arg(long)]
    line: Option<u64>,
    /// Nonzero: the tags marked inaccurate; 0: the others
    #[arg(long)]
    inaccurate: Option<u64>,
    /// Bytes at least (unsigned)
    #[arg(long)]
    min: Option<u64>,
    /// Bytes at most (unsigned)
    #[arg(long)]
    max: Option<u64>,
    /// The tags marked unloaded (alloctag's ALLOCINFO_FILTER_UNLOADED)
    #[arg(long)]
    unloaded: bool,
    /// Any loadable module's tags
    #[arg(long)]
    any_module: bool,
    #[arg(long)]
    module_prefix: Option<String>,
    #[arg(long)]
    function_prefix: Option<String>,
    /// Tags with bytes or calls
    #[arg(long)]
    nonzero: bool,
}

impl From<FilterArgs> for Filter {
    fn from(a: FilterArgs) -> Filter {
        Filter {
            module: a.module,
            function: a.function,
            file: a.file,
            line: a.line,
            inaccurate: a.inaccurate,
            min: a.min,
            max: a.max,
            unloaded: a.unloaded,
            any_module: a.any_module,
            module_prefix: a.module_prefix,
            function_prefix: a.function_prefix,
            nonzero: a.nonzero,
        }
    }
}

#[derive(Args)]
struct ExpectArgs {
    /// Fail unless at least N tags
    #[arg(long, value_name = "N")]
    at_least: Option<usize>,
    /// Fail unless exactly N tags
    #[arg(long, value_name = "N")]
    exactly: Option<usize>,
}

impl From<ExpectArgs> for Expect {
    fn from(a: ExpectArgs) -> Expect {
        Expect {
            at_least: a.at_least,
            exactly: a.exactly,
        }
    }
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))
}

fn listing(p: &Path) -> Result<Listing, String> {
    Listing::parse(&read(p)?).map_err(|e| format!("{}: {e}", p.display()))
}

fn run(cmd: Cmd) -> Outcome {
    match cmd {
        Cmd::Table {
            kind,
            read: r,
            module,
        } => {
            let kind = match kind {
                KindArg::V => Kind::Vmlinux,
                KindArg::P => Kind::Pinned,
                KindArg::C => Kind::Churned,
            };
            if (kind == Kind::Vmlinux) != module.is_none() {
                return Err("KIND V takes no MODULE, P and C one".into());
            }
            check::table(kind, &read(&r)?, module.as_deref())
        }
        Cmd::Read {
            read: r,
            table,
            final_read,
            kept,
        } => {
            let table = String::from_utf8(read(&table)?).map_err(|e| e.to_string())?;
            check::check_read(&read(&r)?, &table, final_read, kept)
        }
        Cmd::Count {
            listing: file,
            filter,
            expect,
        } => {
            let l = listing(&file)?;
            let f = filter.into();
            let n = check::select(&l, &f).count();
            Expect::from(expect).check(n, "tags selected")?;
            Ok(n.to_string())
        }
        Cmd::Get {
            listing: file,
            filter,
        } => check::get(&listing(&file)?, &filter.into()),
        Cmd::Zero {
            listing: file,
            filter,
        } => check::zero(&listing(&file)?, &filter.into()),
        Cmd::Unchanged {
            before,
            after,
            filter,
        } => check::unchanged(&listing(&before)?, &listing(&after)?, &filter.into()),
        Cmd::Tags {
            expected,
            got,
            both,
            filter,
            expect,
        } => check::tags(
            &listing(&expected)?,
            &listing(&got)?,
            &filter.into(),
            both,
            expect.into(),
        ),
        Cmd::StableTags {
            t1,
            dump,
            t2,
            filter,
        } => check::stable_tags(
            &listing(&t1)?,
            &listing(&dump)?,
            &listing(&t2)?,
            &filter.into(),
        ),
        Cmd::Counters { t1, dump, t2 } => {
            check::counters(&listing(&t1)?, &listing(&dump)?, &listing(&t2)?)
        }
        Cmd::Frozen { text, dump } => check::frozen(&listing(&text)?, &listing(&dump)?),
        Cmd::LongNames { file, some } => {
            let s = check::long_names(&listing(&file)?);
            if some && s.is_empty() {
                return Err(format!(
                    "no tag in {} has a name over 63 characters",
                    file.display()
                ));
            }
            Ok(s)
        }
        Cmd::Pick { what, file } => {
            let what = match what {
                PickArg::CommonestFunction => Pick::CommonestFunction,
                PickArg::LoneFunction => Pick::LoneFunction,
                PickArg::CommonestFile => Pick::CommonestFile,
            };
            check::pick(&listing(&file)?, what)
        }
        Cmd::Site { file, function } => check::site(&listing(&file)?, &function),
        Cmd::HeldSize { t1, t2 } => check::held_size(&listing(&t1)?, &listing(&t2)?),
    }
}

fn main() -> ExitCode {
    match run(Cli::parse().cmd) {
        Ok(s) => {
            let s = s.trim_end_matches('\n');
            if !s.is_empty() {
                println!("{s}");
            }
            ExitCode::SUCCESS
        }
        // On stderr: a failed check inside $(...) still shows its reason.
        Err(why) => {
            eprintln!("allocinfo-check: {why}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// clap's own consistency checks: no two arguments of a command share
    /// a name (a positional FILE and the filter's --file once did).
    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn filters_parse_beside_the_file() {
        let cli = Cli::try_parse_from([
            "allocinfo-check",
            "count",
            "/tmp/x",
            "--file",
            "mm/slub.c",
            "--line",
            "4294967297",
            "--module",
            "",
            "--min",
            "9223372036854775808",
            "--unloaded",
            "--exactly",
            "0",
        ])
        .unwrap();
        let Cmd::Count {
            listing,
            filter,
            expect,
        } = cli.cmd
        else {
            panic!("not count");
        };
        assert_eq!(listing, PathBuf::from("/tmp/x"));
        let f = Filter::from(filter);
        assert_eq!(f.file.as_deref(), Some("mm/slub.c"));
        assert_eq!(f.line, Some((1 << 32) + 1));
        assert_eq!(f.module.as_deref(), Some(""));
        assert_eq!(f.min, Some(1 << 63));
        assert!(f.unloaded);
        assert_eq!(expect.exactly, Some(0));
        for cmd in ["table", "read", "tags", "stable-tags", "counters", "frozen"] {
            assert!(
                Cli::try_parse_from(["allocinfo-check", cmd]).is_err(),
                "{cmd}"
            );
        }
        let t = Cli::try_parse_from(["allocinfo-check", "table", "V", "/tmp/r"]).unwrap();
        assert!(matches!(
            t.cmd,
            Cmd::Table {
                kind: KindArg::V,
                ..
            }
        ));
    }
}
