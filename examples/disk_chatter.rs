//! The README's chatter plot (Fang & Negrut 2020, §4.2, Fig. 10): the
//! paper's disk (`scenes/penalty_disk.ron`: m = 5 kg, R = 0.2 m,
//! I = 0.1 kg m², η_r = 0.4, μ_s = 0.25, μ_k = 0.2, K_E = 10⁵ N/m) launched
//! at 5 m/s comes to rest; afterwards, under the legacy constant rolling
//! torque (App. A.2 eq. 8, μ_r = 0.1) its spin flips sign every step, under
//! Fang & Negrut 2020's tracked model it stays zero.
//! `repose validate` (case `disk_at_rest`) and `tests/penalty.rs` check the same.
//!
//! ```text
//! cargo run --release --example disk_chatter -- docs/figures
//! ```

use std::path::PathBuf;

use glam::DVec3;
use repose::render::{plot_lines, write_png, PlotOptions, Series};

/// (time, ω) after each 1 ms step of `scenes/penalty_disk.ron` (8 s)
/// under `rolling` (the run of `repose validate`'s `disk_at_rest` case).
fn disk(rolling: &str) -> Vec<(f64, DVec3)> {
    repose::validate::penalty::disk(rolling, 8.0)
        .into_iter()
        .map(|(t, _, w)| (t, w))
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
        Series::new(
            "tracked micro-deflection (Fang & Negrut 2020)",
            &window(&tracked),
        ),
    ];
    let opts = PlotOptions {
        width: 1000,
        height: 560,
        title: "Fang & Negrut 2020 §4.2: the disk at rest, its last 50 ms".into(),
        x_label: "time (s)".into(),
        y_label: "spin about the chatter axis (mrad/s)".into(),
        log_x: false,
    };
    let img = plot_lines(&series, &opts).unwrap_or_else(|e| panic!("plot: {e}"));
    let path = dir.join("disk_chatter.png");
    write_png(&path, &img).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("wrote {}", path.display());
}
