//! Many runs stepped together on one GPU: a sweep's points and seeds in
//! one solve per step (docs/gpu.md, batched runs).
//!
//! Each run is a `Session` of its own — its world, stepper, outputs,
//! settling detector, checkpoints — exactly as when it runs alone; only
//! the `solve` stage is shared. A round of the batch is
//!
//! ```text
//! each world (in parallel):  before_step ─► emit, forces, collide, assemble, warm_start, pack
//! all worlds, one group per (method, check interval):  one GPU solve  (GpuJacobi::solve_batch)
//! each world (in parallel):  unpack, store_warm, integrate ─► after_step (record, frames, settle)
//! ```
//!
//! A world that ends (its duration, settled, failed, diverged, a signal)
//! writes its outputs and leaves the batch; the others go on. Since the GPU
//! solves each world of a batch to the same bits as alone, and every other
//! stage is the world's own, each run's files are those of the run alone
//! on the GPU backend; its `summary.json` says it ran batched and with how
//! many (`extra.batch`), and its `gpu` counts are the whole batch's up to
//! the step the run ended.
//!
//! It pays where a solve's fixed cost — dispatches, barriers, host round
//! trips — outweighs its work: on a hardware GPU with worlds of up to a few
//! tens of thousands of contacts. On a software adapter (lavapipe) the
//! device is the CPU and the fixed cost is small beside the work, so a
//! batch gains little there.

use std::time::Instant;

use anyhow::Result;
use rayon::prelude::*;

use std::path::PathBuf;

use super::session::{LoopState, Session};
use super::{f32_blocker, run_scene, start_session, BackendChoice, RunOptions};
use crate::formulation::Formulation;
use crate::gpu::GpuError;
use crate::output::summary::Summary;
use crate::scene::Scene;
use crate::solver::SolverMethod;
use crate::step::{Backend, GpuState};

/// Seconds between progress lines of a batch.
const PROGRESS_SECONDS: f64 = 30.0;

/// Why a run cannot be one world of a GPU batch, if it cannot: the GPU
/// solver runs the complementarity formulation with the jacobi or apgd
/// method, no fallback, no rotating boundary.
pub fn batch_blocker(world: &crate::world::World) -> Option<String> {
    if let Some(what) = f32_blocker(world) {
        return Some(format!(
            "the scene uses {what}, which only the cpu backend runs"
        ));
    }
    let s = &world.model.solver;
    if !matches!(s.method, SolverMethod::Jacobi | SolverMethod::Apgd) {
        return Some(format!(
            "solver.method {} runs on the cpu backend only (the GPU runs jacobi and apgd)",
            s.method.name()
        ));
    }
    if let Some(f) = s.fallback {
        return Some(format!(
            "solver.fallback ({}) runs on the cpu backend only",
            f.name()
        ));
    }
    if !matches!(world.model.formulation, Formulation::Complementarity) {
        return Some("only the complementarity formulation runs on the GPU".into());
    }
    None
}

/// A world of the batch while it runs.
struct Live<'a> {
    /// Index in the caller's list.
    index: usize,
    session: Session<'a>,
    ls: LoopState,
    /// This round's step began (and waits for the solve).
    begun: bool,
    /// The step's result when it failed before the solve.
    early: Option<crate::step::StepError>,
}

/// Runs `runs` (each a scene with its options) as one batch on `gpu`; one
/// result per run, in order. A run that cannot be a world of the batch
/// ([`batch_blocker`]) fails with the reason, before anything runs.
pub fn run_batch(runs: &[(&Scene, RunOptions)], gpu: &mut GpuState) -> Vec<Result<Summary>> {
    crate::interrupt::install();
    let t0 = Instant::now();
    let n = runs.len();
    let name = format!("gpu ({})", gpu.ctx.describe());
    let mut results: Vec<Option<Result<Summary>>> = (0..n).map(|_| None).collect();
    let mut live: Vec<Live<'_>> = Vec::with_capacity(n);
    for (index, (scene, opts)) in runs.iter().enumerate() {
        let started = (|| -> Result<Live<'_>> {
            let world = scene.build()?;
            if let Some(why) = batch_blocker(&world) {
                anyhow::bail!("{}: cannot run in a GPU batch: {why}", scene.file);
            }
            let why = format!("{name}: one of {n} worlds in a batch");
            let mut session =
                start_session(scene, opts, world, Backend::Batched(name.clone()), why, t0)?;
            session.summary.extra.insert(
                "batch".into(),
                serde_json::json!({"worlds": n, "position": index}),
            );
            let ls = session.start_loop();
            Ok(Live {
                index,
                session,
                ls,
                begun: false,
                early: None,
            })
        })();
        match started {
            Ok(l) => live.push(l),
            Err(e) => results[index] = Some(Err(e)),
        }
    }
    log::info!(
        "a batch of {} worlds on {name} ({} could not start)",
        live.len(),
        n - live.len()
    );
    let mut last_log = Instant::now();
    let mut round = 0u64;
    while !live.is_empty() {
        round += 1;
        // Worlds whose run is over leave the batch with their outputs.
        let mut i = 0;
        while i < live.len() {
            let l = &mut live[i];
            if l.session.before_step(&mut l.ls) {
                i += 1;
            } else {
                let mut done = live.swap_remove(i);
                done.session.summary.gpu = Some(gpu.solver.counters());
                results[done.index] = Some(done.session.end_loop(done.ls));
            }
        }
        // Each world's stages up to the solve.
        live.par_iter_mut().for_each(|l| {
            let s = &mut l.session;
            match s.stepper.begin_batched(&mut s.world) {
                Ok(()) => (l.begun, l.early) = (true, None),
                Err(e) => (l.begun, l.early) = (false, Some(e)),
            }
        });
        // One solve per group of worlds that share a method and a check
        // interval.
        let mut outcome: Vec<Option<(Result<crate::solver::SolveStats, GpuError>, f64)>> =
            (0..live.len()).map(|_| None).collect();
        let mut keys: Vec<(bool, usize)> = live
            .iter()
            .filter(|l| l.begun)
            .map(|l| group_key(&l.session))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        for key in keys {
            let members: Vec<usize> = (0..live.len())
                .filter(|&j| live[j].begun && group_key(&live[j].session) == key)
                .collect();
            let t = Instant::now();
            let solved = {
                let mut entries: Vec<_> = live
                    .iter_mut()
                    .enumerate()
                    .filter(|(j, _)| members.contains(j))
                    .filter_map(|(_, l)| {
                        let s = &mut l.session;
                        s.stepper.batch_entry(&s.world)
                    })
                    .collect();
                let worlds = entries.len();
                match gpu.solver.solve_batch(&gpu.ctx, &mut entries) {
                    Err(e @ GpuError::TooLarge { .. }) => Err(too_large(e, worlds)),
                    other => other,
                }
            };
            let secs = t.elapsed().as_secs_f64();
            match solved {
                Ok(stats) => {
                    for (&j, st) in members.iter().zip(stats) {
                        outcome[j] = Some((Ok(st), secs));
                    }
                }
                Err(e) => {
                    for &j in &members {
                        outcome[j] = Some((Err(GpuError::Batch(e.to_string())), secs));
                    }
                }
            }
        }
        // Each world's stages after the solve, and its records and files.
        let flow: Vec<Result<bool>> = live
            .par_iter_mut()
            .zip(outcome.into_par_iter())
            .map(|(l, out)| {
                let s = &mut l.session;
                let step = match (l.early.take(), out) {
                    (Some(e), _) => Err(e),
                    (None, Some((r, secs))) => s.stepper.end_batched(&mut s.world, r, secs),
                    (None, None) => unreachable!("a begun world has an outcome"),
                };
                s.after_step(&mut l.ls, step)
            })
            .collect();
        let mut keep = Vec::with_capacity(live.len());
        for (l, f) in live.drain(..).zip(flow) {
            match f {
                Ok(true) => keep.push(l),
                Ok(false) => {
                    let mut l = l;
                    l.session.summary.gpu = Some(gpu.solver.counters());
                    results[l.index] = Some(l.session.end_loop(l.ls));
                }
                Err(e) => results[l.index] = Some(Err(e)),
            }
        }
        live = keep;
        if last_log.elapsed().as_secs_f64() >= PROGRESS_SECONDS {
            last_log = Instant::now();
            log::info!(
                "batch: round {round}, {} of {n} worlds running, {:.0} s elapsed",
                live.len(),
                t0.elapsed().as_secs_f64()
            );
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(anyhow::anyhow!("the run did not start"))))
        .collect()
}

/// Worlds in one solve share the method and the interval between checks.
fn group_key(s: &Session<'_>) -> (bool, usize) {
    let settings = &s.world.model.solver;
    (
        settings.method == SolverMethod::Apgd,
        settings.check_every.max(1),
    )
}

/// The error of a batch too large for the adapter, with how many of its
/// worlds would fit: a buffer's bytes grow with the worlds in it, so about
/// `worlds × limit / bytes` of worlds of this size.
fn too_large(e: GpuError, worlds: usize) -> GpuError {
    let fits = match &e {
        GpuError::TooLarge { bytes, limit, .. } => {
            (worlds as u64 * limit / (*bytes).max(1)) as usize
        }
        _ => 0,
    };
    GpuError::Batch(format!(
        "{e}; a batch of {worlds} worlds of this size does not fit the GPU, about {fits} would (--batch {})",
        fits.max(1)
    ))
}

/// `repose run A.ron B.ron …`: every scene (with the same overrides and
/// options) into its own directory — `OUT/<scene name>` with `--out OUT`,
/// else the scene's default — stepped together in one batch on a GPU
/// backend (`--backend gpu`, or `auto` on a hardware GPU), one after
/// another otherwise. Every scene is loaded and checked before any runs;
/// one result per scene, in order.
pub fn run_files(
    paths: &[PathBuf],
    overrides: &[(String, String)],
    opts: &RunOptions,
) -> Result<Vec<Result<Summary>>> {
    let scenes = paths
        .iter()
        .map(|p| Scene::load(p, overrides).map_err(anyhow::Error::from))
        .collect::<Result<Vec<_>>>()?;
    let mut dirs: Vec<PathBuf> = Vec::with_capacity(scenes.len());
    for (s, p) in scenes.iter().zip(paths) {
        let d = match &opts.out_dir {
            Some(o) => o.join(&s.name),
            None => s.output_dir(),
        };
        if let Some(k) = dirs.iter().position(|e| *e == d) {
            anyhow::bail!(
                "{} and {} would both write to {} (their scenes are both named {:?}): give them different names",
                paths[k].display(),
                p.display(),
                d.display(),
                s.name
            );
        }
        dirs.push(d);
    }
    let options = |d: &PathBuf, progress: bool| RunOptions {
        out_dir: Some(d.clone()),
        progress,
        ..opts.clone()
    };
    if let Some(mut gpu) = batch_backend(opts.backend)? {
        let runs: Vec<_> = scenes
            .iter()
            .zip(&dirs)
            .map(|(s, d)| (s, options(d, false)))
            .collect();
        return Ok(run_batch(&runs, &mut gpu));
    }
    Ok(scenes
        .iter()
        .zip(&dirs)
        .map(|(s, d)| run_scene(s, &options(d, opts.progress)))
        .collect())
}

/// The GPU for a batch of runs: with `--backend gpu` the adapter (an error
/// without one); with `auto` a hardware adapter, else none (the runs go one
/// after another, each choosing as alone); none on the CPU backends.
fn batch_backend(choice: BackendChoice) -> Result<Option<GpuState>> {
    let ctx = match choice {
        BackendChoice::Cpu | BackendChoice::CpuF32 => return Ok(None),
        BackendChoice::Gpu => crate::gpu::GpuContext::try_new().ok_or_else(|| {
            anyhow::anyhow!("--backend gpu: no GPU adapter found (on a machine without a GPU, install mesa-vulkan-drivers for lavapipe and set WGPU_BACKEND=vulkan)")
        })?,
        BackendChoice::Auto => match crate::gpu::GpuContext::try_new() {
            Some(c) if !c.is_software() => c,
            _ => return Ok(None),
        },
    };
    let solver = crate::gpu::jacobi::GpuJacobi::new(&ctx)?;
    Ok(Some(GpuState { ctx, solver }))
}
