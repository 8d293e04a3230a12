//! The README's picture of Acary & Cadoux 2011's existence criterion on its
//! Painlevé-like example (§4.2–4.3, eqs. 30–36): the (θ, u₀) plane for
//! μ = 0.5, each point coloured by the checker's s (`repose::existence`):
//! robust (s > 0), guaranteed only (s = 0) or not guaranteed (s < 0), with
//! Lemma 7's border (u₀ > 0 and tan θ = μ) drawn on it.
//!
//! ```text
//! cargo run --release --example existence_painleve -- docs/figures
//! ```

use std::path::PathBuf;

use repose::existence::{check, painleve};
use repose::render::{plot_lines, write_png, PlotOptions, Series};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("docs/figures"), PathBuf::from);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mu = 0.5f64;
    let mut points: Vec<Vec<(f64, f64)>> = vec![Vec::new(); 3];
    for i in 1..=44 {
        let deg = 2.0 * i as f64 - 1.0;
        for j in -10..=10 {
            let u0 = 0.1 * j as f64;
            let r = check(&painleve(u0, deg.to_radians(), mu));
            let k = if r.robust {
                0
            } else if r.guaranteed {
                1
            } else {
                2
            };
            points[k].push((deg, u0));
            points[k].push((f64::NAN, f64::NAN));
        }
    }
    let border = mu.atan().to_degrees();
    let series = [
        Series::new("s > 0: a solution, robust", &points[0]),
        Series::new("s = 0: a solution, not robust", &points[1]),
        Series::new("s < 0: (A) fails", &points[2]),
        Series::new(
            "Lemma 7: u0 > 0 and tan θ = μ",
            &[(border, 0.0), (border, 1.0)],
        ),
    ];
    let opts = PlotOptions {
        width: 1200,
        height: 720,
        title: format!("Acary & Cadoux 2011 §4.3: existence for Painlevé's bar, μ = {mu}"),
        x_label: "bar angle θ (deg)".into(),
        log_x: false,
        y_label: "sliding velocity u0".into(),
    };
    let img = plot_lines(&series, &opts).unwrap_or_else(|e| panic!("plot: {e}"));
    let path = dir.join("existence_painleve.png");
    write_png(&path, &img).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("wrote {}", path.display());
}
