//! Property 12: the bodies' side of a step on the device
//! (`repose::gpu::integrate`) is the CPU's on the same contacts and
//! impulses: the solver's body records (`pack`) and the next velocities,
//! centres and orientations (`finish`) within the f32 bounds below; the
//! first body whose velocity is not finite is named and keeps its state.
//!
//! # Bounds
//!
//! Per body, with G = Σ_e |γ_f,e|₁ and T = Σ_e (|s_e|₁ |γ_f,e|₁ + |γ_t,e|₁)
//! over its k ends (γ_f the force rows, γ_t the torque rows, s the arm):
//! a world impulse F_e is within 24u|γ_f,e|₁ per component (property 11),
//! s × F_e within 27u |s|₁|γ_f,e|₁ (the F error and two products and a
//! difference), T_e within 24u|γ_t,e|₁; the f32 running sums add k u of
//! their terms. So M⁻¹Dγ is within (24 + k)u G/m (linear) and
//! (28 + k)u T/I (angular), and with 1/m or 1/I rounded, the product and
//! the sum with v_free (itself v + h g: h rounded, a product, a sum) the
//! new velocity within
//!
//! * b_v = (26 + k)u G/m + 4u(|v| + h|g| + |v⁺|),
//! * b_ω = (30 + k)u T/I + 2u(|ω| + |ω⁺|),
//!
//! and a record the CPU rounds to f32 within that plus u of its value.
//! The centre: h b_v, the f32 product h v⁺ (h rounded, the product: 2u
//! h|v⁺|), and the fixed point's q/2 twice (the start rounded to it, the
//! step rounded to it). The orientation from
//! the identity: 16u per component (the series, the product, the
//! normalisation) plus h b_ω/2 from the angle.

use repose::formulation::complementarity::{finish, FinishBuffers};
use repose::formulation::stage::StageTimers;
use repose::gpu::integrate::{self, BodyPass, GpuIntegrator};
use repose::material::Material;
use repose::model::Model;
use repose::rng::Rng;
use repose::solver::packed::pack;
use repose::solver::SolveStats;
use repose::state::State;

use super::contacts::random_packing;
use super::stages::{detect_and_assemble, f32_vec, random_impulses, Found};
use super::*;

const U: f64 = f32::EPSILON as f64 / 2.0;

fn check(what: &str, k: usize, got: DVec3, want: DVec3, bound: f64) -> f64 {
    let err = (got - want).abs().max_element();
    assert!(
        err <= bound,
        "body {k}: {what} device {got:?} vs CPU {want:?}: |Δ| {err:e} > bound {bound:e}"
    );
    if bound > 0.0 {
        err / bound
    } else {
        0.0
    }
}

fn v3(a: [f32; 4]) -> DVec3 {
    DVec3::new(a[0].into(), a[1].into(), a[2].into())
}

#[test]
fn device_body_records_and_integration_equal_the_cpus() {
    let Some(ctx) = context_for_tests("device_body_records_and_integration_equal_the_cpus") else {
        return;
    };
    let mut s = random_packing(2000, 7);
    let mut rng = Rng::new(13);
    for k in 0..s.bodies.len() {
        s.bodies.vel[k] = f32_vec(&mut rng, 0.1);
        s.bodies.omega[k] = f32_vec(&mut rng, 5.0);
    }
    let mats = vec![Material::default()];
    let (h, v_max) = (1e-4, 0.5);
    let mut model = Model::new(s.boundaries.clone(), mats);
    model.time_step = h;
    let free = repose::integrate::free_velocities(&s.bodies, model.gravity, h);
    let Found {
        problem,
        assembled: asm,
        ..
    } = detect_and_assemble("body pass", &ctx, &s, &model.materials, free, h, v_max);
    let (gamma, rows) = random_impulses(&mut rng, problem.n_contacts(), |i| {
        1e-6 * 10f64.powi(i as i32 % 3 - 1)
    });
    let state0 = integrate::state_records(&s.bodies);
    let mut dev = GpuIntegrator::new(&ctx).expect("body pipelines");
    let run = |dev: &mut GpuIntegrator, pass| {
        dev.run_records(
            &ctx,
            pass,
            &asm.contacts,
            &rows,
            &asm.offsets,
            &asm.slots,
            &state0,
            h,
            model.gravity,
        )
        .expect("device body pass")
    };
    let records = run(&mut dev, BodyPass::Records);
    let next = run(&mut dev, BodyPass::Integrate);
    assert_eq!(records.non_finite, None, "records: no body is non-finite");
    assert_eq!(next.non_finite, None, "integration: no body is non-finite");

    let cpu_pack = pack(&problem, &gamma);
    let mut state = State::new(s.bodies.clone(), &model);
    finish(
        &model,
        &mut state,
        &problem,
        &gamma,
        SolveStats::default(),
        &mut FinishBuffers::default(),
        &mut StageTimers::default(),
    )
    .expect("CPU finish");
    let after = &state.bodies;
    let g_abs = model.gravity.abs().max_element();
    let nb = s.bodies.len();
    let mut worst = [0f64; 6];
    for k in 0..nb {
        let (lo, hi) = (
            problem.csr_offsets[k] as usize,
            problem.csr_offsets[k + 1] as usize,
        );
        let ends = (hi - lo) as f64;
        let (mut big_g, mut big_t) = (0.0, 0.0);
        for &slot in &problem.csr_slots[lo..hi] {
            let i = (slot >> 1) as usize;
            let arm = if slot & 1 == 0 {
                problem.arm_a[i]
            } else {
                problem.arm_b[i]
            };
            let gf: f64 = gamma[i][0..3].iter().map(|x| x.abs()).sum();
            let gt: f64 = gamma[i][3..6].iter().map(|x| x.abs()).sum();
            big_g += gf;
            big_t += arm.abs().element_sum() * gf + gt;
        }
        let (v0, w0) = (
            s.bodies.vel[k].abs().max_element(),
            s.bodies.omega[k].abs().max_element(),
        );
        let (v1, w1) = (
            after.vel[k].abs().max_element(),
            after.omega[k].abs().max_element(),
        );
        let bv = (26.0 + ends) * U * big_g * problem.inv_mass[k] + 4.0 * U * (v0 + h * g_abs + v1);
        let bw = (30.0 + ends) * U * big_t * problem.inv_inertia[k] + 2.0 * U * (w0 + w1);
        // The solver's records: start, then free.
        for (j, (d, c)) in [
            (&records.records[k], &cpu_pack.bodies[k]),
            (&records.records[nb + k], &cpu_pack.free[k]),
        ]
        .into_iter()
        .enumerate()
        {
            assert_eq!(
                (d.v[3], d.w[3]),
                (c.v[3], c.w[3]),
                "body {k}: record {j}: 1/m, 1/I"
            );
            let cv = v3(c.v);
            let cw = v3(c.w);
            worst[0] = worst[0].max(check(
                "record velocity",
                k,
                v3(d.v),
                cv,
                bv + U * cv.abs().max_element(),
            ));
            worst[1] = worst[1].max(check(
                "record spin",
                k,
                v3(d.w),
                cw,
                bw + U * cw.abs().max_element(),
            ));
        }
        let n = &next.next[k];
        worst[2] = worst[2].max(check("new velocity", k, v3(n.v), after.vel[k], bv));
        worst[3] = worst[3].max(check("new spin", k, v3(n.w), after.omega[k], bw));
        let bx = h * bv + 2.0 * U * h * v1 + integrate::POSITION_UNIT;
        worst[4] = worst[4].max(check("new centre", k, n.pos(), after.pos[k], bx));
        let q = after.rot[k];
        let bq = 16.0 * U + 0.5 * h * bw;
        let dq = DVec3::new(n.q[0].into(), n.q[1].into(), n.q[2].into());
        worst[5] = worst[5].max(check(
            "new orientation (xyz)",
            k,
            dq,
            DVec3::new(q.x, q.y, q.z),
            bq,
        ));
        let ew = (f64::from(n.q[3]) - q.w).abs();
        assert!(
            ew <= bq,
            "body {k}: orientation w device {} vs CPU {}: |Δ| {ew:e} > bound {bq:e}",
            n.q[3],
            q.w
        );
    }
    eprintln!(
        "OBSERVED body pass: {nb} bodies, {} contacts; worst share of bound: record v {:.3}, record ω {:.3}, v⁺ {:.3}, ω⁺ {:.3}, x⁺ {:.3}, q⁺ {:.3}",
        problem.n_contacts(),
        worst[0], worst[1], worst[2], worst[3], worst[4], worst[5]
    );
}

#[test]
fn device_integration_names_the_first_non_finite_body_and_keeps_its_state() {
    let Some(ctx) =
        context_for_tests("device_integration_names_the_first_non_finite_body_and_keeps_its_state")
    else {
        return;
    };
    let s = random_packing(64, 8);
    let mut state = integrate::state_records(&s.bodies);
    state[9].v[1] = f32::NAN;
    state[5].w[0] = f32::INFINITY;
    let mut dev = GpuIntegrator::new(&ctx).expect("body pipelines");
    let offsets = vec![0u32; state.len() + 1];
    let got = dev
        .run_records(
            &ctx,
            BodyPass::Integrate,
            &[],
            &[],
            &offsets,
            &[],
            &state,
            1e-4,
            DVec3::new(0.0, 0.0, -9.81),
        )
        .expect("device integration");
    assert_eq!(got.non_finite, Some(5), "the smallest non-finite index");
    assert_eq!(got.next[5], state[5], "a non-finite body keeps its state");
    assert_eq!(
        got.next[9].pos(),
        state[9].pos(),
        "a non-finite body does not move"
    );
    assert!(
        got.next[0].pos() != s.bodies.pos[0],
        "a finite body moves under gravity"
    );
}

/// A sphere creeping at 10⁻⁵ m/s with h = 10⁻⁴ s moves 10⁻⁹ m a step,
/// under half an ulp of its coordinate 0.5 m in f32 (3·10⁻⁸ m): held in
/// one f32 it would never move. In fixed point each step carries the f32
/// product h v (2u h|v|) and its rounding to q (q/2): after N steps the
/// centre is within N (2u h|v| + q/2) of x₀ + N h v.
#[test]
fn device_integration_keeps_displacements_below_an_f32_ulp() {
    let Some(ctx) = context_for_tests("device_integration_keeps_displacements_below_an_f32_ulp")
    else {
        return;
    };
    let s = random_packing(1, 9);
    let mut state = integrate::state_records(&s.bodies);
    let x0 = DVec3::new(0.5, -0.25, 0.125);
    let v = DVec3::new(1e-5, -2e-5, 3e-6);
    let mut b = s.bodies.clone();
    b.pos[0] = x0;
    b.vel[0] = v;
    state[0] = integrate::state_records(&b)[0];
    let v = DVec3::new(
        f64::from(v.x as f32),
        f64::from(v.y as f32),
        f64::from(v.z as f32),
    );
    let (h, steps) = (1e-4, 200);
    let mut dev = GpuIntegrator::new(&ctx).expect("body pipelines");
    for _ in 0..steps {
        let got = dev
            .run_records(
                &ctx,
                BodyPass::Integrate,
                &[],
                &[],
                &[0, 0],
                &[],
                &state,
                h,
                DVec3::ZERO,
            )
            .expect("device integration");
        state = got.next;
    }
    let want = x0 + v * (steps as f64 * h);
    let got = state[0].pos();
    let bound =
        steps as f64 * (2.0 * U * h * v.abs().max_element() + 0.5 * integrate::POSITION_UNIT);
    let err = (got - want).abs().max_element();
    assert!(
        err <= bound,
        "after {steps} steps: centre {got:?} vs x₀ + N h v = {want:?}: |Δ| {err:e} > bound {bound:e}"
    );
    eprintln!(
        "OBSERVED creeping sphere: moved {:e} m in {steps} steps of {:e} m (f32 half-ulp at 0.5 m: {:e}); |Δ| {err:e} ≤ {bound:e}",
        (got - x0).length(),
        (v * h).length(),
        0.5 * f64::from(f32::EPSILON) * 0.5
    );
}
