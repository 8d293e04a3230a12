//! Validation cases of the penalty formulation (Fang & Negrut 2020 and
//! Hertz's theory), each a world run to a measured quantity against its
//! closed form: Hertz impacts, restitution, the paper's brick on an incline
//! (§4.1), the rolling and spinning sphere (§4.3–4.4), the Hertzian spin
//! torque (App. C), the sphere-on-incline phase diagram (App. D) and the
//! disk at rest (§4.2). The penalty formulation runs on the f64 CPU backend
//! only, so these cases take no stepper factory. `tests/penalty.rs` asserts
//! on them and `repose validate` prints them.
//!
//! The scenes are written in the scene syntax users write
//! (`formulation: Penalty(…)`); the incline and the disk are the
//! repository's `scenes/penalty_incline.ron` and `scenes/penalty_disk.ron`,
//! built into the binary.

use glam::DVec3;

use super::Check;
use crate::scene::Scene;
use crate::step::Stepper;
use crate::world::World;

const INCLINE: &str = include_str!("../../scenes/penalty_incline.ron");
const DISK: &str = include_str!("../../scenes/penalty_disk.ron");

/// A penalty case: runs its worlds on the CPU, returns its checks.
pub type PenaltyCase = fn() -> Vec<Check>;

/// The penalty cases, by name.
pub fn cases() -> Vec<(&'static str, PenaltyCase)> {
    vec![
        ("hertz_impact", hertz_impact),
        ("restitution", restitution),
        ("brick_on_incline", brick_on_incline),
        ("spinning_sphere", spinning_sphere),
        ("rolling_sphere", rolling_sphere),
        ("hertzian_spin", hertzian_spin),
        ("incline_phases", incline_phases),
        ("disk_at_rest", disk_at_rest),
        ("ellipsoid_spin", ellipsoid_spin),
        ("ellipsoid_falls_flat", ellipsoid_falls_flat),
    ]
}

/// Runs every penalty case.
pub fn run_all() -> Vec<Check> {
    cases().into_iter().flat_map(|(_, f)| f()).collect()
}

fn world(text: &str) -> World {
    Scene::from_str(text, "penalty case", &[])
        .and_then(|s| s.build_quietly())
        .unwrap_or_else(|e| panic!("built-in penalty case scene: {e:#}"))
}

fn steps_of(w: &mut World, st: &mut Stepper, n: usize) {
    for k in 0..n {
        st.step(w)
            .unwrap_or_else(|e| panic!("built-in penalty case, step {k}: {e:#}"));
    }
}

fn check(
    case: &'static str,
    quantity: impl Into<String>,
    measured: f64,
    expected: f64,
    tolerance: f64,
    unit: &'static str,
) -> Check {
    Check {
        case,
        quantity: quantity.into(),
        measured,
        expected,
        tolerance,
        unit,
    }
}

/// What an impact measured: contact duration (s), peak force (N),
/// restitution.
struct Impact {
    duration: f64,
    peak: f64,
    restitution: f64,
}

/// Runs a head-on impact of body 0 (on a plane, or on body 1 coming the
/// other way) at steps `dt` until the bodies part; measures the contact's
/// duration (steps in contact × dt), the peak force m |Δv|/dt on body 0 and
/// the restitution (the closing speed after over before).
fn impact(text: &str, dt: f64, closing: f64) -> Impact {
    let mut w = world(text);
    let mut st = Stepper::new();
    let m = 1.0 / w.state.bodies.inv_mass[0];
    let (mut touching, mut peak, mut after) = (0usize, 0.0f64, f64::NAN);
    let mut started = false;
    for k in 0..200_000 {
        let v0 = w.state.bodies.vel[0];
        let r = st
            .step(&mut w)
            .unwrap_or_else(|e| panic!("impact step {k}: {e:#}"));
        assert_eq!(r.substeps, 1, "the impact's steps are its sub-steps");
        if r.contacts > 0 {
            started = true;
            touching += 1;
            peak = peak.max(m * (w.state.bodies.vel[0] - v0).length() / dt);
        } else if started {
            let rel = if w.state.bodies.len() > 1 {
                (w.state.bodies.vel[1] - w.state.bodies.vel[0]).z
            } else {
                -w.state.bodies.vel[0].z
            };
            after = rel.abs();
            break;
        }
    }
    Impact {
        duration: touching as f64 * dt,
        peak,
        restitution: after / closing,
    }
}

/// Hertz's impact of elastic spheres (no damping): with E*, R*, m* and the
/// closing speed v, the overlap peaks at δ = (15 m* v² / (16 E* √R*))^{2/5},
/// the force at (4/3) E* √R* δ^{3/2}, and the contact lasts
/// 2.868 (m*² / (R* E*² v))^{1/5} (Johnson, Contact Mechanics §11.4).
pub fn hertz_theory(e_star: f64, r_star: f64, m_star: f64, v: f64) -> (f64, f64) {
    let delta = (15.0 * m_star * v * v / (16.0 * e_star * r_star.sqrt())).powf(0.4);
    let peak = 4.0 / 3.0 * e_star * r_star.sqrt() * delta.powf(1.5);
    let duration = 2.868 * (m_star * m_star / (r_star * e_star * e_star * v)).powf(0.2);
    (duration, peak)
}

const R: f64 = 0.01;
const DENSITY: f64 = 2500.0;
const E: f64 = 1e7;
const NU: f64 = 0.3;

fn mass(r: f64) -> f64 {
    4.0 / 3.0 * std::f64::consts::PI * r.powi(3) * DENSITY
}

/// A sphere dropped on a plane of the same material and two equal spheres
/// meeting head-on, without damping (e = 1): contact duration and peak
/// force within 2 % of Hertz's theory, and they part at the speed they met.
fn hertz_impact() -> Vec<Check> {
    let e_pair = E / (2.0 * (1.0 - NU * NU));
    let cases = [
        // (what, scene bodies, boundaries, E*, R*, m*, closing speed)
        (
            "sphere on a plane",
            format!(
                "Sphere(pos: (0, 0, {}), radius: {R}, velocity: (0, 0, -1))",
                R + 1e-4
            ),
            "Plane(point: (0, 0, 0), normal: (0, 0, 1))",
            e_pair,
            R,
            mass(R),
            1.0,
        ),
        (
            "two spheres",
            format!(
                "Sphere(pos: (0, 0, 0), radius: {R}, velocity: (0, 0, 0.5)),
                 Sphere(pos: (0, 0, {}), radius: {R}, velocity: (0, 0, -0.5))",
                2.0 * R + 1e-4
            ),
            "",
            e_pair,
            R / 2.0,
            mass(R) / 2.0,
            1.0,
        ),
    ];
    let mut out = Vec::new();
    for (what, bodies, walls, e_star, r_star, m_star, v) in cases {
        let (t_c, f_max) = hertz_theory(e_star, r_star, m_star, v);
        let dt = t_c / 2000.0;
        let text = format!(
            "Scene(version: 1, time_step: {dt:e}, duration: 1.0, gravity: (0, 0, 0),
               formulation: Penalty(normal: Hertz, time_step: {dt:e}),
               materials: [(name: \"m\", friction: 0.0, density: {DENSITY}, young_modulus: {E},
                            poisson_ratio: {NU}, restitution: 1.0)],
               spheres: [{bodies}],
               boundaries: [{walls}])"
        );
        let got = impact(&text, dt, v);
        let c = "hertz_impact";
        out.push(check(
            c,
            format!("{what}: contact duration"),
            got.duration,
            t_c,
            0.02 * t_c,
            "s",
        ));
        out.push(check(
            c,
            format!("{what}: peak force"),
            got.peak,
            f_max,
            0.02 * f_max,
            "N",
        ));
        out.push(check(
            c,
            format!("{what}: restitution (undamped)"),
            got.restitution,
            1.0,
            1e-3,
            "",
        ));
    }
    out
}

/// Damped to a coefficient of restitution, an impact rebounds at e times
/// the speed it came in at, within 2 %, whatever the speed (Hertz with the
/// δ^{1/4} damping and Hooke), for e = 0.5 and 0.9.
fn restitution() -> Vec<Check> {
    let mut out = Vec::new();
    for normal in ["Hertz", "Hooke(stiffness: 1e4)"] {
        for e in [0.5, 0.9] {
            for v in [0.2, 2.0] {
                let (t_c, _) = hertz_theory(E / (2.0 * (1.0 - NU * NU)), R, mass(R), v);
                let dt = t_c / 2000.0;
                let text = format!(
                    "Scene(version: 1, time_step: {dt:e}, duration: 1.0, gravity: (0, 0, 0),
                       formulation: Penalty(normal: {normal}, time_step: {dt:e}),
                       materials: [(name: \"m\", friction: 0.0, density: {DENSITY},
                                    young_modulus: {E}, poisson_ratio: {NU}, restitution: {e})],
                       spheres: [Sphere(pos: (0, 0, {}), radius: {R}, velocity: (0, 0, -{v}))],
                       boundaries: [Plane(point: (0, 0, 0), normal: (0, 0, 1))])",
                    R + 1e-5
                );
                let got = impact(&text, dt, v);
                out.push(check(
                    "restitution",
                    format!("{normal}, set e = {e}, impact at {v} m/s: restitution"),
                    got.restitution,
                    e,
                    0.02 * e,
                    "",
                ));
            }
        }
    }
    out
}

/// The brick of Fang & Negrut 2020, §4.1 (m = 1 kg, μ_s = 0.25, μ_k = 0.2,
/// K_E = 1e5 N/m, K_D = 2√(m K_E) = 632, g = 9.8) on a plane inclined by
/// α: at α = 0.18 rad < atan μ_s it sticks (it creeps by the spring's
/// micro-deflection, micrometres, and stops); at α = 0.25 rad > atan μ_s it
/// slides at g (sin α − μ_k cos α) = 0.5255 m/s², within 1 %. The brick
/// is a 10 cm cube on four corner contacts (Hooke, 10⁷ N/m), each with a
/// quarter of the paper's K_E, so the four springs together are its K_E.
fn brick_on_incline() -> Vec<Check> {
    let mut out = Vec::new();
    for (alpha, sliding) in [(0.18f64, false), (0.25, true)] {
        let n = DVec3::new(-alpha.sin(), 0.0, alpha.cos());
        let down = DVec3::new(-alpha.cos(), 0.0, -alpha.sin());
        let q = glam::DQuat::from_rotation_y(-alpha);
        // Resting on its corners at the overlap that carries its weight.
        let pos = n * (0.05 - 9.8 * alpha.cos() / (4.0 * 1e7));
        let text = format!(
            "Scene(version: 1, time_step: 1e-3, duration: 1.0, gravity: (0, 0, -9.8),
               formulation: Penalty(normal: Hooke(stiffness: 1e7)),
               materials: [(name: \"m\", friction: 0.25, static_friction: 0.25,
                            kinetic_friction: 0.2, slide_stiffness: 2.5e4, density: 1000.0)],
               spheres: [Body(shape: Box(half_extents: (0.05, 0.05, 0.05)), pos: ({}, 0, {}),
                              rot: (w: {}, x: {}, y: {}, z: {}))],
               boundaries: [Plane(point: (0, 0, 0), normal: ({}, 0, {}))])",
            pos.x, pos.z, q.w, q.x, q.y, q.z, n.x, n.z
        );
        let mut w = world(&text);
        let mut st = Stepper::new();
        let x0 = w.state.bodies.pos[0];
        let mut samples = Vec::new();
        for k in 0..1000 {
            steps_of(&mut w, &mut st, 1);
            if k >= 200 {
                samples.push((w.state.time, w.state.bodies.vel[0].dot(down)));
            }
        }
        let travel = (w.state.bodies.pos[0] - x0).dot(down);
        let c = "brick_on_incline";
        if sliding {
            let expected = 9.8 * (alpha.sin() - 0.2 * alpha.cos());
            out.push(check(
                c,
                format!("α = {alpha} rad > atan μ_s: acceleration down the slope"),
                slope(&samples),
                expected,
                0.01 * expected,
                "m/s²",
            ));
        } else {
            out.push(check(
                c,
                format!("α = {alpha} rad < atan μ_s: creep down the slope in 1 s"),
                travel,
                0.0,
                1e-4,
                "m",
            ));
            out.push(check(
                c,
                format!("α = {alpha} rad < atan μ_s: speed at 1 s"),
                w.state.bodies.vel[0].length(),
                0.0,
                1e-4,
                "m/s",
            ));
        }
    }
    out
}

/// The least-squares slope of (t, v) samples.
fn slope(samples: &[(f64, f64)]) -> f64 {
    let nn = samples.len() as f64;
    let (mt, mv) = samples
        .iter()
        .fold((0.0, 0.0), |a, s| (a.0 + s.0 / nn, a.1 + s.1 / nn));
    let (num, den) = samples.iter().fold((0.0, 0.0), |a, s| {
        (a.0 + (s.0 - mt) * (s.1 - mv), a.1 + (s.0 - mt).powi(2))
    });
    num / den
}

/// A sphere of Fang & Negrut 2020, §4.3–4.4 (R = 0.2 m, m = 5 kg,
/// μ_s = 0.25, μ_k = 0.2, K_E = 10⁵ N/m, g = 9.8) on a floor, Hooke normal
/// force.
fn paper_sphere(velocity: &str, omega: &str, roll_eta: f64, spin_eta: f64) -> World {
    let density = 5.0 / (4.0 / 3.0 * std::f64::consts::PI * 0.2f64.powi(3));
    world(&format!(
        "Scene(version: 1, time_step: 1e-3, duration: 8.0, gravity: (0, 0, -9.8),
           formulation: Penalty(normal: Hooke(stiffness: 1e6)),
           materials: [(name: \"m\", friction: 0.25, static_friction: 0.25, kinetic_friction: 0.2,
                        slide_stiffness: 1e5, roll_eta: {roll_eta}, spin_eta: {spin_eta},
                        density: {density})],
           spheres: [Sphere(pos: (0, 0, {}), radius: 0.2, velocity: {velocity},
                            angular_velocity: {omega})],
           boundaries: [Plane(point: (0, 0, 0), normal: (0, 0, 1))])",
        0.2 - 5.0 * 9.8 / 1e6
    ))
}

/// Fang & Negrut 2020, §4.4: the sphere spinning at 1 rad/s about the
/// vertical with η_ψ = 0.006 slows under the constant kinetic spin torque
/// μ_k N η_ψ R = 0.01176 N m, so at 0.147 rad/s² (I = 0.08 kg m²), and
/// stops after 6.80 s, where it stays.
fn spinning_sphere() -> Vec<Check> {
    let mut w = paper_sphere("(0, 0, 0)", "(0, 0, 1)", 0.0, 0.006);
    let mut st = Stepper::new();
    let mut samples = Vec::new();
    let mut stop = f64::NAN;
    for _ in 0..8000 {
        steps_of(&mut w, &mut st, 1);
        let wz = w.state.bodies.omega[0].z;
        if (1.0..=5.0).contains(&w.state.time) {
            samples.push((w.state.time, wz));
        }
        if stop.is_nan() && wz <= 1e-3 {
            stop = w.state.time;
        }
    }
    let torque = 0.2 * 49.0 * 0.006 * 0.2;
    let expected = torque / 0.08;
    let c = "spinning_sphere";
    vec![
        check(
            c,
            "spin deceleration from 1 s to 5 s (μ_k N η_ψ R / I)",
            -slope(&samples),
            expected,
            0.01 * expected,
            "rad/s²",
        ),
        check(
            c,
            "time to stop spinning",
            stop,
            1.0 / expected,
            0.02 / expected,
            "s",
        ),
        check(
            c,
            "spin at 8 s",
            w.state.bodies.omega[0].z,
            0.0,
            1e-3,
            "rad/s",
        ),
    ]
}

/// Fang & Negrut 2020, §4.3, phase II on the level: the sphere rolling at
/// 0.5 m/s with η_r = 0.3 rolls without slip (the slide stays static) under
/// the kinetic roll torque 2 η_r R μ_k N, which slows it at
/// 2 η_r μ_k g / 1.4 = 0.84 m/s² (m a = −F, I α = F R − T, a = α R) until
/// it stops.
fn rolling_sphere() -> Vec<Check> {
    let mut w = paper_sphere("(0.5, 0, 0)", "(0, 2.5, 0)", 0.3, 0.0);
    let mut st = Stepper::new();
    let mut samples = Vec::new();
    let mut max_slip: f64 = 0.0;
    for _ in 0..500 {
        steps_of(&mut w, &mut st, 1);
        let (v, om) = (w.state.bodies.vel[0].x, w.state.bodies.omega[0].y);
        if (0.05..=0.5).contains(&w.state.time) {
            samples.push((w.state.time, v));
            max_slip = max_slip.max((v - om * 0.2).abs());
        }
    }
    let expected = 2.0 * 0.3 * 0.2 * 9.8 / 1.4;
    let c = "rolling_sphere";
    vec![
        check(
            c,
            "deceleration while rolling (2 η_r μ_k g / 1.4)",
            -slope(&samples),
            expected,
            0.01 * expected,
            "m/s²",
        ),
        check(c, "slip speed v − ωR", max_slip, 0.0, 1e-3, "m/s"),
    ]
}

/// The steel of Fang & Negrut 2020, App. C (8000 kg/m³, E = 2·10¹¹ Pa,
/// ν = 0.3, K_E = 5·10⁶ N/m, μ_s = 0.25, μ_k = 0.2) on a rigid floor with
/// the Hertzian spin stiffness: the body `body` (a scene `spheres` entry
/// spinning about z, material 0) is run for `steps` steps of 1 ms, and the
/// spin torque −I dω/dt fitted over `window` (s) returned.
fn steel_spin_torque(body: &str, inertia: f64, steps: usize, window: (f64, f64)) -> f64 {
    let mut w = world(&format!(
        "Scene(version: 1, time_step: 1e-3, duration: 1.0, gravity: (0, 0, -9.8),
           formulation: Penalty(normal: Hertz, spinning: Hertz),
           materials: [
               (name: \"steel\", friction: 0.25, static_friction: 0.25, kinetic_friction: 0.2,
                slide_stiffness: 5e6, density: {STEEL_DENSITY}, young_modulus: {STEEL_E},
                poisson_ratio: {STEEL_NU}),
               (name: \"rigid\", friction: 0.25, static_friction: 0.25, kinetic_friction: 0.2,
                slide_stiffness: 5e6, young_modulus: 1e30, poisson_ratio: 0.0)],
           spheres: [{body}],
           boundaries: [Plane(point: (0, 0, 0), normal: (0, 0, 1), material: 1)])"
    ));
    let mut st = Stepper::new();
    let mut samples = Vec::new();
    for _ in 0..steps {
        steps_of(&mut w, &mut st, 1);
        if (window.0..=window.1).contains(&w.state.time) {
            samples.push((w.state.time, w.state.bodies.omega[0].z));
        }
    }
    -inertia * slope(&samples)
}

const STEEL_DENSITY: f64 = 8e3;
const STEEL_E: f64 = 2e11;
const STEEL_NU: f64 = 0.3;

/// Hertz's overlap δ and contact radius a = √(R δ) of a body of effective
/// radius `r_eff` pressed by `load` onto a rigid floor (E* = E/(1 − ν²)).
fn steel_contact(load: f64, r_eff: f64) -> (f64, f64) {
    let e_star = STEEL_E / (1.0 - STEEL_NU * STEEL_NU);
    let delta = (3.0 * load / (4.0 * e_star * r_eff.sqrt())).powf(2.0 / 3.0);
    (delta, (r_eff * delta).sqrt())
}

/// Fang & Negrut 2020, App. C / Table 5: with the Hertzian spin stiffness
/// the spin torque of a spinning steel sphere (the ellipsoid's volume:
/// R = 27.14 mm, 8000 kg/m³, E = 2·10¹¹ Pa, ν = 0.3, K_E = 5·10⁶ N/m) on a
/// rigid floor slides at a μ_k N / 2, a = √(R δ) the Hertz contact radius
/// (a = 8.47·10⁻⁵ m: 5.57·10⁻⁵ N m; Table 5's 6.96·10⁻⁵ N m is the static
/// peak a μ_s N / 2).
fn hertzian_spin() -> Vec<Check> {
    let r = (2e-5f64).cbrt();
    let m = 4.0 / 3.0 * std::f64::consts::PI * r.powi(3) * STEEL_DENSITY;
    let n_load = m * 9.8;
    let (delta, a) = steel_contact(n_load, r);
    let torque = steel_spin_torque(
        &format!(
            "Sphere(pos: (0, 0, {}), radius: {r}, angular_velocity: (0, 0, 1), material: 0)",
            r - delta
        ),
        0.4 * m * r * r,
        1000,
        (0.2, 0.8),
    );
    let expected = 0.5 * a * 0.2 * n_load;
    vec![check(
        "hertzian_spin",
        format!("kinetic spin torque (a μ_k N / 2, a = {a:.3e} m)"),
        torque,
        expected,
        0.01 * expected,
        "N m",
    )]
}

/// The steady motion of a sphere on an incline (Fang & Negrut 2020,
/// Table 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Motion {
    /// At rest.
    Stationary,
    /// Rolling without slip, v = ωR.
    PureRolling,
    /// Sliding without turning, like a brick.
    PureSliding,
    /// Rolling with slip, v > ωR > 0.
    RollingWithSlip,
}

/// μ_s and μ_k of `scenes/penalty_incline.ron`.
pub const INCLINE_MU: (f64, f64) = (0.25, 0.2);

/// The borders of Fang & Negrut 2020, App. D, for the sphere released at
/// rest on an incline of `alpha`: stationary iff tan α ≤ 2 η_r μ_s; else
/// rolling without slip iff tan α ≤ 3.5 μ_s − 5 η_r μ_k; else sliding like
/// a brick iff η_r ≥ 0.5 (§4.3: "when η_r ≥ 0.5 … like a brick"; the
/// appendix's text ends before this border), else rolling with slip. Also
/// the distance, in grid steps (`dalpha`, `deta`), to the nearest border.
pub fn expected_motion(alpha: f64, eta: f64, dalpha: f64, deta: f64) -> (Motion, f64) {
    let (mu_s, mu_k) = INCLINE_MU;
    let t = alpha.tan();
    let a_stat = (2.0 * eta * mu_s).atan();
    let a_roll = (3.5 * mu_s - 5.0 * eta * mu_k).atan();
    let motion = if t <= 2.0 * eta * mu_s {
        Motion::Stationary
    } else if t <= 3.5 * mu_s - 5.0 * eta * mu_k {
        Motion::PureRolling
    } else if eta >= 0.5 {
        Motion::PureSliding
    } else {
        Motion::RollingWithSlip
    };
    // Distances to each border line, in grid steps along α (the borders in
    // α at this η) and along η (the sliding border, and the α borders'
    // η at this α).
    let eta_stat = t / (2.0 * mu_s);
    let eta_roll = (3.5 * mu_s - t) / (5.0 * mu_k);
    let d = [
        ((alpha - a_stat) / dalpha)
            .abs()
            .min(((eta - eta_stat) / deta).abs()),
        ((alpha - a_roll) / dalpha)
            .abs()
            .min(((eta - eta_roll) / deta).abs()),
        ((eta - 0.5) / deta).abs(),
    ];
    (motion, d.iter().copied().fold(f64::INFINITY, f64::min))
}

/// `scenes/penalty_incline.ron`: the paper's sphere released at rest on an
/// incline of `alpha` with rolling resistance `eta`, classified after 1 s.
pub fn motion_on_incline(alpha: f64, eta: f64) -> Motion {
    let n = DVec3::new(-alpha.sin(), 0.0, alpha.cos());
    let down = DVec3::new(-alpha.cos(), 0.0, -alpha.sin());
    let pos = n * (0.2 - 5.0 * 9.8 * alpha.cos() / 1e6);
    let set = |k: &str, v: f64| (k.to_string(), format!("{v:e}"));
    let scene = Scene::from_str(
        INCLINE,
        "scenes/penalty_incline.ron",
        &[
            set("spheres.0.pos.0", pos.x),
            set("spheres.0.pos.2", pos.z),
            set("boundaries.0.normal.0", n.x),
            set("boundaries.0.normal.2", n.z),
            set("materials.0.roll_eta", eta),
        ],
    )
    .unwrap_or_else(|e| panic!("scenes/penalty_incline.ron: {e:#}"));
    let mut w = scene.build_quietly().expect("the incline scene builds");
    let mut st = Stepper::new();
    steps_of(&mut w, &mut st, 1000);
    let v = w.state.bodies.vel[0].dot(down);
    // Rolling down the slope turns the sphere about n × down.
    let spin = w.state.bodies.omega[0].dot(n.cross(down)) * 0.2;
    let tol = 1e-3;
    if v.abs() < tol && spin.abs() < tol {
        Motion::Stationary
    } else if (v - spin).abs() < tol * v.max(1.0) {
        Motion::PureRolling
    } else if spin.abs() < tol {
        Motion::PureSliding
    } else {
        Motion::RollingWithSlip
    }
}

/// Fang & Negrut 2020, §4.3 / App. D: over 16 slopes (2.5°…40°) × 10
/// rolling resistances (η_r = 0.06…0.6), the share of the cases more than
/// one grid step from a border whose motion is the borders' (≥ 95 % asked:
/// checked as 1 within 0.05), and that the grid reaches all four motions.
fn incline_phases() -> Vec<Check> {
    let (dalpha, deta) = (2.5f64.to_radians(), 0.06);
    let (mut agree, mut total) = (0, 0);
    let mut seen = std::collections::BTreeSet::new();
    for i in 1..=16 {
        let alpha = i as f64 * dalpha;
        for j in 1..=10 {
            let eta = j as f64 * deta;
            let (want, dist) = expected_motion(alpha, eta, dalpha, deta);
            if dist <= 1.0 {
                continue;
            }
            total += 1;
            seen.insert(want);
            if motion_on_incline(alpha, eta) == want {
                agree += 1;
            }
        }
    }
    let c = "incline_phases";
    vec![
        check(
            c,
            format!("share of {total} cases off the borders moving as App. D says"),
            agree as f64 / total.max(1) as f64,
            1.0,
            0.05,
            "",
        ),
        check(
            c,
            "motions of Table 2 reached by the grid",
            seen.len() as f64,
            4.0,
            0.0,
            "",
        ),
    ]
}

/// `scenes/penalty_disk.ron` (the disk of Fang & Negrut 2020, §4.2,
/// launched at 5 m/s) with the `rolling` model given: (time, |v|, ω) after
/// each 1 ms step for `seconds`.
pub fn disk(rolling: &str, seconds: f64) -> Vec<(f64, f64, DVec3)> {
    let text = DISK.replace("rolling: Tracked", &format!("rolling: {rolling}"));
    let mut w = world(&text);
    let mut st = Stepper::new();
    let n = (seconds / 1e-3).round() as usize;
    (0..n)
        .map(|_| {
            steps_of(&mut w, &mut st, 1);
            (
                w.state.time,
                w.state.bodies.vel[0].length(),
                w.state.bodies.omega[0],
            )
        })
        .collect()
}

/// Fang & Negrut 2020, §4.2 / Fig. 10: the disk slides, rolls, and comes to
/// rest under either rolling model; at rest the tracked model's torque goes
/// to zero and the disk stays still (|ω| below 10⁻⁶ rad/s over the last
/// second), while the legacy constant torque (App. A.2 eq. 8, μ_r = 0.1)
/// keeps flipping the disk's spin: ω never settles (above 10⁻⁴ rad/s on
/// most steps of the last second, checked as a share of 1 within 0.5).
fn disk_at_rest() -> Vec<Check> {
    let mut out = Vec::new();
    let c = "disk_at_rest";
    for (rolling, chatters) in [
        ("Tracked", false),
        ("ConstantTorque(coefficient: 0.1)", true),
    ] {
        let run = disk(rolling, 8.0);
        let last: Vec<_> = run.iter().filter(|s| s.0 > 7.0).collect();
        let speed = last.iter().fold(0.0f64, |a, s| a.max(s.1.abs()));
        let spin = last.iter().fold(0.0f64, |a, s| a.max(s.2.length()));
        let moving = last.iter().filter(|s| s.2.length() > 1e-4).count();
        out.push(check(
            c,
            format!("{rolling}: largest speed over the last second"),
            speed,
            0.0,
            1e-3,
            "m/s",
        ));
        if chatters {
            out.push(check(
                c,
                format!("{rolling}: share of the last second's steps with |ω| > 1e-4 (chatter)"),
                moving as f64 / last.len() as f64,
                1.0,
                0.5,
                "",
            ));
        } else {
            out.push(check(
                c,
                format!("{rolling}: largest |ω| over the last second"),
                spin,
                0.0,
                1e-6,
                "rad/s",
            ));
        }
    }
    out
}

const STACK: &str = include_str!("../../scenes/penalty_stack.ron");

/// The stack of Fang & Negrut 2020, §4.6 (`scenes/penalty_stack.ron`): its
/// radius (m), its μ_s and the top sphere's start height (m).
pub const STACK_R: f64 = 0.15;
/// μ_s of the stack's spheres.
pub const STACK_MU_S: f64 = 0.3;
const STACK_TOP_Z: f64 = 0.39544602;

/// Whether the stack of `scenes/penalty_stack.ron` with rolling resistance
/// η_r = `eta` (under `Complementarity`: ρ = 2 η_r μ_s R, the cap of the
/// floor contact's roll torque in the penalty model) and a top sphere of
/// `m_top` kg collapses within 3 s: the top sphere has dropped by more
/// than R/2, or still moves (above 1 mm/s) at the end.
pub fn stack_collapses(penalty: bool, eta: f64, m_top: f64) -> bool {
    let set = |k: &str, v: String| (k.to_string(), v);
    let mut sets = vec![
        set("spheres.2.mass", format!("{m_top:e}")),
        set("materials.0.roll_eta", format!("{eta:e}")),
        set(
            "materials.0.rolling",
            format!("{:e}", 2.0 * eta * STACK_MU_S * STACK_R),
        ),
    ];
    if !penalty {
        sets.push(set("formulation", "Complementarity".into()));
    }
    let scene = Scene::from_str(STACK, "scenes/penalty_stack.ron", &sets)
        .unwrap_or_else(|e| panic!("scenes/penalty_stack.ron: {e:#}"));
    let mut w = scene.build_quietly().expect("the stack scene builds");
    let mut st = Stepper::new();
    steps_of(&mut w, &mut st, 3000);
    let drop = STACK_TOP_Z - w.state.bodies.pos[2].z;
    drop > 0.5 * STACK_R || w.state.bodies.vel[2].length() > 1e-3
}

/// The smallest top mass (kg) at which the stack collapses, by bisection
/// on log m between `lo` (must stand) and `hi` (must fall) to a relative
/// width `rel`; `None` when `lo` falls or `hi` stands.
pub fn stack_critical_mass(penalty: bool, eta: f64, lo: f64, hi: f64, rel: f64) -> Option<f64> {
    if stack_collapses(penalty, eta, lo) || !stack_collapses(penalty, eta, hi) {
        return None;
    }
    let (mut lo, mut hi) = (lo, hi);
    while hi / lo > 1.0 + rel {
        let mid = (lo * hi).sqrt();
        if stack_collapses(penalty, eta, mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The rigid statics' bound on the stack's top mass when the bottom
/// spheres may only slide (rolling held, as at large η_r): with θ the
/// contacts' angle from the vertical (sin θ = 1.15 / 2), the top contacts'
/// friction at its most helpful (T = μ_s N) and the floor's within
/// μ_s (m g + W/2), equilibrium needs
/// W [(sin θ − μ cos θ) / (2 (cos θ + μ sin θ)) − μ/2] ≤ μ m g
/// (m = 1 kg the bottom spheres' mass): 18.37 kg for μ_s = 0.3. No static
/// state of rigid spheres carries more.
pub fn stack_sliding_bound() -> f64 {
    let mu = STACK_MU_S;
    let s = 1.15 / 2.0;
    let c = (1.0f64 - s * s).sqrt();
    let k = (s - mu * c) / (2.0 * (c + mu * s)) - mu / 2.0;
    mu * 1.0 / k
}

/// Fang & Negrut 2020, §4.5.2 / Table 5: a steel ellipsoid (a = b = 2 cm,
/// c = 5 cm, 8000 kg/m³, E = 2·10¹¹ Pa, ν = 0.3, K_E = 5·10⁶ N/m,
/// μ_s = 0.25, μ_k = 0.2, `spinning: Hertz`) spinning at 1 rad/s on a rigid
/// floor, upright (on the end of c) or flat (on the end of a): the contact's
/// curvature is the ellipsoid's mean curvature there (125 /m upright,
/// 29 /m flat), its Hertz radius a = √(δ/𝒦), and the kinetic spin torque
/// a μ_k N / 2 (Table 5's maxima are the static a μ_s N / 2: 4.63·10⁻⁵ and
/// 7.53·10⁻⁵ N m).
fn ellipsoid_spin() -> Vec<Check> {
    let (ra, rc) = (0.02f64, 0.05f64);
    let m = 4.0 / 3.0 * std::f64::consts::PI * ra * ra * rc * STEEL_DENSITY;
    let n_load = m * 9.8;
    let mut out = Vec::new();
    // (pose, curvature at the contact, its half height, spin inertia, rot).
    let flat_rot = glam::DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2);
    for (pose, kappa, half, inertia, rot) in [
        (
            "upright",
            rc / (ra * ra),
            rc,
            m * 2.0 * ra * ra / 5.0,
            glam::DQuat::IDENTITY,
        ),
        (
            "flat",
            0.5 * (ra / (ra * ra) + ra / (rc * rc)),
            ra,
            m * (ra * ra + rc * rc) / 5.0,
            flat_rot,
        ),
    ] {
        let (delta, a) = steel_contact(n_load, 1.0 / kappa);
        let torque = steel_spin_torque(
            &format!(
                "Body(shape: Ellipsoid(radii: ({ra}, {ra}, {rc})), pos: (0, 0, {}),
                      rot: (w: {}, x: {}, y: {}, z: {}), angular_velocity: (0, 0, 1), material: 0)",
                half - delta,
                rot.w,
                rot.x,
                rot.y,
                rot.z
            ),
            inertia,
            300,
            (0.05, 0.3),
        );
        out.push(check(
            "ellipsoid_spin",
            format!("{pose}: kinetic spin torque (a μ_k N / 2, 𝒦 = {kappa:.0} /m, a = {a:.3e} m)"),
            torque,
            0.5 * a * 0.2 * n_load,
            0.01 * 0.5 * a * 0.2 * n_load,
            "N m",
        ));
    }
    out
}

/// Fang & Negrut 2020, §4.5.1 / Table 4: an ellipsoid (m = 5 kg,
/// a = b = 0.2 m, c = 0.5 m, μ_s = 0.25, μ_k = 0.2, K_E = 10⁵ N/m,
/// η_r = 0.2, Hooke k_n = 10⁷ N/m) set upright on a floor and pushed at
/// 0.3 m/s falls over, rolls and comes to rest lying flat (the paper's
/// Fig. 14: flat and still at 3 s): at 4 s still, its centre at a above the
/// floor and its c axis horizontal within 3° (rolling resistance holds it
/// where it stops, a little short of the exact flat pose: 1.5° here).
fn ellipsoid_falls_flat() -> Vec<Check> {
    let density = 5.0 / (4.0 / 3.0 * std::f64::consts::PI * 0.2 * 0.2 * 0.5);
    let mut w = world(&format!(
        "Scene(version: 1, time_step: 1e-3, duration: 4.0, gravity: (0, 0, -9.8),
           formulation: Penalty(normal: Hooke(stiffness: 1e7)),
           materials: [(name: \"m\", friction: 0.25, static_friction: 0.25, kinetic_friction: 0.2,
                        slide_stiffness: 1e5, roll_eta: 0.2, density: {density})],
           spheres: [Body(shape: Ellipsoid(radii: (0.2, 0.2, 0.5)), pos: (0, 0, {}),
                          velocity: (0, 0.3, 0))],
           boundaries: [Plane(point: (0, 0, 0), normal: (0, 0, 1))])",
        0.5 - 5.0 * 9.8 / 1e7
    ));
    let mut st = Stepper::new();
    steps_of(&mut w, &mut st, 4000);
    let axis = w.state.bodies.rot[0] * DVec3::Z;
    let c = "ellipsoid_falls_flat";
    vec![
        check(
            c,
            "|c axis · vertical| at 4 s (0: lying flat)",
            axis.z.abs(),
            0.0,
            0.05,
            "",
        ),
        check(
            c,
            "centre height at 4 s (a less the overlap under its weight)",
            w.state.bodies.pos[0].z,
            0.2 - 5.0 * 9.8 / 1e7,
            1e-3,
            "m",
        ),
        check(
            c,
            "speed at 4 s",
            w.state.bodies.vel[0].length() + 0.2 * w.state.bodies.omega[0].length(),
            0.0,
            1e-3,
            "m/s",
        ),
    ]
}
