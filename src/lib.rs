//! repose: granular dynamics with nonsmooth (complementarity) contact.
pub mod bodies;
pub mod material;
