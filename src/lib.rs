//! repose: granular dynamics with nonsmooth (complementarity) contact.
pub mod bodies;
pub mod boundary;
pub mod material;
pub mod scene;
pub mod solver;
pub mod world;
