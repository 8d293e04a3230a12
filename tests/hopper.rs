//! Silo discharge against the Beverloo correlation (issue #16): the scene
//! `scenes/hopper.ron` (a flat-bottomed mesh silo of radius 4 cm, 2,800 beads
//! of d = 5 mm) run with outlets of D = 25, 30 and 35 mm. Beverloo's
//! W = C ρ_b √g (D − k d)^{5/2}, with k = 1.5 and the bulk density ρ_b
//! measured in the silo when the gate opens, gives each outlet's C; each
//! must lie in the correlation's usual band, 0.5 to 0.7 (Beverloo et al.
//! 1961: C = 0.58 ± 0.05; Nedderman 1992, ch. 10). The joint fit of C and
//! k from W^{2/5} linear in D is reported, not checked: three noisy rates
//! fix two parameters poorly.

#[path = "common/cli.rs"]
mod cli;

use std::ffi::OsStr;
use std::path::Path;

use cli::*;
use repose::output::csv::read_final_csv;

const GRAIN: f64 = 0.005;
const DENSITY: f64 = 2500.0;
const G: f64 = 9.81;

/// Runs the silo with outlet `d_mm` and returns (rate kg/s, bulk density
/// kg/m³ at the gate's opening).
fn discharge(d_mm: u32, out: &Path) -> (f64, f64) {
    let o = repose([
        OsStr::new("run"),
        scene_path("hopper.ron").as_os_str(),
        OsStr::new("--backend"),
        OsStr::new("cpu"),
        OsStr::new("--no-picture"),
        OsStr::new("--set"),
        OsStr::new(&format!("boundaries.0.file=\"meshes/silo_D{d_mm}.obj\"")),
        OsStr::new("--set"),
        OsStr::new("output.csv_frames=true"),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert_success(&o, &format!("silo D = {d_mm} mm"));
    let s = summary_of(out);
    let rate = s.extra["discharge"]["rate_kg_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("no discharge rate: {:?}", s.extra));
    // Frame 8 is t = 0.40 s, when the gate opens: the bed's bulk density
    // in a slab 1.5 to 4.5 cm above the floor, across the whole silo.
    let rows = read_final_csv(out.join("frame_00008.csv")).unwrap();
    let (lo, hi, radius) = (0.015, 0.045, 0.04);
    let mass: f64 = rows
        .iter()
        .filter(|r| r[3] >= lo && r[3] < hi)
        .map(|r| DENSITY * 4.0 / 3.0 * std::f64::consts::PI * r[10].powi(3))
        .sum();
    let bulk = mass / (std::f64::consts::PI * radius * radius * (hi - lo));
    (rate, bulk)
}

#[test]
fn silo_discharge_follows_beverloo_for_three_outlets() {
    let dir = tempfile::tempdir().unwrap();
    let outlets = [25u32, 30, 35];
    let runs: Vec<(f64, f64)> = outlets
        .iter()
        .map(|&d| discharge(d, &dir.path().join(format!("D{d}"))))
        .collect();
    let bulk = runs.iter().map(|r| r.1).sum::<f64>() / 3.0;
    let c_of = |d_mm: u32, (w, rho): (f64, f64)| {
        w / repose::analysis::beverloo(d_mm as f64 * 1e-3, GRAIN, rho, G, 1.0, 1.5)
    };
    let cs: Vec<f64> = outlets
        .iter()
        .zip(&runs)
        .map(|(&d, &r)| c_of(d, r))
        .collect();
    // The joint fit, for the report.
    let x: Vec<f64> = outlets.iter().map(|&d| d as f64 * 1e-3).collect();
    let y: Vec<f64> = runs.iter().map(|r| r.0.powf(0.4)).collect();
    let (mx, my) = (x.iter().sum::<f64>() / 3.0, y.iter().sum::<f64>() / 3.0);
    let sxx: f64 = x.iter().map(|v| (v - mx).powi(2)).sum();
    let slope = x
        .iter()
        .zip(&y)
        .map(|(a, b)| (a - mx) * (b - my))
        .sum::<f64>()
        / sxx;
    let k_fit = -(my - slope * mx) / slope / GRAIN;
    let c_fit = slope.powf(2.5) / (bulk * G.sqrt());
    let table: Vec<String> = outlets
        .iter()
        .zip(&runs)
        .zip(&cs)
        .map(|((d, (w, rho)), c)| {
            format!("D = {d} mm: W = {w:.4} kg/s, ρ_b = {rho:.0} kg/m³, C = {c:.3}")
        })
        .collect();
    let report = format!(
        "{}; (joint fit: C = {c_fit:.3}, k = {k_fit:.2})",
        table.join("; ")
    );
    eprintln!("{report}");
    for c in &cs {
        assert!(
            (0.5..=0.7).contains(c),
            "C = {c:.3} outside Beverloo's band 0.5–0.7 (k = 1.5): {report}"
        );
    }
    assert!(
        runs[0].0 < runs[1].0 && runs[1].0 < runs[2].0,
        "the rate must grow with the outlet: {report}"
    );
    assert!(
        (1300.0..=1700.0).contains(&bulk),
        "bulk density {bulk:.0} kg/m³ is not that of a packed bed of glass beads (φ ≈ 0.52–0.68): {report}"
    );
}
