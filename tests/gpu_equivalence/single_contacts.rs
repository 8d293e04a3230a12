//! Single contacts in every cone regime. (see the crate docs in `main.rs`).

use super::*;

/// Where the first Jacobi step from γ = 0 lands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Regime {
    /// Strictly inside the cone: the projection changes nothing.
    Inside,
    /// On the cone's surface with these blocks saturated (sliding, spinning,
    /// rolling), the others strictly inside.
    Saturated {
        sliding: bool,
        spinning: bool,
        rolling: bool,
    },
    /// In the polar cone: the contact separates, γ = 0.
    Polar,
}

/// How the contact is held.
#[derive(Clone, Copy, Debug)]
enum Geometry {
    /// One sphere against a kinematic wall (end B = wall, with a bias term).
    Wall,
    /// Two spheres of different sizes, both dynamic.
    Pair,
}

/// A one-contact problem whose first Jacobi step (ω = 1, γ₀ = 0) projects a
/// chosen point x = −B y. The projection works in the scaled coordinates
/// z = (x_f, r·x_t), r = √(b_f/b_t), on the cone (μ, r·σ, r·ρ); the point is
/// given there by its normal component `z0` and the lengths `lens` of its
/// sliding, spinning and rolling blocks (in fixed directions, not along the
/// axes), scaled to impulses of order 10⁻⁴ N s. The body velocities (and on
/// a wall half of the force rows, through the bias) are set so that the
/// twist is y = −x / b row by row, up to rounding.
fn single_contact(geom: Geometry, c: ConeCoeffs, z0: f64, lens: [f64; 3]) -> ContactProblem {
    let r_a: f64 = 0.01;
    let n = DVec3::new(0.3, -0.2, -1.0).normalize();
    let frame = tangent_frame(n);
    let mass_a = 4.0 / 3.0 * std::f64::consts::PI * r_a.powi(3) * 2500.0;
    let inertia_a = 0.4 * mass_a * r_a * r_a;
    let mut p = ContactProblem {
        body_a: vec![0],
        frame: vec![frame],
        arm_a: vec![n * r_a],
        cone: vec![c],
        bias: vec![[0.0; 6]],
        gap: vec![0.0],
        key: vec![0],
        inv_mass: vec![1.0 / mass_a],
        inv_inertia: vec![1.0 / inertia_a],
        ..Default::default()
    };
    match geom {
        Geometry::Wall => {
            p.body_b.push(NO_BODY);
            p.arm_b.push(DVec3::ZERO);
        }
        Geometry::Pair => {
            let r_b: f64 = 0.015;
            let mass_b = 4.0 / 3.0 * std::f64::consts::PI * r_b.powi(3) * 7800.0;
            p.body_b.push(1);
            p.arm_b.push(-n * r_b);
            p.inv_mass.push(1.0 / mass_b);
            p.inv_inertia.push(1.0 / (0.4 * mass_b * r_b * r_b));
        }
    }
    let nb = p.n_bodies();
    p.v_free = vec![DVec3::ZERO; nb];
    p.w_free = vec![DVec3::ZERO; nb];
    p.build_csr();
    let mut scales = Vec::new();
    BodyDelassus::new(&p).jacobi_scales(&mut scales);
    let (bf, bt) = scales[0];
    let r = (bf / bt).sqrt();
    // Block directions: fixed, not axis-aligned.
    let (a1, a3) = (0.7f64, -2.1f64);
    let z = [
        z0,
        lens[0] * a1.cos(),
        lens[0] * a1.sin(),
        -lens[1],
        lens[2] * a3.cos(),
        lens[2] * a3.sin(),
    ];
    // Physical size: impulses of order 10⁻⁴ N s (velocity changes of cm/s).
    let scale = 1e-4;
    let x: Vec6 = std::array::from_fn(|k| scale * if k < 3 { z[k] } else { z[k] / r });
    // y = −x / b per row (ω = 1).
    let y: Vec6 = std::array::from_fn(|k| -x[k] / if k < 3 { bf } else { bt });
    let [fn_, fu, fw] = frame;
    let yf = fn_ * y[0] + fu * y[1] + fw * y[2];
    let yt = fn_ * y[3] + fu * y[4] + fw * y[5];
    match geom {
        Geometry::Wall => {
            // Half of the force rows come from the bias (stabilisation and
            // wall velocity), half from the sphere's velocity:
            // y_f = −(v_A + ω_A × s_A)·R + b, y_t = −ω_A·R.
            p.bias[0][..3].copy_from_slice(&[0.5 * y[0], 0.5 * y[1], 0.5 * y[2]]);
            let w_a = -yt;
            p.w_free[0] = w_a;
            p.v_free[0] = -0.5 * yf - w_a.cross(p.arm_a[0]);
        }
        Geometry::Pair => {
            // A at rest; y_f = v_B + ω_B × s_B, y_t = ω_B.
            p.w_free[1] = yt;
            p.v_free[1] = yf - yt.cross(p.arm_b[0]);
        }
    }
    p
}

/// The regime of γ on the cone `c` (blocks saturated to 10⁻⁹ relative,
/// strictly inside by 10⁻³ relative, anything in between is ambiguous).
fn regime_of(g: &Vec6, c: &ConeCoeffs) -> Option<Regime> {
    let size = norm6(g);
    if size == 0.0 {
        return Some(Regime::Polar);
    }
    assert!(
        cone::is_inside(g, c, 1e-12),
        "γ = {g:?} is outside the cone {c:?}"
    );
    let blocks = [
        (c.mu, g[1].hypot(g[2])),
        (c.sigma, g[3].abs()),
        (c.rho, g[4].hypot(g[5])),
    ];
    let mut sat = [false; 3];
    for (k, &(mu, len)) in blocks.iter().enumerate() {
        let limit = mu * g[0];
        if (len - limit).abs() <= 1e-9 * limit {
            sat[k] = true;
        } else if len > limit * (1.0 - 1e-3) {
            return None;
        }
    }
    Some(if sat == [false; 3] {
        Regime::Inside
    } else {
        Regime::Saturated {
            sliding: sat[0],
            spinning: sat[1],
            rolling: sat[2],
        }
    })
}

/// Every regime: (name, z₀, block lengths as multiples of the scaled
/// coefficients (μ, rσ, rρ), expected regime). A block at 2× its limit with
/// z₀ = 1 is saturated (y₀ = (1 + Σ 2c²)/(1 + Σ c²) < 2); at 0.2× it stays
/// inside (y₀ ≥ 1 > 0.2).
fn regime_cases() -> Vec<(&'static str, f64, [f64; 3], Regime)> {
    let sat = |sliding, spinning, rolling| Regime::Saturated {
        sliding,
        spinning,
        rolling,
    };
    vec![
        ("inside", 1.0, [0.5, 0.5, 0.5], Regime::Inside),
        (
            "sliding face",
            1.0,
            [2.0, 0.2, 0.2],
            sat(true, false, false),
        ),
        (
            "spinning face",
            1.0,
            [0.2, 2.0, 0.2],
            sat(false, true, false),
        ),
        (
            "rolling face",
            1.0,
            [0.2, 0.2, 2.0],
            sat(false, false, true),
        ),
        (
            "sliding+spinning edge",
            1.0,
            [2.0, 2.0, 0.2],
            sat(true, true, false),
        ),
        (
            "sliding+rolling edge",
            1.0,
            [2.0, 0.2, 2.0],
            sat(true, false, true),
        ),
        (
            "spinning+rolling edge",
            1.0,
            [0.2, 2.0, 2.0],
            sat(false, true, true),
        ),
        (
            "all three saturated",
            1.0,
            [2.0, 2.0, 2.0],
            sat(true, true, true),
        ),
        ("polar (separating)", -1.0, [0.1, 0.1, 0.1], Regime::Polar),
    ]
}

fn assert_single_contacts_in_every_regime(mut solver: Solver32) {
    let c = ConeCoeffs {
        mu: 0.5,
        rho: 0.002,
        sigma: 0.001,
    };
    for geom in [Geometry::Wall, Geometry::Pair] {
        for (name, z0, mult, want) in regime_cases() {
            // Lengths relative to the scaled coefficients of this geometry.
            let probe = single_contact(geom, c, 1.0, [0.0; 3]);
            let mut scales = Vec::new();
            BodyDelassus::new(&probe).jacobi_scales(&mut scales);
            let r = (scales[0].0 / scales[0].1).sqrt();
            let lens = [mult[0] * c.mu, mult[1] * r * c.sigma, mult[2] * r * c.rho];
            let p = single_contact(geom, c, z0, lens);
            let what = format!("{geom:?} contact, {name}");

            // The regime, from the f64 reference's first step.
            let f64_1 = solve_f64(&p, &iterations(1));
            let g = f64_1.gamma[0];
            let got = regime_of(&g, &c);
            assert_eq!(
                got,
                Some(want),
                "{what}: the f64 first step γ = {g:?} is not in the intended regime"
            );
            if want == Regime::Polar {
                assert_eq!(g, [0.0; 6], "{what}: a separating contact must give γ = 0");
            }

            // The mirror's first step is the f64 one up to f32 rounding.
            let mirror_1 = Solver32::cpu_f32().solve(&p, &iterations(1));
            let f64_as_f32 = [g.map(|v| v as f32)];
            assert_impulses_close(
                &format!("{what}, cpu-f32 vs f64, 1 iteration"),
                &mirror_1.gamma,
                &f64_as_f32,
                F32_REL,
            );

            assert_matches_mirror(&what, &mut solver, &p, 50);
        }
    }
}

for_each_f32_solver! {
    /// Property 1: hand-built single contacts (sphere on a wall, two
    /// spheres) whose first step lands inside the cone, on each face, on each
    /// edge, on the three-face corner and in the polar cone: the regime is
    /// checked on the f64 result, then the solver matches the mirror after 1
    /// and after 50 iterations.
    single_contact_regimes => assert_single_contacts_in_every_regime;
}
