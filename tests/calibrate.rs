//! Calibration (`repose calibrate`): the search on functions whose root is
//! known (one parameter, noiseless and noisy, rising and falling; two
//! parameters from two targets; targets out of reach; targets that do not
//! separate the parameters), and on the real pile `repose_small`: a target
//! angle taken from a run at a known ρ is recovered within the reported
//! interval, and an unreachable target is reported as such with the
//! closest end.

use std::path::Path;
use std::process::Command;

use repose::calibrate::{calibrate, Evaluator, Observation, Param, Settings, Status};

/// A deterministic stand-in for K seeds: `f(x) + noise`, the noise a
/// hash of (x, seed, stream) scaled to standard deviation `sd` per run, the
/// runs' fit errors `fit`.
struct Synthetic<F: Fn(&[f64]) -> Vec<f64>> {
    f: F,
    seeds: usize,
    sd: f64,
    fit: f64,
    stream: u64,
    calls: usize,
}

fn unit_noise(x: &[f64], seed: usize, j: usize, stream: u64) -> f64 {
    // SplitMix64 of the bits, then a sum of 4 uniforms (≈ normal, sd 1).
    let mut h = stream.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (seed as u64) << 32 ^ j as u64;
    for v in x {
        h ^= v.to_bits();
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9).rotate_left(31);
    }
    let mut sum = 0.0;
    for _ in 0..4 {
        h = h.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = h;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        sum += (z >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
    }
    // Var of a uniform on [-½, ½] is 1/12; four of them: 1/3.
    sum * 3f64.sqrt()
}

impl<F: Fn(&[f64]) -> Vec<f64>> Evaluator for Synthetic<F> {
    fn evaluate(
        &mut self,
        _round: usize,
        points: &[Vec<f64>],
    ) -> anyhow::Result<Vec<Vec<Observation>>> {
        self.calls += points.len();
        Ok(points
            .iter()
            .map(|x| {
                let clean = (self.f)(x);
                clean
                    .iter()
                    .enumerate()
                    .map(|(j, m)| {
                        let angles: Vec<f64> = (0..self.seeds)
                            .map(|s| m + self.sd * unit_noise(x, s, j, self.stream))
                            .collect();
                        Observation::of_runs(&angles, &vec![self.fit; self.seeds]).unwrap()
                    })
                    .collect()
            })
            .collect())
    }
}

fn synthetic<F: Fn(&[f64]) -> Vec<f64>>(
    f: F,
    seeds: usize,
    sd: f64,
    fit: f64,
    stream: u64,
) -> Synthetic<F> {
    Synthetic {
        f,
        seeds,
        sd,
        fit,
        stream,
        calls: 0,
    }
}

fn settings(tol: f64) -> Settings {
    Settings {
        tol,
        max_evals: 12,
        per_round: 1,
    }
}

#[test]
fn one_parameter_without_noise_finds_the_root_of_a_curved_rise() {
    // A saturating rise like the angle against ρ: 45° (1 − e^{−x/0.3}).
    let truth = -0.3 * (1.0f64 - 30.0 / 45.0).ln(); // where the angle is 30°
    let p = Param::parse("materials.0.rolling", "0:2").unwrap();
    let mut ev = synthetic(
        |x: &[f64]| vec![45.0 * (1.0 - (-x[0] / 0.3).exp())],
        1,
        0.0,
        0.01,
        0,
    );
    let o = calibrate(&[p], &[30.0], &settings(0.05), &mut ev).unwrap();
    eprintln!("{}", o.message);
    assert_eq!(o.status, Status::Converged, "{}", o.message);
    let iv = o.interval[0];
    assert!(
        iv[0] <= truth && truth <= iv[1],
        "the root {truth:.5} lies outside the interval [{:.5}, {:.5}] (estimate {:.5})",
        iv[0],
        iv[1],
        o.estimate[0]
    );
    assert!(
        (o.estimate[0] - truth).abs() <= 0.01,
        "estimate {:.5} vs root {truth:.5}: more than 0.01 apart",
        o.estimate[0]
    );
    assert!(
        ev.calls <= 12,
        "{} evaluations for a noiseless curve",
        ev.calls
    );
}

#[test]
fn one_parameter_falling_angle_is_bracketed_the_same_way() {
    // The angle falls with the parameter (e.g. a drum's speed).
    let truth = 0.7;
    let p = Param::parse("x", "0:2").unwrap();
    let mut ev = synthetic(
        |x: &[f64]| vec![50.0 - 20.0 * x[0] - 3.0 * x[0] * x[0]],
        1,
        0.0,
        0.05,
        0,
    );
    let target = 50.0 - 20.0 * truth - 3.0 * truth * truth;
    let o = calibrate(&[p], &[target], &settings(0.2), &mut ev).unwrap();
    assert_eq!(o.status, Status::Converged, "{}", o.message);
    assert!(
        (o.estimate[0] - truth).abs() <= 0.01,
        "estimate {:.4} vs root {truth}",
        o.estimate[0]
    );
    let iv = o.interval[0];
    assert!(
        iv[0] <= truth && truth <= iv[1],
        "root {truth} outside [{}, {}]",
        iv[0],
        iv[1]
    );
}

#[test]
fn noisy_seeds_give_an_interval_that_holds_the_root_about_95_percent_of_the_time() {
    // Seed scatter sd = 2° per run, 3 seeds; tolerance 1°: the search may
    // stop noise-limited, and its interval must then be honest.
    let truth = -0.3 * (1.0f64 - 30.0 / 45.0).ln();
    let mut held = 0;
    let trials = 40;
    let mut widths = Vec::new();
    for stream in 0..trials {
        let p = Param::parse("rho", "0:2").unwrap();
        let mut ev = synthetic(
            |x: &[f64]| vec![45.0 * (1.0 - (-x[0] / 0.3).exp())],
            3,
            2.0,
            1.0,
            stream,
        );
        let o = calibrate(&[p], &[30.0], &settings(1.0), &mut ev).unwrap();
        assert!(
            matches!(
                o.status,
                Status::Converged | Status::NoiseLimited | Status::Budget
            ),
            "stream {stream}: {:?}: {}",
            o.status,
            o.message
        );
        let iv = o.interval[0];
        widths.push(iv[1] - iv[0]);
        if iv[0] <= truth && truth <= iv[1] {
            held += 1;
        }
    }
    let share = held as f64 / trials as f64;
    eprintln!("the interval held the root in {held} of {trials}; widths {widths:.3?}");
    assert!(
        share >= 0.8,
        "the interval held the root {truth:.4} in {held} of {trials} noisy calibrations (expected about 95 %, at least 80 %)"
    );
}

#[test]
fn unreachable_target_is_reported_with_the_closest_end_after_two_evaluations() {
    let p = Param::parse("materials.0.rolling", "0:0.005").unwrap();
    let mut ev = synthetic(|x: &[f64]| vec![20.0 + 4000.0 * x[0]], 2, 0.5, 0.5, 0);
    let o = calibrate(&[p], &[60.0], &settings(1.0), &mut ev).unwrap();
    assert_eq!(o.status, Status::OutOfReach, "{}", o.message);
    assert_eq!(ev.calls, 2, "only the two ends should run");
    assert_eq!(o.estimate, vec![0.005]);
    assert!(o.interval.is_empty());
    assert!(
        o.message.contains("out of reach")
            && o.message.contains("closest end")
            && o.message.contains("0.005"),
        "{}",
        o.message
    );
}

/// Two parameters (μ, ρ) and two targets: a heap whose angle depends mostly
/// on ρ and a drum whose angle depends mostly on μ, both a little curved.
fn heap_and_drum(x: &[f64]) -> Vec<f64> {
    let (mu, rho) = (x[0], x[1]);
    vec![
        18.0 + 12.0 * mu + 4000.0 * rho - 2.0e5 * rho * rho,
        25.0 + 30.0 * mu - 8.0 * mu * mu + 800.0 * rho,
    ]
}

#[test]
fn two_parameters_are_recovered_from_a_heap_and_a_drum_target() {
    let truth = [0.45, 0.004];
    let targets = heap_and_drum(&truth);
    let params = [
        Param::parse("materials.0.friction", "0.2:0.9").unwrap(),
        Param::parse("materials.0.rolling", "0:0.008").unwrap(),
    ];
    for (seeds, sd, tol) in [(1, 0.0, 0.1), (3, 0.5, 1.0)] {
        let mut ev = synthetic(heap_and_drum, seeds, sd, 0.05, 7);
        let o = calibrate(&params, &targets, &settings(tol), &mut ev).unwrap();
        eprintln!("seeds {seeds}, sd {sd}: {:?} {}", o.status, o.message);
        assert!(
            matches!(o.status, Status::Converged | Status::NoiseLimited),
            "{:?}: {}",
            o.status,
            o.message
        );
        for (k, &iv) in o.interval.iter().enumerate() {
            assert!(
                iv[0] <= truth[k] && truth[k] <= iv[1],
                "parameter {k}: {} outside its interval [{}, {}] (estimate {})",
                truth[k],
                iv[0],
                iv[1],
                o.estimate[k]
            );
        }
        if sd == 0.0 {
            assert!(
                (o.estimate[0] - truth[0]).abs() <= 0.01
                    && (o.estimate[1] - truth[1]).abs() <= 1e-4,
                "estimate {:?} vs {truth:?}",
                o.estimate
            );
        }
        assert!(ev.calls <= 12, "{} evaluations", ev.calls);
    }
}

#[test]
fn targets_that_move_together_are_ambiguous_and_out_of_range_ones_out_of_reach() {
    let params = [
        Param::parse("a", "0:1").unwrap(),
        Param::parse("b", "0:1").unwrap(),
    ];
    // Both scenes see only a + b: no pair of targets separates a from b.
    let mut ev = synthetic(
        |x: &[f64]| vec![20.0 + 10.0 * (x[0] + x[1]), 30.0 + 10.0 * (x[0] + x[1])],
        1,
        0.0,
        0.1,
        0,
    );
    let o = calibrate(&params, &[30.0, 40.0], &settings(0.5), &mut ev).unwrap();
    assert_eq!(o.status, Status::Ambiguous, "{}", o.message);
    assert!(o.message.contains("do not determine"), "{}", o.message);

    let mut ev = synthetic(
        |x: &[f64]| vec![20.0 + 10.0 * x[0], 30.0 + 10.0 * x[1]],
        1,
        0.0,
        0.1,
        0,
    );
    let o = calibrate(&params, &[45.0, 35.0], &settings(0.5), &mut ev).unwrap();
    assert_eq!(o.status, Status::OutOfReach, "{}", o.message);
    assert!(o.message.contains("out of reach"), "{}", o.message);
}

#[test]
fn bad_parameters_and_settings_are_named() {
    let e = Param::parse("materials.0.rolling", "0.005:0")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--range 0.005:0") && e.contains("low end must be below"),
        "{e}"
    );
    let e = Param::parse("materials.0.rolling", "0-0.005")
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected a:b"), "{e}");
    let e = Param::parse("materials.0.rolling", "0:nan")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a finite number"), "{e}");
    let e = Param::parse("", "0:1").unwrap_err().to_string();
    assert!(e.contains("scene path is needed"), "{e}");
    let p = Param::parse("x", "0:1").unwrap();
    let mut ev = synthetic(|x: &[f64]| vec![x[0]], 1, 0.0, 0.1, 0);
    let e = calibrate(
        std::slice::from_ref(&p),
        &[1.0, 2.0],
        &settings(1.0),
        &mut ev,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("one target angle per parameter"), "{e}");
    let e = calibrate(std::slice::from_ref(&p), &[1.0], &settings(0.0), &mut ev)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--tol must be a positive"), "{e}");
    let few = Settings {
        max_evals: 1,
        ..settings(1.0)
    };
    let e = calibrate(&[p], &[1.0], &few, &mut ev)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--max-evals 1 is too few"), "{e}");
}

// ---------------------------------------------------------------- real pile

const BIN: &str = env!("CARGO_BIN_EXE_repose");

fn repose(args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("cannot start {BIN}: {e}"))
}

fn show(out: &std::process::Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn repose_small_recovers_the_rolling_friction_of_a_known_pile_and_names_an_unreachable_target() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/repose_small.ron");
    let scene = scene.to_str().unwrap();
    let rho0 = 0.0008;
    // The "measured" angle: a run at the known ρ = σ.
    let known = tmp.path().join("known");
    let set = format!("materials.0.rolling={rho0}");
    let set2 = format!("materials.0.spinning={rho0}");
    let out = repose(&[
        "run",
        scene,
        "--set",
        &set,
        "--set",
        &set2,
        "--backend",
        "cpu",
        "--no-frames",
        "--no-picture",
        "--out",
        known.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", show(&out));
    let target = json(&known.join("summary.json"))["extra"]["angle_of_repose"]["angle_deg"]
        .as_f64()
        .expect("the known pile has an angle");
    let dir = tmp.path().join("cal");
    let cal = |target: &str| {
        repose(&[
            "calibrate",
            scene,
            "--param",
            "materials.0.rolling+materials.0.spinning",
            "--range",
            "0.0002:0.0012",
            "--target-angle",
            target,
            "--tol",
            "1.5",
            "--jobs",
            "2",
            "--backend",
            "cpu",
            "--out",
            dir.to_str().unwrap(),
        ])
    };

    // Out of reach: the two ends only, exit code 3, the closest end named.
    let out = cal("80");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("out_of_reach")
            && stdout.contains("closest end is materials.0.rolling+materials.0.spinning = 0.0012"),
        "{}",
        show(&out)
    );
    let j = json(&dir.join("calibrate.json"));
    assert_eq!(j["status"], "out_of_reach");
    assert_eq!(j["evaluations"], 2);
    assert!(j["params"][0]["interval"].is_null());

    // Recovered: run into the same directory, so the ends are reused.
    let out = cal(&format!("{target}"));
    assert!(out.status.success(), "{}", show(&out));
    let j = json(&dir.join("calibrate.json"));
    let status = j["status"].as_str().unwrap();
    let est = j["params"][0]["estimate"].as_f64().unwrap();
    let iv: Vec<f64> = j["params"][0]["interval"]
        .as_array()
        .expect("an interval")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    eprintln!(
        "target {target:.2}° (from ρ = {rho0}): {status}, estimate {est} in [{}, {}], {} points; {}",
        iv[0], iv[1], j["evaluations"], j["message"]
    );
    assert!(
        matches!(status, "converged" | "noise_limited"),
        "{}",
        show(&out)
    );
    assert!(
        iv[0] <= rho0 && rho0 <= iv[1],
        "the known ρ = {rho0} lies outside the interval [{}, {}] (estimate {est}) for the target {target:.2}°",
        iv[0],
        iv[1]
    );
    assert!(
        iv[1] - iv[0] < 0.0008,
        "the interval [{}, {}] spans more than 80 % of the range 0.0002…0.0012",
        iv[0],
        iv[1]
    );
    // The ends were reused, not run again: two runs of the first call plus
    // the new points.
    let csv = std::fs::read_to_string(dir.join("calibrate.csv")).unwrap();
    assert!(csv.starts_with(
        "eval,round,scene,materials.0.rolling+materials.0.spinning,seeds,runs_measured,target_deg,mean_deg,sd_deg,stderr_deg,miss_deg,dir\n"
    ), "{csv}");
    assert_eq!(
        csv.lines().count() - 1,
        j["evaluations"].as_u64().unwrap() as usize,
        "{csv}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("reused"),
        "the ends should be reused: {stderr}"
    );
    let png = repose::render::read_png(dir.join("calibrate.png")).expect("calibrate.png decodes");
    assert_eq!((png.width(), png.height()), (900, 600));
}
