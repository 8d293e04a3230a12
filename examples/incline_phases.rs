//! The README's phase diagram of Fang & Negrut 2020, §4.3 (Fig. 12) under
//! repose's penalty formulation: the paper's sphere
//! (`scenes/penalty_incline.ron`: R = 0.2 m, 5 kg, μ_s = 0.25,
//! μ_k = 0.2, K_E = 10⁵ N/m, g = 9.8) released at rest on an incline of α
//! with rolling resistance η_r, classified after 1 s (Table 2), drawn over
//! App. D's borders tan α = 2 η_r μ_s, tan α = 3.5 μ_s − 5 η_r μ_k and
//! η_r = 0.5. `repose validate` (case `incline_phases`) and
//! `tests/penalty.rs` check the same classification on a coarser grid.
//!
//! ```text
//! cargo run --release --example incline_phases -- docs/figures
//! ```

use std::path::PathBuf;

use repose::render::{plot_lines, write_png, PlotOptions, Series};

const MU_S: f64 = repose::validate::penalty::INCLINE_MU.0;
const MU_K: f64 = repose::validate::penalty::INCLINE_MU.1;

/// Table 2's steady motions, in legend order.
const MOTIONS: [&str; 4] = ["stationary", "rolling", "sliding", "rolling + slip"];

/// The motion (an index into [`MOTIONS`]) after 1 s of
/// `scenes/penalty_incline.ron` at slope `alpha` and rolling resistance `eta`
/// (the run of `repose validate`'s `incline_phases` case).
fn motion(alpha: f64, eta: f64) -> usize {
    use repose::validate::penalty::{motion_on_incline, Motion};
    match motion_on_incline(alpha, eta) {
        Motion::Stationary => 0,
        Motion::PureRolling => 1,
        Motion::PureSliding => 2,
        Motion::RollingWithSlip => 3,
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
        title: "Fang & Negrut 2020 §4.3: a sphere released on an incline, after 1 s".into(),
        x_label: "rolling resistance η_r".into(),
        y_label: "incline α (deg)".into(),
        log_x: false,
    };
    let img = plot_lines(&series, &opts).unwrap_or_else(|e| panic!("plot: {e}"));
    let path = dir.join("incline_phases.png");
    write_png(&path, &img).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("wrote {}", path.display());
}
