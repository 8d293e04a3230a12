//! The angle-of-repose measurement and settling detection (docs/scene-format.md, `analysis`) on
//! inputs whose answer is known by construction: spheres stacked as cones
//! and wedges of given angle, a flat layer, synthetic energy histories, and
//! the inputs that must be refused.

use glam::{DVec2, DVec3};
use repose::analysis::{
    measure_heap, measure_pile, AnalysisError, Axis, HeapMeasurement, HeapMethod, HeapSettings,
    SettleCriterion, SettleDetector, SettleSettings,
};

mod common;

use common::{cone, fcc, R};

/// Deterministic uniform numbers in [−0.5, 0.5).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

/// A planar heap (a wedge with its crest along y at x = `crest`, 20
/// diameters deep in y): z + r ≤ height − tan θ · |x − crest|. Returns the
/// centres and the construction base half-width (as for [`cone`]).
fn wedge(deg: f64, height: f64, crest: f64) -> (Vec<DVec3>, f64) {
    let t = deg.to_radians().tan();
    let base = (height - 2.0 * R) / t + R;
    let all = fcc(DVec2::new(crest, 0.0), base + 2.0 * R, height, DVec2::ZERO);
    let kept = all
        .into_iter()
        .filter(|p| p.y.abs() <= 20.0 * R && p.z + R <= height - t * (p.x - crest).abs())
        .collect();
    (kept, base)
}

fn radii(p: &[DVec3]) -> Vec<f64> {
    vec![R; p.len()]
}

fn measure(p: &[DVec3], settings: &HeapSettings) -> HeapMeasurement {
    measure_heap(p, &radii(p), 0.0, settings)
        .unwrap_or_else(|e| panic!("measurement of {} spheres failed: {e}", p.len()))
}

/// Asserts |measured − true| ≤ 1° with both in the message.
fn assert_angle(m: &HeapMeasurement, truth: f64, what: &str) {
    assert!(
        (m.angle_deg - truth).abs() <= 1.0,
        "{what}: measured {:.3}° ± {:.3}°, true {truth}° (flanks {:?}, {} spheres, {} bins)",
        m.angle_deg,
        m.angle_stderr_deg,
        m.flanks
            .iter()
            .map(|f| format!("{} {:.3}°", f.side, f.angle_deg))
            .collect::<Vec<_>>(),
        m.spheres,
        m.bins_used
    );
    assert!(
        m.angle_stderr_deg.is_finite() && m.angle_stderr_deg >= 0.0,
        "{what}: standard error {}",
        m.angle_stderr_deg
    );
}

#[test]
fn cones_of_20_30_40_degrees_measure_within_one_degree() {
    for deg in [20.0, 30.0, 40.0] {
        // Apex on a lattice site and off it.
        for shift in [DVec2::ZERO, DVec2::new(0.37 * R, 0.61 * R)] {
            let (p, _) = cone(deg, 0.2, shift);
            let m = measure(&p, &HeapSettings::default());
            eprintln!(
                "cone {deg}° shift {shift}: {} spheres, measured {:.3}° ± {:.3}°, H/R {:.2}°",
                p.len(),
                m.angle_deg,
                m.angle_stderr_deg,
                m.height_base_angle_deg
            );
            assert_angle(&m, deg, &format!("cone {deg}°, lattice shift {shift}"));
            assert_eq!(m.flanks.len(), 1, "a radial measurement has one flank");
            assert!(m.flanks[0].slope < 0.0, "the flank must fall outward");
        }
    }
}

/// The fixed-funnel method: a 30° cone with a column of spheres standing
/// on its apex (what is still in the funnel over it) measures 30° once the
/// column is above the ceiling, and not without the ceiling.
#[test]
fn a_ceiling_leaves_a_funnel_column_out_of_the_heap() {
    let (mut p, _) = cone(30.0, 0.2, DVec2::ZERO);
    let apex = p.iter().map(|q| q.z).fold(f64::NEG_INFINITY, f64::max);
    let column: Vec<DVec3> = (1..=60)
        .map(|k| DVec3::new(0.0, 0.0, apex + 2.0 * R * k as f64))
        .collect();
    p.extend(&column);
    let with = HeapSettings {
        ceiling: Some(apex + R),
        ..Default::default()
    };
    let m = measure(&p, &with);
    assert_angle(&m, 30.0, "cone under a funnel column, with the ceiling");
    assert_eq!(
        m.spheres,
        p.len() - column.len(),
        "the column must be left out"
    );
    let without = measure_heap(&p, &radii(&p), 0.0, &HeapSettings::default());
    let spoiled = match &without {
        Ok(m) => (m.height_base_angle_deg - 30.0).abs() > 5.0,
        Err(_) => true,
    };
    assert!(
        spoiled,
        "without the ceiling the column should spoil the heap: {without:?}"
    );
}

#[test]
fn rough_cones_of_20_30_40_degrees_measure_within_one_degree() {
    // The lattice cones with every centre moved randomly by up to ±0.2 r
    // per coordinate: a rough surface without lattice steps, 15 diameters
    // high so that the flank has enough bins to average the roughness.
    let mut rng = Lcg(11);
    for deg in [20.0, 30.0, 40.0] {
        let (p, _) = cone(deg, 0.3, DVec2::ZERO);
        let rough: Vec<DVec3> = p
            .iter()
            .map(|q| *q + DVec3::new(rng.next(), rng.next(), rng.next()) * 0.4 * R)
            .collect();
        let m = measure(&rough, &HeapSettings::default());
        eprintln!(
            "rough cone {deg}°: measured {:.3}° ± {:.3}°",
            m.angle_deg, m.angle_stderr_deg
        );
        assert_angle(&m, deg, &format!("rough cone {deg}°"));
    }
}

#[test]
fn cone_angle_does_not_depend_on_the_bin_width_or_a_given_axis() {
    let (p, _) = cone(30.0, 0.2, DVec2::ZERO);
    for w in [1.0 * R, 2.0 * R, 3.0 * R] {
        let s = HeapSettings {
            bin_width: Some(w),
            center: Some(DVec2::ZERO),
            ..Default::default()
        };
        let m = measure(&p, &s);
        assert_angle(&m, 30.0, &format!("cone 30°, bins {w} m, axis given"));
        assert_eq!(m.center, DVec2::ZERO);
    }
}

#[test]
fn cone_height_and_base_radius_are_within_a_diameter_of_the_construction() {
    for deg in [20.0, 30.0, 40.0] {
        let (p, base) = cone(deg, 0.2, DVec2::new(0.37 * R, 0.61 * R));
        let m = measure(&p, &HeapSettings::default());
        assert!(
            (m.height - 0.2).abs() <= 2.0 * R,
            "cone {deg}°: height {} vs construction 0.2",
            m.height
        );
        assert!(
            (m.base_radius - base).abs() <= 2.0 * R,
            "cone {deg}°: base radius {} vs construction {base}",
            m.base_radius
        );
        let hr = (m.height / m.base_radius).atan().to_degrees();
        assert!((m.height_base_angle_deg - hr).abs() < 1e-9);
    }
}

/// Grains that rolled away from a heap — alone on the floor, or a few
/// gathered in a touching cluster at a wall — do not set its base radius:
/// the base is the footprint of the pile (the largest group of touching
/// spheres), and the strays are counted apart. A 30° cone with 40 lone
/// strays on a ring outside it and a cluster of 6 has the base radius of
/// the cone alone, to the bit.
#[test]
fn strays_on_the_floor_do_not_widen_the_heaps_base_and_are_counted() {
    let (cone_p, base) = cone(30.0, 0.2, DVec2::new(0.37 * R, 0.61 * R));
    let alone = measure(&cone_p, &HeapSettings::default());
    assert_eq!(alone.floor_layer_strays, 0, "a whole cone has no strays");
    let mut p = cone_p.clone();
    for k in 0..40 {
        let phi = std::f64::consts::TAU * k as f64 / 40.0;
        let r = base + 5.0 * R + 25.0 * R * (k % 5) as f64 / 4.0;
        p.push(DVec3::new(r * phi.cos(), r * phi.sin(), R));
    }
    let wall = base + 40.0 * R;
    for k in 0..6 {
        p.push(DVec3::new(wall, (2 * k) as f64 * R, R));
    }
    // The axis where the cone alone has it (by default the centroid of all
    // centres, which the strays would move).
    let at_cone = HeapSettings {
        center: Some(alone.center),
        ..HeapSettings::default()
    };
    let m = measure(&p, &at_cone);
    assert_eq!(m.floor_layer_strays, 46, "the strays counted");
    assert_eq!(m.floor_layer_spheres, alone.floor_layer_spheres + 46);
    assert_eq!(
        m.base_radius, alone.base_radius,
        "base radius with strays {} vs the cone alone {} (construction {base})",
        m.base_radius, alone.base_radius
    );
}

#[test]
fn planar_heaps_measure_within_one_degree_on_both_flanks() {
    for deg in [20.0, 30.0, 40.0] {
        let (p, base) = wedge(deg, 0.2, 0.5);
        let s = HeapSettings::with_method(HeapMethod::Planar { axis: Axis::X });
        let m = measure(&p, &s);
        eprintln!(
            "wedge {deg}°: {} spheres, measured {:.3}° ± {:.3}°",
            p.len(),
            m.angle_deg,
            m.angle_stderr_deg
        );
        assert_angle(&m, deg, &format!("wedge {deg}°"));
        let sides: Vec<&str> = m.flanks.iter().map(|f| f.side.as_str()).collect();
        assert_eq!(sides, ["left", "right"], "both flanks fitted");
        for f in &m.flanks {
            assert!(
                (f.angle_deg - deg).abs() <= 1.0,
                "wedge {deg}°: {} flank {:.3}°",
                f.side,
                f.angle_deg
            );
        }
        let mean = (m.flanks[0].angle_deg + m.flanks[1].angle_deg) / 2.0;
        assert!((m.angle_deg - mean).abs() < 1e-12, "angle = mean of flanks");
        assert!(
            (m.base_radius - base).abs() <= 2.0 * R,
            "wedge {deg}°: base half-width {} vs construction {base}",
            m.base_radius
        );
    }
}

#[test]
fn planar_heap_across_y_is_measured_along_y() {
    // The wedge of planar_heaps… turned by 90°: crest along x at y = −0.3.
    let (p, _) = wedge(35.0, 0.2, -0.3);
    let turned: Vec<DVec3> = p.iter().map(|q| DVec3::new(q.y, q.x, q.z)).collect();
    let s = HeapSettings::with_method(HeapMethod::Planar { axis: Axis::Y });
    let m = measure(&turned, &s);
    assert_angle(&m, 35.0, "wedge 35° across y");
    assert!(
        (m.center.y + 0.3).abs() < R,
        "crest at y = −0.3, axis found at {}",
        m.center
    );
}

#[test]
fn flat_layer_measures_zero_degrees() {
    // One close-packed layer, 30 diameters across, with the centres jittered
    // up and down by up to ±5 % of a radius.
    let mut rng = Lcg(7);
    let p: Vec<DVec3> = fcc(DVec2::ZERO, 0.3, 2.0 * R, DVec2::ZERO)
        .into_iter()
        .map(|q| q + DVec3::Z * 0.1 * R * rng.next())
        .collect();
    for method in [
        HeapMethod::Radial,
        HeapMethod::Planar { axis: Axis::X },
        HeapMethod::Planar { axis: Axis::Y },
    ] {
        let m = measure(&p, &HeapSettings::with_method(method));
        assert!(
            m.angle_deg.abs() < 1.0,
            "flat layer ({}): measured {:.3}° ± {:.3}°, true 0°",
            method.name(),
            m.angle_deg,
            m.angle_stderr_deg
        );
        assert!(
            (m.height - 2.0 * R).abs() < 0.1 * R,
            "flat layer height {}",
            m.height
        );
    }
}

#[test]
fn perfectly_flat_layer_measures_exactly_zero() {
    let p = fcc(DVec2::ZERO, 0.2, 2.0 * R, DVec2::ZERO);
    let m = measure(&p, &HeapSettings::default());
    assert!(m.angle_deg.abs() < 1e-9, "{m:?}");
    assert!(m.angle_stderr_deg.abs() < 1e-9, "{m:?}");
    assert_eq!(m.bins_used, m.bins_total, "a flat profile is all flank");
}

#[test]
fn floor_height_shifts_the_heap_not_the_angle() {
    let (p, _) = cone(30.0, 0.2, DVec2::ZERO);
    let lifted: Vec<DVec3> = p.iter().map(|q| *q + DVec3::Z * 1.5).collect();
    let a = measure(&p, &HeapSettings::default());
    let b = measure_heap(&lifted, &radii(&lifted), 1.5, &HeapSettings::default()).unwrap();
    assert!(
        (a.angle_deg - b.angle_deg).abs() < 1e-6,
        "{} vs {}",
        a.angle_deg,
        b.angle_deg
    );
    assert!((a.height - b.height).abs() < 1e-9);
    assert_eq!(b.floor_z, 1.5);
}

#[test]
fn measurement_serializes_the_numbers_and_the_method() {
    let (p, _) = cone(30.0, 0.2, DVec2::ZERO);
    let m = measure(&p, &HeapSettings::default());
    let v = serde_json::to_value(&m).unwrap();
    for key in [
        "method",
        "description",
        "angle_deg",
        "angle_stderr_deg",
        "flanks",
        "height",
        "base_radius",
        "height_base_angle_deg",
        "spheres",
        "bins_used",
        "floor_z",
        "settings",
    ] {
        assert!(v.get(key).is_some(), "key {key} missing from {v:#}");
    }
    let back: HeapMeasurement = serde_json::from_value(v).unwrap();
    assert_eq!(back, m);
}

fn err_of(p: &[DVec3], r: &[f64], floor: f64, s: &HeapSettings) -> AnalysisError {
    match measure_heap(p, r, floor, s) {
        Ok(m) => panic!("expected an error, got {m:?}"),
        Err(e) => e,
    }
}

#[test]
fn empty_input_is_an_error() {
    let e = err_of(&[], &[], 0.0, &HeapSettings::default());
    assert_eq!(e, AnalysisError::NoSpheres);
    assert!(e.to_string().contains("no spheres"), "{e}");
}

#[test]
fn a_single_sphere_is_an_error_saying_too_few_bins() {
    let e = err_of(
        &[DVec3::new(0.0, 0.0, R)],
        &[R],
        0.0,
        &HeapSettings::default(),
    );
    let msg = e.to_string();
    assert!(matches!(e, AnalysisError::TooFewBins { .. }), "{e:?}");
    assert!(
        msg.contains("too few profile bins") && msg.contains("need at least 4"),
        "{msg}"
    );
}

#[test]
fn bad_spheres_settings_and_floors_are_errors_naming_the_problem() {
    let p = vec![DVec3::new(0.0, 0.0, R), DVec3::new(0.1, 0.0, R)];
    let d = HeapSettings::default();
    let cases: Vec<(AnalysisError, &str)> = vec![
        (err_of(&p, &[R], 0.0, &d), "2 positions but 1 radii"),
        (
            err_of(&[DVec3::new(f64::NAN, 0.0, R), p[1]], &[R, R], 0.0, &d),
            "sphere 0: centre (NaN, 0, 0.01) is not finite",
        ),
        (
            err_of(&p, &[R, -R], 0.0, &d),
            "sphere 1: radius must be finite and > 0 (got -0.01)",
        ),
        (
            err_of(&p, &[R, R], f64::INFINITY, &d),
            "floor: must be a finite number",
        ),
        (
            err_of(&p, &[R, R], 1.0, &d),
            "no sphere top is above the floor",
        ),
        (
            err_of(&p, &[R, R], -1.0, &d),
            "no sphere rests on the floor",
        ),
        (
            err_of(
                &p,
                &[R, R],
                0.0,
                &HeapSettings {
                    bin_width: Some(0.0),
                    ..d.clone()
                },
            ),
            "heap.bin_width: must be a finite number > 0 (got 0)",
        ),
        (
            err_of(
                &p,
                &[R, R],
                0.0,
                &HeapSettings {
                    flank_from: 0.9,
                    flank_to: 0.5,
                    ..d.clone()
                },
            ),
            "heap.flank_to: must be in (flank_from, 1]",
        ),
        (
            err_of(
                &p,
                &[R, R],
                0.0,
                &HeapSettings {
                    min_bins: 2,
                    ..d.clone()
                },
            ),
            "heap.min_bins: must be ≥ 3",
        ),
    ];
    for (e, want) in cases {
        assert!(e.to_string().contains(want), "expected {want:?} in {e}");
    }
}

fn criterion(threshold: f64, hold: f64) -> SettleCriterion {
    SettleCriterion {
        ke_per_particle: threshold,
        ke_relative: 1e-4,
        hold,
    }
}

#[test]
fn decaying_energy_settles_at_the_first_sample_below_the_threshold() {
    // E(t) = e^(−t/τ): below 1e-3 from t* = τ ln 1000 = 0.6908 s (τ = 0.1 s).
    let (dt, tau) = (1e-3, 0.1);
    let mut d = SettleDetector::new(criterion(1e-3, 0.2)).unwrap();
    let mut detected = None;
    for k in 1..=2000 {
        let t = k as f64 * dt;
        if d.update(t, (-t / tau).exp()) && detected.is_none() {
            detected = Some(t);
        }
    }
    let t_star = tau * 1000f64.ln();
    let settled = d.settle_time().expect("the decaying series settles");
    assert!(
        settled >= t_star && settled < t_star + dt,
        "settle time {settled}, expected the first sample after {t_star}"
    );
    let at = detected.unwrap();
    assert!(
        (at - (settled + 0.2)).abs() < dt,
        "detected at {at}, expected settle time + hold = {}",
        settled + 0.2
    );
    let r = d.report(false);
    assert!(r.settled);
    assert_eq!(r.settle_time_s, Some(settled));
    assert!((r.detected_at_s.unwrap() - (settled + 0.2)).abs() < 1e-12);
}

#[test]
fn energy_that_never_stays_low_for_the_hold_time_never_settles() {
    let mut d = SettleDetector::new(criterion(1e-3, 0.1)).unwrap();
    // Quiet for 0.05 s out of every 0.06 s: never for the 0.1 s hold.
    for k in 1..=5000 {
        let t = k as f64 * 1e-3;
        let e = if k % 60 == 0 { 1.0 } else { 1e-6 };
        assert!(!d.update(t, e), "settled at t = {t}");
    }
    assert_eq!(d.settle_time(), None);
    let r = d.report(false);
    assert!(!r.settled && r.settle_time_s.is_none() && r.detected_at_s.is_none());
}

#[test]
fn energy_that_stays_above_the_threshold_never_settles() {
    let mut d = SettleDetector::new(criterion(1e-3, 0.0)).unwrap();
    for k in 1..=1000 {
        assert!(!d.update(k as f64 * 1e-3, 2e-3 + 1e-3 * (k as f64).sin()));
    }
    assert_eq!(d.settle_time(), None);
}

#[test]
fn a_pile_that_moves_again_is_no_longer_settled_and_nan_is_not_quiet() {
    let mut d = SettleDetector::new(criterion(1.0, 0.01)).unwrap();
    for k in 0..=20 {
        d.update(k as f64 * 1e-3, 0.0);
    }
    assert_eq!(d.settle_time(), Some(0.0));
    assert!(!d.update(0.021, 5.0), "an avalanche unsettles the pile");
    assert!(!d.update(0.022, f64::NAN), "NaN energy is not quiet");
    assert_eq!(d.settle_time(), None);
    for k in 23..=40 {
        d.update(k as f64 * 1e-3, 0.5);
    }
    assert!((d.settle_time().unwrap() - 0.023).abs() < 1e-12);
}

#[test]
fn settle_defaults_scale_with_grain_size_and_gravity() {
    let s = SettleSettings::default();
    // m = 1e-3 kg, r = 0.01 m, g = 9.81: threshold 1e-4 · m g r, hold 5 √(r/g).
    let c = s.resolve(1e-3, 0.01, 9.81, 1e-3).unwrap();
    assert!((c.ke_per_particle - 1e-4 * 1e-3 * 9.81 * 0.01).abs() < 1e-18);
    assert!((c.hold - 5.0 * (0.01f64 / 9.81).sqrt()).abs() < 1e-12);
    // A large time step: the hold is at least 10 steps.
    let c = s.resolve(1e-3, 0.01, 9.81, 0.05).unwrap();
    assert!((c.hold - 0.5).abs() < 1e-12, "hold {}", c.hold);
    // Explicit hold, zero gravity, bad settings.
    let explicit = SettleSettings {
        hold: Some(0.3),
        ..s.clone()
    };
    assert_eq!(explicit.resolve(1e-3, 0.01, 9.81, 1e-3).unwrap().hold, 0.3);
    let e = s.resolve(1e-3, 0.01, 0.0, 1e-3).unwrap_err();
    assert!(e.to_string().contains("needs gravity"), "{e}");
    let bad = SettleSettings {
        ke_threshold: -1.0,
        hold: None,
    };
    let e = bad.resolve(1e-3, 0.01, 9.81, 1e-3).unwrap_err();
    assert!(
        e.to_string()
            .contains("settle.ke_threshold: must be a finite number > 0 (got -1)"),
        "{e}"
    );
    assert!(SettleDetector::new(criterion(0.0, 1.0)).is_err());
    assert!(SettleDetector::new(criterion(1.0, f64::NAN)).is_err());
}

fn scene_with_analysis(analysis: &str) -> Result<repose::scene::Scene, repose::scene::SceneError> {
    let text = format!(
        r#"Scene(
    version: 1,
    time_step: 1e-3,
    duration: 0.1,
    materials: [(friction: 0.5)],
    spheres: [Sphere(pos: (0, 0, 0.01), radius: 0.01)],
    boundaries: [Plane(point: (0, 0, 0), normal: (0, 0, 1))],
    {analysis}
)"#
    );
    repose::scene::Scene::from_str(&text, "a.ron", &[])
}

#[test]
fn scene_analysis_section_parses_round_trips_and_defaults_to_no_heap() {
    let s = scene_with_analysis("").unwrap();
    assert_eq!(s.analysis, Default::default(), "absent section: defaults");
    assert!(s.analysis.heap.is_none() && !s.analysis.stop_when_settled);
    let s = scene_with_analysis(
        "analysis: (heap: (method: Planar(axis: Y), bin_width: 0.02, center: (0.1, 0.2)), floor: -0.5, settle: (ke_threshold: 1e-5, hold: 0.2), stop_when_settled: true),",
    )
    .unwrap();
    let h = s.analysis.heap.as_ref().unwrap();
    assert_eq!(h.method, HeapMethod::Planar { axis: Axis::Y });
    assert_eq!(h.center, Some(DVec2::new(0.1, 0.2)));
    assert_eq!(s.analysis.floor, Some(-0.5));
    assert_eq!(s.analysis.settle.hold, Some(0.2));
    let back = repose::scene::Scene::from_str(&s.to_ron().unwrap(), "a.ron", &[]).unwrap();
    assert_eq!(back, s, "scene.ron round trip");
    let set = s
        .with_overrides(&[("analysis.settle.ke_threshold".into(), "0.001".into())])
        .unwrap();
    assert_eq!(
        set.analysis.settle.ke_threshold, 0.001,
        "--set reaches the section"
    );
}

#[test]
fn scene_analysis_values_out_of_range_are_errors_naming_the_field() {
    let e = scene_with_analysis(
        "analysis: (heap: (bin_width: -1.0, flank_from: 1.5), settle: (ke_threshold: 0.0, hold: -1.0)),",
    )
    .unwrap_err()
    .to_string();
    for want in [
        "a.ron: analysis.heap.bin_width: must be a finite number > 0 (got -1)",
        "a.ron: analysis.heap.flank_from: must be in [0, 1) (got 1.5)",
        "a.ron: analysis.settle.ke_threshold: must be a finite number > 0 (got 0)",
        "a.ron: analysis.settle.hold: must be a finite number ≥ 0 (got -1)",
    ] {
        assert!(e.contains(want), "expected {want:?} in:\n{e}");
    }
    let e = scene_with_analysis("analysis: (hepa: None),")
        .unwrap_err()
        .to_string();
    assert!(e.contains("a.ron:") && e.contains("hepa"), "{e}");
}

/// Acary & Bourrier 2021 §6.2's mean radius: the spheres touching the floor,
/// their horizontal centroid, their mean distance from it. Fifteen rings of 40
/// floor spheres at ρ = 0.02 k (centred off the origin) have mean radius
/// exactly 0.16; a 30° cone of rings stacked on them, and spheres that fell off
/// the plate below the floor, do not count.
#[test]
fn bottom_mean_radius_is_the_mean_distance_of_the_floor_spheres_from_their_centroid() {
    let c = DVec2::new(0.7, -0.2);
    let n = 40;
    let ring = |z: f64, rho: f64, turn: f64| {
        (0..n).map(move |k| {
            let a = std::f64::consts::TAU * (k as f64 + turn) / n as f64;
            (c + rho * DVec2::new(a.cos(), a.sin())).extend(z)
        })
    };
    let tan30 = 30f64.to_radians().tan();
    let mut p: Vec<DVec3> = Vec::new();
    for k in 1..=15 {
        let rho = 0.02 * k as f64;
        p.extend(ring(R, rho, 0.0));
        if k < 15 {
            p.extend(ring(R + tan30 * (0.3 - rho), rho, 0.5)); // the cone's surface
        }
    }
    let stacked = p.len();
    p.extend(ring(-1.0, 1.5, 0.0)); // on a catch floor 1 m below the plate
    let m = measure_pile(&p, &radii(&p), 0.0).unwrap();
    assert_eq!(m.bottom_spheres, 15 * n, "{m:?}");
    assert_eq!(m.spheres_below_floor, n, "{m:?}");
    assert_eq!(m.spheres, stacked);
    let h = measure_heap(&p, &radii(&p), 0.0, &HeapSettings::default()).unwrap();
    assert_eq!(h.spheres_below_floor, n, "the heap leaves them out too");
    assert!((h.height - m.height).abs() < 1e-12);
    assert!(
        (m.bottom_mean_radius.expect("spheres on the floor") - 0.16).abs() < 1e-9,
        "mean radius {:?} vs the rings' 0.16",
        m.bottom_mean_radius
    );
    let want = 0.16 / (2.0 * R);
    assert!(
        (m.bottom_mean_radius_over_diameter
            .expect("spheres on the floor")
            - want)
            .abs()
            < 1e-9,
        "normalised mean radius {:?} vs {want}",
        m.bottom_mean_radius_over_diameter
    );
    // The highest top: the ring at ρ = 0.02, 0.28 tan 30° + 2R up.
    let want = (tan30 * 0.28 + 2.0 * R) / (2.0 * R);
    assert!(
        (m.height_over_diameter - want).abs() < 1e-9,
        "normalised height {} vs {want}",
        m.height_over_diameter
    );
}

/// A single layer is one diameter high (the first regime of
/// Acary & Bourrier 2021, Fig. 5), and a filled disc of radius a has mean
/// radius 2a/3.
#[test]
fn flat_layer_is_one_diameter_high_with_mean_radius_two_thirds_of_its_radius() {
    let a = 0.2;
    let p: Vec<DVec3> = fcc(DVec2::ZERO, a, 2.0 * R, DVec2::ZERO)
        .into_iter()
        .filter(|q| q.truncate().length() <= a)
        .collect();
    let m = measure_pile(&p, &radii(&p), 0.0).unwrap();
    assert!(
        (m.height_over_diameter - 1.0).abs() < 1e-9,
        "normalised height {} vs 1",
        m.height_over_diameter
    );
    let want = 2.0 * a / 3.0;
    assert!(
        (m.bottom_mean_radius.expect("spheres on the floor") - want).abs() < 2.0 * R,
        "mean radius {:?} vs 2a/3 = {want} (within a diameter {})",
        m.bottom_mean_radius,
        2.0 * R
    );
}

/// A drum bed by construction: a square lattice of spheres (spacing 2R) in
/// the cross-section of a drum of radius 0.3 m (30 diameters) about x,
/// below the line through the centre tilted by `deg` (rising toward +y), 3
/// layers deep along the axis.
fn drum_bed(deg: f64) -> Vec<DVec3> {
    let t = deg.to_radians().tan();
    let big = 0.3;
    let mut p = Vec::new();
    let n = (big / (2.0 * R)) as i64;
    for ix in 0..3 {
        for iy in -n..=n {
            for iz in -n..=n {
                let (y, z) = (iy as f64 * 2.0 * R, iz as f64 * 2.0 * R);
                if y * y + z * z <= (big - R) * (big - R) && z + R <= t * y {
                    p.push(DVec3::new(ix as f64 * 2.0 * R, y, z));
                }
            }
        }
    }
    p
}

/// The drum's surface fit returns the construction angle within 1° at 20°,
/// 30° and 40°, and says which side it rises toward. A drum spinning at
/// ω > 0 about +x moves its wall at the bottom along ω x̂ × (−ẑ) = +ω ŷ,
/// so it lifts the bed on the +y side, where this bed is high.
#[test]
fn drum_surface_fit_measures_the_bed_angle_within_one_degree() {
    use repose::analysis::{fit_drum_surface, DrumFrame, DrumSettings};
    let gravity = DVec3::new(0.0, 0.0, -9.81);
    for deg in [20.0, 30.0, 40.0] {
        let p = drum_bed(deg);
        let spinning = DrumFrame::new(DVec3::ZERO, DVec3::X, 1.0, gravity).unwrap();
        let f = fit_drum_surface(&p, &radii(&p), &spinning, &DrumSettings::default(), 0.0)
            .unwrap_or_else(|e| panic!("{deg}°: {e}"));
        assert!(
            (f.angle_deg - deg).abs() <= 1.0,
            "bed of {deg}°: measured {:.3}° ± {:.3}° over {} bins",
            f.angle_deg,
            f.angle_stderr_deg,
            f.bins
        );
        assert!(f.rises_with_the_wall, "{deg}°: slope {} for ω > 0", f.slope);
        let reversed = DrumFrame::new(DVec3::ZERO, DVec3::X, -1.0, gravity).unwrap();
        let g = fit_drum_surface(&p, &radii(&p), &reversed, &DrumSettings::default(), 0.0).unwrap();
        assert!(
            !g.rises_with_the_wall,
            "{deg}°: a drum spinning the other way lifts the −y side"
        );
    }
}

/// A vertical drum axis has no surface slope; a bed of two spheres has too
/// few bins; bad settings are named.
#[test]
fn drum_measurement_refuses_what_it_cannot_measure() {
    use repose::analysis::{fit_drum_surface, DrumFrame, DrumSettings};
    let g = DVec3::new(0.0, 0.0, -9.81);
    let e = DrumFrame::new(DVec3::ZERO, DVec3::Z, 1.0, g).unwrap_err();
    assert!(e.to_string().contains("no surface slope"), "{e}");
    let frame = DrumFrame::new(DVec3::ZERO, DVec3::X, 1.0, g).unwrap();
    let two = [DVec3::ZERO, DVec3::new(0.0, 0.02, 0.0)];
    let e =
        fit_drum_surface(&two, &radii(&two), &frame, &DrumSettings::default(), 0.0).unwrap_err();
    assert!(e.to_string().contains("need at least 3"), "{e}");
    let bad = DrumSettings {
        central_fraction: 1.5,
        ..DrumSettings::default()
    };
    let p = drum_bed(30.0);
    let e = fit_drum_surface(&p, &radii(&p), &frame, &bad, 0.0).unwrap_err();
    assert!(e.to_string().contains("drum.central_fraction"), "{e}");
}
