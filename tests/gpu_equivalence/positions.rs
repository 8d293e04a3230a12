//! Property 15: the contact stages' inputs written from the device state —
//! each centre in 64-bit fixed point rounded to f32 on the device — are
//! the f32 nearest to the exact centre (the bits of the CPU mirror, ties
//! to even included), with the body's radius, material, 1/m and 1/I.

use repose::gpu::assemble;
use repose::gpu::collide::{self, GpuCollider};
use repose::gpu::integrate::{self, BodyState};
use repose::gpu::pipelines::storage_with as storage;
use repose::gpu::positions::{self, GpuPositions, ShapeRecord};
use repose::rng::Rng;

use super::contacts::random_packing;
use super::resident::{as_records, read_back};
use super::*;

/// A state whose x coordinate is the fixed-point integer `x` (y and z
/// other values of the same kind).
fn state_at(x: [i64; 3], k: usize) -> BodyState {
    BodyState {
        cell: [
            (x[0] >> 32) as i32,
            (x[1] >> 32) as i32,
            (x[2] >> 32) as i32,
            0,
        ],
        frac: [x[0] as u32, x[1] as u32, x[2] as u32, 0],
        v: [0.0, 0.0, 0.0, 1.0 / (k as f32 + 1.0)],
        w: [0.0, 0.0, 0.0, 2.0 / (k as f32 + 1.0)],
        q: [0.0, 0.0, 0.0, 1.0],
    }
}

#[test]
fn device_centres_round_the_fixed_point_centre_to_the_nearest_f32() {
    let Some(ctx) =
        context_for_tests("device_centres_round_the_fixed_point_centre_to_the_nearest_f32")
    else {
        return;
    };
    // Integers that probe every branch of the rounding: zero, ±1 q, the
    // extremes, exact ties with even and odd kept parts, values just above
    // and below ties, all-ones runs that carry into a new exponent, each
    // leading-zero count (both words), and random ones of every magnitude.
    let mut xs: Vec<i64> = vec![0, 1, -1, i64::MAX, i64::MIN, i64::MIN + 1];
    for shift in 0..40u32 {
        for m in [0x80_0000i64, 0x80_0001, 0xff_ffff, 0xab_cdef] {
            let base = m << (shift + 1);
            let half = 1i64 << shift;
            for x in [
                base,
                base + half,
                base + half - 1,
                base + half + 1,
                base - 1,
            ] {
                xs.extend([x, -x]);
            }
        }
    }
    for lz in 0..63u32 {
        let x = 1i64 << lz;
        xs.extend([x, x - 1, -x, x + (x >> 1)]);
    }
    let mut rng = Rng::new(5);
    for _ in 0..4000 {
        let bits = rng.uniform(0.0, 63.0) as u32;
        let x = (rng.uniform(-1.0, 1.0) * (1u64 << 53) as f64) as i64 >> (63 - bits).min(53);
        xs.push(x ^ (rng.uniform(0.0, 65536.0) as i64));
    }
    let states: Vec<BodyState> = xs
        .chunks(3)
        .enumerate()
        .map(|(k, c)| state_at([c[0], *c.get(1).unwrap_or(&7), *c.get(2).unwrap_or(&-7)], k))
        .collect();
    let shapes: Vec<ShapeRecord> = (0..states.len())
        .map(|k| ShapeRecord {
            radius: 0.01 + k as f32 * 1e-6,
            material: (k % 3) as u32,
            ..Default::default()
        })
        .collect();
    let got = GpuPositions::new(&ctx)
        .expect("positions pipeline")
        .run_records(&ctx, &states, &shapes)
        .expect("device positions");
    for (k, (s, sh)) in states.iter().zip(&shapes).enumerate() {
        let (sphere, body) = positions::contact_inputs_of(s, sh);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&got.spheres[k]),
            bits(&sphere),
            "body {k} at fixed point cell {:?} frac {:?}: device sphere {:?} vs nearest f32 {:?}",
            s.cell,
            s.frac,
            got.spheres[k],
            sphere
        );
        assert_eq!(got.bodies[k], body, "body {k}: device assembly record");
    }
    // The mirror itself against an independent rounding: the f64 nearest
    // (exact for |X| < 2^53) rounded to f32 is the nearest f32 there.
    for &x in xs.iter().filter(|x| x.unsigned_abs() < 1 << 53) {
        let want = (x as f64 * integrate::POSITION_UNIT) as f32;
        let got = positions::centre_f32((x >> 32) as i32, x as u32);
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "X = {x}: mirror {got} vs {want}"
        );
    }

    // A packing's state: the records detection and assembly were given
    // from the f64 centres, within one f32 ulp (the centre is rounded to
    // 2^-48 m before it is rounded to f32).
    let s = random_packing(2000, 10);
    let state = integrate::state_records(&s.bodies);
    let from_state = GpuPositions::new(&ctx)
        .expect("positions pipeline")
        .run_records(&ctx, &state, &positions::shape_records(&s.bodies))
        .expect("device positions");
    let spheres = collide::sphere_records(&s.bodies).expect("spheres");
    let bodies = assemble::body_records(&s.bodies).expect("spheres");
    let mut exact = 0;
    for k in 0..s.bodies.len() {
        for (c, (&a, &b)) in from_state.spheres[k].iter().zip(&spheres[k]).enumerate() {
            let ulps = (i64::from(a.to_bits()) - i64::from(b.to_bits())).abs();
            assert!(
                ulps <= 1,
                "body {k} coordinate {c}: {a} from the state vs {b} ({ulps} ulps)"
            );
            exact += usize::from(ulps == 0);
        }
        let (a, b) = (from_state.bodies[k], bodies[k]);
        assert_eq!(
            (a.material, a.inv_mass, a.inv_inertia),
            (b.material, b.inv_mass, b.inv_inertia),
            "body {k}: assembly record from the state"
        );
    }
    eprintln!(
        "OBSERVED {} fixed-point centres rounded on the device: the nearest f32 each; packing: {exact} of {} sphere fields equal to the f64 centres' rounding, none more than 1 ulp off",
        3 * states.len(),
        4 * s.bodies.len()
    );
}

#[test]
fn detection_on_centres_written_by_the_device_finds_the_uploaded_list() {
    let Some(ctx) =
        context_for_tests("detection_on_centres_written_by_the_device_finds_the_uploaded_list")
    else {
        return;
    };
    let s = random_packing(2000, 10);
    let nb = s.bodies.len();
    let state = integrate::state_records(&s.bodies);
    let shapes = positions::shape_records(&s.bodies);
    let surfaces = collide::surface_records(&s.boundaries).expect("analytic boundaries");
    let envelope = s.envelope as f32;

    // The records through the host, detection on an upload of them.
    let (spheres, _): (Vec<[f32; 4]>, Vec<_>) = state
        .iter()
        .zip(&shapes)
        .map(|(b, sh)| positions::contact_inputs_of(b, sh))
        .unzip();
    let want = GpuCollider::new(&ctx)
        .expect("collision pipelines")
        .detect_records(&ctx, &spheres, &surfaces, envelope)
        .expect("device detection");

    // The positions pass writing detection's spheres on the device.
    let mut col = GpuCollider::new(&ctx).expect("collision pipelines");
    let pos = GpuPositions::new(&ctx).expect("positions pipeline");
    let x_buf = storage(&ctx, "state", bytemuck::cast_slice(&state), 0);
    let s_buf = storage(&ctx, "shapes", bytemuck::cast_slice(&shapes), 0);
    let a_buf = storage(
        &ctx,
        "assembly bodies",
        &[],
        nb * std::mem::size_of::<assemble::AssembleBody>(),
    );
    let sph = col
        .spheres_buffer(&ctx, nb, &surfaces)
        .expect("sphere buffer");
    let (_params, bind) = pos.bind(&ctx, nb as u32, [&x_buf, &s_buf, sph, &a_buf]);
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    {
        let mut cp = enc.begin_compute_pass(&Default::default());
        pos.encode(&ctx, &mut cp, &bind, nb as u32);
    }
    ctx.queue.submit([enc.finish()]);
    let radii: Vec<f32> = shapes.iter().map(|sh| sh.radius).collect();
    let x_max = spheres.iter().fold(0f32, |m, p| {
        m.max(p[0].abs()).max(p[1].abs()).max(p[2].abs())
    });
    let (len, _) = col
        .detect_written(&ctx, &radii, x_max, surfaces.len(), envelope)
        .expect("detection on written centres");
    assert_eq!(
        len as usize,
        want.contacts.len(),
        "list length on device-written centres vs uploaded"
    );
    assert_eq!(
        col.counters.upload_bytes,
        (std::mem::size_of_val(surfaces.as_slice()) + std::mem::size_of::<collide::CollideParams>())
            as u64,
        "only the boundaries and the parameters go up"
    );
    let list = col.list().expect("a list");
    let got: Vec<collide::DeviceContact> = as_records(&read_back(
        &ctx,
        list,
        len as usize * std::mem::size_of::<collide::DeviceContact>(),
    ));
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want.contacts[i]) {
        panic!(
            "contact {i}: on device-written centres {:?} vs uploaded {:?}",
            got[i], want.contacts[i]
        );
    }
    eprintln!(
        "OBSERVED detection on centres the device wrote: {len} contacts among {nb} spheres, the uploaded list's bits"
    );
}
