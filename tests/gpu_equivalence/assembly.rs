//! Property 10: contact assembly on the device (`repose::gpu::assemble`)
//! is the CPU's (`ContactProblem::assemble` then `pack`) on the same
//! contact list: the body → contact-end index, the slots, the ends and
//! the cones exactly; the frames, lever arms, biases and Jacobi step
//! scales within the f32 bounds below; two runs the same bits.
//!
//! # Bounds
//!
//! Both sides read the same f32 contact list and f32 centres; the CPU
//! then computes in f64 and rounds to f32 when packing (u = 2⁻²⁴ each).
//!
//! * Tangent u of Duff et al. (2017) from the same n: a = −1/(s + n_z)
//!   (|s + n_z| ≥ 1, |a| ≤ 1) carries 2u; 1 + s n_x² a at most 4u from
//!   the product (|n_x² a| ≤ 1) and u from the sum, s b at most 4u: 6u per
//!   component, and the CPU's rounding u: 8u.
//! * Lever arm p − x: the f32 difference is one rounding of the exact one,
//!   as is the CPU's f64 difference rounded to f32: u|s_k| per component.
//! * Step scales: 1/m and 1/I rounded (u each), |s|² from an arm with u
//!   per component (2u) and three products and two sums (5u), the mean
//!   ℓ² (2u), |s|² + ℓ² (u), the product with 1/I and the sum with 1/m (2u),
//!   the count (u), the sum over the ends (u), the reciprocal (u): 17u for
//!   b_f, and b_t = b_f ℓ² adds ℓ²'s 9u and a product: 27u; with the CPU's
//!   rounding, 32u relative bounds both.
//! * Bias: Φ/h with h rounded carries 2u|Φ/h|; a boundary velocity v
//!   rounded (u) dotted with n (three products, two sums) or with the
//!   device's tangent (its 8u): at most 16u|v|₁; the sum u|b| and the CPU's
//!   rounding u|b|.

use repose::gpu::assemble::{self, GpuAssembler};
use repose::material::Material;
use repose::solver::packed::pack;

use super::contacts::{random_packing, Scene};
use super::stages::{at_rest, detect_and_assemble, Found};
use super::*;

const U: f64 = f32::EPSILON as f64 / 2.0;

fn materials() -> Vec<Material> {
    vec![
        Material {
            friction: 0.5,
            rolling: 0.02,
            spinning: 0.01,
            ..Default::default()
        },
        Material {
            friction: 0.3,
            rolling: 0.05,
            spinning: 0.0,
            ..Default::default()
        },
    ]
}

fn assert_within(label: &str, what: &str, i: usize, got: f64, want: f64, bound: f64) {
    assert!(
        (got - want).abs() <= bound,
        "{label}: contact {i}: {what} device {got:e} vs CPU {want:e}: |Δ| {:e} > bound {bound:e}",
        (got - want).abs()
    );
}

/// Detects `s`'s contacts on the device, assembles them on both sides and
/// holds the results equal (module docs); returns the contacts compared.
fn compare(label: &str, ctx: &GpuContext, s: &Scene, h: f64, v_max: f64) -> usize {
    let mats = materials();
    let Found {
        contacts,
        geoms,
        problem,
        assembled: dev,
    } = detect_and_assemble(label, ctx, s, &mats, at_rest(s), h, v_max);
    let cpu = pack(&problem, &vec![[0.0; 6]; problem.n_contacts()]);
    let bodies = assemble::body_records(&s.bodies).expect("spheres");
    let walls = assemble::wall_records(&s.boundaries, 0.0).expect("translating boundaries");
    let mrec = assemble::material_records(&mats);
    let mut asm = GpuAssembler::new(ctx).expect("assembly pipelines");
    let again = asm
        .assemble_records(ctx, &contacts, &bodies, &walls, &mrec, h, v_max)
        .expect("second assembly");
    assert!(
        dev == again,
        "{label}: two device assemblies of one list differ"
    );
    for (what, d, c) in [
        ("body → end offsets", &dev.offsets, &problem.csr_offsets),
        ("slots in body order", &dev.slots, &problem.csr_slots),
    ] {
        assert_eq!(d.len(), c.len(), "{label}: {what}: lengths differ");
        if let Some(k) = (0..d.len()).find(|&k| d[k] != c[k]) {
            panic!(
                "{label}: {what} differ first at {k}: device {:?}, CPU {:?}",
                &d[k.saturating_sub(3)..(k + 4).min(d.len())],
                &c[k.saturating_sub(3)..(k + 4).min(c.len())]
            );
        }
    }
    assert_eq!(
        dev.contacts.len(),
        cpu.contacts.len(),
        "{label}: contact counts differ"
    );
    let (mut worst_u, mut worst_arm, mut worst_scale, mut worst_bias) = (0f64, 0f64, 0f64, 0f64);
    for (i, (d, c)) in dev.contacts.iter().zip(&cpu.contacts).enumerate() {
        assert_eq!(d.ids, c.ids, "{label}: contact {i}: ends and slots differ");
        assert_eq!(
            (d.n, d.u[3], d.bias[3]),
            (c.n, c.u[3], c.bias[3]),
            "{label}: contact {i}: normal or cone (μ, ρ, σ) differ"
        );
        for k in 0..3 {
            let bound = 8.0 * U;
            assert_within(
                label,
                "tangent component",
                i,
                d.u[k].into(),
                c.u[k].into(),
                bound,
            );
            worst_u = worst_u.max(f64::from((d.u[k] - c.u[k]).abs()) / bound);
            for (what, x, y) in [
                ("arm A", d.arm_a[k], c.arm_a[k]),
                ("arm B", d.arm_b[k], c.arm_b[k]),
            ] {
                let bound = U * f64::from(y.abs());
                assert_within(label, what, i, x.into(), y.into(), bound);
                if bound > 0.0 {
                    worst_arm = worst_arm.max(f64::from((x - y).abs()) / bound);
                }
            }
        }
        for (what, x, y) in [
            ("b_f", d.arm_a[3], c.arm_a[3]),
            ("b_t", d.arm_b[3], c.arm_b[3]),
        ] {
            let bound = 32.0 * U * f64::from(y.abs());
            assert_within(label, what, i, x.into(), y.into(), bound);
            worst_scale = worst_scale.max(f64::from((x - y).abs()) / bound);
        }
        let g = &geoms[i];
        let v1 = g.wall_velocity.abs().element_sum();
        let stab = g.gap / h;
        for k in 0..3 {
            let b = f64::from(c.bias[k]).abs();
            let bound =
                if k == 0 { 2.0 * U * stab.abs() } else { 0.0 } + 16.0 * U * v1 + 2.0 * U * b;
            assert_within(label, "bias", i, d.bias[k].into(), c.bias[k].into(), bound);
            if bound > 0.0 {
                worst_bias = worst_bias.max(f64::from((d.bias[k] - c.bias[k]).abs()) / bound);
            }
        }
    }
    eprintln!(
        "OBSERVED {label}: {} contacts, {} ends assembled alike; worst share of bound: tangent {worst_u:.3}, arm {worst_arm:.3}, scales {worst_scale:.3}, bias {worst_bias:.3}",
        dev.contacts.len(),
        dev.slots.len()
    );
    dev.contacts.len()
}

#[test]
fn device_assembly_equals_the_cpus_on_random_packings() {
    let Some(ctx) = context_for_tests("device_assembly_equals_the_cpus_on_random_packings") else {
        return;
    };
    for (n, seed) in [(3000, 1), (1500, 2)] {
        let mut s = random_packing(n, seed);
        // Two materials, and a box that translates: every term of the bias.
        for k in 0..s.bodies.len() {
            s.bodies.material[k] = (k % 3 == 0) as u32;
        }
        s.boundaries[0].velocity = DVec3::new(0.02, -0.01, 0.05);
        s.boundaries[0].material = 1;
        let compared = compare(
            &format!("random packing n={n} seed={seed}"),
            &ctx,
            &s,
            1e-3,
            0.1,
        );
        assert!(compared > n, "too few contacts to be a test: {compared}");
    }
}

#[test]
fn device_assembly_refuses_a_spinning_boundary() {
    let mut s = random_packing(100, 3);
    s.boundaries[1].angular_velocity = DVec3::new(0.0, 0.0, 1.0);
    match assemble::wall_records(&s.boundaries, 0.0) {
        Err(assemble::AssembleError::Spinning { name, .. }) => assert_eq!(name, "tilted plane"),
        other => panic!("a spinning boundary gave {other:?}"),
    }
}

#[test]
fn device_assembly_of_an_empty_list_gives_empty_runs() {
    let Some(ctx) = context_for_tests("device_assembly_of_an_empty_list_gives_empty_runs") else {
        return;
    };
    let s = random_packing(64, 4);
    let bodies = assemble::body_records(&s.bodies).expect("spheres");
    let walls = assemble::wall_records(&s.boundaries, 0.0).expect("fixed boundaries");
    let mut asm = GpuAssembler::new(&ctx).expect("assembly pipelines");
    let got = asm
        .assemble_records(
            &ctx,
            &[],
            &bodies,
            &walls,
            &assemble::material_records(&materials()),
            1e-3,
            0.1,
        )
        .expect("assembly of no contacts");
    assert!(got.contacts.is_empty() && got.slots.is_empty(), "{got:?}");
    assert_eq!(
        got.offsets,
        vec![0; s.bodies.len() + 1],
        "every body's run is empty"
    );
}
