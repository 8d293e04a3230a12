//! Tests of the interior-point method and its cone algebra.

use super::cones::*;
use super::*;

/// min ½‖x − c‖² over the second-order cone: the projection of c.
#[test]
fn projection_onto_a_second_order_cone_is_the_programs_answer() {
    for c in [[0.5f64, 2.0, -1.0], [3.0, 1.0, 1.0], [-2.0, 0.5, 0.1]] {
        let p = CscMatrix::new(3, 3, vec![0, 1, 2, 3], vec![0, 1, 2], vec![1.0; 3]);
        let a = CscMatrix::new(3, 3, vec![0, 1, 2, 3], vec![0, 1, 2], vec![-1.0; 3]);
        let mut ipm = ConicIpm::new(&p, &a, &[SupportedConeT::SecondOrderConeT(3)]).unwrap();
        let mut q: Vec<f64> = c.iter().map(|v| -v).collect();
        let mut x = Vec::new();
        let out = ipm.solve(&mut q, 1e-10, 50, &mut |xi, _, _| {
            x = xi.to_vec();
            Hook::Continue
        });
        assert_eq!(out.status, Status::Solved, "{:?}", out.status);
        // Closed form: Π(c) for the unit cone.
        let n1: f64 = (c[1] * c[1] + c[2] * c[2]).sqrt();
        let expect = if n1 <= c[0] {
            c.to_vec()
        } else if n1 <= -c[0] {
            vec![0.0; 3]
        } else {
            let t = 0.5 * (c[0] + n1);
            vec![t, t * c[1] / n1, t * c[2] / n1]
        };
        for k in 0..3 {
            assert!(
                (x[k] - expect[k]).abs() < 1e-7,
                "c = {c:?}: x = {x:?}, Π(c) = {expect:?} ({} Newton steps)",
                out.iterations
            );
        }
    }
}

/// A deterministic generator in [−1, 1) (no dependency for a test).
fn lcg(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

/// The NT scaling: W z = W⁻¹ s (= λ), and W(W v) = W² v with W² =
/// η²(2w̄w̄ᵀ − J), the matrix `factor` writes.
#[test]
fn the_scaling_maps_z_and_s_to_one_lambda() {
    let mut st = 7u64;
    let b = Block::Soc { off: 0, dim: 4 };
    for _ in 0..50 {
        let inside = |st: &mut u64| {
            let mut u: Vec<f64> = (0..4).map(|_| lcg(st)).collect();
            u[0] = norm(&u[1..]) + 0.01 + lcg(st).abs();
            u
        };
        let (s, z) = (inside(&mut st), inside(&mut st));
        let sc = Scaling::at(&b, &s, &z);
        let (mut wz, mut winv_s) = (vec![0.0; 4], vec![0.0; 4]);
        sc.apply(&b, &z, &mut wz, false);
        sc.apply(&b, &s, &mut winv_s, true);
        let v: Vec<f64> = (0..4).map(|_| lcg(&mut st)).collect();
        let (mut wv, mut wwv) = (vec![0.0; 4], vec![0.0; 4]);
        sc.apply(&b, &v, &mut wv, false);
        sc.apply(&b, &wv, &mut wwv, false);
        let Scaling::Soc { eta, w } = &sc else {
            unreachable!()
        };
        for k in 0..4 {
            assert!(
                (wz[k] - winv_s[k]).abs() <= 1e-10 * (1.0 + wz[k].abs()),
                "s = {s:?}, z = {z:?}: Wz = {wz:?}, W⁻¹s = {winv_s:?}"
            );
            let j = |r: usize| if r == 0 { 1.0 } else { -1.0 };
            let h: f64 = (0..4)
                .map(|c| eta * eta * (2.0 * w[k] * w[c] - if c == k { j(k) } else { 0.0 }) * v[c])
                .sum();
            assert!(
                (h - wwv[k]).abs() <= 1e-9 * (1.0 + h.abs()),
                "W²v: {h} from the matrix, {} applying W twice",
                wwv[k]
            );
        }
    }
}

/// The step to a second-order cone's boundary against bisection on
/// membership.
#[test]
fn the_step_to_the_boundary_is_the_last_point_inside() {
    let mut st = 11u64;
    for _ in 0..200 {
        let mut l: Vec<f64> = (0..3).map(|_| lcg(&mut st)).collect();
        l[0] = norm(&l[1..]) + 0.05 + lcg(&mut st).abs();
        let d: Vec<f64> = (0..3).map(|_| 3.0 * lcg(&mut st)).collect();
        let alpha = soc_step(&l, &d);
        let inside = |a: f64| {
            let u: Vec<f64> = (0..3).map(|k| l[k] + a * d[k]).collect();
            u[0] >= norm(&u[1..]) - 1e-12
        };
        if alpha.is_infinite() {
            assert!(
                inside(1e6),
                "l = {l:?}, d = {d:?}: ∞, yet 10⁶ leaves the cone"
            );
            continue;
        }
        assert!(
            inside(alpha * (1.0 - 1e-9)) && !inside(alpha * (1.0 + 1e-6) + 1e-9),
            "l = {l:?}, d = {d:?}: α = {alpha} is not where the ray leaves the cone"
        );
    }
}

/// A random QP with equality rows, an orthant and two second-order
/// cones: the same answer as clarabel's to 1e-6.
#[test]
fn a_random_conic_qp_has_clarabels_answer() {
    use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver};
    let mut st = 3u64;
    for trial in 0..10 {
        let n = 8;
        // P = LᵀL + 0.1 I, upper triangle.
        let l: Vec<Vec<f64>> = (0..n)
            .map(|_| (0..n).map(|_| lcg(&mut st)).collect())
            .collect();
        let full: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        (0..n).map(|k| l[k][i] * l[k][j]).sum::<f64>() + 0.1 * f64::from(i == j)
                    })
                    .collect()
            })
            .collect();
        let p = CscMatrix::from(&full).to_triu();
        let q: Vec<f64> = (0..n).map(|_| lcg(&mut st)).collect();
        // Rows: 1 equality, 2 orthant, SOC(3), SOC(3): Ax + s = 0.
        let m = 9;
        let dense: Vec<Vec<f64>> = (0..m)
            .map(|_| (0..n).map(|_| lcg(&mut st)).collect())
            .collect();
        let a = CscMatrix::from(&dense);
        let cones = [
            SupportedConeT::ZeroConeT(1),
            SupportedConeT::NonnegativeConeT(2),
            SupportedConeT::SecondOrderConeT(3),
            SupportedConeT::SecondOrderConeT(3),
        ];
        let settings = DefaultSettings {
            verbose: false,
            tol_gap_abs: 1e-12,
            tol_gap_rel: 1e-12,
            tol_feas: 1e-12,
            tol_ktratio: 1e-10,
            ..DefaultSettings::default()
        };
        let mut reference =
            DefaultSolver::new(&p, &q, &a, &vec![0.0; m], &cones, settings).unwrap();
        reference.solve();
        let mut ours = ConicIpm::new(&p, &a, &cones).unwrap();
        let mut qq = q.clone();
        let mut x = Vec::new();
        let out = ours.solve(&mut qq, 1e-10, 100, &mut |xi, _, _| {
            x = xi.to_vec();
            Hook::Continue
        });
        // Strictly convex (P ⪰ 0.1 I): compare objectives, and check
        // that ours is feasible (−Ax in the cones).
        let f = |x: &[f64]| {
            let mut v = 0.0;
            for j in 0..n {
                for k in p.colptr[j]..p.colptr[j + 1] {
                    let i = p.rowval[k];
                    let w = if i == j { 0.5 } else { 1.0 };
                    v += w * p.nzval[k] * x[i] * x[j];
                }
                v += q[j] * x[j];
            }
            v
        };
        let (ours_f, theirs_f) = (f(&x), f(&reference.solution.x));
        let s: Vec<f64> = dense
            .iter()
            .map(|row| -(0..n).map(|k| row[k] * x[k]).sum::<f64>())
            .collect();
        let infeasible = [
            s[0].abs(),
            -s[1],
            -s[2],
            norm(&s[4..6]) - s[3],
            norm(&s[7..9]) - s[6],
        ]
        .into_iter()
        .fold(0.0, f64::max);
        assert!(
            out.status == Status::Solved
                && (ours_f - theirs_f).abs() <= 1e-8 * (1.0 + theirs_f.abs())
                && infeasible <= 1e-9,
            "trial {trial}: {:?} after {} Newton steps; objective {ours_f} against \
             clarabel's {theirs_f}, constraints violated by {infeasible:e}",
            out.status,
            out.iterations
        );
    }
}
