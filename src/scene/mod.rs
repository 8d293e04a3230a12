//! Scene files: the RON schema, validation with named errors, `--set`
//! overrides, particle generators, and building a [`World`](crate::world::World).
//!
//! A scene is a RON document (`scenes/*.ron`, documented field by field in
//! `docs/scene-format.md`):
//!
//! ```ron
//! Scene(
//!     version: 1,
//!     name: "pile",
//!     time_step: 1e-3,
//!     duration: 2.0,
//!     materials: [(name: "glass", friction: 0.5, rolling: 0.001)],
//!     spheres: [Lattice(origin: (0, 0, 0.05), count: (10, 10, 5), spacing: 0.021, radius: 0.01)],
//!     boundaries: [Plane(name: "floor", point: (0, 0, 0), normal: (0, 0, 1))],
//! )
//! ```
//!
//! Loading goes: parse ([`SceneError::Syntax`] with `file:line:col` for
//! malformed RON, unknown fields, missing fields, wrong types) → version
//! check → scan for NaN/∞ → `--set` overrides ([`apply_override`]) →
//! validation ([`SceneError::Invalid`], every problem as
//! `file: field.path: reason`) → [`Scene::build`] runs the generators and
//! fills a [`World`](crate::world::World). Every step is deterministic: generators draw from
//! [`rng::Rng`] seeded by the scene.
//!
//! The loader enables two RON extensions: `implicit_some` (an optional field
//! may be written `mass: 0.1` as well as `mass: Some(0.1)`) and
//! `unwrap_variant_newtypes` (`Lattice(origin: …)` rather than
//! `Lattice((origin: …))`). Read scenes with [`Scene::from_str`] /
//! [`Scene::load`], not with `ron::from_str`, and write them with
//! [`Scene::to_ron`].

//! The module's files, one job each: [`schema`] is the format (the types a
//! scene file deserialises into, with their defaults and the queries that
//! read them), `load` reads and checks a file (parse, version, overrides,
//! validation), `validate` and `overlaps` are the checks, `generate` and
//! `from_file` place the spheres, and `build` makes the [`World`](crate::world::World). The
//! files below the schema import it directly, never this module.

mod build;
mod check;
mod error;
mod from_file;
mod generate;
mod load;
mod overlaps;
mod overrides;
pub mod quaternion;
pub mod schema;

/// The seeded random numbers of the generators (re-exported: they live
/// below the scene, [`crate::rng`], so that inlets need not import it).
pub use crate::rng;

pub use crate::boundary::Caps;
pub use crate::inlet::InletRegion;
pub use error::{Issue, SceneError};
pub use generate::PlacedSphere;
pub use load::MAX_SCENE_BYTES;
pub use overrides::{apply_override, canonical_path, parse_set};
pub use schema::*;

#[cfg(test)]
mod tests;
