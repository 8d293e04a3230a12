//! Built-in analytic validation cases: single spheres and small stacks whose
//! motion has a closed form. Each case builds a world, runs it, and returns
//! [`Check`]s (measured vs expected, with a tolerance). The test suite asserts
//! on them and `repose validate` prints them as a table.

pub mod penalty;

use glam::DVec3;

use crate::bodies::{Bodies, SphereInit};
use crate::boundary::{Boundary, Caps, Shape};
use crate::collision::NO_BODY;
use crate::material::{FrictionLaw, Material};
use crate::step::Stepper;
use crate::world::World;

/// g used by the cases (m/s²).
pub const G: f64 = 9.81;

/// One measured quantity against its analytic value.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// Case name.
    pub case: &'static str,
    /// What was measured.
    pub quantity: String,
    /// Measured value.
    pub measured: f64,
    /// Analytic value.
    pub expected: f64,
    /// Allowed absolute difference.
    pub tolerance: f64,
    /// Unit, for display.
    pub unit: &'static str,
}

impl Check {
    /// Whether |measured − expected| ≤ tolerance (and both are finite).
    pub fn passed(&self) -> bool {
        self.measured.is_finite() && (self.measured - self.expected).abs() <= self.tolerance
    }
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} measured {:.6e} {u}, expected {:.6e} {u} (tolerance ±{:.3e}, off by {:.3e})",
            self.case,
            self.quantity,
            self.measured,
            self.expected,
            self.tolerance,
            (self.measured - self.expected).abs(),
            u = self.unit
        )
    }
}

/// Makes the stepper (and so the backend) a case runs on.
pub type MakeStepper<'a> = &'a dyn Fn() -> Stepper;

/// A validation case: runs on steppers from the factory, returns its checks.
pub type Case = fn(MakeStepper) -> Vec<Check>;

/// The cases, by name.
pub fn cases() -> Vec<(&'static str, Case)> {
    vec![
        ("rest_on_plane", |m| {
            rest_on_floor(m, "rest_on_plane", Floor::Plane, 0.0, 0.0)
        }),
        ("rest_on_plane_rolling_spinning", |m| {
            rest_on_floor(
                m,
                "rest_on_plane_rolling_spinning",
                Floor::Plane,
                0.01,
                0.01,
            )
        }),
        ("rest_on_box_floor", |m| {
            rest_on_floor(m, "rest_on_box_floor", Floor::Box, 0.0, 0.0)
        }),
        ("rest_on_box_floor_rolling_spinning", |m| {
            rest_on_floor(
                m,
                "rest_on_box_floor_rolling_spinning",
                Floor::Box,
                0.01,
                0.01,
            )
        }),
        ("rest_on_cylinder_cap", |m| {
            rest_on_floor(m, "rest_on_cylinder_cap", Floor::CylinderCap, 0.0, 0.0)
        }),
        ("rest_on_cylinder_cap_rolling_spinning", |m| {
            rest_on_floor(
                m,
                "rest_on_cylinder_cap_rolling_spinning",
                Floor::CylinderCap,
                0.01,
                0.01,
            )
        }),
        ("slide_to_roll", slide_to_roll),
        ("sliding_lift_off_associated", sliding_lift_off_associated),
        ("sliding_stays_down_de_saxce", sliding_stays_down_de_saxce),
        ("rolling_floats_associated", rolling_floats_associated),
        ("rolling_resistance", rolling_resistance),
        ("rolling_without_resistance", rolling_without_resistance),
        ("incline_at_rest", |m| incline(m, "incline_at_rest", 0.8)),
        ("incline_rolling_down", |m| {
            incline(m, "incline_rolling_down", 2.0)
        }),
        ("spinning_friction", spinning_friction),
        ("column_reaction", column_reaction),
    ]
}

/// Runs every case on steppers from `mk`.
pub fn run_all(mk: MakeStepper) -> Vec<Check> {
    cases().into_iter().flat_map(|(_, f)| f(mk)).collect()
}

/// A stepper from the factory, with the world's solver tolerance raised to
/// what f32 can reach when the backend computes in f32.
fn stepper_for(mk: MakeStepper, w: &mut World, f32_max_iterations: usize) -> Stepper {
    let st = mk();
    if st.backend.is_f32() {
        w.model.solver.tolerance = w.model.solver.tolerance.max(F32_TOLERANCE);
        w.model.solver.max_iterations = w.model.solver.max_iterations.min(f32_max_iterations);
    }
    st
}

/// Iteration cap of the single-contact cases on f32 backends: the residual
/// reaches the f32 floor within tens of iterations there, and a step that
/// cannot reach it would spend the whole cap.
pub const F32_MAX_ITERATIONS: usize = 60;

/// Relative precision expected of the backend's arithmetic in the checks
/// that should hold exactly (1e-6 in f64, 1e-5 in f32).
fn precision(st: &Stepper) -> f64 {
    if st.backend.is_f32() {
        1e-5
    } else {
        1e-6
    }
}

/// The tightest relative residual the f32 backends are asked for.
pub const F32_TOLERANCE: f64 = 2e-6;

fn material(mu: f64, rho: f64, sigma: f64) -> Material {
    Material {
        name: "m".into(),
        friction: mu,
        rolling: rho,
        spinning: sigma,
        density: 1000.0,
        ..Default::default()
    }
}

/// A solid sphere of radius r and density 1000 at `pos`.
fn ball(pos: DVec3, r: f64, vel: DVec3, omega: DVec3) -> SphereInit {
    let mass = SphereInit::solid_mass(r, 1000.0);
    SphereInit {
        pos,
        radius: r,
        mass,
        inertia: SphereInit::solid_inertia(mass, r),
        vel,
        omega,
        material: 0,
    }
}

fn floor_plane() -> Boundary {
    Boundary {
        name: "floor".into(),
        shape: Shape::Plane { normal: DVec3::Z },
        origin: DVec3::ZERO,
        velocity: DVec3::ZERO,
        angular_velocity: DVec3::ZERO,
        start_time: 0.0,
        material: 0,
    }
}

fn floor_box(half: f64) -> Boundary {
    Boundary {
        name: "box".into(),
        shape: Shape::BoxContainer {
            half_extents: DVec3::splat(half),
            open_top: true,
        },
        origin: DVec3::new(0.0, 0.0, half),
        velocity: DVec3::ZERO,
        angular_velocity: DVec3::ZERO,
        start_time: 0.0,
        material: 0,
    }
}

/// A cup (cylinder closed at the bottom) whose bottom cap is the floor z = 0:
/// axis +z, radius and half length `half`.
fn floor_cup(half: f64) -> Boundary {
    Boundary {
        name: "cup".into(),
        shape: Shape::Cylinder {
            axis: DVec3::Z,
            radius: half,
            half_length: half,
            caps: Caps::Bottom,
        },
        origin: DVec3::new(0.0, 0.0, half),
        velocity: DVec3::ZERO,
        angular_velocity: DVec3::ZERO,
        start_time: 0.0,
        material: 0,
    }
}

/// Which floor z = 0 a resting-sphere case stands on.
#[derive(Clone, Copy)]
enum Floor {
    Plane,
    Box,
    CylinderCap,
}

/// One sphere on a floor, with a tight solver tolerance.
fn single(s: SphereInit, floor: Boundary, mat: Material, h: f64) -> World {
    let mut w = World::new(Bodies::from_inits(&[s]), vec![floor], vec![mat]);
    w.model.time_step = h;
    w.model.gravity = DVec3::new(0.0, 0.0, -G);
    w.model.solver.tolerance = 1e-10;
    w.model.solver.max_iterations = 500;
    w
}

/// Total contact force that boundaries exert on bodies, from the last step.
fn wall_force(st: &Stepper, h: f64) -> DVec3 {
    let p = st.last_problem();
    let g = st.last_impulses();
    (0..p.n_contacts())
        .filter(|&i| p.body_b[i] == NO_BODY)
        .map(|i| {
            let [n, u, w] = p.frame[i];
            // γ acts on B (the wall); the sphere gets the opposite.
            -(n * g[i][0] + u * g[i][1] + w * g[i][2]) / h
        })
        .sum()
}

fn rest_on_floor(
    mk: MakeStepper,
    case: &'static str,
    floor: Floor,
    rho: f64,
    sigma: f64,
) -> Vec<Check> {
    let r = 0.05;
    let h = 1e-3;
    let s = ball(DVec3::new(0.0, 0.0, r), r, DVec3::ZERO, DVec3::ZERO);
    let floor = match floor {
        Floor::Plane => floor_plane(),
        Floor::Box => floor_box(0.5),
        Floor::CylinderCap => floor_cup(0.5),
    };
    let mut w = single(s, floor, material(0.5, rho, sigma), h);
    let weight = s.mass * G;
    let mut st = stepper_for(mk, &mut w, F32_MAX_ITERATIONS);
    let tight = precision(&st);
    let mut max_sink: f64 = 0.0;
    let mut last_force = DVec3::ZERO;
    for _ in 0..1000 {
        st.step(&mut w).expect("finite");
        max_sink = max_sink.max(r - w.state.bodies.pos[0].z);
        last_force = wall_force(&st, h);
    }
    let p = w.state.bodies.pos[0];
    let force_tolerance = resting_force_tolerance(&st, &w, weight).max(tight * weight);
    vec![
        Check {
            case,
            quantity: "final height of centre".into(),
            measured: p.z,
            expected: r,
            tolerance: tight * r,
            unit: "m",
        },
        Check {
            case,
            quantity: "deepest sinking over 1 s".into(),
            measured: max_sink,
            expected: 0.0,
            tolerance: tight * r,
            unit: "m",
        },
        Check {
            case,
            quantity: "horizontal drift".into(),
            measured: p.truncate().length(),
            expected: 0.0,
            tolerance: 1e-9,
            unit: "m",
        },
        Check {
            case,
            quantity: "normal contact force".into(),
            measured: last_force.z,
            expected: weight,
            tolerance: force_tolerance,
            unit: "N",
        },
        Check {
            case,
            quantity: "final speed".into(),
            measured: w.state.bodies.vel[0].length() + w.state.bodies.omega[0].length() * r,
            expected: 0.0,
            tolerance: tight,
            unit: "m/s",
        },
    ]
}

/// How far a resting sphere's floor load may stray from its weight when
/// each step is solved only to the relative tolerance `tol`. A step stops
/// once its weighted residual ‖b_f ŷ‖ is at most tol ‖γ‖ (b_f the contact's
/// force-row scale), so the normal velocity after step k is off by
/// e_k ≤ ε = tol ‖γ‖ / b_f. The gap it leaves, h e_k, is taken back by the
/// next step's bias, so v_k = e_k − e_{k−1}, and the step's load
/// γ_k/h = m g + m (v_k − v_{k−1})/h = m g + m (e_k − 2 e_{k−1} + e_{k−2})/h
/// strays from the weight by at most 4 m ε / h. (On the f32 backends, whose
/// tolerance is [`F32_TOLERANCE`], this is about 5e-5 of the weight; in
/// f64 at 1e-10 it is far below the check's precision.)
fn resting_force_tolerance(st: &Stepper, w: &World, weight: f64) -> f64 {
    let p = st.last_problem();
    let mut scales = Vec::new();
    crate::problem::Delassus::jacobi_scales(&crate::problem::BodyDelassus::new(p), &mut scales);
    let b_f = scales.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
    let gamma = weight * w.model.time_step;
    let m = 1.0 / w.state.bodies.inv_mass[0];
    let eps = w.model.solver.tolerance * gamma / b_f;
    4.0 * m * eps / w.model.time_step
}

/// Slip speed of a sphere on a floor z = 0: |v + ω × (−R ẑ)| (horizontal),
/// R the lever arm from the centre to the contact point.
fn slip(v: DVec3, w: DVec3, r: f64) -> f64 {
    (v + w.cross(DVec3::new(0.0, 0.0, -r))).truncate().length()
}

fn slide_to_roll(mk: MakeStepper) -> Vec<Check> {
    let case = "slide_to_roll";
    let (r, v0, mu, h) = (0.05, 1.0, 0.3, 1e-4);
    let s = ball(
        DVec3::new(0.0, 0.0, r),
        r,
        DVec3::new(v0, 0.0, 0.0),
        DVec3::ZERO,
    );
    let mut w = single(s, floor_plane(), material(mu, 0.0, 0.0), h);
    let mut st = stepper_for(mk, &mut w, F32_MAX_ITERATIONS);
    let t_star = 2.0 * v0 / (7.0 * mu * G);
    let mut t_roll = f64::NAN;
    while w.state.time < 2.0 * t_star {
        st.step(&mut w).expect("finite");
        if t_roll.is_nan() && slip(w.state.bodies.vel[0], w.state.bodies.omega[0], r) < 1e-3 * v0 {
            t_roll = w.state.time;
        }
    }
    vec![
        Check {
            case,
            quantity: "time to rolling without slip, 2v0/(7μg)".into(),
            measured: t_roll,
            expected: t_star,
            tolerance: 0.02 * t_star,
            unit: "s",
        },
        Check {
            case,
            quantity: "rolling speed 5v0/7".into(),
            measured: w.state.bodies.vel[0].x,
            expected: 5.0 * v0 / 7.0,
            tolerance: 0.01 * v0,
            unit: "m/s",
        },
    ]
}

/// The sphere of the lift-off cases: R = 4 cm resting on a plane, sliding
/// at 3 m/s without spin, μ = 0.25, no rolling or spinning friction.
fn launched_ball(law: FrictionLaw, h: f64) -> (World, f64, f64, f64) {
    let (r, v0, mu) = (0.04, 3.0, 0.25);
    let s = ball(
        DVec3::new(0.0, 0.0, r),
        r,
        DVec3::new(v0, 0.0, 0.0),
        DVec3::ZERO,
    );
    let mut w = single(s, floor_plane(), material(mu, 0.0, 0.0), h);
    w.model.contact.friction_law = law;
    (w, r, v0, mu)
}

/// The associated law's lift-off (Tasora & Anitescu 2013, eq. 28):
/// complementarity makes the normal velocity after the step y_n = μ ‖y_T‖,
/// so a sphere that slides from resting contact is *launched* at μ times
/// its slip speed after the step, u⁺, and flies a ballistic arc of
/// 2 μ u⁺ / g. For a solid sphere one step's impulses give
/// u⁺ = (u₀ − (7/2) μ g h) / (1 + (7/2) μ²):
/// the friction impulse μ γ_n changes the slip by (1/m + R²/I) μ γ_n =
/// (7/2) μ γ_n / m, and γ_n = m (g h + μ u⁺). Neither the launch speed nor
/// the flight time vanishes as h → 0: the relaxation is not a small-h error.
/// Checked at two time steps a decade apart.
fn sliding_lift_off_associated(mk: MakeStepper) -> Vec<Check> {
    let case = "sliding_lift_off_associated";
    let mut out = Vec::new();
    for h in [1e-3, 1e-4] {
        let (mut w, r, v0, mu) = launched_ball(FrictionLaw::Associated, h);
        let mut st = stepper_for(mk, &mut w, F32_MAX_ITERATIONS);
        let tight = precision(&st);
        st.step(&mut w).expect("finite");
        let (v, om) = (w.state.bodies.vel[0], w.state.bodies.omega[0]);
        let slip_after = slip(v, om, r);
        let k = 3.5 * mu;
        let u_plus = (v0 - k * G * h) / (1.0 + k * mu);
        let launch = mu * u_plus;
        // Fly until the step that lands it: the first in which the floor's
        // impulse slows the fall (gravity alone takes g h off v_z each
        // step). The apex is the highest centre on the way.
        let t0 = w.state.time;
        let (mut apex, mut t_land) = (w.state.bodies.pos[0].z - r, f64::NAN);
        let mut vz_before = v.z;
        while t_land.is_nan() && w.state.time < t0 + 4.0 * launch / G {
            st.step(&mut w).expect("finite");
            apex = apex.max(w.state.bodies.pos[0].z - r);
            let vz = w.state.bodies.vel[0].z;
            if vz_before < 0.0 && vz > vz_before - 0.5 * G * h {
                t_land = w.state.time;
            }
            vz_before = vz;
        }
        // It lands on an open gap and is not launched again: it rides on
        // it, the gap after each step being h μ times the slip after it
        // (the slip at the contact point, which sits in the middle of the
        // step's starting gap Φ₀: lever arm R + Φ₀/2).
        for _ in 0..20 {
            st.step(&mut w).expect("finite");
        }
        let arm = r + 0.5 * (w.state.bodies.pos[0].z - r);
        st.step(&mut w).expect("finite");
        let ride_expected = h * mu * slip(w.state.bodies.vel[0], w.state.bodies.omega[0], arm);
        let ride = w.state.bodies.pos[0].z - r;
        out.extend([
            Check {
                case,
                quantity: format!("h = {h:e}: launch speed = μ × slip after the step"),
                measured: v.z,
                expected: mu * slip_after,
                tolerance: tight * v0,
                unit: "m/s",
            },
            Check {
                case,
                quantity: format!("h = {h:e}: launch speed μ (u₀ − 3.5 μ g h) / (1 + 3.5 μ²)"),
                measured: v.z,
                expected: launch,
                tolerance: tight * v0,
                unit: "m/s",
            },
            Check {
                case,
                quantity: format!("h = {h:e}: time in the air 2 μ u⁺ / g"),
                measured: t_land - t0,
                expected: 2.0 * launch / G,
                tolerance: 2.0 * h,
                unit: "s",
            },
            Check {
                case,
                quantity: format!("h = {h:e}: gap after landing, h μ × slip"),
                measured: ride,
                expected: ride_expected,
                // v_n = μ u − Φ₀/h is a difference of two numbers ~3,000×
                // larger than the gap's change: 10× the backend's precision.
                tolerance: 10.0 * tight * ride_expected,
                unit: "m",
            },
            Check {
                case,
                quantity: format!("h = {h:e}: apex (μ u⁺)² / (2 g)"),
                measured: apex,
                expected: launch * launch / (2.0 * G),
                tolerance: 0.01 * launch * launch / (2.0 * G) + launch * h,
                unit: "m",
            },
        ]);
    }
    out
}

/// The same sphere under De Saxcé's law (Acary & Bourrier 2021, eq. 63):
/// ŷ_n = y_n + μ ‖y_T‖ = 0 while it slides, so it is not launched and its
/// centre stays at R.
fn sliding_stays_down_de_saxce(mk: MakeStepper) -> Vec<Check> {
    let case = "sliding_stays_down_de_saxce";
    let h = 1e-3;
    let (mut w, r, v0, mu) = launched_ball(FrictionLaw::DeSaxce, h);
    let mut st = stepper_for(mk, &mut w, F32_MAX_ITERATIONS);
    let tight = precision(&st);
    st.step(&mut w).expect("finite");
    let launch = w.state.bodies.vel[0].z;
    let mut highest: f64 = 0.0;
    for _ in 0..50 {
        st.step(&mut w).expect("finite");
        highest = highest.max(w.state.bodies.pos[0].z - r);
    }
    vec![
        Check {
            case,
            quantity: format!(
                "launch speed (the associated law gives {:.3} m/s)",
                mu * v0 / (1.0 + 3.5 * mu * mu)
            ),
            measured: launch,
            expected: 0.0,
            tolerance: tight * v0,
            unit: "m/s",
        },
        Check {
            case,
            quantity: "highest centre above R over 50 steps".into(),
            measured: highest,
            expected: 0.0,
            tolerance: tight * r,
            unit: "m",
        },
    ]
}

/// The rolling analogue of the lift-off: under the associated law a contact
/// that rolls with ω_R has y_n = ρ ‖ω_R‖. When ρ ‖ω_R‖ < g h gravity brings
/// the sphere back within one step and it rides on a gap of h ρ ‖ω_R‖
/// instead of flying (larger ρ ‖ω_R‖ launches it at that speed, as sliding
/// does). The gap is checked against h ρ |ω| at the sphere's own spin after
/// 0.2 s of rolling resistance.
fn rolling_floats_associated(mk: MakeStepper) -> Vec<Check> {
    let case = "rolling_floats_associated";
    let (r, v0, rho, h) = (0.05, 0.5, 0.002, 5e-3);
    let s = ball(
        DVec3::new(0.0, 0.0, r),
        r,
        DVec3::new(v0, 0.0, 0.0),
        DVec3::new(0.0, v0 / r, 0.0),
    );
    let mut w = single(s, floor_plane(), material(0.8, rho, 0.0), h);
    let mut st = stepper_for(mk, &mut w, F32_MAX_ITERATIONS);
    let tight = precision(&st);
    while w.state.time < 0.2 - 0.5 * h {
        st.step(&mut w).expect("finite");
    }
    let spin = w.state.bodies.omega[0].length();
    vec![Check {
        case,
        quantity: format!("gap under a sphere rolling at {spin:.3} rad/s, h ρ |ω| (ρ |ω| < g h)"),
        measured: w.state.bodies.pos[0].z - r,
        expected: h * rho * spin,
        tolerance: 0.01 * h * rho * spin + tight * r,
        unit: "m",
    }]
}

fn rolling_ball(rho: f64) -> (World, f64, f64) {
    let (r, v0, h) = (0.05, 0.5, 1e-3);
    let s = ball(
        DVec3::new(0.0, 0.0, r),
        r,
        DVec3::new(v0, 0.0, 0.0),
        DVec3::new(0.0, v0 / r, 0.0),
    );
    (single(s, floor_plane(), material(0.8, rho, 0.0), h), r, v0)
}

fn rolling_resistance(mk: MakeStepper) -> Vec<Check> {
    let case = "rolling_resistance";
    let rho = 0.002;
    let (mut w, r, v0) = rolling_ball(rho);
    // Uniform deceleration (5/7) ρ g / R (Tasora & Anitescu 2013, §6.1,
    // sphere instead of disk).
    let a = 5.0 / 7.0 * rho * G / r;
    let t_stop = v0 / a;
    let d_stop = v0 * v0 / (2.0 * a);
    let mut st = stepper_for(mk, &mut w, F32_MAX_ITERATIONS);
    let tight = precision(&st);
    let mut v_half = f64::NAN;
    while w.state.time < 1.5 * t_stop {
        st.step(&mut w).expect("finite");
        if v_half.is_nan() && w.state.time >= 0.5 * t_stop {
            v_half = w.state.bodies.vel[0].x;
        }
    }
    vec![
        Check {
            case,
            quantity: "speed at half the stopping time".into(),
            measured: v_half,
            expected: 0.5 * v0,
            tolerance: 0.01 * v0,
            unit: "m/s",
        },
        Check {
            case,
            quantity: "stopping distance 7 R v0²/(10 ρ g)".into(),
            measured: w.state.bodies.pos[0].x,
            expected: d_stop,
            tolerance: 0.01 * d_stop,
            unit: "m",
        },
        Check {
            case,
            quantity: "final speed".into(),
            measured: w.state.bodies.vel[0].length(),
            expected: 0.0,
            tolerance: tight,
            unit: "m/s",
        },
    ]
}

fn rolling_without_resistance(mk: MakeStepper) -> Vec<Check> {
    let case = "rolling_without_resistance";
    let (mut w, _r, v0) = rolling_ball(0.0);
    let mut st = stepper_for(mk, &mut w, F32_MAX_ITERATIONS);
    let tight = precision(&st);
    while w.state.time < 1.0 {
        st.step(&mut w).expect("finite");
    }
    vec![Check {
        case,
        quantity: "speed after 1 s with ρ = 0".into(),
        measured: w.state.bodies.vel[0].x,
        expected: v0,
        tolerance: tight * v0,
        unit: "m/s",
    }]
}

/// A sphere on a plane under gravity tilted by α (equivalent to an incline),
/// with tan α = `ratio` × ρ/R.
fn incline(mk: MakeStepper, case: &'static str, ratio: f64) -> Vec<Check> {
    let (r, rho, h) = (0.05, 0.005, 1e-3);
    let alpha = (ratio * rho / r).atan();
    let s = ball(DVec3::new(0.0, 0.0, r), r, DVec3::ZERO, DVec3::ZERO);
    let mut w = single(s, floor_plane(), material(1.0, rho, 0.0), h);
    w.model.gravity = DVec3::new(G * alpha.sin(), 0.0, -G * alpha.cos());
    let mut st = stepper_for(mk, &mut w, F32_MAX_ITERATIONS);
    let t_end = 1.0;
    while w.state.time < t_end - 0.5 * h {
        st.step(&mut w).expect("finite");
    }
    let a = if ratio <= 1.0 {
        0.0
    } else {
        5.0 / 7.0 * G * (alpha.sin() - rho / r * alpha.cos())
    };
    let quantity = if ratio <= 1.0 {
        format!("speed after 1 s at tan α = {ratio} ρ/R (stays at rest)")
    } else {
        format!("speed after 1 s at tan α = {ratio} ρ/R, (5/7) g (sin α − (ρ/R) cos α) t")
    };
    vec![Check {
        case,
        quantity,
        measured: w.state.bodies.vel[0].x,
        expected: a * w.state.time,
        tolerance: 1e-3 * (a * w.state.time).max(1.0),
        unit: "m/s",
    }]
}

fn spinning_friction(mk: MakeStepper) -> Vec<Check> {
    let case = "spinning_friction";
    let (r, sigma, w0, h) = (0.05, 0.002, 10.0, 1e-3);
    let s = ball(
        DVec3::new(0.0, 0.0, r),
        r,
        DVec3::ZERO,
        DVec3::new(0.0, 0.0, w0),
    );
    let mut w = single(s, floor_plane(), material(0.5, 0.0, sigma), h);
    // I ω̇ = −σ m g  ⇒  T = I ω0 / (σ m g) = 0.4 R² ω0 / (σ g).
    let t_stop = 0.4 * r * r * w0 / (sigma * G);
    let mut st = stepper_for(mk, &mut w, F32_MAX_ITERATIONS);
    let mut t_measured = f64::NAN;
    while w.state.time < 1.5 * t_stop {
        st.step(&mut w).expect("finite");
        if t_measured.is_nan() && w.state.bodies.omega[0].z <= 1e-9 {
            t_measured = w.state.time;
        }
    }
    vec![Check {
        case,
        quantity: "spin stopping time 0.4 R² ω0 / (σ g)".into(),
        measured: t_measured,
        expected: t_stop,
        tolerance: 0.01 * t_stop + 2.0 * h,
        unit: "s",
    }]
}

fn column_reaction(mk: MakeStepper) -> Vec<Check> {
    let case = "column_reaction";
    let (r, h, n) = (0.02, 1e-3, 8);
    let inits: Vec<SphereInit> = (0..n)
        .map(|k| {
            let x = 0.002 * ((k * 7919) % 5) as f64 - 0.004;
            ball(
                DVec3::new(x, 0.0, r + 2.0 * r * k as f64 + 0.001 * k as f64),
                r,
                DVec3::ZERO,
                DVec3::ZERO,
            )
        })
        .collect();
    let mass: f64 = inits.iter().map(|s| s.mass).sum();
    let mut w = World::new(
        Bodies::from_inits(&inits),
        vec![Boundary {
            name: "box".into(),
            shape: Shape::BoxContainer {
                half_extents: DVec3::new(1.2 * r, 1.2 * r, 10.0 * r * n as f64),
                open_top: false,
            },
            origin: DVec3::new(0.0, 0.0, 10.0 * r * n as f64),
            velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
            start_time: 0.0,
            material: 0,
        }],
        vec![material(0.5, 0.001, 0.001)],
    );
    w.model.time_step = h;
    w.model.solver.tolerance = 1e-9;
    w.model.solver.max_iterations = 2000;
    // A stack needs many Jacobi iterations (information travels one contact
    // per iteration); it settles from its 1 mm gaps well within 0.5 s.
    let mut st = stepper_for(mk, &mut w, 1000);
    while w.state.time < 0.5 {
        st.step(&mut w).expect("finite");
    }
    let f = wall_force(&st, h);
    let weight = mass * G;
    vec![
        Check {
            case,
            quantity: "total vertical wall + floor reaction".into(),
            measured: f.z,
            expected: weight,
            tolerance: 1e-3 * weight,
            unit: "N",
        },
        Check {
            case,
            quantity: "total horizontal reaction".into(),
            measured: f.truncate().length(),
            expected: 0.0,
            tolerance: 1e-3 * weight,
            unit: "N",
        },
    ]
}
