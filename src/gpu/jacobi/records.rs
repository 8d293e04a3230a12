//! The solver's own records, as `shaders/jacobi.wgsl` declares them
//! (the layout test in `tests/gpu_equivalence` checks each against its
//! WGSL struct): the batch's uniform parameters, each world's ranges and
//! settings, each world's loop control and result, and the batch's clock.

use bytemuck::{Pod, Zeroable};

use crate::solver::SolveStats;

/// Uniform parameters of a batch (WGSL `Params`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Params {
    /// Contact records of all worlds, padding included.
    pub n_contacts: u32,
    /// Body records of all worlds, padding included.
    pub n_bodies: u32,
    /// Worlds in the batch.
    pub n_worlds: u32,
    /// Iterations between residual checks (the same for every world).
    pub check_every: u32,
    /// Method: 0 = projected Jacobi, 1 = APGD
    /// ([`jacobi_f32::solve_apgd`](crate::solver::jacobi_f32::solve_apgd)).
    pub method: u32,
    /// Workgroups over the contacts (the bodies' follow in `groups`).
    pub contact_groups: u32,
    /// Padding (a multiple of 16 bytes).
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
}

/// One world of a batch: its ranges and settings (WGSL `World`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct WorldRecord {
    /// First contact record.
    pub contact_start: u32,
    /// One past the last contact record.
    pub contact_end: u32,
    /// First body record.
    pub body_start: u32,
    /// One past the last body record.
    pub body_end: u32,
    /// First residual partial sum.
    pub partial_start: u32,
    /// One past the last partial sum.
    pub partial_end: u32,
    /// Iteration limit K.
    pub max_iterations: u32,
    /// Contact law: 0 = associated, 1 = De Saxcé.
    pub law: u32,
    /// Residual measure: 1 = weighted by b_f, 0 = unweighted
    /// ([`jacobi_f32::weighted`](crate::solver::jacobi_f32::weighted)).
    pub weighted: u32,
    /// 1 when inverse inertia tensors are in the third body region (bodies
    /// that are not spheres; [`PackedInertia`](crate::solver::packed::PackedInertia)), 0 for the scalar path.
    pub tensors: u32,
    /// Step scale ω.
    pub omega: f32,
    /// Relaxation λ.
    pub lambda: f32,
    /// Relative residual tolerance (0 = none).
    pub tolerance: f32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
    /// Padding.
    pub pad2: u32,
}

/// One world's loop control and result record (WGSL `Control`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Control {
    /// Non-zero once the world's loop is over (converged or at its cap).
    pub done: u32,
    /// Residual checks performed before stopping.
    pub checks: u32,
    /// Iterations performed.
    pub iterations: u32,
    /// Non-zero when the tolerance was met.
    pub converged: u32,
    /// Absolute natural-map residual.
    pub residual_abs: f32,
    /// Relative residual.
    pub residual_rel: f32,
    /// ‖γ‖.
    pub gamma_norm: f32,
    /// ‖Nγ + r‖.
    pub y_norm: f32,
    /// APGD: Nesterov's θ_k at even k (1 at the start and after a restart).
    pub theta0: f32,
    /// APGD: θ_k at odd k.
    pub theta1: f32,
    /// APGD: the momentum β of the current iteration.
    pub beta: f32,
    /// APGD: the relative residual at the previous check.
    pub last_rel: f32,
}

impl Control {
    /// The solve's statistics this record reports.
    pub fn stats(&self) -> SolveStats {
        SolveStats {
            iterations: self.iterations as usize,
            residual_abs: f64::from(self.residual_abs),
            residual_rel: f64::from(self.residual_rel),
            converged: self.converged != 0,
            fallback_iterations: None,
            fallback_seconds: 0.0,
            timed_out: false,
        }
    }
}

/// The batch's own state (WGSL `Batch`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BatchRecord {
    /// Iterations performed (the body pass counts them).
    pub clock: u32,
    /// Worlds not yet done (an atomic in WGSL).
    pub remaining: u32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
}
