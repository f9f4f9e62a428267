//! What a report's row stands for: a call site, a module, a directory, a
//! file, a function or a path prefix, named as the tables print it.

use crate::{BUILTIN_MODULE, GroupBy};
use allocinfo_format::Tag;
use std::fmt;

/// The identity of a row.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    Site {
        file: String,
        line: u32,
        module: Option<String>,
        function: String,
        /// The call site of a module unloaded while allocations it made
        /// were live (`unloaded:yes`): another instance than the reloaded
        /// module's, at the same place, until [`Key::folded`].
        unloaded: bool,
    },
    /// `None` is built-in code.
    Module(Option<String>),
    Dir(String),
    File(String),
    Function(String),
    /// A path prefix, ending in `/`.
    Tree(String),
}

impl Key {
    pub fn of(tag: &Tag, by: GroupBy) -> Key {
        match by {
            GroupBy::Site => Key::Site {
                file: tag.file.clone(),
                line: tag.line,
                module: tag.module.clone(),
                function: tag.function.clone(),
                unloaded: tag.is_unloaded(),
            },
            GroupBy::Module => Key::Module(tag.module.clone()),
            GroupBy::Dir => Key::Dir(tag.dir().to_owned()),
            GroupBy::File => Key::File(tag.file.clone()),
            GroupBy::Function => Key::Function(tag.function.clone()),
            GroupBy::Tree => Key::Tree(format!("{}/", tag.dir())),
        }
    }

    /// The key of every instance of a call site: an unloaded module's and
    /// the reloaded module's are one. Other keys are as they are.
    pub fn folded(mut self) -> Key {
        if let Key::Site { unloaded, .. } = &mut self {
            *unloaded = false;
        }
        self
    }

    /// Every path prefix of a tag's directory, shortest first: `fs/`,
    /// `fs/xfs/`, `fs/xfs/libxfs/`.
    pub fn tree(tag: &Tag) -> impl Iterator<Item = Key> + '_ {
        let dir = tag.dir().strip_suffix('/').unwrap_or(tag.dir());
        dir.match_indices('/')
            .map(|(i, _)| i)
            .chain([dir.len()])
            .filter(move |&end| end > 0 || dir.is_empty())
            .map(move |end| Key::Tree(format!("{}/", &dir[..end])))
    }

    pub fn group_by(&self) -> GroupBy {
        match self {
            Key::Site { .. } => GroupBy::Site,
            Key::Module(_) => GroupBy::Module,
            Key::Dir(_) => GroupBy::Dir,
            Key::File(_) => GroupBy::File,
            Key::Function(_) => GroupBy::Function,
            Key::Tree(_) => GroupBy::Tree,
        }
    }

    pub fn module(&self) -> Option<&str> {
        match self {
            Key::Site { module, .. } | Key::Module(module) => module.as_deref(),
            _ => None,
        }
    }

    pub fn file(&self) -> Option<&str> {
        match self {
            Key::Site { file, .. } | Key::File(file) => Some(file),
            _ => None,
        }
    }

    pub fn line(&self) -> Option<u32> {
        match self {
            Key::Site { line, .. } => Some(*line),
            _ => None,
        }
    }

    pub fn function(&self) -> Option<&str> {
        match self {
            Key::Site { function, .. } | Key::Function(function) => Some(function),
            _ => None,
        }
    }

    pub fn dir(&self) -> Option<&str> {
        match self {
            Key::Dir(dir) | Key::Tree(dir) => Some(dir),
            _ => None,
        }
    }
}

/// The key as people read it: a call site as the kernel prints it
/// (`mm/slub.c:2259 func:alloc_slab_page`), otherwise the group's name. An
/// unloaded instance of a call site reads as the others: the outputs mark
/// it from the row's [`Sums::unloaded`](crate::Sums::unloaded).
impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Site {
                file,
                line,
                module: Some(m),
                function,
                ..
            } => write!(f, "{file}:{line} [{m}] func:{function}"),
            Key::Site {
                file,
                line,
                module: None,
                function,
                ..
            } => write!(f, "{file}:{line} func:{function}"),
            Key::Module(m) => f.write_str(m.as_deref().unwrap_or(BUILTIN_MODULE)),
            Key::Dir(s) | Key::File(s) | Key::Function(s) | Key::Tree(s) => f.write_str(s),
        }
    }
}
