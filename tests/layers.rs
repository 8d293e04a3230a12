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
//! physics test may load a scene to have a world to step). The same reading
//! holds the second rule of the house: no import circles between files
//! (second half of this file).

use std::collections::{BTreeMap, BTreeSet};
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
    "model",
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

// ---------------------------------------------------------------------
// No import circles between files.
//
// An arrow runs from file A to file B when A's code names an item by a
// path (`crate::…`, `super::…`, `self::…`, or a module a `use` brought into
// scope) that lives in B: the path's longest prefix that is a module with a
// file of its own. A module's face (its `mod.rs`) naming its own
// submodules' items is the module handing them on, not an arrow: Rust's
// way of giving a folder one front door. Every other loop of arrows is a
// circle, and the test fails naming its files and the lines that tie them.

/// A file's module path: `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`.
fn module_path(rel: &str) -> Vec<String> {
    let rest = rel.strip_prefix("src/").unwrap_or(rel);
    let rest = rest.strip_suffix(".rs").unwrap_or(rest);
    let mut segs: Vec<String> = rest.split('/').map(str::to_string).collect();
    if segs.last().is_some_and(|s| s == "mod" || s == "lib") {
        segs.pop();
    }
    segs
}

/// One path named in a file's code, the module path it starts from already
/// applied (`super` and `self` taken away), with its line and, for a `use`
/// of a module, the name it binds.
#[derive(Debug)]
struct Named {
    line: usize,
    segments: Vec<String>,
    binds: Option<String>,
}

fn skip_spaces(chars: &[char], mut i: usize) -> usize {
    while chars.get(i).is_some_and(|c| c.is_whitespace()) {
        i += 1;
    }
    i
}

fn ident_at(chars: &[char], i: usize) -> (String, usize) {
    let mut j = i;
    while chars
        .get(j)
        .is_some_and(|c| c.is_alphanumeric() || *c == '_')
    {
        j += 1;
    }
    (chars[i..j].iter().collect(), j)
}

/// Reads one path or use tree at `i` (`a::b::{c, d::{self, E}}`, `a::*`,
/// `a as b`) below `prefix`; pushes every path it names with the name it
/// binds. Returns where it stopped.
fn read_tree(
    chars: &[char],
    mut i: usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    let mut path = prefix.to_vec();
    loop {
        i = skip_spaces(chars, i);
        match chars.get(i) {
            Some('{') => {
                i += 1;
                loop {
                    i = skip_spaces(chars, i);
                    match chars.get(i) {
                        None => return i,
                        Some('}') => return i + 1,
                        Some(',') => i += 1,
                        Some(_) => {
                            let before = i;
                            i = read_tree(chars, i, &path, out);
                            if i == before {
                                i += 1;
                            }
                        }
                    }
                }
            }
            Some('*') => {
                out.push((path, None));
                return i + 1;
            }
            _ => {}
        }
        let (seg, j) = ident_at(chars, i);
        if seg.is_empty() {
            out.push((path, None));
            return i;
        }
        i = j;
        let k = skip_spaces(chars, i);
        if chars.get(k) == Some(&':') && chars.get(k + 1) == Some(&':') {
            if seg != "self" {
                path.push(seg);
            }
            i = k + 2;
            continue;
        }
        let mut binds = if seg == "self" {
            path.last().cloned()
        } else {
            path.push(seg.clone());
            Some(seg)
        };
        let (word, after) = ident_at(chars, k);
        if word == "as" {
            let at = skip_spaces(chars, after);
            let (alias, end) = ident_at(chars, at);
            binds = Some(alias);
            i = end;
        }
        out.push((path, binds));
        return i;
    }
}

/// Whether a path may start at `at`: not inside a longer name or path.
fn starts_path(chars: &[char], at: usize) -> bool {
    at == 0 || !chars[at - 1].is_alphanumeric() && chars[at - 1] != '_' && chars[at - 1] != ':'
}

/// Every path the code of the file `rel` names from `crate`, `super` or
/// `self`, or from one of `modules` (names a `use` bound to modules).
fn named_paths(rel: &str, text: &str, modules: &BTreeMap<String, Vec<String>>) -> Vec<Named> {
    let here = module_path(rel);
    let mut code = String::new();
    let mut line_of = Vec::new();
    for (line, l) in code_lines(text) {
        let l = l.split("//").next().unwrap_or("");
        for _ in l.chars().chain(std::iter::once('\n')) {
            line_of.push(line);
        }
        code.push_str(l);
        code.push('\n');
    }
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !starts_path(&chars, i) || !(chars[i].is_alphabetic() || chars[i] == '_') {
            i += 1;
            continue;
        }
        let (word, j) = ident_at(&chars, i);
        let k = skip_spaces(&chars, j);
        let continues = chars.get(k) == Some(&':') && chars.get(k + 1) == Some(&':');
        // Where the path's tree starts: its module and the index after `::`.
        let start: Option<(Vec<String>, usize)> = match word.as_str() {
            _ if !continues => None,
            "crate" => Some((Vec::new(), k + 2)),
            "self" => Some((here.clone(), k + 2)),
            "super" => {
                let mut m = here.clone();
                m.pop();
                let mut at = k + 2;
                loop {
                    let (w, e) = ident_at(&chars, skip_spaces(&chars, at));
                    let n = skip_spaces(&chars, e);
                    if w == "super" && chars.get(n) == Some(&':') && chars.get(n + 1) == Some(&':')
                    {
                        m.pop();
                        at = n + 2;
                    } else {
                        break;
                    }
                }
                Some((m, at))
            }
            w => modules.get(w).cloned().map(|m| (m, k + 2)),
        };
        match start {
            Some((prefix, at)) => {
                let mut trees = Vec::new();
                let end = read_tree(&chars, at, &prefix, &mut trees);
                for (segments, binds) in trees {
                    out.push(Named {
                        line: line_of[i],
                        segments,
                        binds,
                    });
                }
                i = end.max(j);
            }
            None => i = j,
        }
    }
    out
}

/// The file a module path's items live in: its longest prefix that is a
/// module with a file, and whether the whole path is that module.
fn file_of(segments: &[String], files: &BTreeSet<String>) -> Option<(String, bool)> {
    for k in (0..=segments.len()).rev() {
        let base = segments[..k].join("/");
        let candidates = if k == 0 {
            vec!["src/lib.rs".to_string()]
        } else {
            vec![format!("src/{base}.rs"), format!("src/{base}/mod.rs")]
        };
        for c in candidates {
            if files.contains(&c) {
                return Some((c, k == segments.len()));
            }
        }
    }
    None
}

/// One arrow: `from` names an item of `to` at `line`.
#[derive(Debug, Clone)]
struct Arrow {
    from: String,
    line: usize,
    to: String,
    path: String,
}

/// The arrows between the library's files (`(path, text)` pairs), the
/// faces' arrows to their own submodules left out (see above).
fn arrows(sources: &[(String, String)]) -> Vec<Arrow> {
    let files: BTreeSet<String> = sources.iter().map(|(r, _)| r.clone()).collect();
    let mut out = Vec::new();
    for (rel, text) in sources {
        // First the modules this file's `use`s bind, then every path.
        let mut modules = BTreeMap::new();
        for n in named_paths(rel, text, &BTreeMap::new()) {
            if let (Some(name), Some((_, true))) = (&n.binds, file_of(&n.segments, &files)) {
                modules.insert(name.clone(), n.segments.clone());
            }
        }
        let here = module_path(rel);
        let is_face = rel.ends_with("/mod.rs") || rel.ends_with("lib.rs");
        for n in named_paths(rel, text, &modules) {
            let Some((to, _)) = file_of(&n.segments, &files) else {
                continue;
            };
            let below_face = is_face && module_path(&to).starts_with(&here);
            if &to != rel && !below_face {
                out.push(Arrow {
                    from: rel.clone(),
                    line: n.line,
                    to,
                    path: n.segments.join("::"),
                });
            }
        }
    }
    out.sort_by(|a, b| (&a.from, a.line, &a.to, &a.path).cmp(&(&b.from, b.line, &b.to, &b.path)));
    out.dedup_by(|a, b| (&a.from, a.line, &a.to, &a.path) == (&b.from, b.line, &b.to, &b.path));
    out
}

/// The import circles among `sources`: each a set of two or more files that
/// reach each other through arrows (strongly connected components), with
/// the arrows among them, as lines of text.
fn circles(sources: &[(String, String)]) -> Vec<String> {
    let all = arrows(sources);
    let names: Vec<&String> = sources.iter().map(|(r, _)| r).collect();
    let index: BTreeMap<&String, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut next = vec![BTreeSet::new(); names.len()];
    for a in &all {
        next[index[&a.from]].insert(index[&a.to]);
    }
    let reach = |from: usize| {
        let mut seen = vec![false; names.len()];
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            for &m in &next[n] {
                if !seen[m] {
                    seen[m] = true;
                    stack.push(m);
                }
            }
        }
        seen
    };
    let reaches: Vec<Vec<bool>> = (0..names.len()).map(reach).collect();
    let mut placed = vec![false; names.len()];
    let mut out = Vec::new();
    for a in 0..names.len() {
        if placed[a] {
            continue;
        }
        let group: Vec<usize> = (0..names.len())
            .filter(|&b| b == a || reaches[a][b] && reaches[b][a])
            .collect();
        if group.len() < 2 {
            continue;
        }
        for &b in &group {
            placed[b] = true;
        }
        let members: BTreeSet<&String> = group.iter().map(|&b| names[b]).collect();
        let ties: Vec<String> = all
            .iter()
            .filter(|x| members.contains(&x.from) && members.contains(&x.to))
            .map(|x| format!("  {}:{} -> {} ({})", x.from, x.line, x.to, x.path))
            .collect();
        out.push(format!(
            "circle of {}:\n{}",
            members.into_iter().cloned().collect::<Vec<_>>().join(", "),
            ties.join("\n")
        ));
    }
    out
}

/// The library's files: everything under `src/` but the binary's own
/// (`main.rs`, the command line's `cli`).
fn library_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&p).unwrap();
            (rel, text)
        })
        .filter(|(rel, _)| {
            rel != "src/main.rs" && rel != "src/cli.rs" && !rel.starts_with("src/cli/")
        })
        .collect()
}

#[test]
fn no_two_files_import_each_other_directly_or_through_others() {
    let sources = library_sources();
    let found = circles(&sources);
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
    // The reading sees the arrows that are there: the step names the
    // world, a solver method a function of the contact problem's, a face's
    // child its face's items.
    let all = arrows(&sources);
    for (from, to) in [
        ("src/step.rs", "src/world.rs"),
        ("src/solver/pgs.rs", "src/problem/explicit.rs"),
        (
            "src/formulation/penalty/step.rs",
            "src/formulation/penalty/mod.rs",
        ),
    ] {
        assert!(
            all.iter().any(|a| a.from == from && a.to == to),
            "no arrow {from} -> {to} was read"
        );
    }
}

/// The check names each circle's files and the lines that tie them, through
/// grouped, relative and module-bound paths; a face naming its own
/// submodules' items is no circle.
#[test]
fn an_import_circle_is_named_by_its_files_and_lines() {
    let src = |rel: &str, text: &str| (rel.to_string(), text.to_string());
    let sources = vec![
        src(
            "src/lib.rs",
            "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n",
        ),
        src("src/a.rs", "use crate::{b::Thing, d};\npub struct A;\n"),
        src("src/b.rs", "pub struct Thing;\nfn f() { crate::c::g(); }\n"),
        src("src/c.rs", "use crate::a;\n\npub fn g() -> a::A { a::A }\n"),
        src(
            "src/d/mod.rs",
            "mod e;\npub use self::e::E;\npub struct D;\n",
        ),
        src("src/d/e.rs", "use super::D;\npub struct E(D);\n"),
    ];
    let found = circles(&sources);
    assert_eq!(
        found,
        ["circle of src/a.rs, src/b.rs, src/c.rs:\n  \
          src/a.rs:1 -> src/b.rs (b::Thing)\n  \
          src/b.rs:2 -> src/c.rs (c::g)\n  \
          src/c.rs:1 -> src/a.rs (a)\n  \
          src/c.rs:3 -> src/a.rs (a::A)"],
        "{found:#?}"
    );
    let mut acyclic = sources.clone();
    acyclic[3] = src("src/c.rs", "pub fn g() {}\n");
    assert!(circles(&acyclic).is_empty(), "{:#?}", circles(&acyclic));
}
