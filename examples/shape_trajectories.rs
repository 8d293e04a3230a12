//! The README's trajectory plots of bodies that are not spheres, each beside
//! its analytic or reference curve:
//!
//! * `rolling_disk.png`: Tasora & Anitescu 2013 §6.1's disk (R = 1 m,
//!   M = 10 kg, J = 4 kg m², ρ = 0.02 m, v₀ = 1 m/s) as a real cylinder,
//!   speed and distance against the closed form v = v₀ − a t,
//!   a = M g ρ R/(J + M R²);
//! * `cube_slide_spin.png`: Peiret et al. 2017, Table 1's cube (1 kg, 1 m,
//!   5 m/s, ω_z = 2π s⁻¹, μ = 1, De Saxcé), sliding speed and spin at
//!   h = 1 ms against a reference run at h = 0.1 ms.
//!
//! The scenes are `scenes/rolling_disk.ron` and
//! `scenes/spinning_cube.ron`, shared with `tests/shapes.rs`, solved by APGD
//! on the f64 CPU.
//!
//! ```text
//! cargo run --release --example shape_trajectories -- docs/figures
//! ```

use std::path::{Path, PathBuf};

use repose::render::{plot_lines, write_png, PlotOptions, Series};
use repose::scene::Scene;
use repose::step::Stepper;
use repose::world::World;

/// The text of the shipped scene `scenes/NAME` (run from the repository root).
fn scene_text(name: &str) -> String {
    let path = Path::new("scenes").join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} (run from the repository root): {e}", path.display()))
}

fn world(text: &str) -> World {
    Scene::from_str(text, "example scene", &[])
        .and_then(|s| s.build())
        .unwrap_or_else(|e| panic!("scene: {e:#}"))
}

/// Steps `w` `steps` times, calling `each` after every step.
fn run(w: &mut World, steps: usize, mut each: impl FnMut(&World)) {
    let mut st = Stepper::new();
    for k in 0..steps {
        st.step(w).unwrap_or_else(|e| panic!("step {k}: {e:#}"));
        each(w);
    }
}

/// Every `n`-th point (the markers of a dense series would hide its line).
fn thin(points: &[(f64, f64)], n: usize) -> Vec<(f64, f64)> {
    points.iter().step_by(n).copied().collect()
}

fn save(dir: &Path, name: &str, series: &[Series], title: &str, x: &str, y: &str) {
    let opts = PlotOptions {
        width: 900,
        height: 560,
        title: title.into(),
        x_label: x.into(),
        y_label: y.into(),
        log_x: false,
    };
    let img = plot_lines(series, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let path = dir.join(name);
    write_png(&path, &img).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("wrote {}", path.display());
}

fn rolling_disk(dir: &Path) {
    let text = scene_text("rolling_disk.ron");
    let mut w = world(&text);
    let a = 10.0 * 9.8 * 0.02 / (4.0 + 10.0);
    let (mut speed, mut dist) = (vec![(0.0, 1.0)], vec![(0.0, 0.0)]);
    run(&mut w, 900, |w| {
        speed.push((w.state.time, w.state.bodies.vel[0].x));
        dist.push((w.state.time, w.state.bodies.pos[0].x));
    });
    let stop = 1.0 / a;
    let exact_v = |t: f64| (1.0 - a * t).max(0.0);
    let exact_x = |t: f64| {
        let t = t.min(stop);
        t - 0.5 * a * t * t
    };
    let grid: Vec<f64> = (0..=90).map(|k| 0.1 * k as f64).collect();
    let v_ref: Vec<(f64, f64)> = grid.iter().map(|&t| (t, exact_v(t))).collect();
    let x_ref: Vec<(f64, f64)> = grid.iter().map(|&t| (t, exact_x(t))).collect();
    save(
        dir,
        "rolling_disk.png",
        // References first, dense; repose's steps on top, every 0.5 s.
        &[
            Series::new("closed form: v0 - a t, a = 0.14 m/s²", &v_ref),
            Series::new("repose: speed (m/s), APGD, h = 10 ms", &thin(&speed, 50)),
            Series::new("closed form: v0 t - a t²/2, stop at 3.57 m", &x_ref),
            Series::new("repose: distance (m)", &thin(&dist, 50)),
        ],
        "Tasora & Anitescu 2013 §6.1 rolling disk (R = 1 m, M = 10 kg, J = 4 kg m², ρ = 0.02 m)",
        "time (s)",
        "speed (m/s), distance (m)",
    );
}

/// The cube's (time, sliding speed) and (time, spin) at step `h`.
type Curves = (Vec<(f64, f64)>, Vec<(f64, f64)>);

fn cube_at(h: f64) -> Curves {
    let text =
        scene_text("spinning_cube.ron").replace("time_step: 1e-3,", &format!("time_step: {h},"));
    let mut w = world(&text);
    let (mut v, mut s) = (vec![(0.0, 5.0)], vec![(0.0, std::f64::consts::TAU)]);
    run(&mut w, (1.0 / h).round() as usize, |w| {
        v.push((w.state.time, w.state.bodies.vel[0].length()));
        s.push((w.state.time, w.state.bodies.omega[0].z.abs()));
    });
    (v, s)
}

fn cube(dir: &Path) {
    let (v, s) = cube_at(1e-3);
    let (rv, rs) = cube_at(1e-4);
    save(
        dir,
        "cube_slide_spin.png",
        // References first, dense; h = 1 ms on top, every 25 ms.
        &[
            Series::new("sliding speed, reference h = 0.1 ms", &thin(&rv, 50)),
            Series::new("sliding speed (m/s), h = 1 ms", &thin(&v, 25)),
            Series::new("spin, reference h = 0.1 ms", &thin(&rs, 50)),
            Series::new("spin (rad/s), h = 1 ms", &thin(&s, 25)),
        ],
        "Peiret et al. 2017 Table 1 cube (1 kg, 1 m, μ = 1, De Saxcé): sliding, spinning stop together",
        "time (s)",
        "speed (m/s), spin (rad/s)",
    );
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("docs/figures"), PathBuf::from);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    rolling_disk(&dir);
    cube(&dir);
}
