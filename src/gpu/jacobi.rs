//! The GPU solvers, projected Jacobi and APGD (pair with `shaders/jacobi.wgsl`;
//! their CPU mirror is [`crate::solver::jacobi_f32`]).
//!
//! Owns the pipelines and the buffers, which grow with the problem (by
//! doubling, so steady simulations stop reallocating). [`GpuJacobi::solve`]
//! does one upload, the iterations in a few compute passes that each end at
//! a residual check (the control record read after each), and one readback
//! of the state (see the [module docs](super)).

use bytemuck::{Pod, Zeroable};

use super::{GpuContext, GpuError};
use crate::material::FrictionLaw;
use crate::solver::packed::{PackedBody, PackedContact, PackedInertia, PackedProblem};
use crate::solver::{SolveStats, SolverSettings};

/// How many solves' iteration counts the first-chunk estimate looks at.
const RECENT_SOLVES: usize = 8;

/// Iterations the next solve's first chunk should cover: the last solve's
/// count (a warm start needs about as many), at most 4× the median of the
/// recent counts; 0 before the first solve.
fn first_chunk_estimate(recent: &std::collections::VecDeque<usize>) -> usize {
    let Some(&last) = recent.back() else {
        return 0;
    };
    let mut sorted = [0; RECENT_SOLVES];
    let n = recent.len().min(RECENT_SOLVES);
    for (s, &r) in sorted.iter_mut().zip(recent) {
        *s = r;
    }
    sorted[..n].sort_unstable();
    last.min(4 * sorted[n / 2])
}

/// The WGSL source.
pub const SHADER: &str = include_str!("../../shaders/jacobi.wgsl");

/// Workgroup size of `contact_pass` and `body_pass` (WGSL `WG`).
pub const WG: u32 = 256;
/// Workgroup size of the residual reduction (WGSL `RWG`).
pub const RWG: u32 = 256;

/// Bytes of one contact's γ in the `gamma` buffer: two vec4 (WGSL
/// `load_gamma`), the 6 components and 2 of padding.
pub const GAMMA_BYTES: usize = 32;
/// Bytes of one slot (one contact end's velocity change): two vec4.
pub const SLOT_BYTES: usize = 32;
/// Regions of body-sized records in the `bodies` buffer: the iterate's
/// records, APGD's extrapolated point's, and the inertia tensors
/// ([`PackedInertia`], the same size as a [`PackedBody`]).
pub const BODY_REGIONS: usize = 3;
const _: () = assert!(
    std::mem::size_of::<PackedInertia>() == std::mem::size_of::<PackedBody>(),
    "an inertia record fills one body-record place"
);

/// Uniform parameters (WGSL `Params`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Params {
    /// Number of contacts.
    pub n_contacts: u32,
    /// Number of bodies.
    pub n_bodies: u32,
    /// Step scale ω.
    pub omega: f32,
    /// Relaxation λ.
    pub lambda: f32,
    /// Relative residual tolerance (0 = none).
    pub tolerance: f32,
    /// Iterations between residual checks.
    pub check_every: u32,
    /// Iteration limit K.
    pub max_iterations: u32,
    /// Number of residual partial sums (workgroups of `residual_pass`).
    pub n_partials: u32,
    /// Contact law: 0 = associated, 1 = De Saxcé.
    pub law: u32,
    /// Residual measure: 1 = weighted by b_f, 0 = unweighted
    /// ([`jacobi_f32::weighted`](crate::solver::jacobi_f32::weighted)).
    pub weighted: u32,
    /// Method: 0 = projected Jacobi, 1 = APGD
    /// ([`jacobi_f32::solve_apgd`](crate::solver::jacobi_f32::solve_apgd)).
    pub method: u32,
    /// 1 when inverse inertia tensors follow the body records (bodies that
    /// are not spheres; [`PackedInertia`]), 0 for the scalar path.
    pub tensors: u32,
}

/// Loop control and result record (WGSL `Control`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Control {
    /// Non-zero once the loop is over (converged or finished).
    pub done: u32,
    /// Residual checks performed before stopping.
    pub checks: u32,
    /// Iterations performed.
    pub iterations: u32,
    /// Non-zero when the tolerance was met.
    pub converged: u32,
    /// Absolute natural-map residual.
    pub residual_abs: f32,
    /// Relative residual.
    pub residual_rel: f32,
    /// ‖γ‖.
    pub gamma_norm: f32,
    /// ‖Nγ + r‖.
    pub y_norm: f32,
    /// APGD: Nesterov's θ (1 at the start and after a restart).
    pub theta: f32,
    /// APGD: the momentum β of the current iteration.
    pub beta: f32,
    /// APGD: the relative residual at the previous check.
    pub last_rel: f32,
    /// Padding (a multiple of 16 bytes).
    pub pad: u32,
}

struct Buffers {
    contacts: wgpu::Buffer,
    bodies: wgpu::Buffer,
    gamma: wgpu::Buffer,
    _slots: wgpu::Buffer,
    offsets: wgpu::Buffer,
    _partials: wgpu::Buffer,
    read_bodies: wgpu::Buffer,
    read_gamma: wgpu::Buffer,
    bind: wgpu::BindGroup,
    /// Capacity in contacts and bodies.
    cap: (usize, usize),
}

/// The GPU solver: pipelines plus growable buffers.
pub struct GpuJacobi {
    layout: wgpu::BindGroupLayout,
    indirect: wgpu::Buffer,
    indirect_bind: wgpu::BindGroup,
    contact: wgpu::ComputePipeline,
    body: wgpu::ComputePipeline,
    apgd_advance: wgpu::ComputePipeline,
    apgd_contact: wgpu::ComputePipeline,
    apgd_body: wgpu::ComputePipeline,
    residual: wgpu::ComputePipeline,
    finalize_check: wgpu::ComputePipeline,
    finalize_last: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    control: wgpu::Buffer,
    read_control: wgpu::Buffer,
    bufs: Option<Buffers>,
    timer: Option<PassTimer>,
    last_pass_seconds: Option<f64>,
    /// Iterations of the last few solves, oldest first: where the next
    /// one's first chunk ends ([`first_chunk_estimate`]).
    recent_iterations: std::collections::VecDeque<usize>,
    /// γ padded to the buffer layout for upload, kept between solves.
    padded: Vec<[f32; 8]>,
}

/// Timestamp queries around the iteration pass (when the device offers
/// `TIMESTAMP_QUERY`): the pass's own duration, free of upload and readback.
struct PassTimer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period: f64,
}

impl PassTimer {
    fn new(ctx: &GpuContext) -> Option<Self> {
        if !ctx
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
        {
            return None;
        }
        let dev = &ctx.device;
        let buffer = |label, usage| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 16,
                usage,
                mapped_at_creation: false,
            })
        };
        Some(PassTimer {
            set: dev.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("jacobi pass time"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: buffer(
                "timestamps",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            read: buffer(
                "read timestamps",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            period: ctx.queue.get_timestamp_period() as f64,
        })
    }
}

fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Workgroup counts (x, y) covering `n` threads in groups of `wg`, within the
/// per-dimension limit (a 2-D grid past it; the shader flattens the index).
fn grid(n: usize, wg: u32, max_dim: u32) -> (u32, u32) {
    let groups = (n as u64).div_ceil(wg as u64).max(1);
    if groups <= max_dim as u64 {
        (groups as u32, 1)
    } else {
        (max_dim, groups.div_ceil(max_dim as u64) as u32)
    }
}

impl GpuJacobi {
    /// Compiles the shader and creates the pipelines.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let dev = &ctx.device;
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("jacobi.wgsl"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let mut entries = vec![wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }];
        for (b, ro) in [
            (1, true),
            (2, false),
            (3, false),
            (4, false),
            (5, true),
            (6, false),
            (7, false),
        ] {
            entries.push(storage_entry(b, ro));
        }
        let layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("jacobi"),
            entries: &entries,
        });
        let ind_layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("jacobi indirect"),
            entries: &[storage_entry(0, false)],
        });
        let pl = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("jacobi"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        // The finalize entry points also see the indirect arguments (group 1).
        let pl_fin = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("jacobi finalize"),
            bind_group_layouts: &[Some(&layout), Some(&ind_layout)],
            immediate_size: 0,
        });
        let pipe = |entry: &str| {
            let layout = if entry.starts_with("finalize") {
                &pl_fin
            } else {
                &pl
            };
            dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let (contact, body, residual, finalize_check, finalize_last) = (
            pipe("contact_pass"),
            pipe("body_pass"),
            pipe("residual_pass"),
            pipe("finalize_check"),
            pipe("finalize_last"),
        );
        let (apgd_advance, apgd_contact, apgd_body) = (
            pipe("apgd_advance"),
            pipe("apgd_contact_pass"),
            pipe("apgd_body_pass"),
        );
        let params = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: std::mem::size_of::<Params>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let control = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("control"),
            size: std::mem::size_of::<Control>() as u64,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read_control = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read control"),
            size: std::mem::size_of::<Control>() as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let indirect = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("indirect"),
            size: 48,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::INDIRECT
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let indirect_bind = dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("jacobi indirect"),
            layout: &ind_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &indirect,
                    offset: 0,
                    size: std::num::NonZeroU64::new(36),
                }),
            }],
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(format!(
                "creating the Jacobi pipelines: {e}"
            )));
        }
        Ok(GpuJacobi {
            layout,
            indirect,
            indirect_bind,
            contact,
            body,
            apgd_advance,
            apgd_contact,
            apgd_body,
            residual,
            finalize_check,
            finalize_last,
            params,
            control,
            read_control,
            bufs: None,
            timer: PassTimer::new(ctx),
            last_pass_seconds: None,
            recent_iterations: std::collections::VecDeque::new(),
            padded: Vec::new(),
        })
    }

    /// Checks every buffer a problem of this size needs against the limits.
    pub fn check_fits(
        ctx: &GpuContext,
        n_contacts: usize,
        n_bodies: usize,
    ) -> Result<(), GpuError> {
        let limit = ctx
            .limits
            .max_storage_buffer_binding_size
            .min(ctx.limits.max_buffer_size);
        let needs: [(&'static str, u64, usize); 5] = [
            (
                "contact",
                (n_contacts * std::mem::size_of::<PackedContact>()) as u64,
                n_contacts,
            ),
            ("slot", (n_contacts * 2 * SLOT_BYTES) as u64, n_contacts),
            // γ and the body records twice: APGD's iterate and extrapolated
            // point; then the bodies' inertia tensors (shapes).
            ("impulse", (2 * n_contacts * GAMMA_BYTES) as u64, n_contacts),
            (
                "body",
                (BODY_REGIONS * n_bodies * std::mem::size_of::<PackedBody>()) as u64,
                n_bodies,
            ),
            ("offset", ((n_bodies + 1) * 4) as u64, n_bodies),
        ];
        for (what, bytes, count) in needs {
            if bytes > limit {
                return Err(GpuError::TooLarge {
                    what,
                    bytes,
                    limit,
                    count,
                });
            }
        }
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension as u64;
        let groups = (n_contacts.max(n_bodies) as u64).div_ceil(WG as u64);
        if groups > max_dim * max_dim {
            return Err(GpuError::TooLarge {
                what: "dispatch",
                bytes: groups,
                limit: max_dim * max_dim,
                count: n_contacts,
            });
        }
        Ok(())
    }

    fn ensure(&mut self, ctx: &GpuContext, nc: usize, nb: usize) {
        if let Some(b) = &self.bufs {
            if b.cap.0 >= nc && b.cap.1 >= nb {
                return;
            }
        }
        let (oc, ob) = self.bufs.as_ref().map_or((0, 0), |b| b.cap);
        let limit = ctx
            .limits
            .max_storage_buffer_binding_size
            .min(ctx.limits.max_buffer_size);
        // Grow by doubling, but never past what the limits allow.
        let grow = |old: usize, need: usize, bytes_each: usize| -> usize {
            let want = need.max(old.saturating_mul(2)).max(64);
            let max_items = (limit / bytes_each as u64) as usize;
            want.min(max_items).max(need)
        };
        let cc = grow(oc, nc, std::mem::size_of::<PackedContact>());
        let cb = grow(ob, nb, BODY_REGIONS * std::mem::size_of::<PackedBody>());
        let dev = &ctx.device;
        let st = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC;
        let mk = |label: &str, size: usize, usage| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (size.max(16) as u64).next_multiple_of(16),
                usage,
                mapped_at_creation: false,
            })
        };
        let rd = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        let contacts = mk("contacts", cc * std::mem::size_of::<PackedContact>(), st);
        // Two halves: APGD keeps its extrapolated point in the second; then
        // the inertia tensors (shapes).
        let bodies = mk(
            "bodies",
            BODY_REGIONS * cb * std::mem::size_of::<PackedBody>(),
            st,
        );
        let gamma = mk("gamma", 2 * cc * GAMMA_BYTES, st);
        let slots = mk("slots", cc * 2 * SLOT_BYTES, st);
        let offsets = mk("offsets", (cb + 1) * 4, st);
        // One partial per residual workgroup, of a 2-D grid past the per-dimension limit.
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension;
        let (rx, ry) = grid(cc, RWG, max_dim);
        let partials = mk("partials", (rx as usize * ry as usize + 1) * 16, st);
        let read_bodies = mk("read bodies", cb * std::mem::size_of::<PackedBody>(), rd);
        let read_gamma = mk("read gamma", cc * GAMMA_BYTES, rd);
        let bind = dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("jacobi"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.params.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: contacts.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: bodies.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: gamma.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 4,
                    resource: slots.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 5,
                    resource: offsets.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 6,
                    resource: partials.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 7,
                    resource: self.control.as_entire_binding(),
                },
            ],
        });
        self.bufs = Some(Buffers {
            contacts,
            bodies,
            gamma,
            _slots: slots,
            offsets,
            _partials: partials,
            read_bodies,
            read_gamma,
            bind,
            cap: (cc, cb),
        });
    }

    /// The device time of the last solve's iteration passes (its iterations,
    /// checks and final residual, summed over the chunks), from timestamp
    /// queries; `None` when the device offers none.
    pub fn last_pass_seconds(&self) -> Option<f64> {
        self.last_pass_seconds
    }

    /// Solves a packed problem: `gamma` is the warm start (the body records
    /// must hold v_free + M⁻¹Dγ₀) and is overwritten with the result; the
    /// body records get the final velocities.
    pub fn solve(
        &mut self,
        ctx: &GpuContext,
        p: &mut PackedProblem,
        gamma: &mut [[f32; 6]],
        s: &SolverSettings,
    ) -> Result<SolveStats, GpuError> {
        let nc = p.contacts.len();
        let nb = p.bodies.len();
        assert_eq!(gamma.len(), nc);
        if nc == 0 {
            return Ok(SolveStats {
                converged: true,
                ..Default::default()
            });
        }
        Self::check_fits(ctx, nc, nb)?;
        let dev = &ctx.device;
        let scope = dev.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let vscope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        self.ensure(ctx, nc, nb);
        let b = self.bufs.as_ref().expect("buffers");
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension;
        let cgrid = grid(nc, WG, max_dim);
        let bgrid = grid(nb, WG, max_dim);
        let rgrid = grid(nc, RWG, max_dim);
        let check = s.tolerance > 0.0;
        let apgd = s.method == crate::solver::SolverMethod::Apgd;
        let params = Params {
            n_contacts: nc as u32,
            n_bodies: nb as u32,
            omega: s.omega as f32,
            lambda: s.lambda as f32,
            tolerance: s.tolerance as f32,
            check_every: s.check_every.max(1) as u32,
            max_iterations: s.max_iterations as u32,
            n_partials: rgrid.0 * rgrid.1,
            law: match p.law {
                FrictionLaw::Associated => 0,
                FrictionLaw::DeSaxce => 1,
            },
            weighted: crate::solver::jacobi_f32::weighted(s) as u32,
            method: u32::from(apgd),
            tensors: u32::from(!p.inertia.is_empty()),
        };
        let q = &ctx.queue;
        q.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        let control = Control {
            theta: 1.0,
            last_rel: f32::MAX,
            ..Control::default()
        };
        q.write_buffer(&self.control, 0, bytemuck::bytes_of(&control));
        q.write_buffer(&b.contacts, 0, bytemuck::cast_slice(&p.contacts));
        q.write_buffer(&b.bodies, 0, bytemuck::cast_slice(&p.bodies));
        let body_bytes = (nb * std::mem::size_of::<PackedBody>()) as u64;
        let gamma_bytes = (nc * GAMMA_BYTES) as u64;
        if apgd {
            // The extrapolated point starts at the warm start.
            q.write_buffer(&b.bodies, body_bytes, bytemuck::cast_slice(&p.bodies));
        }
        if !p.inertia.is_empty() {
            assert_eq!(p.inertia.len(), nb, "one inertia record per body");
            q.write_buffer(&b.bodies, 2 * body_bytes, bytemuck::cast_slice(&p.inertia));
        }
        self.padded.clear();
        self.padded.extend(
            gamma
                .iter()
                .map(|g| [g[0], g[1], g[2], g[3], g[4], g[5], 0.0, 0.0]),
        );
        q.write_buffer(&b.gamma, 0, bytemuck::cast_slice(&self.padded));
        if apgd {
            q.write_buffer(&b.gamma, gamma_bytes, bytemuck::cast_slice(&self.padded));
        }
        q.write_buffer(&b.offsets, 0, bytemuck::cast_slice(&p.offsets));
        let args: [u32; 12] = [
            cgrid.0, cgrid.1, 1, bgrid.0, bgrid.1, 1, rgrid.0, rgrid.1, 1, 0, 0, 0,
        ];
        q.write_buffer(&self.indirect, 0, bytemuck::cast_slice(&args));

        // The iterations in chunks ending at a residual check: each chunk is
        // one submit, after which only the 48-byte control record is read; once
        // it says done, the rest is not encoded at all (the zeroed indirect
        // sizes would make it launch nothing, but each empty dispatch still
        // costs the driver its overhead). The first chunk ends at the first
        // check at or after the last solve's count (a warm start needs about as
        // many) but at most 4× the recent median (one capped solve does not
        // make the next pay the whole cap), later ones double. The GPU runs the same dispatches on the
        // same buffers as in one pass, so the result does not depend on the
        // chunking.
        let every = params.check_every as usize;
        let max = s.max_iterations;
        let mut len = if check {
            first_chunk_estimate(&self.recent_iterations)
                .div_ceil(every)
                .max(1)
                * every
        } else {
            max
        };
        let mut start = 0;
        let mut pass_seconds = self.timer.as_ref().map(|_| 0.0);
        let (ctl, copied) = loop {
            let end = (start + len).min(max);
            let last = end == max;
            let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("jacobi"),
            });
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("jacobi iterations"),
                    timestamp_writes: self.timer.as_ref().map(|t| {
                        wgpu::ComputePassTimestampWrites {
                            query_set: &t.set,
                            beginning_of_pass_write_index: Some(0),
                            end_of_pass_write_index: Some(1),
                        }
                    }),
                });
                pass.set_bind_group(0, &b.bind, &[]);
                pass.set_bind_group(1, &self.indirect_bind, &[]);
                // Sizes come from the indirect buffer only when a check can
                // zero them.
                let dispatch = |pass: &mut wgpu::ComputePass, slot: u64, g: (u32, u32)| {
                    if check {
                        pass.dispatch_workgroups_indirect(&self.indirect, slot * 12);
                    } else {
                        pass.dispatch_workgroups(g.0, g.1, 1);
                    }
                };
                let residual_check = |pass: &mut wgpu::ComputePass| {
                    pass.set_pipeline(&self.residual);
                    dispatch(pass, 2, rgrid);
                    pass.set_pipeline(&self.finalize_check);
                    pass.dispatch_workgroups(1, 1, 1);
                };
                for it in start..end {
                    // The check at a chunk's start closed the chunk before.
                    if check && it % every == 0 && (it == 0 || it > start) {
                        residual_check(&mut pass);
                    }
                    if apgd {
                        pass.set_pipeline(&self.apgd_advance);
                        pass.dispatch_workgroups(1, 1, 1);
                        pass.set_pipeline(&self.apgd_contact);
                        dispatch(&mut pass, 0, cgrid);
                        pass.set_pipeline(&self.apgd_body);
                        dispatch(&mut pass, 1, bgrid);
                    } else {
                        pass.set_pipeline(&self.contact);
                        dispatch(&mut pass, 0, cgrid);
                        pass.set_pipeline(&self.body);
                        dispatch(&mut pass, 1, bgrid);
                    }
                }
                if last {
                    // The final residual always runs in full (it reports
                    // the result).
                    pass.set_pipeline(&self.residual);
                    pass.dispatch_workgroups(rgrid.0, rgrid.1, 1);
                    pass.set_pipeline(&self.finalize_last);
                    pass.dispatch_workgroups(1, 1, 1);
                } else {
                    residual_check(&mut pass);
                }
            }
            if last {
                enc.copy_buffer_to_buffer(&b.bodies, 0, &b.read_bodies, 0, body_bytes);
                enc.copy_buffer_to_buffer(&b.gamma, 0, &b.read_gamma, 0, gamma_bytes);
            }
            let ctl_bytes = std::mem::size_of::<Control>() as u64;
            enc.copy_buffer_to_buffer(&self.control, 0, &self.read_control, 0, ctl_bytes);
            let mut reads = vec![(&self.read_control, ctl_bytes)];
            if let Some(t) = &self.timer {
                enc.resolve_query_set(&t.set, 0..2, &t.resolve, 0);
                enc.copy_buffer_to_buffer(&t.resolve, 0, &t.read, 0, 16);
                reads.push((&t.read, 16));
            }
            q.submit([enc.finish()]);
            let data = read_back(dev, &reads)?;
            let ctl: Control = *bytemuck::from_bytes(&data[0]);
            if let (Some(t), Some(total)) = (&self.timer, pass_seconds.as_mut()) {
                let ticks: [u64; 2] = *bytemuck::from_bytes(&data[1]);
                *total += ticks[1].saturating_sub(ticks[0]) as f64 * t.period * 1e-9;
            }
            if last || ctl.done != 0 {
                break (ctl, last);
            }
            start = end;
            len *= 2;
        };
        if !copied {
            // Stopped at a check before the last chunk: the state was not
            // copied with the control record.
            let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("jacobi readback"),
            });
            enc.copy_buffer_to_buffer(&b.bodies, 0, &b.read_bodies, 0, body_bytes);
            enc.copy_buffer_to_buffer(&b.gamma, 0, &b.read_gamma, 0, gamma_bytes);
            q.submit([enc.finish()]);
        }
        let data = read_back(
            dev,
            &[(&b.read_bodies, body_bytes), (&b.read_gamma, gamma_bytes)],
        )?;
        if let Some(e) = pollster::block_on(vscope.pop()) {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        p.bodies.copy_from_slice(bytemuck::cast_slice(&data[0]));
        let padded: &[[f32; 8]] = bytemuck::cast_slice(&data[1]);
        for (g, q) in gamma.iter_mut().zip(padded) {
            g.copy_from_slice(&q[..6]);
        }
        self.last_pass_seconds = pass_seconds;
        if self.recent_iterations.len() == RECENT_SOLVES {
            self.recent_iterations.pop_front();
        }
        self.recent_iterations.push_back(ctl.iterations as usize);
        Ok(SolveStats {
            iterations: ctl.iterations as usize,
            residual_abs: ctl.residual_abs as f64,
            residual_rel: ctl.residual_rel as f64,
            converged: ctl.converged != 0,
            fallback_iterations: None,
            timed_out: false,
        })
    }
}

/// Maps each (buffer, bytes) for reading, waits for the device, and returns
/// copies of their first `bytes` bytes (the buffers are unmapped again).
fn read_back(dev: &wgpu::Device, reads: &[(&wgpu::Buffer, u64)]) -> Result<Vec<Vec<u8>>, GpuError> {
    for (buf, bytes) in reads {
        buf.slice(..*bytes).map_async(wgpu::MapMode::Read, |r| {
            if let Err(e) = r {
                log::error!("GPU readback failed: {e}");
            }
        });
    }
    dev.poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| GpuError::Wgpu(format!("waiting for the GPU: {e}")))?;
    let mut out = Vec::with_capacity(reads.len());
    for (buf, bytes) in reads {
        let data = buf
            .slice(..*bytes)
            .get_mapped_range()
            .map_err(|e| GpuError::Wgpu(format!("reading back: {e:?}")))?
            .to_vec();
        buf.unmap();
        out.push(data);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::first_chunk_estimate;

    #[test]
    fn one_capped_solve_does_not_make_the_next_first_chunk_the_whole_cap() {
        let recent = [30, 40, 35, 50, 1000].into_iter().collect();
        let e = first_chunk_estimate(&recent);
        assert_eq!(e, 4 * 40, "estimate {e}, expected 4× the median 40");
        let recent = [1000, 1000, 1000, 40].into_iter().collect();
        assert_eq!(
            first_chunk_estimate(&recent),
            40,
            "the last count when below the bound"
        );
        assert_eq!(first_chunk_estimate(&Default::default()), 0);
    }
}
