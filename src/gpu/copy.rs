//! A memory-copy kernel (pairs with `shaders/copy.wgsl`) that measures the
//! device's achievable memory bandwidth, the yardstick of the Jacobi kernels
//! (they are bandwidth-bound: docs/gpu.md).

use std::time::Instant;

use super::{GpuContext, GpuError};

/// The WGSL source.
pub const SHADER: &str = include_str!("../../shaders/copy.wgsl");

/// Measured copy bandwidth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CopyBandwidth {
    /// Bytes per copy (each byte is read once and written once).
    pub bytes: u64,
    /// Copies timed.
    pub repeats: u32,
    /// Wall time of the fastest submit of `repeats` copies (s).
    pub seconds: f64,
    /// (read + write) bytes per second.
    pub bytes_per_second: f64,
}

/// Copies a buffer of `bytes` (capped by the binding limit) `repeats` times in
/// one submit and returns the (read + write) bandwidth of the fastest of
/// five such submits; a warm-up copy first.
pub fn measure(ctx: &GpuContext, bytes: u64, repeats: u32) -> Result<CopyBandwidth, GpuError> {
    let dev = &ctx.device;
    let limit = ctx
        .limits
        .max_storage_buffer_binding_size
        .min(ctx.limits.max_buffer_size);
    let bytes = (bytes.min(limit) / 16) * 16;
    let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("copy.wgsl"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let pipe = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("copy"),
        layout: None,
        module: &module,
        entry_point: Some("copy"),
        compilation_options: Default::default(),
        cache: None,
    });
    let mk = |label| {
        dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let (src, dst) = (mk("copy src"), mk("copy dst"));
    let bind = dev.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("copy"),
        layout: &pipe.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: src.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: dst.as_entire_binding(),
            },
        ],
    });
    let items = bytes / 16;
    let groups = items.div_ceil(4).div_ceil(256); // 4 elements per invocation, 256 per workgroup
    let max_dim = ctx.limits.max_compute_workgroups_per_dimension as u64;
    let (gx, gy) = if groups <= max_dim {
        (groups as u32, 1)
    } else {
        (max_dim as u32, groups.div_ceil(max_dim) as u32)
    };
    let run = |n: u32| -> Result<f64, GpuError> {
        let mut enc = dev.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipe);
            pass.set_bind_group(0, &bind, &[]);
            for _ in 0..n {
                pass.dispatch_workgroups(gx, gy, 1);
            }
        }
        let t0 = Instant::now();
        ctx.queue.submit([enc.finish()]);
        dev.poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Wgpu(format!("waiting for the copy kernel: {e}")))?;
        Ok(t0.elapsed().as_secs_f64())
    };
    run(1)?;
    // The best of five: the ceiling is what the device can do, and a
    // software driver shares the CPU with everything else on the machine.
    let mut seconds = f64::INFINITY;
    for _ in 0..5 {
        seconds = seconds.min(run(repeats)?);
    }
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(GpuError::Wgpu(format!("copy kernel: {e}")));
    }
    Ok(CopyBandwidth {
        bytes,
        repeats,
        seconds,
        bytes_per_second: 2.0 * bytes as f64 * repeats as f64 / seconds,
    })
}
