//! The GPU solvers, projected Jacobi and APGD (pair with `shaders/jacobi.wgsl`;
//! their CPU mirror is [`crate::solver::jacobi_f32`]), for one world or a
//! batch of worlds in one solve.
//!
//! [`GpuJacobi::solve_resident`] solves a problem the device stages left
//! on the device, without it crossing the host ([`DeviceProblem`]).
//!
//! Owns the pipelines and the buffers, which grow with the problem (by
//! doubling, so steady simulations stop reallocating).
//! [`GpuJacobi::solve_batch`] does one upload of every world's records
//! ([`super::layout`]), the iterations in a few compute passes that each end
//! at a residual check (the worlds' control records read after each), and
//! one readback of the state (see the [module docs](super));
//! [`GpuJacobi::solve`] is a batch of one. Dispatches per iteration and
//! round trips per solve do not grow with the number of worlds: every
//! dispatch covers all worlds, and a world that is done returns at once.
//! It counts what it does ([`GpuCounters`]).

use std::time::Instant;

mod chunks;
mod records;
mod resident;

pub use records::{BatchRecord, Control, Params, WorldRecord};
pub use resident::DeviceProblem;

use super::layout::{BatchLayout, RWG, WG};
use super::pipelines::within_scopes;
use super::profile::GpuCounters;
use super::{GpuContext, GpuError};
use crate::material::FrictionLaw;
use crate::solver::packed::{PackedBody, PackedContact, PackedInertia, PackedProblem};
use crate::solver::{SolveStats, SolverMethod, SolverSettings};

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
pub const SHADER: &str = include_str!("../../../shaders/jacobi.wgsl");

/// Bytes of one contact's γ in the `gamma` buffer: two vec4 (WGSL
/// `load_gamma`), the 6 components and 2 of padding.
pub const GAMMA_BYTES: usize = 32;
/// Bytes of one slot (one contact end's velocity change): two vec4.
pub const SLOT_BYTES: usize = 32;
/// Regions of body-sized records in the `bodies` buffer: the iterate's
/// records, APGD's extrapolated point's, the inertia tensors
/// ([`PackedInertia`], the same size as a [`PackedBody`]), and the free
/// velocities v_free ([`PackedProblem::free`]) from which every body pass
/// rebuilds the velocities.
pub const BODY_REGIONS: usize = 4;
const _: () = assert!(
    std::mem::size_of::<PackedInertia>() == std::mem::size_of::<PackedBody>(),
    "an inertia record fills one body-record place"
);

/// One world of a batch as the caller hands it to [`GpuJacobi::solve_batch`].
pub struct BatchEntry<'a> {
    /// The packed problem; its body records get the final velocities.
    pub problem: &'a mut PackedProblem,
    /// The warm start, overwritten with the result.
    pub gamma: &'a mut [[f32; 6]],
    /// The world's solver settings.
    pub settings: &'a SolverSettings,
}

struct Buffers {
    contacts: wgpu::Buffer,
    bodies: wgpu::Buffer,
    gamma: wgpu::Buffer,
    _slots: wgpu::Buffer,
    offsets: wgpu::Buffer,
    _partials: wgpu::Buffer,
    control: wgpu::Buffer,
    worlds: wgpu::Buffer,
    groups: wgpu::Buffer,
    read_bodies: wgpu::Buffer,
    read_gamma: wgpu::Buffer,
    read_control: wgpu::Buffer,
    bind: wgpu::BindGroup,
    /// Capacity in contacts, bodies, slots and worlds.
    cap: Capacity,
}

/// What the buffers hold room for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Capacity {
    contacts: usize,
    bodies: usize,
    slots: usize,
    worlds: usize,
}

impl Capacity {
    fn holds(&self, need: &Capacity) -> bool {
        self.contacts >= need.contacts
            && self.bodies >= need.bodies
            && self.slots >= need.slots
            && self.worlds >= need.worlds
    }
}

/// The GPU solver: pipelines plus growable buffers.
pub struct GpuJacobi {
    layout: wgpu::BindGroupLayout,
    indirect: wgpu::Buffer,
    indirect_bind: wgpu::BindGroup,
    contact: wgpu::ComputePipeline,
    body: wgpu::ComputePipeline,
    apgd_contact: wgpu::ComputePipeline,
    apgd_body: wgpu::ComputePipeline,
    residual: wgpu::ComputePipeline,
    finalize: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    batch: wgpu::Buffer,
    bufs: Option<Buffers>,
    timer: Option<PassTimer>,
    last_pass_seconds: Option<f64>,
    /// Iterations of the last few solves (the most of a batch's worlds),
    /// oldest first: where the next one's first chunk ends
    /// ([`first_chunk_estimate`]).
    recent_iterations: std::collections::VecDeque<usize>,
    /// Records staged for upload, kept between solves.
    padded: Vec<[f32; 8]>,
    /// What the solves did, summed.
    counters: GpuCounters,
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

/// World range `r`'s record: its ranges, its settings `s`, its contact
/// law and whether its bodies carry inertia tensors.
fn world_record(
    r: &super::layout::WorldRange,
    s: &SolverSettings,
    law: FrictionLaw,
    tensors: bool,
) -> WorldRecord {
    let (p0, p1) = r.partials();
    WorldRecord {
        contact_start: r.contact_start as u32,
        contact_end: r.contact_end() as u32,
        body_start: r.body_start as u32,
        body_end: r.body_end() as u32,
        partial_start: p0 as u32,
        partial_end: p1 as u32,
        max_iterations: s.max_iterations as u32,
        law: match law {
            FrictionLaw::Associated => 0,
            FrictionLaw::DeSaxce => 1,
        },
        weighted: crate::solver::jacobi_f32::weighted(s) as u32,
        tensors: u32::from(tensors),
        omega: s.omega as f32,
        lambda: s.lambda as f32,
        tolerance: s.tolerance as f32,
        ..WorldRecord::default()
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
            (8, true),
            (9, true),
            (10, false),
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
        // `finalize` also sees the indirect arguments (group 1).
        let pl_fin = dev.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("jacobi finalize"),
            bind_group_layouts: &[Some(&layout), Some(&ind_layout)],
            immediate_size: 0,
        });
        let pipe = |entry: &str| {
            let layout = if entry == "finalize" { &pl_fin } else { &pl };
            dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let (contact, body, residual, finalize) = (
            pipe("contact_pass"),
            pipe("body_pass"),
            pipe("residual_pass"),
            pipe("finalize"),
        );
        let (apgd_contact, apgd_body) = (pipe("apgd_contact_pass"), pipe("apgd_body_pass"));
        let params = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: std::mem::size_of::<Params>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let batch = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("batch"),
            size: std::mem::size_of::<BatchRecord>() as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
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
            apgd_contact,
            apgd_body,
            residual,
            finalize,
            params,
            batch,
            bufs: None,
            timer: PassTimer::new(ctx),
            last_pass_seconds: None,
            recent_iterations: std::collections::VecDeque::new(),
            padded: Vec::new(),
            counters: GpuCounters::default(),
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
            // point; then the bodies' inertia tensors (shapes) and free
            // velocities.
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

    fn ensure(&mut self, ctx: &GpuContext, need: Capacity) {
        if let Some(b) = &self.bufs {
            if b.cap.holds(&need) {
                return;
            }
        }
        let old = self.bufs.as_ref().map_or(Capacity::default(), |b| b.cap);
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
        let cap = Capacity {
            contacts: grow(
                old.contacts,
                need.contacts,
                std::mem::size_of::<PackedContact>(),
            ),
            bodies: grow(
                old.bodies,
                need.bodies,
                BODY_REGIONS * std::mem::size_of::<PackedBody>(),
            ),
            slots: grow(old.slots, need.slots, SLOT_BYTES),
            worlds: grow(old.worlds, need.worlds, std::mem::size_of::<WorldRecord>()),
        };
        let (cc, cb) = (cap.contacts, cap.bodies);
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
        // the inertia tensors (shapes), then the free velocities.
        let bodies = mk(
            "bodies",
            BODY_REGIONS * cb * std::mem::size_of::<PackedBody>(),
            st,
        );
        let gamma = mk("gamma", 2 * cc * GAMMA_BYTES, st);
        let slots = mk("slots", cap.slots * SLOT_BYTES, st);
        let offsets = mk("offsets", (cb + 1) * 4, st);
        // One partial per residual workgroup, of a 2-D grid past the per-dimension limit.
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension;
        let (rx, ry) = grid(cc, RWG, max_dim);
        let partials = mk("partials", (rx as usize * ry as usize + 1) * 16, st);
        let control_bytes = cap.worlds * std::mem::size_of::<Control>();
        let control = mk("control", control_bytes, st);
        let worlds = mk(
            "worlds",
            cap.worlds * std::mem::size_of::<WorldRecord>(),
            st,
        );
        let groups = mk("groups", (cc + cb).div_ceil(WG as usize) * 4 + 4, st);
        let read_bodies = mk("read bodies", cb * std::mem::size_of::<PackedBody>(), rd);
        let read_gamma = mk("read gamma", cc * GAMMA_BYTES, rd);
        let read_control = mk("read control", control_bytes, rd);
        let whole = [
            &self.params,
            &contacts,
            &bodies,
            &gamma,
            &slots,
            &offsets,
            &partials,
            &control,
            &worlds,
            &groups,
            &self.batch,
        ];
        let entries: Vec<_> = whole
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .collect();
        let bind = dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("jacobi"),
            layout: &self.layout,
            entries: &entries,
        });
        self.bufs = Some(Buffers {
            contacts,
            bodies,
            gamma,
            _slots: slots,
            offsets,
            _partials: partials,
            control,
            worlds,
            groups,
            read_bodies,
            read_gamma,
            read_control,
            bind,
            cap,
        });
    }

    /// Writes a solve's settings: the uniform parameters, the worlds'
    /// records, the workgroups' worlds, fresh control and batch records
    /// and the indirect sizes. Returns the bytes written.
    fn write_settings(
        &self,
        ctx: &GpuContext,
        layout: &BatchLayout,
        records: &[WorldRecord],
        every: usize,
        apgd: bool,
    ) -> u64 {
        let b = self.bufs.as_ref().expect("buffers");
        let (nc, nb) = (layout.contacts, layout.bodies);
        let mut up = 0u64;
        let mut write = |buf: &wgpu::Buffer, data: &[u8]| {
            ctx.queue.write_buffer(buf, 0, data);
            up += data.len() as u64;
        };
        let params = Params {
            n_contacts: nc as u32,
            n_bodies: nb as u32,
            n_worlds: records.len() as u32,
            check_every: every as u32,
            method: u32::from(apgd),
            contact_groups: layout.contact_groups() as u32,
            ..Params::default()
        };
        write(&self.params, bytemuck::bytes_of(&params));
        write(&b.worlds, bytemuck::cast_slice(records));
        write(&b.groups, bytemuck::cast_slice(&layout.groups()));
        let control = vec![
            Control {
                theta0: 1.0,
                last_rel: f32::MAX,
                ..Control::default()
            };
            records.len()
        ];
        write(&b.control, bytemuck::cast_slice(&control));
        let batch = BatchRecord {
            clock: 0,
            remaining: records.len() as u32,
            ..BatchRecord::default()
        };
        write(&self.batch, bytemuck::bytes_of(&batch));
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension;
        let (cgrid, bgrid, rgrid) = (
            grid(nc, WG, max_dim),
            grid(nb, WG, max_dim),
            grid(nc, RWG, max_dim),
        );
        let args: [u32; 12] = [
            cgrid.0, cgrid.1, 1, bgrid.0, bgrid.1, 1, rgrid.0, rgrid.1, 1, 0, 0, 0,
        ];
        write(&self.indirect, bytemuck::cast_slice(&args));
        up
    }

    /// The device time of the last solve's iteration passes (its iterations,
    /// checks and final residual, summed over the chunks), from timestamp
    /// queries; `None` when the device offers none.
    pub fn last_pass_seconds(&self) -> Option<f64> {
        self.last_pass_seconds
    }

    /// What the solves so far did: counts, bytes and host times, summed.
    pub fn counters(&self) -> GpuCounters {
        self.counters
    }

    /// Solves a packed problem: `gamma` is the warm start (the body records
    /// must hold v_free + M⁻¹Dγ₀) and is overwritten with the result; the
    /// body records get the final velocities. A batch of one world.
    pub fn solve(
        &mut self,
        ctx: &GpuContext,
        p: &mut PackedProblem,
        gamma: &mut [[f32; 6]],
        s: &SolverSettings,
    ) -> Result<SolveStats, GpuError> {
        let mut one = [BatchEntry {
            problem: p,
            gamma,
            settings: s,
        }];
        Ok(self.solve_batch(ctx, &mut one)?.remove(0))
    }

    /// Solves the worlds of a batch together: each world as [`Self::solve`]
    /// would alone, to the same bits (its own tolerance, iteration cap,
    /// step sizes and law; it stops changing once done), in one upload, one
    /// loop of dispatches over all worlds and one readback. The worlds must
    /// share the method and the interval between residual checks.
    pub fn solve_batch(
        &mut self,
        ctx: &GpuContext,
        entries: &mut [BatchEntry<'_>],
    ) -> Result<Vec<SolveStats>, GpuError> {
        let mut stats = vec![
            SolveStats {
                converged: true,
                ..Default::default()
            };
            entries.len()
        ];
        // Worlds without contacts have nothing to solve.
        let live: Vec<usize> = (0..entries.len())
            .filter(|&w| !entries[w].problem.contacts.is_empty())
            .collect();
        let Some(&first) = live.first() else {
            return Ok(stats);
        };
        let s0 = entries[first].settings;
        let apgd = s0.method == SolverMethod::Apgd;
        let every = s0.check_every.max(1);
        for &w in &live {
            let e = &entries[w];
            assert_eq!(e.gamma.len(), e.problem.contacts.len());
            let s = e.settings;
            if (s.method == SolverMethod::Apgd) != apgd || s.check_every.max(1) != every {
                return Err(GpuError::Batch(format!(
                    "world {w} of the batch runs {} with checks every {} iterations, world {first} {} every {}: one batch runs one method at one check interval",
                    s.method.name(),
                    s.check_every.max(1),
                    s0.method.name(),
                    every
                )));
            }
        }
        let max_worlds = ctx.limits.max_compute_workgroups_per_dimension as usize;
        if live.len() > max_worlds {
            return Err(GpuError::Batch(format!(
                "{} worlds with contacts, but the adapter runs at most {max_worlds} in one batch (one workgroup each for the residual)",
                live.len()
            )));
        }
        let layout = BatchLayout::new(live.iter().map(|&w| {
            let p = &entries[w].problem;
            (
                p.contacts.len(),
                p.bodies.len(),
                *p.offsets.last().unwrap_or(&0) as usize,
            )
        }));
        let (nc, nb) = (layout.contacts, layout.bodies);
        Self::check_fits(ctx, nc, nb)?;
        let (ctl, data) = within_scopes(ctx, "GPU solve", || {
            self.ensure(
                ctx,
                Capacity {
                    contacts: nc,
                    bodies: nb,
                    slots: layout.slots,
                    worlds: live.len(),
                },
            );
            let records: Vec<WorldRecord> = live
                .iter()
                .zip(&layout.worlds)
                .map(|(&w, r)| {
                    let e = &entries[w];
                    world_record(r, e.settings, e.problem.law, !e.problem.inertia.is_empty())
                })
                .collect();
            let t_up = Instant::now();
            let settings_bytes = self.write_settings(ctx, &layout, &records, every, apgd);
            let counters = &mut self.counters;
            let b = self.bufs.as_ref().expect("buffers");
            let check = live.iter().any(|&w| entries[w].settings.tolerance > 0.0);
            let caps: Vec<usize> = live
                .iter()
                .map(|&w| entries[w].settings.max_iterations)
                .collect();
            let tensors = live.iter().any(|&w| !entries[w].problem.inertia.is_empty());

            // Upload: the records of every world at its place (module docs of
            // `layout`), the worlds' settings, fresh control records.
            let mut up = settings_bytes;
            let q = &ctx.queue;
            let mut write = |buf: &wgpu::Buffer, at: u64, data: &[u8]| {
                q.write_buffer(buf, at, data);
                up += data.len() as u64;
            };
            let body_size = std::mem::size_of::<PackedBody>() as u64;
            let problems: Vec<&PackedProblem> =
                live.iter().map(|&w| &*entries[w].problem).collect();
            for (i, (r, p)) in layout.worlds.iter().zip(&problems).enumerate() {
                let c_at = (r.contact_start * std::mem::size_of::<PackedContact>()) as u64;
                if r.body_start == 0 && r.slot_start == 0 {
                    write(&b.contacts, c_at, bytemuck::cast_slice(&p.contacts));
                } else {
                    let shifted = layout.shifted_contacts(i, p);
                    write(&b.contacts, c_at, bytemuck::cast_slice(&shifted));
                }
                let b_at = r.body_start as u64 * body_size;
                write(&b.bodies, b_at, bytemuck::cast_slice(&p.bodies));
                assert_eq!(p.free.len(), p.bodies.len(), "one free record per body");
                write(
                    &b.bodies,
                    3 * nb as u64 * body_size + b_at,
                    bytemuck::cast_slice(&p.free),
                );
                if apgd {
                    // The extrapolated point starts at the warm start.
                    write(
                        &b.bodies,
                        nb as u64 * body_size + b_at,
                        bytemuck::cast_slice(&p.bodies),
                    );
                }
                if tensors {
                    let at = 2 * nb as u64 * body_size + b_at;
                    if p.inertia.is_empty() {
                        // A world of spheres beside worlds of shapes: its
                        // records are not read (its `tensors` is 0).
                    } else {
                        assert_eq!(
                            p.inertia.len(),
                            p.bodies.len(),
                            "one inertia record per body"
                        );
                        write(&b.bodies, at, bytemuck::cast_slice(&p.inertia));
                    }
                }
            }
            for (&w, r) in live.iter().zip(&layout.worlds) {
                self.padded.clear();
                self.padded.extend(
                    entries[w]
                        .gamma
                        .iter()
                        .map(|g| [g[0], g[1], g[2], g[3], g[4], g[5], 0.0, 0.0]),
                );
                let at = (r.contact_start * GAMMA_BYTES) as u64;
                write(&b.gamma, at, bytemuck::cast_slice(&self.padded));
                if apgd {
                    let second = (nc * GAMMA_BYTES) as u64 + at;
                    write(&b.gamma, second, bytemuck::cast_slice(&self.padded));
                }
            }
            write(
                &b.offsets,
                0,
                bytemuck::cast_slice(&layout.offsets(&problems)),
            );
            counters.upload_bytes += up;
            counters.upload_seconds += t_up.elapsed().as_secs_f64();

            let plan = chunks::Plan {
                worlds: live.len(),
                nc,
                nb,
                check,
                every,
                caps,
                apgd,
            };
            self.iterate(ctx, plan, true)
        })?;
        let all_bodies: &[PackedBody] = bytemuck::cast_slice(&data[0]);
        let padded: &[[f32; 8]] = bytemuck::cast_slice(&data[1]);
        let counters = &mut self.counters;
        let mut most = 0;
        for ((&w, r), c) in live.iter().zip(&layout.worlds).zip(&ctl) {
            let e = &mut entries[w];
            e.problem
                .bodies
                .copy_from_slice(&all_bodies[r.body_start..r.body_end()]);
            for (g, q) in e.gamma.iter_mut().zip(&padded[r.contact_start..]) {
                g.copy_from_slice(&q[..6]);
            }
            stats[w] = c.stats();
            most = most.max(c.iterations as usize);
            counters.iterations += c.iterations as u64;
        }
        counters.solves += 1;
        self.remember(most);
        Ok(stats)
    }

    /// Keeps a solve's iteration count (the most of its worlds') for the
    /// next solve's first chunk.
    fn remember(&mut self, iterations: usize) {
        if self.recent_iterations.len() == RECENT_SOLVES {
            self.recent_iterations.pop_front();
        }
        self.recent_iterations.push_back(iterations);
    }
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
