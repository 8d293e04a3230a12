//! An exclusive prefix sum of a u32 device buffer, in place (pairs with
//! `shaders/scan.wgsl`; [`exclusive_scan`] is its CPU mirror): what turns
//! per-item counts into the offsets of each item's range in a list built
//! on the device (the collision grid's buckets and its contact list,
//! [`super::collide`]).
//!
//! For counts c₀ … c_{n−1} the scan gives sᵢ = Σ_{k<i} c_k. On the device
//! the array is cut into blocks of [`WG`] elements; `scan_blocks` scans
//! each block in workgroup memory and writes the block's total, the
//! totals are scanned the same way (one level up, until a level fits one
//! block), and `add_blocks` adds each block's scanned total to its
//! elements. Integer additions in a fixed order: the same result on every
//! run, whatever the device. A level of n elements takes ⌈n / 256⌉
//! workgroups; n up to 256 × 65,535² is within every adapter's dispatch
//! limits (a 2-D grid past 65,535 workgroups).

use super::pipelines::{bind_whole, compute_pipelines, uniform_with};
use super::{GpuContext, GpuError};

/// The WGSL source.
pub const SHADER: &str = include_str!("../../shaders/scan.wgsl");

/// Elements per block (WGSL `WG`).
pub const WG: u32 = 256;

/// The uniform record of one level (WGSL `ScanParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ScanParams {
    /// Elements at this level.
    pub n: u32,
    /// Workgroups per row of the dispatch grid.
    pub row: u32,
    /// Padding to 16 bytes.
    pub _pad0: u32,
    /// Padding to 16 bytes.
    pub _pad1: u32,
}

/// The CPU mirror: `data` replaced by its exclusive prefix sums
/// (wrapping, as u32 arithmetic on the device).
pub fn exclusive_scan(data: &mut [u32]) {
    let mut sum = 0u32;
    for d in data {
        let c = *d;
        *d = sum;
        sum = sum.wrapping_add(c);
    }
}

/// The scan's two pipelines.
pub struct Scan {
    layout: wgpu::BindGroupLayout,
    blocks: wgpu::ComputePipeline,
    add: wgpu::ComputePipeline,
}

/// A scan of one buffer of a fixed length: its levels' block-total buffers
/// and bind groups, made once and encoded into any number of passes.
pub struct ScanPlan {
    /// Per level, from the buffer itself up: (bind group, dispatch grid).
    levels: Vec<(wgpu::BindGroup, (u32, u32))>,
    /// The levels' total buffers and uniforms (kept alive).
    _buffers: Vec<wgpu::Buffer>,
    /// Elements scanned.
    pub n: u32,
}

impl Scan {
    /// Compiles the shader.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let (layout, p) = compute_pipelines(
            ctx,
            "scan.wgsl",
            "scan",
            SHADER,
            &[false, false],
            &["scan_blocks", "add_blocks"],
        )?;
        let [blocks, add]: [wgpu::ComputePipeline; 2] = p.try_into().expect("two pipelines");
        Ok(Scan {
            layout,
            blocks,
            add,
        })
    }

    /// A plan scanning the first `n` u32 of `data` (a storage buffer).
    pub fn plan(&self, ctx: &GpuContext, data: &wgpu::Buffer, n: u32) -> ScanPlan {
        let dev = &ctx.device;
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension;
        let mut levels = Vec::new();
        let mut buffers = Vec::new();
        let mut len = n.max(1);
        let mut below: Option<wgpu::Buffer> = None;
        loop {
            let groups = len.div_ceil(WG);
            let grid = if groups <= max_dim {
                (groups, 1)
            } else {
                (max_dim, groups.div_ceil(max_dim))
            };
            let params = ScanParams {
                n: len,
                row: grid.0,
                ..Default::default()
            };
            let uniform = uniform_with(ctx, "scan params", &params);
            let sums = dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("scan block totals"),
                size: 4 * u64::from(groups.max(1)),
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            });
            let target = below.as_ref().unwrap_or(data);
            let bind = bind_whole(ctx, &self.layout, "scan level", &[&uniform, target, &sums]);
            levels.push((bind, grid));
            buffers.push(uniform);
            if let Some(b) = below.take() {
                buffers.push(b);
            }
            if groups == 1 {
                buffers.push(sums);
                break;
            }
            below = Some(sums);
            len = groups;
        }
        ScanPlan {
            levels,
            _buffers: buffers,
            n,
        }
    }

    /// Records the scan of `plan` into `pass`; returns the dispatches
    /// recorded (2 per level, less one).
    pub fn encode(&self, pass: &mut wgpu::ComputePass, plan: &ScanPlan) -> u64 {
        let mut dispatches = 0;
        pass.set_pipeline(&self.blocks);
        for (bind, grid) in &plan.levels {
            pass.set_bind_group(0, bind, &[]);
            pass.dispatch_workgroups(grid.0, grid.1, 1);
            dispatches += 1;
        }
        // Back down: each level's scanned totals into the level below.
        pass.set_pipeline(&self.add);
        for (bind, grid) in plan.levels.iter().rev().skip(1) {
            pass.set_bind_group(0, bind, &[]);
            pass.dispatch_workgroups(grid.0, grid.1, 1);
            dispatches += 1;
        }
        dispatches
    }
}

#[cfg(test)]
mod tests {
    use super::exclusive_scan;

    #[test]
    fn exclusive_scan_is_the_sum_of_what_comes_before() {
        let mut d = [3, 0, 2, 5, 1];
        exclusive_scan(&mut d);
        assert_eq!(d, [0, 3, 3, 5, 10]);
    }
}
