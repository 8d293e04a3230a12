//! The GPU solver (`shaders/jacobi.wgsl` driven by `repose::gpu::jacobi`)
//! against its CPU f32 mirror (`repose::solver::jacobi_f32`) and both against
//! the f64 reference (`repose::solver::jacobi`).
//!
//! The two f32 solvers read the same packed records and are meant to run the
//! same operations in the same order, so they are compared tightly, iterate
//! for iterate; the f32 solvers and the f64 reference are compared where the
//! maths says they must agree (converged body velocities, which are unique,
//! Tasora & Anitescu 2013, Theorem 2), to a tolerance derived from the
//! measured residuals.
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
//! mirror, iterate for iterate), [`convergence::velocity_bound`] (converged velocities vs
//! f64, derived from the residuals), [`stats::STATS_REL`] (reported residuals),
//! [`trajectories::TRAJECTORY_REL`] (100 steps, f32 vs f64). Every comparison prints what
//! it measured as an `OBSERVED …` line (run with `--nocapture`).
//!
//! # Files
//!
//! This file holds the solvers under test and the comparisons; one module
//! per group of properties:
//!
//! | module | properties |
//! |---|---|
//! | `single_contacts` | 1. hand-built single contacts in every cone regime |
//! | `piles` | 2a. random piles (1,000 and 20,000 spheres, De Saxcé, APGD, other shapes) against the mirror |
//! | `convergence` | 2b. converged f32 solvers against the f64 reference |
//! | `determinism` | 3. repeated runs bit for bit |
//! | `trajectories` | 4. 100-step trajectories, f32 against f64 |
//! | `stats` | 5. the reported iterations and residuals |
//! | `layout` | 6. the WGSL structs against the Rust records |
//! | `batch` | 7. worlds in one batch against the same worlds alone, bit for bit; the loop's cost per world |
//! | `contacts` | 8. the device's contact list against the CPU's on the same positions |
//! | `scan` | 9. the device's prefix scan against its CPU mirror |
//! | `assembly` | 10. the device's contact assembly against the CPU's on the same list |
//! | `warm` | 11. the device's warm starts and stored impulses against the CPU's |
//! | `bodies` | 12. the device's body records and integration against the CPU's |
//! | `chain` | 13. the device stages chained on device buffers against the same stages one at a time |

#[path = "../common/mod.rs"]
mod common;

use std::sync::OnceLock;

use glam::DVec3;
use repose::collision::NO_BODY;
use repose::cone;
use repose::gpu::jacobi::{BatchRecord, Control, GpuJacobi, Params, WorldRecord};
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

/// Fixed iteration count, no residual checks; projected Jacobi unless a
/// test sets `method`.
fn iterations(k: usize) -> SolverSettings {
    SolverSettings {
        method: SolverMethod::Jacobi,
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

mod assembly;
mod batch;
mod bodies;
mod chain;
mod contacts;
mod convergence;
mod determinism;
mod layout;
mod piles;
mod positions;
mod resident;
mod resident_world;
mod scan;
mod single_contacts;
mod stages;
mod stats;
mod trajectories;
mod warm;
