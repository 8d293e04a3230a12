//! repose: granular dynamics with nonsmooth (complementarity) contact.
pub mod bench;
pub mod bodies;
pub mod boundary;
pub mod collision;
pub mod compare;
pub mod cone;
pub mod gpu;
pub mod integrate;
pub mod material;
pub mod output;
pub mod problem;
pub mod run;
pub mod scene;
pub mod solver;
pub mod step;
pub mod validate;
pub mod world;
