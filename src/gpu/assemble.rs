//! Contact assembly on the device (pairs with `shaders/assemble.wgsl`; the
//! CPU mirror is [`crate::problem::ContactProblem::assemble`] followed by
//! [`crate::solver::packed::pack`]): the detected contact list
//! ([`super::collide`]) becomes the records the GPU solver reads
//! ([`PackedContact`]) and the body → contact-end index it gathers by,
//! without leaving the device.
//!
//! # What is computed
//!
//! Per contact i with normal n, point p, gap Φ, ends A and B:
//!
//! * the frame [n, u, w] of [`crate::problem::tangent_frame`] (Duff et al.
//!   2017), u stored (the solver recomputes w = n × u);
//! * the lever arms s_A = p − x_A, s_B = p − x_B (zero for a boundary);
//! * the cone (μ, ρ, σ), each the smaller of the two materials'
//!   ([`crate::material::ConeCoeffs::combine`]);
//! * the bias (b_n, b_u, b_w) = (max(Φ/h, −v_max) + n·v_B, u·v_B, w·v_B)
//!   with v_B a boundary's surface velocity (Tasora & Anitescu 2013,
//!   eq. 18, clamped);
//! * the Jacobi step scales b_f = 1 / Σ_ends c_e (1/m_e + (|s_e|² + ℓ²)/I_e)
//!   and b_t = b_f ℓ² (b_f when ℓ = 0), with c_e the end's body's number of
//!   contact ends and ℓ² the mean of the ends' |s_e|²
//!   ([`crate::problem::BodyDelassus`]);
//! * each end's slot: its position in the body-major list of contact ends,
//!   a body's ends in ascending contact order
//!   ([`crate::problem::ContactProblem::build_csr`]).
//!
//! The index is built by integer counts, a prefix scan ([`super::scan`])
//! and a per-body sort of what integer atomics placed in any order, so it
//! is the CPU's exactly and the same bits on every run.
//!
//! Boundaries must only translate (their surface velocity is then one
//! vector, and the torque rows of the bias are zero, as
//! [`crate::solver::packed::pack`] requires); a spinning boundary is
//! [`AssembleError::Spinning`].

use std::time::Instant;

use glam::DVec3;

use super::pipelines::{bind_whole, compute_pipelines, storage_sized, storage_with, uniform_with};
use super::profile::GpuCounters;
use super::scan::{Scan, ScanPlan};
use super::{GpuContext, GpuError};
use crate::bodies::Bodies;
use crate::boundary::Boundary;
use crate::material::Material;
use crate::solver::packed::PackedContact;

pub use super::collide::DeviceContact;

/// The WGSL source: the shared records (`shaders/records.wgsl`), then
/// the stage's own.
pub const SHADER: &str = concat!(
    include_str!("../../shaders/records.wgsl"),
    include_str!("../../shaders/assemble.wgsl")
);

/// Threads per workgroup (WGSL `WG`).
pub const WG: u32 = 256;

/// The passes' uniform record (WGSL `AssembleParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct AssembleParams {
    /// Contacts in the list.
    pub contacts: u32,
    /// Bodies.
    pub bodies: u32,
    /// Workgroups per row of the dispatch grid.
    pub row: u32,
    /// Padding.
    pub _pad0: u32,
    /// Time step h (s).
    pub h: f32,
    /// Largest speed the stabilisation pushes an overlap apart at (m/s).
    pub max_recovery: f32,
    /// Padding.
    pub _pad1: u32,
    /// Padding.
    pub _pad2: u32,
}

/// One body as assembly reads it (WGSL `AsmBody`, in `shaders/records.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct AssembleBody {
    /// Centre (m).
    pub pos: [f32; 3],
    /// Material index.
    pub material: u32,
    /// 1/m (1/kg).
    pub inv_mass: f32,
    /// 1/I (1/(kg m²)).
    pub inv_inertia: f32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
}

/// One boundary as assembly reads it (WGSL `Wall`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct AssembleWall {
    /// Surface velocity (m/s), the same at every point of a boundary that
    /// only translates.
    pub velocity: [f32; 3],
    /// Material index.
    pub material: u32,
}

/// What keeps a problem off device assembly.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    /// The device failed or a buffer does not fit it.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// A boundary spins: its surface velocity varies over it and the
    /// torque rows of the bias are not zero.
    #[error("device assembly takes boundaries that only translate: boundary {name:?} spins at {omega:?} rad/s")]
    Spinning {
        /// The boundary's name.
        name: String,
        /// Its angular velocity (rad/s).
        omega: DVec3,
    },
    /// A body that is not a sphere (its inertia is a tensor).
    #[error("device assembly handles spheres only; body {0} is another shape")]
    Shapes(usize),
}

/// The body records of `bodies` (spheres only).
pub fn body_records(bodies: &Bodies) -> Result<Vec<AssembleBody>, AssembleError> {
    if bodies.has_shapes() {
        let k = (0..bodies.len())
            .find(|&k| bodies.shape_of(k).is_some())
            .unwrap_or(0);
        return Err(AssembleError::Shapes(k));
    }
    Ok((0..bodies.len())
        .map(|k| {
            let p = bodies.pos[k];
            AssembleBody {
                pos: [p.x as f32, p.y as f32, p.z as f32],
                material: bodies.material[k],
                inv_mass: bodies.inv_mass[k] as f32,
                inv_inertia: bodies.inv_inertia[k] as f32,
                ..Default::default()
            }
        })
        .collect())
}

/// The boundary records of `boundaries` at simulated time `time`.
pub fn wall_records(
    boundaries: &[Boundary],
    time: f64,
) -> Result<Vec<AssembleWall>, AssembleError> {
    boundaries
        .iter()
        .map(|b| {
            let (v, w) = b.motion_at(time);
            if w != DVec3::ZERO {
                return Err(AssembleError::Spinning {
                    name: b.name.clone(),
                    omega: w,
                });
            }
            Ok(AssembleWall {
                velocity: [v.x as f32, v.y as f32, v.z as f32],
                material: b.material,
            })
        })
        .collect()
}

/// Material records: (friction, rolling, spinning, 0).
pub fn material_records(materials: &[Material]) -> Vec<[f32; 4]> {
    materials
        .iter()
        .map(|m| [m.friction as f32, m.rolling as f32, m.spinning as f32, 0.0])
        .collect()
}

/// The assembled problem read back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Assembled {
    /// The solver's contact records, in list order.
    pub contacts: Vec<PackedContact>,
    /// Body k's ends are slots `offsets[k]..offsets[k + 1]` (length
    /// bodies + 1).
    pub offsets: Vec<u32>,
    /// The ends (2 × contact + end) in body-major order.
    pub slots: Vec<u32>,
}

/// The assembly pipelines.
pub struct GpuAssembler {
    layout: wgpu::BindGroupLayout,
    count: wgpu::ComputePipeline,
    fill: wgpu::ComputePipeline,
    sort: wgpu::ComputePipeline,
    index: wgpu::ComputePipeline,
    pack: wgpu::ComputePipeline,
    scan: Scan,
    /// Dispatches, submits, round trips and bytes moved, summed over calls.
    pub counters: GpuCounters,
}

/// Device buffers of one assembly.
pub struct AssemblyBuffers {
    _params: wgpu::Buffer,
    /// Per body its first slot (bodies + 1 of them, the last the number
    /// of ends), then the fill cursors.
    pub ends: wgpu::Buffer,
    /// The slots (2 × contact + end) in body order, then each slot's
    /// position.
    pub slots: wgpu::Buffer,
    /// The solver's contact records.
    pub packed: wgpu::Buffer,
    bind: wgpu::BindGroup,
    scan: ScanPlan,
    contacts: u32,
    bodies: u32,
}

impl GpuAssembler {
    /// Compiles the shader and creates the pipelines.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let (layout, p) = compute_pipelines(
            ctx,
            "assemble.wgsl",
            "assembly",
            SHADER,
            &[true, true, true, true, false, false, false],
            &[
                "count_ends",
                "fill_ends",
                "sort_ends",
                "index_ends",
                "pack_contacts",
            ],
        )?;
        let [count, fill, sort, index, pack]: [wgpu::ComputePipeline; 5] =
            p.try_into().expect("five pipelines");
        Ok(GpuAssembler {
            layout,
            count,
            fill,
            sort,
            index,
            pack,
            scan: Scan::new(ctx)?,
            counters: GpuCounters::default(),
        })
    }

    /// Buffers and the bind group assembling `n_contacts` contacts of
    /// `contacts` (a storage buffer of [`DeviceContact`]) among the bodies
    /// of `bodies`, with `materials` and `walls` (storage buffers of the
    /// records above), step `h` and recovery speed `max_recovery`.
    #[allow(clippy::too_many_arguments)]
    pub fn buffers(
        &self,
        ctx: &GpuContext,
        contacts: &wgpu::Buffer,
        n_contacts: u32,
        bodies: (&wgpu::Buffer, u32),
        materials: &wgpu::Buffer,
        walls: &wgpu::Buffer,
        h: f64,
        max_recovery: f64,
    ) -> Result<AssemblyBuffers, GpuError> {
        let (body_buf, n_bodies) = bodies;
        let mk = |what, count, item| storage_sized(ctx, what, count, item);
        let nc = n_contacts as usize;
        let nb = n_bodies as usize;
        let ends = mk("contact ends per body", 2 * nb + 1, 4)?;
        let slots = mk("contact-end slots", 4 * nc, 4)?;
        let packed = mk("packed contacts", nc, std::mem::size_of::<PackedContact>())?;
        let p = AssembleParams {
            contacts: n_contacts,
            bodies: n_bodies,
            row: super::collide::grid((2 * nc).max(nb), ctx).0,
            h: h as f32,
            max_recovery: max_recovery as f32,
            ..Default::default()
        };
        let params = uniform_with(ctx, "assemble params", &p);
        let bind = bind_whole(
            ctx,
            &self.layout,
            "assemble",
            &[
                &params, contacts, body_buf, materials, walls, &ends, &slots, &packed,
            ],
        );
        let scan = self.scan.plan(ctx, &ends, n_bodies + 1);
        Ok(AssemblyBuffers {
            _params: params,
            ends,
            slots,
            packed,
            bind,
            scan,
            contacts: n_contacts,
            bodies: n_bodies,
        })
    }

    /// Records an assembly into `enc`: clears the counts, then the five
    /// passes and the scan. Returns the dispatches recorded.
    pub fn encode(
        &self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        b: &AssemblyBuffers,
    ) -> u64 {
        enc.clear_buffer(&b.ends, 0, None);
        let nc = b.contacts as usize;
        let nb = b.bodies as usize;
        // One row width for every pass (the widest grid's), as in params.
        let row = super::collide::grid((2 * nc).max(nb), ctx).0;
        let rows = |n: usize| (n as u64).div_ceil(u64::from(WG) * u64::from(row)).max(1) as u32;
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_bind_group(0, &b.bind, &[]);
        let mut d = 0;
        pass.set_pipeline(&self.count);
        pass.dispatch_workgroups(row, rows(nc), 1);
        d += self.scan.encode(&mut pass, &b.scan);
        pass.set_bind_group(0, &b.bind, &[]);
        for (pipe, n) in [
            (&self.fill, nc),
            (&self.sort, nb),
            (&self.index, 2 * nc),
            (&self.pack, nc),
        ] {
            pass.set_pipeline(pipe);
            pass.dispatch_workgroups(row, rows(n), 1);
        }
        d + 5
    }

    /// Uploads `contacts` (as [`super::collide::GpuCollider`] finds them),
    /// the bodies, boundaries and materials, assembles on the device and
    /// reads the result back: the test and benchmark entry.
    #[allow(clippy::too_many_arguments)]
    pub fn assemble_records(
        &mut self,
        ctx: &GpuContext,
        contacts: &[DeviceContact],
        bodies: &[AssembleBody],
        walls: &[AssembleWall],
        materials: &[[f32; 4]],
        h: f64,
        max_recovery: f64,
    ) -> Result<Assembled, GpuError> {
        let dev = &ctx.device;
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let t_up = Instant::now();
        let upload = |what: &str, data: &[u8], item: usize| storage_with(ctx, what, data, item);
        let c_buf = upload(
            "device contacts",
            bytemuck::cast_slice(contacts),
            std::mem::size_of::<DeviceContact>(),
        );
        let b_buf = upload(
            "assembly bodies",
            bytemuck::cast_slice(bodies),
            std::mem::size_of::<AssembleBody>(),
        );
        let w_buf = upload(
            "assembly walls",
            bytemuck::cast_slice(walls),
            std::mem::size_of::<AssembleWall>(),
        );
        let m_buf = upload("materials", bytemuck::cast_slice(materials), 16);
        self.counters.upload_bytes += (std::mem::size_of_val(contacts)
            + std::mem::size_of_val(bodies)
            + std::mem::size_of_val(walls)
            + std::mem::size_of_val(materials)) as u64;
        self.counters.upload_seconds += t_up.elapsed().as_secs_f64();
        let (nc, nb) = (contacts.len(), bodies.len());
        let bufs = self.buffers(
            ctx,
            &c_buf,
            nc as u32,
            (&b_buf, nb as u32),
            &m_buf,
            &w_buf,
            h,
            max_recovery,
        )?;
        let packed_bytes = (nc * std::mem::size_of::<PackedContact>()) as u64;
        let ends_bytes = 4 * (nb as u64 + 1);
        let slots_bytes = 4 * 2 * nc as u64;
        let total = packed_bytes + ends_bytes + slots_bytes;
        let read = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read assembly"),
            size: total.max(16),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = dev.create_command_encoder(&Default::default());
        self.counters.dispatches += self.encode(ctx, &mut enc, &bufs);
        if packed_bytes > 0 {
            enc.copy_buffer_to_buffer(&bufs.packed, 0, &read, 0, packed_bytes);
            enc.copy_buffer_to_buffer(
                &bufs.slots,
                0,
                &read,
                packed_bytes + ends_bytes,
                slots_bytes,
            );
        }
        enc.copy_buffer_to_buffer(&bufs.ends, 0, &read, packed_bytes, ends_bytes);
        ctx.queue.submit([enc.finish()]);
        self.counters.submits += 1;
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(format!("contact assembly: {e}")));
        }
        let data = super::pipelines::read(dev, &read, total, &mut self.counters)?;
        let (p, rest) = data.split_at(packed_bytes as usize);
        let (e, s) = rest.split_at(ends_bytes as usize);
        let words = |b: &[u8]| -> Vec<u32> {
            b.chunks_exact(4)
                .map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")))
                .collect()
        };
        let offsets = words(e);
        let mut slots = words(s);
        slots.truncate(offsets.last().copied().unwrap_or(0) as usize);
        Ok(Assembled {
            contacts: p
                .chunks_exact(std::mem::size_of::<PackedContact>())
                .map(bytemuck::pod_read_unaligned)
                .collect(),
            offsets,
            slots,
        })
    }
}
