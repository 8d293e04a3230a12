//! Tests of the exact projection onto the 6-D friction cone (`repose::cone`):
//! against the reference cases shipped in `tests/data/cone/`, against an
//! independent interior-point SOCP solve (clarabel), and against the
//! variational characterisation of a projection onto a closed convex cone;
//! and the separate 3-D Coulomb and 5-D rolling projections against the 6-D
//! one, regime by regime.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};
use proptest::prelude::*;
use repose::cone::{
    is_inside, natural_map_residual_sq, project, project_coulomb, project_rolling, project_scaled,
    Vec6,
};
use repose::material::ConeCoeffs;

// ---------------------------------------------------------------------------
// Small vector helpers
// ---------------------------------------------------------------------------

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

fn sub(a: &Vec6, b: &Vec6) -> Vec6 {
    std::array::from_fn(|i| a[i] - b[i])
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// The three parts of a 6-vector in the order (coefficient, block components):
/// sliding (μ; γ_u, γ_w), spinning (σ; τ_n), rolling (ρ; τ_u, τ_w).
fn parts(x: &Vec6, c: &ConeCoeffs) -> [(f64, f64); 3] {
    [
        (c.mu, x[1].hypot(x[2])),
        (c.sigma, x[3].abs()),
        (c.rho, x[4].hypot(x[5])),
    ]
}

/// w ∈ C° ⇔ ⟨w, y⟩ ≤ 0 ∀ y ∈ C ⇔ sup_{y₀ ≥ 0} y₀ (w₀ + Σ_k μ_k ‖w_k‖) ≤ 0 ⇔
/// w₀ + Σ_k μ_k ‖w_k‖ ≤ 0 (blocks with μ_k = 0 are unconstrained). Returns the
/// left-hand side, to be compared with a tolerance.
fn polar_violation(w: &Vec6, c: &ConeCoeffs) -> f64 {
    w[0] + parts(w, c).iter().map(|(m, n)| m * n).sum::<f64>()
}

/// Largest violation of the constraints of C at y (≤ 0 inside).
fn cone_violation(y: &Vec6, c: &ConeCoeffs) -> f64 {
    parts(y, c)
        .iter()
        .map(|(m, n)| n - m * y[0])
        .fold(-y[0], f64::max)
}

/// A feasible point next to y: blocks with a zero coefficient are set to
/// zero, and y₀ is raised until every other block fits (raising y₀ only
/// loosens the constraints). Used to make the conic solver's answer, which
/// may violate the cone by its feasibility tolerance, exactly feasible before
/// its distance to x is compared with the closed form's.
fn made_feasible(y: &Vec6, c: &ConeCoeffs) -> Vec6 {
    let mut r = *y;
    let blocks: [(f64, &[usize]); 3] = [(c.mu, &[1, 2]), (c.sigma, &[3]), (c.rho, &[4, 5])];
    let mut y0 = r[0].max(0.0);
    for (m, comps) in blocks {
        if m > 0.0 {
            let n = comps.iter().map(|&j| r[j] * r[j]).sum::<f64>().sqrt();
            y0 = y0.max(n / m);
        } else {
            for &j in comps {
                r[j] = 0.0;
            }
        }
    }
    r[0] = y0;
    r
}

/// Number of random cases: `n` times the factor in the environment variable
/// `REPOSE_TEST_CASES_FACTOR` (default 1; raise it for a long stress run).
fn cases(n: u32) -> u32 {
    let factor = std::env::var("REPOSE_TEST_CASES_FACTOR")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(1);
    n.saturating_mul(factor.max(1))
}

/// The random cases are the same on every run, so that a test that passed
/// once passes again (CI gates on it): the seed is fixed unless the
/// environment variable `PROPTEST_RNG_SEED` names another, which is how to
/// explore (`PROPTEST_RNG_SEED=$RANDOM REPOSE_TEST_CASES_FACTOR=20 cargo test
/// --test cone_projection`).
const DEFAULT_SEED: u64 = 0x5eed_c0e5;

/// Proptest's defaults with the seed of [`DEFAULT_SEED`] unless the
/// environment sets one.
fn base_config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = proptest::test_runner::RngSeed::Fixed(DEFAULT_SEED);
    }
    config
}

/// Proptest configuration with `cases(n)` cases; failing inputs are saved
/// beside this file (`cone_projection.proptest-regressions`) and replayed first.
fn config(n: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(n),
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..base_config()
    }
}

fn coeffs_scale(c: &ConeCoeffs) -> f64 {
    1.0 + c.mu + c.rho + c.sigma
}

// ---------------------------------------------------------------------------
// Independent reference: an interior-point SOCP solve with clarabel
// ---------------------------------------------------------------------------

/// argmin_{y ∈ C} (y − x)ᵀ W (y − x) with W = diag(w_f ×3, w_t ×3), solved as a
/// conic QP by clarabel in the variables z = W^½ y (so that the objective is
/// well conditioned whatever the weights): min ½ zᵀPz + qᵀz with P = 2I,
/// q = −2 W^½ x, subject to A z + s = b (= 0), s ∈ K, where with
/// y = W^-½ z = D z the constraints of C read
///   γ_n ≥ 0                                        (nonnegative cone, 1 row)
///   (μ d₀ z₀, d₁ z₁, d₂ z₂) ∈ SOC(3)  or z₁ = z₂ = 0 when μ = 0 (zero cone)
///   (σ d₀ z₀, d₃ z₃)        ∈ SOC(2)  or z₃ = 0      when σ = 0
///   (ρ d₀ z₀, d₄ z₄, d₅ z₅) ∈ SOC(3)  or z₄ = z₅ = 0 when ρ = 0,
/// each cone's rows divided by their largest entry (a cone is invariant under
/// positive scaling). The point W^½ x is normalised to unit length first (the
/// projection is positively homogeneous).
fn conic_solver_projection(x: &Vec6, c: &ConeCoeffs, w_f: f64, w_t: f64) -> Vec6 {
    let d: Vec6 = std::array::from_fn(|i| 1.0 / if i < 3 { w_f } else { w_t }.sqrt());
    let zx: Vec6 = std::array::from_fn(|i| x[i] / d[i]);
    let nz = norm(&zx);
    if nz == 0.0 {
        return [0.0; 6];
    }

    let p_rows: Vec<Vec<f64>> = (0..6)
        .map(|i| (0..6).map(|j| if i == j { 2.0 } else { 0.0 }).collect())
        .collect();
    let p_mat = CscMatrix::from(p_rows.iter());
    let q: Vec<f64> = zx.iter().map(|v| -2.0 * v / nz).collect();

    let mut a_rows: Vec<Vec<f64>> = Vec::new();
    let mut cones = Vec::new();
    let row = |entries: &[(usize, f64)]| {
        let mut r = vec![0.0; 6];
        for &(j, v) in entries {
            r[j] = v;
        }
        r
    };
    // s = z₀ ≥ 0.
    a_rows.push(row(&[(0, -1.0)]));
    cones.push(SupportedConeT::NonnegativeConeT(1));
    for (coef, comps) in [
        (c.mu, &[1usize, 2][..]),
        (c.sigma, &[3][..]),
        (c.rho, &[4, 5][..]),
    ] {
        if coef > 0.0 {
            let scale = comps.iter().map(|&j| d[j]).fold(coef * d[0], f64::max);
            a_rows.push(row(&[(0, -coef * d[0] / scale)]));
            for &j in comps {
                a_rows.push(row(&[(j, -d[j] / scale)]));
            }
            cones.push(SupportedConeT::SecondOrderConeT(comps.len() + 1));
        } else {
            for &j in comps {
                a_rows.push(row(&[(j, -1.0)]));
            }
            cones.push(SupportedConeT::ZeroConeT(comps.len()));
        }
    }
    let a_mat = CscMatrix::from(a_rows.iter());
    let b = vec![0.0; a_rows.len()];

    // Equilibration off first: on these tiny, well-scaled problems it only
    // costs accuracy on degenerate instances (measured over 6000 random cases:
    // worst difference 1.2e-6 instead of 4e-5). Should that run stall, retry
    // with clarabel's defaults but tight tolerances.
    let tight = DefaultSettings {
        verbose: false,
        max_iter: 500,
        tol_gap_abs: 1e-12,
        tol_gap_rel: 1e-12,
        tol_feas: 1e-12,
        tol_ktratio: 1e-9,
        ..DefaultSettings::default()
    };
    let attempts = [
        DefaultSettings {
            equilibrate_enable: false,
            ..tight.clone()
        },
        tight,
    ];
    let mut statuses = Vec::new();
    for settings in attempts {
        let mut solver = DefaultSolver::new(&p_mat, &q, &a_mat, &b, &cones, settings)
            .expect("clarabel rejected the projection problem");
        solver.solve();
        let status = solver.solution.status;
        if matches!(status, SolverStatus::Solved | SolverStatus::AlmostSolved) {
            return std::array::from_fn(|i| solver.solution.x[i] * nz * d[i]);
        }
        statuses.push(status);
    }
    panic!("clarabel did not solve the projection of {x:?} onto {c:?}: {statuses:?}");
}

// ---------------------------------------------------------------------------
// Random inputs
// ---------------------------------------------------------------------------

/// A cone coefficient: zero (collapsed part), small (1e-3…5e-2, typical
/// rolling/spinning lengths in metres) or ordinary (up to 1.5).
fn coef() -> impl Strategy<Value = f64> {
    prop_oneof![
        1 => Just(0.0),
        1 => 1e-3..5e-2f64,
        3 => 5e-2..1.5f64,
    ]
}

fn coeffs() -> impl Strategy<Value = ConeCoeffs> {
    (coef(), coef(), coef()).prop_map(|(mu, rho, sigma)| ConeCoeffs { mu, rho, sigma })
}

/// A component with its own scale in 1e-3…1e3 (mixed scales within one
/// point), sometimes exactly zero.
fn component() -> impl Strategy<Value = f64> {
    prop_oneof![
        1 => Just(0.0),
        9 => (-1.0..1.0f64, -3i32..=3).prop_map(|(a, k)| a * 10f64.powi(k)),
    ]
}

fn raw_point() -> impl Strategy<Value = Vec6> {
    proptest::array::uniform::<_, 6>(component())
}

/// How a test point is built from raw random numbers.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// The raw point itself (mostly outside C, any position).
    Generic,
    /// Strictly inside C.
    Inside,
    /// On the boundary of C: every part with μ_k > 0 exactly saturated.
    Boundary,
    /// Some parts saturated, others inside.
    PartlySaturated,
    /// In the polar cone C° (projection 0).
    Polar,
    /// On the boundary of the polar cone (x₀ + Σ μ_k ‖l_k‖ = 0).
    PolarBoundary,
    /// A boundary point plus a tiny perturbation (near the kinks of ψ).
    NearBoundary,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => Just(Kind::Generic),
        1 => Just(Kind::Inside),
        1 => Just(Kind::Boundary),
        1 => Just(Kind::PartlySaturated),
        1 => Just(Kind::Polar),
        1 => Just(Kind::PolarBoundary),
        1 => Just(Kind::NearBoundary),
    ]
}

/// Block k of x (0: sliding (1,2), 1: spinning (3), 2: rolling (4,5)).
const BLOCKS: [&[usize]; 3] = [&[1, 2], &[3], &[4, 5]];

fn block_coef(c: &ConeCoeffs, k: usize) -> f64 {
    [c.mu, c.sigma, c.rho][k]
}

/// Sets block k of x to the direction of `raw`'s block k (or a fixed
/// direction if that is zero) with length `len`.
fn set_block(x: &mut Vec6, raw: &Vec6, k: usize, len: f64) {
    let idx = BLOCKS[k];
    let n = norm(&idx.iter().map(|&i| raw[i]).collect::<Vec<_>>());
    for (j, &i) in idx.iter().enumerate() {
        let dir = if n > 0.0 {
            raw[i] / n
        } else if j == 0 {
            1.0
        } else {
            0.0
        };
        x[i] = dir * len;
    }
}

fn build(kind: Kind, c: &ConeCoeffs, raw: &Vec6, u: &[f64; 3]) -> Vec6 {
    let y0 = if raw[0] != 0.0 { raw[0].abs() } else { 1.0 };
    let mut x = *raw;
    match kind {
        Kind::Generic => {}
        Kind::Inside | Kind::Boundary | Kind::PartlySaturated | Kind::NearBoundary => {
            x[0] = y0;
            for (k, &uk) in u.iter().enumerate() {
                let frac = match kind {
                    Kind::Inside => 0.999 * uk,
                    Kind::PartlySaturated if uk < 0.5 => uk,
                    _ => 1.0,
                };
                set_block(&mut x, raw, k, frac * block_coef(c, k) * y0);
            }
            if let Kind::NearBoundary = kind {
                for (i, v) in x.iter_mut().enumerate() {
                    *v += 1e-9 * y0 * (u[i % 3] - 0.5);
                }
            }
        }
        Kind::Polar | Kind::PolarBoundary => {
            let s: f64 = parts(raw, c).iter().map(|(m, n)| m * n).sum();
            x[0] = -s
                - if let Kind::Polar = kind {
                    y0 * u[0]
                } else {
                    0.0
                };
        }
    }
    x
}

fn point_and_coeffs() -> impl Strategy<Value = (Kind, Vec6, ConeCoeffs)> {
    (
        kind(),
        coeffs(),
        raw_point(),
        proptest::array::uniform::<_, 3>(0.0..1.0f64),
    )
        .prop_map(|(k, c, raw, u)| (k, build(k, &c, &raw, &u), c))
}

fn of_kind(which: Kind) -> impl Strategy<Value = (Vec6, ConeCoeffs)> {
    (
        coeffs(),
        raw_point(),
        proptest::array::uniform::<_, 3>(0.0..1.0f64),
    )
        .prop_map(move |(c, raw, u)| (build(which, &c, &raw, &u), c))
}

/// A random point of C with normal component of size about `scale`; each part
/// is on its boundary with probability ½ (`u[k] ≥ 0.5`), otherwise inside.
fn point_in_cone(c: &ConeCoeffs, raw: &Vec6, u: &[f64; 3], scale: f64) -> Vec6 {
    let y0 = scale * (0.1 + raw[0].abs().min(10.0));
    let mut y = [y0, 0.0, 0.0, 0.0, 0.0, 0.0];
    for (k, &uk) in u.iter().enumerate() {
        let frac = if uk >= 0.5 { 1.0 } else { 2.0 * uk };
        set_block(&mut y, raw, k, frac * block_coef(c, k) * y0);
    }
    y
}

/// Several random points of C for the variational inequality.
fn cone_samples() -> impl Strategy<Value = Vec<(Vec6, [f64; 3], f64)>> {
    proptest::collection::vec(
        (
            raw_point(),
            proptest::array::uniform::<_, 3>(0.0..1.0f64),
            prop_oneof![Just(1e-3), Just(1.0), Just(1e3)],
        ),
        4,
    )
}

// ---------------------------------------------------------------------------
// 1. Reference cases
// ---------------------------------------------------------------------------

#[test]
fn projection_matches_reference_cases() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/cone/projection_cases.csv"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    let header = lines.next().expect("empty CSV");
    assert_eq!(
        header,
        "x_n,x_u,x_w,x_tn,x_tu,x_tw,mu,rho,sigma,p_n,p_u,p_w,p_tn,p_tu,p_tw"
    );
    let tol = 1e-12;
    let mut rows = 0;
    let mut worst = (0.0_f64, 0_usize, [0.0; 6], [0.0; 6], [0.0; 6]);
    for (i, line) in lines.enumerate() {
        let v: Vec<f64> = line
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .unwrap_or_else(|e| panic!("row {i}: {s:?}: {e}"))
            })
            .collect();
        assert_eq!(v.len(), 15, "row {i}: {line}");
        let x: Vec6 = v[0..6].try_into().unwrap();
        let c = ConeCoeffs {
            mu: v[6],
            rho: v[7],
            sigma: v[8],
        };
        let want: Vec6 = v[9..15].try_into().unwrap();
        let got = project(&x, &c);
        let rel = dist(&got, &want) / norm(&x).max(1e-300);
        if rel >= worst.0 {
            worst = (rel, i + 1, x, got, want);
        }
        rows += 1;
    }
    assert_eq!(rows, 360, "expected 360 reference cases");
    let (rel, row, x, got, want) = worst;
    println!("worst reference row {row}: relative error {rel:e}");
    assert!(
        rel <= tol,
        "reference row {row}: x = {x:?}\n got  {got:?}\n want {want:?}\n \
         ‖got − want‖/‖x‖ = {rel:e} > tolerance {tol:e}"
    );
}

// ---------------------------------------------------------------------------
// 2. Against the interior-point solver
// ---------------------------------------------------------------------------

/// Interior-point accuracy, relative to ‖x‖. The solver works on x/‖x‖ with
/// gap and feasibility tolerances 1e-12; on degenerate instances (no strict
/// complementarity: x₀ = 0 exactly with the apex as the answer, points exactly
/// on the boundary) its iterates converge only like the square root of that.
const SOLVER_TOL: f64 = 1e-6;

/// Beyond [`SOLVER_TOL`] a difference is accepted only when the closed form p
/// is feasible and no farther from x (in the metric) than the solver's answer
/// q, made exactly feasible first ([`made_feasible`]). That is a sound criterion, not a loophole: with f(y) = ‖y − x‖²_W and p*
/// the projection, strong convexity gives ‖p − p*‖²_W ≤ f(p) − f(p*) ≤
/// f(q) − f(p*) ≈ ‖q − p*‖²_W, i.e. the closed form is then at least as close
/// to the true projection as the solver is. There is no cap on the size of
/// such a difference: the solver's error is what it is (on a cone with a
/// coefficient of 3e-3 under metric weights 10⁵ apart clarabel stopped 1.4e-3
/// from the apex the closed form gives exactly). What keeps the comparison
/// from passing vacuously is [`MAX_NEARER_SHARE`].
///
/// At most this share of the cases may be decided by "feasible and nearer":
/// if the conic solver disagreed often, the test would no longer compare
/// anything, and it fails.
const MAX_NEARER_SHARE: f64 = 0.02;

/// Outcome of one comparison with the conic solver.
struct Comparison {
    /// ‖closed form − solver‖_W / ‖x‖_W.
    rel: f64,
    /// Whether the difference exceeded [`SOLVER_TOL`] and was accepted because
    /// the closed form is feasible and nearer to x.
    nearer: bool,
}

/// Compares `got` with clarabel's argmin_{y∈C} (y − x)ᵀW(y − x),
/// W = diag(w_f ×3, w_t ×3), in the norm ‖v‖_W = √(vᵀWv) relative to ‖x‖_W;
/// the failure message prints both answers, their distances to x and the
/// tolerances.
fn compare_with_conic_solver(
    x: &Vec6,
    c: &ConeCoeffs,
    w_f: f64,
    w_t: f64,
    got: &Vec6,
) -> Result<Comparison, TestCaseError> {
    let want = conic_solver_projection(x, c, w_f, w_t);
    let wnorm2 = |v: &Vec6| -> f64 {
        (0..6)
            .map(|i| v[i] * v[i] * if i < 3 { w_f } else { w_t })
            .sum()
    };
    let nx2 = wnorm2(x).max(1e-300);
    let rel = (wnorm2(&sub(got, &want)) / nx2).sqrt();
    if rel <= SOLVER_TOL {
        return Ok(Comparison { rel, nearer: false });
    }
    // The solver's answer may sit outside C by its feasibility tolerance, and
    // so be nearer to x than any point of C: compare with a feasible point
    // next to it.
    let (f_got, f_want) = (
        wnorm2(&sub(got, x)),
        wnorm2(&sub(&made_feasible(&want, c), x)),
    );
    let viol = cone_violation(got, c);
    let nearer = viol <= ROUND_TOL * norm(x) * coeffs_scale(c) && f_got <= f_want + 1e-13 * nx2;
    prop_assert!(
        nearer,
        "x = {x:?}, {c:?}, metric weights ({w_f:e}, {w_t:e})\n \
         closed form {got:?} (distance² to x {f_got:e}, cone violation {viol:e})\n \
         clarabel    {want:?} (distance² to x, once made feasible, {f_want:e})\n \
         ‖difference‖/‖x‖ = {rel:e} > tolerance {SOLVER_TOL:e}, \
         and the closed form is not both feasible and nearer to x"
    );
    Ok(Comparison { rel, nearer: true })
}

/// Runs `test` on `cases` values of `strategy` (proptest, with shrinking on
/// failure) and prints the worst relative difference at the end
/// (`cargo test -- --nocapture` shows it).
fn run_against_conic_solver<S>(
    what: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<Comparison, TestCaseError>,
) where
    S: Strategy,
{
    let worst = std::cell::Cell::new(0.0_f64);
    let worst_agreeing = std::cell::Cell::new(0.0_f64);
    let nearer = std::cell::Cell::new(0_u32);
    let cases = self::cases(cases);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..base_config()
    });
    let result = runner.run(&strategy, |v| {
        let cmp = test(v)?;
        worst.set(worst.get().max(cmp.rel));
        if cmp.nearer {
            nearer.set(nearer.get() + 1);
        } else {
            worst_agreeing.set(worst_agreeing.get().max(cmp.rel));
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{what}: {e}");
    }
    println!(
        "{what}: {cases} cases; worst ‖difference‖/‖x‖ {:e} (tolerance {SOLVER_TOL:e}); \
         {} case(s) beyond it where the closed form is feasible and nearer to x \
         (worst overall {:e})",
        worst_agreeing.get(),
        nearer.get(),
        worst.get()
    );
    let share = f64::from(nearer.get()) / f64::from(cases.max(1));
    assert!(
        share <= MAX_NEARER_SHARE,
        "{what}: {} of {cases} cases ({:.1} %) were decided by \"feasible and nearer\", \
         more than {:.1} %: the conic solver no longer checks the closed form",
        nearer.get(),
        100.0 * share,
        100.0 * MAX_NEARER_SHARE
    );
}

#[test]
fn projection_matches_conic_solver() {
    run_against_conic_solver(
        "projection vs clarabel",
        1500,
        point_and_coeffs(),
        |(_kind, x, c)| compare_with_conic_solver(&x, &c, 1.0, 1.0, &project(&x, &c)),
    );
}

#[test]
fn scaled_projection_matches_conic_solver_in_metric() {
    run_against_conic_solver(
        "scaled projection vs clarabel",
        1000,
        (point_and_coeffs(), -3.0..3.0f64, -3.0..3.0f64),
        |((_kind, x, c), lb_f, lb_t)| {
            let (b_f, b_t) = (10f64.powf(lb_f), 10f64.powf(lb_t));
            let got = project_scaled(&x, &c, b_f, b_t);
            compare_with_conic_solver(&x, &c, 1.0 / b_f, 1.0 / b_t, &got)
        },
    );
}

/// The case on which clarabel stopped 1.4e-3 (relative) away from the true
/// projection (CI, random seed): μ = ρ = 0, a small σ, metric weights 10⁵
/// apart, x pointing out of the cone with no spin. The feasible set is then
/// {t = 0, r = 0, |s| ≤ σ n, n ≥ 0} and, x having n < 0 and s = 0, its
/// nearest point in any diagonal metric is the apex.
#[test]
fn scaled_projection_is_the_apex_when_normal_and_spin_point_out() {
    let x = [-0.6323389946757422, -117.30726069861666, 0.0, 0.0, 0.0, 0.0];
    let c = ConeCoeffs {
        mu: 0.0,
        rho: 0.0,
        sigma: 0.0033044358511142057,
    };
    for (b_f, b_t) in [
        (1.0 / 178.22629564510126, 1.0 / 1.0273137751877432e-3),
        (1.0, 1.0),
        (1e3, 1e-3),
    ] {
        let got = project_scaled(&x, &c, b_f, b_t);
        assert!(
            got.iter().all(|v| *v == 0.0),
            "weights ({b_f:e}, {b_t:e}): projection {got:?}, want the apex [0; 6]"
        );
    }
}

#[test]
fn coulomb_projection_matches_conic_solver() {
    run_against_conic_solver(
        "coulomb projection vs clarabel",
        300,
        (proptest::array::uniform::<_, 3>(component()), coef()),
        |(x3, mu)| {
            let x = [x3[0], x3[1], x3[2], 0.0, 0.0, 0.0];
            let p = project_coulomb(&x3, mu);
            let c = ConeCoeffs {
                mu,
                rho: 0.0,
                sigma: 0.0,
            };
            compare_with_conic_solver(&x, &c, 1.0, 1.0, &[p[0], p[1], p[2], 0.0, 0.0, 0.0])
        },
    );
}

// ---------------------------------------------------------------------------
// 3. Laws of the projection onto a closed convex cone
// ---------------------------------------------------------------------------

/// Rounding-level tolerance, relative to ‖x‖ (times the coefficients' size).
const ROUND_TOL: f64 = 1e-13;

proptest! {
    #![proptest_config(config(3000))]

    #[test]
    fn projection_lies_in_cone((kind, x, c) in point_and_coeffs()) {
        let p = project(&x, &c);
        let viol = cone_violation(&p, &c);
        let tol = ROUND_TOL * norm(&x) * coeffs_scale(&c);
        prop_assert!(
            viol <= tol,
            "{kind:?} x = {x:?}, {c:?}: p = {p:?} violates C by {viol:e} > tolerance {tol:e}"
        );
        prop_assert!(is_inside(&p, &c, ROUND_TOL), "is_inside rejects p = {p:?} ({c:?})");
    }

    #[test]
    fn projection_is_idempotent((kind, x, c) in point_and_coeffs()) {
        let p = project(&x, &c);
        let pp = project(&p, &c);
        let err = dist(&pp, &p);
        let tol = ROUND_TOL * norm(&x);
        prop_assert!(
            err <= tol,
            "{kind:?} x = {x:?}, {c:?}\n Π(x)    = {p:?}\n Π(Π(x)) = {pp:?}\n \
             ‖Π(Π(x)) − Π(x)‖ = {err:e} > tolerance {tol:e}"
        );
    }

    /// Moreau: p = Π_C(x) iff p ∈ C, x − p ∈ C° and ⟨x − p, p⟩ = 0.
    #[test]
    fn projection_residual_is_orthogonal_and_in_polar_cone((kind, x, c) in point_and_coeffs()) {
        let p = project(&x, &c);
        let r = sub(&x, &p);
        let nx = norm(&x);
        let orth = dot(&r, &p);
        let tol_orth = ROUND_TOL * nx * nx * coeffs_scale(&c);
        prop_assert!(
            orth.abs() <= tol_orth,
            "{kind:?} x = {x:?}, {c:?}, p = {p:?}: ⟨x − p, p⟩ = {orth:e}, tolerance {tol_orth:e}"
        );
        let pv = polar_violation(&r, &c);
        let tol_polar = ROUND_TOL * nx * coeffs_scale(&c);
        prop_assert!(
            pv <= tol_polar,
            "{kind:?} x = {x:?}, {c:?}, p = {p:?}: x − p = {r:?} is outside C° by {pv:e}, \
             tolerance {tol_polar:e}"
        );
    }

    /// ⟨x − Π(x), y − Π(x)⟩ ≤ 0 for every y ∈ C.
    #[test]
    fn projection_satisfies_variational_inequality(
        (kind, x, c) in point_and_coeffs(),
        samples in cone_samples(),
    ) {
        let p = project(&x, &c);
        let r = sub(&x, &p);
        for (raw, u, scale) in &samples {
            let y = point_in_cone(&c, raw, u, *scale);
            let vi = dot(&r, &sub(&y, &p));
            let tol = ROUND_TOL * norm(&x) * (norm(&x) + norm(&y)) * coeffs_scale(&c);
            prop_assert!(
                vi <= tol,
                "{kind:?} x = {x:?}, {c:?}, p = {p:?}, y = {y:?}: \
                 ⟨x − p, y − p⟩ = {vi:e} > tolerance {tol:e}"
            );
        }
    }

    #[test]
    fn projection_is_nonexpansive(
        (_k1, x, c) in point_and_coeffs(),
        raw in raw_point(),
    ) {
        let y: Vec6 = std::array::from_fn(|i| x[i] + raw[i]);
        let d = dist(&project(&x, &c), &project(&y, &c));
        let bound = dist(&x, &y) * (1.0 + ROUND_TOL) + ROUND_TOL * (norm(&x) + norm(&y));
        prop_assert!(
            d <= bound,
            "x = {x:?}, y = {y:?}, {c:?}: ‖Π(x) − Π(y)‖ = {d:e} > ‖x − y‖ bound {bound:e}"
        );
    }

    /// Π(αx) = αΠ(x), α > 0: bit-for-bit for powers of two (the projection
    /// rescales by powers of two internally), to rounding otherwise.
    #[test]
    fn projection_is_positively_homogeneous(
        (kind, x, c) in point_and_coeffs(),
        k in -40i32..40,
        alpha in 1e-3..1e3f64,
    ) {
        let p = project(&x, &c);
        let two_k = 2f64.powi(k);
        let pk = project(&x.map(|v| v * two_k), &c);
        prop_assert_eq!(pk, p.map(|v| v * two_k), "{:?} x = {:?}, {:?}, α = 2^{}", kind, x, c, k);
        let pa = project(&x.map(|v| v * alpha), &c);
        let err = dist(&pa, &p.map(|v| v * alpha));
        let tol = 1e-12 * alpha * norm(&x);
        prop_assert!(
            err <= tol,
            "{kind:?} x = {x:?}, {c:?}, α = {alpha}: ‖Π(αx) − αΠ(x)‖ = {err:e} > tolerance {tol:e}"
        );
    }

    #[test]
    fn projection_is_identity_inside_cone((x, c) in of_kind(Kind::Inside)) {
        prop_assert_eq!(project(&x, &c), x, "{:?}", c);
        prop_assert!(is_inside(&x, &c, 0.0));
    }

    #[test]
    fn projection_is_identity_on_cone_boundary((x, c) in of_kind(Kind::Boundary)) {
        let p = project(&x, &c);
        let err = dist(&p, &x);
        let tol = ROUND_TOL * norm(&x);
        prop_assert!(
            err <= tol,
            "x = {x:?} (on ∂C), {c:?}: Π(x) = {p:?}, ‖Π(x) − x‖ = {err:e} > tolerance {tol:e}"
        );
    }

    #[test]
    fn projection_is_zero_on_polar_cone((x, c) in of_kind(Kind::Polar)) {
        let p = project(&x, &c);
        let err = norm(&p);
        let tol = ROUND_TOL * norm(&x);
        prop_assert!(
            err <= tol,
            "x = {x:?} (in C°), {c:?}: ‖Π(x)‖ = {err:e} > tolerance {tol:e}, Π(x) = {p:?}"
        );
    }

    #[test]
    fn projection_is_zero_on_polar_cone_boundary((x, c) in of_kind(Kind::PolarBoundary)) {
        let p = project(&x, &c);
        let err = norm(&p);
        let tol = ROUND_TOL * norm(&x) * coeffs_scale(&c);
        prop_assert!(
            err <= tol,
            "x = {x:?} (on ∂C°), {c:?}: ‖Π(x)‖ = {err:e} > tolerance {tol:e}, Π(x) = {p:?}"
        );
    }

    /// is_inside agrees with the distance to C: exact points of C pass with
    /// tolerance 0, and points far from C fail even with a small tolerance.
    #[test]
    fn is_inside_agrees_with_distance_to_cone((kind, x, c) in point_and_coeffs()) {
        let d = dist(&project(&x, &c), &x);
        let nx = norm(&x);
        if is_inside(&x, &c, 0.0) {
            prop_assert!(
                d <= ROUND_TOL * nx,
                "{kind:?} x = {x:?}, {c:?}: is_inside(x, 0) but dist(x, C) = {d:e}"
            );
        }
        if d > 1e-6 * nx {
            prop_assert!(
                !is_inside(&x, &c, 1e-12),
                "{kind:?} x = {x:?}, {c:?}: is_inside(x, 1e-12) but dist(x, C)/‖x‖ = {:e}",
                d / nx
            );
        }
    }
}

// ---------------------------------------------------------------------------
// 4. Projection in the metric B⁻¹
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(2000))]

    /// ⟨B⁻¹(x − p), y − p⟩ ≤ 0 for every y ∈ C, p ∈ C and ⟨B⁻¹(x − p), p⟩ = 0:
    /// the optimality conditions of argmin_{y∈C} (y − x)ᵀB⁻¹(y − x).
    #[test]
    fn scaled_projection_satisfies_metric_variational_inequality(
        (kind, x, c) in point_and_coeffs(),
        lb_f in -3.0..3.0f64,
        lb_t in -3.0..3.0f64,
        samples in cone_samples(),
    ) {
        let (b_f, b_t) = (10f64.powf(lb_f), 10f64.powf(lb_t));
        let p = project_scaled(&x, &c, b_f, b_t);
        let g: Vec6 = std::array::from_fn(|i| (x[i] - p[i]) / if i < 3 { b_f } else { b_t });
        let nx = norm(&x);
        let gscale = nx / b_f.min(b_t);
        let viol = cone_violation(&p, &c);
        let tol_in = ROUND_TOL * nx * coeffs_scale(&c) * (b_f / b_t).max(b_t / b_f).sqrt();
        prop_assert!(
            viol <= tol_in,
            "{kind:?} x = {x:?}, {c:?}, b_f = {b_f:e}, b_t = {b_t:e}: p = {p:?} violates C \
             by {viol:e} > tolerance {tol_in:e}"
        );
        let orth = dot(&g, &p);
        let tol_orth = 1e-12 * gscale * nx * coeffs_scale(&c);
        prop_assert!(
            orth.abs() <= tol_orth,
            "{kind:?} x = {x:?}, {c:?}, b_f = {b_f:e}, b_t = {b_t:e}, p = {p:?}: \
             ⟨B⁻¹(x − p), p⟩ = {orth:e}, tolerance {tol_orth:e}"
        );
        for (raw, u, scale) in &samples {
            let y = point_in_cone(&c, raw, u, *scale);
            let vi = dot(&g, &sub(&y, &p));
            let tol = 1e-12 * gscale * (nx + norm(&y)) * coeffs_scale(&c);
            prop_assert!(
                vi <= tol,
                "{kind:?} x = {x:?}, {c:?}, b_f = {b_f:e}, b_t = {b_t:e}, p = {p:?}, y = {y:?}: \
                 ⟨B⁻¹(x − p), y − p⟩ = {vi:e} > tolerance {tol:e}"
            );
        }
    }

    #[test]
    fn scaled_projection_with_equal_weights_equals_projection(
        (kind, x, c) in point_and_coeffs(),
        lb in -3.0..3.0f64,
    ) {
        let b = 10f64.powf(lb);
        prop_assert_eq!(project_scaled(&x, &c, b, b), project(&x, &c), "{:?} x = {:?}, {:?}", kind, x, c);
        // Nearly equal weights take the general path and must agree to rounding.
        let got = project_scaled(&x, &c, b, b * (1.0 + 1e-15));
        let want = project(&x, &c);
        let err = dist(&got, &want);
        let tol = 1e-12 * norm(&x);
        prop_assert!(
            err <= tol,
            "{kind:?} x = {x:?}, {c:?}, b = {b:e}: project_scaled(b, b(1+1e-15)) = {got:?}, \
             project = {want:?}, difference {err:e} > tolerance {tol:e}"
        );
    }

    /// The metric B⁻¹ and λB⁻¹ (λ > 0) have the same minimiser.
    #[test]
    fn scaled_projection_is_invariant_to_common_weight_scale(
        (kind, x, c) in point_and_coeffs(),
        lb_f in -3.0..3.0f64,
        lb_t in -3.0..3.0f64,
        ll in -3.0..3.0f64,
    ) {
        let (b_f, b_t, l) = (10f64.powf(lb_f), 10f64.powf(lb_t), 10f64.powf(ll));
        let p = project_scaled(&x, &c, b_f, b_t);
        let q = project_scaled(&x, &c, l * b_f, l * b_t);
        let err = dist(&p, &q);
        let tol = 1e-12 * norm(&x);
        prop_assert!(
            err <= tol,
            "{kind:?} x = {x:?}, {c:?}, b_f = {b_f:e}, b_t = {b_t:e}, λ = {l:e}: \
             {p:?} vs {q:?}, difference {err:e} > tolerance {tol:e}"
        );
    }

    // -----------------------------------------------------------------------
    // 5. Coulomb special case
    // -----------------------------------------------------------------------

    #[test]
    fn coulomb_projection_equals_6d_projection_without_rolling_and_spinning(
        x in proptest::array::uniform::<_, 3>(component()),
        mu in coef(),
        torques in proptest::array::uniform::<_, 3>(component()),
    ) {
        let got = project_coulomb(&x, mu);
        let c = ConeCoeffs { mu, rho: 0.0, sigma: 0.0 };
        // Zero rolling and spinning parts: the very same computation.
        let p = project(&[x[0], x[1], x[2], 0.0, 0.0, 0.0], &c);
        prop_assert_eq!(got, [p[0], p[1], p[2]], "x = {:?}, μ = {}", x, mu);
        prop_assert_eq!(&p[3..], &[0.0; 3][..]);
        // Any torques: with ρ = σ = 0 they project to 0 and leave the force part alone.
        let p = project(&[x[0], x[1], x[2], torques[0], torques[1], torques[2]], &c);
        let err = dist(&got, &p[..3]);
        let tol = 1e-15 * norm(&x);
        prop_assert!(
            err <= tol,
            "x = {x:?}, torques = {torques:?}, μ = {mu}: coulomb {got:?} vs 6-D {p:?}, \
             difference {err:e} > tolerance {tol:e}"
        );
        prop_assert_eq!(&p[3..], &[0.0; 3][..]);
    }

    // -----------------------------------------------------------------------
    // Natural-map residual
    // -----------------------------------------------------------------------

    /// With γ = Π(x) and y = γ − x the pair is complementary (γ ∈ C,
    /// y ∈ −C° = C*, γ ⊥ y), so the natural-map residual vanishes.
    #[test]
    fn natural_map_residual_vanishes_at_complementary_pairs((kind, x, c) in point_and_coeffs()) {
        let gamma = project(&x, &c);
        let y = sub(&gamma, &x);
        let r = natural_map_residual_sq(&gamma, &y, &c);
        let tol = (ROUND_TOL * norm(&x) * coeffs_scale(&c)).powi(2);
        prop_assert!(
            r <= tol,
            "{kind:?} x = {x:?}, {c:?}: residual² = {r:e} > tolerance {tol:e} at γ = {gamma:?}, y = {y:?}"
        );
    }

    /// With y = 0 the residual is the squared distance from γ to C, and it is
    /// positive exactly when γ ∉ C.
    #[test]
    fn natural_map_residual_with_zero_velocity_is_squared_distance_to_cone(
        (kind, x, c) in point_and_coeffs(),
    ) {
        let r = natural_map_residual_sq(&x, &[0.0; 6], &c);
        let d2 = dist(&x, &project(&x, &c)).powi(2);
        let tol = 1e-12 * d2;
        prop_assert!(
            (r - d2).abs() <= tol,
            "{kind:?} x = {x:?}, {c:?}: residual² = {r:e}, dist(x, C)² = {d2:e}, tolerance {tol:e}"
        );
        if let Kind::Inside = kind {
            prop_assert_eq!(r, 0.0, "x = {:?} is inside, {:?}", x, c);
        }
    }
}

// ---------------------------------------------------------------------------
// 6. The 3-D Coulomb and 5-D rolling projections against the 6-D one
// ---------------------------------------------------------------------------

/// Where a test point of the 3-D or 5-D cone lies, i.e. which case of
/// Acary & Bourrier 2021, Prop. 5.2 its projection falls in.
#[derive(Clone, Copy, Debug)]
enum Regime {
    /// The raw point (any case).
    Generic,
    /// Strictly inside K (case 1).
    Inside,
    /// In the polar cone (case 2).
    Polar,
    /// Outside, projecting onto the sliding face only (case 4, eq. 69).
    SlidingFace,
    /// Outside, projecting onto the rolling face only (case 5, eq. 70).
    RollingFace,
    /// Outside, projecting onto the edge where both parts saturate (case 3, eq. 68).
    Edge,
    /// Projecting onto the sliding face with the rolling part exactly on its
    /// boundary (a tie between cases 3 and 4).
    Tie,
    /// As `Tie`, pushed 1e-9 into case 3.
    NearTie,
}

fn regime() -> impl Strategy<Value = Regime> {
    prop_oneof![
        2 => Just(Regime::Generic),
        1 => Just(Regime::Inside),
        1 => Just(Regime::Polar),
        1 => Just(Regime::SlidingFace),
        1 => Just(Regime::RollingFace),
        1 => Just(Regime::Edge),
        1 => Just(Regime::Tie),
        1 => Just(Regime::NearTie),
    ]
}

/// Unit vector along (a, b), or (1, 0) if that is zero.
fn unit2(a: f64, b: f64) -> [f64; 2] {
    let n = a.hypot(b);
    if n > 0.0 {
        [a / n, b / n]
    } else {
        [1.0, 0.0]
    }
}

/// A 5-D point (r_N, r_T, m_R) of the given regime and, except for `Generic`,
/// its exact projection p, built backwards: p on the wanted face of K_r, then
/// x = p + a vector of the normal cone of K_r at p, i.e. α(−μ, d_T, 0) for a
/// saturated sliding part plus β(−μ_r, 0, d_R) for a saturated rolling part
/// (α, β ≥ 0; d_T, d_R the unit directions of the parts).
fn build_rolling(
    k: Regime,
    mu: f64,
    mu_r: f64,
    raw: &[f64; 5],
    u: &[f64; 4],
) -> ([f64; 5], Option<[f64; 5]>) {
    let y0 = if raw[0] != 0.0 { raw[0].abs() } else { 1.0 };
    let (dt, dr) = (unit2(raw[1], raw[2]), unit2(raw[3], raw[4]));
    let (sat_t, sat_r) = match k {
        Regime::SlidingFace | Regime::Tie => (true, false),
        Regime::RollingFace => (false, true),
        Regime::Edge | Regime::NearTie => (true, true),
        _ => (false, false),
    };
    let lt = if sat_t {
        mu * y0
    } else {
        0.999 * u[0] * mu * y0
    };
    let lr = match k {
        Regime::Tie | Regime::NearTie => mu_r * y0,
        _ if sat_r => mu_r * y0,
        _ => 0.999 * u[1] * mu_r * y0,
    };
    let p = [y0, lt * dt[0], lt * dt[1], lr * dr[0], lr * dr[1]];
    let alpha = if sat_t { y0 * (0.01 + 3.0 * u[2]) } else { 0.0 };
    let beta = match k {
        Regime::NearTie => 1e-9 * y0,
        Regime::RollingFace | Regime::Edge => y0 * (0.01 + 3.0 * u[3]),
        _ => 0.0,
    };
    let x = [
        p[0] - alpha * mu - beta * mu_r,
        p[1] + alpha * dt[0],
        p[2] + alpha * dt[1],
        p[3] + beta * dr[0],
        p[4] + beta * dr[1],
    ];
    match k {
        Regime::Generic => (*raw, None),
        Regime::Polar => {
            let x0 = -(mu * raw[1].hypot(raw[2]) + mu_r * raw[3].hypot(raw[4])) - y0 * u[0];
            ([x0, raw[1], raw[2], raw[3], raw[4]], Some([0.0; 5]))
        }
        _ => (x, Some(p)),
    }
}

fn rolling_case() -> impl Strategy<Value = (Regime, [f64; 5], f64, f64, Option<[f64; 5]>)> {
    (
        regime(),
        coef(),
        coef(),
        proptest::array::uniform::<_, 5>(component()),
        proptest::array::uniform::<_, 4>(0.0..1.0f64),
    )
        .prop_map(|(k, mu, mu_r, raw, u)| {
            let (x, p) = build_rolling(k, mu, mu_r, &raw, &u);
            (k, x, mu, mu_r, p)
        })
}

proptest! {
    #![proptest_config(config(4000))]

    /// project_rolling (Acary & Bourrier 2021, Prop. 5.2, its own code) equals
    /// the 6-D projection of (r_N, r_T, 0, m_R) with ρ = μ_r, σ = 0, in every
    /// case of the proposition, and equals the projection the point was built
    /// from.
    #[test]
    fn rolling_projection_equals_6d_projection_in_every_regime(
        (k, x, mu, mu_r, want) in rolling_case(),
    ) {
        let got = project_rolling(&x, mu, mu_r);
        let c = ConeCoeffs { mu, rho: mu_r, sigma: 0.0 };
        let p6 = project(&[x[0], x[1], x[2], 0.0, x[3], x[4]], &c);
        let six = [p6[0], p6[1], p6[2], p6[4], p6[5]];
        prop_assert_eq!(p6[3], 0.0);
        let nx = norm(&x);
        let err = dist(&got, &six);
        let tol = 1e-14 * nx * (1.0 + mu + mu_r);
        prop_assert!(
            err <= tol,
            "{k:?} x = {x:?}, μ = {mu}, μ_r = {mu_r}:\n project_rolling {got:?}\n \
             6-D project     {six:?}\n difference {err:e} > tolerance {tol:e}"
        );
        if let Regime::Inside = k {
            prop_assert_eq!(got, x, "inside point must be returned bit for bit");
        }
        if let Some(p) = want {
            let err = dist(&got, &p);
            let tol = 1e-12 * nx * (1.0 + mu + mu_r);
            prop_assert!(
                err <= tol,
                "{k:?} x = {x:?}, μ = {mu}, μ_r = {mu_r}: project_rolling {got:?}, \
                 built projection {p:?}, difference {err:e} > tolerance {tol:e}"
            );
        }
    }

    /// project_coulomb equals the 6-D projection of (x, 0, 0, 0) with
    /// ρ = σ = 0 in each case (inside, polar, on the face), and the projection
    /// the point was built from (the rolling builder with μ_r = 0 and no
    /// rolling part gives the 3-D cases).
    #[test]
    fn coulomb_projection_equals_6d_projection_in_every_regime(
        k in prop_oneof![
            Just(Regime::Generic), Just(Regime::Inside), Just(Regime::Polar),
            Just(Regime::SlidingFace),
        ],
        mu in coef(),
        raw in proptest::array::uniform::<_, 3>(component()),
        u in proptest::array::uniform::<_, 4>(0.0..1.0f64),
    ) {
        let (x5, want) = build_rolling(k, mu, 0.0, &[raw[0], raw[1], raw[2], 0.0, 0.0], &u);
        let x = [x5[0], x5[1], x5[2]];
        let got = project_coulomb(&x, mu);
        let c = ConeCoeffs { mu, rho: 0.0, sigma: 0.0 };
        let p6 = project(&[x[0], x[1], x[2], 0.0, 0.0, 0.0], &c);
        let six = [p6[0], p6[1], p6[2]];
        let nx = norm(&x);
        let err = dist(&got, &six);
        let tol = 1e-14 * nx * (1.0 + mu);
        prop_assert!(
            err <= tol,
            "{k:?} x = {x:?}, μ = {mu}:\n project_coulomb {got:?}\n 6-D project     {six:?}\n \
             difference {err:e} > tolerance {tol:e}"
        );
        if let Some(p) = want {
            let err = dist(&got, &p[..3]);
            let tol = 1e-12 * nx * (1.0 + mu);
            prop_assert!(
                err <= tol,
                "{k:?} x = {x:?}, μ = {mu}: project_coulomb {got:?}, built projection {p:?}, \
                 difference {err:e} > tolerance {tol:e}"
            );
        }
    }
}

#[test]
fn rolling_projection_hand_computed_cases() {
    // Eq. 68 (both saturated): x = (1, 3, 4, 0, 6), μ = 0.5, μ_r = 1:
    // r_N = (1 + 0.5·5 + 1·6)/(1 + 0.25 + 1) = 9.5/2.25 ≈ 4.22, and indeed
    // μ r_N < 5, μ_r r_N < 6.
    let rn = 9.5 / 2.25;
    let p = project_rolling(&[1.0, 3.0, 4.0, 0.0, 6.0], 0.5, 1.0);
    let want = [rn, 0.5 * rn * 0.6, 0.5 * rn * 0.8, 0.0, rn];
    assert!(dist(&p, &want) <= 1e-15, "{p:?} vs {want:?}");
    // Eq. 69 (sliding only): with m_R = (0, 2) the eq. 68 value 5.5/2.25 would
    // leave the rolling part inside (μ_r r_N > 2), so r_N = (1 + 2.5)/1.25 = 2.8
    // and m_R is kept.
    let p = project_rolling(&[1.0, 3.0, 4.0, 0.0, 2.0], 0.5, 1.0);
    let want = [2.8, 1.4 * 0.6, 1.4 * 0.8, 0.0, 2.0];
    assert!(dist(&p, &want) <= 1e-15, "{p:?} vs {want:?}");
    // Zero coefficients: the normal half-line.
    assert_eq!(
        project_rolling(&[2.0, 1.0, 1.0, 1.0, 1.0], 0.0, 0.0),
        [2.0, 0.0, 0.0, 0.0, 0.0]
    );
    assert_eq!(
        project_rolling(&[-2.0, 0.0, 0.0, 0.0, 0.0], 0.0, 0.0),
        [0.0; 5]
    );
    assert_eq!(project_rolling(&[0.0; 5], 0.3, 0.1), [0.0; 5]);
}
