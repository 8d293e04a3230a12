//! `repose.Scene`: a scene file read, overridden and validated, as the
//! command line reads it (same parser, same `--set` paths, same errors).

use std::path::PathBuf;

use pyo3::prelude::*;

use crate::{overrides, scene_err};

/// A validated scene: what a scene file (RON) describes, with any
/// overrides applied. Load one with `Scene.load(path, set={...})` or
/// `Scene.from_str(text)`; run it with `repose.run(scene)` or step it with
/// `repose.Simulation(scene)`.
#[pyclass(name = "Scene", module = "repose", frozen)]
#[derive(Clone)]
pub struct Scene {
    pub(crate) inner: repose::scene::Scene,
}

#[pymethods]
impl Scene {
    /// Reads the scene file at `path`, applies the overrides `set`
    /// (`{"materials.0.rolling": 0.001, ...}`, the command line's `--set`
    /// paths) in order, and validates it. Raises `repose.SceneError` with
    /// the file, field and reason.
    #[staticmethod]
    #[pyo3(signature = (path, set=None))]
    fn load(py: Python<'_>, path: PathBuf, set: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let set = overrides(set)?;
        repose::scene::Scene::load(&path, &set)
            .map(|inner| Scene { inner })
            .map_err(|e| scene_err(py, &e, e.to_string()))
    }

    /// Parses scene text (RON); `name` labels it in errors and is the
    /// scene's name when the text gives none. Mesh files are looked up
    /// relative to the current directory.
    #[staticmethod]
    #[pyo3(signature = (text, name="<string>", set=None))]
    fn from_str(
        py: Python<'_>,
        text: &str,
        name: &str,
        set: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let set = overrides(set)?;
        repose::scene::Scene::from_str(text, name, &set)
            .map(|inner| Scene { inner })
            .map_err(|e| scene_err(py, &e, e.to_string()))
    }

    /// A copy with the overrides `set` applied and validated.
    fn with_set(&self, py: Python<'_>, set: &Bound<'_, PyAny>) -> PyResult<Self> {
        let set = overrides(Some(set))?;
        self.inner
            .with_overrides(&set)
            .map(|inner| Scene { inner })
            .map_err(|e| scene_err(py, &e, e.to_string()))
    }

    /// The scene as RON text, every field written out (what a run writes as
    /// `scene.ron`); `Scene.from_str` reads it back.
    fn to_str(&self, py: Python<'_>) -> PyResult<String> {
        self.inner
            .to_ron()
            .map_err(|e| scene_err(py, &e, e.to_string()))
    }

    /// The scene's name (outputs go to `out/<name>/` by default).
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    /// The file it was read from (or the label given to `from_str`).
    #[getter]
    fn file(&self) -> String {
        self.inner.file.clone()
    }

    /// Simulated duration (s).
    #[getter]
    fn duration(&self) -> f64 {
        self.inner.duration
    }

    /// Time step h (s).
    #[getter]
    fn time_step(&self) -> f64 {
        self.inner.time_step
    }

    /// Number of steps of a run to the end (duration / h, rounded).
    #[getter]
    fn steps(&self) -> u64 {
        self.inner.steps()
    }

    fn __repr__(&self) -> String {
        format!(
            "Scene(name={:?}, file={:?}, duration={} s, time_step={} s)",
            self.inner.name, self.inner.file, self.inner.duration, self.inner.time_step
        )
    }
}
