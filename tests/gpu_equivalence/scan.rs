//! Property 9: the device's prefix scan (`shaders/scan.wgsl`, driven by
//! `repose::gpu::scan`) is its CPU mirror (`exclusive_scan`) bit for bit,
//! at lengths that take one, two and three levels of block totals and at
//! the block boundaries between them, with counts that wrap u32 as the
//! mirror does.

use repose::gpu::scan::{exclusive_scan, Scan, WG};
use repose::rng::Rng;

use super::*;

/// Scans `data` on the device and reads it back.
fn device_scan(ctx: &GpuContext, scan: &Scan, data: &[u32]) -> Vec<u32> {
    let dev = &ctx.device;
    let bytes = 4 * data.len() as u64;
    let buf = dev.create_buffer(&wgpu::BufferDescriptor {
        label: Some("scan test data"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let back = dev.create_buffer(&wgpu::BufferDescriptor {
        label: Some("scan test readback"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    ctx.queue.write_buffer(&buf, 0, bytemuck::cast_slice(data));
    let plan = scan.plan(ctx, &buf, data.len() as u32);
    let mut enc = dev.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        scan.encode(&mut pass, &plan);
    }
    enc.copy_buffer_to_buffer(&buf, 0, &back, 0, bytes);
    ctx.queue.submit([enc.finish()]);
    back.slice(..).map_async(wgpu::MapMode::Read, |r| {
        r.expect("mapping the scan readback")
    });
    dev.poll(wgpu::PollType::wait_indefinitely())
        .expect("waiting for the scan");
    let out =
        bytemuck::cast_slice(&back.slice(..).get_mapped_range().expect("mapped range")).to_vec();
    out
}

#[test]
fn device_prefix_scan_equals_its_cpu_mirror() {
    let Some(ctx) = context_for_tests("device_prefix_scan_equals_its_cpu_mirror") else {
        return;
    };
    let scan = Scan::new(&ctx).expect("scan pipelines");
    let wg = WG as usize;
    let mut rng = Rng::new(9);
    // One level (1, WG − 1, WG), two (WG + 1 … WG²), three (WG² + 1, …).
    for n in [
        1,
        5,
        wg - 1,
        wg,
        wg + 1,
        3 * wg + 7,
        wg * wg,
        wg * wg + 1,
        2 * wg * wg + 3 * wg + 1,
    ] {
        for (what, hi) in [("small counts", 1000.0), ("counts that wrap u32", 4.0e9)] {
            let data: Vec<u32> = (0..n).map(|_| rng.uniform(0.0, hi) as u32).collect();
            let mut want = data.clone();
            exclusive_scan(&mut want);
            let got = device_scan(&ctx, &scan, &data);
            if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
                panic!(
                    "n = {n}, {what}: element {i} is {} on the device, {} in the mirror",
                    got[i], want[i]
                );
            }
        }
        eprintln!("OBSERVED prefix scan n = {n}: device equals mirror on both count ranges");
    }
}
