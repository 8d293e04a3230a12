//! The one error type of scene loading: every message names the file, the
//! field path and the reason.

use std::fmt;

/// At most this many problems are printed by [`SceneError::Invalid`]'s
/// `Display`; the rest are counted.
const MAX_SHOWN: usize = 20;

/// One validation problem: where (a field path such as
/// `materials[0].friction`, or a sphere such as `spheres[2] (Lattice) sphere 17`)
/// and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// Field path or sphere source.
    pub path: String,
    /// What is wrong, with the offending value.
    pub reason: String,
}

impl Issue {
    /// An issue at `path` for `reason`.
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Issue {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

/// Why a scene could not be loaded, overridden, validated or built.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// The file could not be read.
    #[error("{file}: cannot read the scene file: {err}")]
    Io {
        /// The file.
        file: String,
        /// The underlying error (part of the message, not a `source()`,
        /// so that `{:#}` does not print it twice).
        err: std::io::Error,
    },
    /// Malformed RON, an unknown field or variant, a missing field, a value of
    /// the wrong type: `file:line:col: message` from the RON parser.
    #[error("{file}:{line}:{col}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// The parser's message (it names an unexpected field and lists the expected ones).
        message: String,
    },
    /// The scene parsed but some values are not acceptable; one line per
    /// problem, `file: path: reason`.
    #[error("{}", format_issues(file, issues))]
    Invalid {
        /// The file.
        file: String,
        /// The problems, in the order found (never empty).
        issues: Vec<Issue>,
    },
    /// A `--set path=value` override could not be applied.
    #[error("{file}: --set {path}={value}: {reason}")]
    Override {
        /// The file the override applies to.
        file: String,
        /// The override's path as given.
        path: String,
        /// The override's value as given.
        value: String,
        /// Why it failed (for an unknown path: the keys available there).
        reason: String,
    },
    /// A `--set` argument that is not of the form `path=value`.
    #[error("--set {arg:?}: {reason}")]
    SetSyntax {
        /// The argument as given.
        arg: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl SceneError {
    /// An [`SceneError::Invalid`] with a single issue.
    pub fn invalid(file: &str, path: impl Into<String>, reason: impl Into<String>) -> Self {
        SceneError::Invalid {
            file: file.to_string(),
            issues: vec![Issue::new(path, reason)],
        }
    }

    /// The validation problems, if this is an [`SceneError::Invalid`] (else empty).
    pub fn issues(&self) -> &[Issue] {
        match self {
            SceneError::Invalid { issues, .. } => issues,
            _ => &[],
        }
    }
}

fn format_issues(file: &str, issues: &[Issue]) -> String {
    let mut lines: Vec<String> = issues
        .iter()
        .take(MAX_SHOWN)
        .map(|i| format!("{file}: {i}"))
        .collect();
    if issues.len() > MAX_SHOWN {
        lines.push(format!(
            "{file}: … and {} more problems",
            issues.len() - MAX_SHOWN
        ));
    }
    lines.join("\n")
}
