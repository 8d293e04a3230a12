//! The solver family — projected Jacobi, APGD, projected Gauss–Seidel, the
//! projected fixed point and the extra-gradient iteration — on the same
//! problems, through the same test bodies: each solution satisfies the
//! complementarity conditions of its contact law (Tasora & Anitescu 2013,
//! eq. 40 for the associated law, Acary & Bourrier 2021, eq. 63 for De
//! Saxcé's), the methods agree where the solution is unique, and APGD needs
//! fewer iterations than Jacobi.

mod common;

use common::{first_problem, loose_pile_world, pile_problem};
use repose::cone;
use repose::material::FrictionLaw;
use repose::problem::explicit::ExplicitDelassus;
use repose::problem::{BodyDelassus, ContactProblem, Delassus, Vec6};
use repose::solver::{
    self, modified_velocity, SolveStats, SolverMethod, SolverSettings, Workspace,
};

fn settings(method: SolverMethod, tolerance: f64, max_iterations: usize) -> SolverSettings {
    SolverSettings {
        method,
        tolerance,
        max_iterations,
        ..Default::default()
    }
}

fn solve(p: &ContactProblem, s: &SolverSettings) -> (Vec<Vec6>, SolveStats) {
    let mut op = BodyDelassus::new(p);
    let mut gamma = vec![[0.0; 6]; p.n_contacts()];
    let stats = solver::solve(&mut op, &mut gamma, s, &mut Workspace::default());
    (gamma, stats)
}

/// γ ∈ C, ŷ ∈ C* and γ·ŷ = 0 per contact, with ŷ the law's velocity.
fn assert_law_solution<D: Delassus>(op: &mut D, gamma: &[Vec6], what: &str) {
    let n = op.n_contacts();
    let mut y = vec![[0.0; 6]; n];
    op.apply(gamma, &mut y);
    let law = op.law();
    let yhat: Vec<Vec6> = (0..n)
        .map(|i| modified_velocity(&y[i], &op.cone(i), law))
        .collect();
    let gscale = gamma.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    let uscale = yhat.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    for i in 0..n {
        let c = op.cone(i);
        assert!(
            cone::is_inside(&gamma[i], &c, 1e-9),
            "{what}: contact {i}: γ = {:?} outside the cone {c:?}",
            gamma[i]
        );
        // ŷ ∈ C* ⇔ Π_C(−ŷ) = 0.
        let neg: Vec6 = yhat[i].map(|x| -x);
        let pn = cone::project(&neg, &c)
            .iter()
            .map(|x| x * x)
            .sum::<f64>()
            .sqrt();
        assert!(
            pn <= 1e-5 * uscale,
            "{what}: contact {i}: ŷ = {:?} not in the dual cone (|Π_C(−ŷ)| = {pn:e}, scale {uscale:e})",
            yhat[i]
        );
        let comp: f64 = (0..6).map(|k| gamma[i][k] * yhat[i][k]).sum();
        assert!(
            comp.abs() <= 1e-5 * gscale * uscale,
            "{what}: contact {i}: γ·ŷ = {comp:e} (scale {:e})",
            gscale * uscale
        );
    }
}

/// A loose pile of 125 spheres with rolling and spinning friction, posed
/// with `law`.
fn pile(law: FrictionLaw) -> ContactProblem {
    let mut p = first_problem(loose_pile_world(125, 0.002, 0.001));
    p.law = law;
    p
}

fn solves_the_pile(method: SolverMethod, law: FrictionLaw) {
    let p = pile(law);
    let s = settings(method, 1e-9, 200_000);
    let (gamma, stats) = solve(&p, &s);
    let what = format!("{method} / {law:?}");
    assert!(stats.converged, "{what} did not converge: {stats:?}");
    assert_law_solution(&mut BodyDelassus::new(&p), &gamma, &what);
}

macro_rules! every_method {
    ($($name:ident: $method:expr;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn solves_the_associated_pile_with_rolling_and_spinning() {
                solves_the_pile($method, FrictionLaw::Associated);
            }
            #[test]
            fn solves_the_de_saxce_pile_with_rolling_and_spinning() {
                solves_the_pile($method, FrictionLaw::DeSaxce);
            }
            #[test]
            fn solves_the_explicit_form_of_the_same_pile() {
                let p = first_problem(loose_pile_world(27, 0.002, 0.001));
                let mut op = ExplicitDelassus::from_operator(&mut BodyDelassus::new(&p));
                op.law = FrictionLaw::DeSaxce;
                let mut gamma = vec![[0.0; 6]; p.n_contacts()];
                let s = settings($method, 1e-9, 200_000);
                let stats = solver::solve(&mut op, &mut gamma, &s, &mut Workspace::default());
                assert!(stats.converged, "{} did not converge: {stats:?}", $method);
                assert_law_solution(&mut op, &gamma, $method.name());
            }
        }
    )*};
}

every_method! {
    jacobi: SolverMethod::Jacobi;
    apgd: SolverMethod::Apgd;
    pgs: SolverMethod::Pgs;
    fixed_point: SolverMethod::FixedPoint;
    extra_gradient: SolverMethod::ExtraGradient;
    interior_point: SolverMethod::InteriorPoint;
    newton: SolverMethod::Newton;
}

/// The interior-point method's two forms of one program.
mod interior_point_forms {
    use super::*;
    /// The method poses the program lifted (w = M^-½ D γ, body-form KKT) when
    /// the operator has a body form and with N explicit when it has only
    /// blocks; ½γᵀNγ = ½‖M^-½Dγ‖² makes them the same program, whose body
    /// velocities are unique (even where γ is not).
    #[test]
    fn lifted_and_explicit_programs_give_the_same_velocities() {
        let p = pile(FrictionLaw::Associated);
        let s = settings(SolverMethod::InteriorPoint, 1e-9, 200);
        let mut body = BodyDelassus::new(&p);
        let mut g_body = vec![[0.0; 6]; p.n_contacts()];
        let st_body = solver::solve(&mut body, &mut g_body, &s, &mut Workspace::default());
        let mut explicit = ExplicitDelassus::from_problem(&p);
        let mut g_explicit = vec![[0.0; 6]; p.n_contacts()];
        let st_explicit = solver::solve(
            &mut explicit,
            &mut g_explicit,
            &s,
            &mut Workspace::default(),
        );
        assert!(
            st_body.converged && st_explicit.converged,
            "{st_body:?} {st_explicit:?}"
        );
        let velocities = |g: &[Vec6]| {
            let (mut v, mut w) = (p.v_free.clone(), p.w_free.clone());
            p.velocities_into(g, &mut v, &mut w);
            (v, w)
        };
        let (v1, w1) = velocities(&g_body);
        let (v2, w2) = velocities(&g_explicit);
        let scale = v1.iter().chain(&v2).fold(0.0f64, |m, x| m.max(x.length()));
        let dv = v1
            .iter()
            .zip(&v2)
            .map(|(a, b)| (*a - *b).length())
            .fold(0.0, f64::max);
        let dw = w1
            .iter()
            .zip(&w2)
            .map(|(a, b)| (*a - *b).length())
            .fold(0.0, f64::max);
        assert!(
            dv <= 1e-6 * scale && dw <= 1e-6 * scale / 0.01,
            "lifted vs explicit: max |Δv| = {dv:e}, max |Δω| = {dw:e} (velocity scale {scale:e} m/s, \
             tolerance 1e-6 of it, and of it over R = 1 cm for ω)"
        );
    }
}

/// Without friction the associated problem is a convex QP whose velocities
/// y = Nγ + r are unique (even where γ is not): every method gives the same.
#[test]
fn all_methods_agree_without_friction() {
    let mut p = pile_problem(64, 0.0, 0.0);
    for c in &mut p.cone {
        c.mu = 0.0;
    }
    let mut reference: Option<(SolverMethod, Vec<Vec6>)> = None;
    for method in SolverMethod::ALL {
        let (gamma, stats) = solve(&p, &settings(method, 1e-11, 500_000));
        assert!(stats.converged, "{method} did not converge: {stats:?}");
        let mut y = vec![[0.0; 6]; p.n_contacts()];
        BodyDelassus::new(&p).apply(&gamma, &mut y);
        match &reference {
            None => reference = Some((method, y)),
            Some((m0, y0)) => {
                let scale = y0.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
                let (worst, i) = (0..y.len())
                    .map(|i| {
                        (
                            (0..6)
                                .map(|k| (y[i][k] - y0[i][k]).abs())
                                .fold(0.0, f64::max),
                            i,
                        )
                    })
                    .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
                assert!(
                    worst <= 1e-7 * scale,
                    "{method} vs {m0}: velocities differ by {worst:e} (scale {scale:e}) at contact {i}: {:?} vs {:?}",
                    y[i],
                    y0[i]
                );
            }
        }
    }
}

/// Residual after every iteration until the tolerance, for each method.
fn iterations_to(p: &ContactProblem, method: SolverMethod, tolerance: f64) -> usize {
    let s = SolverSettings {
        check_every: 1,
        ..settings(method, tolerance, 100_000)
    };
    let (_, stats) = solve(p, &s);
    assert!(
        stats.converged,
        "{method} did not reach {tolerance:e}: {stats:?}"
    );
    stats.iterations
}

#[test]
fn apgd_reaches_the_jacobi_residual_in_fewer_iterations_on_random_piles() {
    let piles = [
        ("overlapping pile", pile_problem(343, 0.0, 0.0)),
        (
            "loose pile",
            first_problem(loose_pile_world(1000, 0.002, 0.001)),
        ),
    ];
    for (name, p) in piles {
        let jacobi = iterations_to(&p, SolverMethod::Jacobi, 1e-6);
        let apgd = iterations_to(&p, SolverMethod::Apgd, 1e-6);
        eprintln!(
            "{name}, {} contacts: Jacobi {jacobi} iterations, APGD {apgd}",
            p.n_contacts()
        );
        assert!(
            (apgd as f64) <= 0.5 * jacobi as f64,
            "{name}: APGD took {apgd} iterations, Jacobi {jacobi}; expected at most half"
        );
    }
}
