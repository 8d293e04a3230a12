//! The crate's two layers, held by reading its source: the physics (bodies,
//! shapes, boundaries, the state, collision, the contact problem, the
//! solvers, the GPU, the formulations and the step) uses nothing of the
//! application above it (scenes, runs, outputs, pictures, analyses,
//! studies, the tools and the command line), and none of the crates that
//! serve only the application (argument parsing, plots, progress bars,
//! PNG, CSV). `src/lib.rs` declares every module in one of the two lists
//! below, so a new module must be placed before it compiles into a test
//! that passes.
//!
//! Each file's own code is read, its `#[cfg(test)]` part left out (a
//! physics test may load a scene to have a world to step).

use std::path::{Path, PathBuf};

/// The physics layer: what a step needs and nothing else.
const PHYSICS: &[&str] = &[
    "bodies",
    "boundary",
    "collision",
    "cone",
    "contact_forces",
    "existence",
    "formulation",
    "gpu",
    "inlet",
    "integrate",
    "lcp",
    "material",
    "mesh",
    "placement",
    "problem",
    "rng",
    "shape",
    "siconos",
    "sizes",
    "solver",
    "state",
    "step",
    "wall_loads",
    "world",
];

/// The application layer, above the physics.
const APPLICATION: &[&str] = &[
    "analysis",
    "bench",
    "calibrate",
    "compare",
    "interrupt",
    "measure",
    "output",
    "render",
    "run",
    "scene",
    "solve",
    "sweep",
    "validate",
];

/// Crates the physics layer does not use (the application's own).
const APPLICATION_CRATES: &[&str] = &["clap", "plotters", "indicatif", "png", "csv"];

/// One import that runs against the layers.
#[derive(Debug, PartialEq)]
struct Violation {
    file: String,
    line: usize,
    what: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.what)
    }
}

/// The top-level module a file under `src/` belongs to (`None` for the
/// crate root and the binary's files, which are the application's).
fn module_of(rel: &str) -> Option<&str> {
    let rest = rel.strip_prefix("src/")?;
    let first = rest.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main" | "cli")).then_some(name)
}

/// The crate modules named by `crate::…` paths on one line of code (a
/// grouped `use crate::{a::X, b}` names each of its parts).
fn crate_modules(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            for part in inner.split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.push(name);
                }
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
        rest = after;
    }
    out
}

/// The code lines of a file: comments dropped, and everything from its
/// first `#[cfg(test)]` on (the tests sit at a file's end).
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
}

/// What in `text` (the file `rel`) runs against the layers.
fn violations(rel: &str, text: &str) -> Vec<Violation> {
    let Some(module) = module_of(rel) else {
        return Vec::new();
    };
    if !PHYSICS.contains(&module) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (line, code) in code_lines(text) {
        for used in crate_modules(code) {
            if APPLICATION.contains(&used.as_str()) {
                out.push(Violation {
                    file: rel.to_string(),
                    line,
                    what: format!(
                        "the physics module `{module}` uses `crate::{used}`, of the application layer"
                    ),
                });
            }
        }
        for krate in APPLICATION_CRATES {
            let path = format!("{krate}::");
            let at_word = code.match_indices(&path).any(|(at, _)| {
                !code[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            });
            if at_word {
                out.push(Violation {
                    file: rel.to_string(),
                    line,
                    what: format!(
                        "the physics module `{module}` uses the crate `{krate}`, the application's"
                    ),
                });
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_physics_layer_uses_nothing_of_the_application() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut found = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(path).unwrap();
        found.extend(violations(&rel, &text));
    }
    let unexpected: Vec<String> = found.iter().map(|v| v.to_string()).collect();
    assert!(
        unexpected.is_empty(),
        "imports that run against the layers:\n{}",
        unexpected.join("\n")
    );
}

#[test]
fn every_module_of_the_crate_is_in_one_layer() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';'))
        .collect();
    for m in &declared {
        assert!(
            PHYSICS.contains(m) != APPLICATION.contains(m),
            "src/lib.rs declares `{m}`: put it in exactly one layer of tests/layers.rs"
        );
    }
    for m in PHYSICS.iter().chain(APPLICATION) {
        assert!(
            declared.contains(m),
            "tests/layers.rs lists `{m}`, which src/lib.rs does not declare"
        );
    }
}

/// The check fails on a physics file that imports a scene, run or output
/// item, naming file and line, and passes the same line in the
/// application or in a test module.
#[test]
fn an_import_of_the_application_from_the_physics_is_named_by_file_and_line() {
    let text = "//! A physics file.\nuse crate::bodies::Bodies;\nuse crate::{material::Material, scene::Scene};\n\nfn f() { crate::run::run_file(); }\n";
    let found = violations("src/world.rs", text);
    let shown: Vec<String> = found.iter().map(|v| v.to_string()).collect();
    assert_eq!(
        shown,
        [
            "src/world.rs:3: the physics module `world` uses `crate::scene`, of the application layer",
            "src/world.rs:5: the physics module `world` uses `crate::run`, of the application layer",
        ],
        "{found:?}"
    );
    let uses_csv = violations("src/solver/pgs.rs", "let w = csv::Writer::from_path(p);\n");
    assert_eq!(uses_csv.len(), 1, "{uses_csv:?}");
    assert!(uses_csv[0].to_string().contains("the crate `csv`"));
    assert!(
        violations("src/run/session.rs", text).is_empty(),
        "the application may"
    );
    let in_tests =
        "use crate::bodies::Bodies;\n#[cfg(test)]\nmod tests {\n    use crate::scene::Scene;\n}\n";
    assert!(
        violations("src/state.rs", in_tests).is_empty(),
        "a test module may"
    );
    assert!(violations("src/state.rs", "// crate::scene in a comment\n").is_empty());
}
