//! The README's phase diagram of seed 003 §4.3 (Fig. 12) under repose's
//! penalty formulation: the paper's sphere (`scenes/seed003_incline.ron`:
//! R = 0.2 m, 5 kg, μ_s = 0.25,
//! μ_k = 0.2, K_E = 10⁵ N/m, g = 9.8) released at rest on an incline of α
//! with rolling resistance η_r, classified after 1 s (Table 2), drawn over
//! App. D's borders tan α = 2 η_r μ_s, tan α = 3.5 μ_s − 5 η_r μ_k and
//! η_r = 0.5. `tests/penalty.rs` checks the same classification on a
//! coarser grid.
//!
//! ```text
//! cargo run --release --example incline_phases -- docs/figures
//! ```

use std::path::PathBuf;

use glam::DVec3;
use repose::render::{plot_lines, write_png, PlotOptions, Series};
use repose::scene::Scene;
use repose::step::Stepper;

const MU_S: f64 = 0.25;
const MU_K: f64 = 0.2;

/// Table 2's steady motions, in legend order.
const MOTIONS: [&str; 4] = ["stationary", "rolling", "sliding", "rolling + slip"];

/// The motion (an index into [`MOTIONS`]) after 1 s of
/// `scenes/seed003_incline.ron` at slope `alpha` and rolling resistance `eta`.
fn motion(alpha: f64, eta: f64) -> usize {
    let n = DVec3::new(-alpha.sin(), 0.0, alpha.cos());
    let down = DVec3::new(-alpha.cos(), 0.0, -alpha.sin());
    let pos = n * (0.2 - 5.0 * 9.8 * alpha.cos() / 1e6);
    let set = |k: &str, v: f64| (k.to_string(), format!("{v:e}"));
    let scene = Scene::load(
        std::path::Path::new("scenes/seed003_incline.ron"),
        &[
            set("spheres.0.pos.0", pos.x),
            set("spheres.0.pos.2", pos.z),
            set("boundaries.0.normal.0", n.x),
            set("boundaries.0.normal.2", n.z),
            set("materials.0.roll_eta", eta),
        ],
    )
    .unwrap_or_else(|e| panic!("run from the repository root: {e:#}"));
    let mut w = scene.build().expect("build");
    let mut st = Stepper::new();
    for k in 0..1000 {
        st.step(&mut w)
            .unwrap_or_else(|e| panic!("step {k}: {e:#}"));
    }
    let v = w.bodies.vel[0].dot(down);
    let spin = w.bodies.omega[0].dot(n.cross(down)) * 0.2;
    let tol = 1e-3;
    if v.abs() < tol && spin.abs() < tol {
        0
    } else if (v - spin).abs() < tol * v.max(1.0) {
        1
    } else if spin.abs() < tol {
        2
    } else {
        3
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("docs/figures"), PathBuf::from);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    // Points of each motion, separated by NaN so that they are not joined.
    let mut points: Vec<Vec<(f64, f64)>> = vec![Vec::new(); 4];
    for j in 1..=30 {
        let eta = 0.02 * j as f64;
        for i in 1..=40 {
            let deg = i as f64;
            let m = motion(deg.to_radians(), eta);
            points[m].push((eta, deg));
            points[m].push((f64::NAN, f64::NAN));
        }
    }
    let border = |f: &dyn Fn(f64) -> f64| -> Vec<(f64, f64)> {
        (0..=120)
            .map(|k| {
                let eta = 0.005 * k as f64;
                (eta, f(eta).atan().to_degrees())
            })
            .filter(|&(_, a)| (0.0..=40.0).contains(&a))
            .collect()
    };
    let mut series: Vec<Series> = MOTIONS
        .iter()
        .zip(&points)
        .map(|(name, p)| Series::new(*name, p))
        .collect();
    series.push(Series::new(
        "tan α = 2 η μs",
        &border(&|eta| 2.0 * eta * MU_S),
    ));
    series.push(Series::new(
        "tan α = 3.5 μs - 5 η μk",
        &border(&|eta| 3.5 * MU_S - 5.0 * eta * MU_K),
    ));
    series.push(Series::new("η = 0.5", &[(0.5, 0.0), (0.5, 40.0)]));
    let opts = PlotOptions {
        width: 1200,
        height: 720,
        title: "Seed 003 §4.3: a sphere released on an incline, after 1 s".into(),
        x_label: "rolling resistance η_r".into(),
        y_label: "incline α (deg)".into(),
    };
    let img = plot_lines(&series, &opts).unwrap_or_else(|e| panic!("plot: {e}"));
    let path = dir.join("incline_phases.png");
    write_png(&path, &img).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("wrote {}", path.display());
}
