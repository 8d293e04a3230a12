//! The angle of repose as physics: `scenes/pile.ron` (1,000 beads of
//! radius R = 5 mm, μ = 0.6, poured onto a floor) with rolling and spinning
//! friction ρ = σ ∈ {0, R/10, R/5}. Tasora & Anitescu 2013, §6.3
//! (Figs. 10–13): without rolling friction spheres roll away into an almost
//! flat layer; rolling friction builds a cone whose angle grows with ρ.
//! Asserted, on runs whose steps met the solver's tolerance (at least 99 % of
//! them, so the angles are the model's, not the iteration cap's): the angle
//! rises by at least 10° from ρ = 0 to ρ = R/5, and the pile with ρ = σ = 0
//! is lower than both others.

use std::path::Path;

use repose::run::{run_file, BackendChoice, RunOptions};

const R: f64 = 0.005;

/// (angle in degrees, height in m) of the settled pile with ρ = σ = `rho`.
fn pile(rho: f64, dir: &Path) -> (f64, f64) {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/pile.ron");
    let overrides = [
        ("materials.0.rolling".to_string(), rho.to_string()),
        ("materials.0.spinning".to_string(), rho.to_string()),
    ];
    let opts = RunOptions {
        out_dir: Some(dir.to_path_buf()),
        progress: false,
        no_frames: true,
        backend: BackendChoice::Cpu,
        no_picture: true,
        ..Default::default()
    };
    let s = run_file(&scene, &overrides, &opts).unwrap();
    // Every step met 1e-4 here (2026-11-28, AMD EPYC); a processor whose
    // rounding leaves a step or two at the cap still gives the model's pile.
    assert!(
        s.solver.steps_not_converged * 100 <= s.solver.steps,
        "ρ = {rho}: {} of {} steps stopped at the cap (more than 1 %)",
        s.solver.steps_not_converged,
        s.solver.steps
    );
    let a = s.extra.get("angle_of_repose").unwrap_or_else(|| {
        panic!(
            "ρ = {rho}: no angle measured: {:?}",
            s.extra.get("angle_of_repose_error")
        )
    });
    let num = |k: &str| a[k].as_f64().unwrap();
    eprintln!(
        "ρ = σ = {rho} m: angle {:.2}° ± {:.2}°, height {:.4} m, base radius {:.4} m, {} steps",
        num("angle_deg"),
        num("angle_stderr_deg"),
        num("height"),
        num("base_radius"),
        s.steps
    );
    (num("angle_deg"), num("height"))
}

#[test]
fn angle_of_repose_rises_with_rolling_and_spinning_friction() {
    let tmp = tempfile::tempdir().unwrap();
    let runs: Vec<(f64, (f64, f64))> = [0.0, 0.1 * R, 0.2 * R]
        .iter()
        .enumerate()
        .map(|(k, &rho)| (rho, pile(rho, &tmp.path().join(k.to_string()))))
        .collect();
    let (flat_angle, flat_height) = runs[0].1;
    let (steep_angle, _) = runs[2].1;
    assert!(
        steep_angle - flat_angle >= 10.0,
        "angle at ρ = R/5 is {steep_angle:.2}°, at ρ = 0 {flat_angle:.2}°: expected a rise of at least 10°"
    );
    for &(rho, (_, h)) in &runs[1..] {
        assert!(
            flat_height < h,
            "the pile with ρ = σ = 0 ({flat_height:.4} m) should be lower than the one with ρ = {rho} m ({h:.4} m)"
        );
    }
}
