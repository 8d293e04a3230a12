//! Solver statistics. (see the crate docs in `main.rs`).

use super::*;
use crate::piles::stiff_pile;

/// Agreement of the reported residuals (relative to their value).
///
/// Both solvers evaluate the same f32 natural-map residual on iterates that
/// agree to ~10⁻⁶ of max‖γ‖ (property 2a); the GPU sums the squares in f32
/// by a tree reduction (relative error ≤ log₂(n)·ε ≈ 1.4·10⁻⁶), the mirror in
/// f64. Near convergence the residual is a small difference of large terms,
/// so iterate rounding weighs more: observed ≤ 4·10⁻⁵ (at 10⁻⁶). 10⁻³ keeps
/// a margin of 25 and still catches a lost partial sum or a wrong term
/// (dropping the last of the ten workgroup partials of the 1,000-sphere
/// pile moves the residual by 6.5·10⁻³).
pub(crate) const STATS_REL: f64 = 1e-3;

/// The same for APGD, whose body records V(x) are not the running sums of
/// x's own changes but V(v) plus the step, with V(v) itself extrapolated
/// (β → 1) from two earlier records: their rounding (random-walk, but
/// carried with the momentum) moves a residual of 7·10⁻⁷ by 2.6·10⁻³ of
/// itself on the loose 1,000 pile. 10⁻² keeps a margin of 4; a lost or
/// doubled term is O(1).
pub(crate) const STATS_REL_APGD: f64 = 1e-2;

fn assert_stats_match_mirror(mut solver: Solver32) {
    let loose = common::first_problem(common::loose_pile_world(1000, 0.001, 0.001));
    let stiff = stiff_pile(1000);
    let mut cases: Vec<(&str, &ContactProblem, SolverSettings)> = Vec::new();
    // Both residual measures: the weighted one (the default, impulses
    // against impulses) and the unweighted one.
    for residual in [ResidualMeasure::Weighted, ResidualMeasure::Contact] {
        let with_tolerance = |tolerance, max_iterations| SolverSettings {
            residual,
            max_iterations,
            tolerance,
            check_every: 10,
            ..Default::default()
        };
        cases.extend([
            ("loose pile of 1000", &loose, with_tolerance(1e-6, 5000)),
            ("loose pile of 1000", &loose, with_tolerance(1e-4, 5000)),
            ("stiff pile of 1000", stiff, with_tolerance(3e-3, 5000)),
            (
                "stiff pile of 1000 (not converging)",
                stiff,
                with_tolerance(1e-6, 200),
            ),
        ]);
    }
    let mut mirror = Solver32::cpu_f32();
    for (scene, p, s) in cases {
        let what = format!(
            "{scene}, {:?} residual, tolerance {:e}, {}",
            s.residual,
            s.tolerance,
            solver.name()
        );
        let got = solver.solve(p, &s).stats;
        let want = mirror.solve(p, &s).stats;
        let rel_diff = |a: f64, b: f64| (a - b).abs() / b.abs().max(f64::MIN_POSITIVE);
        eprintln!(
            "OBSERVED {what}: {} iterations (cpu-f32 {}), relative residual {:.6e} (cpu-f32 {:.6e}, differing by {:.2e} of it), converged {} (cpu-f32 {})",
            got.iterations,
            want.iterations,
            got.residual_rel,
            want.residual_rel,
            rel_diff(got.residual_rel, want.residual_rel),
            got.converged,
            want.converged
        );
        for st in [&got, &want] {
            // Each report is consistent with the settings.
            if st.converged {
                assert!(
                    st.residual_rel <= s.tolerance,
                    "{what}: converged at {st:?}"
                );
                assert_eq!(
                    st.iterations % s.check_every,
                    0,
                    "{what}: stopped between checks: {st:?}"
                );
            } else {
                assert_eq!(
                    st.iterations, s.max_iterations,
                    "{what}: stopped early without converging: {st:?}"
                );
                assert!(st.residual_rel > s.tolerance, "{what}: {st:?}");
            }
        }
        if got.iterations == want.iterations && got.converged == want.converged {
            assert!(
                rel_diff(got.residual_rel, want.residual_rel) <= STATS_REL
                    && rel_diff(got.residual_abs, want.residual_abs) <= STATS_REL,
                "{what}: residuals differ by more than {STATS_REL:e}:\n  got  {got:?}\n  want {want:?}"
            );
        } else {
            // Only a near-tie at a check can separate them: both stop at a
            // check (or the end), so they differ by one check interval, and
            // at the earlier stop both residuals sit within rounding of the
            // tolerance (one just below, the other just above).
            assert!(
                got.iterations.abs_diff(want.iterations) <= s.check_every,
                "{what}: iteration counts differ by more than one check interval:\n  got  {got:?}\n  want {want:?}"
            );
            let at = SolverSettings {
                residual: s.residual,
                ..iterations(got.iterations.min(want.iterations))
            };
            for (who, r) in [
                ("solver", solver.solve(p, &at)),
                ("cpu-f32", mirror.solve(p, &at)),
            ] {
                assert!(
                    rel_diff(r.stats.residual_rel, s.tolerance) <= STATS_REL,
                    "{what}: the counts differ ({got:?} vs {want:?}) but at iteration {} the {who}'s residual {:.6e} is not a near-tie with the tolerance",
                    at.max_iterations,
                    r.stats.residual_rel
                );
            }
        }
    }
}

for_each_f32_solver! {
    /// Property 5: with a tolerance (checks every 10 iterations) the solver
    /// reports the mirror's iteration count, convergence and residuals (the
    /// count may differ by one check interval only at a near-tie with the
    /// tolerance, which the test then verifies; it has not happened here).
    stats_match_mirror => assert_stats_match_mirror;
}

/// The weighted residual the f32 solvers report is the f64 solvers'
/// quantity, `solver::weighted_residual` (c = b_f), recomputed in f64 from
/// the f32 impulses. Tolerance [`STATS_REL`], as for the unweighted one in
/// `assert_converges_to_f64`: the f32 running-sum velocities differ from
/// the recomputed ones by ~10⁻⁶ of their scale.
fn assert_weighted_residual_is_the_f64_measure(mut solver: Solver32) {
    let p = common::first_problem(common::loose_pile_world(1000, 0.001, 0.001));
    for k in [50, 400] {
        let what = format!("loose pile of 1000, {k} iterations, {}", solver.name());
        let s = SolverSettings {
            residual: ResidualMeasure::Weighted,
            ..iterations(k)
        };
        let run = solver.solve(&p, &s);
        let gamma: Vec<Vec6> = run.gamma.iter().map(widen).collect();
        let mut op = BodyDelassus::new(&p);
        let mut scales = Vec::new();
        op.jacobi_scales(&mut scales);
        let weights: Vec<f64> = scales.iter().map(|s| s.0).collect();
        let mut y = vec![[0.0; 6]; gamma.len()];
        op.apply(&gamma, &mut y);
        let (abs, scale) = repose::solver::weighted_residual(&op, &gamma, &y, &weights);
        let want = abs / scale;
        let got = run.stats.residual_rel;
        eprintln!("OBSERVED {what}: weighted relative residual reported {got:.6e}, f64 {want:.6e}");
        assert!(
            (got - want).abs() <= STATS_REL * want,
            "{what}: reported weighted residual {got:.6e} but the f64 weighted_residual is {want:.6e}"
        );
    }
}

for_each_f32_solver! {
    /// Property 5b: the weighted residual is the f64 solvers' measure.
    weighted_residual_is_the_f64_measure => assert_weighted_residual_is_the_f64_measure;
}
