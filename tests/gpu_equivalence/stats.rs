//! Solver statistics. (see the crate docs in `main.rs`).

use super::*;
use crate::piles::stiff_pile;

/// f32 unit roundoff ε = 2⁻²⁴ (half of `f32::EPSILON`, the spacing at 1).
const EPS: f64 = f32::EPSILON as f64 / 2.0;

/// Two f32 solvers' relative residuals after the same iterations (solver
/// against mirror, [`residual_bound`]) may differ by this absolute amount, in
/// units of the scale max(‖γ‖, ‖cŷ‖) that the relative residual divides by:
/// 2ε = 2⁻²³ ≈ 1.2·10⁻⁷.
///
/// The residual ‖γ − Π(γ − cŷ)‖ near convergence is a small difference of
/// terms of the scale's size, so rounding moves it by amounts relative to
/// the scale, not to itself. Derivation, with ρ the difference between the
/// two solvers' roundings in one iteration:
///
/// * ‖ρ‖ ≤ ε·scale. Hardware fuses multiply–adds (WGSL allows it; lavapipe
///   and the mirror do not), which changes each product-sum's rounding by
///   at most ε of the product; the roundings are independent across
///   contacts. Measured, the mirror with every product-sum fused against
///   the mirror, after one iteration: ‖Δγ‖ = 1.0ε‖γ‖ on the loose pile
///   (worst contact 2.3ε of the largest impulse), 0.2ε on the stiff one.
/// * The residual sees about one iteration's ρ, not their sum. Near
///   convergence the iteration is affine on its active faces, x ↦ Jx + h,
///   J self-adjoint in the B⁻¹ metric with spectrum in [0, 1) (ω = 1), and
///   the residual is (up to that metric) (I − J)x − h. A rounding made k
///   iterations before the end reaches it as (I − J)Jᵏρ: per eigenvalue μ
///   the gains add up to Σₖ(1 − μ)μᵏ ≤ 1 for a persistent ρ and to
///   √((1 − μ)/(1 + μ)) ≤ 1 for independent ones. The iterates themselves
///   drift apart by much more (a random walk along the slow modes, 4.5·10⁻⁷
///   of the scale after 1,150 fused iterations, 1.1·10⁻⁶ with 1-ulp noise),
///   which the residual does not see, so "drift × Lipschitz constant 2"
///   would allow 10⁻⁶, the whole residual at 10⁻⁶.
/// * Evaluating the residual rounds once more per component, at the
///   contact's scale (γ − fl(γ − cŷ) when Π is the identity): ≤ ε·scale.
///
/// Hence the absolute residuals differ by ‖ΔR‖ ≤ (1 + 1)ε·scale; dividing
/// by the two scales adds their relative difference times r
/// ([`scale_bound`], ≤ 2·10⁻⁵·r). Measured |Δr| in units of the scale:
/// NVIDIA H100 2.1·10⁻⁹ (loose pile, 10⁻⁶: the failure of the former
/// bound, 10⁻³ of r); mirror with fused multiply–adds
/// 1.5·10⁻⁹ at 10⁻⁶, 2.2·10⁻⁹ at 10⁻⁴, 1.9·10⁻⁹ on the stiff pile; a
/// reordered sum in the twist 2.4·10⁻⁹; ±1 ulp of random noise on half of
/// the new impulse components every iteration (1.0ε per iteration, like
/// fusing), eight seeds, ≤ 1.1·10⁻⁸; lavapipe ≤ 1.5·10⁻⁹. 2ε keeps a margin
/// of 10 over the worst of these.
///
/// What it catches: a wrong or doubled term (O(1) of the residual) at every
/// tolerance; a lost workgroup partial, which moves the residual by
/// 0.9–4.1 % of itself on the loose pile at 10⁻⁴ (bound 0.12 %) and
/// 1.1–6.0 % on the stiff pile (bound ≤ 6·10⁻⁵ of it), and the scale by
/// 1.2–5.9 % ([`scale_bound`]: ≤ 2·10⁻⁵) at every tolerance. At 10⁻⁶ this
/// bound is 12 % of the residual: a lost partial moves the residual there
/// by 0.65 % (unweighted) to 4.2 % (weighted), no more than 1-ulp noise
/// does (1.1 %), so no bound on two rounding histories can see it in the
/// residual alone; the scale check does, and so do the same-state
/// comparisons with f64 ([`STATS_REL`], at 2·10⁻⁶ in `convergence`).
const STATS_FLOOR: f64 = 2.0 * EPS;

/// The rounding of the sums, relative to their value (in [`scale_bound`]
/// and so in [`residual_bound`]). The GPU adds the per-contact squares in
/// f32 (8 tree levels per workgroup, a loop over the partials, 8 more
/// levels: ≤ 17 roundings up to 65,536 contacts), the mirror in f64; each
/// per-contact term rounds 6 times; the square roots halve the relative
/// errors, the division adds ε. About 20ε for the residual and the scale
/// together; 32ε = 2⁻¹⁹ ≈ 1.9·10⁻⁶.
const STATS_SUM_REL: f64 = 32.0 * EPS;

/// Bound on |r_solver − r_mirror| for relative residuals of size `r` after
/// `k` iterations: [`scale_bound`]`(k)`·r + [`STATS_FLOOR`].
fn residual_bound(r: f64, k: usize) -> f64 {
    scale_bound(k) * r + STATS_FLOOR
}

/// Bound on the relative difference of the two solvers' scales after `k`
/// iterations. The scale is a norm of the iterates (‖γ‖ or ‖cŷ‖), so it
/// moves by at most their drift: one iteration's rounding difference (about
/// ε of the scale, see [`STATS_FLOOR`]) in a random walk over k iterations,
/// bounded with the same 4·`f32::EPSILON`·√k as the running-sum drift in
/// `convergence` (2·10⁻⁵ at 1,150), plus the sums ([`STATS_SUM_REL`]).
/// Measured: ≤ 6·10⁻⁷ (1-ulp noise), ≤ 9·10⁻⁸ (fused multiply–adds),
/// ≤ 1.2·10⁻⁷ (lavapipe, its f32 sums); a lost partial drops 1.2–5.9 % of
/// the scale.
fn scale_bound(k: usize) -> f64 {
    4.0 * f32::EPSILON as f64 * (k as f64).sqrt() + STATS_SUM_REL
}

/// The scale a report's relative residual divided by (1 where it was not
/// divided, 0 for a zero residual).
fn scale_of(st: &SolveStats) -> f64 {
    if st.residual_rel > 0.0 {
        st.residual_abs / st.residual_rel
    } else {
        0.0
    }
}

/// Agreement of one f32 solver's reported residual with the f64
/// recomputation from its own impulses, relative to the residual
/// ([`assert_weighted_residual_is_the_f64_measure`] here,
/// `assert_converges_to_f64` in `convergence`, at 2·10⁻⁶ there).
///
/// Unlike [`STATS_FLOOR`]'s comparison this evaluates one state twice: the
/// report reads the solver's f32 body records (running sums, drifted from
/// V(γ) by ~10⁻⁶ of the velocities, the drift checked in `convergence`)
/// and adds in f32, the recomputation uses V(γ) in f64. No second rounding
/// history enters, so fused multiply–adds change which roundings occur, not
/// their size. Measured (of the residual): at 2·10⁻⁶ 1.4·10⁻⁴ (mirror),
/// 3.3·10⁻⁵ (mirror with fused multiply–adds), 4.7·10⁻⁵ (lavapipe); here
/// ≤ 2.5·10⁻⁵ (all three); the NVIDIA H100 passed. 10⁻³ keeps a margin of 7
/// and catches a lost workgroup partial (0.65–6 % of the residual, see
/// [`STATS_FLOOR`]) or a wrong term.
pub(crate) const STATS_REL: f64 = 1e-3;

/// The same for APGD, whose body records V(x) are not the running sums of
/// x's own changes but V(v) plus the step, with V(v) itself extrapolated
/// (β → 1) from two earlier records: their rounding (random-walk, but
/// carried with the momentum) moves a residual of 7·10⁻⁷ by 2.6·10⁻³ of
/// itself on the loose 1,000 pile (mirror; lavapipe 1.1·10⁻³, the mirror
/// with fused multiply–adds 3.0·10⁻⁴: as for [`STATS_REL`], one state
/// against itself, which fusing does not widen; the H100 passed). 10⁻² keeps
/// a margin of 4; a lost or doubled term is O(1).
pub(crate) const STATS_REL_APGD: f64 = 1e-2;

/// Asserts two reports after the same iterations agree: relative residuals
/// to [`residual_bound`], scales to [`scale_bound`].
fn assert_reports_agree(what: &str, got: &SolveStats, want: &SolveStats) {
    let k = got.iterations.max(want.iterations);
    let r_diff = (got.residual_rel - want.residual_rel).abs();
    let r_bound = residual_bound(got.residual_rel.max(want.residual_rel), k);
    assert!(
        r_diff <= r_bound,
        "{what}: relative residuals {:.6e} and {:.6e} (cpu-f32) differ by {r_diff:.3e} > {r_bound:.3e} = {:.2e}·r + {STATS_FLOOR:.2e}:\n  got  {got:?}\n  want {want:?}",
        got.residual_rel,
        want.residual_rel,
        scale_bound(k)
    );
    let (s_got, s_want) = (scale_of(got), scale_of(want));
    let s_diff = (s_got - s_want).abs() / s_want.max(f64::MIN_POSITIVE);
    let s_bound = scale_bound(k);
    assert!(
        s_diff <= s_bound,
        "{what}: scales {s_got:.6e} and {s_want:.6e} (cpu-f32) differ by {s_diff:.3e} of it > {s_bound:.3e}:\n  got  {got:?}\n  want {want:?}"
    );
}

fn assert_stats_match_mirror(mut solver: Solver32) {
    let loose = common::first_problem(common::loose_pile_world(1000, 0.001, 0.001));
    let stiff = stiff_pile(1000);
    let mut cases: Vec<(&str, &ContactProblem, SolverSettings)> = Vec::new();
    // Both residual measures: the weighted one (the default, impulses
    // against impulses) and the unweighted one.
    for residual in [ResidualMeasure::Weighted, ResidualMeasure::Contact] {
        let with_tolerance = |tolerance, max_iterations| SolverSettings {
            method: SolverMethod::Jacobi,
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
        let r_diff = (got.residual_rel - want.residual_rel).abs();
        let k = got.iterations.max(want.iterations);
        let r_bound = residual_bound(got.residual_rel.max(want.residual_rel), k);
        let (s_got, s_want) = (scale_of(&got), scale_of(&want));
        let s_bound = scale_bound(k);
        eprintln!(
            "OBSERVED {what}: {} iterations (cpu-f32 {}), relative residual {:.6e} (cpu-f32 {:.6e}, differing by {r_diff:.2e}, {:.2e} of it; bound {r_bound:.2e}), scale {s_got:.6e} (cpu-f32 {s_want:.6e}, differing by {:.2e} of it; bound {s_bound:.2e}), converged {} (cpu-f32 {})",
            got.iterations,
            want.iterations,
            got.residual_rel,
            want.residual_rel,
            rel_diff(got.residual_rel, want.residual_rel),
            rel_diff(s_got, s_want),
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
            assert_reports_agree(&what, &got, &want);
        } else {
            // Only a near-tie at a check can separate them: both stop at a
            // check (or the end), so they differ by one check interval; at
            // the earlier stop the two reports still agree, and their
            // residuals straddle the tolerance (one at or below, the other
            // above), so each lies within residual_bound of it.
            assert!(
                got.iterations.abs_diff(want.iterations) <= s.check_every,
                "{what}: iteration counts differ by more than one check interval:\n  got  {got:?}\n  want {want:?}"
            );
            let at = SolverSettings {
                residual: s.residual,
                ..iterations(got.iterations.min(want.iterations))
            };
            let (got_at, want_at) = (solver.solve(p, &at).stats, mirror.solve(p, &at).stats);
            let what_at = format!(
                "{what}, at iteration {} where the counts ({} and {}) part",
                at.max_iterations, got.iterations, want.iterations
            );
            assert_reports_agree(&what_at, &got_at, &want_at);
            let tie = residual_bound(s.tolerance, at.max_iterations);
            for (who, st) in [("solver", &got_at), ("cpu-f32", &want_at)] {
                let off = (st.residual_rel - s.tolerance).abs();
                assert!(
                    off <= tie,
                    "{what_at}: the {who}'s residual {:.6e} is {off:.3e} from the tolerance {:e}, more than {tie:.3e}: not a near-tie",
                    st.residual_rel,
                    s.tolerance
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
