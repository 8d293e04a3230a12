//! Solving contact problems read from files (`repose solve`): one problem
//! with one method, or every problem of a directory with every method, as a
//! small performance profile.
//!
//! The default is APGD with the interior point as its fallback
//! ([`SolveOptions::default`]): APGD alone solves every Siconos problem of
//! `tests/data/siconos` and ten of the twelve of `tests/data/hard` from zero
//! to 10⁻⁶; the interior point, started from APGD's answer, solves the
//! other two (docs/solvers.md, "Hard problems").
//!
//! `lemke` is the direct method: a 3-D Coulomb problem faceted into the
//! pyramid LCP of k directions ([`crate::lcp::pyramid_lcp`], Stewart and
//! Trinkle's form, the anchor form of Peiret et al. 2017) and solved by
//! Lemke's method; its row reports pivots as iterations, and the error of
//! the faceted solution on the true cone problem (the faceting error, which
//! does not reach 1e-6 unless the solution sticks).
//!
//! An iterative solve goes through the problem's explicit 6-D Delassus operator
//! ([`SiconosProblem::to_delassus`]) by the same solver code that runs in
//! simulations, stopping on the Siconos relative measure; the error printed
//! is then recomputed independently in the file's own d-space
//! ([`SiconosProblem::error`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::problem::Vec6;
use crate::siconos::SiconosProblem;
use crate::solver::{self, ResidualMeasure, SolverMethod, SolverSettings, Workspace};

/// How to solve.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// The method.
    pub method: SolverMethod,
    /// Relative error (Siconos measure) to reach.
    pub tolerance: f64,
    /// Iterations at most.
    pub max_iterations: usize,
    /// Wall-clock limit in seconds (checked at the solver's residual
    /// checks, every `check_every` iterations).
    pub time_limit: f64,
    /// PGS: depth of the Anderson mixing (`SolverSettings::anderson`).
    pub anderson: usize,
    /// A second method for a problem the first leaves unsolved, from the
    /// first's answer, with its own `time_limit` ([`solver::solve`]).
    pub fallback: Option<SolverMethod>,
    /// The residual the solver stops on. Siconos' relative error (the
    /// default) makes figures compare with Siconos'; a run's own measure
    /// ([`ResidualMeasure::Weighted`] unless its scene says otherwise)
    /// reproduces the test a run applied to a problem it dumped
    /// (`repose run --dump-problem`). Where it is not Siconos', `converged`
    /// is the solver's own test and `error_*` stay Siconos' error.
    pub measure: ResidualMeasure,
}

/// APGD, then the interior point where it stops short; 10⁻⁶, 100,000
/// iterations, 60 s each.
impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            method: SolverMethod::Apgd,
            tolerance: 1e-6,
            max_iterations: 100_000,
            time_limit: 60.0,
            anderson: crate::solver::pgs::ANDERSON_DEPTH,
            fallback: Some(SolverMethod::InteriorPoint),
            measure: ResidualMeasure::Siconos,
        }
    }
}

/// The outcome of one solve: one row of the `--all` table.
#[derive(Clone, Debug, Serialize)]
pub struct SolveReport {
    /// The problem (file name).
    pub problem: String,
    /// 3 (Coulomb) or 5 (rolling friction).
    pub dim: usize,
    /// Number of contacts.
    pub contacts: usize,
    /// The method, `first+fallback` where a fallback was set.
    pub solver: String,
    /// Iterations performed (the first method's where a fallback ran).
    pub iterations: usize,
    /// The fallback's iterations where it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_iterations: Option<usize>,
    /// Wall-clock seconds of the solve (reading excluded).
    pub seconds: f64,
    /// Absolute Siconos error ‖r − Π_K(r − (u + g(u)))‖.
    pub error_abs: f64,
    /// Relative Siconos error (absolute ÷ max(‖q‖, ‖r‖, ‖u‖)).
    pub error_rel: f64,
    /// Whether the relative error reached the tolerance (with a measure
    /// other than Siconos', [`SolveOptions::measure`]: whether the
    /// solver's own residual did).
    pub converged: bool,
    /// The solver's own relative residual at the end, in the measure it
    /// stopped on ([`SolveOptions::measure`]; NaN where none was computed).
    pub residual: f64,
    /// Whether the time limit stopped the solve.
    pub timed_out: bool,
    /// Why the file could not be read or solved at all (`--all` goes on
    /// to the next): unreadable, refused by the method, or Lemke's ray;
    /// absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_error: Option<String>,
}

impl SolveReport {
    /// The row of a file that could not be read: not solved, and why.
    pub fn unreadable(name: &str, why: String) -> Self {
        SolveReport {
            read_error: Some(why),
            ..Self::unsolved(name, 0, 0, "-".to_string())
        }
    }

    /// A row not (yet) solved: no iterations, errors NaN.
    fn unsolved(name: &str, dim: usize, contacts: usize, solver: String) -> Self {
        SolveReport {
            problem: name.to_string(),
            dim,
            contacts,
            solver,
            iterations: 0,
            fallback_iterations: None,
            seconds: 0.0,
            error_abs: f64::NAN,
            error_rel: f64::NAN,
            residual: f64::NAN,
            converged: false,
            timed_out: false,
            read_error: None,
        }
    }
}

/// A method of `repose solve`: one of the iterative solvers, or Lemke's
/// method on the faceted LCP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolveMethod {
    /// An iterative solver of the cone complementarity problem.
    Iterative(SolverMethod),
    /// Lemke's method on the pyramid LCP of this many directions.
    Lemke {
        /// Directions of the friction polygon (≥ 3).
        directions: usize,
    },
}

impl std::str::FromStr for SolveMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "lemke" {
            return Ok(SolveMethod::Lemke {
                directions: LEMKE_DIRECTIONS,
            });
        }
        SolverMethod::from_name(s)
            .map(SolveMethod::Iterative)
            .ok_or_else(|| {
                let names: Vec<&str> = SolverMethod::ALL.iter().map(|m| m.name()).collect();
                format!("unknown method {s:?}; one of {}, lemke", names.join(", "))
            })
    }
}

/// Directions of `lemke`'s friction polygon unless `--directions` says.
pub const LEMKE_DIRECTIONS: usize = 8;

/// The largest faceted LCP `lemke` poses (n (k + 2) unknowns): its dense
/// tableau and O(size²) pivots take seconds here at this size.
pub const LEMKE_MAX_UNKNOWNS: usize = 2000;

/// Why `lemke` does not take a problem (`None`: it does).
pub fn lemke_refuses(p: &SiconosProblem, directions: usize) -> Option<String> {
    if p.dim != 3 {
        return Some(format!(
            "lemke solves 3-D Coulomb problems (d = 3); this one has d = {}",
            p.dim
        ));
    }
    if p.law != crate::material::FrictionLaw::DeSaxce {
        return Some(
            "lemke's faceted LCP poses Coulomb's law (De Saxcé's); this problem is posed with the associated law".into(),
        );
    }
    let unknowns = p.n_contacts * (directions + 2);
    if unknowns > LEMKE_MAX_UNKNOWNS {
        return Some(format!(
            "the faceted LCP of {} contacts at {directions} directions has {unknowns} unknowns, above the {LEMKE_MAX_UNKNOWNS} of a dense Lemke solve",
            p.n_contacts
        ));
    }
    None
}

/// Solves `p` by Lemke's method on its pyramid LCP of `directions`
/// directions (module docs); refused problems ([`lemke_refuses`]) and rays
/// are rows that say so.
pub fn solve_lemke(
    p: &SiconosProblem,
    name: &str,
    directions: usize,
    tolerance: f64,
) -> SolveReport {
    let mut row =
        SolveReport::unsolved(name, p.dim, p.n_contacts, format!("lemke (k={directions})"));
    if let Some(why) = lemke_refuses(p, directions) {
        row.read_error = Some(why);
        return row;
    }
    let t0 = Instant::now();
    let (m, q) = crate::lcp::pyramid_lcp(&p.w.to_dense(), &p.q, &p.mu, directions);
    let outcome = crate::lcp::lemke(&m, &q, 100 * q.len());
    row.seconds = t0.elapsed().as_secs_f64();
    match outcome {
        crate::lcp::LemkeOutcome::Solved { z, pivots, .. } => {
            let r = crate::lcp::pyramid_impulses(&z, p.n_contacts, directions);
            let err = p.error(&r);
            row.iterations = pivots;
            row.error_abs = err.abs;
            row.error_rel = err.rel;
            row.converged = err.rel <= tolerance;
        }
        crate::lcp::LemkeOutcome::Ray { pivots, entering } => {
            row.iterations = pivots;
            row.read_error = Some(format!("ray termination: {entering} could not enter"));
        }
        crate::lcp::LemkeOutcome::PivotLimit { pivots } => {
            row.iterations = pivots;
            row.read_error = Some(format!("stopped at the pivot limit ({pivots})"));
        }
    }
    row
}

/// Solves `p` (named `name` in the report) from zero reactions.
pub fn solve_problem(p: &SiconosProblem, name: &str, o: &SolveOptions) -> SolveReport {
    let mut op = p.to_delassus();
    let mut gamma: Vec<Vec6> = vec![[0.0; 6]; p.n_contacts];
    let mut ws = Workspace::default();
    let t0 = Instant::now();
    // One call: a solve stopped by its deadline returns at a residual
    // check, so the limit is overshot by at most `check_every` iterations,
    // and the iterate never restarts the method's state (momentum, step
    // sizes, Anderson history) as a split into calls would.
    let limit = std::time::Duration::try_from_secs_f64(o.time_limit).ok();
    let s = SolverSettings {
        method: o.method,
        tolerance: o.tolerance,
        max_iterations: o.max_iterations,
        residual: o.measure,
        warm_start: true,
        anderson: o.anderson,
        // (A limit that is not a non-negative number of seconds the clock
        // can hold sets none.) The fallback, if any, gets as long again.
        deadline: limit.and_then(|d| t0.checked_add(d)),
        fallback: o.fallback,
        fallback_time_limit: limit,
        ..Default::default()
    };
    let stats = solver::solve(&mut op, &mut gamma, &s, &mut ws);
    let seconds = t0.elapsed().as_secs_f64();
    let err = p.error(&p.extract(&gamma));
    SolveReport {
        problem: name.to_string(),
        dim: p.dim,
        contacts: p.n_contacts,
        solver: method_label(o.method, o.fallback),
        iterations: stats.iterations,
        fallback_iterations: stats.fallback_iterations,
        seconds,
        error_abs: err.abs,
        error_rel: err.rel,
        converged: match o.measure {
            ResidualMeasure::Siconos => err.rel <= o.tolerance,
            _ => stats.converged,
        },
        residual: stats.residual_rel,
        timed_out: stats.timed_out,
        read_error: None,
    }
}

/// The `solver` column of a solve: the method, or `first+fallback`.
pub fn method_label(method: SolverMethod, fallback: Option<SolverMethod>) -> String {
    match fallback.filter(|&f| f != method) {
        Some(f) => format!("{}+{}", method.name(), f.name()),
        None => method.name().to_string(),
    }
}

/// Every problem under `dir` ([`problem_files`]), each by every method
/// alone (with `options`' settings), then by `chain`'s method with its
/// fallback when one is given, then by Lemke's method where it applies (a
/// 3-D Coulomb problem small enough for a dense tableau, with `directions`
/// directions): the rows of `repose solve --all`. A file that cannot be
/// read is a row of its own and the others go on; a directory that cannot
/// be listed or holds no `.dat` file is an error that names it.
pub fn solve_all(
    dir: &Path,
    chain: Option<(SolverMethod, SolverMethod)>,
    directions: usize,
    options: &SolveOptions,
) -> Result<Vec<SolveReport>, String> {
    let files = problem_files(dir).map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
    if files.is_empty() {
        return Err(format!("{}: no .dat files found", dir.display()));
    }
    let mut rows = Vec::new();
    for f in files {
        let name = problem_name(dir, &f);
        let p = match SiconosProblem::read(&f) {
            Ok(p) => p,
            Err(e) => {
                log::warn!("{name}: cannot read: {e}");
                rows.push(SolveReport::unreadable(&name, e.to_string()));
                continue;
            }
        };
        let alone = SolverMethod::ALL.iter().map(|&m| (m, None));
        for (method, fallback) in alone.chain(chain.map(|(m, f)| (m, Some(f)))) {
            let o = SolveOptions {
                method,
                fallback,
                ..options.clone()
            };
            let r = solve_problem(&p, &name, &o);
            log::info!(
                "{name}: {}: {} iterations, {:.3} s, relative error {:.2e}",
                r.solver,
                r.iterations,
                r.seconds,
                r.error_rel
            );
            rows.push(r);
        }
        if lemke_refuses(&p, directions).is_none() {
            rows.push(solve_lemke(&p, &name, directions, options.tolerance));
        }
    }
    Ok(rows)
}

/// The problems of `rows` that no row solved, in the rows' order.
pub fn unsolved(rows: &[SolveReport]) -> Vec<&str> {
    let mut problems: Vec<&str> = rows.iter().map(|r| r.problem.as_str()).collect();
    problems.dedup();
    problems
        .into_iter()
        .filter(|p| !rows.iter().any(|r| r.problem == *p && r.converged))
        .collect()
}

/// The `.dat` files under `dir` (recursively), sorted by path.
pub fn problem_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let path = e?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "dat") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The name of a problem file in tables: its path relative to `dir`.
pub fn problem_name(dir: &Path, file: &Path) -> String {
    file.strip_prefix(dir)
        .unwrap_or(file)
        .to_string_lossy()
        .into_owned()
}

/// Formats reports as an aligned text table.
pub fn table(rows: &[SolveReport]) -> String {
    let mut s = format!(
        "{:<44} {:>3} {:>8} {:<19} {:>11} {:>9} {:>10} {:>10}  {}\n",
        "problem", "d", "contacts", "solver", "iter", "seconds", "abs error", "rel error", "solved"
    );
    for r in rows {
        // A fallback's iterations after the first method's: "2000+1817".
        let iter = match r.fallback_iterations {
            Some(f) => format!("{}+{f}", r.iterations),
            None => r.iterations.to_string(),
        };
        s += &format!(
            "{:<44} {:>3} {:>8} {:<19} {:>11} {:>9.3} {:>10.2e} {:>10.2e}  {}\n",
            r.problem,
            r.dim,
            r.contacts,
            r.solver,
            iter,
            r.seconds,
            r.error_abs,
            r.error_rel,
            match &r.read_error {
                Some(why) if r.solver == "-" => format!("no (cannot read: {why})"),
                Some(why) => format!("no ({why})"),
                None if r.converged => "yes".to_string(),
                None if r.timed_out => "no (time limit)".to_string(),
                None => "no".to_string(),
            }
        );
    }
    s
}
