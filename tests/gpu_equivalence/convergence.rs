//! Converged f32 solvers against the f64 reference. (see the crate docs in `main.rs`).

use super::*;
use crate::stats::{STATS_REL, STATS_REL_APGD};

/// Relative residual the f32 solvers are asked for.
const F32_TOLERANCE: f64 = 2e-6;
/// Relative residual of the f64 reference: 1000× tighter. (Projected Jacobi
/// reaches it on the loose 20,000 pile in about 3,000 iterations, then
/// creeps: 1.2·10⁻⁹ after 6,000.)
const F64_TOLERANCE: f64 = 2e-9;

/// A loose pile and its f64 solution converged to [`F64_TOLERANCE`]
/// (computed once per size and shared by the `cpu_f32` and `gpu` tests).
fn loose_pile(n: usize) -> &'static (ContactProblem, Reference) {
    static P1: OnceLock<(ContactProblem, Reference)> = OnceLock::new();
    static P2: OnceLock<(ContactProblem, Reference)> = OnceLock::new();
    let cell = match n {
        1000 => &P1,
        20_000 => &P2,
        _ => unreachable!(),
    };
    cell.get_or_init(|| {
        let p = common::first_problem(common::loose_pile_world(n, 0.001, 0.001));
        let t = std::time::Instant::now();
        let r = solve_f64(
            &p,
            &SolverSettings {
                // The unweighted natural map, which the f64 assessment below
                // recomputes (stats_match_mirror covers the weighted one too).
                residual: ResidualMeasure::Contact,
                max_iterations: 20_000,
                tolerance: F64_TOLERANCE,
                ..Default::default()
            },
        );
        eprintln!(
            "loose pile of {n}: {} contacts, f64 reference {:?} in {:.1?}",
            p.n_contacts(),
            r.stats,
            t.elapsed()
        );
        assert!(
            r.stats.converged,
            "the f64 reference did not converge: {:?}",
            r.stats
        );
        (p, r)
    })
}

/// ‖(v, ω)‖_M = √(Σ m|v|² + I|ω|²), the kinetic-energy norm (×√2).
fn m_norm(p: &ContactProblem, v: &[DVec3], w: &[DVec3]) -> f64 {
    (0..p.n_bodies())
        .map(|k| v[k].length_squared() / p.inv_mass[k] + w[k].length_squared() / p.inv_inertia[k])
        .sum::<f64>()
        .sqrt()
}

fn diff(a: &[DVec3], b: &[DVec3]) -> Vec<DVec3> {
    a.iter().zip(b).map(|(x, y)| *x - *y).collect()
}

/// An approximate solution γ (any impulses) assessed in f64.
struct Assessed {
    gamma: Vec<Vec6>,
    /// v(γ) = v_free + M⁻¹Dγ and ω(γ).
    v: Vec<DVec3>,
    w: Vec<DVec3>,
    /// The Euclidean relative natural-map residual (what the solvers report).
    residual_rel: f64,
    /// p = Π^B_C(γ − B y), y = Nγ + r: one Jacobi step (ω = λ = 1).
    step: Vec<Vec6>,
    /// ‖γ − p‖_{B⁻¹}: the natural-map residual in the Jacobi metric.
    e: f64,
    /// ‖y‖_B.
    y_b: f64,
    /// ‖γ − Π^B_C γ‖_{B⁻¹}: how far rounding left γ outside the cone.
    outside: f64,
    /// The step scalars (b_f, b_t) per contact.
    scales: Vec<(f64, f64)>,
}

fn assess(p: &ContactProblem, gamma: Vec<Vec6>) -> Assessed {
    let mut op = BodyDelassus::new(p);
    let mut scales = Vec::new();
    op.jacobi_scales(&mut scales);
    let mut y = vec![[0.0; 6]; gamma.len()];
    op.apply(&gamma, &mut y);
    let residual = jacobi::residual(&op, &gamma, &y);
    let scale = repose::problem::norm(&gamma).max(repose::problem::norm(&y));
    // Squared B⁻¹-norm of a contact's 6-vector.
    let sq = |x: &Vec6, (bf, bt): (f64, f64)| {
        (0..6)
            .map(|k| x[k] * x[k] / if k < 3 { bf } else { bt })
            .sum::<f64>()
    };
    let (mut e, mut y_b, mut outside) = (0.0, 0.0, 0.0);
    let mut step = Vec::with_capacity(gamma.len());
    for (i, g) in gamma.iter().enumerate() {
        let (bf, bt) = scales[i];
        let x: Vec6 = std::array::from_fn(|k| g[k] - y[i][k] * if k < 3 { bf } else { bt });
        let pi = cone::project_scaled(&x, &p.cone[i], bf, bt);
        e += sq(&std::array::from_fn(|k| g[k] - pi[k]), scales[i]);
        y_b += (0..6)
            .map(|k| y[i][k] * y[i][k] * if k < 3 { bf } else { bt })
            .sum::<f64>();
        let q = cone::project_scaled(g, &p.cone[i], bf, bt);
        outside += sq(&std::array::from_fn(|k| g[k] - q[k]), scales[i]);
        step.push(pi);
    }
    Assessed {
        gamma,
        v: op.v,
        w: op.w,
        residual_rel: residual / scale,
        step,
        e: e.sqrt(),
        y_b: y_b.sqrt(),
        outside: outside.sqrt(),
        scales,
    }
}

/// Bound on ‖v(γ) − v*‖_M for any impulses γ, from γ's residual in the
/// Jacobi metric B⁻¹ (B = diag(b_f I₃, b_t I₃) per contact, which makes
/// impulses and velocities commensurate: ‖γ‖²_{B⁻¹} and ‖y‖²_B are energies).
///
/// With f(γ) = ½γᵀNγ + rᵀγ (whose minimisers over the cones C are the CCP's
/// solutions, Tasora & Anitescu 2013, eq. 42), γ* a solution, y = Nγ + r,
/// y* = Nγ* + r, p = Π^B_C(γ − By) and e = γ − p:
/// * f(γ) − f(γ*) = y*ᵀ(γ − γ*) + ½‖v(γ) − v*‖²_M exactly (N = DᵀM⁻¹D), and
///   y*ᵀ(γ − γ*) ≥ y*ᵀ(q − γ*) − ‖y*‖_B‖γ − q‖_{B⁻¹} ≥ −‖y*‖_B‖γ − q‖_{B⁻¹}
///   for q = Π^B_C γ ∈ C (γ* minimises f over C);
/// * f(γ) − f(γ*) ≤ yᵀ(γ − γ*) (convexity), and the projection inequality
///   (γ − By − p)ᵀB⁻¹(γ* − p) ≤ 0 gives yᵀ(p − γ*) ≤ ‖e‖_{B⁻¹}‖p − γ*‖_{B⁻¹},
///   so yᵀ(γ − γ*) = yᵀ(p − γ*) + yᵀe ≤ ‖e‖_{B⁻¹}(‖p − γ*‖_{B⁻¹} + ‖y‖_B).
///
/// Hence ‖v(γ) − v*‖²_M ≤ 2‖e‖_{B⁻¹}(‖p − γ*‖_{B⁻¹} + ‖y‖_B) + 2‖y*‖_B‖γ − q‖_{B⁻¹}:
/// the velocities are unique (Tasora & Anitescu 2013, Theorem 2) even where the
/// impulses are not, and converge like the square root of the residual. γ* is
/// not known exactly; the f64 reference `star` (1000× tighter) stands in for
/// it.
fn velocity_bound(a: &Assessed, star: &Assessed) -> f64 {
    let p_to_star = a
        .step
        .iter()
        .zip(&star.gamma)
        .zip(&a.scales)
        .map(|((p, g), &(bf, bt))| {
            (0..6)
                .map(|k| (p[k] - g[k]).powi(2) / if k < 3 { bf } else { bt })
                .sum::<f64>()
        })
        .sum::<f64>()
        .sqrt();
    (2.0 * a.e * (p_to_star + a.y_b) + 2.0 * star.y_b * a.outside).sqrt()
}

fn assert_converges_to_f64(n: usize, solver: Solver32) {
    assert_method_converges_to_f64(SolverMethod::Jacobi, n, solver);
}

fn assert_method_converges_to_f64(method: SolverMethod, n: usize, mut solver: Solver32) {
    let (p, reference) = loose_pile(n);
    let star = assess(p, reference.gamma.clone());
    let what = format!("{method}, loose pile of {n}, {}", solver.name());
    let s = SolverSettings {
        method,
        // The unweighted natural map, which the f64 assessment below
        // recomputes (stats_match_mirror covers the weighted one too).
        residual: ResidualMeasure::Contact,
        max_iterations: 20_000,
        tolerance: F32_TOLERANCE,
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let run = solver.solve(p, &s);
    eprintln!("{what}: {:?} in {:.1?}", run.stats, t.elapsed());
    assert!(
        run.stats.converged && run.stats.residual_rel <= F32_TOLERANCE,
        "{what}: did not reach the relative residual {F32_TOLERANCE:e}: {:?}",
        run.stats
    );
    let a = assess(p, run.gamma.iter().map(widen).collect());
    eprintln!(
        "OBSERVED {what}: relative residual reported {:.4e}, recomputed in f64 {:.4e}; f64 reference reported {:.4e}, recomputed {:.4e}",
        run.stats.residual_rel, a.residual_rel, reference.stats.residual_rel, star.residual_rel
    );
    // The reported residual is the f32 solver's own evaluation of the same
    // quantity, from its f32 running-sum velocities; recomputed in f64 from
    // its impulses it must agree to within [`STATS_REL`]: the velocities
    // differ by ~10⁻⁶ (the drift measured below), which moves a residual of
    // ~10⁻⁶ of the scale by ~10⁻⁴ of itself (observed ≤ 1.1·10⁻⁴).
    let stats_rel = if method == SolverMethod::Apgd {
        STATS_REL_APGD
    } else {
        STATS_REL
    };
    assert!(
        (run.stats.residual_rel - a.residual_rel).abs() <= stats_rel * a.residual_rel,
        "{what}: reported relative residual {:.4e} but {:.4e} recomputed in f64",
        run.stats.residual_rel,
        a.residual_rel
    );
    assert!(
        (reference.stats.residual_rel - star.residual_rel).abs() <= 1e-6 * star.residual_rel,
        "f64 reference: reported relative residual {:.4e} but {:.4e} recomputed",
        reference.stats.residual_rel,
        star.residual_rel
    );

    // Velocities of the impulses against the f64 solution's, to the bound.
    let bound_a = velocity_bound(&a, &star);
    let bound_star = velocity_bound(&star, &star);
    let bound = bound_a + bound_star;
    let v_scale = m_norm(p, &star.v, &star.w);
    let err = m_norm(p, &diff(&a.v, &star.v), &diff(&a.w, &star.w));
    eprintln!(
        "OBSERVED {what}: ‖v(γ) − v₆₄‖_M = {:.3e} of ‖v₆₄‖_M = {v_scale:.3e}; bound from the residuals {:.3e} (f32 {:.3e} + f64 {:.3e})",
        err / v_scale,
        bound / v_scale,
        bound_a / v_scale,
        bound_star / v_scale
    );
    assert!(
        err <= bound,
        "{what}: ‖v(γ) − v₆₄‖_M = {err:.3e} exceeds the bound {bound:.3e} implied by the residuals"
    );

    // The solver's own body velocities (f32 running sums) against v(γ):
    // they differ by the rounding of those sums, a few ε of the velocities
    // per iteration, accumulated over the iterations run (random-walk: √K).
    let f32_vel = |b: &PackedBody, w: bool| {
        let x = if w { b.w } else { b.v };
        DVec3::new(x[0] as f64, x[1] as f64, x[2] as f64)
    };
    let v32: Vec<DVec3> = run.bodies.iter().map(|b| f32_vel(b, false)).collect();
    let w32: Vec<DVec3> = run.bodies.iter().map(|b| f32_vel(b, true)).collect();
    let drift = m_norm(p, &diff(&v32, &a.v), &diff(&w32, &a.w));
    let total = m_norm(p, &diff(&v32, &star.v), &diff(&w32, &star.w));
    let drift_tol = 4.0 * f32::EPSILON as f64 * (run.stats.iterations as f64).sqrt() * v_scale;
    eprintln!(
        "OBSERVED {what}: returned velocities: drift from v(γ) {:.3e}, from v₆₄ {:.3e} (of ‖v₆₄‖_M); drift tolerance {:.3e}",
        drift / v_scale,
        total / v_scale,
        drift_tol / v_scale
    );
    assert!(
        drift <= drift_tol,
        "{what}: returned velocities drifted {drift:.3e} from v(γ) (tolerance {drift_tol:.3e})"
    );
    assert!(
        total <= bound + drift_tol,
        "{what}: returned velocities are {total:.3e} from v₆₄ (bound {:.3e})",
        bound + drift_tol
    );
}

for_each_f32_solver! {
    /// Property 2b: converged on the loose 1,000-sphere pile, the body
    /// velocities agree with the f64 reference's to the residual bound.
    pile_1000_converges_to_f64_velocities => |s| assert_converges_to_f64(1000, s);
    /// Property 2b: the same on the loose 20,000-sphere pile.
    pile_20000_converges_to_f64_velocities => |s| assert_converges_to_f64(20_000, s);
    /// Property 2b for APGD on the loose 1,000-sphere pile.
    pile_1000_apgd_converges_to_f64_velocities =>
        |s| assert_method_converges_to_f64(SolverMethod::Apgd, 1000, s);
}

/// The point of APGD on the f32 backends: on the loose 1,000-sphere pile
/// from zero, to the relative residual 10⁻⁴ (checked every 10 iterations),
/// it needs at least 2.5× fewer iterations than projected Jacobi (measured
/// on cpu-f32: 120 against 410, 3.4×; the GPU's counts may differ by a
/// check or two, its rounding being another).
fn assert_apgd_needs_fewer_iterations(mut solver: Solver32) {
    let (p, _) = loose_pile(1000);
    let run = |solver: &mut Solver32, method| {
        let s = SolverSettings {
            method,
            // Each GPU solve encodes all of them: keep the cap near need.
            max_iterations: 2_000,
            tolerance: 1e-4,
            ..Default::default()
        };
        let r = solver.solve(p, &s);
        assert!(
            r.stats.converged,
            "{method}, {}: {:?}",
            solver.name(),
            r.stats
        );
        r.stats.iterations
    };
    let jacobi = run(&mut solver, SolverMethod::Jacobi);
    let apgd = run(&mut solver, SolverMethod::Apgd);
    eprintln!(
        "OBSERVED {}: to 1e-4 on the loose 1,000 pile, jacobi {jacobi} iterations, apgd {apgd}",
        solver.name()
    );
    assert!(
        5 * apgd <= 2 * jacobi,
        "{}: apgd needs {apgd} iterations to 1e-4, jacobi {jacobi}: expected at least 2.5× fewer",
        solver.name()
    );
}

for_each_f32_solver! {
    /// APGD's iterations against Jacobi's on the same pile.
    apgd_needs_fewer_iterations_than_jacobi => assert_apgd_needs_fewer_iterations;
}
