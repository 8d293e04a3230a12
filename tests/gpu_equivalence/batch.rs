//! Many worlds in one solve. (see the crate docs in `main.rs`).
//!
//! Property 7: a world solved in a batch ends bit for bit where it ends
//! solved alone — impulses, body velocities, iterations, residuals and
//! whether it converged — for worlds of different sizes, friction, laws,
//! tolerances, caps and shapes, Jacobi and APGD; and a batch costs the
//! dispatches and round trips of its slowest world, not more per world.

use super::*;
use crate::piles::{shapes_problem, stiff_pile};
use repose::gpu::jacobi::BatchEntry;
use repose::gpu::profile::GpuCounters;
use repose::material::FrictionLaw;
use repose::solver::packed::PackedProblem;

/// The worlds of the batch: (name, problem, tolerance, cap).
fn worlds() -> Vec<(&'static str, ContactProblem, f64, usize)> {
    static LOOSE: OnceLock<ContactProblem> = OnceLock::new();
    static SMALL: OnceLock<ContactProblem> = OnceLock::new();
    let loose = LOOSE
        .get_or_init(|| common::first_problem(common::loose_pile_world(1000, 0.001, 0.001)))
        .clone();
    let small = SMALL
        .get_or_init(|| common::first_problem(common::loose_pile_world(200, 0.01, 0.005)))
        .clone();
    let mut de_saxce = small.clone();
    de_saxce.law = FrictionLaw::DeSaxce;
    vec![
        ("loose pile of 1000, to 1e-6", loose, 1e-6, 5000),
        (
            "stiff pile of 1000, capped",
            stiff_pile(1000).clone(),
            1e-6,
            120,
        ),
        ("no contacts", ContactProblem::default(), 1e-6, 100),
        ("loose pile of 200, rho 0.01, to 1e-4", small, 1e-4, 5000),
        ("the same, De Saxcé", de_saxce, 1e-4, 5000),
        ("shapes, no tolerance", shapes_problem().clone(), 0.0, 70),
    ]
}

fn settings(method: SolverMethod, tolerance: f64, cap: usize) -> SolverSettings {
    SolverSettings {
        method,
        tolerance,
        max_iterations: cap,
        ..Default::default()
    }
}

fn bits(r: &Run32) -> (Vec<u32>, Vec<u32>, [u64; 2], usize, bool) {
    let g = r.gamma.iter().flatten().map(|x| x.to_bits()).collect();
    let b = r
        .bodies
        .iter()
        .flat_map(|b| b.v.iter().chain(&b.w))
        .map(|x| x.to_bits())
        .collect();
    let s = &r.stats;
    (
        g,
        b,
        [s.residual_abs.to_bits(), s.residual_rel.to_bits()],
        s.iterations,
        s.converged,
    )
}

/// Solves `worlds` in one batch on `g`: each world's result.
fn solve_batch(g: &mut GpuState, worlds: &[(ContactProblem, SolverSettings)]) -> Vec<Run32> {
    let mut packed: Vec<PackedProblem> = worlds
        .iter()
        .map(|(p, _)| pack(p, &vec![[0.0; 6]; p.n_contacts()]))
        .collect();
    let mut gammas: Vec<Vec<[f32; 6]>> = worlds
        .iter()
        .map(|(p, _)| vec![[0.0; 6]; p.n_contacts()])
        .collect();
    let mut entries: Vec<BatchEntry<'_>> = packed
        .iter_mut()
        .zip(gammas.iter_mut())
        .zip(worlds)
        .map(|((problem, gamma), (_, settings))| BatchEntry {
            problem,
            gamma,
            settings,
        })
        .collect();
    let stats = g
        .solver
        .solve_batch(&g.ctx, &mut entries)
        .expect("GPU batch solve");
    drop(entries);
    packed
        .into_iter()
        .zip(gammas)
        .zip(stats)
        .map(|((p, gamma), stats)| Run32 {
            gamma,
            bodies: p.bodies,
            stats,
        })
        .collect()
}

fn assert_batch_equals_alone(method: SolverMethod) {
    let Some(ctx) = context_for_tests(&format!("batch::{method:?}")) else {
        return;
    };
    let Solver32::Gpu(mut g) = Solver32::gpu(ctx) else {
        unreachable!()
    };
    let worlds: Vec<_> = worlds()
        .into_iter()
        .map(|(name, p, tol, cap)| (name, p, settings(method, tol, cap)))
        .collect();
    let mut alone = Vec::new();
    for (name, p, s) in &worlds {
        let mut one = Solver32::Gpu(g);
        let r = one.solve(p, s);
        eprintln!(
            "OBSERVED {name}, {method:?}, alone: {} contacts, {:?}",
            p.n_contacts(),
            r.stats
        );
        alone.push(r);
        let Solver32::Gpu(back) = one else {
            unreachable!()
        };
        g = back;
    }
    // Worlds that stop at different iterations, for different reasons.
    let stops: std::collections::BTreeSet<_> = alone.iter().map(|r| r.stats.iterations).collect();
    assert!(
        stops.len() >= 3,
        "the worlds should stop at different iterations: {stops:?}"
    );
    assert!(
        alone.iter().any(|r| !r.stats.converged) && alone.iter().any(|r| r.stats.converged),
        "the batch should mix converged and capped worlds"
    );
    let pairs: Vec<_> = worlds
        .iter()
        .map(|(_, p, s)| (p.clone(), s.clone()))
        .collect();
    let batched = solve_batch(&mut g, &pairs);
    // And in another order, so no world is always first.
    let mut reversed = pairs.clone();
    reversed.reverse();
    let mut batched_rev = solve_batch(&mut g, &reversed);
    batched_rev.reverse();
    for (((name, _, _), a), (b, c)) in worlds
        .iter()
        .zip(&alone)
        .zip(batched.iter().zip(&batched_rev))
    {
        for (order, r) in [("in order", b), ("reversed", c)] {
            let (want, got) = (bits(a), bits(r));
            assert!(
                want == got,
                "{name}, {method:?}, batch {order}: differs from the world alone \
                 (alone {:?}, batched {:?}; impulses equal: {}, velocities equal: {})",
                a.stats,
                r.stats,
                want.0 == got.0,
                want.1 == got.1
            );
        }
        eprintln!(
            "OBSERVED {name}, {method:?}: batched = alone, bit for bit ({:?})",
            a.stats
        );
    }
}

#[test]
fn batched_worlds_equal_worlds_alone_jacobi() {
    assert_batch_equals_alone(SolverMethod::Jacobi);
}

#[test]
fn batched_worlds_equal_worlds_alone_apgd() {
    assert_batch_equals_alone(SolverMethod::Apgd);
}

/// Dispatches per solve and round trips per solve of a batch of eight
/// copies of one world equal those of the world alone: the loop's cost does
/// not grow with the number of worlds.
#[test]
fn dispatches_and_round_trips_do_not_grow_with_worlds() {
    let Some(ctx) = context_for_tests("batch::dispatches") else {
        return;
    };
    let Solver32::Gpu(mut g) = Solver32::gpu(ctx) else {
        unreachable!()
    };
    let p = common::first_problem(common::loose_pile_world(200, 0.01, 0.005));
    for method in [SolverMethod::Jacobi, SolverMethod::Apgd] {
        let s = settings(method, 1e-4, 20_000);
        let count = |g: &mut GpuState, n: usize| -> GpuCounters {
            // A first solve sets the chunking estimate; the second is counted.
            let worlds = vec![(p.clone(), s.clone()); n];
            solve_batch(g, &worlds);
            let before = g.solver.counters();
            let runs = solve_batch(g, &worlds);
            assert!(
                runs.iter().all(|r| r.stats.converged),
                "{:?}",
                runs[0].stats
            );
            g.solver.counters().since(&before)
        };
        let one = count(&mut g, 1);
        let eight = count(&mut g, 8);
        eprintln!(
            "OBSERVED {method:?}: 1 world: {} iterations, {} dispatches, {} round trips; 8 worlds: {} iterations, {} dispatches, {} round trips",
            one.iterations, one.dispatches, one.round_trips, eight.iterations, eight.dispatches, eight.round_trips
        );
        assert_eq!(
            eight.iterations,
            8 * one.iterations,
            "{method:?}: each world iterates as alone"
        );
        assert_eq!(
            (eight.dispatches, eight.round_trips, eight.submits),
            (one.dispatches, one.round_trips, one.submits),
            "{method:?}: dispatches, round trips and submits of 8 worlds vs 1"
        );
        // Two dispatches per iteration (contact and body pass), plus two per
        // residual check.
        let it = one.iterations_encoded as f64;
        let per = one.dispatches as f64 / it;
        let checks = it / s.check_every as f64 + 2.0;
        assert!(
            one.dispatches as f64 <= 2.0 * it + 2.0 * checks,
            "{method:?}: {} dispatches for {it} iterations ({per:.2} per iteration)",
            one.dispatches
        );
    }
}
