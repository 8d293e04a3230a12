//! Builders shared by the integration tests (each test crate that says
//! `mod common;` gets its own copy, so not every item is used by every crate).
#![allow(dead_code)]

use glam::{DVec2, DVec3};
use repose::bodies::{Bodies, SphereInit};
use repose::boundary::{Boundary, Shape};
use repose::material::Material;
use repose::problem::ContactProblem;
use repose::step::Stepper;
use repose::world::World;

/// A jittered lattice of `n` spheres (radius 1 cm, 2500 kg/m³, slightly
/// overlapping, random velocities and spins) in an open-top box, with
/// sliding friction 0.5, rolling friction `rho` and spinning friction `sigma`.
/// Deterministic: the same `n` always gives the same world. The overlaps
/// (up to 0.21 r) make a stiff problem: overlapping pairs are pushed apart
/// at the recovery speed, through long chains of contacts. The box walls are
/// 0.15 r or more from every sphere, outside the contact envelope.
pub fn pile_world(n: usize, rho: f64, sigma: f64) -> World {
    let r = 0.01;
    let (inits, side) = lattice(n, 0.995, 0.2);
    let half = side as f64 * r + 0.5 * r;
    pile_in_box(&inits, -0.25 * r, half, rho, sigma)
}

/// A loose random pile: the lattice of [`pile_world`] with centres
/// 2 r·1.002 apart and jitter ±0.001 r, so no two spheres overlap, every
/// neighbour is within 4·10⁻⁵ m (a contact), and so are the box's floor and
/// side walls for the outer spheres. The random velocities make about a
/// third of the contacts collide. Far better conditioned than
/// [`pile_world`] (no recovery chains): projected Jacobi converges to 10⁻¹⁰
/// in a few thousand iterations.
pub fn loose_pile_world(n: usize, rho: f64, sigma: f64) -> World {
    let r = 0.01;
    let spacing = 1.002;
    let (inits, side) = lattice(n, spacing, 0.002);
    let gap = 2.0 * r * (spacing - 1.0);
    let half = 0.5 * (2.0 * r + (side - 1) as f64 * 2.0 * r * spacing) + gap;
    pile_in_box(&inits, -gap, half, rho, sigma)
}

/// `n` spheres on a `side³` lattice (returned with `side`) of spacing
/// 2 r·`spacing` from (r, r, r), jittered in x and y by ±`jitter`·r/2, with
/// random velocities (±0.05 m/s) and spins (±0.5 rad/s).
fn lattice(n: usize, spacing: f64, jitter: f64) -> (Vec<SphereInit>, usize) {
    let r = 0.01;
    let side = (n as f64).cbrt().ceil() as usize;
    let mut s = 99u64;
    let mut rnd = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut inits = Vec::new();
    for k in 0..n {
        let (i, j, l) = (k % side, (k / side) % side, k / (side * side));
        let p = DVec3::new(i as f64, j as f64, l as f64) * 2.0 * r * spacing
            + DVec3::new(rnd(), rnd(), 0.0) * jitter * r
            + DVec3::new(r, r, r);
        let mass = SphereInit::solid_mass(r, 2500.0);
        inits.push(SphereInit {
            pos: p,
            radius: r,
            mass,
            inertia: SphereInit::solid_inertia(mass, r),
            vel: DVec3::new(rnd(), rnd(), rnd()) * 0.1,
            omega: DVec3::new(rnd(), rnd(), rnd()),
            material: 0,
        });
    }
    (inits, side)
}

/// The spheres in an open-top cubic box whose inside starts at `lo` on every
/// axis and has half extent `half`; one material (μ = 0.5, `rho`, `sigma`).
fn pile_in_box(inits: &[SphereInit], lo: f64, half: f64, rho: f64, sigma: f64) -> World {
    World::new(
        Bodies::from_inits(inits),
        vec![Boundary {
            name: "box".into(),
            shape: Shape::BoxContainer {
                half_extents: DVec3::splat(half),
                open_top: true,
            },
            origin: DVec3::splat(half) + DVec3::splat(lo),
            velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
            start_time: 0.0,
            material: 0,
        }],
        vec![Material {
            name: "m".into(),
            friction: 0.5,
            rolling: rho,
            spinning: sigma,
            density: 2500.0,
            ..Default::default()
        }],
    )
}

/// The contact problem of the first step of `world` (stepped once with one
/// f64 iteration, so the problem is a real one: collision, frames, CSR).
pub fn first_problem(mut world: World) -> ContactProblem {
    world.model.solver.max_iterations = 1;
    let mut st = Stepper::new();
    st.step(&mut world).unwrap();
    st.last_problem().clone()
}

/// The contact problem of the first step of [`pile_world`]`(n, rho, sigma)`.
pub fn pile_problem(n: usize, rho: f64, sigma: f64) -> ContactProblem {
    let p = first_problem(pile_world(n, rho, sigma));
    assert!(
        p.n_contacts() > n,
        "pile too sparse: {} contacts",
        p.n_contacts()
    );
    p
}

/// Radius of the spheres of the synthetic heaps ([`fcc`], [`cone`]).
pub const R: f64 = 0.01;

/// Centres of a face-centred cubic (ABC-stacked hexagonal close) packing of
/// spheres of radius `R` on the floor z = 0, horizontally within `half` of
/// `origin` on both axes, up to height `top`; `shift` moves the lattice
/// horizontally relative to `origin` (so that the apex need not sit on a
/// lattice site).
pub fn fcc(origin: DVec2, half: f64, top: f64, shift: DVec2) -> Vec<DVec3> {
    let a = 2.0 * R;
    let dz = a * (2.0f64 / 3.0).sqrt();
    let row = a * 3f64.sqrt() / 2.0;
    let n = (half / row).ceil() as i64 + 2;
    let mut out = Vec::new();
    let mut layer = 0;
    loop {
        let z = R + layer as f64 * dz;
        if z + R > top {
            break;
        }
        // ABC stacking: each layer moves by a third of the unit cell.
        let off = DVec2::new(a / 2.0, row / 3.0) * (layer % 3) as f64;
        for j in -n..=n {
            for i in -n..=n {
                let p = DVec2::new(
                    i as f64 * a + if j % 2 == 0 { 0.0 } else { a / 2.0 },
                    j as f64 * row,
                ) + off
                    + shift;
                if (p.x).abs() <= half && (p.y).abs() <= half {
                    out.push((origin + p).extend(z));
                }
            }
        }
        layer += 1;
    }
    out
}

/// A conical heap of angle `deg` and apex (highest possible sphere top)
/// `height` above the floor z = 0 at (0, 0): the spheres of an fcc packing
/// whose top lies under the cone, z + r ≤ height − tan θ · ρ. Returns the
/// centres and the construction base radius: where the cone of tops meets
/// the top of the floor layer (z = 2r), plus the radius of the sphere there.
pub fn cone(deg: f64, height: f64, shift: DVec2) -> (Vec<DVec3>, f64) {
    let t = deg.to_radians().tan();
    let base = (height - 2.0 * R) / t + R;
    let all = fcc(DVec2::ZERO, base + 2.0 * R, height, shift);
    let kept = all
        .into_iter()
        .filter(|p| p.z + R <= height - t * p.truncate().length())
        .collect();
    (kept, base)
}
