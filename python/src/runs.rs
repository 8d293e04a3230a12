//! Whole runs and studies from Python: `run`, `measure`, `sweep`,
//! `calibrate`, each the command line's command of that name.
//!
//! A run or study goes on a thread of its own while the calling thread
//! waits with the GIL released, waking every 50 ms to look at Python's
//! pending signals and to report progress (a callable given by the Python
//! layer, `on_progress(done, total)`). On Ctrl-C it asks repose to stop
//! cleanly — the run ends after its current step with every output
//! written and `summary.json` saying `interrupted`; a study starts no
//! further runs — and returns with `interrupted = True`, which the Python
//! layer turns into `repose.Interrupted` carrying the partial result.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use pyo3::prelude::*;

use repose::analysis::{Axis, HeapMethod};
use repose::measure::MeasureOptions;
use repose::run::RunOptions;
use repose::sweep::{Shard, SweepOptions, SweepSpec};

use crate::simulation::{backend_choice, scene_of};
use crate::{run_error, to_py_err};

/// Progress of a call on its own thread: the counter it advances, the
/// total, and the Python callable told `(done, total)`.
struct Progress {
    done: Arc<AtomicU64>,
    total: u64,
    callback: Py<PyAny>,
}

/// Runs `job` on a thread of its own (module docs); returns its result and
/// whether Ctrl-C stopped it.
fn on_own_thread<T: Send + 'static>(
    py: Python<'_>,
    job: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
    progress: Option<Progress>,
) -> PyResult<(T, bool)> {
    let (tx, rx) = mpsc::channel::<()>();
    let handle = std::thread::spawn(move || {
        let out = job();
        let _ = tx.send(());
        out
    });
    // Behind a mutex so that the closure that waits without the GIL may
    // borrow it (a receiver is not shared between threads otherwise).
    let rx = std::sync::Mutex::new(rx);
    let mut interrupted = false;
    let mut failed: Option<PyErr> = None;
    loop {
        let wait = |rx: &mpsc::Receiver<()>| match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => true,
            Err(mpsc::RecvTimeoutError::Timeout) => false,
        };
        let finished = py.detach(|| rx.lock().map_or(true, |rx| wait(&rx)));
        if let Some(p) = &progress {
            if failed.is_none() {
                if let Err(e) = p
                    .callback
                    .call1(py, (p.done.load(Ordering::Relaxed), p.total))
                {
                    // A progress display that fails stops the run cleanly.
                    failed = Some(e);
                    repose::interrupt::request();
                }
            }
        }
        if finished {
            break;
        }
        // A second Ctrl-C changes nothing: the run is already ending
        // after its current step.
        if py.check_signals().is_err() && !interrupted {
            interrupted = true;
            repose::interrupt::request();
        }
    }
    let joined = py.detach(|| handle.join());
    if interrupted || failed.is_some() {
        repose::interrupt::clear();
    }
    if let Some(e) = failed {
        return Err(e);
    }
    match joined {
        Ok(Ok(v)) => Ok((v, interrupted)),
        Ok(Err(e)) => Err(to_py_err(py, &e)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            Err(run_error(
                py,
                format!("the run stopped on an internal error (a bug; please report it): {what}"),
            ))
        }
    }
}

/// Runs a scene to its end as `repose run` does, writing every output;
/// returns `(summary.json's text, interrupted)`.
#[pyfunction]
#[pyo3(signature = (scene, out=None, set=None, backend="auto", solver=None, frames=true, picture=true, overwrite=false, cli_progress=false, on_progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn run_scene(
    py: Python<'_>,
    scene: &Bound<'_, PyAny>,
    out: Option<PathBuf>,
    set: Option<&Bound<'_, PyAny>>,
    backend: &str,
    solver: Option<&str>,
    frames: bool,
    picture: bool,
    overwrite: bool,
    cli_progress: bool,
    on_progress: Option<Py<PyAny>>,
) -> PyResult<(String, bool)> {
    let choice = backend_choice(backend)?;
    let scene = scene_of(py, scene, set, solver)?;
    let done = Arc::new(AtomicU64::new(0));
    let opts = RunOptions {
        out_dir: out,
        progress: cli_progress,
        no_frames: !frames,
        backend: choice,
        no_picture: !picture,
        dump_steps: Vec::new(),
        overwrite,
        stop_after_step: None,
        steps_done: Some(done.clone()),
    };
    let progress = on_progress.map(|callback| Progress {
        done,
        total: scene.steps(),
        callback,
    });
    let (summary, interrupted) =
        on_own_thread(py, move || repose::run::run_scene(&scene, &opts), progress)?;
    let json = serde_json::to_string(&summary).map_err(|e| run_error(py, e.to_string()))?;
    Ok((json, interrupted))
}

/// Measures the heap of a run's output directory again, as `repose
/// measure` does (and records it in its `summary.json`); returns the
/// measurement as JSON text with `floor_source` added.
#[pyfunction]
#[pyo3(signature = (dir, method=None, floor=None))]
pub fn measure_dir(
    py: Python<'_>,
    dir: PathBuf,
    method: Option<&str>,
    floor: Option<f64>,
) -> PyResult<String> {
    let method = match method.map(str::to_ascii_lowercase).as_deref() {
        None => None,
        Some("radial") => Some(HeapMethod::Radial),
        Some("x") => Some(HeapMethod::Planar { axis: Axis::X }),
        Some("y") => Some(HeapMethod::Planar { axis: Axis::Y }),
        Some(m) => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "method {m:?}: expected \"radial\", \"x\" or \"y\""
            )))
        }
    };
    let r = repose::measure::measure_dir(&dir, &MeasureOptions { method, floor })
        .map_err(|e| to_py_err(py, &e))?;
    let mut v = serde_json::to_value(&r.measurement).map_err(|e| run_error(py, e.to_string()))?;
    if let serde_json::Value::Object(m) = &mut v {
        m.insert("floor_source".into(), r.floor_source.clone().into());
    }
    Ok(v.to_string())
}

/// Runs a sweep as `repose sweep` does; returns `(out_dir, files, failed,
/// interrupted)`.
#[pyfunction]
#[pyo3(signature = (scene, vary, set=None, seeds=1, jobs=1, out=None, backend="auto", frames=false, rerun=false, batch=None, cli_progress=false))]
#[allow(clippy::too_many_arguments)]
pub fn sweep(
    py: Python<'_>,
    scene: PathBuf,
    vary: Vec<String>,
    set: Option<&Bound<'_, PyAny>>,
    seeds: u64,
    jobs: usize,
    out: Option<PathBuf>,
    backend: &str,
    frames: bool,
    rerun: bool,
    batch: Option<usize>,
    cli_progress: bool,
) -> PyResult<(PathBuf, Vec<PathBuf>, usize, bool)> {
    let backend = backend_choice(backend)?;
    let set = crate::overrides(set)?;
    let job = move || {
        anyhow::ensure!(jobs >= 1, "jobs must be at least 1 (got 0)");
        let spec = SweepSpec::parse(&vary, seeds)?.with_set(set)?;
        let prepared = repose::sweep::prepare(&scene, spec)?;
        let out_dir = out
            .unwrap_or_else(|| PathBuf::from("out").join(format!("{}_sweep", prepared.base.name)));
        let opts = SweepOptions {
            out_dir,
            jobs,
            shard: Shard::ALL,
            frames,
            backend,
            progress: cli_progress,
            rerun,
            reference: None,
            batch,
        };
        let r = repose::sweep::run_sweep(&prepared, &opts)?;
        Ok((r.out_dir, r.files, r.failed))
    };
    let ((dir, files, failed), interrupted) = on_own_thread(py, job, None)?;
    Ok((dir, files, failed, interrupted))
}

/// Calibrates parameters against measured angles as `repose calibrate`
/// does; `params` are `(path, low, high)`. Returns `(outcome as JSON text,
/// files, interrupted)`.
#[pyfunction]
#[pyo3(signature = (scenes, params, targets, set=None, seeds=1, tol=1.0, max_evals=12, jobs=1, out=None, backend="auto", rerun=false, cli_progress=false))]
#[allow(clippy::too_many_arguments)]
pub fn calibrate(
    py: Python<'_>,
    scenes: Vec<PathBuf>,
    params: Vec<(String, f64, f64)>,
    targets: Vec<f64>,
    set: Option<&Bound<'_, PyAny>>,
    seeds: u64,
    tol: f64,
    max_evals: usize,
    jobs: usize,
    out: Option<PathBuf>,
    backend: &str,
    rerun: bool,
    cli_progress: bool,
) -> PyResult<(String, Vec<PathBuf>, bool)> {
    use repose::calibrate as cal;
    let backend = backend_choice(backend)?;
    let set = crate::overrides(set)?;
    let job = move || {
        anyhow::ensure!(
            !scenes.is_empty(),
            "calibrate: at least one scene is needed"
        );
        let params = params
            .iter()
            .map(|(p, lo, hi)| cal::Param::parse(p, &format!("{lo:?}:{hi:?}")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let out_dir = match out {
            Some(o) => o,
            None => {
                let first = repose::scene::Scene::load(&scenes[0], &[])?;
                cal::default_calibrate_dir(&first.name)
            }
        };
        let spec = cal::CalibrateSpec {
            scenes,
            targets,
            params,
            seeds,
            settings: cal::Settings {
                tol,
                max_evals,
                per_round: 1,
            },
            set,
        };
        let opts = cal::CalibrateOptions {
            out_dir,
            jobs,
            backend,
            progress: cli_progress,
            rerun,
        };
        let r = cal::run_calibration(&spec, &opts)?;
        Ok((serde_json::to_string(&r.outcome)?, r.files))
    };
    let ((json, files), interrupted) = on_own_thread(py, job, None)?;
    Ok((json, files, interrupted))
}
