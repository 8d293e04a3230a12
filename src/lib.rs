//! repose: granular dynamics with nonsmooth (complementarity) contact.
//!
//! The crate has two layers (`docs/developers.md`, "Layout"; held by
//! `tests/layers.rs`). **The physics** is what a step needs: bodies and
//! their shapes, boundaries, materials, meshes, size laws and random
//! numbers; the world, its constant [`model`] and its changing [`state`];
//! collision; the contact problem, its cones, the LCP, the existence
//! criterion and the Siconos format; the solvers, their f32 mirror and the
//! GPU; the formulations; and the [`step`]. It uses nothing above it.
//! **The application** is built on
//! it: scenes, runs and their checkpoints, outputs, pictures, analyses,
//! studies (sweep, calibrate), the tools (solve, measure, compare, bench,
//! validate) and signals; the command line (`src/main.rs`, one file a
//! command in `src/cli/`) parses and hands over to these.

// The physics.
pub mod bodies;
pub mod boundary;
pub mod collision;
pub mod cone;
pub mod contact_forces;
pub mod existence;
pub mod formulation;
pub mod gpu;
pub mod inlet;
pub mod integrate;
pub mod lcp;
pub mod material;
pub mod mesh;
pub mod model;
pub mod placement;
pub mod problem;
pub mod rng;
pub mod shape;
pub mod siconos;
pub mod sizes;
pub mod solver;
pub mod state;
pub mod step;
pub mod wall_loads;
pub mod world;

// The application.
pub mod analysis;
pub mod bench;
pub mod calibrate;
pub mod compare;
pub mod interrupt;
pub mod measure;
pub mod output;
pub mod render;
pub mod run;
pub mod scene;
pub mod solve;
pub mod sweep;
pub mod validate;
