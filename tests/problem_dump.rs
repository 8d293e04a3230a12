//! A step's contact problem written out (`repose run --dump-problem`) and
//! read back: the explicit N assembled from the body form is the body
//! form's operator, the d = 6 Siconos text round-trips bit for bit, and the
//! d = 6 Siconos error is repose's natural-map residual under both laws.

mod common;

use repose::material::FrictionLaw;
use repose::problem::explicit::ExplicitDelassus;
use repose::problem::{BodyDelassus, ContactProblem, Delassus, Vec6};
use repose::siconos::SiconosProblem;

/// A loose pile with rolling and spinning friction (every cone row in use).
fn pile(law: FrictionLaw) -> ContactProblem {
    let mut p = common::first_problem(common::loose_pile_world(125, 0.004, 0.002));
    p.law = law;
    p
}

/// Deterministic impulses in [-1, 1)·scale (no cone needed: N is linear).
fn trial(n: usize, seed: u64, scale: f64) -> Vec<Vec6> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            std::array::from_fn(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * scale
            })
        })
        .collect()
}

fn max_abs(v: &[Vec6]) -> f64 {
    v.iter().flatten().fold(0.0, |m, x| m.max(x.abs()))
}

#[test]
fn explicit_operator_of_a_step_applies_as_the_body_form() {
    let p = pile(FrictionLaw::Associated);
    let n = p.n_contacts();
    assert!(n > 300, "the pile should have many contacts, got {n}");
    let mut explicit = ExplicitDelassus::from_problem(&p);
    let mut body = BodyDelassus::new(&p);
    for seed in [1, 2, 3] {
        let g = trial(n, seed, 1e-3);
        let (mut ye, mut yb) = (vec![[0.0; 6]; n], vec![[0.0; 6]; n]);
        explicit.apply(&g, &mut ye);
        body.apply(&g, &mut yb);
        let diff: Vec<Vec6> = ye
            .iter()
            .zip(&yb)
            .map(|(a, b)| std::array::from_fn(|k| a[k] - b[k]))
            .collect();
        let (d, scale) = (max_abs(&diff), max_abs(&yb));
        assert!(
            d <= 1e-12 * scale,
            "trial {seed}: explicit N γ + r differs from the body form by {d:e} (scale {scale:e})"
        );
    }
    for i in [0, n / 2, n - 1] {
        assert_eq!(
            explicit.diag_block(i),
            p.diag_block(i),
            "diagonal block {i}"
        );
    }
}

#[test]
fn dumped_problem_reads_back_bit_for_bit_under_both_laws() {
    for law in [FrictionLaw::Associated, FrictionLaw::DeSaxce] {
        let op = ExplicitDelassus::from_problem(&pile(law));
        let text = SiconosProblem::from_delassus(&op).to_text();
        let back = SiconosProblem::parse(&text, "dump.dat")
            .unwrap_or_else(|e| panic!("{law:?}: {e}"))
            .to_delassus();
        assert_eq!(back.law, law);
        assert_eq!(back.row_offsets, op.row_offsets, "{law:?}: block rows");
        assert_eq!(back.cols, op.cols, "{law:?}: block columns");
        assert!(back.blocks == op.blocks, "{law:?}: blocks differ");
        assert!(back.r == op.r, "{law:?}: r differs");
        assert_eq!(back.cones, op.cones, "{law:?}: cones");
    }
}

#[test]
fn six_d_siconos_error_is_the_natural_map_residual_under_both_laws() {
    for law in [FrictionLaw::Associated, FrictionLaw::DeSaxce] {
        let mut op = ExplicitDelassus::from_problem(&pile(law));
        let p = SiconosProblem::from_delassus(&op);
        let n = p.n_contacts;
        for seed in [5, 6] {
            let g = trial(n, seed, 1e-4);
            let mut y = vec![[0.0; 6]; n];
            op.apply(&g, &mut y);
            let ours = repose::solver::residual(&op, &g, &y);
            let theirs = p.error(&p.extract(&g)).abs;
            assert!(
                (ours - theirs).abs() <= 1e-12 * ours,
                "{law:?}, trial {seed}: natural map {ours:e}, d = 6 Siconos error {theirs:e}"
            );
        }
    }
}

#[test]
fn unknown_law_is_an_error_at_its_line() {
    let op = ExplicitDelassus::from_problem(&pile(FrictionLaw::Associated));
    let text = SiconosProblem::from_delassus(&op).to_text();
    let last = text.lines().count();
    let bad = text.replace("law associated", "law coulomb");
    let e = SiconosProblem::parse(&bad, "dump.dat").unwrap_err();
    assert_eq!(e.line(), Some(last), "{e}");
    assert!(e.to_string().contains("unknown law \"coulomb\""), "{e}");
}
