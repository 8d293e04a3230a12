//! Benchmarks (criterion). CPU group on the settled pile of
//! `scenes/bench_pile.ron` (10,648 spheres, ~33,000 contacts):
//!
//! * `cpu/jacobi_100_iterations`: one f64 solve of 100 projected Jacobi
//!   iterations; criterion's throughput is **contact-iterations per second**.
//! * `cpu/collide`: broadphase + narrowphase of the pile.
//! * `cpu/step_100_iterations`: a whole time step; afterwards the share of
//!   each stage in the step time is printed (collision should stay ≤ 20 %).
//!
//! Penalty group on `scenes/bench_penalty_bed.ron` (6,000 spheres settling
//! into a bed under the penalty formulation, warmed up 100 steps):
//! `penalty/step`, one scene step (about 90 sub-steps); criterion's
//! throughput is **particle-steps per second** (bodies × sub-steps), and
//! the report of `repose::bench::penalty` over 20 steps follows.
//!
//! GPU group on `scenes/bench_pile_large.ron` (39,304 spheres, ~120,000
//! contacts), when an adapter exists (lavapipe in CI): `gpu/jacobi_100_iterations`
//! (upload + 100 iterations + readback), then the difference-timed report of
//! `repose::bench` with the copy-kernel bandwidth and the solver's share of it.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use repose::bench::{bench_solver, prepare};
use repose::collision;
use repose::gpu::GpuContext;
use repose::problem::BodyDelassus;
use repose::scene::Scene;
use repose::solver::packed::pack;
use repose::solver::{jacobi, Workspace};
use repose::solver::{SolverMethod, SolverSettings};
use repose::step::{Backend, Stepper};

fn scene(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes")
        .join(name)
}

fn settings(iters: usize) -> SolverSettings {
    SolverSettings {
        max_iterations: iters,
        tolerance: 0.0,
        ..Default::default()
    }
}

fn cpu(c: &mut Criterion) {
    let mut world = Scene::load(&scene("bench_pile.ron"), &[])
        .expect("bench scene")
        .build()
        .expect("bench world");
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
    let s = settings(iters);
    let mut ws = Workspace::default();
    g.bench_function("jacobi_100_iterations", |b| {
        b.iter(|| {
            let mut op = BodyDelassus::new(&problem);
            let mut gamma = vec![[0.0; 6]; nc];
            jacobi::solve(&mut op, &mut gamma, &s, &mut ws)
        })
    });
    g.throughput(Throughput::Elements(world.bodies.len() as u64));
    let env = world.envelope();
    g.bench_function("collide", |b| {
        b.iter(|| collision::detect(&world.bodies, &world.boundaries, env, world.time))
    });
    world.solver = s.clone();
    let mut timed = Stepper::new();
    g.throughput(Throughput::Elements(1));
    g.bench_function("step_100_iterations", |b| {
        b.iter(|| timed.step(&mut world).expect("finite"))
    });
    g.finish();

    let secs = timed.timers.seconds();
    let total: f64 = secs.values().sum();
    eprintln!("stage shares of the step time ({nc} contacts, {iters} iterations):");
    for (k, v) in &secs {
        eprintln!("  {k:<12} {:5.1} %", 100.0 * v / total);
    }
    let mut b = Backend::Cpu;
    let (p, g0) = (problem.clone(), stepper.last_impulses().to_vec());
    match bench_solver(&mut b, &p, &g0, iters, 3, SolverMethod::Jacobi) {
        Ok(r) => eprintln!("{r}"),
        Err(e) => eprintln!("cpu report failed: {e:#}"),
    }
}

fn penalty(c: &mut Criterion) {
    let mut w = repose::bench::penalty::warm_world(&scene("bench_penalty_bed.ron"), 100)
        .expect("penalty bench scene");
    let probe = repose::bench::penalty::time_steps(&mut w, 1).expect("a penalty step");
    let mut g = c.benchmark_group("penalty");
    g.sample_size(10);
    g.throughput(Throughput::Elements(
        probe.particles as u64 * probe.substeps,
    ));
    g.bench_function("step", |b| {
        b.iter(|| w.stepper.step(&mut w.world).expect("finite"))
    });
    g.finish();
    match repose::bench::penalty::time_steps(&mut w, 20) {
        Ok(r) => eprintln!("{r}"),
        Err(e) => eprintln!("penalty report failed: {e:#}"),
    }
}

fn gpu(c: &mut Criterion) {
    let Some(ctx) = GpuContext::try_new() else {
        eprintln!("SKIPPED gpu benchmarks: no GPU adapter");
        return;
    };
    let (problem, gamma0) = prepare(&scene("bench_pile_large.ron"), 3).expect("bench scene");
    let nc = problem.n_contacts();
    let iters = 100;
    let mut backend = Backend::gpu(ctx).expect("GPU solver");
    let Backend::Gpu(gs) = &mut backend else {
        unreachable!()
    };
    let s = settings(iters);
    let mut g = c.benchmark_group("gpu");
    g.sample_size(10);
    g.throughput(Throughput::Elements((nc * iters) as u64));
    g.bench_function("jacobi_100_iterations", |b| {
        b.iter(|| {
            let mut packed = pack(&problem, &gamma0);
            let mut g32: Vec<[f32; 6]> = gamma0.iter().map(|g| g.map(|x| x as f32)).collect();
            gs.solver
                .solve(&gs.ctx, &mut packed, &mut g32, &s)
                .expect("GPU solve")
        })
    });
    g.finish();
    match bench_solver(
        &mut backend,
        &problem,
        &gamma0,
        iters,
        3,
        SolverMethod::Jacobi,
    ) {
        Ok(r) => eprintln!("{r}"),
        Err(e) => eprintln!("gpu report failed: {e:#}"),
    }
}

criterion_group!(benches, cpu, penalty, gpu);
criterion_main!(benches);
