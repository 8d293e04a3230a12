//! The solver on a problem that the device stages left on the device:
//! the contact records of assembly ([`crate::gpu::assemble`]), the warm
//! start of [`crate::gpu::warm`] and the body records of
//! [`crate::gpu::integrate`] are copied device to device into the
//! solver's buffers, the iterations run as in [`GpuJacobi::solve`], and
//! the final impulses are copied back into the caller's impulse buffer
//! for integration. Nothing of the problem crosses the host; the host
//! writes the solve's settings (a few hundred bytes) and reads the
//! control record after each chunk of iterations.
//!
//! The records are laid out as a batch of one world
//! ([`crate::gpu::layout::BatchLayout`]), so the dispatches, their
//! order and the arithmetic are those of [`GpuJacobi::solve`] on the same
//! records: the same bits (a test in `tests/gpu_equivalence`).

use std::time::Instant;

use super::{chunks, world_record, Capacity, Control, GpuJacobi, GAMMA_BYTES};
use crate::gpu::layout::BatchLayout;
use crate::gpu::pipelines::within_scopes;
use crate::gpu::{GpuContext, GpuError};
use crate::material::FrictionLaw;
use crate::solver::packed::{PackedBody, PackedContact};
use crate::solver::{SolveStats, SolverMethod, SolverSettings};

/// A problem of spheres in device buffers, as the device stages write it.
pub struct DeviceProblem<'a> {
    /// The contact records ([`PackedContact`], `contacts` of them).
    pub packed: &'a wgpu::Buffer,
    /// Contacts.
    pub contacts: usize,
    /// Body k's slots are `ends[k]..ends[k + 1]` (u32, at least
    /// `bodies + 1` of them): assembly's `ends`.
    pub ends: &'a wgpu::Buffer,
    /// The body records: `bodies` starting velocities v_free + M⁻¹Dγ₀,
    /// then `bodies` free velocities ([`PackedBody`]).
    pub records: &'a wgpu::Buffer,
    /// Bodies.
    pub bodies: usize,
    /// The impulses, two vec4 a contact: the warm start on entry, the
    /// result on return.
    pub gamma: &'a wgpu::Buffer,
    /// The contact law.
    pub law: FrictionLaw,
}

impl GpuJacobi {
    /// Solves `p` where it lies: the warm start in `p.gamma` is replaced
    /// by the result (still on the device); the statistics come back.
    /// Bodies are spheres (no inertia tensors).
    pub fn solve_resident(
        &mut self,
        ctx: &GpuContext,
        p: &DeviceProblem<'_>,
        s: &SolverSettings,
    ) -> Result<SolveStats, GpuError> {
        if p.contacts == 0 {
            return Ok(SolveStats {
                converged: true,
                ..Default::default()
            });
        }
        // A body's ends are at most two a contact: room for every slot.
        let layout = BatchLayout::new([(p.contacts, p.bodies, 2 * p.contacts)]);
        let (nc, nb) = (layout.contacts, layout.bodies);
        Self::check_fits(ctx, nc, nb)?;
        let ctl = within_scopes(ctx, "GPU solve", || self.run_resident(ctx, p, s, &layout))?;
        let c = ctl[0];
        self.counters.iterations += u64::from(c.iterations);
        self.counters.solves += 1;
        self.remember(c.iterations as usize);
        Ok(c.stats())
    }

    /// [`GpuJacobi::solve_resident`] laid out as `layout`: the worlds'
    /// control records.
    fn run_resident(
        &mut self,
        ctx: &GpuContext,
        p: &DeviceProblem<'_>,
        s: &SolverSettings,
        layout: &BatchLayout,
    ) -> Result<Vec<Control>, GpuError> {
        let apgd = s.method == SolverMethod::Apgd;
        let every = s.check_every.max(1);
        let (nc, nb) = (layout.contacts, layout.bodies);
        let dev = &ctx.device;
        self.ensure(
            ctx,
            Capacity {
                contacts: nc,
                bodies: nb,
                slots: layout.slots,
                worlds: 1,
            },
        );
        let t_up = Instant::now();
        let record = world_record(&layout.worlds[0], s, p.law, false);
        let up = self.write_settings(ctx, layout, &[record], every, apgd);
        // The problem's records into the solver's places, on the device:
        // the iterate (and APGD's extrapolated point) from the starting
        // velocities, the free velocities into the fourth region, the warm
        // start into the impulses (both halves for APGD), the ends into the
        // offsets.
        let b = self.bufs.as_ref().expect("buffers");
        let body = std::mem::size_of::<PackedBody>() as u64;
        let (bodies, contacts) = (p.bodies as u64, p.contacts as u64);
        let gamma_bytes = contacts * GAMMA_BYTES as u64;
        let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("jacobi resident records"),
        });
        let c_bytes = contacts * std::mem::size_of::<PackedContact>() as u64;
        enc.copy_buffer_to_buffer(p.packed, 0, &b.contacts, 0, c_bytes);
        enc.copy_buffer_to_buffer(p.records, 0, &b.bodies, 0, bodies * body);
        if apgd {
            enc.copy_buffer_to_buffer(p.records, 0, &b.bodies, nb as u64 * body, bodies * body);
        }
        enc.copy_buffer_to_buffer(
            p.records,
            bodies * body,
            &b.bodies,
            3 * nb as u64 * body,
            bodies * body,
        );
        enc.copy_buffer_to_buffer(p.gamma, 0, &b.gamma, 0, gamma_bytes);
        if apgd {
            let second = (nc * GAMMA_BYTES) as u64;
            enc.copy_buffer_to_buffer(p.gamma, 0, &b.gamma, second, gamma_bytes);
        }
        enc.copy_buffer_to_buffer(p.ends, 0, &b.offsets, 0, (bodies + 1) * 4);
        ctx.queue.submit([enc.finish()]);
        self.counters.upload_bytes += up;
        self.counters.upload_seconds += t_up.elapsed().as_secs_f64();
        self.counters.submits += 1;

        let plan = chunks::Plan {
            worlds: 1,
            nc,
            nb,
            check: s.tolerance > 0.0,
            every,
            caps: vec![s.max_iterations],
            apgd,
        };
        let (ctl, _) = self.iterate(ctx, plan, false)?;
        // The result back where the warm start came from (queue order puts
        // it after the iterations; nothing waits for it here).
        let b = self.bufs.as_ref().expect("buffers");
        let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("jacobi resident result"),
        });
        enc.copy_buffer_to_buffer(&b.gamma, 0, p.gamma, 0, gamma_bytes);
        ctx.queue.submit([enc.finish()]);
        self.counters.submits += 1;
        Ok(ctl)
    }
}
