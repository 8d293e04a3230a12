//! The semismooth Newton method (`src/solver/newton.rs`): its generalized
//! Jacobian is the derivative of its map (the natural map under the
//! associated law, Alart–Curnier's under De Saxcé's) wherever the map is
//! smooth, in every regime of the 6-D cone; near a solution its
//! steps converge quadratically; and it solves Siconos' problems.

use std::path::{Path, PathBuf};

use repose::cone;
use repose::material::{ConeCoeffs, FrictionLaw};
use repose::problem::explicit::ExplicitDelassus;
use repose::problem::{Delassus, Vec6};
use repose::rng::Rng;
use repose::siconos::SiconosProblem;
use repose::solver::newton::{self, NewtonStep};
use repose::solver::{ResidualMeasure, SolverMethod, SolverSettings, Workspace};

/// A problem of `n` contacts with N = GᵀG dense (G random with 4n rows, so
/// N is singular, as a pile's is) and random cones, one of them collapsed
/// to the normal half-line and one with μ alone.
fn random_problem(rng: &mut Rng, n: usize, law: FrictionLaw) -> ExplicitDelassus {
    let m = 6 * n;
    let rows = 4 * n;
    let g: Vec<Vec<f64>> = (0..rows)
        .map(|_| (0..m).map(|_| rng.uniform(-1.0, 1.0)).collect())
        .collect();
    let entry =
        |a: usize, b: usize| (0..rows).map(|k| g[k][a] * g[k][b]).sum::<f64>() / rows as f64;
    let mut op = ExplicitDelassus::default();
    op.law = law;
    op.row_offsets.push(0);
    for i in 0..n {
        for j in 0..n {
            op.cols.push(j);
            op.blocks.push(std::array::from_fn(|r| {
                std::array::from_fn(|c| entry(6 * i + r, 6 * j + c))
            }));
        }
        op.row_offsets.push(op.cols.len());
        op.r.push(std::array::from_fn(|_| rng.uniform(-1.0, 1.0)));
        op.cones.push(match i {
            0 => ConeCoeffs {
                mu: 0.0,
                rho: 0.0,
                sigma: 0.0,
            },
            1 => ConeCoeffs {
                mu: 0.6,
                rho: 0.0,
                sigma: 0.0,
            },
            _ => ConeCoeffs {
                mu: rng.uniform(0.1, 1.0),
                rho: rng.uniform(0.05, 0.5),
                sigma: rng.uniform(0.05, 0.5),
            },
        });
    }
    op
}

/// Which piece of its map contact i's x = z − ỹ lies on. Associated law
/// (the cone's projection): 0 inside the cone, 1 in the polar cone, else
/// 2 plus the bit set of the saturated blocks (1 sliding, 2 spinning, 4
/// rolling). De Saxcé's law (Alart–Curnier's map): 1 separating (x_n ≤
/// 0), else 2 plus the bit set of the blocks outside their balls (so 2
/// is sticking in every block).
fn regimes<D: Delassus>(op: &mut D, gamma: &[Vec6]) -> Vec<usize> {
    let t = newton::scaling(op);
    let mut y = vec![[0.0; 6]; gamma.len()];
    op.apply(gamma, &mut y);
    (0..gamma.len())
        .map(|i| {
            let c = op.cone(i);
            let (tf, tt) = t[i];
            let sc = ConeCoeffs {
                mu: c.mu,
                rho: c.rho * tf / tt,
                sigma: c.sigma * tf / tt,
            };
            let d = [tf, tf, tf, tt, tt, tt];
            let x: Vec6 = std::array::from_fn(|k| gamma[i][k] / d[k] - d[k] * y[i][k]);
            let short = |a: f64, b: f64| a < b * (1.0 - 1e-12);
            let p = match op.law() {
                FrictionLaw::Associated => {
                    if cone::is_inside(&x, &sc, 0.0) {
                        return 0;
                    }
                    cone::project(&x, &sc)
                }
                FrictionLaw::DeSaxce => {
                    if x[0] <= 0.0 {
                        return 1;
                    }
                    newton::alart_curnier(&x, &sc)
                }
            };
            if p.iter().all(|&v| v == 0.0) {
                return 1;
            }
            let mut bits = 0;
            if short(p[1].hypot(p[2]), x[1].hypot(x[2])) {
                bits |= 1;
            }
            if short(p[3].abs(), x[3].abs()) {
                bits |= 2;
            }
            if short(p[4].hypot(p[5]), x[4].hypot(x[5])) {
                bits |= 4;
            }
            2 + bits
        })
        .collect()
}

fn jacobian_matches_finite_differences(law: FrictionLaw) {
    let mut rng = Rng::new(20261127);
    let n = 5;
    // Central differences D(h) = (F(z + hv) − F(z − hv)) / 2h have the
    // truncation error c h² + O(h⁴), so D(h/2) errs by c h²/4 =
    // |D(h) − D(h/2)| / 3 (Richardson): each row is held to
    // |D(h) − D(h/2)| (3× that) plus the rounding of D(h/2), ε·|F|/(h/2)
    // ≈ 2.2e-16·10/5e-6 ≈ 4.4e-10 for the O(1)–O(10) data here: 1e-9
    // relative to |Jv| + 1. (A fixed tolerance does not do: the pieces of
    // F curve on the scale of the blocks' lengths, which can be small.)
    let h = 1e-5;
    let rounding = 1e-9;
    let mut seen = [0usize; 10];
    let (mut checked, mut kinks) = (0, 0);
    for sample in 0..200 {
        let mut op = random_problem(&mut rng, n, law);
        let mut gamma: Vec<Vec6> = (0..n)
            .map(|_| {
                std::array::from_fn(|k| rng.uniform(-1.0, 1.0) + if k == 0 { 0.5 } else { 0.0 })
            })
            .collect();
        if sample % 3 == 0 {
            // Near a sticking answer: γ well inside the cones and
            // r = −Nγ + small, so ŷ is small and x ≈ z lies inside.
            for g in &mut gamma {
                g[0] = 1.0;
                for v in &mut g[1..] {
                    *v *= 0.02;
                }
            }
            let zero_r = std::mem::replace(&mut op.r, vec![[0.0; 6]; n]);
            let mut ng = vec![[0.0; 6]; n];
            op.apply(&gamma, &mut ng);
            op.r = (0..n)
                .map(|i| std::array::from_fn(|k| -ng[i][k] + 0.01 * zero_r[i][k]))
                .collect();
        }
        let t = newton::scaling(&op);
        let v: Vec<f64> = (0..6 * n).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let shifted = |s: f64| -> Vec<Vec6> {
            (0..n)
                .map(|i| {
                    std::array::from_fn(|k| {
                        let d = if k < 3 { t[i].0 } else { t[i].1 };
                        gamma[i][k] + s * d * v[6 * i + k]
                    })
                })
                .collect()
        };
        // A smooth piece around γ: the same regimes at γ ± h v.
        let here = regimes(&mut op, &gamma);
        if regimes(&mut op, &shifted(h)) != here || regimes(&mut op, &shifted(-h)) != here {
            kinks += 1;
            continue;
        }
        let j = newton::jacobian_dense(&mut op, &gamma);
        let mut central = |h: f64| -> Vec<f64> {
            let (fp, fm) = (
                newton::equation(&mut op, &shifted(h)),
                newton::equation(&mut op, &shifted(-h)),
            );
            fp.iter()
                .zip(&fm)
                .map(|(a, b)| (a - b) / (2.0 * h))
                .collect()
        };
        let (d1, d2) = (central(h), central(h / 2.0));
        for row in 0..6 * n {
            let jv: f64 = j[row].iter().zip(&v).map(|(a, b)| a * b).sum();
            let tol = (d1[row] - d2[row]).abs() + rounding * (jv.abs() + 1.0);
            assert!(
                (jv - d2[row]).abs() <= tol,
                "{law:?}, sample {sample}, row {row} (contact {} in regime {}): Jv = {jv:e}, \
                 central differences {:e} (h = {h:e}) and {:e} (h/2): |Jv − D(h/2)| = {:e} > \
                 |D(h) − D(h/2)| + {rounding:e}·(|Jv| + 1) = {tol:e}",
                row / 6,
                here[row / 6],
                d1[row],
                d2[row],
                (jv - d2[row]).abs()
            );
        }
        for r in here {
            seen[r] += 1;
        }
        checked += 1;
    }
    assert!(
        checked >= 150,
        "{law:?}: only {checked} of 200 samples lay inside one smooth piece ({kinks} crossed a kink)"
    );
    // Every regime: (associated) inside and polar, (De Saxcé) separating
    // and sticking in every block; and each block saturated alone and
    // sliding with rolling.
    let first: &[(usize, &str)] = match law {
        FrictionLaw::Associated => &[(0, "inside"), (1, "polar")],
        FrictionLaw::DeSaxce => &[(1, "separating"), (2, "sticking in every block")],
    };
    for &(r, what) in first.iter().chain(&[
        (3, "sliding saturated"),
        (4, "spinning saturated"),
        (6, "rolling saturated"),
        (7, "sliding and rolling saturated"),
    ]) {
        assert!(
            seen[r] > 0,
            "{law:?}: no sampled contact was {what} (regime counts {seen:?})"
        );
    }
}

#[test]
fn jacobian_is_the_derivative_of_the_natural_map_in_every_cone_regime_associated() {
    jacobian_matches_finite_differences(FrictionLaw::Associated);
}

#[test]
fn jacobian_is_the_derivative_of_alart_curniers_map_in_every_regime_de_saxce() {
    jacobian_matches_finite_differences(FrictionLaw::DeSaxce);
}

fn siconos(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/siconos")
        .join(name)
}

/// The Newton steps of a solve from zero to 1e-14, with the file's law
/// (De Saxcé's for Siconos' problems).
fn trace_of(file: &str) -> Vec<NewtonStep> {
    let p = SiconosProblem::read(&siconos(file)).unwrap();
    let mut op = p.to_delassus();
    let mut gamma = vec![[0.0; 6]; p.n_contacts];
    let s = SolverSettings {
        method: SolverMethod::Newton,
        tolerance: 1e-14,
        max_iterations: 100,
        residual: ResidualMeasure::Siconos,
        ..Default::default()
    };
    let mut steps = Vec::new();
    newton::solve_traced(
        &mut op,
        &mut gamma,
        &s,
        &mut Workspace::default(),
        &mut |st| steps.push(*st),
    );
    steps
}

/// Near the solution each full step squares the residual: once ‖F‖ is
/// below a tenth of its start, every step but the last (which meets the
/// rounding floor) has ‖F_{k+1}‖ ≤ C ‖F_k‖² with C = 10 / ‖F_0‖ (in the
/// units of F; a linearly converging method at rate q would need
/// ‖F_k‖ ≤ ‖F_0‖ / (10 q) to pass, i.e. fail it at the next step).
fn converges_quadratically(file: &str) {
    let steps = trace_of(file);
    let ratios: Vec<String> = steps
        .iter()
        .map(|s| format!("{:.2e}", s.merit_after / s.merit_before.powi(2)))
        .collect();
    let f0 = steps[0].merit_before;
    let floor = 1e-13 * f0;
    let last = steps.last().unwrap().merit_after;
    assert!(
        last <= floor.max(1e-300) * 1e3,
        "{file}: ‖F‖ went from {f0:e} to {last:e} in {} steps (ratios ‖F_k+1‖/‖F_k‖²: {ratios:?})",
        steps.len()
    );
    let local: Vec<&NewtonStep> = steps
        .iter()
        .filter(|s| s.merit_before <= 0.1 * f0 && s.merit_after > floor)
        .collect();
    assert!(
        local.len() >= 2,
        "{file}: only {} steps in the local phase (ratios: {ratios:?})",
        local.len()
    );
    for s in &local {
        assert!(
            s.merit_after <= 10.0 / f0 * s.merit_before.powi(2),
            "{file}: step {}: ‖F‖ {:e} → {:e}, not quadratic (C = 10/‖F_0‖ = {:e}; ratios \
             ‖F_k+1‖/‖F_k‖² per step: {ratios:?})",
            s.iteration,
            s.merit_before,
            s.merit_after,
            10.0 / f0
        );
    }
}

#[test]
fn converges_quadratically_near_the_solution() {
    converges_quadratically("fc3d/NESpheres_30_1.dat");
    converges_quadratically("rfc3d/RFC3D_cube_1.dat");
}
