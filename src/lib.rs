//! repose: granular dynamics with nonsmooth (complementarity) contact.
pub mod bodies;
pub mod boundary;
pub mod cone;
pub mod material;
pub mod output;
pub mod scene;
pub mod solver;
pub mod world;
