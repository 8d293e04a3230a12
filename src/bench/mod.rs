//! Solver benchmarks shared by `repose bench` and `cargo bench`: the
//! contact-iterations per second of a backend on a scene's contact problem,
//! next to the memory-copy bandwidth of the same device and the share of it
//! the solver achieves (the Jacobi iteration is bandwidth-bound: docs/gpu.md).
//!
//! Timing: on a GPU with timestamp queries, the device's own time of the
//! iteration pass of a 2K-iteration solve (no tolerance, so exactly that
//! many), the fastest over the repeats. Otherwise the solve is run with K
//! and with 2K iterations on the wall clock, and the difference of the
//! fastest of each is the time of K iterations, free of upload, packing and
//! readback.

pub mod penalty;

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::gpu::{copy, jacobi as gpu_jacobi};
use crate::problem::{BodyDelassus, ContactProblem, Vec6};
use crate::scene::Scene;
use crate::solver::jacobi_f32::{self, JacobiF32Workspace};
use crate::solver::packed::{pack, PackedBody, PackedContact};
use crate::solver::Workspace;
use crate::solver::{SolveStats, SolverMethod, SolverSettings};
use crate::step::{Backend, Stepper};

/// What one benchmark measured.
#[derive(Clone, Debug, Serialize)]
pub struct SolverBench {
    /// Backend description.
    pub backend: String,
    /// The method timed.
    pub method: String,
    /// Bodies in the problem.
    pub bodies: usize,
    /// Contacts in the problem.
    pub contacts: usize,
    /// K: iterations per timed solve (see the module docs for how they are timed).
    pub iterations: usize,
    /// What timed them: "device timestamps" (the GPU's own clock around the
    /// iteration pass) or "wall clock".
    pub clock: String,
    /// Seconds per iteration.
    pub seconds_per_iteration: f64,
    /// Contacts × iterations per second.
    pub contact_iterations_per_second: f64,
    /// Bytes the iteration moves per contact (f32 record layout for the
    /// f32 backends, the f64 arrays for the CPU reference).
    pub bytes_per_contact_iteration: f64,
    /// Measured copy bandwidth of the same device, bytes/s (read + write).
    pub copy_bytes_per_second: f64,
    /// bytes_per_contact_iteration × contact_iterations_per_second ÷ copy bandwidth.
    pub share_of_copy_bandwidth: f64,
    /// On the GPU: one iteration's wall time split into its parts
    /// ([`FixedCost`]); `None` on the CPU backends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed_cost: Option<FixedCost>,
    /// On the GPU: the same split at the size of the piles people run
    /// ([`SMALL_SCENE`], about 10⁴ contacts), where the fixed cost rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub small: Option<SmallFixedCost>,
}

/// The pile of about 10⁴ contacts on which the GPU's fixed cost per
/// iteration is timed beside any benchmarked scene.
pub const SMALL_SCENE: &str = "scenes/bench_pile_small.ron";

/// [`FixedCost`] on the small pile.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SmallFixedCost {
    /// Contacts of the small pile's problem.
    pub contacts: usize,
    /// One iteration's wall time there, split.
    pub cost: FixedCost,
}

/// One iteration's split ([`FixedCost`]) on the small pile ([`SMALL_SCENE`],
/// settled for 3 steps on the CPU), `iterations` timed iterations, the best
/// of `repeats`.
pub fn small_fixed_cost(
    backend: &mut Backend,
    iterations: usize,
    repeats: usize,
    method: SolverMethod,
) -> Result<SmallFixedCost> {
    let (p, gamma0) = prepare(Path::new(SMALL_SCENE), 3)?;
    let bytes = if method == SolverMethod::Apgd {
        f32_apgd_bytes_per_contact_iteration(&p)
    } else {
        f32_bytes_per_contact_iteration(&p)
    };
    let copy_bw = match backend {
        Backend::Gpu(gs) => copy::measure(&gs.ctx, 64 << 20, 20)?.bytes_per_second,
        _ => anyhow::bail!("the fixed cost is measured on the GPU backend"),
    };
    solve_on(backend, &p, &gamma0, &settings(iterations.max(1), method))?;
    let traffic = bytes * p.n_contacts() as f64 / copy_bw;
    let cost = fixed_cost(
        backend,
        &p,
        &gamma0,
        iterations.max(1),
        repeats,
        method,
        traffic,
    )?;
    Ok(SmallFixedCost {
        contacts: p.n_contacts(),
        cost,
    })
}

/// One GPU iteration's wall time, split: W = host + device, device =
/// memory traffic + the device's own overhead. From K- and 2K-iteration
/// solves without a tolerance (one submit each), by difference, so upload
/// and readback drop out.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FixedCost {
    /// Wall seconds per iteration (host encoding, submit and the device's run).
    pub wall_seconds: f64,
    /// Host seconds recording and submitting one iteration's commands.
    pub host_seconds: f64,
    /// Device seconds per iteration (timestamps; `None` where not offered).
    pub device_seconds: Option<f64>,
    /// Seconds the iteration's bytes take at the measured copy bandwidth.
    pub traffic_seconds: f64,
    /// Dispatches per iteration.
    pub dispatches: f64,
}

/// Loads a scene and steps it `settle_steps` times on the CPU so the
/// benchmark solves a realistic, warm problem; returns the last step's
/// problem and impulses.
///
/// Errors: a scene whose formulation is not complementarity (its steps
/// pose no cone complementarity problem: `repose bench --formulation
/// penalty` times a penalty scene), or one with no contacts after
/// settling (nothing to time).
pub fn prepare(scene: &Path, settle_steps: usize) -> Result<(ContactProblem, Vec<Vec6>)> {
    let path = scene;
    let scene = Scene::load(scene, &[])?;
    let mut world = scene.build()?;
    if !matches!(
        world.model.formulation,
        crate::formulation::Formulation::Complementarity
    ) {
        anyhow::bail!(
            "{}: the scene's formulation is {}, but the solver bench times the complementarity solver's iterations (for a penalty scene: repose bench --formulation penalty)",
            path.display(),
            world.model.formulation.name()
        );
    }
    let mut st = Stepper::new();
    for _ in 0..settle_steps.max(1) {
        st.step(&mut world)
            .context("settling the benchmark scene")?;
    }
    if st.last_problem().n_contacts() == 0 {
        anyhow::bail!(
            "{}: no contacts after {} settling step(s): nothing for the solver bench to time",
            path.display(),
            settle_steps.max(1)
        );
    }
    Ok((st.last_problem().clone(), st.last_impulses().to_vec()))
}

/// Bytes moved per contact-iteration by the f32 layout (WGSL `jacobi.wgsl`):
/// the contact pass reads the 96-byte record, reads and writes γ (2 × 32:
/// two vec4 each), reads both ends' body records (32 each) and writes their
/// slots (32 each); the body pass reads the slots again (32 per end) and
/// reads and writes each body's record and reads its offsets (32 + 32 + 4 per
/// body, shared by its contacts).
pub fn f32_bytes_per_contact_iteration(p: &ContactProblem) -> f64 {
    let nc = p.n_contacts() as f64;
    let ends = p.csr_slots.len() as f64;
    let nb = p.n_bodies() as f64;
    let rec = std::mem::size_of::<PackedContact>() as f64;
    let body = std::mem::size_of::<PackedBody>() as f64;
    let gamma = gpu_jacobi::GAMMA_BYTES as f64;
    let slot = gpu_jacobi::SLOT_BYTES as f64;
    (nc * (rec + 2.0 * gamma) + ends * (body + 2.0 * slot) + nb * (2.0 * body + 4.0)) / nc
}

/// Bytes moved per contact-iteration by the GPU's APGD (WGSL `apgd_*`):
/// Jacobi's ([`f32_bytes_per_contact_iteration`]) plus, per contact, the
/// iterate x read besides v and both written (2 × 32 more), and per body the
/// second record (V(x) beside V(v)) read and written (2 × 32 more); the
/// world's θ and β (a few bytes per workgroup) are negligible.
pub fn f32_apgd_bytes_per_contact_iteration(p: &ContactProblem) -> f64 {
    let nc = p.n_contacts() as f64;
    let nb = p.n_bodies() as f64;
    let gamma = gpu_jacobi::GAMMA_BYTES as f64;
    let body = std::mem::size_of::<PackedBody>() as f64;
    f32_bytes_per_contact_iteration(p) + (nc * 2.0 * gamma + nb * 2.0 * body) / nc
}

/// Bytes per contact-iteration of the f64 reference's fused sweep: per
/// contact the frame, arms, bias, ids, step scalars and cone (216 bytes), γ
/// read and written (96) and its world impulse (F, T) written (48); per end
/// the gather reads the slot, (F, T) and the arm (4 + 48 + 24) and the twist
/// reads the body velocities (48); per body the free velocities, masses,
/// offsets and the written velocities (48 + 16 + 4 + 48).
pub fn f64_bytes_per_contact_iteration(p: &ContactProblem) -> f64 {
    let nc = p.n_contacts() as f64;
    let ends = p.csr_slots.len() as f64;
    let nb = p.n_bodies() as f64;
    (nc * (216.0 + 96.0 + 48.0) + ends * 124.0 + nb * 116.0) / nc
}

/// (read + write) bandwidth of a parallel memory copy on the CPU, bytes/s.
pub fn cpu_copy_bandwidth() -> f64 {
    use rayon::prelude::*;
    let n = 32 << 20; // 256 MiB of f64
    let src = vec![1.0f64; n];
    let mut dst = vec![0.0f64; n];
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t0 = Instant::now();
        dst.par_chunks_mut(1 << 16)
            .zip(src.par_chunks(1 << 16))
            .for_each(|(d, s)| d.copy_from_slice(s));
        best = best.min(t0.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    2.0 * (n * 8) as f64 / best
}

fn settings(iterations: usize, method: SolverMethod) -> SolverSettings {
    SolverSettings {
        method,
        max_iterations: iterations,
        tolerance: 0.0,
        ..Default::default()
    }
}

/// One solve with settings `s` on the backend from the warm start: its
/// statistics and the seconds it took — the solver call alone (packing
/// excluded), or on a GPU with timestamp queries the iteration pass's own
/// device time.
fn solve_on(
    backend: &mut Backend,
    p: &ContactProblem,
    gamma0: &[Vec6],
    s: &SolverSettings,
) -> Result<(SolveStats, f64)> {
    let f32_start = || -> Vec<[f32; 6]> { gamma0.iter().map(|g| g.map(|x| x as f32)).collect() };
    Ok(match backend {
        Backend::Batched(_) => anyhow::bail!("a world of a batch is not benchmarked alone"),
        Backend::Cpu => {
            let mut ws = Workspace::default();
            let mut g = gamma0.to_vec();
            let t0 = Instant::now();
            let mut op = BodyDelassus::new(p);
            let st = crate::solver::solve(&mut op, &mut g, s, &mut ws);
            (st, t0.elapsed().as_secs_f64())
        }
        Backend::CpuF32 => {
            let mut packed = pack(p, gamma0);
            let mut g = f32_start();
            let mut ws = JacobiF32Workspace::default();
            let t0 = Instant::now();
            let st = jacobi_f32::solve(&mut packed, &p.csr_slots, &mut g, s, &mut ws);
            (st, t0.elapsed().as_secs_f64())
        }
        Backend::Gpu(gs) => {
            let mut packed = pack(p, gamma0);
            let mut g = f32_start();
            let t0 = Instant::now();
            let st = gs.solver.solve(&gs.ctx, &mut packed, &mut g, s)?;
            let wall = t0.elapsed().as_secs_f64();
            (st, gs.solver.last_pass_seconds().unwrap_or(wall))
        }
    })
}

/// Solves from the warm start to the relative residual `tol` (weighted, the
/// default measure, checked every 10 iterations as in a run: the count is a
/// multiple of 10) with `method` on the backend, at most `cap` iterations;
/// returns the solver's statistics.
pub fn iterations_to(
    backend: &mut Backend,
    p: &ContactProblem,
    gamma0: &[Vec6],
    method: SolverMethod,
    tol: f64,
    cap: usize,
) -> Result<SolveStats> {
    let s = SolverSettings {
        method,
        max_iterations: cap.max(1),
        tolerance: tol,
        ..Default::default()
    };
    Ok(solve_on(backend, p, gamma0, &s)?.0)
}

/// Times one solve of `iterations` iterations on the backend (seconds).
fn time_solve(
    backend: &mut Backend,
    p: &ContactProblem,
    gamma0: &[Vec6],
    iterations: usize,
    method: SolverMethod,
) -> Result<f64> {
    Ok(solve_on(backend, p, gamma0, &settings(iterations, method))?.1)
}

/// Benchmarks a backend on a problem: `iterations` timed iterations, the
/// best of `repeats`, with the copy bandwidth of the same device.
pub fn bench_solver(
    backend: &mut Backend,
    p: &ContactProblem,
    gamma0: &[Vec6],
    iterations: usize,
    repeats: usize,
    method: SolverMethod,
) -> Result<SolverBench> {
    let k = iterations.max(1);
    // Warm-up (buffers, pipelines, caches).
    time_solve(backend, p, gamma0, k, method)?;
    let timestamps = matches!(backend, Backend::Gpu(gs) if gs.solver.last_pass_seconds().is_some());
    let (clock, per_it) = if timestamps {
        // The device's own clock spans only the iteration pass (2K
        // iterations and one final residual): the fastest such pass over
        // the repeats, per iteration (the residual makes it conservative by
        // about 1/(2K) of an iteration's worth).
        let mut t = f64::INFINITY;
        for _ in 0..repeats.max(1) {
            t = t.min(time_solve(backend, p, gamma0, 2 * k, method)?);
        }
        ("device timestamps", t / (2 * k) as f64)
    } else {
        // Wall clock: the fastest K-run and the fastest 2K-run, each over
        // the repeats; their difference is K iterations, free of upload
        // and readback. (The fastest *difference* would be biased low: one
        // slow K-run makes a difference small.)
        let (mut t1, mut t2) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..repeats.max(1) {
            t1 = t1.min(time_solve(backend, p, gamma0, k, method)?);
            t2 = t2.min(time_solve(backend, p, gamma0, 2 * k, method)?);
        }
        ("wall clock", (t2 - t1).max(1e-12) / k as f64)
    };
    let cips = p.n_contacts() as f64 / per_it;
    let f32_bytes = if method == SolverMethod::Apgd {
        f32_apgd_bytes_per_contact_iteration(p)
    } else {
        f32_bytes_per_contact_iteration(p)
    };
    let (bytes, copy_bw) = match backend {
        Backend::Gpu(gs) => (
            f32_bytes,
            copy::measure(&gs.ctx, 64 << 20, 20)?.bytes_per_second,
        ),
        Backend::CpuF32 => (f32_bytes, cpu_copy_bandwidth()),
        Backend::Cpu | Backend::Batched(_) => {
            (f64_bytes_per_contact_iteration(p), cpu_copy_bandwidth())
        }
    };
    let fixed_cost = match backend {
        Backend::Gpu(_) => {
            let traffic = bytes * p.n_contacts() as f64 / copy_bw;
            Some(fixed_cost(backend, p, gamma0, k, repeats, method, traffic)?)
        }
        _ => None,
    };
    Ok(SolverBench {
        backend: backend.describe(),
        method: method.name().to_string(),
        bodies: p.n_bodies(),
        contacts: p.n_contacts(),
        iterations: k,
        clock: clock.to_string(),
        seconds_per_iteration: per_it,
        contact_iterations_per_second: cips,
        bytes_per_contact_iteration: bytes,
        copy_bytes_per_second: copy_bw,
        share_of_copy_bandwidth: bytes * cips / copy_bw,
        fixed_cost,
        small: None,
    })
}

impl std::fmt::Display for FixedCost {
    /// "one iteration: W µs wall = H µs host (…) + D µs device, of which T µs the memory traffic …"
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "one iteration: {:.1} µs wall = {:.1} µs host (encoding and submitting {:.2} dispatches) + ",
            1e6 * self.wall_seconds,
            1e6 * self.host_seconds,
            self.dispatches
        )?;
        match self.device_seconds {
            Some(d) => write!(
                f,
                "{:.1} µs device, of which {:.1} µs the memory traffic at copy bandwidth",
                1e6 * d,
                1e6 * self.traffic_seconds
            ),
            None => write!(
                f,
                "the device (no timestamps); the memory traffic alone {:.1} µs at copy bandwidth",
                1e6 * self.traffic_seconds
            ),
        }
    }
}

/// The split of one GPU iteration's wall time ([`FixedCost`]): the fastest
/// K- and 2K-iteration solves on the wall clock, their host encoding and
/// device time from the solver's counters of the same solves.
fn fixed_cost(
    backend: &mut Backend,
    p: &ContactProblem,
    gamma0: &[Vec6],
    k: usize,
    repeats: usize,
    method: SolverMethod,
    traffic_seconds: f64,
) -> Result<FixedCost> {
    let Backend::Gpu(_) = backend else {
        anyhow::bail!("the fixed cost is measured on the GPU backend");
    };
    let counters = |b: &Backend| match b {
        Backend::Gpu(g) => g.solver.counters(),
        _ => unreachable!(),
    };
    // (wall, host, device) of the fastest solve of `n` iterations.
    let mut fastest = |n: usize| -> Result<(f64, f64, Option<f64>)> {
        let mut best = (f64::INFINITY, 0.0, None);
        for _ in 0..repeats.max(1) {
            let before = counters(backend);
            let t0 = Instant::now();
            solve_on(backend, p, gamma0, &settings(n, method))?;
            let wall = t0.elapsed().as_secs_f64();
            let c = counters(backend).since(&before);
            if wall < best.0 {
                best = (wall, c.encode_seconds + c.submit_seconds, c.device_seconds);
            }
        }
        Ok(best)
    };
    let (w1, h1, d1) = fastest(k)?;
    let (w2, h2, d2) = fastest(2 * k)?;
    let per = |a: f64, b: f64| (b - a).max(0.0) / k as f64;
    let dispatches = {
        let before = counters(backend);
        solve_on(backend, p, gamma0, &settings(k, method))?;
        let c = counters(backend).since(&before);
        c.dispatches as f64 / c.iterations_encoded.max(1) as f64
    };
    Ok(FixedCost {
        wall_seconds: per(w1, w2),
        host_seconds: per(h1, h2),
        device_seconds: d1.zip(d2).map(|(a, b)| per(a, b)),
        traffic_seconds,
        dispatches,
    })
}

impl std::fmt::Display for SolverBench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}, {}: {} bodies, {} contacts; {:.3} ms per iteration; {:.3e} contact-iterations/s; \
             {:.0} B per contact-iteration → {:.2} GB/s of a {:.2} GB/s copy ({:.0} %)",
            self.backend,
            self.method,
            self.bodies,
            self.contacts,
            1e3 * self.seconds_per_iteration,
            self.contact_iterations_per_second,
            self.bytes_per_contact_iteration,
            self.bytes_per_contact_iteration * self.contact_iterations_per_second / 1e9,
            self.copy_bytes_per_second / 1e9,
            100.0 * self.share_of_copy_bandwidth
        )?;
        if let Some(c) = &self.fixed_cost {
            write!(f, "\n  {c}")?;
        }
        if let Some(s) = &self.small {
            write!(
                f,
                "\n  at {} contacts ({SMALL_SCENE}): {}",
                s.contacts, s.cost
            )?;
        }
        Ok(())
    }
}
