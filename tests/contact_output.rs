//! The contact output (`output.contacts`, `repose run --contacts`): each
//! frame's contacts as a CSV table and as lines in a VTU series; the
//! table's forces are the bodies' change of momentum.

#[path = "common/cli.rs"]
mod cli;

use std::path::Path;

use glam::DVec3;
use repose::output::csv::read_final_csv;

/// One row of a contact table: ends (B `None` for a boundary, with its
/// name), point, normal, force on B, contact torque on B.
struct Row {
    a: usize,
    b: Option<usize>,
    boundary: String,
    point: DVec3,
    force: DVec3,
    torque: DVec3,
}

fn read_contacts(path: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(repose::output::contacts::CONTACTS_CSV_HEADER),
        "{}",
        path.display()
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 19, "{}: {l}", path.display());
            let x = |k: usize| {
                f[k].parse::<f64>()
                    .unwrap_or_else(|e| panic!("{l}: column {k}: {e}"))
            };
            let v = |k: usize| DVec3::new(x(k), x(k + 1), x(k + 2));
            let n = v(6);
            Row {
                a: f[0].parse().unwrap(),
                b: (!f[1].is_empty()).then(|| f[1].parse().unwrap()),
                boundary: f[2].to_string(),
                point: v(3),
                force: x(10) * n + v(11),
                torque: x(14) * n + v(15),
            }
        })
        .collect()
}

/// A pile being poured on `backend`, a frame (and its CSV) every step,
/// contacts on.
fn pouring_pile(out: &Path, steps: u32, backend: &str) {
    let h = 2e-3;
    let duration = format!("duration={}", f64::from(steps) * h);
    let interval = format!("output.frame_interval={h}");
    let extra = [
        "--set",
        &duration,
        "--set",
        &interval,
        "--set",
        "output.csv_frames=true",
        "--contacts",
        "--backend",
        backend,
    ];
    cli::small_pile(
        out,
        &extra,
        &format!("the pouring pile with --contacts on {backend}"),
    );
}

/// The law every backend keeps: the contact table's forces and torques on
/// a body are its change of momentum over the step, m (v⁺ − v)/h − m g and
/// I (ω⁺ − ω)/h. The bodies are integrated with v⁺ = v_free + M⁻¹ D γ
/// evaluated in f64 from the very impulses the table reports (on the f32
/// backends the solver's f32 γ, widened exactly), so the balance holds to
/// f64 rounding on every backend: both sides are sums of a few f64 terms of
/// up to ~100 weights, whose rounding is below 1e-12 of that. (Integrating
/// the f32 solver's own accumulated velocities instead loses every
/// increment below half an ulp of |v|: 4.5e-3 of a weight on lavapipe.)
fn contact_forces_add_up_to_each_bodys_change_of_momentum(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    pouring_pile(out, 250, backend);
    let (h, g, density) = (2e-3, DVec3::new(0.0, 0.0, -9.81), 2500.0);
    let mut checked = 0;
    let mut worst: (f64, f64) = (0.0, 0.0);
    for k in [150, 249, 250] {
        let before = read_final_csv(out.join(format!("frame_{:05}.csv", k - 1))).unwrap();
        let after = read_final_csv(out.join(format!("frame_{k:05}.csv"))).unwrap();
        let rows = read_contacts(&out.join(format!("contacts_{k:05}.csv")));
        assert!(
            rows.len() >= 100,
            "{backend}: step {k}: {} contacts among {} spheres",
            rows.len(),
            after.len()
        );
        assert!(
            rows.iter().any(|r| r.torque != DVec3::ZERO),
            "{backend}: step {k}: no contact carries a rolling or spinning torque"
        );
        let n = before.len();
        let mut force = vec![DVec3::ZERO; after.len()];
        let mut torque = vec![DVec3::ZERO; after.len()];
        let centre = |i: usize| DVec3::new(before[i][1], before[i][2], before[i][3]);
        for r in &rows {
            if r.a < n {
                force[r.a] -= r.force;
                torque[r.a] -= (r.point - centre(r.a)).cross(r.force) + r.torque;
            }
            match r.b {
                Some(b) if b < n => {
                    force[b] += r.force;
                    torque[b] += (r.point - centre(b)).cross(r.force) + r.torque;
                }
                Some(_) => {}
                None => assert_eq!(r.boundary, "bin", "the pile's only boundary"),
            }
        }
        // Bodies present at both frames (an inlet adds some within a step).
        for i in 0..n {
            let (s0, s1) = (&before[i], &after[i]);
            let r = s1[10];
            let m = density * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
            let inertia = 0.4 * m * r * r;
            let dv = DVec3::new(s1[4] - s0[4], s1[5] - s0[5], s1[6] - s0[6]);
            let dw = DVec3::new(s1[7] - s0[7], s1[8] - s0[8], s1[9] - s0[9]);
            let weight = m * g.length();
            let ef = (m * (dv / h - g) - force[i]).abs().max_element() / weight;
            let et = (inertia * dw / h - torque[i]).abs().max_element() / (weight * r);
            worst = (worst.0.max(ef), worst.1.max(et));
            checked += 1;
        }
    }
    // (The density's 2500 and the mass from the radius are the scene's,
    // computed as repose does.)
    eprintln!(
        "{backend}: {checked} body-steps; worst misfit: force {:.2e} weights, torque {:.2e} weight-radii",
        worst.0, worst.1
    );
    assert!(checked > 500, "{backend}: {checked} body-steps checked");
    assert!(
        worst.0 <= 1e-10,
        "{backend}: force balance off by {:.3e} weights (tolerance 1e-10)",
        worst.0
    );
    assert!(
        worst.1 <= 1e-10,
        "{backend}: torque balance off by {:.3e} weight-radii (tolerance 1e-10)",
        worst.1
    );
}

#[test]
fn contact_forces_add_up_to_each_bodys_change_of_momentum_on_the_cpu() {
    contact_forces_add_up_to_each_bodys_change_of_momentum("cpu");
}

#[test]
fn contact_forces_add_up_to_each_bodys_change_of_momentum_on_the_f32_cpu() {
    contact_forces_add_up_to_each_bodys_change_of_momentum("cpu-f32");
}

#[test]
fn contact_forces_add_up_to_each_bodys_change_of_momentum_on_the_gpu() {
    // Skips visibly without an adapter (fails instead under REPOSE_REQUIRE_GPU).
    let Some(ctx) = repose::gpu::context_for_tests("contact forces on the gpu") else {
        return;
    };
    drop(ctx);
    contact_forces_add_up_to_each_bodys_change_of_momentum("gpu");
}

#[test]
fn the_contact_lines_have_a_cell_per_row_of_the_table_and_a_series() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    pouring_pile(out, 60, "cpu");
    let pvd = std::fs::read_to_string(out.join("contacts.pvd")).unwrap();
    let frames = std::fs::read_to_string(out.join("frames.pvd")).unwrap();
    assert_eq!(
        pvd.matches("<DataSet").count(),
        frames.matches("<DataSet").count(),
        "a contacts frame beside every frame"
    );
    for k in [0, 30, 60] {
        let rows = read_contacts(&out.join(format!("contacts_{k:05}.csv"))).len();
        let vtu = std::fs::read_to_string(out.join(format!("contacts_{k:05}.vtu"))).unwrap();
        let cells = format!("NumberOfPoints=\"{}\" NumberOfCells=\"{rows}\"", 2 * rows);
        assert!(
            vtu.contains(&cells),
            "contacts_{k:05}.vtu: expected {cells}"
        );
        assert!(vtu.contains("Name=\"normal_force\""));
        if k == 0 {
            assert_eq!(rows, 0, "no contacts before the first step");
        } else {
            assert!(rows > 0, "frame {k}: no contacts in a pouring pile");
        }
    }
}

#[test]
fn a_penalty_columns_floor_carries_its_weight_on_average() {
    // scenes/penalty_column.ron: ten steel spheres on soft Hertz contacts
    // (E = 1e7 Pa, restitution 0.5) still ring at 1 s, so the floor's load
    // at a frame swings by several per cent about the weight. Its mean over
    // the frames of the second half must hold the weight within three
    // standard errors of that mean (the column's momentum changes by
    // < 1e-3 N s over the half: negligible beside them).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let done = cli::repose([
        "run",
        cli::scene_path("penalty_column.ron").to_str().unwrap(),
        "--contacts",
        "--no-picture",
        "--out",
        out.to_str().unwrap(),
    ]);
    cli::assert_success(&done, "the penalty column with --contacts");
    let r = 0.01;
    let weight = 10.0 * 7800.0 * 4.0 / 3.0 * std::f64::consts::PI * r * r * r * 9.81;
    let mut loads = Vec::new();
    for k in 50..=100 {
        let rows = read_contacts(&out.join(format!("contacts_{k:05}.csv")));
        assert_eq!(
            rows.iter().filter(|c| c.b.is_some()).count(),
            9,
            "frame {k}: nine touching pairs"
        );
        loads.push(
            rows.iter()
                .filter(|c| c.b.is_none())
                .map(|c| -c.force.z)
                .sum::<f64>(),
        );
    }
    let n = loads.len() as f64;
    let mean = loads.iter().sum::<f64>() / n;
    let sd = (loads.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let se = sd / n.sqrt();
    eprintln!(
        "floor load {mean:.5} N ± {se:.5} (sd {sd:.4}) over {n} frames; weight {weight:.5} N"
    );
    assert!(
        se < 0.03 * weight,
        "the floor's load swings too much to judge: sd {sd:.4} N"
    );
    assert!(
        (mean - weight).abs() <= 3.0 * se,
        "the floor carries {mean:.5} ± {se:.5} N on average, the column weighs {weight:.5} N"
    );
}

#[test]
fn render_draws_the_force_chains_of_a_run_with_contacts_and_says_what_is_missing_without() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    pouring_pile(out, 100, "cpu");
    let done = cli::repose([
        "render",
        out.to_str().unwrap(),
        "--force-chains",
        "--width",
        "600",
        "--height",
        "300",
    ]);
    cli::assert_success(&done, "repose render --force-chains");
    let png = out.join("force_chains.png");
    let img =
        repose::render::png_io::read_png(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
    assert_eq!((img.width(), img.height()), (600, 300));
    // Lines coloured by the map: some pixels far from grey.
    let coloured = img
        .as_rgb()
        .chunks(3)
        .filter(|p| p.iter().max().unwrap() - p.iter().min().unwrap() > 60)
        .count();
    assert!(
        coloured > 200,
        "only {coloured} coloured pixels: no chains drawn"
    );
    std::fs::remove_file(out.join("contacts_00000.csv")).unwrap();
    for f in std::fs::read_dir(out).unwrap() {
        let p = f.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("contacts_")
        {
            std::fs::remove_file(p).unwrap();
        }
    }
    let done = cli::repose(["render", out.to_str().unwrap(), "--force-chains"]);
    cli::assert_one_error(&done, &["no contacts_NNNNN.csv", "--contacts"]);
}

/// A sphere resting on a floor and one thrown at 1e308 m/s high above
/// it: the step where the thrown one's numbers overflow fails (in the
/// solve or, rolled back, after it).
/// The resting contact's records are there before it and not after it:
/// the failed step's impulses must not be paired with the last finished
/// step's problem and the rolled-back bodies.
#[test]
fn a_failed_step_leaves_no_contact_records_mixing_two_steps() {
    let text = r#"Scene(version: 1, time_step: 1e-3, duration: 2.0,
    materials: [(name: "m", friction: 0.5, density: 1000.0)],
    spheres: [Sphere(pos: (0.0, 0.0, 0.05), radius: 0.05),
              Sphere(pos: (0.0, 0.0, 20.0), radius: 0.05, velocity: (1e308, 0.0, 0.0))],
    boundaries: [Plane(name: "floor", point: (0, 0, 0), normal: (0, 0, 1))])"#;
    let mut world = repose::scene::Scene::from_str(text, "runaway", &[])
        .and_then(|s| s.build_quietly())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut st = repose::step::Stepper::new();
    let mut steps = 0;
    let err = loop {
        if let Err(e) = st.step(&mut world) {
            break e;
        }
        steps += 1;
        assert!(steps < 10_000, "the runaway sphere never overflowed");
        let c = st
            .contact_forces(&world)
            .expect("a finished step's records");
        assert_eq!(
            c.len(),
            1,
            "step {steps}: the resting sphere's floor contact"
        );
    };
    // x after k steps is k · 1e305 m: past f64::MAX ≈ 1.8e308 near step
    // 1,800, before the sphere falls the 20 m to the floor (2 s).
    assert!(
        (1790..1810).contains(&steps),
        "failed after {steps} steps, expected about 1,800: {err}"
    );
    assert!(
        st.contact_forces(&world).is_none(),
        "after the failed step {} the records would pair its impulses with step {steps}'s problem",
        steps + 1
    );
}
