//! Short trajectories. (see the crate docs in `main.rs`).

use super::*;

fn column_world() -> World {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/column.ron");
    repose::scene::Scene::load(&path, &[])
        .expect("scenes/column.ron")
        .build()
        .expect("column world")
}

/// `w` solved by projected Jacobi to the relative residual 10⁻⁶ (at most
/// `cap` iterations a step), the setting [`TRAJECTORY_REL`] is derived for.
fn with_jacobi(mut w: World, cap: usize) -> World {
    w.model.solver = SolverSettings {
        method: SolverMethod::Jacobi,
        tolerance: 1e-6,
        max_iterations: cap,
        ..Default::default()
    };
    w
}

/// Steps a copy of `world` `steps` times; returns it with the path bound
/// Σₖ h·maxᵢ|vᵢ|, the farthest any sphere can have travelled.
fn run_steps(world: &World, stepper: &mut Stepper, steps: usize) -> (World, f64) {
    let mut w = world.clone();
    let mut path = 0.0;
    for _ in 0..steps {
        stepper.step(&mut w).expect("finite step");
        path += w.model.time_step
            * w.state
                .bodies
                .vel
                .iter()
                .map(|v| v.length())
                .fold(0.0, f64::max);
    }
    (w, path)
}

/// The largest distance between the two worlds' sphere centres, and where.
fn max_position_difference(a: &World, b: &World) -> (f64, usize) {
    a.state
        .bodies
        .pos
        .iter()
        .zip(&b.state.bodies.pos)
        .map(|(x, y)| x.distance(*y))
        .enumerate()
        .fold((0.0, 0), |m, (i, d)| if d > m.0 { (d, i) } else { m })
}

/// Trajectory tolerance, as a fraction of the path bound Σₖ h·maxᵢ|vᵢ|.
///
/// Positions are integrated in f64 by every backend, so they differ only
/// through the velocities each step's solve returns. Every backend stops at
/// the relative residual 10⁻⁶ (or at `max_iterations`), and that
/// residual does not pin the velocities to f32 precision: property 2b
/// measured velocities within ≈2·10⁻⁴ (M-norm, relative) of the exact
/// solution at a residual of 2·10⁻⁶. Two backends can thus differ by some
/// 4·10⁻⁴ of the velocity scale in a step, and by that fraction of the
/// distance travelled over the run, as long as the contact set does not
/// change (100 steps = 0.1 s: the piles do not rearrange). Rounding itself
/// (f32 ε ≈ 10⁻⁷) is far below. 2·10⁻³ leaves a factor of 5; a real bug
/// (a wrong impulse in any step) moves spheres by a sizeable fraction of
/// their path.
const TRAJECTORY_REL: f64 = 2e-3;

fn assert_trajectories_agree(solver: Solver32) {
    let name = solver.name();
    let is_gpu = matches!(solver, Solver32::Gpu(_));
    let mut stepper = Stepper::with_backend(solver.into_backend());
    let steps = 100;
    for (scene, world) in [
        ("column", with_jacobi(column_world(), 200)),
        (
            "stiff pile of 200",
            with_jacobi(common::pile_world(200, 0.001, 0.001), 100),
        ),
        (
            "loose pile of 200",
            with_jacobi(common::loose_pile_world(200, 0.001, 0.001), 100),
        ),
    ] {
        let (w64, path) = run_steps(&world, &mut Stepper::new(), steps);
        let (w, _) = run_steps(&world, &mut stepper, steps);
        let mut against = vec![("cpu (f64)", w64)];
        if is_gpu {
            against.push((
                "cpu-f32",
                run_steps(&world, &mut Stepper::with_backend(Backend::CpuF32), steps).0,
            ));
        }
        for (other, wo) in against {
            let (d, i) = max_position_difference(&w, &wo);
            eprintln!(
                "OBSERVED {scene}, {steps} steps, {name} vs {other}: max position difference {d:.3e} m = {:.3e} of the path bound {path:.3e} m (body {i})",
                d / path
            );
            assert!(
                d <= TRAJECTORY_REL * path,
                "{scene}, {steps} steps: body {i} ends {d:.3e} m from where {other} puts it (tolerance {TRAJECTORY_REL:e} × path {path:.3e} m)\n  {name}: {:?}\n  {other}: {:?}",
                w.state.bodies.pos[i],
                wo.state.bodies.pos[i]
            );
        }
    }
}

for_each_f32_solver! {
    /// Property 4: 100 steps through `Stepper` end at the same positions as
    /// the f64 backend (and the GPU's at the mirror's).
    trajectories_agree => assert_trajectories_agree;
}
