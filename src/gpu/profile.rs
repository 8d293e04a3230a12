//! Where a GPU solve's time goes: counts and host-side times that the GPU
//! solver ([`super::jacobi::GpuJacobi`]) adds up over its solves, for
//! `summary.json` (`gpu`), the run's last lines and `repose bench`.
//!
//! A solve is: **upload** (the host writes the contact, body, impulse and
//! offset records into the queue's staging memory), then one or more
//! **chunks**, each **encoded** (a compute pass of dispatches recorded on
//! the host), **submitted** and **waited on** (the host blocks until the
//! device has run it and the control record can be mapped: one host round
//! trip), then one **readback** of the state. The counts — dispatches,
//! submits, round trips, bytes — depend only on the problem and the
//! settings, not on the device, so a software adapter (lavapipe) measures
//! them as a GPU would. Times do depend on the device:
//!
//! | field | what the host does meanwhile |
//! |---|---|
//! | `encode_seconds` | records commands (creating encoders, passes, dispatches) |
//! | `upload_seconds` | copies records into staging (`write_buffer`) |
//! | `submit_seconds` | hands command buffers to the driver |
//! | `wait_seconds` | blocks until the device is done (device work, transfers, driver latency) |
//! | `readback_seconds` | copies mapped results out |
//! | `device_seconds` | — the device's own clock around the iteration passes (timestamp queries, where offered) |
//!
//! With a fixed cost per iteration `c₀` and a cost per contact-iteration
//! `c₁`, an iteration costs `c₀ + c₁·n`; at small `n` the first term rules,
//! and [`GpuCounters::per_iteration`] splits a solve's wall time per
//! iteration into the host's part (encoding, submitting) and the waits.

use serde::{Deserialize, Serialize};

/// Counts and host times of the GPU solver, summed over its solves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuCounters {
    /// Solves that ran on the device (steps with contacts).
    pub solves: u64,
    /// Iterations the solves performed (to convergence or the cap).
    pub iterations: u64,
    /// Iterations encoded: those performed plus those recorded in a chunk
    /// after the loop had stopped on the device (they launch nothing).
    pub iterations_encoded: u64,
    /// Compute dispatches recorded by repose (wgpu's own validation
    /// dispatches, when enabled, are not counted).
    pub dispatches: u64,
    /// Of those, dispatches whose sizes come from the indirect buffer.
    pub indirect_dispatches: u64,
    /// Command buffers submitted.
    pub submits: u64,
    /// Submits the host waited on: host–device round trips.
    pub round_trips: u64,
    /// Bytes written to the device (records, impulses, control).
    pub upload_bytes: u64,
    /// Bytes read back (control records, state, timestamps).
    pub readback_bytes: u64,
    /// Host seconds recording commands.
    pub encode_seconds: f64,
    /// Host seconds copying records into staging memory.
    pub upload_seconds: f64,
    /// Host seconds handing command buffers to the driver.
    pub submit_seconds: f64,
    /// Host seconds blocked until the device finished a submit.
    pub wait_seconds: f64,
    /// Host seconds copying mapped results out.
    pub readback_seconds: f64,
    /// Device seconds of the iteration passes (timestamp queries); `None`
    /// where the device offers none.
    #[serde(default)]
    pub device_seconds: Option<f64>,
}

/// One solve's wall time per iteration, split ([`GpuCounters::per_iteration`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerIteration {
    /// Host time recording and submitting commands, per iteration encoded (s).
    pub host_seconds: f64,
    /// Host time blocked on the device, per iteration performed (s).
    pub wait_seconds: f64,
    /// Device time per iteration performed, where timed (s).
    pub device_seconds: Option<f64>,
    /// Dispatches per iteration encoded (checks and final residual included).
    pub dispatches: f64,
}

impl GpuCounters {
    /// Adds another set of counters (e.g. a resumed run's earlier part).
    pub fn add(&mut self, o: &GpuCounters) {
        self.solves += o.solves;
        self.iterations += o.iterations;
        self.iterations_encoded += o.iterations_encoded;
        self.dispatches += o.dispatches;
        self.indirect_dispatches += o.indirect_dispatches;
        self.submits += o.submits;
        self.round_trips += o.round_trips;
        self.upload_bytes += o.upload_bytes;
        self.readback_bytes += o.readback_bytes;
        self.encode_seconds += o.encode_seconds;
        self.upload_seconds += o.upload_seconds;
        self.submit_seconds += o.submit_seconds;
        self.wait_seconds += o.wait_seconds;
        self.readback_seconds += o.readback_seconds;
        self.device_seconds = match (self.device_seconds, o.device_seconds) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// The counters accumulated since `earlier` (a snapshot of the same
    /// solver's counters).
    pub fn since(&self, earlier: &GpuCounters) -> GpuCounters {
        GpuCounters {
            solves: self.solves - earlier.solves,
            iterations: self.iterations - earlier.iterations,
            iterations_encoded: self.iterations_encoded - earlier.iterations_encoded,
            dispatches: self.dispatches - earlier.dispatches,
            indirect_dispatches: self.indirect_dispatches - earlier.indirect_dispatches,
            submits: self.submits - earlier.submits,
            round_trips: self.round_trips - earlier.round_trips,
            upload_bytes: self.upload_bytes - earlier.upload_bytes,
            readback_bytes: self.readback_bytes - earlier.readback_bytes,
            encode_seconds: self.encode_seconds - earlier.encode_seconds,
            upload_seconds: self.upload_seconds - earlier.upload_seconds,
            submit_seconds: self.submit_seconds - earlier.submit_seconds,
            wait_seconds: self.wait_seconds - earlier.wait_seconds,
            readback_seconds: self.readback_seconds - earlier.readback_seconds,
            device_seconds: match (self.device_seconds, earlier.device_seconds) {
                (Some(a), Some(b)) => Some(a - b),
                (a, _) => a,
            },
        }
    }

    /// Host seconds of all kinds (encoding, uploads, submits, waits, readbacks).
    pub fn host_seconds(&self) -> f64 {
        self.encode_seconds
            + self.upload_seconds
            + self.submit_seconds
            + self.wait_seconds
            + self.readback_seconds
    }

    /// The time per iteration, split into the host's part and the waits.
    pub fn per_iteration(&self) -> PerIteration {
        let enc = self.iterations_encoded.max(1) as f64;
        let done = self.iterations.max(1) as f64;
        PerIteration {
            host_seconds: (self.encode_seconds + self.submit_seconds) / enc,
            wait_seconds: self.wait_seconds / done,
            device_seconds: self.device_seconds.map(|d| d / done),
            dispatches: self.dispatches as f64 / enc,
        }
    }
}

impl std::fmt::Display for GpuCounters {
    /// Two lines: per step (solve) the counts, then per iteration the times.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.solves.max(1) as f64;
        let it = self.per_iteration();
        write!(
            f,
            "gpu: {} solves; per solve {:.1} iterations ({:.1} encoded), {:.1} dispatches, \
             {:.2} submits, {:.2} round trips, {:.1} kB up, {:.1} kB down",
            self.solves,
            self.iterations as f64 / s,
            self.iterations_encoded as f64 / s,
            self.dispatches as f64 / s,
            self.submits as f64 / s,
            self.round_trips as f64 / s,
            self.upload_bytes as f64 / s / 1e3,
            self.readback_bytes as f64 / s / 1e3,
        )?;
        write!(
            f,
            "\ngpu: per iteration {:.2} dispatches, host encoding {:.1} µs, waiting {:.1} µs",
            it.dispatches,
            1e6 * it.host_seconds,
            1e6 * it.wait_seconds
        )?;
        if let Some(d) = it.device_seconds {
            write!(f, ", device {:.1} µs", 1e6 * d)?;
        }
        write!(
            f,
            "; in all: encode {:.2} s, upload {:.2} s, submit {:.2} s, wait {:.2} s, readback {:.2} s",
            self.encode_seconds,
            self.upload_seconds,
            self.submit_seconds,
            self.wait_seconds,
            self.readback_seconds
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_since_a_snapshot_are_the_difference() {
        let a = GpuCounters {
            solves: 2,
            iterations: 40,
            iterations_encoded: 50,
            dispatches: 110,
            wait_seconds: 1.0,
            device_seconds: Some(0.5),
            ..Default::default()
        };
        let mut b = a;
        b.add(&GpuCounters {
            solves: 1,
            iterations: 10,
            iterations_encoded: 10,
            dispatches: 22,
            wait_seconds: 0.25,
            device_seconds: Some(0.125),
            ..Default::default()
        });
        let d = b.since(&a);
        assert_eq!((d.solves, d.iterations, d.dispatches), (1, 10, 22));
        assert_eq!(d.wait_seconds, 0.25);
        assert_eq!(d.device_seconds, Some(0.125));
        assert_eq!(d.per_iteration().dispatches, 2.2);
    }
}
