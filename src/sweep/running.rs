//! Running a sweep: every run's scene prepared and validated first, then
//! the runs (reused when an earlier sweep finished them), their rows, and
//! the sweep's files.

use super::*;

/// A sweep ready to run: the base scene, the specification, and every
/// run's validated scene.
#[derive(Clone, Debug)]
pub struct PreparedSweep {
    /// The scene file as given.
    pub scene_file: PathBuf,
    /// [`content_hash`] of its bytes.
    pub scene_hash: String,
    /// The base scene: the file with the sweep's fixed overrides
    /// ([`SweepSpec::set`]), before the varied values.
    pub base: Scene,
    /// What is varied.
    pub spec: SweepSpec,
    /// Every run in run order with its scene (overrides and seed applied,
    /// validated).
    pub runs: Vec<(RunPoint, Scene)>,
}

/// Loads `scene_file`, builds every run's scene (overrides, then the seed
/// offset) and validates each: the first bad path, value or scene is an
/// error naming the run's values, the file, the field and the reason —
/// before anything runs.
pub fn prepare(scene_file: &Path, spec: SweepSpec) -> Result<PreparedSweep> {
    let bytes = std::fs::read(scene_file)
        .with_context(|| format!("{}: cannot read the scene file", scene_file.display()))?;
    let base = Scene::load(scene_file, &spec.set)?;
    let mut runs = Vec::with_capacity(spec.total_runs());
    let mut grid_scene: Option<(Vec<String>, Scene)> = None;
    for p in spec.points() {
        let scene = match &grid_scene {
            Some((values, s)) if *values == p.values => s.clone(),
            _ => {
                let overrides: Vec<(String, String)> = spec
                    .vary
                    .iter()
                    .zip(&p.values)
                    .flat_map(|(v, value)| v.linked_paths().map(|p| (p.to_string(), value.clone())))
                    .collect();
                let s = base
                    .with_overrides(&overrides)
                    .with_context(|| format!("sweep run {} ({})", p.index, spec.caption(&p)))?;
                grid_scene = Some((p.values.clone(), s.clone()));
                s
            }
        };
        let scene = apply_seed(&scene, p.seed);
        if p.seed > 0 {
            scene
                .validate()
                .with_context(|| format!("sweep run {} ({})", p.index, spec.caption(&p)))?;
        }
        runs.push((p, scene));
    }
    if spec.seeds > 1 && !has_seeded_source(&base) {
        log::warn!(target: "repose::sweep",
            "--seeds {}: {} has no seeded sphere source (a RandomBox, or a Lattice with jitter > 0), so every seed gives the same run",
            spec.seeds,
            scene_file.display()
        );
    }
    if base.analysis.heap.is_none() {
        log::warn!(target: "repose::sweep",
            "{} has no analysis.heap section: the sweep records no angles of repose",
            scene_file.display()
        );
    }
    Ok(PreparedSweep {
        scene_file: scene_file.to_owned(),
        scene_hash: content_hash(&bytes),
        base,
        spec,
        runs,
    })
}

/// How to run a sweep.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// The sweep directory.
    pub out_dir: PathBuf,
    /// Runs at once (≥ 1).
    pub jobs: usize,
    /// Which shard to run ([`Shard::ALL`] for the whole sweep).
    pub shard: Shard,
    /// Keep VTU frames in the run directories (off by default).
    pub frames: bool,
    /// The solver backend of every run.
    pub backend: BackendChoice,
    /// Draw the overall progress bar (only when stderr is a terminal).
    pub progress: bool,
    /// Run every run, even one a previous sweep into the same directory
    /// finished; without it such runs are reused (`finished_run`).
    pub rerun: bool,
    /// Curves drawn over the plots (`--reference FILE`).
    pub reference: Option<Reference>,
    /// Runs stepped together on one GPU ([`crate::run::batch`]): `Some(k)`
    /// batches of up to k (1: one run at a time, as without a GPU); `None`
    /// chooses: every run of the shard (at most [`AUTO_BATCH`]) on a
    /// hardware GPU, one at a time elsewhere.
    pub batch: Option<usize>,
}

/// The most runs `--batch` puts in one batch when left to choose.
pub const AUTO_BATCH: usize = 64;

/// What a sweep or a merge produced.
#[derive(Clone, Debug)]
pub struct SweepReport {
    /// The rows written to `sweep.csv`, in run order.
    pub rows: Vec<SweepRow>,
    /// How many of them have an error.
    pub failed: usize,
    /// The sweep directory.
    pub out_dir: PathBuf,
    /// The files written (`sweep.csv`, `sweep.json`, and for a whole sweep
    /// `sweep.png` and `contact_sheet.png` when they could be made).
    pub files: Vec<PathBuf>,
}

/// Runs the runs of `opts.shard` of `sweep`, `opts.jobs` at a time, and
/// writes `sweep.csv` and `sweep.json` — and, for the whole sweep (shard
/// 1/1), `sweep.png` and `contact_sheet.png`. A run that fails is a row
/// with `error` filled; errors are returned only for the sweep's own
/// files.
pub fn run_sweep(sweep: &PreparedSweep, opts: &SweepOptions) -> Result<SweepReport> {
    crate::interrupt::install();
    if opts.jobs == 0 {
        bail!("--jobs must be at least 1 (got 0)");
    }
    let out = &opts.out_dir;
    let runs_dir = out.join("runs");
    std::fs::create_dir_all(&runs_dir)
        .with_context(|| format!("cannot create {}", runs_dir.display()))?;
    let mine: Vec<&(RunPoint, Scene)> = sweep
        .runs
        .iter()
        .filter(|(p, _)| opts.shard.contains(p.index))
        .collect();
    log::info!(target: "repose::sweep",
        "sweep of {}: {} runs in all, {} in shard {}, {} at a time",
        sweep.scene_file.display(),
        sweep.runs.len(),
        mine.len(),
        opts.shard,
        opts.jobs.min(mine.len().max(1))
    );
    let list: Vec<RunJob<'_>> = mine
        .iter()
        .map(|(p, scene)| RunJob {
            point: p,
            scene,
            dir: runs_dir.join(sweep.spec.run_dir_name(p)),
            caption: sweep.spec.caption(p),
        })
        .collect();
    let rows = run_jobs(&list, opts);
    let manifest = Manifest {
        version: MANIFEST_VERSION,
        scene_file: sweep.scene_file.display().to_string(),
        scene_name: sweep.base.name.clone(),
        scene_hash: sweep.scene_hash.clone(),
        spec: sweep.spec.clone(),
        shard: opts.shard,
        total_runs: sweep.runs.len(),
        runs: rows.iter().map(|r| r.run).collect(),
        run_dirs: mine
            .iter()
            .map(|(p, _)| (p.index, format!("runs/{}", sweep.spec.run_dir_name(p))))
            .collect(),
        repose_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let whole = opts.shard.count == 1;
    write_outputs(out, &manifest, &rows, whole, opts.reference.as_ref())
}

/// One run for [`run_jobs`]: its point (index, values, seed), its scene
/// (overrides and seed applied, validated), its directory and its caption
/// in the log.
#[derive(Clone, Debug)]
pub struct RunJob<'a> {
    /// Index, values and seed offset (the row's `run`, values and `seed`).
    pub point: &'a RunPoint,
    /// The scene to run.
    pub scene: &'a Scene,
    /// The run's output directory.
    pub dir: PathBuf,
    /// How the log names the run (`path = value, seed s`).
    pub caption: String,
}

/// Runs `list`, `opts.jobs` at a time (each with its share of the rayon
/// threads), reusing runs an earlier sweep finished in the same directory
/// and resuming stopped ones unless `opts.rerun`; one row per run that
/// started, sorted by `run`. A SIGINT/SIGTERM lets the runs in progress
/// finish their step and starts no more. `opts.out_dir` and `opts.shard`
/// are not read: the directories are the jobs' own.
pub fn run_jobs(list: &[RunJob<'_>], opts: &SweepOptions) -> Vec<SweepRow> {
    crate::interrupt::install();
    if let Some((gpu, size)) = batch_gpu(list.len(), opts) {
        return run_batched(list, opts, gpu, size);
    }
    let bar = if opts.progress {
        let b = ProgressBar::new(list.len() as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40.cyan/blue} {pos}/{len} runs  ETA {eta}  {msg}",
            )
            .expect("valid template"),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let jobs = opts.jobs.min(list.len()).max(1);
    let threads_per_run = (rayon::current_num_threads() / jobs).max(1);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<SweepRow>> = Mutex::new(Vec::with_capacity(list.len()));
    let failed_count = AtomicUsize::new(0);
    let done_count = AtomicUsize::new(0);
    let sweep_start = std::time::Instant::now();
    let worker = || {
        let pool = if jobs > 1 {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads_per_run)
                .build()
                .ok()
        } else {
            None
        };
        loop {
            if crate::interrupt::requested() {
                // SIGINT/SIGTERM: finish the runs in progress (they stop
                // after their current step), start no more.
                break;
            }
            let k = next.fetch_add(1, Ordering::SeqCst);
            let Some(job) = list.get(k) else {
                break;
            };
            let (p, scene, dir) = (job.point, job.scene, &job.dir);
            let run = || {
                if !opts.rerun {
                    if let Some(row) = finished_run(p, scene, dir, opts) {
                        log::info!(target: "repose::sweep",
                            "run {} was {} by an earlier sweep: reused ({})",
                            p.index,
                            if row.run_failed() { "failed" } else { "finished" },
                            dir.display()
                        );
                        return row;
                    }
                    if resumable(scene, dir, opts) {
                        log::info!(target: "repose::sweep",
                            "run {} was stopped part way by an earlier sweep: resumed from its checkpoint ({})",
                            p.index,
                            dir.display()
                        );
                        let t0 = Instant::now();
                        let ropts = ResumeOptions {
                            backend: Some(opts.backend),
                            progress: false,
                            stop_after_step: None,
                        };
                        return row_of(p, dir, t0, resume_run(dir, &ropts));
                    }
                }
                run_one(p, scene, dir, opts)
            };
            let row = match &pool {
                Some(pool) => pool.install(run),
                None => run(),
            };
            if row.run_failed() {
                failed_count.fetch_add(1, Ordering::SeqCst);
            }
            let done = done_count.fetch_add(1, Ordering::SeqCst) + 1;
            let elapsed = sweep_start.elapsed().as_secs_f64();
            let eta = elapsed / done as f64 * (list.len() - done) as f64;
            let line = format!(
                "[{done}/{}, ETA {eta:.0} s] run {} ({}): {}, {} s wall",
                list.len(),
                p.index,
                job.caption,
                if row.run_failed() {
                    format!("FAILED: {}", row.error)
                } else {
                    let mut what = match (row.angle_deg, row.angle_stderr_deg) {
                        (Some(a), Some(e)) => format!("angle {a:.2}° ± {e:.2}°"),
                        _ => "no angle".to_string(),
                    };
                    if let Some(h) = row.height_over_diameter {
                        what += &format!(", height {h:.2} D");
                    }
                    if let Some(r) = row.bottom_mean_radius_over_diameter {
                        what += &format!(", mean radius {r:.2} D");
                    }
                    if !row.error.is_empty() {
                        what += &format!(" ({})", row.error);
                    }
                    what
                },
                row.wall_time_s.map(fmt_num).unwrap_or_else(|| "?".into())
            );
            bar.suspend(|| log::info!(target: "repose::sweep", "{line}"));
            bar.inc(1);
            let failed = failed_count.load(Ordering::SeqCst);
            if failed > 0 {
                bar.set_message(format!("{failed} failed"));
            }
            results.lock().unwrap_or_else(|e| e.into_inner()).push(row);
        }
    };
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(worker);
        }
    });
    bar.finish_and_clear();
    let mut rows = results.into_inner().unwrap_or_else(|e| e.into_inner());
    if rows.len() < list.len() {
        log::warn!(target: "repose::sweep",
            "interrupted: {} of {} runs were not started; the table lists the {} that ran",
            list.len() - rows.len(),
            list.len(),
            rows.len()
        );
    }
    rows.sort_by_key(|r| r.run);
    rows
}

/// The row of a run that an earlier sweep into the same directory finished
/// or that failed there, when it can stand for this one: its
/// `summary.json` says it completed, settled, failed or diverged (a failed
/// run stays recorded with its error: the same scene on the same version
/// fails the same way), it was written by this version of repose, its
/// `scene.ron` is this run's scene to the byte, and its frames were kept if
/// this sweep keeps them. A run that was interrupted or killed (no
/// summary) is resumed from its checkpoint ([`resumable`]) or run again;
/// one that differs in any of these is run again.
fn finished_run(p: &RunPoint, scene: &Scene, dir: &Path, opts: &SweepOptions) -> Option<SweepRow> {
    use crate::output::summary::StopReason;
    // Summaries older than the `stopped` field cannot say how their run
    // ended: such runs are run again.
    let text = std::fs::read_to_string(dir.join("summary.json")).ok()?;
    let raw: serde_json::Value = serde_json::from_str(&text).ok()?;
    raw.get("stopped")?;
    let s: crate::output::summary::Summary = serde_json::from_value(raw).ok()?;
    if s.stopped == StopReason::Interrupted
        || s.repose_version != env!("CARGO_PKG_VERSION")
        || (opts.frames && !dir.join("frames.pvd").exists())
    {
        return None;
    }
    let same_scene = std::fs::read_to_string(dir.join("scene.ron")).ok()? == scene.to_ron().ok()?;
    same_scene.then(|| {
        let mut row = SweepRow::from_summary(p, &s);
        if matches!(s.stopped, StopReason::Failed | StopReason::Diverged) {
            row.error = format!(
                "{} (recorded by an earlier sweep): {}",
                s.stopped,
                s.stop_message.as_deref().unwrap_or("no message")
            );
        }
        row
    })
}

/// Whether the run in `dir` can be resumed: it has a checkpoint written by
/// this version of repose for this run's scene (and its frames if this
/// sweep keeps them).
fn resumable(scene: &Scene, dir: &Path, opts: &SweepOptions) -> bool {
    let path = dir.join(crate::run::checkpoint::CHECKPOINT_FILE);
    if !path.is_file() {
        return false;
    }
    let Ok(ck) = crate::run::checkpoint::read_checkpoint(&path) else {
        return false;
    };
    ck.repose_version == env!("CARGO_PKG_VERSION")
        && ck.options.no_frames != opts.frames
        && scene.to_ron().is_ok_and(|r| r == ck.scene_ron)
}

/// The row of a run that ended with `result`: from its summary, and with
/// the error when it failed.
fn row_of(p: &RunPoint, dir: &Path, t0: Instant, result: Result<Summary>) -> SweepRow {
    match result {
        Ok(s) => SweepRow::from_summary(p, &s),
        Err(e) => {
            // The run writes summary.json before it reports a failed step;
            // keep what it has (backend, settling, wall time).
            let mut row = match crate::output::summary::read_summary(dir.join("summary.json")) {
                Ok(s) => SweepRow::from_summary(p, &s),
                Err(_) => SweepRow {
                    run: p.index,
                    values: p.values.clone(),
                    seed: p.seed,
                    wall_time_s: Some(t0.elapsed().as_secs_f64()),
                    ..SweepRow::default()
                },
            };
            row.error = format!("{e:#}");
            row
        }
    }
}

/// The GPU and batch size when the runs are to be batched: `--batch` above
/// 1 on a GPU backend, or left to choose ([`SweepOptions::batch`]) on a
/// hardware GPU; `None` otherwise (and a log line says why when a batch was
/// asked for but cannot be had).
fn batch_gpu(runs: usize, opts: &SweepOptions) -> Option<(crate::step::GpuState, usize)> {
    use crate::run::BackendChoice as B;
    if runs < 2 || matches!(opts.batch, Some(0 | 1)) {
        return None;
    }
    if matches!(opts.backend, B::Cpu | B::CpuF32) {
        if opts.batch.is_some() {
            log::warn!(target: "repose::sweep",
                "--batch: batches run on a GPU backend; with --backend {} the runs go one at a time",
                if opts.backend == B::Cpu { "cpu" } else { "cpu-f32" });
        }
        return None;
    }
    let Some(ctx) = crate::gpu::GpuContext::try_new() else {
        if opts.batch.is_some() || opts.backend == B::Gpu {
            log::warn!(target: "repose::sweep", "--batch: no GPU adapter; the runs go one at a time");
        }
        return None;
    };
    let hardware = !ctx.is_software();
    let size = match opts.batch {
        Some(k) if hardware || opts.backend == B::Gpu => k,
        Some(_) => {
            log::warn!(target: "repose::sweep",
                "--batch: --backend auto found only a software adapter ({}), slower than the cpu backend; the runs go one at a time on the cpu (--backend gpu batches on it)",
                ctx.describe());
            return None;
        }
        None if hardware => AUTO_BATCH,
        None => return None,
    }
    .min(runs);
    match crate::gpu::jacobi::GpuJacobi::new(&ctx) {
        Ok(solver) => {
            log::info!(target: "repose::sweep",
                "runs in batches of up to {size} on gpu ({}){}",
                ctx.describe(),
                if opts.batch.is_none() { " (--batch chooses all runs on a hardware GPU)" } else { "" });
            Some((crate::step::GpuState { ctx, solver }, size))
        }
        Err(e) => {
            log::warn!(target: "repose::sweep", "--batch: the GPU solver could not be made ({e}); the runs go one at a time");
            None
        }
    }
}

/// Runs `list` in batches of `size` on one GPU ([`crate::run::batch`]):
/// runs an earlier sweep finished are reused and stopped ones resumed
/// alone, as [`run_jobs`] does; the rest go in batches, in run order.
fn run_batched(
    list: &[RunJob<'_>],
    opts: &SweepOptions,
    mut gpu: crate::step::GpuState,
    size: usize,
) -> Vec<SweepRow> {
    let mut rows = Vec::with_capacity(list.len());
    let mut fresh = Vec::new();
    for job in list {
        let (p, scene, dir) = (job.point, job.scene, &job.dir);
        if !opts.rerun {
            if let Some(row) = finished_run(p, scene, dir, opts) {
                log::info!(target: "repose::sweep",
                    "run {} was finished by an earlier sweep: reused ({})", p.index, dir.display());
                rows.push(row);
                continue;
            }
            if resumable(scene, dir, opts) {
                log::info!(target: "repose::sweep",
                    "run {} was stopped part way by an earlier sweep: resumed alone from its checkpoint ({})",
                    p.index, dir.display());
                let t0 = Instant::now();
                let ropts = ResumeOptions {
                    backend: Some(opts.backend),
                    progress: false,
                    stop_after_step: None,
                };
                rows.push(row_of(p, dir, t0, resume_run(dir, &ropts)));
                continue;
            }
        }
        fresh.push(job);
    }
    for chunk in fresh.chunks(size.max(1)) {
        if crate::interrupt::requested() {
            break;
        }
        let t0 = Instant::now();
        let runs: Vec<(&Scene, RunOptions)> = chunk
            .iter()
            .map(|job| (job.scene, run_options(&job.dir, opts)))
            .collect();
        log::info!(target: "repose::sweep",
            "a batch of {} runs: {}", chunk.len(),
            chunk.iter().map(|j| j.point.index.to_string()).collect::<Vec<_>>().join(", "));
        let results = crate::run::batch::run_batch(&runs, &mut gpu);
        for (job, result) in chunk.iter().zip(results) {
            let row = row_of(job.point, &job.dir, t0, result);
            log::info!(target: "repose::sweep",
            "run {} ({}): {}",
            job.point.index,
            job.caption,
            if row.run_failed() {
                format!("FAILED: {}", row.error)
            } else {
                match (row.angle_deg, row.angle_stderr_deg) {
                    (Some(a), Some(e)) => format!("angle {a:.2}° ± {e:.2}°"),
                    _ => "no angle".to_string(),
                }
            });
            rows.push(row);
        }
    }
    rows.sort_by_key(|r| r.run);
    rows
}

/// The options of one run of a sweep: into its own directory, replaced if
/// there, no progress bar, frames only with `--frames`.
fn run_options(dir: &Path, opts: &SweepOptions) -> RunOptions {
    RunOptions {
        out_dir: Some(dir.to_owned()),
        progress: false,
        no_frames: !opts.frames,
        backend: opts.backend,
        no_picture: false,
        dump_steps: Vec::new(),
        // A sweep owns its run directories: running it again replaces them.
        overwrite: true,
        stop_after_step: None,
        steps_done: None,
    }
}

/// Runs one scene into `dir` and turns the outcome into a row.
fn run_one(p: &RunPoint, scene: &Scene, dir: &Path, opts: &SweepOptions) -> SweepRow {
    let t0 = Instant::now();
    row_of(p, dir, t0, run_scene(scene, &run_options(dir, opts)))
}

/// Writes `sweep.csv` and `sweep.json`, and with `whole` also `sweep.png`
/// and `contact_sheet.png` (a picture that cannot be made is a warning).
pub(super) fn write_outputs(
    out: &Path,
    manifest: &Manifest,
    rows: &[SweepRow],
    whole: bool,
    reference: Option<&Reference>,
) -> Result<SweepReport> {
    let paths: Vec<String> = manifest.spec.vary.iter().map(|v| v.path.clone()).collect();
    let csv = out.join("sweep.csv");
    write_sweep_csv(&csv, &paths, rows)?;
    manifest.write(out)?;
    let mut files = vec![csv, out.join("sweep.json")];
    if whole {
        for metric in SweepMetric::ALL {
            // The pile-size plots only when some run has the numbers.
            if metric != SweepMetric::Angle && !rows.iter().any(|r| metric.of(r).is_some()) {
                continue;
            }
            let png = out.join(metric.file_name());
            match sweep_plot_with(
                &manifest.spec,
                &manifest.scene_name,
                rows,
                metric,
                reference,
            )
            .and_then(|img| write_png(&png, &img).map_err(anyhow::Error::new))
            {
                Ok(()) => files.push(png),
                Err(e) => log::warn!(target: "repose::sweep", "no {}: {e:#}", png.display()),
            }
        }
        let sheet = out.join("contact_sheet.png");
        match sweep_contact_sheet(out, manifest, rows)
            .and_then(|img| write_png(&sheet, &img).map_err(anyhow::Error::new))
        {
            Ok(()) => files.push(sheet),
            Err(e) => log::warn!(target: "repose::sweep", "no {}: {e:#}", sheet.display()),
        }
    }
    Ok(SweepReport {
        failed: rows.iter().filter(|r| r.run_failed()).count(),
        rows: rows.to_vec(),
        out_dir: out.to_owned(),
        files,
    })
}
