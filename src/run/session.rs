//! The step loop of a run and its ending, the same for a run that starts
//! and one that resumes from a checkpoint: step, record, write frames and
//! track rows, checkpoint when due, stop on a signal, on settling, on a
//! failed or diverging step or at the end; then `final.csv`, `final.png`
//! and `summary.json`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use crate::analysis::{DrumSampler, SettleDetector};
use crate::output::csv::write_final_csv;
use crate::output::summary::{write_json, StopReason, Summary};
use crate::scene::Scene;
use crate::state::State;
use crate::step::Stepper;
use crate::world::World;

use super::checkpoint::{
    write_checkpoint, Checkpoint, CheckpointClock, StartOptions, CHECKPOINT_FILE,
};
use super::guards::{non_finite, DivergenceBounds};
use super::outputs::Outputs;
use super::report::{record_analysis, record_discharge, record_dynamic_angle, write_picture};

/// Seconds between progress log lines when no terminal shows the bar.
const PROGRESS_LOG_SECONDS: f64 = 30.0;

/// The step loop's state ([`Session::start_loop`]): the next step, how the
/// loop ended, and the [`State`] kept to undo a step that makes it
/// non-finite — the same value a checkpoint keeps, so that the state the
/// run ends in after an undo is one state, whole.
pub(super) struct LoopState {
    /// The next step (1-based).
    pub k: u64,
    first: u64,
    steps: u64,
    frame_every: u64,
    stop_when_settled: bool,
    bar: ProgressBar,
    dump_steps: std::collections::BTreeSet<u64>,
    log_progress: Option<Instant>,
    run_start: Instant,
    stopped: bool,
    failure: Option<crate::step::StepError>,
    reason: StopReason,
    diverged: Option<String>,
    /// The state before the step being taken ([`State`]: every part a
    /// checkpoint keeps).
    before: State,
    framed: u64,
}

/// A run in progress: the world, its stepper and everything its outputs
/// and analyses accumulate.
pub(super) struct Session<'a> {
    /// The scene (for a resumed run: read from the run's `scene.ron`).
    pub scene: &'a Scene,
    /// The text of the run's `scene.ron` (kept in checkpoints).
    pub scene_ron: String,
    /// How the run was started.
    pub start: StartOptions,
    /// Draw a progress bar (or log progress lines).
    pub progress: bool,
    /// Stop after this step as a signal would.
    pub stop_after_step: Option<u64>,
    /// Where each completed step's index goes ([`super::RunOptions::steps_done`]).
    pub steps_done: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// The output directory.
    pub out: PathBuf,
    /// The state.
    pub world: World,
    /// The stepper on the chosen backend.
    pub stepper: Stepper,
    /// The summary so far.
    pub summary: Summary,
    /// The run's output files but its final ones ([`Outputs`]).
    pub outputs: Outputs,
    /// The settling detector, when detection is on.
    pub settle: Option<SettleDetector>,
    /// The drum sampler, when the scene measures a drum.
    pub drum: Option<DrumSampler>,
    /// The discharge sampler, when the scene measures a discharge.
    pub discharge: Option<crate::analysis::DischargeSampler>,
    /// What a sound run never crosses (from the scene's initial state).
    pub bounds: DivergenceBounds,
    /// When checkpoints are due (`None`: never, but on a signal).
    pub clock: Option<CheckpointClock>,
    /// Wall seconds spent by the processes that ran this run before (0 for
    /// a run that starts here).
    pub wall_before: f64,
    /// When this process took the run up.
    pub t0: Instant,
    /// The step of the last checkpoint written, if any.
    pub last_checkpoint: Option<u64>,
}

impl Session<'_> {
    /// Writes `checkpoint.bin` for the state now (after step
    /// `world.step_index`, its frame and track rows written).
    pub fn checkpoint(&mut self) -> Result<()> {
        let t = Instant::now();
        let track_len = self.outputs.flush()?;
        let mut summary = self.summary.clone();
        for (k, v) in self.stepper.timers.seconds() {
            summary.add_stage_seconds(&k, v);
        }
        if let Some(c) = self.stepper.backend.gpu_counters() {
            summary.add_gpu(&c);
        }
        summary.steps = self.world.state.step_index;
        summary.simulated_time = self.world.state.time;
        summary.bodies = self.world.state.bodies.len();
        summary.wall_time_s = self.wall_before + self.t0.elapsed().as_secs_f64();
        let ck = Checkpoint {
            repose_version: env!("CARGO_PKG_VERSION").to_owned(),
            scene_ron: self.scene_ron.clone(),
            options: self.start.clone(),
            world: self.world.state.clone(),
            settle: self.settle.clone(),
            drum: self.drum.clone(),
            discharge: self.discharge.clone(),
            summary_json: serde_json::to_string(&summary)
                .context("cannot encode the summary for a checkpoint")?,
            frames: self.outputs.frames_written(),
            track_len,
        };
        let bytes = write_checkpoint(&self.out.join(CHECKPOINT_FILE), &ck)?;
        let secs = t.elapsed().as_secs_f64();
        self.summary.add_stage_seconds("checkpoint", secs);
        self.last_checkpoint = Some(self.world.state.step_index);
        log::debug!(
            "checkpoint at step {} (t = {:.4} s): {bytes} bytes in {:.3} s",
            self.world.state.step_index,
            self.world.state.time,
            secs
        );
        Ok(())
    }

    /// Writes a frame of the current state, when frames are written: the
    /// VTU file and, with `output.csv_frames`, `frame_NNNNN.csv` beside it
    /// (the columns of `final.csv`); and the bodies' surfaces
    /// (`bodies_NNNNN.vtu`) when the scene has bodies that are not spheres.
    pub fn write_frame(&mut self) -> Result<()> {
        self.outputs
            .record_frame(self.scene, &self.world, &self.stepper, &mut self.summary)
    }

    /// Steps the world to the scene's duration (or until it settles, fails,
    /// diverges or is interrupted) and writes the final outputs.
    pub fn run(mut self) -> Result<Summary> {
        let mut ls = self.start_loop();
        while self.before_step(&mut ls) {
            let step = self.stepper.step(&mut self.world);
            if !self.after_step(&mut ls, step)? {
                break;
            }
        }
        self.end_loop(ls)
    }

    /// The step loop's state before its first step (the progress bar, the
    /// steps whose problems are written, the state kept to undo a step).
    pub fn start_loop(&mut self) -> LoopState {
        let scene = self.scene;
        let steps = scene.steps();
        let first = self.world.state.step_index + 1;
        let bar = if self.progress {
            let b = ProgressBar::new(steps);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:40.cyan/blue} {pos}/{len} steps  ETA {eta}  {msg}",
                )
                .expect("valid template"),
            );
            b.set_position(first - 1);
            b.reset_eta();
            b
        } else {
            ProgressBar::hidden()
        };
        if scene.analysis.existence_every.is_some()
            && !matches!(
                scene.formulation,
                crate::formulation::Formulation::Complementarity
            )
        {
            log::warn!("analysis.existence_every: the penalty formulation poses no contact problem to check; no check will run");
        }
        let dump_steps: std::collections::BTreeSet<u64> = scene
            .output
            .dump_problems
            .iter()
            .chain(&self.start.dump_steps)
            .copied()
            .collect();
        if let Some(last) = dump_steps.last().filter(|&&s| s > steps) {
            log::warn!("the run has {steps} steps: no problem will be written for step {last}");
        }
        LoopState {
            k: first,
            first,
            steps,
            frame_every: scene.frame_every(),
            stop_when_settled: scene.analysis.stop_when_settled && self.settle.is_some(),
            bar,
            dump_steps,
            // Without a terminal (a batch job, a redirected log) the bar is
            // not drawn; a log line every PROGRESS_LOG_SECONDS takes its place.
            log_progress: (self.progress && !std::io::stderr().is_terminal()).then(Instant::now),
            run_start: Instant::now(),
            stopped: false,
            failure: None,
            reason: StopReason::Completed,
            diverged: None,
            before: self.world.state.clone(),
            framed: self.world.state.step_index,
        }
    }

    /// Before step `ls.k`: whether it is to be taken (not past the end, no
    /// signal, not past `stop_after_step`); if so, the state it starts from
    /// is kept, so that a step that makes it non-finite can be undone.
    pub fn before_step(&mut self, ls: &mut LoopState) -> bool {
        let k = ls.k;
        if k > ls.steps {
            return false;
        }
        let asked = self.stop_after_step.is_some_and(|s| k > s);
        if asked || crate::interrupt::requested() {
            ls.reason = StopReason::Interrupted;
            log::warn!(
                "{}: stopping after step {} of {} (t = {:.4} s) and writing the outputs",
                if asked {
                    "stop_after_step"
                } else {
                    "interrupted"
                },
                k - 1,
                ls.steps,
                self.world.state.time
            );
            return false;
        }
        ls.before.clone_from(&self.world.state);
        true
    }

    /// After step `ls.k` (taken by the stepper alone or by a batch): checks
    /// the new state, records the step, writes what is due; whether the
    /// loop goes on.
    pub fn after_step(
        &mut self,
        ls: &mut LoopState,
        step: Result<crate::step::StepReport, crate::step::StepError>,
    ) -> Result<bool> {
        let scene = self.scene;
        let (k, steps, frame_every) = (ls.k, ls.steps, ls.frame_every);
        let out = self.out.clone();
        let world = &mut self.world;
        // One scan of the new state; a failed step has its own error.
        let bad = step
            .as_ref()
            .ok()
            .and_then(|_| non_finite(&world.state.bodies));
        // A finite state can still be lost: the bounds. The kinetic
        // energy serves them and the settling detector.
        let ke = world.state.bodies.kinetic_energy();
        let crossed = match (&step, &bad) {
            (Ok(_), None) => self.bounds.check(world, ke, self.stepper.last_problem()),
            _ => None,
        };
        match step {
            Ok(_) if bad.is_some() => {
                let what = bad.unwrap_or_default();
                ls.diverged = Some(format!(
                    "step {k} (t = {:.4} s) made the state non-finite: {what}; \
                     the outputs hold the state after step {} — a smaller time step \
                     (time_step) or a check of the initial velocities usually helps",
                    world.state.time,
                    k - 1
                ));
                // Captured from this world a step ago: it fits.
                world
                    .restore(&ls.before)
                    .map_err(|e| anyhow::anyhow!("cannot undo step {k}: {e}"))?;
                return Ok(false);
            }
            Ok(_) if crossed.is_some() => {
                let what = crossed.unwrap_or_default();
                ls.diverged = Some(format!(
                    "step {k} (t = {:.4} s): {what}; the outputs hold the state after that step",
                    world.state.time
                ));
                return Ok(false);
            }
            Ok(rep) => {
                if ls.dump_steps.contains(&k) {
                    let path = out.join(format!("problem_step{k:06}.dat"));
                    crate::output::write_contact_problem(&path, self.stepper.last_problem())
                        .with_context(|| format!("cannot write the problem of step {k}"))?;
                    log::info!(
                        "step {k}: wrote its problem ({} contacts) to {}",
                        rep.contacts,
                        path.display()
                    );
                }
                let summary = &mut self.summary;
                summary.contacts.record(rep.contacts);
                summary.substeps += rep.substeps;
                summary.particle_steps += rep.substeps * world.state.bodies.len() as u64;
                let s = rep.solve;
                summary
                    .solver
                    .record(s.iterations, s.residual_abs, s.residual_rel, s.converged);
                summary.solver.record_work(rep.contacts, s.iterations);
                if let Some(f) = s.fallback_iterations {
                    summary.solver.record_fallback(f, s.fallback_seconds);
                }
                if k % 10 == 0 || k == steps {
                    ls.bar.set_message(format!(
                        "{} contacts, {} it, res {:.1e}",
                        rep.contacts, s.iterations, s.residual_rel
                    ));
                }
                if let Some(last) = &mut ls.log_progress {
                    if last.elapsed().as_secs_f64() >= PROGRESS_LOG_SECONDS {
                        *last = Instant::now();
                        let wall = ls.run_start.elapsed().as_secs_f64();
                        let eta = wall / (k + 1 - ls.first) as f64 * (steps - k) as f64;
                        log::info!(
                            "step {k}/{steps} (t = {:.3} s): {} bodies, {} contacts, {} it, res {:.1e}; {:.0} s elapsed, ETA {:.0} s",
                            world.state.time,
                            world.state.bodies.len(),
                            rep.contacts,
                            s.iterations,
                            s.residual_rel,
                            wall,
                            eta
                        );
                    }
                }
            }
            Err(e) => {
                ls.failure = Some(e);
                return Ok(false);
            }
        }
        if let Some(d) = &mut self.settle {
            // A pile still being poured is not settled, however quiet: the
            // sample is loud (infinite) until every inlet has finished.
            let pouring = !world.inlets_finished();
            let ke = if pouring || world.state.bodies.is_empty() {
                f64::INFINITY
            } else {
                ke / world.state.bodies.len() as f64
            };
            ls.stopped = d.update(world.state.time, ke) && ls.stop_when_settled;
        }
        if let Some(every) = scene.analysis.existence_every {
            if k % every == 0 && self.stepper.last_problem().n_contacts() > 0 {
                let t = Instant::now();
                record_existence(&mut self.summary, k, every, self.stepper.last_problem());
                self.summary
                    .add_stage_seconds("existence", t.elapsed().as_secs_f64());
            }
        }
        let t_out = Instant::now();
        if let Some(d) = &mut self.discharge {
            d.sample(&world.state.bodies, world.state.time);
        }
        if let Some(d) = &mut self.drum {
            if k % frame_every == 0 || k == steps {
                d.sample(
                    &world.state.bodies.pos,
                    &world.state.bodies.radius,
                    world.state.time,
                );
            }
        }
        if k % frame_every == 0 || k == steps || ls.stopped {
            self.write_frame()?;
            ls.framed = self.world.state.step_index;
        }
        self.outputs
            .record_step(&self.world, &self.stepper.last_wall_loads)?;
        self.summary
            .add_stage_seconds("output", t_out.elapsed().as_secs_f64());
        ls.bar.inc(1);
        if let Some(done) = &self.steps_done {
            done.store(k, std::sync::atomic::Ordering::Relaxed);
        }
        if ls.stopped {
            log::info!(
                "pile settled at t = {:.4} s (detected at t = {:.4} s); stopping after step {k} of {steps} (analysis.stop_when_settled)",
                self.settle.as_ref().and_then(|d| d.settle_time()).unwrap_or(self.world.state.time),
                self.world.state.time
            );
            return Ok(false);
        }
        if k < steps && self.clock.as_mut().is_some_and(|c| c.due(k)) {
            self.checkpoint()?;
        }
        ls.k += 1;
        Ok(true)
    }

    /// After the last step: the frame of a failed run's last state, the
    /// checkpoint of an interrupted one, then the final outputs.
    pub fn end_loop(mut self, ls: LoopState) -> Result<Summary> {
        ls.bar.finish_and_clear();
        // A run that diverged or failed ends the frame series with the state
        // it stopped in (the state of final.csv), so that ParaView shows
        // what went wrong; an interrupted run does not: its resumption
        // continues the series on the frame interval.
        if (ls.diverged.is_some() || ls.failure.is_some())
            && ls.framed != self.world.state.step_index
        {
            self.write_frame()
                .context("cannot write the frame of the state the run stopped in")?;
        }
        // A run that diverged or failed did not finish, whatever the loop's
        // reason still says (`finish` turns it into Diverged or Failed): its
        // last state is not one to start another run from, and the
        // checkpoint it keeps is the last one written on the clock.
        let finished = ls.diverged.is_none()
            && ls.failure.is_none()
            && matches!(ls.reason, StopReason::Completed | StopReason::Settled);
        if ls.reason == StopReason::Interrupted {
            self.checkpoint()
                .context("cannot write the checkpoint of the interrupted run")?;
        } else if finished && self.scene.output.checkpoint.keep {
            self.checkpoint()
                .context("cannot write the final checkpoint (output.checkpoint.keep)")?;
        }
        self.finish(ls.reason, ls.stopped, ls.diverged, ls.failure)
    }

    /// Writes `final.csv`, `final.png` and `summary.json` for a run that
    /// ended for `reason`; removes the checkpoint of a run that finished,
    /// unless the scene keeps it (`output.checkpoint.keep`).
    fn finish(
        mut self,
        mut reason: StopReason,
        stopped: bool,
        diverged: Option<String>,
        failure: Option<crate::step::StepError>,
    ) -> Result<Summary> {
        let scene = self.scene;
        let out = self.out.clone();
        let world = &self.world;
        let summary = &mut self.summary;
        self.outputs.finish()?;
        write_final_csv(out.join("final.csv"), &world.state.bodies)
            .with_context(|| format!("cannot write {}", out.join("final.csv").display()))?;
        // Inlets grow the body count during the run: report the final count.
        summary.bodies = world.state.bodies.len();
        if !world.model.inlets.is_empty() {
            let emitted: usize = world.state.inlets.iter().map(|p| p.emitted).sum();
            let wanted: usize = world.model.inlets.iter().map(|s| s.count).sum();
            summary
                .extra
                .insert("inlet_emitted".into(), serde_json::Value::from(emitted));
            log::info!("inlets emitted {emitted} of {wanted} spheres");
        }
        // The radii a run of drawn sizes produced (plain spheres).
        let drawn = scene.spheres.iter().any(|s| match s {
            crate::scene::SphereSource::RandomBox(b) => b.sizes.is_some(),
            crate::scene::SphereSource::Inlet(i) => i.sizes.is_some(),
            _ => false,
        });
        if drawn {
            let b = &world.state.bodies;
            let radii: Vec<f64> = (0..b.len())
                .filter(|&i| b.shape[i] == crate::bodies::SPHERE)
                .map(|i| b.radius[i])
                .collect();
            if let Some(r) = crate::sizes::SizeReport::of(&radii) {
                log::info!(
                    "sizes: {} spheres, radius {:.4e} ± {:.1e} m (r10 {:.4e}, r50 {:.4e}, r90 {:.4e}; mass median {:.4e})",
                    r.count, r.mean, r.sd, r.r10, r.r50, r.r90, r.r50_mass
                );
                summary
                    .extra
                    .insert("sizes".into(), serde_json::to_value(r).unwrap_or_default());
            }
        }
        if scene.output.picture.enabled && !self.start.no_picture {
            let t_pic = Instant::now();
            write_picture(scene, world, &out.join("final.png"));
            summary.add_stage_seconds("picture", t_pic.elapsed().as_secs_f64());
        }
        if stopped {
            reason = StopReason::Settled;
        }
        if let Some(msg) = &diverged {
            reason = StopReason::Diverged;
            summary.stop_message = Some(msg.clone());
        } else if let Some(e) = &failure {
            reason = StopReason::Failed;
            summary.stop_message = Some(e.to_string());
        }
        summary.stopped = reason;
        summary.steps = world.state.step_index;
        summary.simulated_time = world.state.time;
        summary.wall_time_s = self.wall_before + self.t0.elapsed().as_secs_f64();
        for (k, v) in self.stepper.timers.seconds() {
            summary.add_stage_seconds(&k, v);
        }
        if let Some(c) = self.stepper.backend.gpu_counters() {
            summary.add_gpu(&c);
        }
        summary.kinetic_energy_final = world.state.bodies.kinetic_energy();
        // A failed or diverged run has no state worth measuring.
        let sound = failure.is_none() && diverged.is_none();
        if let Some(d) = self.discharge.take() {
            record_discharge(&d, &self.out, sound, summary);
        }
        if let Some(d) = self.drum.take() {
            record_dynamic_angle(d, sound, summary);
        }
        record_analysis(scene, world, self.settle.as_ref(), stopped, sound, summary);
        write_json(out.join("summary.json"), &*summary)
            .with_context(|| format!("cannot write {}", out.join("summary.json").display()))?;
        let ck_path = out.join(CHECKPOINT_FILE);
        let resume_hint = match self.last_checkpoint {
            Some(k) if ck_path.exists() => format!(
                "; the checkpoint of step {k} is kept: `repose run --resume {}` goes on from there \
                 (a deterministic failure recurs; --backend resumes on another backend)",
                out.display()
            ),
            _ => String::new(),
        };
        match reason {
            StopReason::Completed | StopReason::Settled if scene.output.checkpoint.keep => {
                log::info!(
                    "the final state is kept in {} (output.checkpoint.keep): another scene's `FromFile(file: …)` can start from it",
                    ck_path.display()
                );
            }
            StopReason::Completed | StopReason::Settled => {
                if let Err(e) = std::fs::remove_file(&ck_path) {
                    if e.kind() != std::io::ErrorKind::NotFound {
                        log::warn!(
                            "the run finished but its checkpoint {} could not be removed: {e}",
                            ck_path.display()
                        );
                    }
                }
            }
            StopReason::Interrupted => log::warn!(
                "interrupted at step {} of {}: `repose run --resume {}` continues the run",
                world.state.step_index,
                scene.steps(),
                out.display()
            ),
            _ => {}
        }
        let summary = self.summary;
        if let Some(msg) = diverged {
            return Err(anyhow::anyhow!(
                "simulation of {} diverged: {msg}; outputs are in {}{resume_hint}",
                scene.file,
                out.display()
            ));
        }
        if let Some(e) = failure {
            return Err(anyhow::Error::new(e).context(format!(
                "simulation of {} stopped; outputs up to the failing step are in {}{resume_hint}",
                scene.file,
                out.display()
            )));
        }
        log::info!(
            "done: {} steps in {:.1} s wall, outputs in {}",
            summary.steps,
            summary.wall_time_s,
            out.display()
        );
        Ok(summary)
    }
}

/// Checks the existence criterion of Acary & Cadoux 2011 on step `k`'s
/// contact problem and adds it to `summary.extra.existence` (kept in the
/// summary, so a resumed run goes on counting): steps checked, how many
/// guaranteed a solution (s ≥ 0) and robustly (s > 0), the smallest s and
/// its step, and the first steps (up to 20) where (A) failed.
fn record_existence(
    summary: &mut crate::output::summary::Summary,
    k: u64,
    every: u64,
    problem: &crate::problem::ContactProblem,
) {
    let r = crate::existence::check(&crate::existence::from_contact_problem(problem));
    if r.guaranteed {
        log::debug!(
            "step {k}: existence criterion s = {:.3e} ({})",
            r.s,
            r.status
        );
    } else {
        log::warn!(
            "step {k}: the existence criterion of Acary & Cadoux 2011 fails (s = {:.3e}, {}): a solution of this step's contact problem is not guaranteed",
            r.s,
            r.status
        );
    }
    let e = summary
        .extra
        .entry("existence")
        .or_insert_with(|| serde_json::json!({"every": every, "checked": 0, "guaranteed": 0, "robust": 0, "min_s": null, "min_s_step": null, "failed_steps": []}));
    let count = |e: &mut serde_json::Value, key: &str| {
        e[key] = serde_json::json!(e[key].as_u64().unwrap_or(0) + 1);
    };
    count(e, "checked");
    if r.guaranteed {
        count(e, "guaranteed");
    }
    if r.robust {
        count(e, "robust");
    }
    if r.s.is_finite() && e["min_s"].as_f64().is_none_or(|m| r.s < m) {
        e["min_s"] = serde_json::json!(r.s);
        e["min_s_step"] = serde_json::json!(k);
    }
    if !r.guaranteed {
        if let Some(list) = e["failed_steps"].as_array_mut() {
            if list.len() < 20 {
                list.push(serde_json::json!(k));
            }
        }
    }
}
