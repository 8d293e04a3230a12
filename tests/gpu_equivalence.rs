//! The GPU solver (`shaders/jacobi.wgsl` driven by `repose::gpu::jacobi`)
//! against its CPU f32 mirror (`repose::solver::jacobi_f32`) and both against
//! the f64 reference (`repose::solver::jacobi`).
//!
//! The two f32 solvers read the same packed records and are meant to run the
//! same operations in the same order, so they are compared tightly, iterate
//! for iterate; the f32 solvers and the f64 reference are compared where the
//! maths says they must agree (converged body velocities, which are unique,
//! seed 000 Theorem 2), to a tolerance derived from the measured residuals.
//!
//! Each property has one generic test body taking the f32 solver under test
//! ([`Solver32`]) and thin wrappers, `cpu_f32` and `gpu`, made by
//! [`for_each_f32_solver!`]. The GPU wrappers run only with an adapter
//! ([`context_for_tests`]: a visible skip without one, a failure when
//! `REPOSE_REQUIRE_GPU` is set). Where a body compares "the solver under
//! test" with the mirror, the `cpu_f32` wrapper compares the mirror with a
//! second run of itself, which must then agree bit for bit (it checks the
//! harness and the mirror's own determinism).
//!
//! # Tolerances
//!
//! Each tolerance is justified where it is defined: [`F32_REL`] (solver vs
//! mirror, iterate for iterate), [`velocity_bound`] (converged velocities vs
//! f64, derived from the residuals), [`STATS_REL`] (reported residuals),
//! [`TRAJECTORY_REL`] (100 steps, f32 vs f64). Every comparison prints what
//! it measured as an `OBSERVED …` line (run with `--nocapture`).

mod common;

use std::sync::OnceLock;

use glam::DVec3;
use repose::collision::NO_BODY;
use repose::cone;
use repose::gpu::jacobi::{Control, GpuJacobi, Params};
use repose::gpu::{context_for_tests, GpuContext};
use repose::material::ConeCoeffs;
use repose::problem::{tangent_frame, BodyDelassus, ContactProblem, Delassus, Vec6};
use repose::solver::jacobi_f32::{self, JacobiF32Workspace};
use repose::solver::packed::{pack, PackedBody, PackedContact, PackedInertia};
use repose::solver::{jacobi, Workspace};
use repose::solver::{ResidualMeasure, SolveStats, SolverMethod, SolverSettings};
use repose::step::{Backend, GpuState, Stepper};
use repose::world::World;

// ---------------------------------------------------------------------------
// The solvers under test.

/// An f32 solver: the CPU mirror or the GPU.
enum Solver32 {
    CpuF32(JacobiF32Workspace),
    Gpu(Box<GpuState>),
}

/// What an f32 solve returns.
#[derive(Clone, Debug, PartialEq)]
struct Run32 {
    gamma: Vec<[f32; 6]>,
    bodies: Vec<PackedBody>,
    stats: SolveStats,
}

impl Solver32 {
    fn cpu_f32() -> Self {
        Solver32::CpuF32(JacobiF32Workspace::default())
    }

    fn gpu(ctx: GpuContext) -> Self {
        let solver = GpuJacobi::new(&ctx).expect("GPU pipelines");
        Solver32::Gpu(Box::new(GpuState { ctx, solver }))
    }

    fn name(&self) -> String {
        match self {
            Solver32::CpuF32(_) => "cpu-f32".into(),
            Solver32::Gpu(g) => format!("gpu ({})", g.ctx.describe()),
        }
    }

    /// Solves `p` from the warm start `gamma0` (packed as the stepper packs it).
    fn solve_from(&mut self, p: &ContactProblem, gamma0: &[Vec6], s: &SolverSettings) -> Run32 {
        let mut packed = pack(p, gamma0);
        let mut gamma: Vec<[f32; 6]> = gamma0.iter().map(|g| g.map(|x| x as f32)).collect();
        let stats = match self {
            Solver32::CpuF32(ws) => jacobi_f32::solve(&mut packed, &p.csr_slots, &mut gamma, s, ws),
            Solver32::Gpu(g) => g
                .solver
                .solve(&g.ctx, &mut packed, &mut gamma, s)
                .expect("GPU solve"),
        };
        Run32 {
            gamma,
            bodies: packed.bodies,
            stats,
        }
    }

    /// Solves `p` from zero impulses.
    fn solve(&mut self, p: &ContactProblem, s: &SolverSettings) -> Run32 {
        self.solve_from(p, &vec![[0.0; 6]; p.n_contacts()], s)
    }

    /// The stepping backend of this solver.
    fn into_backend(self) -> Backend {
        match self {
            Solver32::CpuF32(_) => Backend::CpuF32,
            Solver32::Gpu(g) => Backend::Gpu(g),
        }
    }
}

/// One module per property with a `cpu_f32` and a `gpu` test calling the
/// generic body with that solver.
macro_rules! for_each_f32_solver {
    ($($(#[$doc:meta])* $name:ident => $body:expr;)*) => {$(
        $(#[$doc])*
        mod $name {
            use super::*;
            #[test]
            fn cpu_f32() {
                ($body)(Solver32::cpu_f32());
            }
            #[test]
            fn gpu() {
                if let Some(ctx) = context_for_tests(concat!(stringify!($name), "::gpu")) {
                    ($body)(Solver32::gpu(ctx));
                }
            }
        }
    )*};
}

/// Fixed iteration count, no residual checks.
fn iterations(k: usize) -> SolverSettings {
    SolverSettings {
        // The unweighted natural map, which the f64 assessment below
        // recomputes (stats_match_mirror covers the weighted one too).
        residual: ResidualMeasure::Contact,
        max_iterations: k,
        tolerance: 0.0,
        ..Default::default()
    }
}

/// The f64 reference from zero impulses: impulses and statistics.
struct Reference {
    gamma: Vec<Vec6>,
    stats: SolveStats,
}

fn solve_f64(p: &ContactProblem, s: &SolverSettings) -> Reference {
    let mut op = BodyDelassus::new(p);
    let mut gamma = vec![[0.0; 6]; p.n_contacts()];
    let stats = jacobi::solve(&mut op, &mut gamma, s, &mut Workspace::default());
    Reference { gamma, stats }
}

// ---------------------------------------------------------------------------
// Comparisons.

fn norm6(x: &[f64; 6]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

fn widen(x: &[f32; 6]) -> Vec6 {
    x.map(|v| v as f64)
}

/// Asserts ‖gotᵢ − wantᵢ‖ ≤ `rel`·maxᵢ ‖wantᵢ‖ for every contact, naming the
/// worst contact and both 6-vectors when not; returns the worst relative
/// difference (printed as an `OBSERVED` line).
fn assert_impulses_close(what: &str, got: &[[f32; 6]], want: &[[f32; 6]], rel: f64) -> f64 {
    assert_eq!(got.len(), want.len(), "{what}: contact counts differ");
    let scale = want
        .iter()
        .chain(got)
        .map(|g| norm6(&widen(g)))
        .fold(0.0, f64::max);
    let (worst, err) = got
        .iter()
        .zip(want)
        .map(|(a, b)| norm6(&std::array::from_fn(|k| a[k] as f64 - b[k] as f64)))
        .enumerate()
        .fold((0, 0.0), |m, (i, e)| if e > m.1 { (i, e) } else { m });
    let observed = if scale > 0.0 { err / scale } else { err };
    eprintln!("OBSERVED {what}: worst impulse difference {observed:.3e} of max‖γ‖ = {scale:.3e} (contact {worst}, {} contacts)", got.len());
    assert!(
        err <= rel * scale,
        "{what}: contact {worst} differs by {err:.3e} > {rel:e}·max‖γ‖ = {:.3e}\n  got  {:?}\n  want {:?}",
        rel * scale,
        got[worst],
        want[worst]
    );
    observed
}

/// Asserts the body velocities agree: linear to `rel`·max|v|, angular to
/// `rel`·max|ω|, naming the worst body; returns the worst relative
/// difference. The maxima run over `got`, `want` and `start`, the velocities
/// the solve started from: the f32 velocities are running sums from there, so
/// their rounding is relative to the largest value they held (a spin braked
/// from 1 rad/s to 10⁻² rad/s keeps the absolute rounding of 1 rad/s).
fn assert_bodies_close(
    what: &str,
    got: &[PackedBody],
    want: &[PackedBody],
    start: &[PackedBody],
    rel: f64,
) -> f64 {
    assert_eq!(got.len(), want.len(), "{what}: body counts differ");
    let mut worst_all = 0.0f64;
    for (part, pick) in [
        (
            "linear velocity",
            (|b: &PackedBody| b.v) as fn(&PackedBody) -> [f32; 4],
        ),
        ("angular velocity", |b: &PackedBody| b.w),
    ] {
        let len = |x: [f32; 4]| (0..3).map(|k| (x[k] as f64).powi(2)).sum::<f64>().sqrt();
        let scale = want
            .iter()
            .chain(got)
            .chain(start)
            .map(|b| len(pick(b)))
            .fold(0.0, f64::max);
        let (worst, err) = got
            .iter()
            .zip(want)
            .map(|(a, b)| {
                let (a, b) = (pick(a), pick(b));
                len([a[0] - b[0], a[1] - b[1], a[2] - b[2], 0.0])
            })
            .enumerate()
            .fold((0, 0.0), |m, (i, e)| if e > m.1 { (i, e) } else { m });
        let observed = if scale > 0.0 { err / scale } else { err };
        worst_all = worst_all.max(observed);
        eprintln!("OBSERVED {what}: worst {part} difference {observed:.3e} of max = {scale:.3e} (body {worst})");
        assert!(
            err <= rel * scale,
            "{what}: {part} of body {worst} differs by {err:.3e} > {rel:e}·max = {:.3e}\n  got  {:?}\n  want {:?}",
            rel * scale,
            got[worst],
            want[worst]
        );
    }
    worst_all
}

/// Solver-vs-mirror tolerance after 1 or K iterations, relative to the
/// largest impulse (or the largest velocity).
///
/// f32 has ε = 2⁻²³ ≈ 1.2·10⁻⁷. The WGSL and the mirror perform the same
/// operations in the same order, but WGSL lets the implementation contract
/// a·b + c into a fused multiply-add and allows 2.5 ULP for division (sqrt:
/// that of 1/inverseSqrt), so the two may differ by a few ULP per operation.
/// One contact update is about a hundred operations ending in a projection
/// that is 1-Lipschitz (the choice of face is discontinuous only at ties,
/// where the closed form is continuous), so after one iteration differences
/// stay at a few 10⁻⁸ to 10⁻⁷ of the largest impulse. Per contact they can
/// be relatively larger where the twist y = Dᵀv + b cancels (|y| ≪ |v|), but
/// then the impulse is small too, hence the scale max‖γᵢ‖ rather than ‖γᵢ‖.
/// The projected Jacobi map is nonexpansive in the B⁻¹ metric (the step
/// scalars bound B^½NB^½ by about 1 and ω = 1), so rounding differences
/// add up over iterations instead of growing geometrically, and they
/// partly cancel (√K). 10⁻⁵ leaves a factor ≥ 10 over what was observed
/// after 100 iterations, while any real mistake (an index, a sign, a
/// coefficient, a missing term) is O(1) of ‖γ‖.
const F32_REL: f64 = 1e-5;

/// The same for APGD. Its extrapolation v = x + β(x − x_prev), β → 1, is not
/// nonexpansive: two summation orders' rounding differences are carried
/// forward with the momentum and grow with it (observed after 100 iterations
/// on the stiff 1,000 pile: 1.8·10⁻⁵ of the largest angular velocity under
/// the associated law, 2.2·10⁻⁵ under De Saxcé's; impulses 3.5–5.5·10⁻⁶).
/// 2·10⁻⁴ keeps a margin of 9 and still catches any O(1) mistake.
const F32_REL_APGD: f64 = 2e-4;

/// Runs `solver` and the mirror for 1 and `k` iterations on `p` and asserts
/// impulses and body velocities agree to [`F32_REL`].
fn assert_matches_mirror(what: &str, solver: &mut Solver32, p: &ContactProblem, k: usize) {
    assert_method_matches_mirror(SolverMethod::Jacobi, what, solver, p, k);
}

/// The f32 solver of `method` against the mirror after 1 and `k` iterations.
fn assert_method_matches_mirror(
    method: SolverMethod,
    what: &str,
    solver: &mut Solver32,
    p: &ContactProblem,
    k: usize,
) {
    let mut mirror = Solver32::cpu_f32();
    let start = pack(p, &vec![[0.0; 6]; p.n_contacts()]).bodies;
    for k in [1, k] {
        let s = SolverSettings {
            method,
            ..iterations(k)
        };
        let got = solver.solve(p, &s);
        let want = mirror.solve(p, &s);
        let label = format!("{what}, {} vs cpu-f32, {k} iteration(s)", solver.name());
        let rel = if method == SolverMethod::Apgd {
            F32_REL_APGD
        } else {
            F32_REL
        };
        assert_impulses_close(&label, &got.gamma, &want.gamma, rel);
        assert_bodies_close(&label, &got.bodies, &want.bodies, &start, rel);
        assert_eq!(got.stats.iterations, k, "{label}: iterations");
        if matches!(solver, Solver32::CpuF32(_)) {
            assert_eq!(
                got, want,
                "{label}: the mirror must repeat itself bit for bit"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// 1. Single contacts in every cone regime.

/// Where the first Jacobi step from γ = 0 lands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Regime {
    /// Strictly inside the cone: the projection changes nothing.
    Inside,
    /// On the cone's surface with these blocks saturated (sliding, spinning,
    /// rolling), the others strictly inside.
    Saturated {
        sliding: bool,
        spinning: bool,
        rolling: bool,
    },
    /// In the polar cone: the contact separates, γ = 0.
    Polar,
}

/// How the contact is held.
#[derive(Clone, Copy, Debug)]
enum Geometry {
    /// One sphere against a kinematic wall (end B = wall, with a bias term).
    Wall,
    /// Two spheres of different sizes, both dynamic.
    Pair,
}

/// A one-contact problem whose first Jacobi step (ω = 1, γ₀ = 0) projects a
/// chosen point x = −B y. The projection works in the scaled coordinates
/// z = (x_f, r·x_t), r = √(b_f/b_t), on the cone (μ, r·σ, r·ρ); the point is
/// given there by its normal component `z0` and the lengths `lens` of its
/// sliding, spinning and rolling blocks (in fixed directions, not along the
/// axes), scaled to impulses of order 10⁻⁴ N s. The body velocities (and on
/// a wall half of the force rows, through the bias) are set so that the
/// twist is y = −x / b row by row, up to rounding.
fn single_contact(geom: Geometry, c: ConeCoeffs, z0: f64, lens: [f64; 3]) -> ContactProblem {
    let r_a: f64 = 0.01;
    let n = DVec3::new(0.3, -0.2, -1.0).normalize();
    let frame = tangent_frame(n);
    let mass_a = 4.0 / 3.0 * std::f64::consts::PI * r_a.powi(3) * 2500.0;
    let inertia_a = 0.4 * mass_a * r_a * r_a;
    let mut p = ContactProblem {
        body_a: vec![0],
        frame: vec![frame],
        arm_a: vec![n * r_a],
        cone: vec![c],
        bias: vec![[0.0; 6]],
        gap: vec![0.0],
        key: vec![0],
        inv_mass: vec![1.0 / mass_a],
        inv_inertia: vec![1.0 / inertia_a],
        ..Default::default()
    };
    match geom {
        Geometry::Wall => {
            p.body_b.push(NO_BODY);
            p.arm_b.push(DVec3::ZERO);
        }
        Geometry::Pair => {
            let r_b: f64 = 0.015;
            let mass_b = 4.0 / 3.0 * std::f64::consts::PI * r_b.powi(3) * 7800.0;
            p.body_b.push(1);
            p.arm_b.push(-n * r_b);
            p.inv_mass.push(1.0 / mass_b);
            p.inv_inertia.push(1.0 / (0.4 * mass_b * r_b * r_b));
        }
    }
    let nb = p.n_bodies();
    p.v_free = vec![DVec3::ZERO; nb];
    p.w_free = vec![DVec3::ZERO; nb];
    p.build_csr();
    let mut scales = Vec::new();
    BodyDelassus::new(&p).jacobi_scales(&mut scales);
    let (bf, bt) = scales[0];
    let r = (bf / bt).sqrt();
    // Block directions: fixed, not axis-aligned.
    let (a1, a3) = (0.7f64, -2.1f64);
    let z = [
        z0,
        lens[0] * a1.cos(),
        lens[0] * a1.sin(),
        -lens[1],
        lens[2] * a3.cos(),
        lens[2] * a3.sin(),
    ];
    // Physical size: impulses of order 10⁻⁴ N s (velocity changes of cm/s).
    let scale = 1e-4;
    let x: Vec6 = std::array::from_fn(|k| scale * if k < 3 { z[k] } else { z[k] / r });
    // y = −x / b per row (ω = 1).
    let y: Vec6 = std::array::from_fn(|k| -x[k] / if k < 3 { bf } else { bt });
    let [fn_, fu, fw] = frame;
    let yf = fn_ * y[0] + fu * y[1] + fw * y[2];
    let yt = fn_ * y[3] + fu * y[4] + fw * y[5];
    match geom {
        Geometry::Wall => {
            // Half of the force rows come from the bias (stabilisation and
            // wall velocity), half from the sphere's velocity:
            // y_f = −(v_A + ω_A × s_A)·R + b, y_t = −ω_A·R.
            p.bias[0][..3].copy_from_slice(&[0.5 * y[0], 0.5 * y[1], 0.5 * y[2]]);
            let w_a = -yt;
            p.w_free[0] = w_a;
            p.v_free[0] = -0.5 * yf - w_a.cross(p.arm_a[0]);
        }
        Geometry::Pair => {
            // A at rest; y_f = v_B + ω_B × s_B, y_t = ω_B.
            p.w_free[1] = yt;
            p.v_free[1] = yf - yt.cross(p.arm_b[0]);
        }
    }
    p
}

/// The regime of γ on the cone `c` (blocks saturated to 10⁻⁹ relative,
/// strictly inside by 10⁻³ relative, anything in between is ambiguous).
fn regime_of(g: &Vec6, c: &ConeCoeffs) -> Option<Regime> {
    let size = norm6(g);
    if size == 0.0 {
        return Some(Regime::Polar);
    }
    assert!(
        cone::is_inside(g, c, 1e-12),
        "γ = {g:?} is outside the cone {c:?}"
    );
    let blocks = [
        (c.mu, g[1].hypot(g[2])),
        (c.sigma, g[3].abs()),
        (c.rho, g[4].hypot(g[5])),
    ];
    let mut sat = [false; 3];
    for (k, &(mu, len)) in blocks.iter().enumerate() {
        let limit = mu * g[0];
        if (len - limit).abs() <= 1e-9 * limit {
            sat[k] = true;
        } else if len > limit * (1.0 - 1e-3) {
            return None;
        }
    }
    Some(if sat == [false; 3] {
        Regime::Inside
    } else {
        Regime::Saturated {
            sliding: sat[0],
            spinning: sat[1],
            rolling: sat[2],
        }
    })
}

/// Every regime: (name, z₀, block lengths as multiples of the scaled
/// coefficients (μ, rσ, rρ), expected regime). A block at 2× its limit with
/// z₀ = 1 is saturated (y₀ = (1 + Σ 2c²)/(1 + Σ c²) < 2); at 0.2× it stays
/// inside (y₀ ≥ 1 > 0.2).
fn regime_cases() -> Vec<(&'static str, f64, [f64; 3], Regime)> {
    let sat = |sliding, spinning, rolling| Regime::Saturated {
        sliding,
        spinning,
        rolling,
    };
    vec![
        ("inside", 1.0, [0.5, 0.5, 0.5], Regime::Inside),
        (
            "sliding face",
            1.0,
            [2.0, 0.2, 0.2],
            sat(true, false, false),
        ),
        (
            "spinning face",
            1.0,
            [0.2, 2.0, 0.2],
            sat(false, true, false),
        ),
        (
            "rolling face",
            1.0,
            [0.2, 0.2, 2.0],
            sat(false, false, true),
        ),
        (
            "sliding+spinning edge",
            1.0,
            [2.0, 2.0, 0.2],
            sat(true, true, false),
        ),
        (
            "sliding+rolling edge",
            1.0,
            [2.0, 0.2, 2.0],
            sat(true, false, true),
        ),
        (
            "spinning+rolling edge",
            1.0,
            [0.2, 2.0, 2.0],
            sat(false, true, true),
        ),
        (
            "all three saturated",
            1.0,
            [2.0, 2.0, 2.0],
            sat(true, true, true),
        ),
        ("polar (separating)", -1.0, [0.1, 0.1, 0.1], Regime::Polar),
    ]
}

fn assert_single_contacts_in_every_regime(mut solver: Solver32) {
    let c = ConeCoeffs {
        mu: 0.5,
        rho: 0.002,
        sigma: 0.001,
    };
    for geom in [Geometry::Wall, Geometry::Pair] {
        for (name, z0, mult, want) in regime_cases() {
            // Lengths relative to the scaled coefficients of this geometry.
            let probe = single_contact(geom, c, 1.0, [0.0; 3]);
            let mut scales = Vec::new();
            BodyDelassus::new(&probe).jacobi_scales(&mut scales);
            let r = (scales[0].0 / scales[0].1).sqrt();
            let lens = [mult[0] * c.mu, mult[1] * r * c.sigma, mult[2] * r * c.rho];
            let p = single_contact(geom, c, z0, lens);
            let what = format!("{geom:?} contact, {name}");

            // The regime, from the f64 reference's first step.
            let f64_1 = solve_f64(&p, &iterations(1));
            let g = f64_1.gamma[0];
            let got = regime_of(&g, &c);
            assert_eq!(
                got,
                Some(want),
                "{what}: the f64 first step γ = {g:?} is not in the intended regime"
            );
            if want == Regime::Polar {
                assert_eq!(g, [0.0; 6], "{what}: a separating contact must give γ = 0");
            }

            // The mirror's first step is the f64 one up to f32 rounding.
            let mirror_1 = Solver32::cpu_f32().solve(&p, &iterations(1));
            let f64_as_f32 = [g.map(|v| v as f32)];
            assert_impulses_close(
                &format!("{what}, cpu-f32 vs f64, 1 iteration"),
                &mirror_1.gamma,
                &f64_as_f32,
                F32_REL,
            );

            assert_matches_mirror(&what, &mut solver, &p, 50);
        }
    }
}

for_each_f32_solver! {
    /// Property 1: hand-built single contacts (sphere on a wall, two
    /// spheres) whose first step lands inside the cone, on each face, on each
    /// edge, on the three-face corner and in the polar cone: the regime is
    /// checked on the f64 result, then the solver matches the mirror after 1
    /// and after 50 iterations.
    single_contact_regimes => assert_single_contacts_in_every_regime;
}

// ---------------------------------------------------------------------------
// 2. Random piles.

fn stiff_pile(n: usize) -> &'static ContactProblem {
    static P1: OnceLock<ContactProblem> = OnceLock::new();
    static P2: OnceLock<ContactProblem> = OnceLock::new();
    let cell = match n {
        1000 => &P1,
        20_000 => &P2,
        _ => unreachable!(),
    };
    cell.get_or_init(|| common::pile_problem(n, 0.001, 0.001))
}

fn assert_pile_matches_mirror(n: usize, mut solver: Solver32) {
    let p = stiff_pile(n);
    eprintln!("pile of {n}: {} contacts", p.n_contacts());
    assert_matches_mirror(&format!("pile of {n}"), &mut solver, p, 100);
}

/// The stiff 1,000-sphere pile posed with De Saxcé's law (the solvers add
/// g(y) to the normal row of the twist before the step and the residual).
fn assert_de_saxce_pile_matches_mirror(mut solver: Solver32) {
    let mut p = stiff_pile(1000).clone();
    p.law = repose::material::FrictionLaw::DeSaxce;
    assert_matches_mirror("De Saxcé pile of 1000", &mut solver, &p, 100);
}

/// APGD (the GPU's: fixed step, restart at checks) on the stiff pile under
/// either law, against the mirror.
fn assert_apgd_pile_matches_mirror(law: repose::material::FrictionLaw, mut solver: Solver32) {
    let mut p = stiff_pile(1000).clone();
    p.law = law;
    let what = format!("APGD, {law:?} pile of 1000");
    assert_method_matches_mirror(SolverMethod::Apgd, &what, &mut solver, &p, 100);
}

for_each_f32_solver! {
    /// Property 2a for APGD: the stiff 1,000-sphere pile, associated law.
    pile_1000_apgd_matches_mirror =>
        |s| assert_apgd_pile_matches_mirror(repose::material::FrictionLaw::Associated, s);
    /// Property 2a for APGD under the De Saxcé law.
    pile_1000_de_saxce_apgd_matches_mirror =>
        |s| assert_apgd_pile_matches_mirror(repose::material::FrictionLaw::DeSaxce, s);
    /// Property 2a: the stiff 1,000-sphere pile, after 1 and 100 iterations.
    pile_1000_matches_mirror => |s| assert_pile_matches_mirror(1000, s);
    /// Property 2a under the De Saxcé law.
    pile_1000_de_saxce_matches_mirror => assert_de_saxce_pile_matches_mirror;
    /// Property 2a: the stiff 20,000-sphere pile, after 1 and 100 iterations.
    pile_20000_matches_mirror => |s| assert_pile_matches_mirror(20_000, s);
}

/// A pile of bodies of other shapes (boxes, ellipsoids and spheres, turned
/// at random on a lattice, then pushed together to 70 % of its spacing, so
/// many pairs overlap) on a floor, with random velocities: the first step's
/// problem, whose bodies carry world inverse inertia tensors.
fn shapes_problem() -> &'static ContactProblem {
    static P: OnceLock<ContactProblem> = OnceLock::new();
    P.get_or_init(|| {
        let text = "Scene(version: 1, time_step: 1e-3, duration: 1.0,
            materials: [(name: \"m\", friction: 0.5, rolling: 0.001, spinning: 0.001, density: 2500.0)],
            spheres: [
                Lattice(origin: (0, 0, 0.0075), count: (6, 6, 2), spacing: 0.0145,
                        shape: Box(half_extents: (0.005, 0.004, 0.003)),
                        random_orientation: true, seed: 1),
                Lattice(origin: (0, 0, 0.0365), count: (6, 6, 2), spacing: 0.0145,
                        shape: Ellipsoid(radii: (0.006, 0.004, 0.003)),
                        random_orientation: true, seed: 2),
                Lattice(origin: (0, 0, 0.0655), count: (6, 6, 2), spacing: 0.0145,
                        radius: 0.0052),
            ],
            boundaries: [Plane(point: (0, 0, 0), normal: (0, 0, 1))])";
        let scene = repose::scene::Scene::from_str(text, "shapes pile", &[]).expect("scene");
        let mut world = scene.build().expect("build");
        let b = &mut world.bodies;
        let mut rng = repose::scene::rng::Rng::new(7);
        for k in 0..b.len() {
            let p = b.pos[k];
            b.pos[k] = DVec3::new(0.7 * p.x, 0.7 * p.y, 0.0035 + 0.7 * (p.z - 0.0075));
            b.vel[k] = DVec3::new(rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05));
            b.omega[k] = DVec3::new(rng.uniform(-5.0, 5.0), rng.uniform(-5.0, 5.0), rng.uniform(-5.0, 5.0));
        }
        let p = common::first_problem(world);
        assert!(p.has_tensors(), "the shapes pile has no inertia tensors");
        assert!(
            p.n_contacts() > 150,
            "shapes pile too sparse: {} contacts",
            p.n_contacts()
        );
        p
    })
}

/// Property 2a for bodies of other shapes: the body pass applies each
/// body's world inverse inertia tensor (the packed records carry 1 for
/// 1/I and a tensor per body), Jacobi and APGD, against the mirror.
fn assert_shapes_match_mirror(mut solver: Solver32) {
    let p = shapes_problem();
    let packed = pack(p, &vec![[0.0; 6]; p.n_contacts()]);
    assert_eq!(packed.inertia.len(), p.n_bodies(), "one tensor per body");
    eprintln!(
        "shapes pile: {} bodies, {} contacts",
        p.n_bodies(),
        p.n_contacts()
    );
    for method in [SolverMethod::Jacobi, SolverMethod::Apgd] {
        let what = format!("{method} shapes pile");
        assert_method_matches_mirror(method, &what, &mut solver, p, 100);
    }
}

for_each_f32_solver! {
    /// Property 2a with inertia tensors: a pile of boxes, ellipsoids and spheres.
    shapes_pile_matches_mirror => assert_shapes_match_mirror;
}

// ---------------------------------------------------------------------------
// 2b. Converged f32 solvers against the f64 reference.

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
/// solutions, seed 000 eq. 42), γ* a solution, y = Nγ + r, y* = Nγ* + r,
/// p = Π^B_C(γ − By) and e = γ − p:
/// * f(γ) − f(γ*) = y*ᵀ(γ − γ*) + ½‖v(γ) − v*‖²_M exactly (N = DᵀM⁻¹D), and
///   y*ᵀ(γ − γ*) ≥ y*ᵀ(q − γ*) − ‖y*‖_B‖γ − q‖_{B⁻¹} ≥ −‖y*‖_B‖γ − q‖_{B⁻¹}
///   for q = Π^B_C γ ∈ C (γ* minimises f over C);
/// * f(γ) − f(γ*) ≤ yᵀ(γ − γ*) (convexity), and the projection inequality
///   (γ − By − p)ᵀB⁻¹(γ* − p) ≤ 0 gives yᵀ(p − γ*) ≤ ‖e‖_{B⁻¹}‖p − γ*‖_{B⁻¹},
///   so yᵀ(γ − γ*) = yᵀ(p − γ*) + yᵀe ≤ ‖e‖_{B⁻¹}(‖p − γ*‖_{B⁻¹} + ‖y‖_B).
///
/// Hence ‖v(γ) − v*‖²_M ≤ 2‖e‖_{B⁻¹}(‖p − γ*‖_{B⁻¹} + ‖y‖_B) + 2‖y*‖_B‖γ − q‖_{B⁻¹}:
/// the velocities are unique (seed 000 Theorem 2) even where the impulses
/// are not, and converge like the square root of the residual. γ* is not
/// known exactly; the f64 reference `star` (1000× tighter) stands in for it.
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

// ---------------------------------------------------------------------------
// 3. Determinism.

impl Solver32 {
    /// Replaces the solver's state by a fresh one (new workspace, or new
    /// pipelines and buffers on the same device).
    fn reset(&mut self) {
        match self {
            Solver32::CpuF32(ws) => *ws = JacobiF32Workspace::default(),
            Solver32::Gpu(g) => g.solver = GpuJacobi::new(&g.ctx).expect("GPU pipelines"),
        }
    }
}

/// Asserts two runs are identical bit for bit, naming the first difference.
fn assert_bit_identical(what: &str, a: &Run32, b: &Run32) {
    let bits6 = |g: &[f32; 6]| g.map(f32::to_bits);
    if let Some(i) = (0..a.gamma.len()).find(|&i| bits6(&a.gamma[i]) != bits6(&b.gamma[i])) {
        panic!(
            "{what}: contact {i} differs between runs\n  first  {:?}\n  second {:?}",
            a.gamma[i], b.gamma[i]
        );
    }
    let bits_body = |x: &PackedBody| (x.v.map(f32::to_bits), x.w.map(f32::to_bits));
    if let Some(k) =
        (0..a.bodies.len()).find(|&k| bits_body(&a.bodies[k]) != bits_body(&b.bodies[k]))
    {
        panic!(
            "{what}: body {k} differs between runs\n  first  {:?}\n  second {:?}",
            a.bodies[k], b.bodies[k]
        );
    }
    assert_eq!(a.stats, b.stats, "{what}: statistics differ between runs");
}

fn assert_runs_are_bit_identical(mut solver: Solver32) {
    let p = stiff_pile(1000);
    let other = common::pile_problem(300, 0.002, 0.0);
    for s in [
        iterations(100),
        SolverSettings {
            // The unweighted natural map, which the f64 assessment below
            // recomputes (stats_match_mirror covers the weighted one too).
            residual: ResidualMeasure::Contact,
            max_iterations: 2000,
            tolerance: 3e-3,
            check_every: 10,
            ..Default::default()
        },
    ] {
        let what = format!(
            "{}, pile of 1000, {} iterations, tolerance {:e}",
            solver.name(),
            s.max_iterations,
            s.tolerance
        );
        let first = solver.solve(p, &s);
        // Another problem in between leaves other data in the buffers.
        solver.solve(&other, &iterations(7));
        let second = solver.solve(p, &s);
        assert_bit_identical(&what, &first, &second);
        solver.reset();
        let third = solver.solve(p, &s);
        assert_bit_identical(&format!("{what}, fresh solver"), &first, &third);
        eprintln!(
            "OBSERVED {what}: three runs bit-identical ({:?})",
            first.stats
        );
    }
}

for_each_f32_solver! {
    /// Property 3: the same solve twice (with another problem in between,
    /// and again on a fresh solver) gives bit-identical impulses, body
    /// velocities and statistics: fixed summation order, no atomics.
    runs_are_bit_identical => assert_runs_are_bit_identical;
}

// ---------------------------------------------------------------------------
// 4. Short trajectories.

fn column_world() -> World {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/column.ron");
    repose::scene::Scene::load(&path, &[])
        .expect("scenes/column.ron")
        .build()
        .expect("column world")
}

/// Steps a copy of `world` `steps` times; returns it with the path bound
/// Σₖ h·maxᵢ|vᵢ|, the farthest any sphere can have travelled.
fn run_steps(world: &World, stepper: &mut Stepper, steps: usize) -> (World, f64) {
    let mut w = world.clone();
    let mut path = 0.0;
    for _ in 0..steps {
        stepper.step(&mut w).expect("finite step");
        path += w.time_step * w.bodies.vel.iter().map(|v| v.length()).fold(0.0, f64::max);
    }
    (w, path)
}

/// The largest distance between the two worlds' sphere centres, and where.
fn max_position_difference(a: &World, b: &World) -> (f64, usize) {
    a.bodies
        .pos
        .iter()
        .zip(&b.bodies.pos)
        .map(|(x, y)| x.distance(*y))
        .enumerate()
        .fold((0.0, 0), |m, (i, d)| if d > m.0 { (d, i) } else { m })
}

/// Trajectory tolerance, as a fraction of the path bound Σₖ h·maxᵢ|vᵢ|.
///
/// Positions are integrated in f64 by every backend, so they differ only
/// through the velocities each step's solve returns. Every backend stops at
/// the default relative residual 10⁻⁶ (or at `max_iterations`), and that
/// residual does not pin the velocities to f32 precision: property 2b
/// measured velocities within ≈2·10⁻⁴ (M-norm, relative) of the exact
/// solution at a residual of 2·10⁻⁶. Two backends can thus differ by some
/// 4·10⁻⁴ of the velocity scale in a step, and by that fraction of the
/// distance travelled over the run, as long as the contact set does not
/// change (100 steps = 0.1 s: the piles do not rearrange). Rounding itself
/// (f32 ε ≈ 10⁻⁷) is far below. 2·10⁻³ leaves a factor of 5; a real bug
/// (a wrong impulse in any step) moves spheres by a sizeable fraction of
/// their path.
const TRAJECTORY_REL: f64 = 2e-3;

fn assert_trajectories_agree(solver: Solver32) {
    let name = solver.name();
    let is_gpu = matches!(solver, Solver32::Gpu(_));
    let mut stepper = Stepper::with_backend(solver.into_backend());
    let steps = 100;
    for (scene, world) in [
        ("column", column_world()),
        ("stiff pile of 200", common::pile_world(200, 0.001, 0.001)),
        (
            "loose pile of 200",
            common::loose_pile_world(200, 0.001, 0.001),
        ),
    ] {
        let (w64, path) = run_steps(&world, &mut Stepper::new(), steps);
        let (w, _) = run_steps(&world, &mut stepper, steps);
        let mut against = vec![("cpu (f64)", w64)];
        if is_gpu {
            against.push((
                "cpu-f32",
                run_steps(&world, &mut Stepper::with_backend(Backend::CpuF32), steps).0,
            ));
        }
        for (other, wo) in against {
            let (d, i) = max_position_difference(&w, &wo);
            eprintln!(
                "OBSERVED {scene}, {steps} steps, {name} vs {other}: max position difference {d:.3e} m = {:.3e} of the path bound {path:.3e} m (body {i})",
                d / path
            );
            assert!(
                d <= TRAJECTORY_REL * path,
                "{scene}, {steps} steps: body {i} ends {d:.3e} m from where {other} puts it (tolerance {TRAJECTORY_REL:e} × path {path:.3e} m)\n  {name}: {:?}\n  {other}: {:?}",
                w.bodies.pos[i],
                wo.bodies.pos[i]
            );
        }
    }
}

for_each_f32_solver! {
    /// Property 4: 100 steps through `Stepper` end at the same positions as
    /// the f64 backend (and the GPU's at the mirror's).
    trajectories_agree => assert_trajectories_agree;
}

// ---------------------------------------------------------------------------
// 5. Solver statistics.

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
const STATS_REL: f64 = 1e-3;

/// The same for APGD, whose body records V(x) are not the running sums of
/// x's own changes but V(v) plus the step, with V(v) itself extrapolated
/// (β → 1) from two earlier records: their rounding (random-walk, but
/// carried with the momentum) moves a residual of 7·10⁻⁷ by 2.6·10⁻³ of
/// itself on the loose 1,000 pile. 10⁻² keeps a margin of 4; a lost or
/// doubled term is O(1).
const STATS_REL_APGD: f64 = 1e-2;

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

// ---------------------------------------------------------------------------
// 6. Layout of the WGSL structs.

/// The scalar kind of a Rust record field, for comparison with WGSL's.
trait Scalar {
    const KIND: naga::ScalarKind;
}
impl Scalar for f32 {
    const KIND: naga::ScalarKind = naga::ScalarKind::Float;
}
impl Scalar for u32 {
    const KIND: naga::ScalarKind = naga::ScalarKind::Uint;
}
impl<T: Scalar, const N: usize> Scalar for [T; N] {
    const KIND: naga::ScalarKind = T::KIND;
}
fn kind_of<T: Scalar>(_: &T) -> naga::ScalarKind {
    T::KIND
}

/// A WGSL struct member as compared: (name, offset, size, scalar kind).
type Member = (String, u32, u32, naga::ScalarKind);

/// A parsed shader with its type layouts.
struct Shader {
    module: naga::Module,
    layouter: naga::proc::Layouter,
}

impl Shader {
    fn parse() -> Self {
        let module = naga::front::wgsl::parse_str(repose::gpu::jacobi::SHADER)
            .unwrap_or_else(|e| panic!("shaders/jacobi.wgsl does not parse: {e}"));
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(module.to_ctx()).expect("WGSL type layouts");
        Shader { module, layouter }
    }

    fn struct_type(&self, name: &str) -> naga::Handle<naga::Type> {
        self.module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no struct {name} in shaders/jacobi.wgsl"))
            .0
    }

    /// (name, offset, size, scalar kind) of each member of struct `name`,
    /// and the struct's size and array stride.
    fn members(&self, name: &str) -> (Vec<Member>, u32, u32) {
        let h = self.struct_type(name);
        let naga::TypeInner::Struct { members, .. } = &self.module.types[h].inner else {
            panic!("WGSL {name} is not a struct");
        };
        let fields = members
            .iter()
            .map(|m| {
                let kind = match self.module.types[m.ty].inner {
                    naga::TypeInner::Scalar(s) | naga::TypeInner::Vector { scalar: s, .. } => {
                        s.kind
                    }
                    ref other => {
                        panic!("WGSL {name}.{:?}: unexpected member type {other:?}", m.name)
                    }
                };
                (
                    m.name.clone().unwrap_or_default(),
                    m.offset,
                    self.layouter[m.ty].size,
                    kind,
                )
            })
            .collect();
        (fields, self.layouter[h].size, self.layouter[h].to_stride())
    }

    /// The value of the WGSL `const` named `name` (a u32 literal).
    fn const_u32(&self, name: &str) -> u32 {
        let (_, c) = self
            .module
            .constants
            .iter()
            .find(|(_, c)| c.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no const {name} in shaders/jacobi.wgsl"));
        match self.module.global_expressions[c.init] {
            naga::Expression::Literal(naga::Literal::U32(v)) => v,
            ref e => panic!("WGSL const {name} is {e:?}, not a u32 literal"),
        }
    }
}

/// Asserts that WGSL struct `$wgsl` and `#[repr(C)]` type `$rust` have the
/// same fields, in order, at the same offsets, of the same sizes and scalar
/// kinds, and the same size (which is also the WGSL array stride).
macro_rules! assert_same_layout {
    ($shader:expr, $wgsl:literal, $rust:ty, [$($field:ident),* $(,)?]) => {{
        let (members, size, stride) = $shader.members($wgsl);
        let zero = <$rust as bytemuck::Zeroable>::zeroed();
        let rust: Vec<Member> = vec![$((
            stringify!($field).to_string(),
            std::mem::offset_of!($rust, $field) as u32,
            std::mem::size_of_val(&zero.$field) as u32,
            kind_of(&zero.$field),
        )),*];
        assert_eq!(
            members, rust,
            "WGSL {} and Rust {}: fields (name, offset, size, kind) differ",
            $wgsl, stringify!($rust)
        );
        assert_eq!(size as usize, std::mem::size_of::<$rust>(), "size of WGSL {} vs Rust {}", $wgsl, stringify!($rust));
        assert_eq!(stride as usize, std::mem::size_of::<$rust>(), "array stride of WGSL {} vs size of Rust {}", $wgsl, stringify!($rust));
        eprintln!("OBSERVED WGSL {} = Rust {}: {} fields, {} bytes", $wgsl, stringify!($rust), members.len(), size);
    }};
}

/// Property 6: every Pod record mirrors its WGSL struct exactly (parsed
/// from shaders/jacobi.wgsl by naga, laid out by naga's WGSL layout rules),
/// the bindings use those structs, and the WGSL constants and workgroup
/// sizes are the Rust ones.
#[test]
fn wgsl_structs_match_rust_records() {
    let shader = Shader::parse();
    assert_same_layout!(
        shader,
        "Contact",
        PackedContact,
        [n, u, arm_a, arm_b, bias, ids]
    );
    assert_same_layout!(shader, "Body", PackedBody, [v, w]);
    // An inertia record is read as a `Body` (from the third region):
    // diag in place of v, off in place of w.
    {
        let (members, size, _) = shader.members("Body");
        let zero = PackedInertia::default();
        let rust: Vec<Member> = vec![
            (
                "v".into(),
                std::mem::offset_of!(PackedInertia, diag) as u32,
                std::mem::size_of_val(&zero.diag) as u32,
                kind_of(&zero.diag),
            ),
            (
                "w".into(),
                std::mem::offset_of!(PackedInertia, off) as u32,
                std::mem::size_of_val(&zero.off) as u32,
                kind_of(&zero.off),
            ),
        ];
        assert_eq!(
            members, rust,
            "WGSL Body vs Rust PackedInertia (diag = v, off = w)"
        );
        assert_eq!(size as usize, std::mem::size_of::<PackedInertia>());
    }
    assert_same_layout!(
        shader,
        "Params",
        Params,
        [
            n_contacts,
            n_bodies,
            omega,
            lambda,
            tolerance,
            check_every,
            max_iterations,
            n_partials,
            law,
            weighted,
            method,
            tensors
        ]
    );
    assert_same_layout!(
        shader,
        "Control",
        Control,
        [
            done,
            checks,
            iterations,
            converged,
            residual_abs,
            residual_rel,
            gamma_norm,
            y_norm,
            theta,
            beta,
            last_rel,
            pad
        ]
    );

    // The bound variables are of those types.
    let m = &shader.module;
    let global = |name: &str| {
        m.global_variables
            .iter()
            .find(|(_, g)| g.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no global {name} in shaders/jacobi.wgsl"))
            .1
    };
    let element = |name: &str| match m.types[global(name).ty].inner {
        naga::TypeInner::Array { base, .. } => base,
        ref t => panic!("WGSL {name} is {t:?}, not an array"),
    };
    assert_eq!(global("params").ty, shader.struct_type("Params"));
    assert_eq!(global("control").ty, shader.struct_type("Control"));
    assert_eq!(element("contacts"), shader.struct_type("Contact"));
    assert_eq!(element("bodies"), shader.struct_type("Body"));

    // Constants and workgroup sizes.
    use repose::gpu::jacobi::{RWG, WG};
    assert_eq!(shader.const_u32("WG"), WG, "WGSL WG vs Rust WG");
    assert_eq!(shader.const_u32("RWG"), RWG, "WGSL RWG vs Rust RWG");
    assert_eq!(
        shader.const_u32("NONE"),
        jacobi_f32::NONE,
        "WGSL NONE vs the mirror's wall marker"
    );
    assert_eq!(
        jacobi_f32::NONE,
        NO_BODY,
        "the packed wall marker is the collision one"
    );
    let red = global("red");
    match m.types[red.ty].inner {
        naga::TypeInner::Array {
            size: naga::ArraySize::Constant(len),
            ..
        } => assert_eq!(
            len.get(),
            RWG,
            "WGSL red[] must hold one entry per residual thread"
        ),
        ref t => panic!("WGSL red is {t:?}"),
    }
    for ep in &m.entry_points {
        let want = match ep.name.as_str() {
            "contact_pass" | "body_pass" | "apgd_contact_pass" | "apgd_body_pass" => WG,
            "residual_pass" | "finalize_check" | "finalize_last" => RWG,
            // One thread: the host dispatches (1, 1, 1).
            "apgd_advance" => 1,
            other => panic!("unexpected entry point {other}: add it to this test"),
        };
        assert_eq!(
            ep.workgroup_size,
            [want, 1, 1],
            "@workgroup_size of {} (the host dispatches groups of {want})",
            ep.name
        );
    }
    eprintln!(
        "OBSERVED WG = {WG}, RWG = {RWG}, NONE = {:#x}; {} entry points checked",
        jacobi_f32::NONE,
        m.entry_points.len()
    );
}
