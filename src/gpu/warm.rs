//! Warm starts on the device (pairs with `shaders/warm.wgsl`; the CPU
//! mirror is [`crate::formulation::complementarity::warm_start`] and the
//! `store_warm` stage of [`crate::formulation::complementarity::finish`]).
//!
//! A contact that persists from one step to the next starts its solve
//! from the impulse it ended the last one with. The impulse is kept in
//! world coordinates, F = γ_n n + γ_u u + γ_w w and T = τ_n n + τ_u u +
//! τ_w w, so that it survives the frame turning with the contact; the new
//! step's starting impulse is its projection on the new frame, γ₀ =
//! (F·n′, F·u′, F·w′, T·n′, T·u′, T·w′). Contacts are matched by pair key
//! ([`crate::collision::pair_key`], [`crate::collision::wall_key`]). The
//! contact list is ascending in key ([`super::collide`]), so the stored
//! records are too, and each new contact finds its old record by binary
//! search: no hashing, no atomics, the same bits on every run.
//!
//! The frame is the packed one ([`crate::solver::packed::PackedContact`]:
//! n and u, with w = n × u as the solver builds it).

use std::collections::HashMap;
use std::time::Instant;

use super::collide::DeviceContact;
use super::pipelines::{bind_whole, compute_pipelines, storage_with, uniform_with};
use super::profile::GpuCounters;
use super::{GpuContext, GpuError};
use crate::solver::packed::PackedContact;
use crate::state::WarmImpulse;

/// The WGSL source: the shared records (`shaders/records.wgsl`), then
/// the stage's own.
pub const SHADER: &str = concat!(
    include_str!("../../shaders/records.wgsl"),
    include_str!("../../shaders/warm.wgsl")
);

/// Threads per workgroup (WGSL `WG`).
pub const WG: u32 = 256;

/// The passes' uniform record (WGSL `WarmParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WarmParams {
    /// Contacts of this step.
    pub contacts: u32,
    /// Records of the previous step.
    pub previous: u32,
    /// Workgroups per row of the dispatch grid.
    pub row: u32,
    /// Padding.
    pub _pad0: u32,
}

/// One contact's impulse in world coordinates (WGSL `Warm`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WarmRecord {
    /// Low 32 bits of the pair key.
    pub key_lo: u32,
    /// High 32 bits of the pair key.
    pub key_hi: u32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
    /// Force impulse F (xyz, N s).
    pub force: [f32; 4],
    /// Torque impulse T (xyz, N m s).
    pub torque: [f32; 4],
}

impl WarmRecord {
    /// The pair key.
    pub fn key(&self) -> u64 {
        (u64::from(self.key_hi) << 32) | u64::from(self.key_lo)
    }
}

/// The records of a run's warm starts (`State::warm`), ascending in key:
/// what the device reads when a run moves onto it mid-way (a restart from
/// a checkpoint).
pub fn records_of(warm: &HashMap<u64, WarmImpulse>) -> Vec<WarmRecord> {
    let mut keys: Vec<u64> = warm.keys().copied().collect();
    keys.sort_unstable();
    keys.iter()
        .map(|&k| {
            let w = &warm[&k];
            let v = |x: glam::DVec3| [x.x as f32, x.y as f32, x.z as f32, 0.0];
            WarmRecord {
                key_lo: k as u32,
                key_hi: (k >> 32) as u32,
                force: v(w.force),
                torque: v(w.torque),
                ..Default::default()
            }
        })
        .collect()
}

/// The warm-start pipelines.
pub struct GpuWarm {
    layout: wgpu::BindGroupLayout,
    start: wgpu::ComputePipeline,
    store: wgpu::ComputePipeline,
    /// Dispatches, submits, round trips and bytes moved, summed over calls.
    pub counters: GpuCounters,
}

/// Which of the two passes to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// `warm_start`: the starting impulses from the previous records.
    Start,
    /// `store_warm`: this step's records from its impulses.
    Store,
}

impl GpuWarm {
    /// Compiles the shader and creates the pipelines.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let (layout, mut p) = compute_pipelines(
            ctx,
            "warm.wgsl",
            "warm-start",
            SHADER,
            &[true, true, true, false, false],
            &["warm_start", "store_warm"],
        )?;
        let (store, start) = (p.pop().expect("two"), p.pop().expect("two"));
        Ok(GpuWarm {
            layout,
            start,
            store,
            counters: GpuCounters::default(),
        })
    }

    /// The uniform record of a pass over `contacts` contacts with
    /// `previous` records of the last step, in a new buffer.
    pub fn params(&self, ctx: &GpuContext, contacts: u32, previous: u32) -> wgpu::Buffer {
        let params = WarmParams {
            contacts,
            previous,
            row: super::collide::grid(contacts as usize, ctx).0,
            ..Default::default()
        };
        uniform_with(ctx, "warm params", &params)
    }

    /// The bind group of the passes over device buffers: `params` (from
    /// [`GpuWarm::params`]), the contact list, its packed records, the
    /// previous step's records, the impulses (two `[f32; 4]` per contact)
    /// and the records this step stores.
    #[allow(clippy::too_many_arguments)]
    pub fn bind(
        &self,
        ctx: &GpuContext,
        params: &wgpu::Buffer,
        contacts: &wgpu::Buffer,
        packed: &wgpu::Buffer,
        previous: &wgpu::Buffer,
        gamma: &wgpu::Buffer,
        stored: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        bind_whole(
            ctx,
            &self.layout,
            "warm",
            &[params, contacts, packed, previous, gamma, stored],
        )
    }

    /// Records `pass` over `contacts` contacts into `cp`; returns the
    /// dispatches recorded.
    pub fn encode(
        &self,
        ctx: &GpuContext,
        cp: &mut wgpu::ComputePass,
        pass: Pass,
        bind: &wgpu::BindGroup,
        contacts: u32,
    ) -> u64 {
        let g = super::collide::grid(contacts as usize, ctx);
        cp.set_bind_group(0, bind, &[]);
        cp.set_pipeline(match pass {
            Pass::Start => &self.start,
            Pass::Store => &self.store,
        });
        cp.dispatch_workgroups(g.0, g.1, 1);
        1
    }

    /// The starting impulses of `contacts` (with their packed frames
    /// `packed`) from the previous step's `previous` records (ascending in
    /// key), computed on the device and read back: two `[f32; 4]` per
    /// contact, (γ_n, γ_u, γ_w, τ_n) and (τ_u, τ_w, 0, 0), as the solver
    /// holds them.
    pub fn warm_start_records(
        &mut self,
        ctx: &GpuContext,
        contacts: &[DeviceContact],
        packed: &[PackedContact],
        previous: &[WarmRecord],
    ) -> Result<Vec<[f32; 4]>, GpuError> {
        let out = self.run(ctx, Pass::Start, contacts, packed, previous, &[])?;
        Ok(out
            .chunks_exact(16)
            .map(bytemuck::pod_read_unaligned)
            .collect())
    }

    /// The records this step leaves for the next, from the impulses
    /// `gamma` (as [`GpuWarm::warm_start_records`] gives them) of
    /// `contacts` with frames `packed`, computed on the device and read
    /// back.
    pub fn store_records(
        &mut self,
        ctx: &GpuContext,
        contacts: &[DeviceContact],
        packed: &[PackedContact],
        gamma: &[[f32; 4]],
    ) -> Result<Vec<WarmRecord>, GpuError> {
        let out = self.run(ctx, Pass::Store, contacts, packed, &[], gamma)?;
        Ok(out
            .chunks_exact(std::mem::size_of::<WarmRecord>())
            .map(bytemuck::pod_read_unaligned)
            .collect())
    }

    /// Uploads, runs one pass and reads its output back.
    fn run(
        &mut self,
        ctx: &GpuContext,
        pass: Pass,
        contacts: &[DeviceContact],
        packed: &[PackedContact],
        previous: &[WarmRecord],
        gamma: &[[f32; 4]],
    ) -> Result<Vec<u8>, GpuError> {
        let dev = &ctx.device;
        let nc = contacts.len();
        if nc == 0 {
            return Ok(Vec::new());
        }
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let t_up = Instant::now();
        let upload = |what: &str, data: &[u8], bytes: usize| storage_with(ctx, what, data, bytes);
        let p_buf = self.params(ctx, nc as u32, previous.len() as u32);
        let record = std::mem::size_of::<WarmRecord>();
        let c_buf = upload("device contacts", bytemuck::cast_slice(contacts), 0);
        let k_buf = upload("packed contacts", bytemuck::cast_slice(packed), 0);
        let prev_buf = upload(
            "previous warm records",
            bytemuck::cast_slice(previous),
            record,
        );
        let g_buf = upload("impulses", bytemuck::cast_slice(gamma), 32 * nc);
        let s_buf = upload("stored warm records", &[], record * nc);
        self.counters.upload_bytes += (std::mem::size_of_val(contacts)
            + std::mem::size_of_val(packed)
            + std::mem::size_of_val(previous)
            + std::mem::size_of_val(gamma)) as u64;
        self.counters.upload_seconds += t_up.elapsed().as_secs_f64();
        let bind = self.bind(ctx, &p_buf, &c_buf, &k_buf, &prev_buf, &g_buf, &s_buf);
        let (out, bytes) = match pass {
            Pass::Start => (&g_buf, 32 * nc as u64),
            Pass::Store => (&s_buf, (record * nc) as u64),
        };
        let read = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read warm"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = dev.create_command_encoder(&Default::default());
        {
            let mut cp = enc.begin_compute_pass(&Default::default());
            self.counters.dispatches += self.encode(ctx, &mut cp, pass, &bind, nc as u32);
        }
        enc.copy_buffer_to_buffer(out, 0, &read, 0, bytes);
        ctx.queue.submit([enc.finish()]);
        self.counters.submits += 1;
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(format!("warm starts: {e}")));
        }
        super::pipelines::read(dev, &read, bytes, &mut self.counters)
    }
}
