//! Contact solvers for the cone complementarity problem (seed 000 eqs. 38–42).
//!
//! Solvers are written against the [`Delassus`](crate::problem::Delassus)
//! operator, so the same code solves the matrix-free body form of a simulation
//! step and explicit matrices read from files.

use serde::{Deserialize, Serialize};

pub mod jacobi;
pub mod jacobi_f32;
pub mod packed;

/// Settings of the iterative contact solver.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SolverSettings {
    /// Maximum number of iterations per solve.
    pub max_iterations: usize,
    /// Stop when the relative natural-map residual falls below this (0 = run all iterations).
    pub tolerance: f64,
    /// Step scale ω of seed 000 eq. 46 (> 0).
    pub omega: f64,
    /// Relaxation λ of seed 000 eq. 46, in (0, 1].
    pub lambda: f64,
    /// Compute the residual every this many iterations (≥ 1).
    pub check_every: usize,
    /// Start from the previous step's impulses of persistent contact pairs.
    pub warm_start: bool,
}

impl Default for SolverSettings {
    fn default() -> Self {
        SolverSettings {
            max_iterations: 100,
            tolerance: 1e-6,
            omega: 1.0,
            lambda: 1.0,
            check_every: 10,
            warm_start: true,
        }
    }
}

/// What a solve reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SolveStats {
    /// Iterations performed.
    pub iterations: usize,
    /// Absolute natural-map residual ‖γ − Π_Y(γ − (Nγ + r))‖ at the end.
    pub residual_abs: f64,
    /// Relative residual: absolute ÷ max(‖γ‖, ‖Nγ + r‖) (not divided when that is below f64 ε).
    pub residual_rel: f64,
    /// Whether the tolerance was reached.
    pub converged: bool,
}
