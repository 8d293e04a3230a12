//! Fang & Negrut 2020, §4.6 (Fig. 15) under both formulations: the smallest
//! mass of the top sphere of `scenes/penalty_stack.ron` (two 1 kg spheres of
//! R = 0.15 m on a floor with a 0.3 R gap, a third between and above them)
//! at which the stack collapses, against the rolling resistance η_r
//! (penalty: Fang & Negrut 2020's tracked roll springs; complementarity: the
//! 6-D cone with ρ = 2 η_r μ_s R, the floor contact's roll torque cap), with
//! the rigid statics' bound for sliding (μ_s = 0.3): no static state
//! carries more than 18.37 kg. Writes `stack_critical_mass.png` and `.csv`.
//!
//! ```text
//! cargo run --release --example stack_critical_mass -- docs/figures
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;

use repose::render::{plot_lines, write_png, PlotOptions, Series};
use repose::validate::penalty::{stack_critical_mass, stack_sliding_bound};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("docs/figures"), PathBuf::from);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let etas: Vec<f64> = (1..=30).map(|k| 0.02 * k as f64).collect();
    let mut csv = String::from("eta_r,penalty_kg,complementarity_kg\n");
    let (mut pen, mut ccp) = (Vec::new(), Vec::new());
    for &eta in &etas {
        let p = stack_critical_mass(true, eta, 0.01, 100.0, 0.01);
        let c = stack_critical_mass(false, eta, 0.01, 100.0, 0.01);
        let show = |m: Option<f64>| m.map_or_else(String::new, |m| format!("{m:.4}"));
        writeln!(csv, "{eta},{},{}", show(p), show(c)).unwrap();
        println!(
            "η_r = {eta:.2}: penalty {:?} kg, complementarity {:?} kg",
            p, c
        );
        if let Some(m) = p {
            pen.push((eta, m));
        }
        if let Some(m) = c {
            ccp.push((eta, m));
        }
    }
    let bound = stack_sliding_bound();
    let series = [
        Series::new("penalty (Fang & Negrut 2020 friction)", &pen),
        Series::new("complementarity (ρ = 2 η_r μ_s R)", &ccp),
        Series::new(
            "rigid statics: sliding bound",
            &[(0.0, bound), (etas[etas.len() - 1], bound)],
        ),
    ];
    let opts = PlotOptions {
        width: 1200,
        height: 720,
        title: "Fang & Negrut 2020 §4.6: smallest top mass that collapses the three-sphere stack"
            .into(),
        x_label: "rolling resistance η_r".into(),
        y_label: "critical top mass (kg)".into(),
        log_x: false,
    };
    let img = plot_lines(&series, &opts).unwrap_or_else(|e| panic!("plot: {e}"));
    let png = dir.join("stack_critical_mass.png");
    write_png(&png, &img).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
    let path = dir.join("stack_critical_mass.csv");
    std::fs::write(&path, csv).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("wrote {} and {}", png.display(), path.display());
}
