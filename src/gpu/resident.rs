//! A world of spheres stepped on the device: the stages of
//! [`super::positions`], [`super::collide`], [`super::assemble`],
//! [`super::warm`], [`super::jacobi`] and [`super::integrate`] chained on
//! device buffers, the state and the warm-start records kept there from
//! step to step. The model (radii, materials, boundaries) goes up once.
//!
//! One step:
//!
//! ```text
//!  state ──positions──▶ spheres, assembly bodies
//!        ──detect_written──▶ list (its length read: one round trip)
//!        ──assemble, warm_start, body_records──▶ problem on the device
//!        ──solve_resident──▶ γ (a round trip per chunk of iterations)
//!        ──integrate, store_warm──▶ next state, next step's warm records
//! ```
//!
//! What crosses the host each step is the list's length, the solver's
//! settings and control records and the integration status word, never
//! the bodies or the contacts. This driver waits for the list's length and
//! the solver's checks; recording many steps per submit, with the lengths
//! and checks kept on the device, builds on it.
//!
//! Boundaries are fixed (their records go up once) and every centre must
//! stay within ±`x_max` of the origin in each coordinate (the bound the
//! detection grid's cell edge is sized for).

use glam::DVec3;

use super::assemble::{self, AssembleError, GpuAssembler};
use super::collide::{self, CollideError, GpuCollider, SurfaceRecord};
use super::integrate::{self, BodyPass, BodyState, GpuIntegrator};
use super::jacobi::{DeviceProblem, GpuJacobi};
use super::pipelines::{read, storage_with};
use super::positions::{self, GpuPositions};
use super::profile::GpuCounters;
use super::warm::{self, GpuWarm, WarmRecord};
use super::{GpuContext, GpuError};
use crate::bodies::Bodies;
use crate::boundary::Boundary;
use crate::material::{FrictionLaw, Material};
use crate::solver::packed::PackedBody;
use crate::solver::{SolveStats, SolverSettings};

/// What stops a resident world from being made or stepped.
#[derive(Debug, thiserror::Error)]
pub enum ResidentError {
    /// The device failed or a buffer does not fit it.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Detection refused the scene or found a crowd.
    #[error(transparent)]
    Collide(#[from] CollideError),
    /// Assembly refused the scene.
    #[error(transparent)]
    Assemble(#[from] AssembleError),
    /// A body's new velocity was not finite: the state is the one before.
    #[error("body {body} has a non-finite velocity after step {step}")]
    NonFinite {
        /// The smallest such body index.
        body: usize,
        /// Steps done before this one.
        step: usize,
    },
}

/// What one step did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResidentStep {
    /// Contacts found.
    pub contacts: usize,
    /// Times the list was rewritten into a larger buffer.
    pub rewrites: u32,
    /// The solve's statistics.
    pub stats: SolveStats,
}

/// The constant part of a resident world: uploaded once.
struct Model {
    bodies: usize,
    radii: Vec<f32>,
    surfaces: Vec<SurfaceRecord>,
    shapes: wgpu::Buffer,
    materials: wgpu::Buffer,
    walls: wgpu::Buffer,
    h: f64,
    max_recovery: f64,
    gravity: DVec3,
    envelope: f32,
    x_max: f32,
    law: FrictionLaw,
}

/// A world of spheres whose steps run on the device.
pub struct ResidentWorld {
    model: Model,
    collider: GpuCollider,
    positions: GpuPositions,
    assembler: GpuAssembler,
    warm: GpuWarm,
    integrator: GpuIntegrator,
    solver: GpuJacobi,
    /// The state and the next state (swapped after each step).
    state: [wgpu::Buffer; 2],
    asm_bodies: wgpu::Buffer,
    records: wgpu::Buffer,
    status: wgpu::Buffer,
    read_status: wgpu::Buffer,
    /// Warm-start records: the last step's and this step's (swapped),
    /// with room for `warm_capacity` contacts each.
    warm_records: [wgpu::Buffer; 2],
    warm_capacity: usize,
    previous: u32,
    gamma: wgpu::Buffer,
    gamma_capacity: usize,
    steps: usize,
    /// The driver's own reads (status, state).
    own: GpuCounters,
}

impl ResidentWorld {
    /// Uploads `bodies` (spheres), fixed `boundaries` and `materials` with
    /// step `h`, recovery speed `max_recovery`, `gravity`, the detection
    /// `envelope`, the contact `law`, and the bound `x_max` on every centre
    /// coordinate.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ctx: &GpuContext,
        bodies: &Bodies,
        boundaries: &[Boundary],
        materials: &[Material],
        law: FrictionLaw,
        h: f64,
        max_recovery: f64,
        gravity: DVec3,
        envelope: f64,
        x_max: f64,
    ) -> Result<Self, ResidentError> {
        let nb = bodies.len();
        let surfaces = collide::surface_records(boundaries)?;
        collide::sphere_records(bodies)?;
        let walls = assemble::wall_records(boundaries, 0.0)?;
        let shapes = positions::shape_records(bodies);
        let state0 = integrate::state_records(bodies);
        let state_bytes = nb * std::mem::size_of::<BodyState>();
        let model = Model {
            bodies: nb,
            radii: shapes.iter().map(|s| s.radius).collect(),
            surfaces,
            shapes: storage_with(ctx, "shapes", bytemuck::cast_slice(&shapes), 16),
            materials: storage_with(
                ctx,
                "materials",
                bytemuck::cast_slice(&assemble::material_records(materials)),
                16,
            ),
            walls: storage_with(ctx, "walls", bytemuck::cast_slice(&walls), 16),
            h,
            max_recovery,
            gravity,
            envelope: envelope as f32,
            x_max: x_max as f32,
            law,
        };
        let warm_capacity = 8 * nb.max(8);
        let warm_bytes = warm_capacity * std::mem::size_of::<WarmRecord>();
        Ok(ResidentWorld {
            model,
            collider: GpuCollider::new(ctx)?,
            positions: GpuPositions::new(ctx)?,
            assembler: GpuAssembler::new(ctx)?,
            warm: GpuWarm::new(ctx)?,
            integrator: GpuIntegrator::new(ctx)?,
            solver: GpuJacobi::new(ctx)?,
            state: [
                storage_with(ctx, "state", bytemuck::cast_slice(&state0), 16),
                storage_with(ctx, "next state", &[], state_bytes),
            ],
            asm_bodies: storage_with(
                ctx,
                "assembly bodies",
                &[],
                nb * std::mem::size_of::<assemble::AssembleBody>(),
            ),
            records: storage_with(
                ctx,
                "body records",
                &[],
                2 * nb * std::mem::size_of::<PackedBody>(),
            ),
            status: storage_with(ctx, "status", &u32::MAX.to_le_bytes(), 4),
            read_status: ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("read status"),
                size: 4,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            warm_records: [
                storage_with(ctx, "warm records", &[], warm_bytes),
                storage_with(ctx, "next warm records", &[], warm_bytes),
            ],
            warm_capacity,
            previous: 0,
            gamma: storage_with(ctx, "impulses", &[], 32 * warm_capacity),
            gamma_capacity: warm_capacity,
            steps: 0,
            own: GpuCounters::default(),
        })
    }

    /// Makes the first buffers hold `per_body` contacts a sphere (the
    /// contact list, the impulses and the warm records; 8 by default):
    /// they grow past it as the contacts need, without dropping any. For
    /// a world not yet stepped.
    pub fn with_first_capacity(mut self, ctx: &GpuContext, per_body: usize) -> Self {
        assert_eq!(
            self.steps, 0,
            "the first capacity of a world not yet stepped"
        );
        let cap = (per_body.max(1) * self.model.bodies).max(1);
        self.collider.first_capacity_per_body = per_body.max(1);
        let bytes = cap * std::mem::size_of::<WarmRecord>();
        self.warm_records = [
            storage_with(ctx, "warm records", &[], bytes),
            storage_with(ctx, "next warm records", &[], bytes),
        ];
        self.warm_capacity = cap;
        self.gamma = storage_with(ctx, "impulses", &[], 32 * cap);
        self.gamma_capacity = cap;
        self
    }

    /// One step with the solver `settings`.
    pub fn step(
        &mut self,
        ctx: &GpuContext,
        settings: &SolverSettings,
    ) -> Result<ResidentStep, ResidentError> {
        let m = &self.model;
        let nb = m.bodies as u32;
        let dev = &ctx.device;
        // Detection's and assembly's inputs from the state.
        let spheres = self.collider.spheres_buffer(ctx, m.bodies, &m.surfaces)?;
        let (_pp, pbind) = self.positions.bind(
            ctx,
            nb,
            [&self.state[0], &m.shapes, spheres, &self.asm_bodies],
        );
        let mut enc = dev.create_command_encoder(&Default::default());
        {
            let mut cp = enc.begin_compute_pass(&Default::default());
            self.positions.encode(ctx, &mut cp, &pbind, nb);
        }
        ctx.queue.submit([enc.finish()]);
        self.own.submits += 1;
        let (nc, rewrites) =
            self.collider
                .detect_written(ctx, &m.radii, m.x_max, m.surfaces.len(), m.envelope)?;
        let ncu = nc as usize;
        // Room for this step's impulses and warm records, the last step's
        // records kept.
        if ncu > self.gamma_capacity {
            self.gamma_capacity = ncu.next_power_of_two();
            self.gamma = storage_with(ctx, "impulses", &[], 32 * self.gamma_capacity);
        }
        if ncu > self.warm_capacity {
            let cap = ncu.next_power_of_two();
            let bytes = cap * std::mem::size_of::<WarmRecord>();
            let next = storage_with(ctx, "next warm records", &[], bytes);
            let mut enc = dev.create_command_encoder(&Default::default());
            let last = storage_with(ctx, "warm records", &[], bytes);
            let kept = u64::from(self.previous) * std::mem::size_of::<WarmRecord>() as u64;
            if kept > 0 {
                enc.copy_buffer_to_buffer(&self.warm_records[0], 0, &last, 0, kept);
            }
            ctx.queue.submit([enc.finish()]);
            self.own.submits += 1;
            self.warm_records = [last, next];
            self.warm_capacity = cap;
        }
        let list = self.collider.list().expect("a list after a detection");
        let ab = self.assembler.buffers(
            ctx,
            list,
            nc,
            (&self.asm_bodies, nb),
            &m.materials,
            &m.walls,
            m.h,
            m.max_recovery,
        )?;
        let wp = self.warm.params(ctx, nc, self.previous);
        let wbind = self.warm.bind(
            ctx,
            &wp,
            list,
            &ab.packed,
            &self.warm_records[0],
            &self.gamma,
            &self.warm_records[1],
        );
        let ip = self.integrator.params(ctx, nb, nc, m.h, m.gravity);
        let ibind = self.integrator.bind(
            ctx,
            [
                &ip,
                &ab.packed,
                &self.gamma,
                &ab.ends,
                &ab.slots,
                &self.state[0],
                &self.state[1],
                &self.records,
                &self.status,
            ],
        );
        let mut enc = dev.create_command_encoder(&Default::default());
        if nc > 0 {
            self.assembler.encode(ctx, &mut enc, &ab);
        } else {
            enc.clear_buffer(&ab.ends, 0, None);
        }
        {
            let mut cp = enc.begin_compute_pass(&Default::default());
            if nc > 0 {
                self.warm
                    .encode(ctx, &mut cp, warm::Pass::Start, &wbind, nc);
            }
            self.integrator
                .encode(ctx, &mut cp, BodyPass::Records, &ibind, nb);
        }
        ctx.queue.submit([enc.finish()]);
        self.own.submits += 1;
        let stats = self.solver.solve_resident(
            ctx,
            &DeviceProblem {
                packed: &ab.packed,
                contacts: ncu,
                ends: &ab.ends,
                records: &self.records,
                bodies: m.bodies,
                gamma: &self.gamma,
                law: m.law,
            },
            settings,
        )?;
        let mut enc = dev.create_command_encoder(&Default::default());
        {
            let mut cp = enc.begin_compute_pass(&Default::default());
            self.integrator
                .encode(ctx, &mut cp, BodyPass::Integrate, &ibind, nb);
            if nc > 0 {
                self.warm
                    .encode(ctx, &mut cp, warm::Pass::Store, &wbind, nc);
            }
        }
        enc.copy_buffer_to_buffer(&self.status, 0, &self.read_status, 0, 4);
        ctx.queue.submit([enc.finish()]);
        self.own.submits += 1;
        let status = read(dev, &self.read_status, 4, &mut self.own)?;
        let status = u32::from_le_bytes(status.try_into().expect("4 bytes"));
        if status != u32::MAX {
            return Err(ResidentError::NonFinite {
                body: status as usize,
                step: self.steps,
            });
        }
        self.state.swap(0, 1);
        self.warm_records.swap(0, 1);
        self.previous = nc;
        self.steps += 1;
        Ok(ResidentStep {
            contacts: ncu,
            rewrites,
            stats,
        })
    }

    /// The bodies' state, read back.
    pub fn state(&mut self, ctx: &GpuContext) -> Result<Vec<BodyState>, GpuError> {
        let bytes = (self.model.bodies * std::mem::size_of::<BodyState>()) as u64;
        let read_buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read state"),
            size: bytes.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&self.state[0], 0, &read_buf, 0, bytes);
        ctx.queue.submit([enc.finish()]);
        self.own.submits += 1;
        let data = read(&ctx.device, &read_buf, bytes, &mut self.own)?;
        Ok(data
            .chunks_exact(std::mem::size_of::<BodyState>())
            .map(bytemuck::pod_read_unaligned)
            .collect())
    }

    /// Host round trips, bytes up and down, summed over the stages.
    pub fn counters(&self) -> GpuCounters {
        let mut c = self.collider.counters;
        for o in [
            self.own,
            self.positions.counters,
            self.assembler.counters,
            self.warm.counters,
            self.integrator.counters,
            self.solver.counters(),
        ] {
            c.round_trips += o.round_trips;
            c.upload_bytes += o.upload_bytes;
            c.readback_bytes += o.readback_bytes;
            c.submits += o.submits;
        }
        c
    }
}
