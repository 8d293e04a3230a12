//! The `repose` command-line program: runs each command, sets up logging
//! and reports errors. The command line itself (subcommands, arguments,
//! help) is defined in `cli.rs`; the two are the only code that knows about
//! the terminal.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

mod cli;

use cli::{BenchFormulation, Cli, Command, EveryRun};

use repose::analysis::HeapMethod;
use repose::calibrate;
use repose::measure::{format_report, measure_dir, MeasureOptions};
use repose::output::summary::StopReason;
use repose::run::{open_backend, resume_run, run_file, BackendChoice, ResumeOptions, RunOptions};
use repose::scene::parse_set;
use repose::solver::SolverMethod;
use repose::step::{Backend, Stepper};
use repose::sweep::{self, Shard, SweepOptions, SweepReport, SweepSpec};

fn main() -> ExitCode {
    repose::gpu::headless_runtime_dir();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .format_timestamp(None)
        .init();
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// The default sweep directory of a scene: `out/<name>_sweep/`.
fn default_sweep_dir(scene_name: &str) -> PathBuf {
    PathBuf::from("out").join(format!("{scene_name}_sweep"))
}

/// Prints the summary line and the files of a sweep or merge; exit code 2
/// when some runs failed.
fn report_sweep(r: &SweepReport, what: &str) -> ExitCode {
    println!(
        "{what}: {} runs, {} failed; outputs in {}",
        r.rows.len(),
        r.failed,
        r.out_dir.display()
    );
    for f in &r.files {
        println!("{}", f.display());
    }
    let unmeasured = r
        .rows
        .iter()
        .filter(|row| !row.error.is_empty() && !row.run_failed())
        .count();
    if unmeasured > 0 {
        println!("{unmeasured} runs could not be measured in full (their `error` says why)");
    }
    if r.failed > 0 {
        for row in r.rows.iter().filter(|row| row.run_failed()) {
            eprintln!("run {} failed: {}", row.run, row.error);
        }
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The `--set` overrides that `--checkpoint-every SPEC` stands for: `N`
/// (every N steps, and no longer by wall time), `Ts` (every T seconds of
/// wall time only) or `off`.
fn checkpoint_overrides(spec: &str) -> Result<Vec<(String, String)>> {
    let set = |k: &str, v: &str| (format!("output.checkpoint.{k}"), v.to_string());
    let spec = spec.trim();
    if spec.eq_ignore_ascii_case("off") {
        return Ok(vec![set("enabled", "false")]);
    }
    let bad = || {
        anyhow::anyhow!(
            "--checkpoint-every {spec:?}: expected a step count (500), seconds of wall time (60s) or off"
        )
    };
    if let Some(secs) = spec.strip_suffix('s') {
        let t: f64 = secs.trim().parse().map_err(|_| bad())?;
        anyhow::ensure!(
            t.is_finite() && t > 0.0,
            "--checkpoint-every {spec:?}: the seconds must be > 0"
        );
        return Ok(vec![
            set("enabled", "true"),
            set("every_seconds", &t.to_string()),
            set("every_steps", "None"),
        ]);
    }
    let n: u64 = spec.parse().map_err(|_| bad())?;
    anyhow::ensure!(
        n > 0,
        "--checkpoint-every {spec:?}: the step count must be ≥ 1"
    );
    Ok(vec![
        set("enabled", "true"),
        set("every_steps", &n.to_string()),
        set("every_seconds", "None"),
    ])
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run {
            scene,
            resume,
            checkpoint_every,
            set,
            out,
            no_frames,
            contacts,
            no_picture,
            backend,
            solver,
            fallback,
            dump_problem,
            overwrite,
        } => {
            // The bar draws only on a terminal; otherwise the run logs a
            // progress line every 30 s.
            let s = if let Some(dir) = resume {
                resume_run(
                    &dir,
                    &ResumeOptions {
                        backend,
                        progress: true,
                        stop_after_step: None,
                    },
                )?
            } else {
                let mut overrides =
                    scene_overrides(&set, solver.map(SolverMethod::from), fallback.as_deref())?;
                if contacts {
                    overrides.push(("output.contacts".into(), "true".into()));
                }
                if let Some(every) = checkpoint_every {
                    overrides.extend(checkpoint_overrides(&every)?);
                }
                let opts = RunOptions {
                    out_dir: out,
                    progress: true,
                    no_frames,
                    backend: backend.unwrap_or_default(),
                    no_picture,
                    dump_steps: dump_problem,
                    overwrite,
                    stop_after_step: None,
                    steps_done: None,
                };
                if scene.len() > 1 {
                    let results = repose::run::batch::run_files(&scene, &overrides, &opts)?;
                    let mut failed = 0;
                    for (path, r) in scene.iter().zip(results) {
                        println!("== {}", path.display());
                        match r {
                            Ok(s) => s.report_lines().iter().for_each(|l| println!("{l}")),
                            Err(e) => {
                                failed += 1;
                                println!("FAILED: {e:#}");
                            }
                        }
                    }
                    return Ok(if failed > 0 {
                        ExitCode::from(2)
                    } else {
                        ExitCode::SUCCESS
                    });
                }
                let scene = scene
                    .into_iter()
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("a scene file or --resume DIR is needed"))?;
                run_file(&scene, &overrides, &opts)?
            };
            for line in s.report_lines() {
                println!("{line}");
            }
            if s.stopped == StopReason::Interrupted {
                println!(
                    "interrupted after step {}: the outputs are complete for that step, and a checkpoint is kept (repose run --resume DIR continues)",
                    s.steps
                );
                return Ok(ExitCode::from(repose::interrupt::EXIT_INTERRUPTED as u8));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Sweep {
            scene,
            vary,
            every_run,
            seeds,
            jobs,
            shard,
            out,
            frames,
            rerun,
            backend,
            batch,
            reference,
        } => {
            let spec =
                SweepSpec::parse(&vary, seeds)?.with_set(every_run_overrides(&every_run)?)?;
            let reference = reference.map(|f| sweep::Reference::read(&f)).transpose()?;
            let shard = match shard {
                Some(s) => Shard::parse(&s)?,
                None => Shard::ALL,
            };
            if jobs == 0 {
                anyhow::bail!("--jobs must be at least 1 (got 0)");
            }
            let prepared = sweep::prepare(&scene, spec)?;
            let out_dir = out.unwrap_or_else(|| default_sweep_dir(&prepared.base.name));
            let opts = SweepOptions {
                out_dir,
                jobs,
                shard,
                frames,
                backend,
                progress: std::io::stderr().is_terminal(),
                rerun,
                reference,
                batch,
            };
            let report = sweep::run_sweep(&prepared, &opts)?;
            Ok(report_sweep(
                &report,
                &format!("shard {shard} of the sweep"),
            ))
        }
        Command::Calibrate {
            scenes,
            params,
            ranges,
            every_run,
            targets,
            seeds,
            tol,
            max_evals,
            jobs,
            out,
            rerun,
            backend,
        } => {
            if params.len() != ranges.len() {
                anyhow::bail!(
                    "every --param needs its --range (got {} --param, {} --range)",
                    params.len(),
                    ranges.len()
                );
            }
            let params = params
                .iter()
                .zip(&ranges)
                .map(|(p, r)| calibrate::Param::parse(p, r))
                .collect::<Result<Vec<_>>>()?;
            let spec = calibrate::CalibrateSpec {
                scenes,
                targets,
                params,
                seeds,
                settings: calibrate::Settings {
                    tol,
                    max_evals,
                    per_round: 1,
                },
                set: every_run_overrides(&every_run)?,
            };
            let out_dir = match out {
                Some(o) => o,
                None => {
                    let first = repose::scene::Scene::load(&spec.scenes[0], &[])?;
                    calibrate::default_calibrate_dir(&first.name)
                }
            };
            let opts = calibrate::CalibrateOptions {
                out_dir,
                jobs,
                backend,
                progress: std::io::stderr().is_terminal(),
                rerun,
            };
            let r = calibrate::run_calibration(&spec, &opts)?;
            let o = &r.outcome;
            println!(
                "calibration: {} after {} points ({} runs, {:.0} s)",
                o.status.as_str(),
                o.evaluations.len(),
                r.runs,
                r.wall_time_s
            );
            for (k, p) in spec.params.iter().enumerate() {
                match o.interval.get(k) {
                    Some(iv) => println!(
                        "{} = {} (interval {} … {})",
                        p.path, o.estimate[k], iv[0], iv[1]
                    ),
                    None => println!("{}: closest point run {}", p.path, o.estimate[k]),
                }
            }
            println!("{}", o.message);
            for f in &r.files {
                println!("{}", f.display());
            }
            Ok(match o.status {
                calibrate::Status::Converged | calibrate::Status::NoiseLimited => ExitCode::SUCCESS,
                calibrate::Status::OutOfReach | calibrate::Status::Ambiguous => ExitCode::from(3),
                calibrate::Status::Budget => ExitCode::from(4),
            })
        }
        Command::Merge {
            dirs,
            out,
            reference,
        } => {
            let reference = reference.map(|f| sweep::Reference::read(&f)).transpose()?;
            let out = match out {
                Some(o) => o,
                None => {
                    let m = sweep::Manifest::read(&dirs[0])?;
                    default_sweep_dir(&m.scene_name)
                }
            };
            let report = sweep::merge_with(&dirs, &out, reference.as_ref())?;
            Ok(report_sweep(
                &report,
                &format!("merged {} directories", dirs.len()),
            ))
        }
        Command::Render {
            dir,
            colour,
            out,
            width,
            height,
            look_along,
            force_chains,
            slice,
        } => {
            if !dir.is_dir() {
                anyhow::bail!(
                    "{}: not a directory (expected a run's output directory holding final.csv)",
                    dir.display()
                );
            }
            if let Some(s) = slice.filter(|s| !(s.is_finite() && *s > 0.0)) {
                anyhow::bail!("--slice {s}: the half thickness must be a number > 0 (m)");
            }
            let (img, default_name) = if force_chains {
                let img = repose::render::chains::render_chains_dir(
                    &dir, width, height, look_along, slice,
                )?;
                (img, "force_chains.png")
            } else {
                let img =
                    repose::render::render_output_dir(&dir, colour, look_along, width, height)?;
                (img, "final.png")
            };
            let path = out.unwrap_or_else(|| dir.join(default_name));
            repose::render::write_png(&path, &img)?;
            println!("{}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Validate { backend } => {
            let (_, why) = open_backend(backend)?;
            println!("backend {why}");
            let mk = || {
                Stepper::with_backend(
                    open_backend(backend)
                        .expect("backend opened once already")
                        .0,
                )
            };
            let mut checks = repose::validate::run_all(&mk);
            if matches!(backend, BackendChoice::Cpu) {
                checks.extend(repose::validate::penalty::run_all());
            } else {
                println!(
                    "(the penalty formulation's cases run on the cpu backend only: repose validate --backend cpu)"
                );
            }
            let mut failed = 0;
            for c in &checks {
                let tag = if c.passed() { "pass" } else { "FAIL" };
                if !c.passed() {
                    failed += 1;
                }
                println!("{tag}  {c}");
            }
            println!("{} passed, {} failed", checks.len() - failed, failed);
            Ok(if failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Bench {
            backend,
            formulation,
            scene,
            warm_up,
            steps,
            iterations,
            solver,
            to_tolerance,
            cap,
            json,
        } => {
            if formulation == BenchFormulation::Penalty {
                if !matches!(backend, BackendChoice::Auto | BackendChoice::Cpu) {
                    anyhow::bail!("--backend {backend:?}: the penalty formulation runs on the cpu backend only");
                }
                if steps == 0 {
                    anyhow::bail!("--steps 0: time at least one step");
                }
                let scene = scene.unwrap_or_else(|| PathBuf::from("scenes/bench_penalty_bed.ron"));
                log::info!("warming {} up for {warm_up} steps…", scene.display());
                let mut w = repose::bench::penalty::warm_world(&scene, warm_up)?;
                let r = repose::bench::penalty::time_steps(&mut w, steps)?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&r)?);
                } else {
                    println!("{r}");
                }
                return Ok(ExitCode::SUCCESS);
            }
            let scene = scene.unwrap_or_else(|| PathBuf::from("scenes/bench_pile_large.ron"));
            let (mut b, why) = open_backend(backend)?;
            log::info!("backend {why}");
            log::info!("settling {} for 3 steps on the CPU…", scene.display());
            let (problem, gamma) = repose::bench::prepare(&scene, 3)?;
            if let Some(tol) = to_tolerance {
                for method in [SolverMethod::Jacobi, SolverMethod::Apgd] {
                    let st =
                        repose::bench::iterations_to(&mut b, &problem, &gamma, method, tol, cap)?;
                    println!(
                        "{}: {method} {} {} iterations to {tol:e} (relative residual {:.3e}; {} contacts)",
                        b.describe(),
                        if st.converged { "needs" } else { "did not converge in" },
                        st.iterations,
                        st.residual_rel,
                        problem.n_contacts()
                    );
                }
                return Ok(ExitCode::SUCCESS);
            }
            let mut r = repose::bench::bench_solver(
                &mut b,
                &problem,
                &gamma,
                iterations,
                5,
                solver.into(),
            )?;
            if matches!(b, Backend::Gpu(_)) && problem.n_contacts() > 20_000 {
                log::info!(
                    "timing one iteration on {} too…",
                    repose::bench::SMALL_SCENE
                );
                r.small = Some(repose::bench::small_fixed_cost(
                    &mut b,
                    iterations,
                    5,
                    solver.into(),
                )?);
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!("{r}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::CheckExistence {
            input,
            at_step,
            json,
        } => {
            use repose::existence;
            let file = input.display();
            let (problem, what) = if let Some(n) = at_step {
                if n == 0 {
                    anyhow::bail!("--at-step 0: the first step is 1");
                }
                let scene = repose::scene::Scene::load(&input, &[])?;
                if !matches!(
                    scene.formulation,
                    repose::formulation::Formulation::Complementarity
                ) {
                    anyhow::bail!("{file}: the existence criterion is about the complementarity formulation's step problem; this scene uses `formulation: Penalty`");
                }
                let mut world = scene.build()?;
                let mut st = Stepper::new();
                for k in 1..=n {
                    st.step(&mut world)
                        .map_err(|e| anyhow::anyhow!("{file}: step {k} of {n}: {e}"))?;
                }
                (
                    existence::from_contact_problem(st.last_problem()),
                    format!("{file}, step {n}"),
                )
            } else if input.extension().is_some_and(|e| e == "dat") {
                let p = repose::siconos::SiconosProblem::read(&input)?;
                (
                    existence::from_siconos(&p),
                    format!("{file} (reduced form W, q)"),
                )
            } else {
                (
                    existence::read_ron(&input).map_err(|e| anyhow::anyhow!(e))?,
                    format!("{file}"),
                )
            };
            let r = if problem.n_contacts() == 0 {
                existence::ExistenceReport {
                    s: f64::INFINITY,
                    guaranteed: true,
                    robust: true,
                    status: "no contacts".into(),
                }
            } else {
                existence::check(&problem)
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!(
                    "{what}: {} contacts, d = {}; s = {:.6e} (capped at 1; solver: {}): {}",
                    problem.n_contacts(),
                    problem.dim,
                    r.s,
                    r.status,
                    if r.robust {
                        "a solution exists, robustly (s > 0)"
                    } else if r.guaranteed {
                        "a solution exists (s = 0: not robust to small changes)"
                    } else if r.s.is_nan() {
                        "the solver failed: no answer"
                    } else {
                        "condition (A) fails (s < 0): a solution is not guaranteed"
                    }
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare { a, b, tol } => {
            if !(tol.is_finite() && tol >= 0.0) {
                anyhow::bail!("--tol {tol}: must be a finite number ≥ 0 (mean grain radii)");
            }
            let c = repose::compare::compare_files(&a, &b)?;
            let r = c.mean_radius;
            println!("{} bodies, mean radius {:.4e} m", c.bodies, r);
            for (what, v) in [
                ("centre of mass shift", c.com_shift),
                ("mean height difference", c.mean_height_diff),
                ("top height difference", c.max_height_diff),
                ("radius of gyration difference", c.gyration_radius_diff),
                ("per-particle RMS difference", c.rms_position_diff),
                ("per-particle max difference", c.max_position_diff),
            ] {
                println!("{what:<32} {v:.4e} m = {:.3} radii", v / r);
            }
            let worst = c.worst_bulk_in_radii();
            let ok = worst <= tol;
            println!(
                "bulk agreement: worst {worst:.3} radii, tolerance {tol} radii: {}",
                if ok { "agree" } else { "DIFFER" }
            );
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Measure {
            dir,
            method,
            floor,
            json,
        } => {
            let opts = MeasureOptions {
                method: method.map(HeapMethod::from),
                floor,
            };
            let r = measure_dir(&dir, &opts)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r.measurement)?);
            } else {
                println!("{}", format_report(&r.measurement, &r.floor_source));
                println!("recorded in {}", r.summary_path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Solve {
            file,
            all,
            solver,
            directions,
            tol,
            max_iter,
            time_limit,
            anderson,
            fallback,
            measure,
            json,
        } => {
            use repose::solve::{
                lemke_refuses, problem_files, problem_name, solve_lemke, solve_problem, table,
                SolveMethod, SolveOptions, SolveReport,
            };
            if directions < 3 {
                anyhow::bail!("--directions must be ≥ 3 (got {directions})");
            }
            if tol.is_nan()
                || tol <= 0.0
                || max_iter == 0
                || time_limit.is_nan()
                || time_limit <= 0.0
            {
                anyhow::bail!("--tol and --time-limit must be > 0 and --max-iter ≥ 1");
            }
            if let Err(why) = repose::solver::pgs::check_depth(anderson) {
                anyhow::bail!("--anderson {why}");
            }
            let fallback = match (fallback.as_deref(), solver) {
                (None, SolveMethod::Iterative(_)) => Some(SolverMethod::InteriorPoint),
                (None | Some("none"), _) => None,
                (Some(_), SolveMethod::Lemke { .. }) => {
                    anyhow::bail!("--fallback: lemke is a direct method; it takes none")
                }
                (Some(name), _) => Some(method_named("--fallback", name)?),
            };
            // A method is not its own fallback (`solver::solve` would not
            // run it twice): say so once, here.
            let fallback =
                fallback.filter(|&f| !matches!(solver, SolveMethod::Iterative(m) if m == f));
            let measure = repose::solver::ResidualMeasure::from(measure);
            if measure != repose::solver::ResidualMeasure::Siconos
                && matches!(solver, SolveMethod::Lemke { .. })
            {
                anyhow::bail!(
                    "--measure: lemke is a direct method and does not stop on a residual; \
                     its \"solved\" is Siconos' error"
                );
            }
            let opts = |method, fallback| SolveOptions {
                method,
                tolerance: tol,
                max_iterations: max_iter,
                time_limit,
                anderson,
                fallback,
                measure,
            };
            let mut rows = Vec::new();
            match (file, all) {
                (Some(f), None) => {
                    let p = repose::siconos::SiconosProblem::read(&f)?;
                    let name = f.display().to_string();
                    match solver {
                        SolveMethod::Iterative(m) => {
                            rows.push(solve_problem(&p, &name, &opts(m, fallback)));
                        }
                        SolveMethod::Lemke { .. } => {
                            if let Some(why) = lemke_refuses(&p, directions) {
                                anyhow::bail!("{name}: {why}");
                            }
                            rows.push(solve_lemke(&p, &name, directions, tol));
                        }
                    }
                }
                (None, Some(dir)) => {
                    let files = problem_files(&dir)
                        .map_err(|e| anyhow::anyhow!("{}: cannot list: {e}", dir.display()))?;
                    if files.is_empty() {
                        anyhow::bail!("{}: no .dat files found", dir.display());
                    }
                    for f in files {
                        let name = problem_name(&dir, &f);
                        // A bad file is a row of the table; the others go on.
                        let p = match repose::siconos::SiconosProblem::read(&f) {
                            Ok(p) => p,
                            Err(e) => {
                                log::warn!("{name}: cannot read: {e}");
                                rows.push(SolveReport::unreadable(&name, e.to_string()));
                                continue;
                            }
                        };
                        // Every method alone, then --solver with its
                        // fallback when one is given.
                        let chain = match (solver, fallback) {
                            (SolveMethod::Iterative(m), Some(f)) => Some((m, f)),
                            _ => None,
                        };
                        let alone = SolverMethod::ALL.iter().map(|&m| (m, None));
                        for (m, f) in alone.chain(chain.map(|(m, f)| (m, Some(f)))) {
                            let r = solve_problem(&p, &name, &opts(m, f));
                            log::info!(
                                "{name}: {}: {} iterations, {:.3} s, relative error {:.2e}",
                                r.solver,
                                r.iterations,
                                r.seconds,
                                r.error_rel
                            );
                            rows.push(r);
                        }
                        // The direct method where it applies (3-D Coulomb,
                        // small enough for a dense tableau).
                        if lemke_refuses(&p, directions).is_none() {
                            rows.push(solve_lemke(&p, &name, directions, tol));
                        }
                    }
                }
                _ => anyhow::bail!("give a problem file or --all DIR"),
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else {
                print!("{}", table(&rows));
            }
            // One file: solved or not. --all: every problem solved by some method.
            let mut problems: Vec<&str> = rows.iter().map(|r| r.problem.as_str()).collect();
            problems.dedup();
            let unsolved: Vec<&str> = problems
                .into_iter()
                .filter(|p| !rows.iter().any(|r| r.problem == *p && r.converged))
                .collect();
            if !unsolved.is_empty() {
                eprintln!("not solved to {tol:e}: {}", unsolved.join(", "));
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::MarkdownHelp => {
            let options = clap_markdown::MarkdownOptions::new()
                .title("Command-line reference".to_string())
                .show_footer(false)
                .show_table_of_contents(true);
            print!(
                "{}",
                clap_markdown::help_markdown_custom::<cli::Cli>(&options)
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Info => {
            println!("repose {}", env!("CARGO_PKG_VERSION"));
            println!("CPU threads (rayon): {}", rayon::current_num_threads());
            println!("backends: cpu (f64, every method), cpu-f32 (mirror of the GPU solvers), gpu (WGSL, wgpu: jacobi and apgd)");
            let adapters = repose::gpu::GpuContext::list_adapters();
            if adapters.is_empty() {
                println!("GPU adapters: none (install mesa-vulkan-drivers for lavapipe; set WGPU_BACKEND=vulkan)");
            }
            for a in adapters {
                println!("GPU adapter: {a}");
            }
            match repose::gpu::GpuContext::try_new() {
                Some(ctx) if ctx.is_software() => println!(
                    "--backend auto would use: cpu (the only adapter, {}, is software; --backend gpu uses it)",
                    ctx.describe()
                ),
                Some(ctx) => {
                    println!(
                        "--backend auto would use: {} for scenes of {} bodies or more, else cpu",
                        ctx.describe(),
                        repose::run::AUTO_GPU_MIN_BODIES
                    );
                    println!("enabled features: {:?}", ctx.device.features());
                }
                None => println!("--backend auto would use: cpu"),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The overrides that `--set` (each `PATH=VALUE`), `--solver` and
/// `--fallback METHOD|none` stand for, in that order.
fn scene_overrides(
    set: &[String],
    solver: Option<SolverMethod>,
    fallback: Option<&str>,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut overrides = set
        .iter()
        .map(|s| parse_set(s))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(m) = solver {
        overrides.push(("solver.method".into(), format!("{m:?}")));
    }
    if let Some(name) = fallback {
        let value = match name {
            "none" => "None".to_string(),
            _ => format!("Some({:?})", method_named("--fallback", name)?),
        };
        overrides.push(("solver.fallback".into(), value));
    }
    Ok(overrides)
}

/// The overrides of a sweep's or calibration's [`EveryRun`] options.
fn every_run_overrides(e: &EveryRun) -> anyhow::Result<Vec<(String, String)>> {
    scene_overrides(
        &e.set,
        e.solver.map(SolverMethod::from),
        e.fallback.as_deref(),
    )
}

/// The method a `--fallback`-style option names (`SolverMethod::name`), or
/// an error listing the names.
fn method_named(option: &str, name: &str) -> Result<SolverMethod> {
    SolverMethod::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = SolverMethod::ALL.iter().map(|m| m.name()).collect();
        anyhow::anyhow!(
            "{option}: unknown method {name:?}; one of {}, none",
            names.join(", ")
        )
    })
}
