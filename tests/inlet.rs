//! Particle inlets: the emitted count follows ⌊rate · t⌋ exactly, no emitted
//! sphere overlaps another, the same seed gives the same spheres, and bad
//! inlets are named errors. (`repose run` with an inlet: tests/cli.rs.)

use repose::inlet::emit_all;
use repose::scene::Scene;
use repose::step::Stepper;

/// An open box 0.4 m wide and a fast inlet high above its floor.
fn scene(rate: f64, count: usize, region: &str, extra: &str) -> Scene {
    let text = format!(
        r#"Scene(
    version: 1,
    name: "inlet",
    time_step: 1e-3,
    duration: 1.0,
    materials: [(friction: 0.5)],
    spheres: [
        Inlet(region: {region}, rate: {rate}, count: {count}, radius: 0.004, radius_max: 0.006,
              material: 0, velocity: (0.0, 0.0, -1.0), velocity_jitter: 0.1 {extra}),
    ],
    boundaries: [
        Box(name: "bin", center: (0.0, 0.0, 0.2), half_extents: (0.2, 0.2, 0.2), open_top: true),
    ],
)"#
    );
    Scene::from_str(&text, "inlet.ron", &[]).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

const WIDE: &str = "Box(min: (-0.15, -0.15, 0.3), max: (0.15, 0.15, 0.35))";

/// rate 1000/s, h = 1 ms, start 0.05 s: after step k (t = k h) the world
/// holds min(300, ⌊1000 (t − 0.05)⌋) = min(300, max(0, k − 50)) spheres,
/// exactly, every step.
#[test]
fn emitted_count_is_floor_of_rate_times_time_until_count() {
    let s = scene(1000.0, 300, WIDE, ", start_time: 0.05");
    let mut w = s.build().unwrap();
    assert_eq!(w.state.bodies.len(), 0, "an inlet emits nothing at build");
    let mut st = Stepper::new();
    for k in 1..=400u32 {
        st.step(&mut w).unwrap();
        let t = k as f64 * 1e-3;
        let want = (k.saturating_sub(50) as usize).min(300);
        assert_eq!(
            w.state.bodies.len(),
            want,
            "after step {k} (t = {t} s): {} spheres, expected min(300, ⌊1000 (t − 0.05)⌋) = {want}",
            w.state.bodies.len()
        );
    }
    assert!(
        st.timers.get(repose::step::Stage::Emit).is_some(),
        "the emit stage is timed"
    );
}

/// 400 spheres at 8 per step into a 6 × 6 × 2 cm region: at every emission
/// every new sphere is clear of every other sphere (gap ≥ 0, so never deeper
/// than the envelope) and of the box walls; crowding defers spheres but they
/// are all emitted in the end.
#[test]
fn no_emitted_sphere_overlaps_another() {
    let region = "Box(min: (-0.03, -0.03, 0.3), max: (0.03, 0.03, 0.32))";
    let s = scene(8000.0, 400, region, "");
    let mut w = s.build().unwrap();
    let env = w.envelope();
    let h = w.model.time_step;
    let mut st = Stepper::new();
    let mut crowded_steps = 0;
    for _ in 0..3000 {
        let n0 = w.state.bodies.len();
        let walls = w.boundaries();
        let s = &mut w.state;
        emit_all(
            &w.model.inlets,
            &mut s.inlets,
            &mut s.bodies,
            &walls,
            s.time + h,
            env,
        );
        let b = &w.state.bodies;
        let n1 = b.len();
        if n1 - n0 >= 2 {
            crowded_steps += 1;
        }
        for i in n0..b.len() {
            for j in 0..b.len() {
                if i == j {
                    continue;
                }
                let gap = b.pos[i].distance(b.pos[j]) - b.radius[i] - b.radius[j];
                assert!(
                    gap >= -1e-12,
                    "at t = {}: new sphere {i} overlaps sphere {j} by {} m (envelope {env} m)",
                    w.state.time,
                    -gap
                );
            }
            let c = w.model.boundaries[0].clearance(b.pos[i]).unwrap();
            assert!(
                c >= b.radius[i],
                "sphere {i} overlaps the bin: clearance {c} m"
            );
        }
        st.step(&mut w).unwrap();
        assert_eq!(
            w.state.bodies.len(),
            n1,
            "the step's own emit stage emitted again at t = {}",
            w.state.time
        );
        if w.inlets_finished() {
            break;
        }
    }
    assert_eq!(
        w.state.bodies.len(),
        400,
        "emitted {} of 400",
        w.state.bodies.len()
    );
    assert!(
        crowded_steps > 10,
        "only {crowded_steps} steps emitted several spheres: the test would not see same-step overlaps"
    );
}

/// Same seed → bit-identical spheres; another seed → other positions.
#[test]
fn inlet_is_deterministic_for_a_seed() {
    let run = |extra: &str| {
        let s = scene(2000.0, 150, WIDE, extra);
        let mut w = s.build().unwrap();
        let mut st = Stepper::new();
        for _ in 0..100 {
            st.step(&mut w).unwrap();
        }
        (
            w.state.bodies.pos.clone(),
            w.state.bodies.radius.clone(),
            w.state.bodies.vel.clone(),
        )
    };
    let a = run(", seed: 7");
    let b = run(", seed: 7");
    assert_eq!(a.0.len(), 150);
    assert!(a == b, "two runs with the same seed differ");
    let c = run(", seed: 8");
    assert_ne!(
        a.0[0], c.0[0],
        "seeds 7 and 8 placed the first sphere alike"
    );
}

/// The disc region and the writer round trip; a disc inlet emits inside its disc.
#[test]
fn disk_inlet_places_centres_on_its_disc() {
    let s = scene(
        1000.0,
        50,
        "Disk(center: (0.0, 0.0, 0.3), normal: (0.0, 0.0, 1.0), radius: 0.05)",
        "",
    );
    let again = Scene::from_str(&s.to_ron().unwrap(), "inlet.ron", &[]).unwrap();
    assert_eq!(again.spheres, s.spheres);
    let mut w = s.build().unwrap();
    let mut st = Stepper::new();
    for _ in 0..50 {
        st.step(&mut w).unwrap();
    }
    assert_eq!(w.state.bodies.len(), 50);
    // The first step's spheres have moved at most h·|v| ≈ 1 mm per step since.
    let p = w.state.bodies.pos[49];
    assert!(
        p.truncate().length() <= 0.05 + 1e-9 && (p.z - 0.3).abs() < 0.002,
        "last sphere at {p}, expected on the disc of radius 0.05 at z = 0.3"
    );
}

fn error_of(region: &str, fields: &str) -> String {
    let text = format!(
        r#"Scene(version: 1, time_step: 1e-3, duration: 1.0, materials: [(friction: 0.5)],
    spheres: [Inlet(region: {region}, {fields})])"#
    );
    match Scene::from_str(&text, "bad.ron", &[]) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_inlets_are_named_errors() {
    let ok = "rate: 10, count: 5, radius: 0.01";
    let e = error_of(WIDE, "rate: 0, count: 5, radius: 0.01");
    assert!(
        e.contains("bad.ron: spheres[0].rate: must be > 0 (got 0)"),
        "{e}"
    );
    let e = error_of(WIDE, "rate: 10, count: 0, radius: 0.01");
    assert!(
        e.contains("bad.ron: spheres[0].count: must be ≥ 1 (got 0)"),
        "{e}"
    );
    let e = error_of(WIDE, "rate: 10, count: 5, radius: 0.01, radius_max: 0.005");
    assert!(
        e.contains("bad.ron: spheres[0].radius_max: must be ≥ radius"),
        "{e}"
    );
    let e = error_of("Box(min: (0, 0, 1), max: (1, 1, 0))", ok);
    assert!(
        e.contains("bad.ron: spheres[0].region.max: must be ≥ region.min"),
        "{e}"
    );
    let e = error_of("Disk(center: (0, 0, 0), normal: (0, 0, 0), radius: 1)", ok);
    assert!(
        e.contains("bad.ron: spheres[0].region.normal: must not be zero"),
        "{e}"
    );
    let e = error_of(
        WIDE,
        "rate: 10, count: 5, radius: 0.01, velocity_jitter: -1",
    );
    assert!(
        e.contains("bad.ron: spheres[0].velocity_jitter: must be ≥ 0"),
        "{e}"
    );
    let e = error_of(WIDE, "rate: 10, count: 5, radius: 0.01, colour: 1");
    assert!(e.contains("colour"), "{e}");
}
