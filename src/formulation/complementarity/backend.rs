//! Which solver runs the complementarity problem's `solve` stage, and that
//! stage for a world alone: the f64 CPU reference, its f32 mirror, or the
//! WGSL solver on a GPU — where a world alone is a batch of one
//! ([`GpuJacobi::solve`]). A world of a batch of many is solved by its
//! batch ([`crate::run::batch`]) between the same prepare and finish
//! ([`super::RigidStep`]).

use crate::gpu::jacobi::GpuJacobi;
use crate::gpu::{GpuContext, GpuError};

/// Which solver runs the `solve` stage.
pub enum Backend {
    /// The f64 CPU reference (projected Jacobi, matrix-free, rayon).
    Cpu,
    /// The f32 CPU mirror of the GPU solver (same records, same operations).
    CpuF32,
    /// The WGSL solver on a GPU adapter (hardware or lavapipe).
    Gpu(Box<GpuState>),
    /// A world of a batch on one GPU ([`crate::run::batch`]): its solve is
    /// the batch's ([`crate::step::Stepper::begin_batched`],
    /// [`crate::step::Stepper::end_batched`]); the description names the
    /// GPU.
    Batched(String),
}

/// A GPU context with its solver.
pub struct GpuState {
    /// Device and queue.
    pub ctx: GpuContext,
    /// Pipelines and buffers.
    pub solver: GpuJacobi,
}

impl Backend {
    /// The GPU backend on a new context, or why not.
    pub fn gpu(ctx: GpuContext) -> Result<Self, GpuError> {
        let solver = GpuJacobi::new(&ctx)?;
        Ok(Backend::Gpu(Box::new(GpuState { ctx, solver })))
    }

    /// "cpu", "cpu-f32" or "gpu (adapter name, backend, type)".
    pub fn describe(&self) -> String {
        match self {
            Backend::Cpu => "cpu".into(),
            Backend::CpuF32 => "cpu-f32".into(),
            Backend::Gpu(g) => format!("gpu ({})", g.ctx.describe()),
            Backend::Batched(gpu) => gpu.clone(),
        }
    }

    /// What the GPU solver has done so far (counts, bytes, host times);
    /// `None` on the CPU backends.
    pub fn gpu_counters(&self) -> Option<crate::gpu::profile::GpuCounters> {
        match self {
            Backend::Gpu(g) => Some(g.solver.counters()),
            _ => None,
        }
    }

    /// Whether the solver computes in f32.
    pub fn is_f32(&self) -> bool {
        !matches!(self, Backend::Cpu)
    }
}
