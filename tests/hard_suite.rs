//! The hard suite (`tests/data/hard/`, README there): contact problems that
//! repose's own piles pose where the solvers stop at their caps in a run,
//! written by `repose run --dump-problem`. Every file reads as the problem
//! the README says, and APGD — the CPU's default for piles — solves each
//! one it is known to solve to a Siconos relative error of 1e-6 from zero,
//! and so does the interior-point method on the associated problems.

use std::path::{Path, PathBuf};

use repose::material::FrictionLaw;
use repose::problem::Vec6;
use repose::siconos::SiconosProblem;
use repose::solver::{self, ResidualMeasure, SolverMethod, SolverSettings, Workspace};

fn path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hard")
        .join(name)
}

/// (file, law, contacts) as the README lists them.
const SUITE: [(&str, FrictionLaw, usize); 11] = [
    (
        "seed001_mu0.1_mur0.1_step06000.dat",
        FrictionLaw::DeSaxce,
        371,
    ),
    (
        "seed001_mu0.3_mur0.1_step06000.dat",
        FrictionLaw::DeSaxce,
        398,
    ),
    (
        "seed001_mu0.3_mur0.1_step12000.dat",
        FrictionLaw::DeSaxce,
        735,
    ),
    (
        "seed001_mu0.3_mur1_step06000.dat",
        FrictionLaw::DeSaxce,
        213,
    ),
    (
        "seed001_mu0.3_mur1_step12000.dat",
        FrictionLaw::DeSaxce,
        487,
    ),
    ("seed001_mu1_mur1_step06000.dat", FrictionLaw::DeSaxce, 184),
    ("seed001_mu1_mur1_step12000.dat", FrictionLaw::DeSaxce, 400),
    ("seed000_rho0.01_step200.dat", FrictionLaw::Associated, 732),
    ("seed000_rho0.01_step300.dat", FrictionLaw::Associated, 788),
    ("small_rho_half_r_step400.dat", FrictionLaw::Associated, 554),
    ("tall_column_step100.dat", FrictionLaw::Associated, 480),
];

#[test]
fn every_hard_problem_reads_as_the_readme_says() {
    for (name, law, contacts) in SUITE {
        let p = SiconosProblem::read(&path(name)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.dim, 6, "{name}: d");
        assert_eq!(p.law, law, "{name}: law");
        assert_eq!(p.n_contacts, contacts, "{name}: contacts");
        assert!(
            p.q.iter().chain(&p.w.blocks).all(|x| x.is_finite()),
            "{name}: non-finite data"
        );
        assert!(
            p.mu_r.iter().any(|&r| r > 0.0),
            "{name}: no rolling friction"
        );
    }
}

/// Solves `name` with APGD from zero impulses, at most `cap` iterations,
/// to a Siconos relative error of 1e-6, and checks that error
/// independently in the file's own d-space.
fn solves_with_apgd(name: &str, cap: usize) {
    solves_with(SolverMethod::Apgd, name, cap);
}

fn solves_with(method: SolverMethod, name: &str, cap: usize) {
    let p = SiconosProblem::read(&path(name)).unwrap_or_else(|e| panic!("{e}"));
    let mut op = p.to_delassus();
    let mut gamma: Vec<Vec6> = vec![[0.0; 6]; p.n_contacts];
    let s = SolverSettings {
        method,
        tolerance: 1e-6,
        max_iterations: cap,
        residual: ResidualMeasure::Siconos,
        ..Default::default()
    };
    let stats = solver::solve(&mut op, &mut gamma, &s, &mut Workspace::default());
    let err = p.error(&p.extract(&gamma));
    assert!(
        stats.converged && err.rel <= 1.0001e-6,
        "{name}: {method} reached a relative error of {:.3e} (solver's own measure {:.3e}) in {} \
         iterations (cap {cap}), expected ≤ 1e-6",
        err.rel,
        stats.residual_rel,
        stats.iterations
    );
}

macro_rules! apgd_solves {
    ($($test:ident => $file:literal, $cap:literal;)*) => {$(
        #[test]
        fn $test() {
            solves_with_apgd($file, $cap);
        }
    )*};
}

// Caps: about twice the iterations measured when the suite was made. Not in
// the list: seed001_mu1_mur1_step06000.dat, which no method solves to 1e-6
// yet (APGD stalls near 1e-2, PGS near 1e-4: README, "Hard problems").
apgd_solves! {
    apgd_solves_seed001_mu01_mur01_at_6s => "seed001_mu0.1_mur0.1_step06000.dat", 6000;
    apgd_solves_seed001_mu03_mur01_at_6s => "seed001_mu0.3_mur0.1_step06000.dat", 20000;
    apgd_solves_seed001_mu03_mur01_at_12s => "seed001_mu0.3_mur0.1_step12000.dat", 20000;
    apgd_solves_seed001_mu03_mur1_at_6s => "seed001_mu0.3_mur1_step06000.dat", 12000;
    apgd_solves_seed001_mu03_mur1_at_12s => "seed001_mu0.3_mur1_step12000.dat", 6000;
    apgd_solves_seed001_mu1_mur1_at_12s => "seed001_mu1_mur1_step12000.dat", 12000;
    apgd_solves_seed000_gravel_at_1s => "seed000_rho0.01_step200.dat", 30000;
    apgd_solves_seed000_gravel_at_1_5s => "seed000_rho0.01_step300.dat", 60000;
    apgd_solves_small_pile_at_rho_half_r => "small_rho_half_r_step400.dat", 120000;
    apgd_solves_tall_column => "tall_column_step100.dat", 15000;
}

// The interior-point method (associated law only) on the associated
// problems, within 60 Newton steps (19–42 measured). Not in the list:
// seed000_rho0.01_step300.dat, where it stops at 2.3e-6 (README).
#[test]
fn interior_point_solves_the_associated_hard_problems() {
    for name in [
        "seed000_rho0.01_step200.dat",
        "small_rho_half_r_step400.dat",
        "tall_column_step100.dat",
    ] {
        solves_with(SolverMethod::InteriorPoint, name, 60);
    }
}
