//! The bodies' side of a step on the device (pairs with
//! `shaders/integrate.wgsl`; the CPU mirror is the body records of
//! [`crate::solver::packed::pack`] and the integrate stage of
//! [`crate::formulation::complementarity::finish`]), for spheres.
//!
//! Before the solve, `body_records` writes the records the solver reads:
//! the free velocities v_free = v + h g, ω_free = ω (spheres have no
//! gyroscopic term) and the starting velocities v_free + M⁻¹ D γ₀. After
//! it, `integrate` forms v⁺ = v_free + M⁻¹ D γ once from the final
//! impulses — not from the solver's velocity records, built one f32
//! increment at a time — so that the contact loads balance the motion, as
//! on every other backend; then x⁺ = x + h v⁺ and q⁺ = exp(h ω⁺/2) ⊗ q,
//! renormalised (semi-implicit Euler, Tasora & Anitescu 2013, eq. 18;
//! the exponential map by [`crate::integrate::turn`]'s series).
//!
//! # Positions in fixed point
//!
//! A settling sphere moves by h|v| ≈ 10⁻⁹ m a step at 10⁻⁵ m/s and
//! h = 10⁻⁴ s, below half an ulp of a coordinate of 0.5 m in f32
//! (3·10⁻⁸ m): in one f32 it would never move. The centre is therefore
//! held in 64-bit fixed point, X = x / q with q = 2⁻⁴⁸ m (3.6·10⁻¹⁵ m;
//! |x| up to 2¹⁵ m), as a high and a low 32-bit word, and advanced by
//! integer addition with carry of h v⁺ rounded to the nearest q: each
//! step loses at most q/2 beyond the f32 product h v⁺ itself. Integer
//! arithmetic also keeps the update exact whatever a shader compiler does
//! with float expressions (a compensated two-f32 sum is folded away by
//! compilers that treat float addition as associative, Mesa's among
//! them). The contact stages read the centre rounded to f32.
//!
//! A body whose new velocity is not finite keeps its state and is named
//! in the status word (the smallest such index), for the host to stop the
//! run there, as [`crate::formulation::stage::NonFiniteError`] does.

use std::time::Instant;

use glam::{DQuat, DVec3};

use super::pipelines::{bind_whole, compute_pipelines, storage_with, uniform_with};
use super::profile::GpuCounters;
use super::{GpuContext, GpuError};
use crate::bodies::Bodies;
use crate::solver::packed::{PackedBody, PackedContact};

/// The WGSL source: the shared records (`shaders/records.wgsl`), then
/// the stage's own.
pub const SHADER: &str = concat!(
    include_str!("../../shaders/records.wgsl"),
    include_str!("../../shaders/integrate.wgsl")
);

/// Threads per workgroup (WGSL `WG`).
pub const WG: u32 = 256;

/// The passes' uniform record (WGSL `IntegrateParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct IntegrateParams {
    /// Bodies.
    pub bodies: u32,
    /// Contacts.
    pub contacts: u32,
    /// Workgroups per row of the dispatch grid.
    pub row: u32,
    /// Padding.
    pub _pad0: u32,
    /// Gravity (xyz, m/s²) and the step h (w, s).
    pub gravity: [f32; 4],
}

/// The fixed-point unit of a centre coordinate, q = 2⁻⁴⁸ m (module docs).
pub const POSITION_UNIT: f64 = 1.0 / (1u64 << 48) as f64;

/// One body's state on the device (WGSL `BodyState`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BodyState {
    /// High words of the centre in units of q (xyz): X >> 32.
    pub cell: [i32; 4],
    /// Low words (xyz): X & 0xffff_ffff.
    pub frac: [u32; 4],
    /// Velocity (xyz) and 1/m (w).
    pub v: [f32; 4],
    /// Angular velocity (xyz) and 1/I (w).
    pub w: [f32; 4],
    /// Orientation quaternion (x, y, z, w).
    pub q: [f32; 4],
}

impl BodyState {
    /// The centre X q.
    pub fn pos(&self) -> DVec3 {
        let c = |k: usize| {
            let x = (i64::from(self.cell[k]) << 32) | i64::from(self.frac[k]);
            x as f64 * POSITION_UNIT
        };
        DVec3::new(c(0), c(1), c(2))
    }
}

/// The device state of `bodies` (spheres): each coordinate rounded to the
/// nearest q.
pub fn state_records(bodies: &Bodies) -> Vec<BodyState> {
    let f = |v: DVec3, w: f64| [v.x as f32, v.y as f32, v.z as f32, w as f32];
    (0..bodies.len())
        .map(|k| {
            let x = bodies.pos[k];
            let fixed = |c: f64| (c / POSITION_UNIT).round() as i64;
            let xs = [fixed(x.x), fixed(x.y), fixed(x.z)];
            let q: DQuat = bodies.rot[k];
            BodyState {
                cell: [
                    (xs[0] >> 32) as i32,
                    (xs[1] >> 32) as i32,
                    (xs[2] >> 32) as i32,
                    0,
                ],
                frac: [xs[0] as u32, xs[1] as u32, xs[2] as u32, 0],
                v: f(bodies.vel[k], bodies.inv_mass[k]),
                w: f(bodies.omega[k], bodies.inv_inertia[k]),
                q: [q.x as f32, q.y as f32, q.z as f32, q.w as f32],
            }
        })
        .collect()
}

/// What [`GpuIntegrator::run_records`] read back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Integrated {
    /// The solver's body records: starting velocities, then free ones
    /// (`body_records`); empty after `integrate`.
    pub records: Vec<PackedBody>,
    /// The next state (`integrate`); empty after `body_records`.
    pub next: Vec<BodyState>,
    /// The smallest index of a body whose new velocity is not finite.
    pub non_finite: Option<usize>,
}

/// Which pass to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyPass {
    /// The solver's body records before the solve.
    Records,
    /// The next state from the final impulses.
    Integrate,
}

/// The body pipelines.
pub struct GpuIntegrator {
    layout: wgpu::BindGroupLayout,
    records: wgpu::ComputePipeline,
    integrate: wgpu::ComputePipeline,
    /// Dispatches, submits, round trips and bytes moved, summed over calls.
    pub counters: GpuCounters,
}

impl GpuIntegrator {
    /// Compiles the shader and creates the pipelines.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let (layout, mut p) = compute_pipelines(
            ctx,
            "integrate.wgsl",
            "body",
            SHADER,
            &[true, true, true, true, true, false, false, false],
            &["body_records", "integrate"],
        )?;
        let (integrate, records) = (p.pop().expect("two"), p.pop().expect("two"));
        Ok(GpuIntegrator {
            layout,
            records,
            integrate,
            counters: GpuCounters::default(),
        })
    }

    /// The uniform record of a pass over `bodies` bodies and `contacts`
    /// contacts with step `h` and `gravity`, in a new buffer.
    pub fn params(
        &self,
        ctx: &GpuContext,
        bodies: u32,
        contacts: u32,
        h: f64,
        gravity: DVec3,
    ) -> wgpu::Buffer {
        let params = IntegrateParams {
            bodies,
            contacts,
            row: super::collide::grid(bodies as usize, ctx).0,
            gravity: [
                gravity.x as f32,
                gravity.y as f32,
                gravity.z as f32,
                h as f32,
            ],
            ..Default::default()
        };
        uniform_with(ctx, "integrate params", &params)
    }

    /// The bind group of the passes over device buffers, in binding order:
    /// `params` (from [`GpuIntegrator::params`]), the packed contacts, the
    /// impulses, the body → end offsets and slots
    /// ([`super::assemble::AssemblyBuffers`]), the state, the next state,
    /// the solver's body records and the status word.
    pub fn bind(&self, ctx: &GpuContext, buffers: [&wgpu::Buffer; 9]) -> wgpu::BindGroup {
        bind_whole(ctx, &self.layout, "integrate", &buffers)
    }

    /// Records `pass` over `bodies` bodies into `cp`; returns the
    /// dispatches recorded.
    pub fn encode(
        &self,
        ctx: &GpuContext,
        cp: &mut wgpu::ComputePass,
        pass: BodyPass,
        bind: &wgpu::BindGroup,
        bodies: u32,
    ) -> u64 {
        let g = super::collide::grid(bodies as usize, ctx);
        cp.set_bind_group(0, bind, &[]);
        cp.set_pipeline(match pass {
            BodyPass::Records => &self.records,
            BodyPass::Integrate => &self.integrate,
        });
        cp.dispatch_workgroups(g.0, g.1, 1);
        1
    }

    /// Uploads the contacts' records `packed`, impulses `gamma` (two
    /// `[f32; 4]` per contact), the body → end index (`offsets`, `slots`,
    /// as [`super::assemble::Assembled`] holds it) and the bodies' `state`,
    /// runs `pass` with step `h` and `gravity`, and reads the result back.
    #[allow(clippy::too_many_arguments)]
    pub fn run_records(
        &mut self,
        ctx: &GpuContext,
        pass: BodyPass,
        packed: &[PackedContact],
        gamma: &[[f32; 4]],
        offsets: &[u32],
        slots: &[u32],
        state: &[BodyState],
        h: f64,
        gravity: DVec3,
    ) -> Result<Integrated, GpuError> {
        let dev = &ctx.device;
        let nb = state.len();
        if nb == 0 {
            return Ok(Integrated::default());
        }
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let t_up = Instant::now();
        let upload = |what: &str, data: &[u8], bytes: usize| storage_with(ctx, what, data, bytes);
        let p_buf = self.params(ctx, nb as u32, packed.len() as u32, h, gravity);
        let state_bytes = std::mem::size_of::<BodyState>();
        let k_buf = upload(
            "packed contacts",
            bytemuck::cast_slice(packed),
            std::mem::size_of::<PackedContact>(),
        );
        let g_buf = upload("impulses", bytemuck::cast_slice(gamma), 32);
        let e_buf = upload("contact ends per body", bytemuck::cast_slice(offsets), 4);
        let s_buf = upload("contact-end slots", bytemuck::cast_slice(slots), 4);
        let x_buf = upload("body state", bytemuck::cast_slice(state), state_bytes);
        let n_buf = upload("next body state", &[], std::mem::size_of_val(state));
        let r_buf = upload(
            "body records",
            &[],
            2 * nb * std::mem::size_of::<PackedBody>(),
        );
        let st_buf = upload("integration status", &u32::MAX.to_le_bytes(), 4);
        self.counters.upload_bytes += (std::mem::size_of_val(packed)
            + std::mem::size_of_val(gamma)
            + std::mem::size_of_val(offsets)
            + std::mem::size_of_val(slots)
            + std::mem::size_of_val(state)
            + 4) as u64;
        self.counters.upload_seconds += t_up.elapsed().as_secs_f64();
        let bind = self.bind(
            ctx,
            [
                &p_buf, &k_buf, &g_buf, &e_buf, &s_buf, &x_buf, &n_buf, &r_buf, &st_buf,
            ],
        );
        let (out, bytes) = match pass {
            BodyPass::Records => (&r_buf, (2 * nb * std::mem::size_of::<PackedBody>()) as u64),
            BodyPass::Integrate => (&n_buf, std::mem::size_of_val(state) as u64),
        };
        let read = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read bodies"),
            size: bytes + 4,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = dev.create_command_encoder(&Default::default());
        {
            let mut cp = enc.begin_compute_pass(&Default::default());
            self.counters.dispatches += self.encode(ctx, &mut cp, pass, &bind, nb as u32);
        }
        enc.copy_buffer_to_buffer(out, 0, &read, 0, bytes);
        enc.copy_buffer_to_buffer(&st_buf, 0, &read, bytes, 4);
        ctx.queue.submit([enc.finish()]);
        self.counters.submits += 1;
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(format!("body pass: {e}")));
        }
        let data = super::pipelines::read(dev, &read, bytes + 4, &mut self.counters)?;
        let (body, status) = data.split_at(bytes as usize);
        let status = u32::from_le_bytes(status.try_into().expect("4 bytes"));
        let mut got = Integrated {
            non_finite: (status != u32::MAX).then_some(status as usize),
            ..Default::default()
        };
        match pass {
            BodyPass::Records => {
                got.records = body
                    .chunks_exact(std::mem::size_of::<PackedBody>())
                    .map(bytemuck::pod_read_unaligned)
                    .collect()
            }
            BodyPass::Integrate => {
                got.next = body
                    .chunks_exact(state_bytes)
                    .map(bytemuck::pod_read_unaligned)
                    .collect()
            }
        }
        Ok(got)
    }
}
