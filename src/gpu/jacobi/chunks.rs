//! The solve's iteration loop: the iterations in chunks that each end at
//! a residual check, one submit each, with only the worlds' control
//! records read between them (and, on request, the state at the end).

use std::time::Instant;

use super::{Control, GpuJacobi, GAMMA_BYTES, WG};
use crate::gpu::layout::RWG;
use crate::gpu::pipelines::{copy_out, wait_mapped};
use crate::gpu::{GpuContext, GpuError};
use crate::solver::packed::PackedBody;

/// What one solve's loop runs over.
pub(super) struct Plan {
    /// Worlds with contacts.
    pub worlds: usize,
    /// Contact records of all worlds, padding included.
    pub nc: usize,
    /// Body records of all worlds, padding included.
    pub nb: usize,
    /// Whether any world has a tolerance (residual checks run).
    pub check: bool,
    /// Iterations between residual checks.
    pub every: usize,
    /// Each world's iteration cap.
    pub caps: Vec<usize>,
    /// APGD rather than projected Jacobi.
    pub apgd: bool,
}

impl GpuJacobi {
    /// Runs the iterations of a solve whose records and settings are in
    /// place; returns the worlds' control records and, when `read_state`,
    /// the body records and impulses read back (else nothing: they stay on
    /// the device). Records the device time of the passes where timestamp
    /// queries exist.
    pub(super) fn iterate(
        &mut self,
        ctx: &GpuContext,
        plan: Plan,
        read_state: bool,
    ) -> Result<(Vec<Control>, Vec<Vec<u8>>), GpuError> {
        let Plan {
            worlds,
            nc,
            nb,
            check,
            every,
            caps,
            apgd,
        } = plan;
        let (dev, q) = (&ctx.device, &ctx.queue);
        let counters = &mut self.counters;
        let b = self.bufs.as_ref().expect("buffers");
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension;
        let cgrid = super::grid(nc, WG, max_dim);
        let bgrid = super::grid(nb, WG, max_dim);
        let rgrid = super::grid(nc, RWG, max_dim);
        let max = caps.iter().copied().max().unwrap_or(0);
        // The iterations in chunks ending at a residual check: each chunk is
        // one submit, after which only the worlds' control records are read;
        // once every world is done, the rest is not encoded at all (the
        // zeroed indirect sizes would make it launch nothing, but each empty
        // dispatch still costs the driver its overhead). The first chunk ends
        // at the first check at or after the last solve's count (a warm start
        // needs about as many) but at most 4× the recent median (one capped
        // solve does not make the next pay the whole cap), later ones double.
        // The GPU runs the same dispatches on the same buffers as in one
        // pass, so the result does not depend on the chunking. Besides the
        // checks, the final residual of each world runs after its cap
        // (`finalize` tells a check from a cap by the batch's clock).
        let mut len = if check {
            super::first_chunk_estimate(&self.recent_iterations)
                .div_ceil(every)
                .max(1)
                * every
        } else {
            max
        };
        // The worlds' caps, sorted: a boundary test per encoded iteration.
        let mut caps = caps;
        caps.sort_unstable();
        caps.dedup();
        let boundary =
            |it: usize| (check && it.is_multiple_of(every)) || caps.binary_search(&it).is_ok();
        let mut start = 0;
        let mut pass_seconds = self.timer.as_ref().map(|_| 0.0);
        let ctl_bytes = (worlds * std::mem::size_of::<Control>()) as u64;
        let (ctl, data) = loop {
            let end = (start + len).min(max);
            let last = end == max;
            let t_enc = Instant::now();
            let (dispatches, indirect);
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
                let mut rec = Recorder {
                    indirect_buf: &self.indirect,
                    via_indirect: check,
                    dispatches: 0,
                    indirect: 0,
                };
                let residual_check = |pass: &mut wgpu::ComputePass, rec: &mut Recorder| {
                    pass.set_pipeline(&self.residual);
                    rec.sized(pass, 2, rgrid);
                    pass.set_pipeline(&self.finalize);
                    rec.direct(pass, (worlds as u32, 1));
                };
                let (cp, bp) = if apgd {
                    (&self.apgd_contact, &self.apgd_body)
                } else {
                    (&self.contact, &self.body)
                };
                for it in start..end {
                    // The boundary at a chunk's start closed the chunk before.
                    if boundary(it) && (it == 0 || it > start) {
                        residual_check(&mut pass, &mut rec);
                    }
                    pass.set_pipeline(cp);
                    rec.sized(&mut pass, 0, cgrid);
                    pass.set_pipeline(bp);
                    rec.sized(&mut pass, 1, bgrid);
                }
                if last {
                    // The final residual always runs in full (it reports
                    // the result).
                    pass.set_pipeline(&self.residual);
                    rec.direct(&mut pass, rgrid);
                    pass.set_pipeline(&self.finalize);
                    rec.direct(&mut pass, (worlds as u32, 1));
                } else {
                    residual_check(&mut pass, &mut rec);
                }
                dispatches = rec.dispatches;
                indirect = rec.indirect;
            }
            // The state is copied with the control records at the end of
            // every chunk (a small copy beside the chunk's iterations), and
            // all are mapped in the one wait: the chunk that ends the loop
            // then needs no second round trip for the state.
            let state: Vec<(&wgpu::Buffer, u64)> = if read_state {
                let body_size = std::mem::size_of::<PackedBody>() as u64;
                vec![
                    (&b.read_bodies, nb as u64 * body_size),
                    (&b.read_gamma, (nc * GAMMA_BYTES) as u64),
                ]
            } else {
                Vec::new()
            };
            if read_state {
                enc.copy_buffer_to_buffer(&b.bodies, 0, state[0].0, 0, state[0].1);
                enc.copy_buffer_to_buffer(&b.gamma, 0, state[1].0, 0, state[1].1);
            }
            enc.copy_buffer_to_buffer(&b.control, 0, &b.read_control, 0, ctl_bytes);
            let mut reads = vec![(&b.read_control, ctl_bytes)];
            if let Some(t) = &self.timer {
                enc.resolve_query_set(&t.set, 0..2, &t.resolve, 0);
                enc.copy_buffer_to_buffer(&t.resolve, 0, &t.read, 0, 16);
                reads.push((&t.read, 16));
            }
            let cmd = enc.finish();
            counters.encode_seconds += t_enc.elapsed().as_secs_f64();
            counters.dispatches += dispatches;
            counters.indirect_dispatches += indirect;
            counters.iterations_encoded += (end - start) as u64;
            let t_sub = Instant::now();
            q.submit([cmd]);
            counters.submit_seconds += t_sub.elapsed().as_secs_f64();
            counters.submits += 1;
            let mapped: Vec<_> = reads.iter().chain(&state).copied().collect();
            wait_mapped(dev, &mapped, counters)?;
            let data = copy_out(&reads, counters)?;
            let ctl: Vec<Control> = bytemuck::pod_collect_to_vec(&data[0]);
            if let (Some(t), Some(total)) = (&self.timer, pass_seconds.as_mut()) {
                let ticks: [u64; 2] = bytemuck::pod_read_unaligned(&data[1]);
                *total += ticks[1].saturating_sub(ticks[0]) as f64 * t.period * 1e-9;
            }
            if last || ctl.iter().all(|c| c.done != 0) {
                break (ctl, copy_out(&state, counters)?);
            }
            for (buf, _) in &state {
                buf.unmap();
            }
            start = end;
            len *= 2;
        };
        self.last_pass_seconds = pass_seconds;
        if let Some(d) = pass_seconds {
            *self.counters.device_seconds.get_or_insert(0.0) += d;
        }
        Ok((ctl, data))
    }
}

/// Records dispatches into a compute pass and counts them.
struct Recorder<'a> {
    /// The indirect arguments (three (x, y, z) triples).
    indirect_buf: &'a wgpu::Buffer,
    /// Whether sizes come from the indirect buffer (a check can zero them).
    via_indirect: bool,
    dispatches: u64,
    indirect: u64,
}

impl Recorder<'_> {
    /// A dispatch of one of the loop's sized passes: from indirect argument
    /// triple `slot`, or of `g` workgroups.
    fn sized(&mut self, pass: &mut wgpu::ComputePass, slot: u64, g: (u32, u32)) {
        if self.via_indirect {
            self.indirect += 1;
            self.dispatches += 1;
            pass.dispatch_workgroups_indirect(self.indirect_buf, slot * 12);
        } else {
            self.direct(pass, g);
        }
    }

    /// A dispatch of `g` workgroups.
    fn direct(&mut self, pass: &mut wgpu::ComputePass, g: (u32, u32)) {
        self.dispatches += 1;
        pass.dispatch_workgroups(g.0, g.1, 1);
    }
}
