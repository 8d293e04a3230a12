//! Property 16: a world stepped on the device (`repose::gpu::resident`)
//! obeys statics: stacked spheres resting on a plane under gravity stay
//! where they are, at rest, step after step, with only the list's length,
//! the solver's control records and a status word crossing the host.

use repose::boundary::Shape;
use repose::gpu::resident::ResidentWorld;
use repose::material::{FrictionLaw, Material};

use super::contacts::{bodies_f32, random_packing};
use super::*;

#[test]
fn spheres_stacked_on_a_plane_stay_at_rest_when_stepped_on_the_device() {
    let Some(ctx) =
        context_for_tests("spheres_stacked_on_a_plane_stay_at_rest_when_stepped_on_the_device")
    else {
        return;
    };
    // 16 columns of two touching spheres on the plane z = 0, columns 3 r
    // apart (not touching each other).
    let r = 0.01f64;
    let mut spheres = Vec::new();
    for c in 0..16 {
        let (x, y) = ((c % 4) as f64 * 3.0 * r, (c / 4) as f64 * 3.0 * r);
        spheres.push((DVec3::new(x, y, r), r));
        spheres.push((DVec3::new(x, y, 3.0 * r), r));
    }
    // And one sphere in free fall far above them.
    spheres.push((DVec3::new(0.0, 0.0, 0.5), r));
    let bodies = bodies_f32(&spheres);
    let free = bodies.len() - 1;
    let plane = repose::boundary::Boundary::fixed(
        "floor",
        Shape::Plane { normal: DVec3::Z },
        DVec3::ZERO,
        0,
    );
    let (h, steps) = (1e-4, 100);
    let mut world = ResidentWorld::new(
        &ctx,
        &bodies,
        &[plane],
        &[Material::default()],
        FrictionLaw::Associated,
        h,
        0.5,
        DVec3::new(0.0, 0.0, -9.81),
        0.1 * r,
        1.0,
    )
    .expect("a resident world");
    let settings = SolverSettings {
        method: SolverMethod::Apgd,
        tolerance: 1e-4,
        max_iterations: 500,
        ..Default::default()
    };
    let mut converged = 0;
    for k in 0..steps {
        let s = world.step(&ctx, &settings).expect("a resident step");
        assert_eq!(s.contacts, 32, "step {k}: 16 floor and 16 stack contacts");
        converged += usize::from(s.stats.converged);
    }
    assert_eq!(converged, steps, "steps meeting the tolerance");
    // Each gap is computed from centres rounded to f32 (an ulp of 0.03 m
    // is 1.9e-9 m) and the stabilisation closes it at Φ/h a step, so a
    // centre stays within a few such ulps of its place (the top sphere
    // over two gaps), and a speed within (gap error)/h.
    let (dz_bound, v_bound) = (2e-8, 2e-8 / h);
    let state = world.state(&ctx).expect("the state");
    // Semi-implicit Euler: after N steps the free sphere has fallen
    // g h² N(N + 1)/2; its f32 velocity gains g h each step with a
    // rounding of 2⁻²⁴ relative each, so the drop is within N 2⁻²⁴ of it.
    let n = steps as f64;
    let drop_want = 9.81 * h * h * n * (n + 1.0) / 2.0;
    let drop = bodies.pos[free].z - state[free].pos().z;
    let rel = (drop - drop_want).abs() / drop_want;
    let rel_bound = n * f64::from(f32::EPSILON);
    assert!(
        rel <= rel_bound,
        "free sphere fell {drop:.6e} m in {steps} steps, semi-implicit Euler gives {drop_want:.6e} m (relative {rel:.1e}, bound {rel_bound:.1e})"
    );
    for (k, b) in state.iter().enumerate().take(free) {
        let want = bodies.pos[k];
        let dz = (b.pos() - want).length();
        let v = DVec3::new(f64::from(b.v[0]), f64::from(b.v[1]), f64::from(b.v[2])).length();
        assert!(
            dz <= dz_bound && v <= v_bound,
            "sphere {k} after {steps} steps: moved {dz:.3e} m (bound {dz_bound:.1e}), speed {v:.3e} m/s (bound {v_bound:.1e})"
        );
    }
    let c = world.counters();
    eprintln!(
        "OBSERVED resident world: {} spheres at rest and one falling as Euler says over {steps} steps ({converged} converged), {:.1} round trips, {:.0} B up, {:.0} B down a step",
        bodies.len() - 1,
        c.round_trips as f64 / steps as f64,
        c.upload_bytes as f64 / steps as f64,
        c.readback_bytes as f64 / steps as f64
    );
}

#[test]
fn a_resident_world_whose_contacts_outgrow_its_first_buffers_steps_to_the_same_bits() {
    let Some(ctx) = context_for_tests(
        "a_resident_world_whose_contacts_outgrow_its_first_buffers_steps_to_the_same_bits",
    ) else {
        return;
    };
    let s = random_packing(2000, 3);
    let settings = SolverSettings {
        method: SolverMethod::Apgd,
        tolerance: 1e-4,
        max_iterations: 300,
        ..Default::default()
    };
    let world = || {
        ResidentWorld::new(
            &ctx,
            &s.bodies,
            &s.boundaries,
            &[Material::default()],
            FrictionLaw::Associated,
            1e-4,
            0.5,
            DVec3::new(0.0, 0.0, -9.81),
            s.envelope,
            1.0,
        )
        .expect("a resident world")
    };
    let steps = 10;
    let run = |mut w: ResidentWorld| {
        let mut rewrites = 0;
        let mut contacts = Vec::new();
        for _ in 0..steps {
            let st = w.step(&ctx, &settings).expect("a resident step");
            rewrites += st.rewrites;
            contacts.push(st.contacts);
        }
        (w.state(&ctx).expect("the state"), contacts, rewrites)
    };
    // Room for one contact a sphere first: the list and the warm records
    // outgrow it on the first step; 8 a sphere holds every step's.
    let (small, c_small, rewrites) = run(world().with_first_capacity(&ctx, 1));
    let (large, c_large, none) = run(world());
    let (again, _, _) = run(world());
    assert!(
        rewrites >= 1 && none == 0,
        "rewrites: {rewrites} from one contact a sphere (at least one), {none} from eight (none)"
    );
    assert!(
        c_small[0] > s.bodies.len(),
        "more contacts ({}) than the first buffer's {}",
        c_small[0],
        s.bodies.len()
    );
    assert_eq!(
        c_small, c_large,
        "contacts a step, small vs large first buffers"
    );
    if let Some(k) = (0..large.len()).find(|&k| small[k] != large[k]) {
        panic!(
            "body {k} after {steps} steps: {:?} from small first buffers vs {:?} from large",
            small[k], large[k]
        );
    }
    if let Some(k) = (0..large.len()).find(|&k| again[k] != large[k]) {
        panic!(
            "body {k} after {steps} steps: two runs differ: {:?} vs {:?}",
            again[k], large[k]
        );
    }
    eprintln!(
        "OBSERVED resident world of {} spheres, {steps} steps, {} to {} contacts: the same bits from buffers that grew {rewrites} times, and on a second run",
        s.bodies.len(),
        c_large.iter().min().unwrap_or(&0),
        c_large.iter().max().unwrap_or(&0)
    );
}
