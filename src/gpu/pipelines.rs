//! What every compute shader of the device stages needs from wgpu: its
//! pipelines over one bind group layout (a uniform at binding 0, then
//! storage buffers), bind groups of whole buffers in binding order,
//! storage buffers that are never empty, and counted readbacks. One place, so each stage's
//! module holds only what is its own.

use std::time::Instant;

use super::profile::GpuCounters;
use super::{GpuContext, GpuError};

/// The bind group layout and one compute pipeline per entry point, in
/// order, of the WGSL `source` (named `file` in wgpu's labels): binding 0 a
/// uniform buffer, bindings 1, 2, … storage buffers, read-only where
/// `read_only` says so. Validation errors come back as
/// [`GpuError::Wgpu`] naming `what`.
pub fn compute_pipelines(
    ctx: &GpuContext,
    file: &str,
    what: &str,
    source: &str,
    read_only: &[bool],
    entry_points: &[&str],
) -> Result<(wgpu::BindGroupLayout, Vec<wgpu::ComputePipeline>), GpuError> {
    let dev = &ctx.device;
    let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(file),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let mut entries = vec![entry(0, wgpu::BufferBindingType::Uniform)];
    for (k, &read_only) in read_only.iter().enumerate() {
        entries.push(entry(
            k as u32 + 1,
            wgpu::BufferBindingType::Storage { read_only },
        ));
    }
    let layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(what),
        entries: &entries,
    });
    let pl = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(what),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipelines = entry_points
        .iter()
        .map(|&e| {
            dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(e),
                layout: Some(&pl),
                module: &module,
                entry_point: Some(e),
                compilation_options: Default::default(),
                cache: None,
            })
        })
        .collect();
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(GpuError::Wgpu(format!(
            "creating the {what} pipelines: {e}"
        )));
    }
    Ok((layout, pipelines))
}

/// A bind group of `layout` binding each of `buffers` whole, at bindings
/// 0, 1, … in order.
pub fn bind_whole(
    ctx: &GpuContext,
    layout: &wgpu::BindGroupLayout,
    label: &str,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(k, b)| wgpu::BindGroupEntry {
            binding: k as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}

/// A storage buffer (also a copy source and destination) holding `data`,
/// at least `min_bytes` long: a binding holds at least one record of its
/// type, so no buffer is empty.
pub fn storage_with(ctx: &GpuContext, label: &str, data: &[u8], min_bytes: usize) -> wgpu::Buffer {
    let buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: data.len().max(min_bytes).max(4) as u64,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    if !data.is_empty() {
        ctx.queue.write_buffer(&buf, 0, data);
    }
    buf
}

/// A uniform buffer holding `record`.
pub fn uniform_with<T: bytemuck::Pod>(ctx: &GpuContext, label: &str, record: &T) -> wgpu::Buffer {
    let buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: std::mem::size_of::<T>() as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    ctx.queue.write_buffer(&buf, 0, bytemuck::bytes_of(record));
    buf
}

/// An uninitialised storage buffer of `count` records of `item` bytes (at
/// least one), or [`GpuError::TooLarge`] naming `what` when it exceeds the
/// adapter's storage binding limit.
pub fn storage_sized(
    ctx: &GpuContext,
    what: &'static str,
    count: usize,
    item: usize,
) -> Result<wgpu::Buffer, GpuError> {
    let bytes = (count.max(1) * item) as u64;
    let limit = ctx.limits.max_storage_buffer_binding_size;
    if bytes > limit {
        return Err(GpuError::TooLarge {
            what,
            bytes,
            limit,
            count,
        });
    }
    Ok(ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(what),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    }))
}

/// Maps each (buffer, bytes) for reading and waits for the device (one
/// round trip, counted).
pub(crate) fn wait_mapped(
    dev: &wgpu::Device,
    reads: &[(&wgpu::Buffer, u64)],
    counters: &mut GpuCounters,
) -> Result<(), GpuError> {
    for (buf, bytes) in reads {
        buf.slice(..*bytes).map_async(wgpu::MapMode::Read, |r| {
            if let Err(e) = r {
                log::error!("GPU readback failed: {e}");
            }
        });
    }
    let t_wait = Instant::now();
    dev.poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| GpuError::Wgpu(format!("waiting for the GPU: {e}")))?;
    counters.wait_seconds += t_wait.elapsed().as_secs_f64();
    counters.round_trips += 1;
    Ok(())
}

/// Copies the first `bytes` bytes of each mapped buffer out and unmaps it
/// (the copies are counted).
pub(crate) fn copy_out(
    reads: &[(&wgpu::Buffer, u64)],
    counters: &mut GpuCounters,
) -> Result<Vec<Vec<u8>>, GpuError> {
    let t_read = Instant::now();
    let mut out = Vec::with_capacity(reads.len());
    for (buf, bytes) in reads {
        let data = buf
            .slice(..*bytes)
            .get_mapped_range()
            .map_err(|e| GpuError::Wgpu(format!("reading back: {e:?}")))?
            .to_vec();
        buf.unmap();
        counters.readback_bytes += *bytes;
        out.push(data);
    }
    counters.readback_seconds += t_read.elapsed().as_secs_f64();
    Ok(out)
}

/// Maps the first `bytes` of `buf`, waits for the device (one round trip)
/// and copies them out (all counted).
pub(crate) fn read(
    dev: &wgpu::Device,
    buf: &wgpu::Buffer,
    bytes: u64,
    counters: &mut GpuCounters,
) -> Result<Vec<u8>, GpuError> {
    wait_mapped(dev, &[(buf, bytes)], counters)?;
    Ok(copy_out(&[(buf, bytes)], counters)?.remove(0))
}

/// Runs `f` inside validation and out-of-memory error scopes, popped
/// whatever `f` returns: an error the device reports in them comes back as
/// [`GpuError::Wgpu`] naming `what`, before `f`'s own result.
pub(crate) fn within_scopes<T, E: From<GpuError>>(
    ctx: &GpuContext,
    what: &str,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    let dev = &ctx.device;
    let invalid = dev.push_error_scope(wgpu::ErrorFilter::Validation);
    let oom = dev.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let out = f();
    let oom = pollster::block_on(oom.pop());
    let invalid = pollster::block_on(invalid.pop());
    if let Some(e) = oom.or(invalid) {
        return Err(GpuError::Wgpu(format!("{what}: {e}")).into());
    }
    out
}
