//! `repose.Simulation`: a scene's world stepped from Python, its state and
//! contacts as NumPy arrays.
//!
//! Every array a getter returns is a fresh copy (float64, or int64 for
//! ids): changing it changes nothing in the simulation; the `set_*`
//! methods change the state, after checking shape and finiteness.
//!
//! Contacts are those of the last step, as
//! [`repose::contact_forces::ContactForces`] gives them (its module docs
//! have the maths: the step's impulses divided by h, on end B). They are
//! reconstructed from the state the step left, so they are computed
//! before a setter changes it.

use std::path::PathBuf;

use glam::DVec3;
use numpy::{AllowTypeChange, PyArray1, PyArray2, PyArrayLike1, PyArrayLike2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use repose::collision::{NO_BODY, NO_WALL};
use repose::contact_forces::ContactForces;
use repose::run::{f32_blocker, open_backend_for, scene_bodies, BackendChoice};
use repose::step::{StepReport, Stepper};
use repose::world::World;

use crate::scene::Scene;
use crate::{overrides, py_error, run_error, scene_err, to_py_err};

/// The backend named as on the command line (`auto`, `cpu`, `cpu-f32`,
/// `gpu`).
pub(crate) fn backend_choice(name: &str) -> PyResult<BackendChoice> {
    match name.to_ascii_lowercase().as_str() {
        "auto" => Ok(BackendChoice::Auto),
        "cpu" => Ok(BackendChoice::Cpu),
        "cpu-f32" | "cpu_f32" => Ok(BackendChoice::CpuF32),
        "gpu" => Ok(BackendChoice::Gpu),
        _ => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "backend {name:?}: expected \"auto\", \"cpu\", \"cpu-f32\" or \"gpu\""
        ))),
    }
}

/// The scene of a `Scene` or a path, with the overrides `set` and the
/// solver method `solver` (its command-line name, e.g. "apgd") applied.
pub(crate) fn scene_of(
    py: Python<'_>,
    scene: &Bound<'_, PyAny>,
    set: Option<&Bound<'_, PyAny>>,
    solver: Option<&str>,
) -> PyResult<repose::scene::Scene> {
    let mut set = overrides(set)?;
    if let Some(m) = solver {
        use repose::solver::SolverMethod;
        let method = SolverMethod::ALL
            .into_iter()
            .find(|x| x.name().eq_ignore_ascii_case(m))
            .ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "solver {m:?}: expected one of {}",
                    SolverMethod::ALL
                        .iter()
                        .map(|x| format!("{:?}", x.name()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        set.push(("solver.method".into(), format!("{method:?}")));
    }
    let result = if let Ok(s) = scene.cast::<Scene>() {
        s.get().inner.with_overrides(&set)
    } else {
        let path: PathBuf = scene.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(
                "scene: expected a repose.Scene or the path of a scene file",
            )
        })?;
        repose::scene::Scene::load(&path, &set)
    };
    result.map_err(|e| scene_err(py, &e, e.to_string()))
}

/// A scene's world, stepped one step at a time on the chosen backend.
#[pyclass(name = "Simulation", module = "repose", subclass)]
pub struct Simulation {
    scene: repose::scene::Scene,
    world: World,
    stepper: Stepper,
    backend_reason: String,
    last: Option<StepReport>,
    /// The last step's contacts, once asked for or before a setter changes
    /// the state they are computed from (`None`: not yet computed).
    contacts: Option<ContactForces>,
}

fn vec3s<'py>(
    py: Python<'py>,
    v: impl ExactSizeIterator<Item = DVec3>,
) -> Bound<'py, PyArray2<f64>> {
    let n = v.len();
    let flat: Vec<f64> = v.flat_map(|p| p.to_array()).collect();
    PyArray1::from_vec(py, flat)
        .reshape([n, 3])
        .expect("n × 3 elements")
}

fn ids<'py>(py: Python<'py>, v: impl Iterator<Item = i64>) -> Bound<'py, PyArray1<i64>> {
    PyArray1::from_iter(py, v)
}

impl Simulation {
    /// Computes the last step's contacts now, while the state is as the
    /// step left it (they are reconstructed from it), before a setter
    /// changes it.
    fn keep_contacts(&mut self) {
        if self.contacts.is_none() && self.last.is_some() {
            self.contacts = self.stepper.contact_forces(&self.world);
        }
    }

    /// The n × 3 rows of `a`, checked: n rows, every number finite.
    fn rows(&self, a: PyArrayLike2<'_, f64, AllowTypeChange>, what: &str) -> PyResult<Vec<DVec3>> {
        let a = a.as_array();
        let n = self.world.state.bodies.len();
        if a.shape() != [n, 3] {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{what}: expected an array of shape ({n}, 3), one row per body; got {:?}",
                a.shape()
            )));
        }
        let mut out = Vec::with_capacity(n);
        for (i, r) in a.rows().into_iter().enumerate() {
            let v = DVec3::new(r[0], r[1], r[2]);
            if !v.is_finite() {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "{what}: row {i} is not finite ({v})"
                )));
            }
            out.push(v);
        }
        Ok(out)
    }
}

#[pymethods]
impl Simulation {
    /// The world of `scene` (a `repose.Scene` or a scene file's path) with
    /// the overrides `set`, on `backend` ("auto", "cpu", "cpu-f32", "gpu":
    /// as `repose run --backend`), with the solver method `solver` ("apgd",
    /// "jacobi", …: as `--solver`) if given.
    #[new]
    #[pyo3(signature = (scene, backend="auto", solver=None, set=None))]
    fn new(
        py: Python<'_>,
        scene: &Bound<'_, PyAny>,
        backend: &str,
        solver: Option<&str>,
        set: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let choice = backend_choice(backend)?;
        let scene = scene_of(py, scene, set, solver)?;
        let world = scene
            .build()
            .map_err(|e| scene_err(py, &e, e.to_string()))?;
        let (backend, backend_reason) = open_backend_for(
            choice,
            &world.model.solver,
            scene_bodies(&world),
            f32_blocker(&world).as_deref(),
        )
        .map_err(|e| to_py_err(py, &e))?;
        Ok(Simulation {
            scene,
            world,
            stepper: Stepper::with_backend(backend),
            backend_reason,
            last: None,
            contacts: None,
        })
    }

    /// Takes `n` steps (default 1) with the GIL released; returns the steps
    /// taken. A failed step raises `repose.StepError` (the bodies keep the
    /// state of the last completed step when the solve went non-finite).
    /// Ctrl-C stops after the current step and raises KeyboardInterrupt:
    /// the state is that of a whole number of steps.
    #[pyo3(signature = (n=1))]
    fn step(&mut self, py: Python<'_>, n: u64) -> PyResult<u64> {
        for _ in 0..n {
            self.contacts = None;
            let (world, stepper) = (&mut self.world, &mut self.stepper);
            let result = py.detach(|| stepper.step(world));
            match result {
                Ok(r) => self.last = Some(r),
                Err(e) => {
                    // No contacts to show: the failed step's are not kept.
                    self.last = None;
                    let kw = PyDict::new(py);
                    kw.set_item("step", self.world.state.step_index + 1)?;
                    return Err(py_error(py, "StepError", &e.to_string(), Some(&kw)));
                }
            }
            py.check_signals()?;
        }
        Ok(n)
    }

    /// Simulated time (s).
    #[getter]
    fn time(&self) -> f64 {
        self.world.state.time
    }

    /// Steps taken.
    #[getter]
    fn step_index(&self) -> u64 {
        self.world.state.step_index
    }

    /// Time step h (s).
    #[getter]
    fn time_step(&self) -> f64 {
        self.world.model.time_step
    }

    /// Gravity (m/s²), shape (3,).
    #[getter]
    fn gravity<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, &self.world.model.gravity.to_array())
    }

    /// The scene this simulation was built from.
    #[getter]
    fn scene(&self) -> Scene {
        Scene {
            inner: self.scene.clone(),
        }
    }

    /// The backend, as the run's log names it.
    #[getter]
    fn backend(&self) -> String {
        self.stepper.backend.describe()
    }

    /// Why that backend was chosen (as the run's log says).
    #[getter]
    fn backend_reason(&self) -> String {
        self.backend_reason.clone()
    }

    /// Number of bodies now.
    fn __len__(&self) -> usize {
        self.world.state.bodies.len()
    }

    /// Centre positions (m), shape (n, 3).
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        vec3s(py, self.world.state.bodies.pos.iter().copied())
    }

    /// Linear velocities (m/s), shape (n, 3).
    #[getter]
    fn velocities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        vec3s(py, self.world.state.bodies.vel.iter().copied())
    }

    /// Angular velocities in the world frame (rad/s), shape (n, 3).
    #[getter]
    fn angular_velocities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        vec3s(py, self.world.state.bodies.omega.iter().copied())
    }

    /// Orientations (body → world) as unit quaternions (w, x, y, z), scalar
    /// first as in `final.csv` (`scipy.spatial.transform.Rotation.from_quat(q,
    /// scalar_first=True)` reads them); shape (n, 4).
    #[getter]
    fn orientations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        let n = self.world.state.bodies.len();
        let flat: Vec<f64> = self
            .world
            .state
            .bodies
            .rot
            .iter()
            .flat_map(|q| [q.w, q.x, q.y, q.z])
            .collect();
        PyArray1::from_vec(py, flat)
            .reshape([n, 4])
            .expect("n × 4 elements")
    }

    /// Radii (m); for a body that is not a sphere, its bounding radius.
    #[getter]
    fn radii<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, &self.world.state.bodies.radius)
    }

    /// Masses (kg).
    #[getter]
    fn masses<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_iter(py, self.world.state.bodies.inv_mass.iter().map(|m| 1.0 / m))
    }

    /// Each body's material: its index in the scene's `materials`.
    #[getter]
    fn material_ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        ids(
            py,
            self.world.state.bodies.material.iter().map(|&m| m as i64),
        )
    }

    /// Each body's shape: −1 for a plain sphere, else the index of its shape
    /// among the scene's shaped bodies (bodies of one source share one).
    #[getter]
    fn shape_ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        ids(
            py,
            self.world.state.bodies.shape.iter().map(|&s| {
                if s == repose::bodies::SPHERE {
                    -1
                } else {
                    s as i64
                }
            }),
        )
    }

    /// The boundaries' names, in scene order (contacts' `boundary` indexes it).
    #[getter]
    fn boundary_names(&self) -> Vec<String> {
        self.world.model.boundary_names()
    }

    /// Sets the linear velocities (m/s) from an array of shape (n, 3).
    fn set_velocities(&mut self, v: PyArrayLike2<'_, f64, AllowTypeChange>) -> PyResult<()> {
        let v = self.rows(v, "set_velocities")?;
        self.keep_contacts();
        self.world.state.bodies.vel = v;
        Ok(())
    }

    /// Sets the angular velocities (rad/s, world frame) from an array of
    /// shape (n, 3).
    fn set_angular_velocities(
        &mut self,
        w: PyArrayLike2<'_, f64, AllowTypeChange>,
    ) -> PyResult<()> {
        let w = self.rows(w, "set_angular_velocities")?;
        self.keep_contacts();
        self.world.state.bodies.omega = w;
        Ok(())
    }

    /// Sets the centre positions (m) from an array of shape (n, 3). Bodies
    /// moved into each other or through a wall are pushed apart by the next
    /// steps at most at `contact.max_recovery_speed`.
    fn set_positions(&mut self, x: PyArrayLike2<'_, f64, AllowTypeChange>) -> PyResult<()> {
        let x = self.rows(x, "set_positions")?;
        self.keep_contacts();
        self.world.state.bodies.pos = x;
        Ok(())
    }

    /// Removes the bodies whose ids are given; the others keep their order
    /// and are numbered 0, 1, … again. The next step starts without warm
    /// start (its impulses were keyed by the old ids), and the last step's
    /// contacts are forgotten.
    fn remove_bodies(
        &mut self,
        py: Python<'_>,
        ids: PyArrayLike1<'_, i64, AllowTypeChange>,
    ) -> PyResult<()> {
        let ids = ids.as_array();
        let n = self.world.state.bodies.len();
        let mut list = Vec::with_capacity(ids.len());
        for &i in ids.iter() {
            if i < 0 || i as usize >= n {
                return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                    "remove_bodies: body id {i} is out of range: the world has {n} bodies"
                )));
            }
            list.push(i as usize);
        }
        self.world
            .state
            .remove_bodies(&list)
            .map_err(|e| run_error(py, e))?;
        // The stepper's buffers (warm impulses, the penalty neighbour list)
        // are keyed by ids too: a new stepper on the same backend.
        let old = std::mem::take(&mut self.stepper);
        let timers = old.timers;
        self.stepper = Stepper::with_backend(old.backend);
        self.stepper.timers = timers;
        self.last = None;
        self.contacts = Some(ContactForces::default());
        Ok(())
    }

    /// The last step's solver statistics, or None before the first step:
    /// `iterations`, `residual` (relative, the measure the tolerance is
    /// on), `residual_abs`, `converged`, `contacts`, `substeps`,
    /// `fallback_iterations` (None when no fallback ran),
    /// `fallback_seconds` (the fallback's wall time; 0 when none ran),
    /// `timed_out`.
    #[getter]
    fn last_step<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(r) = &self.last else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("iterations", r.solve.iterations)?;
        d.set_item("residual", r.solve.residual_rel)?;
        d.set_item("residual_abs", r.solve.residual_abs)?;
        d.set_item("converged", r.solve.converged)?;
        d.set_item("contacts", r.contacts)?;
        d.set_item("substeps", r.substeps)?;
        d.set_item("fallback_iterations", r.solve.fallback_iterations)?;
        d.set_item("fallback_seconds", r.solve.fallback_seconds)?;
        d.set_item("timed_out", r.solve.timed_out)?;
        Ok(Some(d))
    }

    /// Seconds spent in each stage of the step (emit, collide, solve, …),
    /// summed over the steps taken.
    #[getter]
    fn stage_times(&self) -> std::collections::BTreeMap<String, f64> {
        self.stepper.timers.seconds()
    }

    /// The last step's contacts as a dict of arrays, m rows each:
    /// `body_a`, `body_b` (ids; `body_b` is −1 where end B is a boundary),
    /// `boundary` (index into `boundary_names`, −1 between two bodies),
    /// `point` (m, on body A's surface; posed at the step's start),
    /// `normal` (unit, from A towards B), `gap` (m, negative when
    /// overlapping), `normal_force` (N), `tangential_force` (N, world
    /// vector), `force` (their sum), `spinning_torque` (N m, about the
    /// normal), `rolling_torque` (N m, world vector): mean loads over the
    /// step on end B (module docs of the Rust source give the maths); under
    /// the penalty formulation the loads at the state itself;
    /// `elastic_energy` (J, the penalty springs' stored energy, else 0).
    fn contacts<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.keep_contacts();
        let empty = ContactForces::default();
        let c = self.contacts.as_ref().unwrap_or(&empty);
        let d = PyDict::new(py);
        let end = |v: u32| if v == NO_BODY { -1 } else { v as i64 };
        d.set_item("body_a", ids(py, c.body_a.iter().map(|&a| a as i64)))?;
        d.set_item("body_b", ids(py, c.body_b.iter().map(|&v| end(v))))?;
        d.set_item(
            "boundary",
            ids(
                py,
                c.wall
                    .iter()
                    .map(|&w| if w == NO_WALL { -1 } else { w as i64 }),
            ),
        )?;
        d.set_item("point", vec3s(py, c.point.iter().copied()))?;
        d.set_item("normal", vec3s(py, c.normal.iter().copied()))?;
        d.set_item("gap", PyArray1::from_slice(py, &c.gap))?;
        d.set_item("normal_force", PyArray1::from_slice(py, &c.normal_force))?;
        d.set_item(
            "tangential_force",
            vec3s(py, c.tangential_force.iter().copied()),
        )?;
        d.set_item("force", vec3s(py, (0..c.len()).map(|k| c.force(k))))?;
        d.set_item(
            "spinning_torque",
            PyArray1::from_slice(py, &c.spinning_torque),
        )?;
        d.set_item(
            "rolling_torque",
            vec3s(py, c.rolling_torque.iter().copied()),
        )?;
        let energy: Vec<f64> = (0..c.len()).map(|k| c.energy(k)).collect();
        d.set_item("elastic_energy", PyArray1::from_vec(py, energy))?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "Simulation(scene={:?}, bodies={}, t={} s, step={}, backend={:?})",
            self.scene.name,
            self.world.state.bodies.len(),
            self.world.state.time,
            self.world.state.step_index,
            self.stepper.backend.describe()
        )
    }
}
