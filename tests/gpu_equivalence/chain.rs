//! Property 13: the device stages chained on device buffers — detection,
//! assembly, warm start, the solver's body records and integration — in
//! one submit give the bits the same stages give one at a time through
//! the host, with one round trip for the list's length and one for what
//! is read back.

use repose::gpu::assemble::{self, GpuAssembler};
use repose::gpu::collide::{self, GpuCollider};
use repose::gpu::integrate::{self, BodyPass, BodyState, GpuIntegrator};
use repose::gpu::pipelines::storage_with as storage;
use repose::gpu::warm::{self, GpuWarm, WarmRecord};
use repose::material::Material;
use repose::rng::Rng;
use repose::solver::packed::PackedBody;

use super::contacts::random_packing;
use super::*;

#[test]
fn device_stages_chained_on_the_device_give_the_stages_bits() {
    let Some(ctx) = context_for_tests("device_stages_chained_on_the_device_give_the_stages_bits")
    else {
        return;
    };
    let mut s = random_packing(2000, 10);
    let mut rng = Rng::new(17);
    for k in 0..s.bodies.len() {
        s.bodies.vel[k] = DVec3::new(
            rng.uniform(-0.1, 0.1),
            rng.uniform(-0.1, 0.1),
            rng.uniform(-0.1, 0.1),
        );
        s.bodies.omega[k] = DVec3::new(rng.uniform(-5.0, 5.0), 0.0, rng.uniform(-5.0, 5.0));
    }
    let mats = vec![Material::default()];
    let (h, v_max, gravity) = (1e-4, 0.5, DVec3::new(0.0, 0.0, -9.81));
    let bodies = assemble::body_records(&s.bodies).expect("spheres");
    let walls = assemble::wall_records(&s.boundaries, 0.0).expect("fixed boundaries");
    let mrec = assemble::material_records(&mats);
    let state0 = integrate::state_records(&s.bodies);

    // One stage at a time, through the host.
    let found = GpuCollider::new(&ctx)
        .expect("collision pipelines")
        .detect(&ctx, &s.bodies, &s.boundaries, s.envelope)
        .expect("device detection");
    let asm = GpuAssembler::new(&ctx)
        .expect("assembly pipelines")
        .assemble_records(&ctx, &found.contacts, &bodies, &walls, &mrec, h, v_max)
        .expect("device assembly");
    let previous: Vec<WarmRecord> = found
        .contacts
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, c)| {
            let mut r = || rng.uniform(-1e-6, 1e-6) as f32;
            WarmRecord {
                key_lo: c.key_lo,
                key_hi: c.key_hi,
                force: [r(), r(), r(), 0.0],
                torque: [r() * 0.01, r() * 0.01, r() * 0.01, 0.0],
                ..Default::default()
            }
        })
        .collect();
    let mut gw = GpuWarm::new(&ctx).expect("warm-start pipelines");
    let gamma = gw
        .warm_start_records(&ctx, &found.contacts, &asm.contacts, &previous)
        .expect("device warm start");
    let mut ig = GpuIntegrator::new(&ctx).expect("body pipelines");
    let mut one = |pass| {
        ig.run_records(
            &ctx,
            pass,
            &asm.contacts,
            &gamma,
            &asm.offsets,
            &asm.slots,
            &state0,
            h,
            gravity,
        )
        .expect("device body pass")
    };
    let records1 = one(BodyPass::Records).records;
    let next1 = one(BodyPass::Integrate).next;

    // Chained on the device: one submit after the detection.
    let mut col = GpuCollider::new(&ctx).expect("collision pipelines");
    let spheres = collide::sphere_records(&s.bodies).expect("spheres");
    let surfaces = collide::surface_records(&s.boundaries).expect("analytic boundaries");
    let (nc, _) = col
        .detect_resident(&ctx, &spheres, &surfaces, s.envelope as f32)
        .expect("resident detection");
    assert_eq!(nc as usize, found.contacts.len(), "the same list length");
    assert_eq!(
        col.counters.round_trips, 1,
        "detection left on the device waits once, for the length"
    );
    let list = col.list().expect("a list after a detection");
    let nb = s.bodies.len();
    let asm_dev = GpuAssembler::new(&ctx).expect("assembly pipelines");
    let b_buf = storage(&ctx, "assembly bodies", bytemuck::cast_slice(&bodies), 0);
    let m_buf = storage(&ctx, "materials", bytemuck::cast_slice(&mrec), 0);
    let w_buf = storage(&ctx, "walls", bytemuck::cast_slice(&walls), 0);
    let ab = asm_dev
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
    let prev_buf = storage(&ctx, "previous", bytemuck::cast_slice(&previous), 0);
    let g_buf = storage(&ctx, "impulses", &[], 32 * nc as usize);
    let st_buf = storage(
        &ctx,
        "stored",
        &[],
        std::mem::size_of::<WarmRecord>() * nc as usize,
    );
    let x_buf = storage(&ctx, "state", bytemuck::cast_slice(&state0), 0);
    let n_buf = storage(
        &ctx,
        "next state",
        &[],
        std::mem::size_of::<BodyState>() * nb,
    );
    let r_buf = storage(
        &ctx,
        "body records",
        &[],
        2 * nb * std::mem::size_of::<PackedBody>(),
    );
    let status = storage(&ctx, "status", &u32::MAX.to_le_bytes(), 4);
    let gw_dev = GpuWarm::new(&ctx).expect("warm-start pipelines");
    let wp = gw_dev.params(&ctx, nc, previous.len() as u32);
    let wbind = gw_dev.bind(&ctx, &wp, list, &ab.packed, &prev_buf, &g_buf, &st_buf);
    let ig_dev = GpuIntegrator::new(&ctx).expect("body pipelines");
    let ip = ig_dev.params(&ctx, nb as u32, nc, h, gravity);
    let ibind = ig_dev.bind(
        &ctx,
        [
            &ip, &ab.packed, &g_buf, &ab.ends, &ab.slots, &x_buf, &n_buf, &r_buf, &status,
        ],
    );
    let (n_bytes, r_bytes) = (
        std::mem::size_of::<BodyState>() * nb,
        2 * nb * std::mem::size_of::<PackedBody>(),
    );
    let read = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read chain"),
        size: (n_bytes + r_bytes) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    asm_dev.encode(&ctx, &mut enc, &ab);
    {
        let mut cp = enc.begin_compute_pass(&Default::default());
        gw_dev.encode(&ctx, &mut cp, warm::Pass::Start, &wbind, nc);
        ig_dev.encode(&ctx, &mut cp, BodyPass::Records, &ibind, nb as u32);
        ig_dev.encode(&ctx, &mut cp, BodyPass::Integrate, &ibind, nb as u32);
    }
    enc.copy_buffer_to_buffer(&n_buf, 0, &read, 0, n_bytes as u64);
    enc.copy_buffer_to_buffer(&r_buf, 0, &read, n_bytes as u64, r_bytes as u64);
    ctx.queue.submit([enc.finish()]);
    read.slice(..).map_async(wgpu::MapMode::Read, |r| {
        r.expect("mapping the chain's readback")
    });
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("waiting for the chain");
    let data = read.slice(..).get_mapped_range().expect("mapped").to_vec();
    let next2: Vec<BodyState> = data[..n_bytes]
        .chunks_exact(std::mem::size_of::<BodyState>())
        .map(bytemuck::pod_read_unaligned)
        .collect();
    let records2: Vec<PackedBody> = data[n_bytes..]
        .chunks_exact(std::mem::size_of::<PackedBody>())
        .map(bytemuck::pod_read_unaligned)
        .collect();
    if let Some(k) = (0..nb).find(|&k| next2[k] != next1[k]) {
        panic!(
            "body {k}: chained next state {:?} vs stage by stage {:?}",
            next2[k], next1[k]
        );
    }
    if let Some(k) = (0..2 * nb).find(|&k| records2[k] != records1[k]) {
        panic!(
            "record {k}: chained {:?} vs stage by stage {:?}",
            records2[k], records1[k]
        );
    }
    eprintln!(
        "OBSERVED chained step: {nb} bodies, {nc} contacts ({} warm-started): the stage-by-stage bits, 2 round trips",
        previous.len()
    );
}
