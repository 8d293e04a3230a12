//! Size distributions (`sizes:` of `RandomBox` and `Inlet`, src/sizes.rs):
//! the radii drawn follow the law asked for, within sampling error, and a
//! run reports what it produced (`extra.sizes`).

#[path = "common/cli.rs"]
mod cli;

use repose::scene::Scene;

const N: usize = 2000;

/// The radii of a RandomBox of `N` spheres with `sizes`, in a box roomy
/// enough (0.4 m a side) for any of the laws below.
fn radii(sizes: &str) -> Vec<f64> {
    let text = format!(
        r#"Scene(version: 1, time_step: 1e-3, duration: 0.01,
    materials: [(name: "m", friction: 0.5)],
    spheres: [RandomBox(min: (0, 0, 0), max: (0.4, 0.4, 0.4), count: {N}, seed: 7, sizes: {sizes})],
    boundaries: [Plane(point: (0, 0, 0), normal: (0, 0, 1))])"#
    );
    let scene = Scene::from_str(&text, "sizes.ron", &[]).unwrap_or_else(|e| panic!("{e}"));
    scene
        .spheres()
        .unwrap()
        .iter()
        .map(|p| p.init.radius)
        .collect()
}

fn mean_sd(r: &[f64]) -> (f64, f64) {
    let n = r.len() as f64;
    let m = r.iter().sum::<f64>() / n;
    let v = r.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, v.sqrt())
}

#[test]
fn a_truncated_normal_has_the_truncated_laws_mean_and_spread() {
    // Normal(5 mm, 1 mm) cut at ±2 sd: mean 5 mm (symmetric), standard
    // deviation sd·sqrt(1 − 2aφ(a)/(2Φ(a) − 1)) at a = 2: 0.879626 mm.
    let r = radii("Normal(mean: 0.005, sd: 0.001, min: 0.003, max: 0.007)");
    assert_eq!(r.len(), N);
    assert!(
        r.iter().all(|&x| (0.003..=0.007).contains(&x)),
        "a radius outside [3, 7] mm"
    );
    let phi2 = (-2.0f64).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let big_phi = 0.954_499_736_103_642; // 2Φ(2) − 1
    let sd_t = 0.001 * (1.0 - 4.0 * phi2 / big_phi).sqrt();
    let (m, s) = mean_sd(&r);
    let n = N as f64;
    // Three standard errors: of the mean sd/√n, of the standard deviation
    // at most sd/√(2n) (the truncated law's kurtosis is below 3).
    assert!(
        (m - 0.005).abs() <= 3.0 * sd_t / n.sqrt(),
        "mean radius {m:.6e} m, expected 5e-3 ± {:.1e}",
        3.0 * sd_t / n.sqrt()
    );
    assert!(
        (s - sd_t).abs() <= 3.0 * sd_t / (2.0 * n).sqrt(),
        "sd {s:.6e} m, expected {sd_t:.6e} ± {:.1e}",
        3.0 * sd_t / (2.0 * n).sqrt()
    );
}

#[test]
fn a_log_normal_has_its_median() {
    // Cut symmetrically in ln r about the median: half the radii below it.
    let r = radii("LogNormal(median: 0.004, sigma: 0.3, min: 0.002, max: 0.008)");
    let below = r.iter().filter(|&&x| x < 0.004).count() as f64 / N as f64;
    let se = (0.25 / N as f64).sqrt();
    assert!(
        (below - 0.5).abs() <= 3.0 * se,
        "{below:.4} of the radii below the median, expected 0.5 ± {:.3}",
        3.0 * se
    );
    assert!(r.iter().all(|&x| (0.002..=0.008).contains(&x)));
}

#[test]
fn sieve_classes_by_mass_give_the_number_shares_the_masses_imply() {
    // Half the mass in 2 mm spheres, half in 4 mm ones: by number the
    // small ones are 8 of every 9 (mass per sphere 1 : 8).
    let r = radii("Classes(classes: [(0.002, 0.002, 0.5), (0.004, 0.004, 0.5)], by: Mass)");
    let small = r.iter().filter(|&&x| x == 0.002).count() as f64 / N as f64;
    assert_eq!(r.iter().filter(|&&x| x != 0.002 && x != 0.004).count(), 0);
    let p = 8.0 / 9.0;
    let se = (p * (1.0 - p) / N as f64).sqrt();
    assert!(
        (small - p).abs() <= 3.0 * se,
        "{small:.4} small by number, expected {p:.4} ± {:.4}",
        3.0 * se
    );
    // By number the same classes give half and half.
    let r = radii("Classes(classes: [(0.002, 0.002, 0.5), (0.004, 0.004, 0.5)])");
    let small = r.iter().filter(|&&x| x == 0.002).count() as f64 / N as f64;
    let se = (0.25 / N as f64).sqrt();
    assert!(
        (small - 0.5).abs() <= 3.0 * se,
        "{small:.4} small by number, expected 0.5"
    );
}

#[test]
fn a_run_reports_the_sizes_its_inlet_produced() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("poured.ron");
    std::fs::write(
        &scene,
        r#"Scene(version: 1, name: "poured", time_step: 2e-3, duration: 0.2,
    materials: [(name: "glass", friction: 0.5, density: 2500.0)],
    spheres: [Inlet(region: Box(min: (-0.05, -0.05, 0.1), max: (0.05, 0.05, 0.12)), rate: 1000, count: 150,
                    sizes: Classes(classes: [(0.003, 0.004, 1.0), (0.005, 0.006, 1.0)]), seed: 3,
                    velocity: (0, 0, -0.5))],
    boundaries: [Box(name: "bin", center: (0, 0, 0.1), half_extents: (0.1, 0.1, 0.1), open_top: true)])"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let done = cli::repose([
        "run",
        scene.to_str().unwrap(),
        "--no-frames",
        "--no-picture",
        "--out",
        out.to_str().unwrap(),
    ]);
    cli::assert_success(&done, "a run with an inlet of two size classes");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let sizes = &s["extra"]["sizes"];
    assert_eq!(sizes["count"], 150, "{sizes}");
    let (lo, hi) = (
        sizes["min"].as_f64().unwrap(),
        sizes["max"].as_f64().unwrap(),
    );
    assert!(
        (0.003..0.0035).contains(&lo) && (0.0055..=0.006).contains(&hi),
        "{sizes}"
    );
    // The median falls in the gap between the classes or at its edges.
    let r50 = sizes["r50"].as_f64().unwrap();
    assert!(
        (0.0035..=0.0055).contains(&r50),
        "median {r50} with two equal classes: {sizes}"
    );
}
