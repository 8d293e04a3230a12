//! The backend a run steps on: what the user asked for (`--backend`), what
//! `auto` picks for a scene (a hardware GPU for scenes of at least
//! [`AUTO_GPU_MIN_BODIES`] bodies whose solver the f32 path runs, else the
//! CPU), and the refusal, with what to change, of a choice the scene cannot
//! run on.

use anyhow::{Context, Result};

use crate::gpu::GpuContext;
use crate::solver::{SolverMethod, SolverSettings};
use crate::step::Backend;

/// The backend asked for on the command line.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum BackendChoice {
    /// A hardware GPU for a scene of at least 2,000 bodies (those at the
    /// start and those its inlets will emit) that its solvers can run, else
    /// the CPU (a software adapter such as lavapipe is slower than the CPU
    /// backend: `--backend gpu` runs on it).
    #[default]
    Auto,
    /// The f64 CPU reference solver.
    Cpu,
    /// The f32 CPU mirror of the GPU solver (for comparisons).
    CpuF32,
    /// The GPU solver; an error when no adapter exists.
    Gpu,
}

/// The fewest bodies (at the start, plus those inlets will emit) for which
/// `--backend auto` runs a scene on a hardware GPU. A GPU iteration has a
/// fixed cost: 55 µs measured on an NVIDIA H100 in a run of the pile of
/// Tasora & Anitescu 2013 (12,689 contacts on average), where the f64 CPU
/// solver does 8.7·10⁷ contact-iterations/s on 16 cores, i.e. the same
/// 55 µs buys about 4,800 contacts of CPU work there, and about 1,000 on 2
/// cores (docs/performance.md). A settled pile has about three contacts per
/// body, so below about 2,000 bodies the CPU is as fast or faster.
pub const AUTO_GPU_MIN_BODIES: usize = 2_000;

/// Opens the chosen backend for a scene's solver settings, its size
/// (`bodies`: at the start plus what inlets will add) and what in the scene
/// only the f64 CPU can run (`f32_blocker`: a rotating boundary; see
/// [`f32_blocker`]): the f32 and GPU backends run the Jacobi and APGD
/// methods (under either contact law, for every shape) without a
/// `solver.fallback`, and their contact records carry no torque bias, so
/// they cannot see a spinning wall. `auto` picks a hardware GPU for those
/// methods when the scene has at least [`AUTO_GPU_MIN_BODIES`] bodies, and
/// the CPU otherwise (and says why); an explicit choice the scene cannot
/// run on is an error that says what to change.
pub fn open_backend_for(
    choice: BackendChoice,
    solver: &SolverSettings,
    bodies: usize,
    f32_blocker: Option<&str>,
) -> Result<(Backend, String)> {
    let f32_method = matches!(solver.method, SolverMethod::Jacobi | SolverMethod::Apgd);
    let unsupported = if !f32_method {
        Some(format!("solver method {}", solver.method))
    } else if let Some(f) = solver.fallback {
        Some(format!("solver.fallback ({f})"))
    } else {
        f32_blocker.map(str::to_string)
    };
    match (choice, unsupported) {
        (BackendChoice::Auto, Some(what)) => Ok((
            Backend::Cpu,
            format!("cpu: the scene uses {what}, which only the cpu backend runs"),
        )),
        (BackendChoice::Auto, None) if bodies < AUTO_GPU_MIN_BODIES => Ok((
            Backend::Cpu,
            format!(
                "cpu: auto runs scenes of fewer than {AUTO_GPU_MIN_BODIES} bodies on the cpu \
                 (this one has {bodies}), where a GPU iteration's fixed cost outweighs its work; \
                 --backend gpu uses a GPU"
            ),
        )),
        (BackendChoice::Gpu | BackendChoice::CpuF32, Some(what)) => anyhow::bail!(
            "--backend {}: the scene uses {what}, but this backend runs only the jacobi and apgd methods, with no fallback and no rotating boundaries; use --backend cpu",
            if choice == BackendChoice::Gpu { "gpu" } else { "cpu-f32" }
        ),
        _ => open_backend(choice),
    }
}

/// The bodies a run of `world` will hold: those present plus those its
/// inlets have still to emit (what [`open_backend_for`] sizes it by).
pub fn scene_bodies(world: &crate::world::World) -> usize {
    world.state.bodies.len()
        + world
            .inlets()
            .map(|(s, p)| s.count.saturating_sub(p.emitted))
            .sum::<usize>()
}

/// Opens the chosen backend; returns it with a sentence saying what was chosen and why.
pub fn open_backend(choice: BackendChoice) -> Result<(Backend, String)> {
    match choice {
        BackendChoice::Cpu => Ok((Backend::Cpu, "cpu: asked for with --backend cpu".into())),
        BackendChoice::CpuF32 => Ok((
            Backend::CpuF32,
            "cpu-f32: asked for with --backend cpu-f32".into(),
        )),
        BackendChoice::Gpu => {
            let ctx = GpuContext::try_new().context(
                "--backend gpu: no GPU adapter found (on a machine without a GPU, install mesa-vulkan-drivers for lavapipe and set WGPU_BACKEND=vulkan)",
            )?;
            let b = Backend::gpu(ctx)?;
            let why = format!("{}: asked for with --backend gpu", b.describe());
            Ok((b, why))
        }
        BackendChoice::Auto => match GpuContext::try_new() {
            Some(ctx) if ctx.is_software() => Ok((
                Backend::Cpu,
                format!(
                    "cpu: --backend auto found only a software adapter, {}, which is slower than the cpu backend (--backend gpu uses it)",
                    ctx.describe()
                ),
            )),
            Some(ctx) => {
                let b = Backend::gpu(ctx)?;
                let why = format!("{}: --backend auto found a GPU adapter", b.describe());
                Ok((b, why))
            }
            None => Ok((
                Backend::Cpu,
                "cpu: --backend auto found no GPU adapter".into(),
            )),
        },
    }
}

/// What in the world only the f64 CPU backend runs, if anything: the
/// penalty or pyramid formulation (the f32 and GPU backends solve the
/// complementarity problem), or the first boundary that spins (the f32 records carry no
/// torque bias).
pub fn f32_blocker(world: &crate::world::World) -> Option<String> {
    match world.model.formulation {
        crate::formulation::Formulation::Penalty(_) => {
            return Some("the penalty formulation".into())
        }
        crate::formulation::Formulation::PyramidLcp(_) => {
            return Some("the pyramid LCP formulation".into())
        }
        crate::formulation::Formulation::Complementarity => {}
    }
    world
        .model
        .boundaries
        .iter()
        .find(|b| b.angular_velocity != glam::DVec3::ZERO)
        .map(|b| format!("the rotating boundary {:?}", b.name))
}
