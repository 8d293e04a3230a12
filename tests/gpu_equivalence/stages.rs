//! What the tests of the device stages share: a scene's contacts found on
//! the device with the CPU's problem assembled from that same list, the
//! device's assembly of it, and random f32 impulses.

use repose::collision::ContactGeom;
use repose::gpu::assemble::{self, Assembled, GpuAssembler};
use repose::gpu::collide::{DeviceContact, GpuCollider};
use repose::material::Material;
use repose::problem::ContactProblem;
use repose::rng::Rng;

use super::contacts::Scene;
use super::*;

/// One list on both sides.
pub(super) struct Found {
    /// The device's list.
    pub(super) contacts: Vec<DeviceContact>,
    /// The same list as the CPU's stages take it.
    pub(super) geoms: Vec<ContactGeom>,
    /// The CPU's problem of that list.
    pub(super) problem: ContactProblem,
    /// The device's assembly of it.
    pub(super) assembled: Assembled,
}

/// Detects `s`'s contacts on the device, and assembles that list on the
/// CPU (with free velocities `free`) and on the device.
pub(super) fn detect_and_assemble(
    label: &str,
    ctx: &GpuContext,
    s: &Scene,
    mats: &[Material],
    free: (Vec<DVec3>, Vec<DVec3>),
    h: f64,
    v_max: f64,
) -> Found {
    let found = GpuCollider::new(ctx)
        .expect("collision pipelines")
        .detect(ctx, &s.bodies, &s.boundaries, s.envelope)
        .unwrap_or_else(|e| panic!("{label}: device detection failed: {e}"));
    let geoms: Vec<ContactGeom> = found
        .contacts
        .iter()
        .map(|c| c.geom(&s.bodies, &s.boundaries, 0.0))
        .collect();
    let problem = ContactProblem::assemble(&s.bodies, &geoms, mats, free.0, free.1, h, v_max);
    let assembled = GpuAssembler::new(ctx)
        .expect("assembly pipelines")
        .assemble_records(
            ctx,
            &found.contacts,
            &assemble::body_records(&s.bodies).expect("spheres"),
            &assemble::wall_records(&s.boundaries, 0.0).expect("translating boundaries"),
            &assemble::material_records(mats),
            h,
            v_max,
        )
        .unwrap_or_else(|e| panic!("{label}: device assembly failed: {e}"));
    Found {
        contacts: found.contacts,
        geoms,
        problem,
        assembled,
    }
}

/// Zero free velocities for `s`'s bodies.
pub(super) fn at_rest(s: &Scene) -> (Vec<DVec3>, Vec<DVec3>) {
    let n = s.bodies.len();
    (vec![DVec3::ZERO; n], vec![DVec3::ZERO; n])
}

/// A vector of f32 values uniform in ±`scale`.
pub(super) fn f32_vec(rng: &mut Rng, scale: f64) -> DVec3 {
    let mut c = || f64::from((rng.uniform(-1.0, 1.0) * scale) as f32);
    DVec3::new(c(), c(), c())
}

/// Random f32 impulses for `n` contacts, contact i's force rows within
/// ±`scale(i)` and torque rows within ±`scale(i)`/100: as the CPU takes
/// them (f64, exactly the f32 values) and as the device holds them (two
/// `[f32; 4]` per contact).
pub(super) fn random_impulses(
    rng: &mut Rng,
    n: usize,
    scale: impl Fn(usize) -> f64,
) -> (Vec<[f64; 6]>, Vec<[f32; 4]>) {
    let gamma: Vec<[f64; 6]> = (0..n)
        .map(|i| {
            let f = f32_vec(rng, scale(i));
            let t = f32_vec(rng, scale(i) * 0.01);
            [f.x, f.y, f.z, t.x, t.y, t.z]
        })
        .collect();
    let rows = gamma
        .iter()
        .map(|g| g.map(|x| x as f32))
        .flat_map(|g| [[g[0], g[1], g[2], g[3]], [g[4], g[5], 0.0, 0.0]])
        .collect();
    (gamma, rows)
}
