//! CPU benchmarks on the settled pile of `scenes/bench_pile.ron` (10,648
//! spheres, ~33,000 contacts):
//!
//! * `jacobi_100_iterations`: one solve of 100 projected Jacobi iterations;
//!   criterion's throughput is **contact-iterations per second**.
//! * `collide`: broadphase + narrowphase of the pile.
//! * `step_100_iterations`: a whole time step; after it, the share of each
//!   stage in the step time is printed (collision should stay ≤ 20 %).

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use repose::collision;
use repose::problem::BodyDelassus;
use repose::scene::Scene;
use repose::solver::jacobi::{self, JacobiWorkspace};
use repose::solver::SolverSettings;
use repose::step::Stepper;

fn load_pile() -> repose::world::World {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/bench_pile.ron");
    Scene::load(&path, &[])
        .expect("bench scene")
        .build()
        .expect("bench world")
}

fn benches(c: &mut Criterion) {
    let mut world = load_pile();
    let mut stepper = Stepper::new();
    for _ in 0..3 {
        stepper.step(&mut world).expect("finite");
    }
    let problem = stepper.last_problem.clone();
    let nc = problem.n_contacts();
    let iters = 100;
    eprintln!(
        "bench pile: {} spheres, {} contacts",
        world.bodies.len(),
        nc
    );

    let mut g = c.benchmark_group("cpu");
    g.sample_size(10);
    g.throughput(Throughput::Elements((nc * iters) as u64));
    let settings = SolverSettings {
        max_iterations: iters,
        tolerance: 0.0,
        ..Default::default()
    };
    let mut ws = JacobiWorkspace::default();
    g.bench_function("jacobi_100_iterations", |b| {
        b.iter(|| {
            let mut op = BodyDelassus::new(&problem);
            let mut gamma = vec![[0.0; 6]; nc];
            jacobi::solve(&mut op, &mut gamma, &settings, &mut ws)
        })
    });
    g.throughput(Throughput::Elements(world.bodies.len() as u64));
    let env = world.envelope();
    g.bench_function("collide", |b| {
        b.iter(|| collision::detect(&world.bodies, &world.boundaries, env))
    });
    world.solver = settings.clone();
    let mut timed = Stepper::new();
    g.throughput(Throughput::Elements(1));
    g.bench_function("step_100_iterations", |b| {
        b.iter(|| timed.step(&mut world).expect("finite"))
    });
    g.finish();

    let secs = timed.timers.seconds();
    let total: f64 = secs.values().sum();
    eprintln!(
        "stage shares of the step time ({} contacts, {iters} iterations):",
        nc
    );
    for (k, v) in &secs {
        eprintln!("  {k:<12} {:5.1} %", 100.0 * v / total);
    }
}

criterion_group!(cpu, benches);
criterion_main!(cpu);
