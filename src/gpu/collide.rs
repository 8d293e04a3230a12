//! Contact detection on the device (pairs with `shaders/collide.wgsl`):
//! spheres against spheres and against the analytic boundaries (planes,
//! boxes, cylinders, plates), the first stage of a step that stays on the
//! device. Its reference is the CPU's [`crate::collision::detect`]; the
//! tests (`tests/gpu_equivalence/contacts.rs`) hold the two lists equal on
//! the same positions.
//!
//! # The grid
//!
//! Space is cut into cubic cells of edge L no shorter than the largest
//! interaction distance R = 2 r_max + envelope, so every pair within reach
//! lies in the same or an adjacent cell. A cell (cx, cy, cz) =
//! ⌊x / L⌋ is hashed to one of B buckets (B a power of two, at least twice
//! the spheres); the spheres are counted per bucket (integer atomics),
//! the counts scanned into bucket starts ([`super::scan`]) and the spheres
//! scattered into their buckets. A sphere's neighbours are the spheres of
//! the 27 buckets of its neighbour cells whose own cell is that neighbour
//! cell (a bucket may hold other cells too), then tested by distance.
//!
//! **The cell edge in f32.** The device computes ĉ = fl(x · fl(1/L)) =
//! (x / L)(1 + δ), |δ| ≤ 2u (u = 2⁻²⁴). For two centres accepted by the f32
//! distance test (true distance below R(1 + 4u)), ĉ₁ − ĉ₂ ≤ R(1 + 4u)/L +
//! 4uX/L, X the largest |coordinate|; the floors differ by at most one
//! (the pair is in adjacent cells) when that is below one, that is when
//! L > R(1 + 4u) + 4uX. [`cell_edge`] takes L = R + 8u(R + X).
//!
//! # The list
//!
//! Per sphere the `count` pass counts its pairs (partners j > i) and its
//! boundary contacts; one scan of the 2n counts — every sphere's pairs,
//! then every sphere's boundary contacts — gives each sphere its two
//! ranges, and `write_contacts` fills them: pairs sorted by partner,
//! boundary contacts in boundary then surface order. That is ascending
//! pair key ([`crate::collision::pair_key`], [`crate::collision::wall_key`]),
//! the order of the CPU's list, and independent of the order the atomics
//! gave places in a bucket: the same bits on every run.
//!
//! **No contact is dropped.** The list has a capacity; a sphere writes its
//! ranges only where they end within it, and the host reads the total.
//! When the total is larger the list grows to hold it and `write_contacts`
//! runs again ([`DeviceContacts::rewrites`]); a list larger than the
//! adapter's per-binding limit is refused with [`GpuError::TooLarge`].
//! Spheres that sit inside each other en masse (more neighbours than the
//! crowding bound of [`crate::collision`]) stop detection with
//! [`Crowded`], naming the smallest such sphere, as on the CPU.
//!
//! Shapes other than spheres and mesh boundaries are not handled here
//! ([`CollideError::Unsupported`]): they keep the CPU's detection.

use std::time::Instant;

use glam::DVec3;

use super::pipelines::{bind_whole, compute_pipelines, storage_sized, within_scopes};
use super::profile::GpuCounters;
use super::scan::{Scan, ScanPlan};
use super::{GpuContext, GpuError};
use crate::bodies::Bodies;
use crate::boundary::{Boundary, Caps, Shape};
use crate::collision::{ContactGeom, Crowded, NO_BODY, NO_WALL};

/// The WGSL source: the shared records (`shaders/records.wgsl`), then
/// the stage's own.
pub const SHADER: &str = concat!(
    include_str!("../../shaders/records.wgsl"),
    include_str!("../../shaders/collide.wgsl")
);

/// Threads per workgroup (WGSL `WG`).
pub const WG: u32 = 256;

/// Surface kinds (WGSL `FACE`, `CYLINDER`, `PLATE`).
pub mod kind {
    /// A planar face with the region where it applies.
    pub const FACE: u32 = 0;
    /// A cylinder's wall, caps and rims.
    pub const CYLINDER: u32 = 1;
    /// A plate's face and edges.
    pub const PLATE: u32 = 2;
}

/// The passes' uniform record (WGSL `CollideParams`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CollideParams {
    /// Spheres.
    pub bodies: u32,
    /// Surface records.
    pub surfaces: u32,
    /// Buckets − 1.
    pub mask: u32,
    /// Contact records the list holds.
    pub capacity: u32,
    /// 1 / cell edge (1/m).
    pub inv_cell: f32,
    /// Collision envelope (m).
    pub envelope: f32,
    /// Largest radius (m).
    pub r_max: f32,
    /// Smallest radius (m).
    pub r_min: f32,
    /// Workgroups per row of the dispatch grid.
    pub row: u32,
    /// Padding.
    pub _pad0: u32,
    /// Padding.
    pub _pad1: u32,
    /// Padding.
    pub _pad2: u32,
}

/// One boundary surface as the device reads it (WGSL `Surface`; the
/// fields' meaning per [`kind`] in the shader).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SurfaceRecord {
    /// [`kind`].
    pub kind: u32,
    /// The boundary's index in the scene.
    pub boundary: u32,
    /// The face's id within its boundary (faces only).
    pub id: u32,
    /// A cylinder's caps: 0 open, 1 bottom, 2 both.
    pub caps: u32,
    /// Point or origin; w: a cylinder's radius, a plate's half x.
    pub p: [f32; 4],
    /// Normal or axis; w: a cylinder's half length, a plate's half y.
    pub n: [f32; 4],
    /// Lower corner of a face's region.
    pub lo: [f32; 4],
    /// Upper corner of a face's region.
    pub hi: [f32; 4],
}

/// One contact found on the device (WGSL `Contact`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DeviceContact {
    /// Sphere A.
    pub a: u32,
    /// Sphere B, or [`NO_BODY`] for a boundary.
    pub b: u32,
    /// Low 32 bits of the pair key.
    pub key_lo: u32,
    /// High 32 bits of the pair key.
    pub key_hi: u32,
    /// Unit normal from A toward B.
    pub normal: [f32; 3],
    /// Signed gap (m).
    pub gap: f32,
    /// Contact point: the middle of the gap.
    pub point: [f32; 3],
    /// The boundary's index, or [`NO_WALL`].
    pub wall: u32,
}

impl DeviceContact {
    /// The pair key ([`crate::collision::pair_key`], [`crate::collision::wall_key`]).
    pub fn key(&self) -> u64 {
        (u64::from(self.key_hi) << 32) | u64::from(self.key_lo)
    }

    /// The contact as the CPU's stages take it: end B's material, and a
    /// boundary's surface velocity and spin at simulated time `time`.
    pub fn geom(&self, bodies: &Bodies, boundaries: &[Boundary], time: f64) -> ContactGeom {
        let v = |a: [f32; 3]| DVec3::new(a[0].into(), a[1].into(), a[2].into());
        let point = v(self.point);
        let (material_b, wall_velocity, wall_omega) = if self.b == NO_BODY {
            let w = &boundaries[self.wall as usize];
            (
                w.material,
                w.surface_velocity(point, time),
                w.motion_at(time).1,
            )
        } else {
            (bodies.material[self.b as usize], DVec3::ZERO, DVec3::ZERO)
        };
        ContactGeom {
            a: self.a,
            b: self.b,
            key: self.key(),
            normal: v(self.normal),
            point,
            gap: self.gap.into(),
            material_b,
            wall_velocity,
            wall_omega,
            wall: if self.b == NO_BODY {
                self.wall
            } else {
                NO_WALL
            },
        }
    }
}

/// What keeps a scene off device detection, or stops it.
#[derive(Debug, thiserror::Error)]
pub enum CollideError {
    /// The device failed or the list does not fit it.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// Spheres inside each other en masse (as [`crate::collision::detect`]).
    #[error(transparent)]
    Crowded(#[from] Crowded),
    /// A body or boundary the device does not detect (shapes, meshes).
    #[error("device contact detection handles spheres and analytic boundaries only: {0}")]
    Unsupported(String),
}

/// The cell edge L for spheres of largest radius `r_max`, the envelope and
/// centres within `x_max` of the origin in every coordinate: R + 8u(R + X)
/// with R = 2 r_max + envelope (module docs, "The cell edge in f32").
pub fn cell_edge(r_max: f64, envelope: f64, x_max: f64) -> f64 {
    let u = f64::from(f32::EPSILON) / 2.0;
    let reach = 2.0 * r_max + envelope.max(0.0);
    reach + 8.0 * u * (reach + x_max)
}

/// f32 of a finite value, ±`f32::MAX` for ±∞ (a face's open side).
fn f32_of(x: f64) -> f32 {
    if x == f64::INFINITY {
        f32::MAX
    } else if x == f64::NEG_INFINITY {
        -f32::MAX
    } else {
        x as f32
    }
}

fn f4(v: DVec3, w: f64) -> [f32; 4] {
    [f32_of(v.x), f32_of(v.y), f32_of(v.z), f32_of(w)]
}

/// The surface records of `boundaries` at their current poses, in the
/// order the CPU visits them (boundary, then face id). Errors:
/// [`CollideError::Unsupported`] for a mesh.
pub fn surface_records(boundaries: &[Boundary]) -> Result<Vec<SurfaceRecord>, CollideError> {
    let mut out = Vec::new();
    for (bi, b) in boundaries.iter().enumerate() {
        let boundary = bi as u32;
        match &b.shape {
            Shape::Plane { .. } | Shape::BoxContainer { .. } => {
                for (id, f) in b.faces() {
                    let (lo, hi) = f.extent.unwrap_or((DVec3::NEG_INFINITY, DVec3::INFINITY));
                    out.push(SurfaceRecord {
                        kind: kind::FACE,
                        boundary,
                        id,
                        caps: 0,
                        p: f4(f.point, 0.0),
                        n: f4(f.normal, 0.0),
                        lo: f4(lo, 0.0),
                        hi: f4(hi, 0.0),
                    });
                }
            }
            Shape::Cylinder {
                axis,
                radius,
                half_length,
                caps,
            } => out.push(SurfaceRecord {
                kind: kind::CYLINDER,
                boundary,
                id: 0,
                caps: match caps {
                    Caps::Open => 0,
                    Caps::Bottom => 1,
                    Caps::Both => 2,
                },
                p: f4(b.origin, *radius),
                n: f4(*axis, *half_length),
                ..Default::default()
            }),
            Shape::Plate { half_x, half_y } => out.push(SurfaceRecord {
                kind: kind::PLATE,
                boundary,
                p: f4(b.origin, *half_x),
                n: [0.0, 0.0, 0.0, *half_y as f32],
                ..Default::default()
            }),
            Shape::Mesh { .. } => {
                return Err(CollideError::Unsupported(format!(
                    "boundary '{}' is a mesh",
                    b.name
                )))
            }
        }
    }
    Ok(out)
}

/// The spheres' (centre, radius) in f32. Errors:
/// [`CollideError::Unsupported`] for a body that is not a sphere.
pub fn sphere_records(bodies: &Bodies) -> Result<Vec<[f32; 4]>, CollideError> {
    if let Some(i) = (0..bodies.len()).find(|&i| bodies.shape_of(i).is_some()) {
        return Err(CollideError::Unsupported(format!(
            "body {i} is not a sphere"
        )));
    }
    Ok((0..bodies.len())
        .map(|i| f4(bodies.pos[i], bodies.radius[i]))
        .collect())
}

/// The list read back from the device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceContacts {
    /// The contacts, ascending in pair key.
    pub contacts: Vec<DeviceContact>,
    /// Times `write_contacts` ran again into a grown list (0 when the list
    /// held every contact the first time).
    pub rewrites: u32,
}

/// Device buffers for a given number of spheres and surfaces.
struct Buffers {
    bodies: usize,
    surfaces: usize,
    buckets: u32,
    spheres: wgpu::Buffer,
    surface: wgpu::Buffer,
    cells: wgpu::Buffer,
    bucket: wgpu::Buffer,
    cursor: wgpu::Buffer,
    sorted: wgpu::Buffer,
    counts: wgpu::Buffer,
    status: wgpu::Buffer,
    read_status: wgpu::Buffer,
    scan_buckets: ScanPlan,
    scan_counts: ScanPlan,
}

/// The list and what reads it back, of a given capacity.
struct List {
    capacity: u32,
    contacts: wgpu::Buffer,
    read: wgpu::Buffer,
    bind: wgpu::BindGroup,
}

/// The detection pipelines and their buffers, kept between calls.
pub struct GpuCollider {
    layout: wgpu::BindGroupLayout,
    bin: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    count: wgpu::ComputePipeline,
    write: wgpu::ComputePipeline,
    scan: Scan,
    params: wgpu::Buffer,
    bufs: Option<Buffers>,
    list: Option<List>,
    /// Contact records a list is first made with, per sphere (default 8);
    /// it grows past that as the contacts need.
    pub first_capacity_per_body: usize,
    /// Dispatches, submits, round trips and bytes moved, summed over calls.
    pub counters: GpuCounters,
    /// The length of the last list.
    last_len: u32,
}

impl GpuCollider {
    /// Compiles the shaders and creates the pipelines.
    pub fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        let dev = &ctx.device;
        let mut read_only = vec![true, true];
        read_only.extend([false; 7]);
        let (layout, p) = compute_pipelines(
            ctx,
            "collide.wgsl",
            "collision",
            SHADER,
            &read_only,
            &["bin", "scatter", "count", "write_contacts"],
        )?;
        let [bin, scatter, count, write]: [wgpu::ComputePipeline; 4] =
            p.try_into().expect("four pipelines");
        let params = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("collide params"),
            size: std::mem::size_of::<CollideParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let scan = Scan::new(ctx)?;
        Ok(GpuCollider {
            layout,
            bin,
            scatter,
            count,
            write,
            scan,
            params,
            bufs: None,
            list: None,
            first_capacity_per_body: 8,
            counters: GpuCounters::default(),
            last_len: 0,
        })
    }

    /// The contacts of `bodies` (spheres only) with each other and with
    /// `boundaries` (no meshes) closer than `envelope`, found on the
    /// device and read back: the list [`crate::collision::detect`] gives,
    /// in its order, computed in f32 from the f32 centres and radii.
    pub fn detect(
        &mut self,
        ctx: &GpuContext,
        bodies: &Bodies,
        boundaries: &[Boundary],
        envelope: f64,
    ) -> Result<DeviceContacts, CollideError> {
        let spheres = sphere_records(bodies)?;
        let surfaces = surface_records(boundaries)?;
        self.detect_records(ctx, &spheres, &surfaces, envelope as f32)
    }

    /// [`GpuCollider::detect`] on records made by [`sphere_records`] and
    /// [`surface_records`].
    pub fn detect_records(
        &mut self,
        ctx: &GpuContext,
        spheres: &[[f32; 4]],
        surfaces: &[SurfaceRecord],
        envelope: f32,
    ) -> Result<DeviceContacts, CollideError> {
        self.scoped(ctx, spheres, surfaces, envelope, true)
    }

    /// [`GpuCollider::detect_records`] leaving the list on the device
    /// ([`GpuCollider::list`]): one round trip (the list's length and the
    /// crowding flag), the list not read back. Returns the list's length
    /// and the times it was rewritten into a larger buffer
    /// (`DeviceContacts::rewrites`).
    pub fn detect_resident(
        &mut self,
        ctx: &GpuContext,
        spheres: &[[f32; 4]],
        surfaces: &[SurfaceRecord],
        envelope: f32,
    ) -> Result<(u32, u32), CollideError> {
        let found = self.scoped(ctx, spheres, surfaces, envelope, false)?;
        Ok((self.last_len, found.rewrites))
    }

    /// The contact list on the device (records of [`DeviceContact`], the
    /// first [`GpuCollider::detect_resident`]'s length of them valid), once
    /// a detection has run.
    pub fn list(&self) -> Option<&wgpu::Buffer> {
        self.list.as_ref().map(|l| &l.contacts)
    }

    /// [`GpuCollider::run`] inside its error scopes.
    fn scoped(
        &mut self,
        ctx: &GpuContext,
        spheres: &[[f32; 4]],
        surfaces: &[SurfaceRecord],
        envelope: f32,
        read_list: bool,
    ) -> Result<DeviceContacts, CollideError> {
        within_scopes(ctx, "contact detection", || {
            self.run(ctx, spheres, surfaces, envelope, read_list)
        })
    }

    /// The detection; the list is read back when `read_list`.
    fn run(
        &mut self,
        ctx: &GpuContext,
        spheres: &[[f32; 4]],
        surfaces: &[SurfaceRecord],
        envelope: f32,
        read_list: bool,
    ) -> Result<DeviceContacts, CollideError> {
        let n = spheres.len();
        self.last_len = 0;
        if n == 0 {
            return Ok(DeviceContacts::default());
        }
        let x_max = spheres.iter().fold(0f32, |m, s| {
            m.max(s[0].abs()).max(s[1].abs()).max(s[2].abs())
        });
        let radii: Vec<f32> = spheres.iter().map(|s| s[3]).collect();
        let t_up = Instant::now();
        let buf = self.spheres_buffer(ctx, n, surfaces)?;
        ctx.queue
            .write_buffer(buf, 0, bytemuck::cast_slice(spheres));
        self.counters.upload_bytes += std::mem::size_of_val(spheres) as u64;
        self.counters.upload_seconds += t_up.elapsed().as_secs_f64();
        self.find(ctx, &radii, x_max, surfaces.len(), envelope, read_list)
    }

    /// The buffer of `n` sphere records (centre, radius) that the next
    /// [`GpuCollider::detect_written`] reads, for a device stage to write
    /// ([`super::positions`]); uploads `surfaces` for it.
    pub fn spheres_buffer(
        &mut self,
        ctx: &GpuContext,
        n: usize,
        surfaces: &[SurfaceRecord],
    ) -> Result<&wgpu::Buffer, GpuError> {
        self.ensure(ctx, n, surfaces.len())?;
        let first = (self.first_capacity_per_body.max(1) * n).max(64);
        let capacity = self.list.as_ref().map_or(first, |l| l.capacity as usize);
        self.ensure_list(ctx, capacity)?;
        let bufs = self.bufs.as_ref().expect("buffers made above");
        if !surfaces.is_empty() {
            let t_up = Instant::now();
            ctx.queue
                .write_buffer(&bufs.surface, 0, bytemuck::cast_slice(surfaces));
            self.counters.upload_bytes += std::mem::size_of_val(surfaces) as u64;
            self.counters.upload_seconds += t_up.elapsed().as_secs_f64();
        }
        Ok(&bufs.spheres)
    }

    /// [`GpuCollider::detect_resident`] on the spheres a device stage wrote
    /// into [`GpuCollider::spheres_buffer`] (queued before this call):
    /// `radii` are theirs, every centre coordinate is within ±`x_max`,
    /// and `surfaces` boundary records were uploaded with the buffer.
    pub fn detect_written(
        &mut self,
        ctx: &GpuContext,
        radii: &[f32],
        x_max: f32,
        surfaces: usize,
        envelope: f32,
    ) -> Result<(u32, u32), CollideError> {
        assert_eq!(
            self.bufs.as_ref().map_or(0, |b| b.bodies),
            radii.len(),
            "detect_written: as many radii as spheres_buffer made room for"
        );
        self.last_len = 0;
        if radii.is_empty() {
            return Ok((0, 0));
        }
        let found = within_scopes(ctx, "contact detection", || {
            self.find(ctx, radii, x_max, surfaces, envelope, false)
        })?;
        Ok((self.last_len, found.rewrites))
    }

    /// The detection on the spheres in place (`radii` theirs, centres
    /// within ±`x_max`), against `surfaces` boundary records.
    fn find(
        &mut self,
        ctx: &GpuContext,
        radii: &[f32],
        x_max: f32,
        surfaces: usize,
        envelope: f32,
        read_list: bool,
    ) -> Result<DeviceContacts, CollideError> {
        let n = radii.len();
        let dev = &ctx.device;
        let (r_max, r_min) = radii
            .iter()
            .fold((0f32, f32::INFINITY), |(a, b), &r| (a.max(r), b.min(r)));
        let edge = cell_edge(r_max.into(), envelope.into(), x_max.into());
        let bufs = self.bufs.as_ref().expect("buffers made by spheres_buffer");
        let mut params = CollideParams {
            bodies: n as u32,
            surfaces: surfaces as u32,
            mask: bufs.buckets - 1,
            capacity: 0,
            inv_cell: (1.0 / edge) as f32,
            envelope,
            r_max,
            r_min,
            row: grid(n, ctx).0,
            ..Default::default()
        };
        let mut rewrites = 0;
        let mut whole = true;
        let total = loop {
            let list = self.list.as_ref().expect("list made above");
            params.capacity = list.capacity;
            ctx.queue
                .write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
            self.counters.upload_bytes += std::mem::size_of::<CollideParams>() as u64;
            let bufs = self.bufs.as_ref().expect("buffers made above");
            let mut enc = dev.create_command_encoder(&Default::default());
            if whole {
                enc.clear_buffer(&bufs.bucket, 0, None);
                enc.clear_buffer(&bufs.cursor, 0, None);
                enc.clear_buffer(&bufs.status, 0, None);
            }
            let g = grid(n, ctx);
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_bind_group(0, &list.bind, &[]);
                let mut d = 0;
                if whole {
                    pass.set_pipeline(&self.bin);
                    pass.dispatch_workgroups(g.0, g.1, 1);
                    d += self.scan.encode(&mut pass, &bufs.scan_buckets);
                    pass.set_pipeline(&self.scatter);
                    pass.set_bind_group(0, &list.bind, &[]);
                    pass.dispatch_workgroups(g.0, g.1, 1);
                    pass.set_pipeline(&self.count);
                    pass.dispatch_workgroups(g.0, g.1, 1);
                    d += self.scan.encode(&mut pass, &bufs.scan_counts);
                    d += 3;
                }
                pass.set_pipeline(&self.write);
                pass.set_bind_group(0, &list.bind, &[]);
                pass.dispatch_workgroups(g.0, g.1, 1);
                self.counters.dispatches += d + 1;
            }
            enc.copy_buffer_to_buffer(&bufs.counts, 8 * n as u64, &bufs.read_status, 0, 4);
            enc.copy_buffer_to_buffer(&bufs.status, 0, &bufs.read_status, 4, 4);
            ctx.queue.submit([enc.finish()]);
            self.counters.submits += 1;
            let status = super::pipelines::read(dev, &bufs.read_status, 8, &mut self.counters)?;
            let total = u32::from_le_bytes(status[0..4].try_into().expect("4 bytes"));
            let crowded = u32::from_le_bytes(status[4..8].try_into().expect("4 bytes"));
            if crowded > 0 {
                let body = n - crowded as usize;
                let r = f64::from(radii[body]);
                return Err(CollideError::Crowded(Crowded {
                    body,
                    radius: r,
                    limit: crowding_limit(r as f32, r_max, r_min, envelope) as usize,
                }));
            }
            if total <= list.capacity {
                break total;
            }
            let grown = total as usize + total as usize / 8;
            self.ensure_list(ctx, grown)?;
            rewrites += 1;
            whole = false;
        };
        self.last_len = total;
        let mut contacts = Vec::new();
        if total > 0 && read_list {
            let list = self.list.as_ref().expect("list made above");
            let bytes = u64::from(total) * std::mem::size_of::<DeviceContact>() as u64;
            let mut enc = dev.create_command_encoder(&Default::default());
            enc.copy_buffer_to_buffer(&list.contacts, 0, &list.read, 0, bytes);
            ctx.queue.submit([enc.finish()]);
            self.counters.submits += 1;
            let data = super::pipelines::read(dev, &list.read, bytes, &mut self.counters)?;
            contacts.extend_from_slice(bytemuck::cast_slice(&data));
        }
        Ok(DeviceContacts { contacts, rewrites })
    }

    /// Makes the buffers for `n` spheres and `surfaces` surface records
    /// unless those of the last call fit.
    fn ensure(&mut self, ctx: &GpuContext, n: usize, surfaces: usize) -> Result<(), GpuError> {
        if self
            .bufs
            .as_ref()
            .is_some_and(|b| b.bodies == n && b.surfaces == surfaces.max(1))
        {
            return Ok(());
        }
        let surfaces = surfaces.max(1);
        let buckets = (2 * n).max(1024).next_power_of_two() as u32;
        let dev = &ctx.device;
        let mk = |what, count, item| storage_sized(ctx, what, count, item);
        let bucket = mk("collision buckets", buckets as usize + 1, 4)?;
        let counts = mk("contact counts", 2 * n + 1, 4)?;
        let scan_buckets = self.scan.plan(ctx, &bucket, buckets + 1);
        let scan_counts = self.scan.plan(ctx, &counts, 2 * n as u32 + 1);
        self.bufs = Some(Buffers {
            bodies: n,
            surfaces,
            buckets,
            spheres: mk("spheres", n, 16)?,
            surface: mk(
                "boundary surfaces",
                surfaces,
                std::mem::size_of::<SurfaceRecord>(),
            )?,
            cells: mk("sphere cells", n, 16)?,
            cursor: mk("bucket cursors", buckets as usize, 4)?,
            sorted: mk("spheres by bucket", n, 4)?,
            status: mk("collision status", 4, 4)?,
            read_status: dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("read collision status"),
                size: 8,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            bucket,
            counts,
            scan_buckets,
            scan_counts,
        });
        // The list's bind group names these buffers: make it again.
        if let Some(cap) = self.list.take().map(|l| l.capacity) {
            self.ensure_list(ctx, cap as usize)?;
        }
        Ok(())
    }

    /// Makes the list (and the bind group) hold at least `capacity`
    /// contacts.
    fn ensure_list(&mut self, ctx: &GpuContext, capacity: usize) -> Result<(), GpuError> {
        if self
            .list
            .as_ref()
            .is_some_and(|l| l.capacity as usize >= capacity)
        {
            return Ok(());
        }
        let dev = &ctx.device;
        let item = std::mem::size_of::<DeviceContact>();
        let bytes = (capacity * item) as u64;
        let limit = ctx.limits.max_storage_buffer_binding_size;
        if bytes > limit || capacity > u32::MAX as usize {
            return Err(GpuError::TooLarge {
                what: "contact list",
                bytes,
                limit,
                count: capacity,
            });
        }
        let contacts = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("contact list"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read contact list"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let b = self.bufs.as_ref().expect("buffers before the list");
        let bind = bind_whole(
            ctx,
            &self.layout,
            "collide",
            &[
                &self.params,
                &b.spheres,
                &b.surface,
                &b.cells,
                &b.bucket,
                &b.cursor,
                &b.sorted,
                &b.counts,
                &contacts,
                &b.status,
            ],
        );
        self.list = Some(List {
            capacity: capacity as u32,
            contacts,
            read,
            bind,
        });
        Ok(())
    }
}

/// The crowding bound as the shader computes it (`crowding_limit`).
fn crowding_limit(r: f32, r_max: f32, r_min: f32, envelope: f32) -> u32 {
    let outer = r + r_max + envelope.max(0.0) + r_min;
    let fit = (outer * outer * outer - r * r * r) / (r_min * r_min * r_min);
    (2.0 * fit).ceil().clamp(32.0, 1e9) as u32
}

/// Workgroups (x, y) covering `n` threads within the per-dimension limit.
pub(crate) fn grid(n: usize, ctx: &GpuContext) -> (u32, u32) {
    let max_dim = ctx.limits.max_compute_workgroups_per_dimension;
    let groups = (n as u64).div_ceil(u64::from(WG)).max(1);
    if groups <= u64::from(max_dim) {
        (groups as u32, 1)
    } else {
        (max_dim, groups.div_ceil(u64::from(max_dim)) as u32)
    }
}
