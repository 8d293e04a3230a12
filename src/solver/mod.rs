//! Contact solvers for the cone complementarity problem
//! (Tasora & Anitescu 2013, eqs. 38–42) and its non-associated variant
//! (Acary & Bourrier 2021, eq. 63).
//!
//! Solvers are written against the [`Delassus`] operator, so the same code
//! solves the matrix-free body form of a simulation step and explicit
//! matrices read from files (`crate::siconos`). Each reads the contact law
//! from the operator ([`Delassus::law`]).
//!
//! # The family, and when to use which
//!
//! | method | iteration | per iteration | law |
//! |---|---|---|---|
//! | [`Jacobi`](SolverMethod::Jacobi) | γ ← λ Π(γ − ω B ŷ) + (1−λ)γ, all contacts at once (Tasora & Anitescu 2013, eq. 46) | 1 apply | both |
//! | [`Apgd`](SolverMethod::Apgd) | Nesterov-accelerated projected gradient, backtracking step, restart | 2 applies | associated; De Saxcé by a fixed point on the shift s |
//! | [`Pgs`](SolverMethod::Pgs) | block Gauss–Seidel: one contact at a time with the latest values (Acary & Bourrier 2021, §5.2); Anderson mixing at the residual checks (on by default, depth 5; `solver.anderson`) | 1 apply, sequential (+1 per check when mixing) | both |
//! | [`FixedPoint`](SolverMethod::FixedPoint) | p ← Π(p − ρ_k F(p)), self-adaptive ρ_k (Acary & Bourrier 2021, eq. 64) | 1–2 applies | both |
//! | [`ExtraGradient`](SolverMethod::ExtraGradient) | predictor–corrector of Acary & Bourrier 2021, eq. 65, self-adaptive ρ_k | 2 applies | both |
//! | [`Newton`](SolverMethod::Newton) | semismooth Newton on all contacts: the natural map (associated law) or Alart–Curnier's (De Saxcé), J = I − P + PN in the metric, proximally regularized, Armijo line search ([`newton`]) | one sparse LU + 1–31 applies per step | both |
//! | [`InteriorPoint`](SolverMethod::InteriorPoint) | primal–dual interior point on the conic QP (`conic`; clarabel where it stalls), lifted to body form when there is one | one sparse LDLᵀ per Newton step; De Saxcé: the shift of Acary & Cadoux 2011, eqs. 8–10, re-evaluated after every Newton step | both |
//!
//! Here ŷ = F(γ) is the velocity the law pairs with γ: y = Nγ + r for the
//! associated law, y + g(y) for De Saxcé ([`modified_velocity`]).
//!
//! # One metric for all
//!
//! Every method steps in the diagonal metric B = diag(b_f I₃, b_t I₃) per
//! contact given by [`Delassus::jacobi_scales`] (a bound that makes the
//! largest eigenvalue of B^½ N B^½ about 1): a step is γ − t B ŷ, and the
//! projection is taken in the metric B⁻¹ — the Euclidean projection of
//! z = (γ_f/√b_f, γ_t/√b_t) onto the cone (μ, ρ√(b_f/b_t), σ√(b_f/b_t)),
//! mapped back ([`Metric`]). In the variables z the problem is well scaled,
//! so unit steps are safe starting points for every method, and forces and
//! torques are balanced.
//!
//! # Stopping
//!
//! All methods stop on the natural-map residual ‖γ − Π_Y(γ − ŷ)‖
//! (Tasora & Anitescu 2013, eq. 40; Acary & Bourrier 2021, eq. 61 with unit
//! step), divided by a scale chosen by [`ResidualMeasure`].
//!
//! # The files
//!
//! This one is the methods' face: [`solve`], which runs the method a
//! scene asks for and its fallback. `settings.rs` holds what a solve is
//! asked and reports ([`SolverSettings`], [`SolveStats`]); `base.rs` what
//! the methods share (the metric, residuals, workspace, iteration start and
//! stop, [`det_sums`]); each method has its own file.

use crate::problem::{Delassus, Vec6};

pub mod apgd;
mod base;
pub(crate) mod conic;
pub mod fixed_point;
pub mod interior;
pub mod jacobi;
pub mod jacobi_f32;
pub mod newton;
pub mod packed;
pub mod pgs;
mod settings;

pub use base::*;
pub use settings::{ResidualMeasure, SolveStats, SolverMethod, SolverSettings};

/// Solves the problem of `op` with the method of `s`, starting from `gamma`
/// (warm start) and overwriting it with the result. Where that stops
/// unconverged and `s.fallback` names another method, the problem is solved
/// again by it, starting from the first method's answer, and the answer
/// with the smaller residual is kept: one that met the tolerance, or the
/// first method's on a tie (so a fallback never makes a step worse; a
/// finite residual counts as smaller than NaN).
pub fn solve<D: Delassus + Sync>(
    op: &mut D,
    gamma: &mut [Vec6],
    s: &SolverSettings,
    ws: &mut Workspace,
) -> SolveStats {
    let first = solve_with(s.method, op, gamma, s, ws);
    let Some(method) = s.fallback.filter(|&f| f != s.method && !first.converged) else {
        return first;
    };
    let mut start = std::mem::take(&mut ws.fallback_start);
    start.clear();
    start.extend_from_slice(gamma);
    let fallback = SolverSettings {
        shift_from_start: true,
        max_iterations: s.fallback_max_iterations.unwrap_or(s.max_iterations),
        deadline: match s.fallback_time_limit {
            Some(limit) => std::time::Instant::now().checked_add(limit),
            None => s.deadline,
        },
        ..s.clone()
    };
    let started = std::time::Instant::now();
    let second = solve_with(method, op, gamma, &fallback, ws);
    let fallback_seconds = started.elapsed().as_secs_f64();
    let better = is_better(&second, &first);
    let stats = if better {
        SolveStats {
            iterations: first.iterations,
            fallback_iterations: Some(second.iterations),
            fallback_seconds,
            ..second
        }
    } else {
        gamma.copy_from_slice(&start);
        SolveStats {
            fallback_iterations: Some(second.iterations),
            fallback_seconds,
            ..first
        }
    };
    ws.fallback_start = start;
    stats
}

/// Whether the answer of `candidate` is to be kept over that of `than`:
/// it met the tolerance, or its residual is smaller (a finite residual
/// counts as smaller than NaN); on a tie, `than`'s is kept.
pub(crate) fn is_better(candidate: &SolveStats, than: &SolveStats) -> bool {
    candidate.converged
        || candidate.residual_rel < than.residual_rel
        || (than.residual_rel.is_nan() && !candidate.residual_rel.is_nan())
}

/// One method's solve (the dispatch of [`solve`]).
fn solve_with<D: Delassus + Sync>(
    method: SolverMethod,
    op: &mut D,
    gamma: &mut [Vec6],
    s: &SolverSettings,
    ws: &mut Workspace,
) -> SolveStats {
    match method {
        SolverMethod::Jacobi => jacobi::solve(op, gamma, s, ws),
        SolverMethod::Apgd => apgd::solve(op, gamma, s, ws),
        SolverMethod::Pgs => pgs::solve(op, gamma, s, ws),
        SolverMethod::FixedPoint => fixed_point::solve(op, gamma, s, ws, false),
        SolverMethod::ExtraGradient => fixed_point::solve(op, gamma, s, ws, true),
        SolverMethod::InteriorPoint => interior::solve(op, gamma, s, ws),
        SolverMethod::Newton => newton::solve(op, gamma, s, ws),
    }
}
