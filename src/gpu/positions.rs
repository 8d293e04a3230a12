//! The contact stages' inputs written from the device state (pairs with
//! `shaders/positions.wgsl`): each body's centre, held in 64-bit fixed
//! point by [`super::integrate`], rounded to the nearest f32, with its
//! radius for detection ([`super::collide::sphere_records`]'s layout) and
//! its material, 1/m and 1/I for assembly ([`AssembleBody`]). With it the
//! next step's detection and assembly read what integration wrote,
//! without the host.
//!
//! # The rounding
//!
//! A centre coordinate is X q with X a 64-bit integer and q = 2⁻⁴⁸ m
//! ([`super::integrate::POSITION_UNIT`]). The shader rounds X itself to 24
//! significant bits, ties to even — the leading one shifted to bit 63, the
//! top 24 bits kept, rounded up when the bit below is set and either a
//! lower bit is set or the kept value is odd — and builds the f32 from its
//! sign, exponent and mantissa bits. Scaling by q is exact (a power of
//! two, far from the subnormals), so the result is the f32 nearest to the
//! exact centre, the bits of [`centre_f32`], whatever a shader compiler
//! does with float arithmetic.

use std::time::Instant;

use super::assemble::AssembleBody;
use super::integrate::BodyState;
use super::pipelines::{bind_whole, compute_pipelines, storage_with, uniform_with};
use super::profile::GpuCounters;
use super::{GpuContext, GpuError};
use crate::bodies::Bodies;

/// The WGSL source: the shared records (`shaders/records.wgsl`), then
/// the stage's own.
pub const SHADER: &str = concat!(
    include_str!("../../shaders/records.wgsl"),
    include_str!("../../shaders/positions.wgsl")
);

/// Threads per workgroup (WGSL `WG`).
pub const WG: u32 = 256;

/// The pass's uniform record (WGSL `PositionsParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct PositionsParams {
    /// Bodies.
    pub bodies: u32,
    /// Workgroups per row of the dispatch grid.
    pub row: u32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
}

/// What the device state does not hold of a sphere (WGSL `Shape`): part of
/// the model, uploaded once.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ShapeRecord {
    /// Radius (m).
    pub radius: f32,
    /// Material index.
    pub material: u32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
}

/// The shape records of `bodies` (spheres).
pub fn shape_records(bodies: &Bodies) -> Vec<ShapeRecord> {
    (0..bodies.len())
        .map(|k| ShapeRecord {
            radius: bodies.radius[k] as f32,
            material: bodies.material[k],
            ..Default::default()
        })
        .collect()
}

/// The f32 nearest to the fixed-point coordinate (high word `cell`, low
/// word `frac`) in metres, ties to even: the CPU mirror of WGSL `centre`.
pub fn centre_f32(cell: i32, frac: u32) -> f32 {
    let x = (i64::from(cell) << 32) | i64::from(frac);
    // `as` rounds an integer to the nearest f32, ties to even; the scaling
    // by 2⁻⁴⁸ is exact.
    x as f32 * (1.0 / (1u64 << 48) as f32)
}

/// The inputs of detection and assembly for one body: its sphere record
/// (centre, radius) and its assembly record.
pub fn contact_inputs_of(state: &BodyState, shape: &ShapeRecord) -> ([f32; 4], AssembleBody) {
    let x = [0, 1, 2].map(|c| centre_f32(state.cell[c], state.frac[c]));
    (
        [x[0], x[1], x[2], shape.radius],
        AssembleBody {
            pos: x,
            material: shape.material,
            inv_mass: state.v[3],
            inv_inertia: state.w[3],
            ..Default::default()
        },
    )
}

/// The pipeline.
pub struct GpuPositions {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
    /// Dispatches, submits, round trips and bytes moved, summed over calls.
    pub counters: GpuCounters,
}

/// What one run of the pass returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactInputs {
    /// Per body its centre (xyz) and radius (w), as detection reads them.
    pub spheres: Vec<[f32; 4]>,
    /// Per body its assembly record.
    pub bodies: Vec<AssembleBody>,
}

impl GpuPositions {
    /// Compiles the shader and creates the pipeline.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let (layout, mut p) = compute_pipelines(
            ctx,
            "positions.wgsl",
            "positions",
            SHADER,
            &[true, true, false, false],
            &["contact_inputs"],
        )?;
        Ok(GpuPositions {
            layout,
            pipeline: p.pop().expect("one pipeline"),
            counters: GpuCounters::default(),
        })
    }

    /// The bind group of the pass over `bodies` bodies, in binding order:
    /// the state ([`BodyState`]), the shapes ([`ShapeRecord`]), the
    /// spheres it writes (`[f32; 4]`) and the assembly records it writes
    /// ([`AssembleBody`]). Returns it with its uniform buffer.
    pub fn bind(
        &self,
        ctx: &GpuContext,
        bodies: u32,
        buffers: [&wgpu::Buffer; 4],
    ) -> (wgpu::Buffer, wgpu::BindGroup) {
        let params = uniform_with(
            ctx,
            "positions params",
            &PositionsParams {
                bodies,
                row: super::collide::grid(bodies as usize, ctx).0,
                ..Default::default()
            },
        );
        let [state, shapes, spheres, asm] = buffers;
        let bind = bind_whole(
            ctx,
            &self.layout,
            "positions",
            &[&params, state, shapes, spheres, asm],
        );
        (params, bind)
    }

    /// Records the pass over `bodies` bodies into `cp`; returns the
    /// dispatches recorded.
    pub fn encode(
        &self,
        ctx: &GpuContext,
        cp: &mut wgpu::ComputePass,
        bind: &wgpu::BindGroup,
        bodies: u32,
    ) -> u64 {
        let g = super::collide::grid(bodies as usize, ctx);
        cp.set_bind_group(0, bind, &[]);
        cp.set_pipeline(&self.pipeline);
        cp.dispatch_workgroups(g.0, g.1, 1);
        1
    }

    /// Uploads `state` and `shapes`, runs the pass and reads both outputs
    /// back.
    pub fn run_records(
        &mut self,
        ctx: &GpuContext,
        state: &[BodyState],
        shapes: &[ShapeRecord],
    ) -> Result<ContactInputs, GpuError> {
        assert_eq!(state.len(), shapes.len(), "one shape per body");
        let nb = state.len();
        if nb == 0 {
            return Ok(ContactInputs::default());
        }
        let dev = &ctx.device;
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let t_up = Instant::now();
        let x_buf = storage_with(ctx, "body state", bytemuck::cast_slice(state), 0);
        let s_buf = storage_with(ctx, "shapes", bytemuck::cast_slice(shapes), 0);
        let sphere_bytes = 16 * nb;
        let asm_bytes = nb * std::mem::size_of::<AssembleBody>();
        let o_buf = storage_with(ctx, "spheres", &[], sphere_bytes);
        let a_buf = storage_with(ctx, "assembly bodies", &[], asm_bytes);
        self.counters.upload_bytes +=
            (std::mem::size_of_val(state) + std::mem::size_of_val(shapes)) as u64;
        self.counters.upload_seconds += t_up.elapsed().as_secs_f64();
        let (_params, bind) = self.bind(ctx, nb as u32, [&x_buf, &s_buf, &o_buf, &a_buf]);
        let total = (sphere_bytes + asm_bytes) as u64;
        let read = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read contact inputs"),
            size: total,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = dev.create_command_encoder(&Default::default());
        {
            let mut cp = enc.begin_compute_pass(&Default::default());
            self.counters.dispatches += self.encode(ctx, &mut cp, &bind, nb as u32);
        }
        enc.copy_buffer_to_buffer(&o_buf, 0, &read, 0, sphere_bytes as u64);
        enc.copy_buffer_to_buffer(&a_buf, 0, &read, sphere_bytes as u64, asm_bytes as u64);
        ctx.queue.submit([enc.finish()]);
        self.counters.submits += 1;
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(format!("positions pass: {e}")));
        }
        let data = super::pipelines::read(dev, &read, total, &mut self.counters)?;
        let (s, a) = data.split_at(sphere_bytes);
        Ok(ContactInputs {
            spheres: s
                .chunks_exact(16)
                .map(bytemuck::pod_read_unaligned)
                .collect(),
            bodies: a
                .chunks_exact(std::mem::size_of::<AssembleBody>())
                .map(bytemuck::pod_read_unaligned)
                .collect(),
        })
    }
}
