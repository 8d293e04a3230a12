//! Property 14: the solver run on the buffers the device stages leave —
//! assembly's contact records and ends, the warm start, the body records —
//! gives the bits of the solver run on the same records uploaded from the
//! host, and moves none of the problem across the host.

use repose::gpu::assemble::{self, GpuAssembler};
use repose::gpu::collide::{self, GpuCollider};
use repose::gpu::integrate::{self, BodyPass, GpuIntegrator};
use repose::gpu::jacobi::DeviceProblem;
use repose::gpu::pipelines::storage_with as storage;
use repose::gpu::warm::{self, GpuWarm, WarmRecord};
use repose::material::{FrictionLaw, Material};
use repose::rng::Rng;
use repose::solver::packed::PackedProblem;

use super::contacts::random_packing;
use super::*;

/// The first `bytes` bytes of `buf`, read back.
pub(super) fn read_back(ctx: &GpuContext, buf: &wgpu::Buffer, bytes: usize) -> Vec<u8> {
    let read = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read back"),
        size: bytes.max(4) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buf, 0, &read, 0, bytes as u64);
    ctx.queue.submit([enc.finish()]);
    read.slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("mapping a readback"));
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("waiting for a readback");
    let data = read.slice(..).get_mapped_range().expect("mapped").to_vec();
    data[..bytes].to_vec()
}

pub(super) fn as_records<T: bytemuck::Pod>(data: &[u8]) -> Vec<T> {
    data.chunks_exact(std::mem::size_of::<T>())
        .map(bytemuck::pod_read_unaligned)
        .collect()
}

#[test]
fn solver_on_the_stages_buffers_gives_the_uploaded_solves_bits() {
    let Some(ctx) =
        context_for_tests("solver_on_the_stages_buffers_gives_the_uploaded_solves_bits")
    else {
        return;
    };
    let mut s = random_packing(2000, 10);
    let mut rng = Rng::new(23);
    for k in 0..s.bodies.len() {
        s.bodies.vel[k] = DVec3::new(
            rng.uniform(-0.1, 0.1),
            rng.uniform(-0.1, 0.1),
            rng.uniform(-0.1, 0.1),
        );
    }
    let mats = vec![Material::default()];
    let (h, v_max, gravity) = (1e-4, 0.5, DVec3::new(0.0, 0.0, -9.81));
    let nb = s.bodies.len();

    // The stages up to the solver's records, on the device.
    let mut col = GpuCollider::new(&ctx).expect("collision pipelines");
    let spheres = collide::sphere_records(&s.bodies).expect("spheres");
    let surfaces = collide::surface_records(&s.boundaries).expect("analytic boundaries");
    let (nc, _) = col
        .detect_resident(&ctx, &spheres, &surfaces, s.envelope as f32)
        .expect("resident detection");
    assert!(nc > 1000, "a packing with contacts: {nc}");
    let list = col.list().expect("a list after a detection");
    let asm = GpuAssembler::new(&ctx).expect("assembly pipelines");
    let bodies = assemble::body_records(&s.bodies).expect("spheres");
    let b_buf = storage(&ctx, "assembly bodies", bytemuck::cast_slice(&bodies), 0);
    let m_buf = storage(
        &ctx,
        "materials",
        bytemuck::cast_slice(&assemble::material_records(&mats)),
        0,
    );
    let walls = assemble::wall_records(&s.boundaries, 0.0).expect("fixed boundaries");
    let w_buf = storage(&ctx, "walls", bytemuck::cast_slice(&walls), 0);
    let ab = asm
        .buffers(
            &ctx,
            list,
            nc,
            (&b_buf, nb as u32),
            &m_buf,
            &w_buf,
            h,
            v_max,
        )
        .expect("assembly buffers");
    // No previous step: a cold start, as a run's first step.
    let previous: Vec<WarmRecord> = Vec::new();
    let prev_buf = storage(&ctx, "previous", &[], std::mem::size_of::<WarmRecord>());
    let g_buf = storage(&ctx, "impulses", &[], 32 * nc as usize);
    let st_buf = storage(
        &ctx,
        "stored",
        &[],
        std::mem::size_of::<WarmRecord>() * nc as usize,
    );
    let state0 = integrate::state_records(&s.bodies);
    let x_buf = storage(&ctx, "state", bytemuck::cast_slice(&state0), 0);
    let n_buf = storage(&ctx, "next state", &[], 80 * nb);
    let r_bytes = 2 * nb * std::mem::size_of::<PackedBody>();
    let r_buf = storage(&ctx, "body records", &[], r_bytes);
    let status = storage(&ctx, "status", &u32::MAX.to_le_bytes(), 4);
    let gw = GpuWarm::new(&ctx).expect("warm-start pipelines");
    let wp = gw.params(&ctx, nc, previous.len() as u32);
    let wbind = gw.bind(&ctx, &wp, list, &ab.packed, &prev_buf, &g_buf, &st_buf);
    let ig = GpuIntegrator::new(&ctx).expect("body pipelines");
    let ip = ig.params(&ctx, nb as u32, nc, h, gravity);
    let ibind = ig.bind(
        &ctx,
        [
            &ip, &ab.packed, &g_buf, &ab.ends, &ab.slots, &x_buf, &n_buf, &r_buf, &status,
        ],
    );
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    asm.encode(&ctx, &mut enc, &ab);
    {
        let mut cp = enc.begin_compute_pass(&Default::default());
        gw.encode(&ctx, &mut cp, warm::Pass::Start, &wbind, nc);
        ig.encode(&ctx, &mut cp, BodyPass::Records, &ibind, nb as u32);
    }
    ctx.queue.submit([enc.finish()]);

    // The same records on the host, as the hybrid pipeline uploads them.
    let records: Vec<PackedBody> = as_records(&read_back(&ctx, &r_buf, r_bytes));
    let host = PackedProblem {
        contacts: as_records(&read_back(
            &ctx,
            &ab.packed,
            nc as usize * std::mem::size_of::<PackedContact>(),
        )),
        bodies: records[..nb].to_vec(),
        free: records[nb..].to_vec(),
        offsets: as_records(&read_back(&ctx, &ab.ends, 4 * (nb + 1))),
        inertia: Vec::new(),
        law: FrictionLaw::Associated,
    };
    let warm: Vec<[f32; 8]> = as_records(&read_back(&ctx, &g_buf, 32 * nc as usize));

    for method in [SolverMethod::Jacobi, SolverMethod::Apgd] {
        let settings = SolverSettings {
            method,
            tolerance: 1e-4,
            max_iterations: 400,
            ..Default::default()
        };
        let label = method.name();
        let mut p = host.clone();
        let mut gamma: Vec<[f32; 6]> = warm
            .iter()
            .map(|g| [g[0], g[1], g[2], g[3], g[4], g[5]])
            .collect();
        let mut uploaded = GpuJacobi::new(&ctx).expect("solver pipelines");
        let want = uploaded
            .solve(&ctx, &mut p, &mut gamma, &settings)
            .expect("uploaded solve");

        // The warm start is the stages' again (the first method's solve
        // left its result in the buffer).
        ctx.queue
            .write_buffer(&g_buf, 0, bytemuck::cast_slice(&warm));
        let mut resident = GpuJacobi::new(&ctx).expect("solver pipelines");
        let dp = DeviceProblem {
            packed: &ab.packed,
            contacts: nc as usize,
            ends: &ab.ends,
            records: &r_buf,
            bodies: nb,
            gamma: &g_buf,
            law: FrictionLaw::Associated,
        };
        let got = resident
            .solve_resident(&ctx, &dp, &settings)
            .expect("resident solve");
        let result: Vec<[f32; 8]> = as_records(&read_back(&ctx, &g_buf, 32 * nc as usize));
        assert_eq!(
            (got.iterations, got.converged, got.residual_rel.to_bits()),
            (want.iterations, want.converged, want.residual_rel.to_bits()),
            "{label}: resident solve {got:?} vs uploaded {want:?}"
        );
        if let Some(i) = (0..nc as usize).find(|&i| result[i][..6] != gamma[i][..]) {
            panic!(
                "{label}: contact {i}: resident γ {:?} vs uploaded {:?}",
                &result[i][..6],
                gamma[i]
            );
        }
        let (r, u) = (resident.counters(), uploaded.counters());
        // The resident solve uploads its settings only: the records'
        // bytes (96 a contact, 64 a body twice, 32 a contact's γ) stay on
        // the device, and only the control record comes back.
        let records_bytes = (nc as u64) * (96 + 32) + 4 * nb as u64 * 32;
        assert!(
            r.upload_bytes < records_bytes / 20,
            "{label}: resident solve uploaded {} bytes, the records are {records_bytes}",
            r.upload_bytes
        );
        let per_trip = (std::mem::size_of::<Control>() + 16) as u64;
        assert!(
            r.readback_bytes <= r.round_trips * per_trip,
            "{label}: resident solve read back {} bytes in {} round trips",
            r.readback_bytes,
            r.round_trips
        );
        eprintln!(
            "OBSERVED resident {label}: {nc} contacts, {} iterations, converged {}: the uploaded solve's bits; up {} B / down {} B vs uploaded {} B / {} B",
            got.iterations, got.converged, r.upload_bytes, r.readback_bytes, u.upload_bytes, u.readback_bytes
        );
    }
}
