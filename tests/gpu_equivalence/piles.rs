//! Random piles. (see the crate docs in `main.rs`).

use super::*;

pub(crate) fn stiff_pile(n: usize) -> &'static ContactProblem {
    static P1: OnceLock<ContactProblem> = OnceLock::new();
    static P2: OnceLock<ContactProblem> = OnceLock::new();
    let cell = match n {
        1000 => &P1,
        20_000 => &P2,
        _ => unreachable!(),
    };
    cell.get_or_init(|| common::pile_problem(n, 0.001, 0.001))
}

fn assert_pile_matches_mirror(n: usize, mut solver: Solver32) {
    let p = stiff_pile(n);
    eprintln!("pile of {n}: {} contacts", p.n_contacts());
    assert_matches_mirror(&format!("pile of {n}"), &mut solver, p, 100);
}

/// The stiff 1,000-sphere pile posed with De Saxcé's law (the solvers add
/// g(y) to the normal row of the twist before the step and the residual).
fn assert_de_saxce_pile_matches_mirror(mut solver: Solver32) {
    let mut p = stiff_pile(1000).clone();
    p.law = repose::material::FrictionLaw::DeSaxce;
    assert_matches_mirror("De Saxcé pile of 1000", &mut solver, &p, 100);
}

/// APGD (the GPU's: fixed step, restart at checks) on the stiff pile under
/// either law, against the mirror.
fn assert_apgd_pile_matches_mirror(law: repose::material::FrictionLaw, mut solver: Solver32) {
    let mut p = stiff_pile(1000).clone();
    p.law = law;
    let what = format!("APGD, {law:?} pile of 1000");
    assert_method_matches_mirror(SolverMethod::Apgd, &what, &mut solver, &p, 100);
}

for_each_f32_solver! {
    /// Property 2a for APGD: the stiff 1,000-sphere pile, associated law.
    pile_1000_apgd_matches_mirror =>
        |s| assert_apgd_pile_matches_mirror(repose::material::FrictionLaw::Associated, s);
    /// Property 2a for APGD under the De Saxcé law.
    pile_1000_de_saxce_apgd_matches_mirror =>
        |s| assert_apgd_pile_matches_mirror(repose::material::FrictionLaw::DeSaxce, s);
    /// Property 2a: the stiff 1,000-sphere pile, after 1 and 100 iterations.
    pile_1000_matches_mirror => |s| assert_pile_matches_mirror(1000, s);
    /// Property 2a under the De Saxcé law.
    pile_1000_de_saxce_matches_mirror => assert_de_saxce_pile_matches_mirror;
    /// Property 2a: the stiff 20,000-sphere pile, after 1 and 100 iterations.
    pile_20000_matches_mirror => |s| assert_pile_matches_mirror(20_000, s);
}

/// A pile of bodies of other shapes (boxes, ellipsoids and spheres, turned
/// at random on a lattice, then pushed together to 70 % of its spacing, so
/// many pairs overlap) on a floor, with random velocities: the first step's
/// problem, whose bodies carry world inverse inertia tensors.
pub(crate) fn shapes_problem() -> &'static ContactProblem {
    static P: OnceLock<ContactProblem> = OnceLock::new();
    P.get_or_init(|| {
        let text = "Scene(version: 1, time_step: 1e-3, duration: 1.0,
            materials: [(name: \"m\", friction: 0.5, rolling: 0.001, spinning: 0.001, density: 2500.0)],
            spheres: [
                Lattice(origin: (0, 0, 0.0075), count: (6, 6, 2), spacing: 0.0145,
                        shape: Box(half_extents: (0.005, 0.004, 0.003)),
                        random_orientation: true, seed: 1),
                Lattice(origin: (0, 0, 0.0365), count: (6, 6, 2), spacing: 0.0145,
                        shape: Ellipsoid(radii: (0.006, 0.004, 0.003)),
                        random_orientation: true, seed: 2),
                Lattice(origin: (0, 0, 0.0655), count: (6, 6, 2), spacing: 0.0145,
                        radius: 0.0052),
            ],
            boundaries: [Plane(point: (0, 0, 0), normal: (0, 0, 1))])";
        let scene = repose::scene::Scene::from_str(text, "shapes pile", &[]).expect("scene");
        let mut world = scene.build().expect("build");
        let b = &mut world.state.bodies;
        let mut rng = repose::scene::rng::Rng::new(7);
        for k in 0..b.len() {
            let p = b.pos[k];
            b.pos[k] = DVec3::new(0.7 * p.x, 0.7 * p.y, 0.0035 + 0.7 * (p.z - 0.0075));
            b.vel[k] = DVec3::new(rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05));
            b.omega[k] = DVec3::new(rng.uniform(-5.0, 5.0), rng.uniform(-5.0, 5.0), rng.uniform(-5.0, 5.0));
        }
        let p = common::first_problem(world);
        assert!(p.has_tensors(), "the shapes pile has no inertia tensors");
        assert!(
            p.n_contacts() > 150,
            "shapes pile too sparse: {} contacts",
            p.n_contacts()
        );
        p
    })
}

/// Property 2a for bodies of other shapes: the body pass applies each
/// body's world inverse inertia tensor (the packed records carry 1 for
/// 1/I and a tensor per body), Jacobi and APGD, against the mirror.
fn assert_shapes_match_mirror(mut solver: Solver32) {
    let p = shapes_problem();
    let packed = pack(p, &vec![[0.0; 6]; p.n_contacts()]);
    assert_eq!(packed.inertia.len(), p.n_bodies(), "one tensor per body");
    eprintln!(
        "shapes pile: {} bodies, {} contacts",
        p.n_bodies(),
        p.n_contacts()
    );
    for method in [SolverMethod::Jacobi, SolverMethod::Apgd] {
        let what = format!("{method} shapes pile");
        assert_method_matches_mirror(method, &what, &mut solver, p, 100);
    }
}

for_each_f32_solver! {
    /// Property 2a with inertia tensors: a pile of boxes, ellipsoids and spheres.
    shapes_pile_matches_mirror => assert_shapes_match_mirror;
}
