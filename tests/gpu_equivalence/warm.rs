//! Property 11: warm starts on the device (`repose::gpu::warm`) are the
//! CPU's (`warm_start` and the `store_warm` stage of `finish`) on the same
//! contacts: the same contacts found and missed by key, the projections
//! and the stored world impulses within the f32 bounds below.
//!
//! # Bounds
//!
//! The frames are the device's packed ones: n the CPU's (the same f32), u
//! within 8u per component of the CPU's f64 u (property 10), w = n × u
//! then within 2·8u + 3u = 19u (two products, a difference). A projection
//! F·e carries the rounding of F to f32 (u|F|₁, |e_k| ≤ 1), the frame's
//! error (19u|F|₁ at most) and three products and two sums (3u|F|₁):
//! 24u|F|₁ bounds it, and 24u|T|₁ the torque rows. A stored F = γ_n n +
//! γ_u u + γ_w w from the same f32 γ carries 8u|γ_u| + 19u|γ_w| and the
//! arithmetic's 3u|γ|₁: 24u(|γ_n| + |γ_u| + |γ_w|), and the same for T.

use std::collections::HashMap;

use repose::formulation::complementarity::{finish, warm_start, FinishBuffers};
use repose::formulation::stage::StageTimers;
use repose::gpu::warm::{self, GpuWarm};
use repose::material::Material;
use repose::model::Model;
use repose::rng::Rng;
use repose::solver::SolveStats;
use repose::state::{State, WarmImpulse};

use super::contacts::random_packing;
use super::stages::{at_rest, detect_and_assemble, f32_vec, random_impulses, Found};
use super::*;

const U: f64 = f32::EPSILON as f64 / 2.0;

#[test]
fn device_warm_starts_equal_the_cpus() {
    let Some(ctx) = context_for_tests("device_warm_starts_equal_the_cpus") else {
        return;
    };
    let s = random_packing(2000, 5);
    let mats = vec![Material::default()];
    let (h, v_max) = (1e-3, 0.5);
    let Found {
        contacts,
        problem,
        assembled,
        ..
    } = detect_and_assemble("warm starts", &ctx, &s, &mats, at_rest(&s), h, v_max);
    let packed = assembled.contacts;
    let mut model = Model::new(s.boundaries.clone(), mats);
    model.time_step = h;
    let mut state = State::new(s.bodies.clone(), &model);

    // The previous step: every other contact of this list, and keys this
    // list does not have (contacts that ended), with impulses of mixed
    // sizes.
    let mut rng = Rng::new(11);
    let mut previous = HashMap::new();
    for (i, c) in contacts.iter().enumerate() {
        if i % 2 == 0 {
            let scale = 10f64.powi(i as i32 % 5 - 6);
            previous.insert(
                c.key(),
                WarmImpulse {
                    force: f32_vec(&mut rng, scale),
                    torque: f32_vec(&mut rng, scale * 0.01),
                },
            );
        }
    }
    for k in 0..50u64 {
        previous.insert(
            (k << 32) | 0xffff_fff0,
            WarmImpulse {
                force: DVec3::X,
                torque: DVec3::Y,
            },
        );
    }
    state.warm = previous;
    let mut cpu = Vec::new();
    warm_start(
        &model,
        &state,
        &problem,
        &mut cpu,
        &mut StageTimers::default(),
    );
    let mut gw = GpuWarm::new(&ctx).expect("warm-start pipelines");
    let dev = gw
        .warm_start_records(&ctx, &contacts, &packed, &warm::records_of(&state.warm))
        .expect("device warm start");
    assert_eq!(dev.len(), 2 * cpu.len(), "two records per contact");
    let (mut hits, mut worst) = (0, 0f64);
    for (i, g) in cpu.iter().enumerate() {
        let d = [
            dev[2 * i][0],
            dev[2 * i][1],
            dev[2 * i][2],
            dev[2 * i][3],
            dev[2 * i + 1][0],
            dev[2 * i + 1][1],
        ];
        match state.warm.get(&problem.key[i]) {
            None => assert!(
                d.iter().all(|&x| x == 0.0) && g.iter().all(|&x| x == 0.0),
                "contact {i}: no previous impulse, yet device {d:?}, CPU {g:?}"
            ),
            Some(w) => {
                hits += 1;
                for k in 0..6 {
                    let v = if k < 3 { w.force } else { w.torque };
                    let bound = 24.0 * U * v.abs().element_sum();
                    let err = (f64::from(d[k]) - g[k]).abs();
                    assert!(
                        err <= bound,
                        "contact {i}: warm start row {k}: device {:e} vs CPU {:e}: |Δ| {err:e} > bound {bound:e}",
                        d[k],
                        g[k]
                    );
                    worst = worst.max(err / bound);
                }
            }
        }
    }
    assert_eq!(
        hits,
        contacts.len().div_ceil(2),
        "every other contact persists"
    );

    // This step's impulses stored for the next.
    let (gamma, rows) = random_impulses(&mut rng, cpu.len(), |i| 10f64.powi(i as i32 % 4 - 5));
    let stored = gw
        .store_records(&ctx, &contacts, &packed, &rows)
        .expect("device store");
    let mut after = state.clone();
    finish(
        &model,
        &mut after,
        &problem,
        &gamma,
        SolveStats::default(),
        &mut FinishBuffers::default(),
        &mut StageTimers::default(),
    )
    .expect("CPU finish");
    assert_eq!(stored.len(), after.warm.len(), "one record per contact");
    let mut worst_store = 0f64;
    for (i, r) in stored.iter().enumerate() {
        assert_eq!(r.key(), problem.key[i], "record {i}: key");
        let w = &after.warm[&r.key()];
        for (what, got, want, g) in [
            ("force", r.force, w.force, &gamma[i][0..3]),
            ("torque", r.torque, w.torque, &gamma[i][3..6]),
        ] {
            let bound = 24.0 * U * g.iter().map(|x| x.abs()).sum::<f64>();
            for k in 0..3 {
                let err = (f64::from(got[k]) - want[k]).abs();
                assert!(
                    err <= bound,
                    "record {i}: stored {what} component {k}: device {:e} vs CPU {:e}: |Δ| {err:e} > bound {bound:e}",
                    got[k],
                    want[k]
                );
                worst_store = worst_store.max(err / bound);
            }
        }
    }
    eprintln!(
        "OBSERVED warm starts: {} contacts, {hits} persisting, 50 ended; worst share of bound: start {worst:.3}, store {worst_store:.3}",
        contacts.len()
    );
}
