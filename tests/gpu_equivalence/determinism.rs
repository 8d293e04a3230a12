//! Determinism. (see the crate docs in `main.rs`).

use super::*;
use crate::piles::stiff_pile;

impl Solver32 {
    /// Replaces the solver's state by a fresh one (new workspace, or new
    /// pipelines and buffers on the same device).
    fn reset(&mut self) {
        match self {
            Solver32::CpuF32(ws) => *ws = JacobiF32Workspace::default(),
            Solver32::Gpu(g) => g.solver = GpuJacobi::new(&g.ctx).expect("GPU pipelines"),
        }
    }
}

/// Asserts two runs are identical bit for bit, naming the first difference.
fn assert_bit_identical(what: &str, a: &Run32, b: &Run32) {
    let bits6 = |g: &[f32; 6]| g.map(f32::to_bits);
    if let Some(i) = (0..a.gamma.len()).find(|&i| bits6(&a.gamma[i]) != bits6(&b.gamma[i])) {
        panic!(
            "{what}: contact {i} differs between runs\n  first  {:?}\n  second {:?}",
            a.gamma[i], b.gamma[i]
        );
    }
    let bits_body = |x: &PackedBody| (x.v.map(f32::to_bits), x.w.map(f32::to_bits));
    if let Some(k) =
        (0..a.bodies.len()).find(|&k| bits_body(&a.bodies[k]) != bits_body(&b.bodies[k]))
    {
        panic!(
            "{what}: body {k} differs between runs\n  first  {:?}\n  second {:?}",
            a.bodies[k], b.bodies[k]
        );
    }
    assert_eq!(a.stats, b.stats, "{what}: statistics differ between runs");
}

fn assert_runs_are_bit_identical(mut solver: Solver32) {
    let p = stiff_pile(1000);
    let other = common::pile_problem(300, 0.002, 0.0);
    for s in [
        iterations(100),
        SolverSettings {
            method: SolverMethod::Jacobi,
            // The unweighted natural map, which the f64 assessment below
            // recomputes (stats_match_mirror covers the weighted one too).
            residual: ResidualMeasure::Contact,
            max_iterations: 2000,
            tolerance: 3e-3,
            check_every: 10,
            ..Default::default()
        },
    ] {
        let what = format!(
            "{}, pile of 1000, {} iterations, tolerance {:e}",
            solver.name(),
            s.max_iterations,
            s.tolerance
        );
        let first = solver.solve(p, &s);
        // Another problem in between leaves other data in the buffers and,
        // on the GPU, another iteration count: the next solve's loop is
        // encoded in other chunks (its first ends at the check after 57
        // iterations, not at the first), which must not change a bit.
        solver.solve(&other, &iterations(57));
        let second = solver.solve(p, &s);
        assert_bit_identical(&what, &first, &second);
        solver.reset();
        let third = solver.solve(p, &s);
        assert_bit_identical(&format!("{what}, fresh solver"), &first, &third);
        eprintln!(
            "OBSERVED {what}: three runs bit-identical ({:?})",
            first.stats
        );
    }
}

for_each_f32_solver! {
    /// Property 3: the same solve twice (with another problem in between,
    /// and again on a fresh solver) gives bit-identical impulses, body
    /// velocities and statistics: fixed summation order, no atomics, and on
    /// the GPU a result that does not depend on how the loop was chunked.
    runs_are_bit_identical => assert_runs_are_bit_identical;
}
