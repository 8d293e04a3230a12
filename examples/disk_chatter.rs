//! The README's chatter plot (seed 003 §4.2, Fig. 10): the paper's disk
//! (m = 5 kg, R = 0.2 m, I = 0.1 kg m², η_r = 0.4, μ_s = 0.25, μ_k = 0.2,
//! K_E = 10⁵ N/m) launched at 5 m/s comes to rest; afterwards, under the
//! legacy constant rolling torque (App. A.2 eq. 8, μ_r = 0.1) its spin
//! flips sign every step, under seed 003's tracked model it stays zero.
//! `tests/penalty.rs` asserts the same.
//!
//! ```text
//! cargo run --release --example disk_chatter -- docs/figures
//! ```

use std::path::PathBuf;

use glam::DVec3;
use repose::render::{plot_lines, write_png, PlotOptions, Series};
use repose::scene::Scene;
use repose::step::Stepper;

/// (time, ω) after each 1 ms step of 8 s under `rolling`.
fn disk(rolling: &str) -> Vec<(f64, DVec3)> {
    let density = 5.0 / (std::f64::consts::PI * 0.04 * 0.02);
    let text = format!(
        "Scene(version: 1, time_step: 1e-3, duration: 8.0, gravity: (0, 0, -9.8),
           formulation: Penalty(normal: Hooke(stiffness: 1e6), rolling: {rolling}),
           materials: [(name: \"m\", friction: 0.25, static_friction: 0.25, kinetic_friction: 0.2,
                        slide_stiffness: 1e5, roll_eta: 0.4, density: {density})],
           spheres: [Body(shape: Cylinder(radius: 0.2, half_height: 0.01),
                          pos: (0, 0, {}), rot: (0.7071067811865476, 0, 0, 0.7071067811865476),
                          velocity: (5, 0, 0), mass: 5.0, inertia: (0.0502, 0.0502, 0.1))],
           boundaries: [Plane(point: (0, 0, 0), normal: (0, 0, 1))])",
        0.2 - 24.5 / 1e6
    );
    let mut w = Scene::from_str(&text, "disk", &[])
        .and_then(|s| s.build())
        .unwrap_or_else(|e| panic!("scene: {e:#}"));
    let mut st = Stepper::new();
    (0..8000)
        .map(|k| {
            st.step(&mut w)
                .unwrap_or_else(|e| panic!("step {k}: {e:#}"));
            (w.time, w.bodies.omega[0])
        })
        .collect()
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("docs/figures"), PathBuf::from);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let legacy = disk("ConstantTorque(coefficient: 0.1)");
    let tracked = disk("Tracked");
    // The legacy chatter's axis: its spin at the end.
    let axis = legacy
        .last()
        .map_or(DVec3::Z, |s| s.1.normalize_or(DVec3::Z));
    let window = |run: &[(f64, DVec3)]| -> Vec<(f64, f64)> {
        run.iter()
            .filter(|s| (7.95..=8.0).contains(&s.0))
            .map(|s| (s.0, 1e3 * s.1.dot(axis)))
            .collect()
    };
    let series = [
        Series::new(
            "legacy constant torque (eq. 8, μ_r = 0.1)",
            &window(&legacy),
        ),
        Series::new("tracked micro-deflection (seed 003)", &window(&tracked)),
    ];
    let opts = PlotOptions {
        width: 1000,
        height: 560,
        title: "Seed 003 §4.2: the disk at rest, its last 50 ms".into(),
        x_label: "time (s)".into(),
        y_label: "spin about the chatter axis (mrad/s)".into(),
    };
    let img = plot_lines(&series, &opts).unwrap_or_else(|e| panic!("plot: {e}"));
    let path = dir.join("disk_chatter.png");
    write_png(&path, &img).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("wrote {}", path.display());
}
