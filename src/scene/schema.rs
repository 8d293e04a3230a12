//! The scene format: the types a scene file deserialises into, field by
//! field as `docs/scene-format.md` documents them, with their defaults and
//! the queries that read a scene (its steps, frames, paths and names).
//! Nothing here reads a file or builds a world.

use std::path::{Path, PathBuf};

use glam::{DVec2, DVec3};
use serde::{Deserialize, Serialize};

use crate::analysis::AnalysisSettings;
use crate::boundary::Caps;
use crate::inlet::InletRegion;
use crate::material::Material;
use crate::model::ContactSettings;
use crate::solver::SolverSettings;

/// The scene format version this build reads.
pub const SCENE_VERSION: u32 = 1;

/// The most spheres one scene may generate (a guard against typos such as
/// `count: (1000, 1000, 1000)`).
pub const MAX_SPHERES: usize = 20_000_000;

/// Number of frames written over the run when `output.frame_interval` is absent.
pub const DEFAULT_FRAMES: f64 = 50.0;

/// A complete scene description, as read from a RON file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    /// Format version; must equal [`SCENE_VERSION`].
    pub version: u32,
    /// Scene name, used for the default output directory `out/<name>/`.
    /// Absent or empty: the file name without extension.
    #[serde(default)]
    pub name: String,
    /// Time step h (s, > 0).
    pub time_step: f64,
    /// Simulated duration (s, > 0).
    pub duration: f64,
    /// Gravity (m/s²); default (0, 0, −9.81).
    #[serde(default = "default_gravity")]
    pub gravity: DVec3,
    /// Contact solver settings; every field optional.
    #[serde(default)]
    pub solver: SolverSettings,
    /// Contact detection and stabilisation settings; every field optional.
    #[serde(default)]
    pub contact: ContactSettings,
    /// The contact formulation: `Complementarity` (the default) or
    /// `Penalty(…)` ([`crate::formulation`]).
    #[serde(default)]
    pub formulation: crate::formulation::Formulation,
    /// What to write and how often; every field optional.
    #[serde(default)]
    pub output: OutputSettings,
    /// Settling detection, heap measurement (angle of repose) and early
    /// stopping; every field optional.
    #[serde(default)]
    pub analysis: AnalysisSettings,
    /// Materials table; spheres and boundaries refer to entries by index.
    pub materials: Vec<Material>,
    /// Sphere sources: single spheres and generators, in body-id order.
    pub spheres: Vec<SphereSource>,
    /// Kinematic boundaries (may be empty).
    #[serde(default)]
    pub boundaries: Vec<BoundarySpec>,
    /// Where the scene came from (a path or a label), for error messages;
    /// not part of the file format.
    #[serde(skip)]
    pub file: String,
}

fn default_gravity() -> DVec3 {
    DVec3::new(0.0, 0.0, -9.81)
}

/// Output settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OutputSettings {
    /// Simulated time between written frames (s, > 0). `None`: the duration
    /// divided by [`DEFAULT_FRAMES`] (50 frames). Rounded to a whole number of
    /// time steps, at least one; see [`Scene::frame_every`].
    pub frame_interval: Option<f64>,
    /// Body ids whose trajectories go to `track.csv`.
    pub track: Vec<usize>,
    /// Also write one CSV file per frame (besides the VTU files).
    pub csv_frames: bool,
    /// Also write each frame's contacts: `contacts_NNNNN.vtu` (lines
    /// between the bodies, for force chains; `contacts.pvd`) and
    /// `contacts_NNNNN.csv` (points, normals, forces and torques), see
    /// [`crate::output::contacts`]. Also `repose run --contacts`.
    pub contacts: bool,
    /// The picture of the final state, `final.png`.
    pub picture: PictureSettings,
    /// Steps (1 = the first) whose contact problem is written out as
    /// `problem_stepNNNNNN.dat`, in the Siconos format that `repose solve`
    /// reads (d = 6 with the spinning row, [`crate::siconos`]), for studying
    /// hard problems apart from the run. Also `repose run --dump-problem`.
    pub dump_problems: Vec<u64>,
    /// When the run writes `checkpoint.bin`, the state `repose run --resume`
    /// continues from.
    pub checkpoint: CheckpointSettings,
}

/// When a run writes its checkpoint (`checkpoint.bin`, see
/// [`crate::run::checkpoint`]): at the start, then whenever `every_seconds`
/// of wall time have passed or `every_steps` steps were taken since the
/// last one (whichever comes first; either may be off), and when the run is
/// interrupted. A run that finishes removes it, unless `keep` is set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckpointSettings {
    /// Write checkpoints at all (default `true`).
    pub enabled: bool,
    /// Wall-clock seconds between checkpoints (default 60; `None`: off).
    pub every_seconds: Option<f64>,
    /// Steps between checkpoints (default `None`: off).
    pub every_steps: Option<u64>,
    /// Keep the checkpoint when the run finishes, with a last one written
    /// at its end (default `false`: a finished run removes it): the whole
    /// final state, bodies of every shape included, for another scene's
    /// `FromFile` source.
    pub keep: bool,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        CheckpointSettings {
            enabled: true,
            every_seconds: Some(60.0),
            every_steps: None,
            keep: false,
        }
    }
}

/// What the sphere colours show in a picture (`output.picture.colour`;
/// the drawing is [`crate::render::particles`]'s).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum ColourBy {
    /// Height of the centre, z (m).
    #[default]
    Height,
    /// Speed, |v| (m/s).
    Speed,
}

/// Which horizontal axis a picture's side view looks along
/// (`output.picture.look_along`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum LookAlong {
    /// Along +y: x to the right, z up (top view: x right, y up). The default.
    #[default]
    Y,
    /// Along −x: y to the right, z up (top view: y right, −x up); for
    /// scenes whose interesting direction is x, such as a drum with its
    /// axis along x, whose slope a view along y cannot show.
    X,
}

/// Settings of `final.png`, the picture of the final state (a side view and
/// a top view of the spheres; see [`crate::render::particles`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PictureSettings {
    /// Write `final.png` at the end of the run (default `true`).
    pub enabled: bool,
    /// What the sphere colours show: `Height` (default) or `Speed`.
    pub colour: ColourBy,
    /// Width in pixels (default 1200).
    pub width: u32,
    /// Height in pixels (default 600).
    pub height: u32,
    /// The axis the side view looks along: `Y` (default; x right, z up) or
    /// `X` (y right, z up), e.g. for a drum turning about x.
    pub look_along: LookAlong,
}

impl Default for PictureSettings {
    fn default() -> Self {
        PictureSettings {
            enabled: true,
            colour: ColourBy::Height,
            width: 1200,
            height: 600,
            look_along: LookAlong::Y,
        }
    }
}

/// One source of spheres. Body ids are assigned in list order, and within a
/// generator in generation order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum SphereSource {
    /// One sphere.
    Sphere(SphereSpec),
    /// One rigid body of any shape ([`crate::shape::Shape`]): a box,
    /// cylinder, capsule, ellipsoid, convex polyhedron, or a sphere.
    Body(BodySpec),
    /// A rectangular lattice of equal spheres, optionally jittered.
    Lattice(LatticeSpec),
    /// Non-overlapping spheres at seeded random places inside a box.
    RandomBox(RandomBoxSpec),
    /// Spheres emitted during the run at a rate (pluviation); they get the
    /// body ids after every other source's.
    Inlet(InletSpec),
    /// Bodies read back from the state a run wrote (its `final.csv`, a
    /// frame's `frame_NNNNN.csv`, or a kept `checkpoint.bin`, which gives
    /// bodies of every shape): one scene starts where another ended.
    FromFile(FromFileSpec),
}

impl SphereSource {
    /// The variant name as written in the file (`Sphere`, `Body`, `Lattice`,
    /// `RandomBox`, `Inlet`, `FromFile`).
    pub fn kind(&self) -> &'static str {
        match self {
            SphereSource::Sphere(_) => "Sphere",
            SphereSource::Body(_) => "Body",
            SphereSource::Lattice(_) => "Lattice",
            SphereSource::RandomBox(_) => "RandomBox",
            SphereSource::Inlet(_) => "Inlet",
            SphereSource::FromFile(_) => "FromFile",
        }
    }
}

/// Bodies read back from a run's state: `FromFile(file:
/// "../out/fill/final.csv")`. Each row of a CSV (a `final.csv` or a
/// frame's `frame_NNNNN.csv`, [`crate::output::csv`]) becomes a sphere of
/// its radius at its position, with its velocity and spin (unless
/// `keep_velocities: false`) and its material (the file's `material`
/// column, or `material` here for all); the mass comes from the material's
/// density in *this* scene, as for any sphere. A CSV gives a shape's kind,
/// not its dimensions, so only spheres are read from one; a run's kept
/// `checkpoint.bin` gives bodies of every shape with their orientations,
/// masses and inertias (`src/scene/from_file.rs`). With `within`,
/// only the bodies whose centres lie in that box are kept; `offset` moves
/// them all. A relative `file` is found from the scene file's directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FromFileSpec {
    /// The file: a run's `final.csv`, `frame_NNNNN.csv` or `checkpoint.bin`.
    pub file: String,
    /// Every body's material; default: the file's (a CSV's `material`
    /// column, 0 for a CSV of an earlier version, which has none).
    #[serde(default)]
    pub material: Option<u32>,
    /// Keep only the spheres whose centres lie in this box.
    #[serde(default)]
    pub within: Option<BoxRegion>,
    /// Start the spheres with the velocities and spins read (default
    /// `true`); `false`: at rest.
    #[serde(default = "default_true")]
    pub keep_velocities: bool,
    /// Moves every sphere by this (m; default zero).
    #[serde(default)]
    pub offset: DVec3,
}

/// An axis-aligned box, by its corners.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxRegion {
    /// The corner with the smallest coordinates (m).
    pub min: DVec3,
    /// The corner with the largest coordinates (m).
    pub max: DVec3,
}

fn default_true() -> bool {
    true
}

/// A single sphere. Mass: `mass` if given, else from `density`, else from the
/// material's density (giving both `mass` and `density` is an error);
/// inertia: `inertia` if given, else a solid sphere's (2/5) m r².
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SphereSpec {
    /// Centre (m).
    pub pos: DVec3,
    /// Radius (m, > 0).
    pub radius: f64,
    /// Material index (default 0).
    #[serde(default)]
    pub material: u32,
    /// Initial velocity (m/s; default zero).
    #[serde(default)]
    pub velocity: DVec3,
    /// Initial angular velocity, world frame (rad/s; default zero).
    #[serde(default)]
    pub angular_velocity: DVec3,
    /// Density (kg/m³, > 0) overriding the material's.
    #[serde(default)]
    pub density: Option<f64>,
    /// Explicit mass (kg, > 0).
    #[serde(default)]
    pub mass: Option<f64>,
    /// Explicit moment of inertia about the centre (kg m², > 0).
    #[serde(default)]
    pub inertia: Option<f64>,
}

/// One rigid body: `Body(shape: Box(half_extents: (0.5, 0.5, 0.5)), pos:
/// (0, 0, 0.5))`. The shape is given in its own frame; `pos` places that
/// frame's origin — the centre of every shape but a convex polyhedron,
/// whose centre of mass is found from its vertices — and `rot` turns it
/// (a unit quaternion with named parts; a cylinder lying on its side is
/// `rot: (w: 0.7071068, x: 0.7071068, y: 0, z: 0)`). Mass: `mass` if given, else from
/// `density`, else from the material's density, times the volume (giving
/// both `mass` and `density` is an error); principal moments: `inertia` if
/// given (about the centre of mass, along the shape's axes, which must then
/// be principal; they must satisfy the triangle inequalities), else those
/// of the uniform shape scaled to the mass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// The shape in its own frame.
    pub shape: crate::shape::Shape,
    /// Position of the shape's frame (m).
    pub pos: DVec3,
    /// Orientation, a quaternion with named parts `(w: …, x: …, y: …,
    /// z: …)` ([`quaternion`](super::quaternion)); default identity; normalised.
    #[serde(default, with = "super::quaternion")]
    pub rot: Option<glam::DQuat>,
    /// Material index (default 0).
    #[serde(default)]
    pub material: u32,
    /// Initial velocity of the centre of mass (m/s; default zero).
    #[serde(default)]
    pub velocity: DVec3,
    /// Initial angular velocity, world frame (rad/s; default zero).
    #[serde(default)]
    pub angular_velocity: DVec3,
    /// Density (kg/m³, > 0) overriding the material's.
    #[serde(default)]
    pub density: Option<f64>,
    /// Explicit mass (kg, > 0).
    #[serde(default)]
    pub mass: Option<f64>,
    /// Explicit principal moments of inertia (kg m²).
    #[serde(default)]
    pub inertia: Option<DVec3>,
}

/// `count.0 × count.1 × count.2` spheres at `origin + (i, j, k)·spacing`,
/// x varying fastest, then y, then z. With `jitter` > 0 each coordinate is
/// moved by a uniform random offset in [−jitter·spacing, +jitter·spacing]
/// (seeded); `spacing·(1 − 2·jitter) ≥ 2·radius` is required so that no two
/// spheres overlap. With `shape` instead of `radius` every site holds the
/// centre of mass of a body of that shape (the bounding radius about it
/// takes the place of `radius` in the spacing rule), turned at random
/// (uniformly over all orientations, seeded) with `random_orientation`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatticeSpec {
    /// Centre of the first sphere (m).
    pub origin: DVec3,
    /// Number of spheres along x, y, z (each ≥ 1).
    pub count: [usize; 3],
    /// Distance between neighbouring centres (m, > 0).
    pub spacing: f64,
    /// Radius of the spheres (m, > 0); not with `shape`.
    #[serde(default)]
    pub radius: Option<f64>,
    /// The shape of every body, instead of spheres of `radius`.
    #[serde(default)]
    pub shape: Option<crate::shape::Shape>,
    /// Turn every body at random (default false: unturned).
    #[serde(default)]
    pub random_orientation: bool,
    /// Material index (default 0).
    #[serde(default)]
    pub material: u32,
    /// Random offset per coordinate as a fraction of `spacing`, in [0, 0.5) (default 0).
    #[serde(default)]
    pub jitter: f64,
    /// Seed of the jitter (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Initial velocity of every sphere (m/s; default zero).
    #[serde(default)]
    pub velocity: DVec3,
    /// Density (kg/m³, > 0) overriding the material's.
    #[serde(default)]
    pub density: Option<f64>,
}

/// `count` spheres placed one after another at uniformly random positions
/// (seeded) inside the axis-aligned box `min..max`, each one rejected and
/// redrawn while it overlaps an earlier one (random sequential addition: it
/// jams near a solid fraction of 0.38, so keep requests well below that).
/// Radii are uniform in [`radius`, `radius_max`]. Every sphere lies wholly
/// inside the box.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomBoxSpec {
    /// Lower corner of the region (m).
    pub min: DVec3,
    /// Upper corner of the region (m).
    pub max: DVec3,
    /// Number of spheres (≥ 1).
    pub count: usize,
    /// Radius, or the smallest radius when `radius_max` is given (m, > 0);
    /// not with `shape`.
    #[serde(default)]
    pub radius: Option<f64>,
    /// Largest radius (m, ≥ `radius`); `None`: all spheres have `radius`.
    #[serde(default)]
    pub radius_max: Option<f64>,
    /// Radii drawn from this distribution ([`crate::sizes`]) instead of
    /// `radius` (and `radius_max`).
    #[serde(default)]
    pub sizes: Option<crate::sizes::SizeDistribution>,
    /// The shape of every body, instead of spheres (its centre of mass
    /// placed as a sphere of its bounding radius would be, so that bounding
    /// balls do not overlap).
    #[serde(default)]
    pub shape: Option<crate::shape::Shape>,
    /// Turn every body at random (default false), from a second stream of
    /// the seed (the places are those spheres of the bounding radius get).
    #[serde(default)]
    pub random_orientation: bool,
    /// Material index (default 0).
    #[serde(default)]
    pub material: u32,
    /// Seed of the placement (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Initial velocity of every sphere (m/s; default zero).
    #[serde(default)]
    pub velocity: DVec3,
    /// Density (kg/m³, > 0) overriding the material's.
    #[serde(default)]
    pub density: Option<f64>,
}

/// A particle inlet (see [`crate::inlet`]): from `start_time` on, emits
/// spheres at `rate` per second, centres uniformly random in `region`, each
/// placed without overlapping any sphere or boundary (deferred to the next
/// step when no place is found), until `count` have been emitted. Radii are
/// uniform in [`radius`, `radius_max`]; velocities are `velocity` plus a
/// uniform offset in ±`velocity_jitter` per component.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InletSpec {
    /// Where centres are placed: `Box(min: …, max: …)` or
    /// `Disk(center: …, normal: …, radius: …)`.
    pub region: InletRegion,
    /// Spheres per second (> 0).
    pub rate: f64,
    /// Spheres in all (≥ 1).
    pub count: usize,
    /// Radius, or the smallest radius when `radius_max` is given (m, > 0);
    /// not with `shape`.
    #[serde(default)]
    pub radius: Option<f64>,
    /// Largest radius (m, ≥ `radius`); `None`: all spheres have `radius`.
    #[serde(default)]
    pub radius_max: Option<f64>,
    /// Radii drawn from this distribution ([`crate::sizes`]) instead of
    /// `radius` (and `radius_max`).
    #[serde(default)]
    pub sizes: Option<crate::sizes::SizeDistribution>,
    /// The shape of every body emitted, instead of spheres (its centre of
    /// mass placed as a sphere of its bounding radius would be).
    #[serde(default)]
    pub shape: Option<crate::shape::Shape>,
    /// Turn every body emitted at random (default false).
    #[serde(default)]
    pub random_orientation: bool,
    /// Material index (default 0).
    #[serde(default)]
    pub material: u32,
    /// Density (kg/m³, > 0) overriding the material's.
    #[serde(default)]
    pub density: Option<f64>,
    /// Initial velocity (m/s; default zero).
    #[serde(default)]
    pub velocity: DVec3,
    /// Uniform random offset per velocity component, ±this (m/s, ≥ 0; default 0).
    #[serde(default)]
    pub velocity_jitter: f64,
    /// Seed of the draws (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Simulated time at which emission starts (s, ≥ 0; default 0).
    #[serde(default)]
    pub start_time: f64,
}

impl InletSpec {
    /// The radius the inlet places by ([`placement_radius`]; the smallest
    /// of its `sizes`).
    pub fn effective_radius(&self) -> f64 {
        match &self.sizes {
            Some(d) => d.bounds().0,
            None => placement_radius(self.radius, &self.shape),
        }
    }

    /// The largest radius it emits.
    pub fn largest_radius(&self) -> f64 {
        match &self.sizes {
            Some(d) => d.bounds().1,
            None => self.radius_max.unwrap_or(self.effective_radius()),
        }
    }
}

/// The radius a source places bodies by: `radius` for spheres, or the
/// bounding radius of `shape` about its centre of mass (0 when neither is
/// valid).
pub fn placement_radius(radius: Option<f64>, shape: &Option<crate::shape::Shape>) -> f64 {
    match shape {
        Some(shape) if shape.validate().is_ok() => shape
            .to_body_frame(&shape.mass_properties(1.0))
            .bounding_radius(),
        Some(_) => 0.0,
        None => radius.unwrap_or(0.0),
    }
}

/// One kinematic boundary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum BoundarySpec {
    /// A half-space.
    Plane(PlaneSpec),
    /// An axis-aligned box container (spheres inside).
    Box(BoxSpec),
    /// A cylinder (tube, cup or drum; spheres inside).
    Cylinder(CylinderSpec),
    /// A finite horizontal plate (spheres on top; they fall off its edges).
    Plate(PlateSpec),
    /// A triangle mesh from an STL or OBJ file.
    Mesh(MeshSpec),
}

impl BoundarySpec {
    /// The variant name as written in the file (`Plane`, `Box`, `Cylinder`).
    pub fn kind(&self) -> &'static str {
        match self {
            BoundarySpec::Plane(_) => "Plane",
            BoundarySpec::Box(_) => "Box",
            BoundarySpec::Cylinder(_) => "Cylinder",
            BoundarySpec::Plate(_) => "Plate",
            BoundarySpec::Mesh(_) => "Mesh",
        }
    }

    /// The name given in the file (may be empty).
    pub fn given_name(&self) -> &str {
        match self {
            BoundarySpec::Plane(p) => &p.name,
            BoundarySpec::Box(b) => &b.name,
            BoundarySpec::Cylinder(c) => &c.name,
            BoundarySpec::Plate(p) => &p.name,
            BoundarySpec::Mesh(m) => &m.name,
        }
    }

    /// The material index.
    pub fn material(&self) -> u32 {
        match self {
            BoundarySpec::Plane(p) => p.material,
            BoundarySpec::Box(b) => b.material,
            BoundarySpec::Cylinder(c) => c.material,
            BoundarySpec::Plate(p) => p.material,
            BoundarySpec::Mesh(m) => m.material,
        }
    }
}

/// The half-space on the side of `normal`: spheres live where
/// `(x − point)·normal ≥ 0`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaneSpec {
    /// Name for logs and errors; empty: `plane<i>` with i its index in `boundaries`.
    #[serde(default)]
    pub name: String,
    /// A point of the plane (m).
    pub point: DVec3,
    /// Normal pointing into the free side; normalised on load (must not be zero).
    pub normal: DVec3,
    /// Material index (default 0).
    #[serde(default)]
    pub material: u32,
    /// Prescribed constant velocity (m/s; default zero).
    #[serde(default)]
    pub velocity: DVec3,
}

/// A horizontal rectangle of no thickness, `center ± (half_extents.x,
/// half_extents.y, 0)`, touched from above and at its edges: spheres rest on
/// it and roll off it (the fixed plate of Acary & Bourrier 2021, §6.2). Put
/// a floor below to catch what falls off, and give `analysis.floor` the
/// plate's height so the heap is measured on the plate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlateSpec {
    /// Name for logs and errors; empty: `plate<i>` with i its index in `boundaries`.
    #[serde(default)]
    pub name: String,
    /// Centre of the plate (m); its top face is at `center.z`.
    pub center: DVec3,
    /// Half extents along x and y (m, each > 0).
    pub half_extents: DVec2,
    /// Material index (default 0).
    #[serde(default)]
    pub material: u32,
    /// Prescribed constant velocity (m/s; default zero).
    #[serde(default)]
    pub velocity: DVec3,
}

/// A triangle mesh read from an STL (ASCII or binary) or OBJ file: a
/// funnel, a hopper, a drum's lifters. The file's coordinates are scaled by
/// `scale` (a CAD file in millimetres: `scale: 0.001`), turned by `rot`
/// and moved to `pos`; the mesh then moves with `velocity` and turns about
/// `pos` at `angular_velocity` (both from `start_time` on), so a drum
/// with lifters is a mesh whose axis passes through the file's origin.
/// Spheres live on the side the triangles' normals point to
/// (counter-clockwise winding seen from there; `flip: true` reverses
/// every triangle, e.g. a closed box exported with outward normals used as
/// a container); `two_sided: true` makes both sides solid, for sheets of
/// no thickness. Contact is with faces, edges and corners without double
/// counting (`repose::collision::mesh`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshSpec {
    /// Name for logs and errors; empty: `mesh<i>` with i its index in `boundaries`.
    #[serde(default)]
    pub name: String,
    /// The mesh file, `.stl` or `.obj`; a relative path is taken from the
    /// scene file's folder.
    pub file: String,
    /// Factor applied to the file's coordinates (> 0; default 1).
    #[serde(default = "one")]
    pub scale: f64,
    /// Where the file's origin is placed (m; default the origin).
    #[serde(default)]
    pub pos: DVec3,
    /// Orientation, a quaternion with named parts `(w: …, x: …, y: …,
    /// z: …)` ([`quaternion`](super::quaternion)); default identity; normalised.
    #[serde(default, with = "super::quaternion")]
    pub rot: Option<glam::DQuat>,
    /// Reverse every triangle's winding (default false).
    #[serde(default)]
    pub flip: bool,
    /// Both sides of every triangle are solid (default false).
    #[serde(default)]
    pub two_sided: bool,
    /// Material index (default 0).
    #[serde(default)]
    pub material: u32,
    /// Prescribed constant velocity (m/s; default zero).
    #[serde(default)]
    pub velocity: DVec3,
    /// Prescribed angular velocity about `pos` (rad/s, world axes; default zero).
    #[serde(default)]
    pub angular_velocity: DVec3,
    /// Simulated time (s, ≥ 0; default 0) at which `velocity` and
    /// `angular_velocity` switch on.
    #[serde(default)]
    pub start_time: f64,
}

fn one() -> f64 {
    1.0
}

/// The inside of the axis-aligned box `center ± half_extents`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxSpec {
    /// Name for logs and errors; empty: `box<i>` with i its index in `boundaries`.
    #[serde(default)]
    pub name: String,
    /// Centre (m).
    pub center: DVec3,
    /// Half extents along x, y, z (m, each > 0).
    pub half_extents: DVec3,
    /// Whether the +z face is absent (default false: closed box).
    #[serde(default)]
    pub open_top: bool,
    /// Material index (default 0).
    #[serde(default)]
    pub material: u32,
    /// Prescribed constant velocity (m/s; default zero).
    #[serde(default)]
    pub velocity: DVec3,
}

/// The inside of a cylinder: radius `radius` around the line through
/// `center` along `axis`, from −`half_length` to +`half_length` along it
/// (the "bottom" is the −axis end), closed as `caps` says. It moves with
/// `velocity` and spins about its own axis at `angular_velocity` (rad/s,
/// right-handed about `axis`), both from `start_time` on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CylinderSpec {
    /// Name for logs and errors; empty: `cylinder<i>` with i its index in `boundaries`.
    #[serde(default)]
    pub name: String,
    /// Centre of the cylinder, midway between its ends (m).
    pub center: DVec3,
    /// Axis direction; normalised on load (must not be zero).
    pub axis: DVec3,
    /// Inner radius (m, > 0).
    pub radius: f64,
    /// Half the length along the axis (m, > 0).
    pub half_length: f64,
    /// Which ends are closed: `Open` (a tube), `Bottom` (a cup) or `Both` (a drum).
    #[serde(default)]
    pub caps: Caps,
    /// Material index (default 0).
    #[serde(default)]
    pub material: u32,
    /// Prescribed constant velocity (m/s; default zero), e.g. lifting a tube along its axis.
    #[serde(default)]
    pub velocity: DVec3,
    /// Spin about the axis (rad/s; default 0), right-handed about `axis`.
    #[serde(default)]
    pub angular_velocity: f64,
    /// Simulated time (s, ≥ 0; default 0) at which `velocity` and
    /// `angular_velocity` switch on; the cylinder is at rest before.
    #[serde(default)]
    pub start_time: f64,
}

impl Scene {
    /// Spheres the inlets will add during the run (beyond the built bodies).
    pub fn inlet_count(&self) -> usize {
        self.spheres
            .iter()
            .map(|s| match s {
                SphereSource::Inlet(i) => i.count,
                _ => 0,
            })
            .fold(0usize, usize::saturating_add)
    }

    /// The path of a mesh boundary's file: as written when absolute, else
    /// from the scene file's folder.
    pub fn mesh_path(&self, m: &MeshSpec) -> PathBuf {
        self.relative_path(&m.file)
    }

    /// A file the scene names (a mesh, a run's state), found from the scene
    /// file's directory when relative.
    pub fn relative_path(&self, file: &str) -> PathBuf {
        let file = Path::new(file);
        if file.is_absolute() {
            return file.to_path_buf();
        }
        match Path::new(&self.file).parent() {
            Some(dir) => dir.join(file),
            None => file.to_path_buf(),
        }
    }

    /// The name of boundary `i`: as given, or `plane<i>` / `box<i>` /
    /// `cylinder<i>` / `plate<i>`.
    pub fn boundary_name(&self, i: usize) -> String {
        let b = &self.boundaries[i];
        if b.given_name().is_empty() {
            format!("{}{i}", b.kind().to_lowercase())
        } else {
            b.given_name().to_string()
        }
    }

    /// Number of time steps: ⌈duration / time_step⌉ (a relative slack of
    /// 1e-9 absorbs rounding, so 1.0 / 1e-3 is 1000 steps), at least 1.
    pub fn steps(&self) -> u64 {
        let n = self.duration / self.time_step;
        ((n - 1e-9 * n).ceil() as u64).max(1)
    }

    /// Simulated time between frames (s): `output.frame_interval`, or the
    /// duration / [`DEFAULT_FRAMES`].
    pub fn frame_interval(&self) -> f64 {
        self.output
            .frame_interval
            .unwrap_or(self.duration / DEFAULT_FRAMES)
    }

    /// Steps between written frames: the frame interval rounded to a whole
    /// number of time steps, at least 1.
    pub fn frame_every(&self) -> u64 {
        ((self.frame_interval() / self.time_step).round() as u64).max(1)
    }

    /// The default output directory, `out/<name>`.
    pub fn output_dir(&self) -> PathBuf {
        Path::new("out").join(&self.name)
    }
}
