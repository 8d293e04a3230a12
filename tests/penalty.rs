//! The penalty formulation tested as physics (Fang & Negrut 2020 and Hertz's
//! theory): each law measured against its closed form, both numbers and the
//! tolerance in the message. The laws are the cases of
//! [`repose::validate::penalty`] (what `repose validate` prints); each test
//! here runs one and asserts on its checks. Scenes in the scene syntax
//! users write (`formulation: Penalty(…)`).

use repose::scene::Scene;
use repose::step::Stepper;
use repose::world::World;

fn world(text: &str) -> World {
    Scene::from_str(text, "test scene", &[])
        .and_then(|s| s.build())
        .unwrap_or_else(|e| panic!("scene: {e:#}"))
}

fn assert_close(what: &str, measured: f64, expected: f64, tol: f64) {
    assert!(
        (measured - expected).abs() <= tol,
        "{what}: measured {measured:.9e}, expected {expected:.9e} (tolerance {tol:e}, off by {:.3e})",
        (measured - expected).abs()
    );
}

/// Runs the validation case `name` and asserts that each of its checks
/// holds (each printed, measured against expected).
fn case_holds(name: &str) {
    let (_, case) = repose::validate::penalty::cases()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no penalty case {name}"));
    let checks = case();
    assert!(!checks.is_empty(), "{name} measured nothing");
    for c in &checks {
        eprintln!("OBSERVED {c}");
    }
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| !c.passed())
        .map(|c| c.to_string())
        .collect();
    assert!(failed.is_empty(), "{name}: {failed:#?}");
}

/// A sphere dropped on a plane of the same material and two equal spheres
/// meeting head-on, without damping (e = 1): contact duration and peak
/// force within 2 % of Hertz's theory, and they part at the speed they met.
#[test]
fn hertz_impacts_last_and_peak_as_hertz_theory_says() {
    case_holds("hertz_impact");
}

/// Damped to a coefficient of restitution, an impact rebounds at e times
/// the speed it came in at, within 2 %, whatever the speed (Hertz and
/// Hooke), for e = 0.5 and 0.9.
#[test]
fn impacts_rebound_at_the_set_restitution() {
    case_holds("restitution");
}

/// Fang & Negrut 2020 §4.1's brick: sticks below atan μ_s (creeping
/// micrometres), slides at g (sin α − μ_k cos α) above it, within 1 %.
#[test]
fn brick_on_an_incline_sticks_below_atan_mu_s_and_slides_at_g_sin_minus_mu_k_cos_above() {
    case_holds("brick_on_incline");
}

/// Fang & Negrut 2020 §4.4: the spinning sphere slows under μ_k N η_ψ R and
/// stops.
#[test]
fn spinning_sphere_slows_under_the_kinetic_spin_torque_and_stops() {
    case_holds("spinning_sphere");
}

/// Fang & Negrut 2020 §4.3 on the level: rolls without slip, slowing at
/// 2 η_r μ_k g / 1.4.
#[test]
fn rolling_sphere_slows_under_the_kinetic_roll_torque_without_slipping() {
    case_holds("rolling_sphere");
}

/// Fang & Negrut 2020 App. C / Table 5: the Hertzian spin torque slides at
/// a μ_k N/2.
#[test]
fn hertzian_spin_torque_is_half_a_mu_n() {
    case_holds("hertzian_spin");
}

/// Fang & Negrut 2020 §4.3 / App. D: ≥ 95 % of the grid's cases off the
/// borders move as the analytic borders say.
#[test]
fn sphere_on_an_incline_moves_as_appendix_d_borders_say() {
    case_holds("incline_phases");
}

/// Fang & Negrut 2020 §4.2 / Fig. 10: at rest the tracked model's disk stays
/// still, the legacy constant torque chatters.
#[test]
fn disk_at_rest_stays_still_under_the_tracked_model_and_chatters_under_the_legacy_one() {
    case_holds("disk_at_rest");
}

/// Runs `text` (a scene with the line `    formulation: Penalty(…),`) for
/// `steps` steps with the neighbour list (the adapted skin) and with a full
/// detection every sub-step (`skin: 0`), and asserts that the two give the
/// same bits: positions, velocities, spins and contact histories. Returns
/// the bodies, the contacts held at the end and the list's rebuilds.
fn list_gives_a_full_detections_bits(what: &str, text: &str, steps: usize) -> (usize, usize, u64) {
    let marker = "    formulation: Penalty(";
    assert!(text.contains(marker), "{what}: no penalty formulation line");
    let run = |skin: &str| {
        let t = text.replace(marker, &format!("{marker}{skin}"));
        let mut w = world(&t);
        let mut st = Stepper::new();
        for k in 0..steps {
            st.step(&mut w)
                .unwrap_or_else(|e| panic!("{what}: step {k}: {e:#}"));
        }
        (w, st)
    };
    let (listed, st) = run("");
    let (full, _) = run("skin: 0.0, ");
    assert_eq!(
        listed.state.bodies.pos, full.state.bodies.pos,
        "{what}: positions differ"
    );
    assert_eq!(
        listed.state.bodies.vel, full.state.bodies.vel,
        "{what}: velocities differ"
    );
    assert_eq!(
        listed.state.bodies.omega, full.state.bodies.omega,
        "{what}: spins differ"
    );
    // Compared as printed (shortest round-trip): −0 and +0 differ.
    assert!(
        format!("{:?}", listed.state.contact_history)
            == format!("{:?}", full.state.contact_history),
        "{what}: the contact histories differ ({} vs {} contacts)",
        listed.state.contact_history.len(),
        full.state.contact_history.len()
    );
    let held = listed.state.contact_history.len();
    eprintln!(
        "OBSERVED {what}: {} bodies, {held} contacts in history, identical; the list was rebuilt {} times",
        listed.state.bodies.len(),
        st.penalty_rebuilds()
    );
    (listed.state.bodies.len(), held, st.penalty_rebuilds())
}

/// The Verlet neighbour list changes nothing but the speed: `repose_small`'s
/// pour under the penalty formulation gives the same bits with the list
/// (the adapted skin, its pair constants made once per listed pair, the
/// box's faces listed with the pairs) as with a full detection every
/// sub-step (`skin: 0`, constants per contact), over 150 steps of the inlet
/// pouring; under Hertz with the beads' default (no rolling or spinning
/// resistance), under Hertz with Fang & Negrut 2020's rolling and spinning
/// springs and the Hertzian spin model, and under Hooke with a set slide
/// stiffness and a second bead material poured beside the first.
#[test]
fn neighbour_list_gives_the_bits_of_a_full_detection_every_sub_step() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/repose_small.ron");
    let text = std::fs::read_to_string(&path).expect("scenes/repose_small.ron");
    let bead = r#"(name: "bead", friction: 0.6, rolling: 0.0, spinning: 0.0, density: 2500.0),"#;
    assert!(text.contains(bead), "repose_small's bead material changed");
    let resisting = r#"(name: "bead", friction: 0.6, rolling: 0.0, spinning: 0.0, density: 2500.0,
         static_friction: 0.6, kinetic_friction: 0.5, roll_eta: 0.1, spin_eta: 0.05),"#;
    let two_beads = r#"(name: "bead", friction: 0.6, rolling: 0.0, spinning: 0.0, density: 2500.0,
         slide_stiffness: 3e3, roll_eta: 0.1, spin_eta: 0.05),
        (name: "bead2", friction: 0.4, rolling: 0.0, spinning: 0.0, density: 1500.0,
         young_modulus: 5e7, restitution: 0.3, roll_eta: 0.3, spin_eta: 0.02),"#;
    let inlet = "seed: 1),";
    assert!(text.contains(inlet), "repose_small's inlet changed");
    let second_inlet = "seed: 1),
        Inlet(region: Disk(center: (0.03, 0.0, 0.15), normal: (0.0, 0.0, 1.0), radius: 0.02),
              rate: 500, count: 500, radius: 0.004, material: 2,
              velocity: (0.0, 0.0, -0.5), velocity_jitter: 0.02, seed: 2),";
    let variants = [
        (
            "Hertz, beads without resistance",
            "normal: Hertz",
            bead,
            inlet,
        ),
        (
            "Hertz, rolling and Hertzian spin springs",
            "normal: Hertz, spinning: Hertz",
            resisting,
            inlet,
        ),
        (
            "Hooke, set slide stiffness, two bead materials",
            "normal: Hooke(stiffness: 2e4)",
            two_beads,
            second_inlet,
        ),
    ];
    for (what, settings, materials, inlets) in variants {
        let t = text
            .replace(
                "    time_step: 2e-3,",
                &format!("    time_step: 2e-3,\n    formulation: Penalty({settings}),"),
            )
            .replace(bead, materials)
            .replace(inlet, inlets);
        let (bodies, held, _) = list_gives_a_full_detections_bits(what, &t, 150);
        assert!(bodies > 100, "{what}: only {bodies} bodies poured");
        assert!(held > 10, "{what}: only {held} contacts");
    }
}

/// The same against boundaries the listed faces do not serve: the rotating
/// drum (a cylinder turning about its axis: still geometry, so the list
/// keeps the spheres near it) with its beads falling onto the wall, and
/// beads on a floor that rises (a moving boundary: every sphere searched
/// every sub-step). Both have boundary contacts (the floor's beads rest on
/// it; the drum's lowest beads land on its wall within the run).
#[test]
fn neighbour_list_gives_the_bits_of_a_full_detection_against_curved_and_moving_boundaries() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/drum.ron");
    let drum = std::fs::read_to_string(&path).expect("scenes/drum.ron");
    let step = "    time_step: 1e-3,";
    assert!(drum.contains(step), "drum.ron's time step changed");
    let drum = drum.replace(
        step,
        &format!("{step}\n    formulation: Penalty(normal: Hertz),"),
    );
    let floor = r#"Scene(
    version: 1,
    name: "rising_floor",
    time_step: 1e-3,
    duration: 0.04,
    formulation: Penalty(normal: Hertz),
    materials: [
        (name: "glass", friction: 0.5, rolling: 0.0, spinning: 0.0, density: 2500.0,
         roll_eta: 0.1, spin_eta: 0.05),
    ],
    spheres: [
        Lattice(origin: (-0.02, -0.02, 0.0045), count: (6, 6, 2), spacing: 0.0085,
                radius: 0.004, jitter: 0.02, seed: 3),
    ],
    boundaries: [
        Plane(name: "floor", point: (0.0, 0.0, 0.0), normal: (0.0, 0.0, 1.0),
              velocity: (0.0, 0.0, 0.05)),
    ],
)"#;
    for (what, text, steps) in [("drum", drum.as_str(), 40), ("rising floor", floor, 40)] {
        let (_, held, _) = list_gives_a_full_detections_bits(what, text, steps);
        assert!(held > 10, "{what}: only {held} contacts");
    }
}

/// `repose bench --formulation penalty`'s measurement: particle-steps per
/// second are bodies × sub-steps ÷ the timed steps' wall time, the warm-up
/// excluded; a scene under the complementarity formulation is refused.
#[test]
fn penalty_benchmark_counts_bodies_times_sub_steps() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes");
    let mut w = repose::bench::penalty::warm_world(&root.join("penalty_column.ron"), 2)
        .expect("penalty_column warms up");
    let repose::formulation::Formulation::Penalty(settings) = w.world.model.formulation.clone()
    else {
        panic!("penalty_column is a penalty scene");
    };
    let (stable, _) = repose::formulation::penalty::stable_time_step(
        &w.world.model,
        &w.world.state.bodies,
        &settings,
    );
    let per_step = (w.world.model.time_step / stable).ceil() as u64;
    let r = repose::bench::penalty::time_steps(&mut w, 3).expect("timed steps");
    assert_eq!(r.particles, 10);
    assert_eq!((r.warm_steps, r.timed_steps), (2, 3));
    assert_eq!(r.substeps, 3 * per_step, "{r}");
    let expected = (10 * r.substeps) as f64 / r.seconds;
    assert_close(
        "particle-steps/s",
        r.particle_steps_per_second,
        expected,
        1e-9 * expected,
    );
    let refused = repose::bench::penalty::warm_world(&root.join("column.ron"), 1)
        .err()
        .map(|e| format!("{e:#}"));
    assert!(
        refused
            .as_deref()
            .is_some_and(|m| m.contains("formulation: Penalty")),
        "{refused:?}"
    );
    eprintln!("OBSERVED {r}");
}

/// Fang & Negrut 2020 §4.6 (Fig. 15), `scenes/penalty_stack.ron`: under the
/// penalty formulation the smallest top mass that collapses the three-sphere
/// stack rises with the rolling resistance η_r while the bottom spheres roll
/// out, then levels off once sliding at the floor, not rolling, gives way
/// (the plateau the paper explains by μ_s). Without rolling resistance
/// (μ_s = 0.3 < tan(θ/2) = 0.316) no top mass stands.
#[test]
fn three_sphere_stack_holds_more_with_rolling_resistance_up_to_a_plateau() {
    use repose::validate::penalty::{stack_collapses, stack_critical_mass};
    assert!(
        stack_collapses(true, 0.0, 0.01),
        "without rolling resistance even 10 g on top should collapse the stack"
    );
    let m = |eta: f64| {
        stack_critical_mass(true, eta, 0.01, 100.0, 0.01)
            .unwrap_or_else(|| panic!("η_r = {eta}: no critical mass in 0.01–100 kg"))
    };
    let (low, mid, plateau, far) = (m(0.04), m(0.16), m(0.3), m(0.5));
    eprintln!(
        "OBSERVED critical top mass: η_r = 0.04: {low:.3} kg, 0.16: {mid:.3} kg, 0.3: {plateau:.3} kg, 0.5: {far:.3} kg"
    );
    assert!(
        mid > 3.0 * low,
        "rolling resistance should hold more: {low} kg at η_r = 0.04, {mid} kg at 0.16"
    );
    assert_close(
        "critical top mass at η_r = 0.5 against 0.3 (kg)",
        far,
        plateau,
        0.05 * plateau,
    );
}

/// The same stack under the complementarity formulation: rigid spheres
/// stand as long as *some* static distribution of contact forces exists,
/// so at large ρ (rolling held) the critical top mass is the rigid statics'
/// sliding bound (18.37 kg for μ = 0.3, `stack_sliding_bound`), within the
/// bisection's 1 %; the penalty formulation's springs settle into a
/// distribution that gives way well below it.
#[test]
fn complementarity_stack_stands_up_to_the_rigid_sliding_bound() {
    use repose::validate::penalty::{stack_critical_mass, stack_sliding_bound};
    let bound = stack_sliding_bound();
    let rigid = stack_critical_mass(false, 0.3, 0.01, 100.0, 0.005)
        .expect("a critical mass in 0.01–100 kg");
    let penalty =
        stack_critical_mass(true, 0.3, 0.01, 100.0, 0.01).expect("a critical mass in 0.01–100 kg");
    eprintln!(
        "OBSERVED critical top mass at η_r = 0.3: complementarity {rigid:.3} kg, penalty {penalty:.3} kg, rigid sliding bound {bound:.3} kg"
    );
    assert_close(
        "complementarity critical top mass (kg)",
        rigid,
        bound,
        0.01 * bound,
    );
    assert!(
        penalty < bound,
        "penalty critical mass {penalty} kg above the rigid bound {bound} kg"
    );
}

/// Fang & Negrut 2020 §4.5.2 / Table 5: the ellipsoid's spin torque follows
/// the curvature at its contact (upright 125 /m, flat 29 /m).
#[test]
fn ellipsoid_spin_torque_follows_the_curvature_at_its_contact() {
    case_holds("ellipsoid_spin");
}

/// Fang & Negrut 2020 §4.5.1 / Table 4: the upright ellipsoid pushed at
/// 0.3 m/s falls over and comes to rest lying flat.
#[test]
fn pushed_upright_ellipsoid_comes_to_rest_lying_flat() {
    case_holds("ellipsoid_falls_flat");
}
