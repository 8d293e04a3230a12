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
//! Mesh group on the same pile: `mesh/walls_box` is the sphere–boundary
//! contacts with the analytic open box, `mesh/walls_mesh_box` the same
//! open box as a mesh whose floor alone has ≈ 100,000 triangles (a 224 ×
//! 224 grid): what a big CAD mesh adds to a step's detection.
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

/// The pile of `bench_pile.ron` after 3 steps, and its stepper.
fn settled_pile() -> (repose::world::World, Stepper) {
    let mut world = Scene::load(&scene("bench_pile.ron"), &[])
        .expect("bench scene")
        .build()
        .expect("bench world");
    let mut stepper = Stepper::new();
    for _ in 0..3 {
        stepper.step(&mut world).expect("finite");
    }
    (world, stepper)
}

fn cpu(c: &mut Criterion) {
    let (mut world, stepper) = settled_pile();
    let problem = stepper.last_problem().clone();
    let nc = problem.n_contacts();
    let iters = 100;
    eprintln!(
        "bench pile: {} spheres, {} contacts",
        world.state.bodies.len(),
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
    g.throughput(Throughput::Elements(world.state.bodies.len() as u64));
    let env = world.envelope();
    g.bench_function("collide", |b| {
        b.iter(|| {
            collision::detect(
                &world.state.bodies,
                &world.model.boundaries,
                env,
                world.state.time,
            )
        })
    });
    world.model.solver = s.clone();
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

/// The open box of `bench_pile.ron` (0.22 m square floor at z = 0, walls
/// to 0.4 m) as a mesh facing inward, its floor a grid of n × n squares.
fn mesh_box(n: u32) -> repose::boundary::Boundary {
    use glam::DVec3;
    let (h, top) = (0.11, 0.4);
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    let id = |i: u32, j: u32| j * (n + 1) + i;
    for j in 0..=n {
        for i in 0..=n {
            let f = |k: u32| -h + 2.0 * h * k as f64 / n as f64;
            vertices.push(DVec3::new(f(i), f(j), 0.0));
        }
    }
    for j in 0..n {
        for i in 0..n {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            triangles.extend([[a, b, c], [a, c, d]]);
        }
    }
    // Four walls, two triangles each, facing inward (counter-clockwise
    // seen from inside).
    let corners = [(-h, -h), (h, -h), (h, h), (-h, h)];
    for k in 0..4 {
        let (x0, y0) = corners[k];
        let (x1, y1) = corners[(k + 1) % 4];
        let base = vertices.len() as u32;
        vertices.extend([
            DVec3::new(x0, y0, 0.0),
            DVec3::new(x1, y1, 0.0),
            DVec3::new(x1, y1, top),
            DVec3::new(x0, y0, top),
        ]);
        triangles.extend([[base, base + 2, base + 1], [base, base + 3, base + 2]]);
    }
    let surface = repose::collision::mesh::MeshSurface::new(
        repose::mesh::TriMesh {
            vertices,
            triangles,
        },
        false,
    );
    repose::boundary::Boundary::fixed(
        "mesh box",
        repose::boundary::Shape::Mesh {
            surface: std::sync::Arc::new(surface),
            rot: glam::DQuat::IDENTITY,
        },
        DVec3::ZERO,
        0,
    )
}

fn mesh(c: &mut Criterion) {
    let (world, _) = settled_pile();
    let walls = mesh_box(224);
    let envelope = 0.1
        * world
            .state
            .bodies
            .radius
            .iter()
            .cloned()
            .fold(0.0, f64::max);
    let n = world.state.bodies.len() as u64;
    let mut g = c.benchmark_group("mesh");
    g.throughput(Throughput::Elements(n));
    g.bench_function("walls_box", |b| {
        b.iter(|| {
            collision::sphere_boundary(&world.state.bodies, &world.model.boundaries, envelope, 0.0)
        })
    });
    let meshes = [walls];
    g.bench_function("walls_mesh_box", |b| {
        b.iter(|| collision::sphere_boundary(&world.state.bodies, &meshes, envelope, 0.0))
    });
    g.finish();
    let a = collision::sphere_boundary(&world.state.bodies, &world.model.boundaries, envelope, 0.0)
        .len();
    let m = collision::sphere_boundary(&world.state.bodies, &meshes, envelope, 0.0).len();
    eprintln!("sphere–wall contacts: analytic box {a}, mesh box {m}");
}

criterion_group!(benches, cpu, penalty, mesh, gpu);
criterion_main!(benches);
