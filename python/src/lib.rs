//! `repose._repose`: the compiled half of the Python package `repose`.
//!
//! The Python package (`python/repose/`) puts the user-facing API together
//! from what this module exports:
//!
//! | Python                         | Rust                                        |
//! |--------------------------------|---------------------------------------------|
//! | `Scene.load`, `Scene.from_str` | [`repose::scene::Scene::load`], `from_str`  |
//! | `Simulation(scene).step(n)`    | [`repose::step::Stepper::step`] on a world  |
//! | `run(scene)`                   | [`repose::run::run_scene`] (all outputs)    |
//! | `measure(dir)`                 | [`repose::measure::measure_dir`]            |
//! | `sweep(...)`, `calibrate(...)` | [`repose::sweep`], [`repose::calibrate`]    |
//!
//! Errors become the Python exceptions of `repose/_errors.py`, with the
//! command line's message: a scene error ([`SceneError`]) anywhere in the
//! chain is a `repose.SceneError` carrying its file, line, column and
//! `(path, reason)` issues; anything else a `repose.RunError`.
//!
//! Signals belong to the interpreter: the module tells repose not to
//! install its own handler ([`repose::interrupt::leave_signals_to_host`]).
//! Long calls run with the GIL released and look at Python's pending
//! signals between steps (or every 50 ms for a whole run on its own
//! thread); on Ctrl-C they ask repose to stop cleanly
//! ([`repose::interrupt::request`]) and return what was done.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use repose::scene::SceneError;

mod runs;
mod scene;
mod simulation;

/// The Python exception for `e`: `repose.SceneError` when a scene error is
/// in its chain, else `repose.RunError`; the message is the command line's
/// (`{e:#}`).
pub(crate) fn to_py_err(py: Python<'_>, e: &anyhow::Error) -> PyErr {
    let message = format!("{e:#}");
    match e.chain().find_map(|c| c.downcast_ref::<SceneError>()) {
        Some(se) => scene_err(py, se, message),
        None => py_error(py, "RunError", &message, None),
    }
}

/// `repose.SceneError(message, kind=…, file=…, line=…, col=…, issues=[…])`.
pub(crate) fn scene_err(py: Python<'_>, e: &SceneError, message: String) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let kw = PyDict::new(py);
        let (kind, file, line, col) = match e {
            SceneError::Io { file, .. } => ("io", Some(file.clone()), None, None),
            SceneError::Syntax {
                file, line, col, ..
            } => ("syntax", Some(file.clone()), Some(*line), Some(*col)),
            SceneError::Invalid { file, .. } => ("invalid", Some(file.clone()), None, None),
            SceneError::Override { file, .. } => ("override", Some(file.clone()), None, None),
            SceneError::SetSyntax { .. } => ("set", None, None, None),
        };
        kw.set_item("kind", kind)?;
        kw.set_item("file", file)?;
        kw.set_item("line", line)?;
        kw.set_item("col", col)?;
        let issues = PyList::empty(py);
        for i in e.issues() {
            issues.append(PyTuple::new(py, [i.path.as_str(), i.reason.as_str()])?)?;
        }
        if let SceneError::Override { path, reason, .. } = e {
            issues.append(PyTuple::new(py, [path.as_str(), reason.as_str()])?)?;
        }
        kw.set_item("issues", issues)?;
        let class = py.import("repose._errors")?.getattr("SceneError")?;
        Ok(PyErr::from_value(class.call((message,), Some(&kw))?))
    };
    build().unwrap_or_else(|err| err)
}

/// `repose.<class>(message, **kwargs)` from `repose/_errors.py`.
pub(crate) fn py_error(
    py: Python<'_>,
    class: &str,
    message: &str,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = py.import("repose._errors")?.getattr(class)?;
        Ok(PyErr::from_value(class.call((message,), kwargs)?))
    };
    build().unwrap_or_else(|err| err)
}

/// A `repose.RunError` with `message`.
pub(crate) fn run_error(py: Python<'_>, message: impl AsRef<str>) -> PyErr {
    py_error(py, "RunError", message.as_ref(), None)
}

/// The `--set` overrides of a Python mapping `{path: value}` (or `None`),
/// in its order. Values are RON text: a `str` as it is; `bool` as
/// `true`/`false`; `int` and `float` as their shortest decimal text;
/// `None` as `None`. Anything else is a `TypeError` naming the path.
pub(crate) fn overrides(set: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(set) = set else {
        return Ok(Vec::new());
    };
    if set.is_none() {
        return Ok(Vec::new());
    }
    let items = set.call_method0("items").map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "set: expected a mapping of scene paths to values, e.g. {\"materials.0.rolling\": 0.001}",
        )
    })?;
    let mut out = Vec::new();
    for item in items.try_iter()? {
        let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let path: String = k.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "set: the key {} is not a string (a scene path such as \"materials.0.rolling\")",
                k.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        out.push((path.clone(), ron_value(&path, &v)?));
    }
    Ok(out)
}

/// The RON text of one override value (see [`overrides`]).
fn ron_value(path: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
    if v.is_none() {
        Ok("None".into())
    } else if v.is_instance_of::<PyBool>() {
        Ok(if v.extract::<bool>()? {
            "true"
        } else {
            "false"
        }
        .into())
    } else if v.is_instance_of::<PyInt>() {
        Ok(v.str()?.to_string())
    } else if v.is_instance_of::<PyFloat>() {
        let x: f64 = v.extract()?;
        Ok(format!("{x:?}"))
    } else if v.is_instance_of::<PyString>() {
        v.extract()
    } else {
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "set[{path:?}]: a {} is not a scene value; give a number, a bool, None, or RON text as a str (e.g. \"(0.0, 0.0, 1.0)\")",
            v.get_type().name()?
        )))
    }
}

/// The compiled module: classes, functions, and signals left to Python.
#[pymodule]
fn _repose(m: &Bound<'_, PyModule>) -> PyResult<()> {
    repose::interrupt::leave_signals_to_host();
    repose::gpu::headless_runtime_dir();
    // repose reports through `log`, as the command line does; RUST_LOG
    // chooses what is shown (default: repose's own info lines, and
    // warnings from the libraries under it).
    let _ = env_logger_init();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<scene::Scene>()?;
    m.add_class::<simulation::Simulation>()?;
    m.add_function(wrap_pyfunction!(runs::run_scene, m)?)?;
    m.add_function(wrap_pyfunction!(runs::measure_dir, m)?)?;
    m.add_function(wrap_pyfunction!(runs::sweep, m)?)?;
    m.add_function(wrap_pyfunction!(runs::calibrate, m)?)?;
    Ok(())
}

/// Starts the logger once (a second import in the same process finds it
/// set and leaves it).
fn env_logger_init() -> Result<(), log::SetLoggerError> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn,repose=info"))
        .format_timestamp(None)
        .try_init()
}
