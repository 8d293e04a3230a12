//! The GPU path: wgpu compute shaders that run projected Jacobi, as the CPU
//! does, and an APGD with a fixed step and restarts at residual checks
//! ([`jacobi`], mirrored by `solver::jacobi_f32::solve_apgd`), in f32.
//!
//! # Design
//!
//! The CPU assembles the [`ContactProblem`](crate::problem::ContactProblem)
//! (collision, frames, cones, CSR) and packs it into f32 records
//! ([`crate::solver::packed`]). Per step the GPU gets **one upload** (contact
//! records, body records holding v_free + M⁻¹Dγ₀, the warm-start impulses, the
//! CSR offsets), runs K iterations of **two dispatches each** (Jacobi and
//! APGD alike) with **no host readback of the state inside the loop**, and
//! gives **one readback** of the state (body velocities and impulses). The
//! loop is encoded in chunks, one compute pass and one submit each, that end
//! at a residual check; after each the worlds' 48-byte control records are
//! read (the state is copied and mapped beside them in the same wait, and
//! read only from the chunk that ends the loop: one round trip per chunk),
//! and once they say done nothing more is encoded. The first chunk
//! ends at the first check at or after the previous solve's iteration count,
//! the later ones double, so a warm-started step costs one or two round
//! trips, and a cap far above what the steps need costs nothing (encoded in
//! one pass, every iteration after convergence would still cost its empty
//! dispatches: a 900-step test at a cap of 240, 24 iterations a step, took
//! 71 s on lavapipe so, 5.9 s in chunks).
//!
//! **Many worlds in one solve** ([`jacobi::GpuJacobi::solve_batch`],
//! [`layout`]): the worlds' records lie side by side, each world's range
//! starting at a workgroup boundary, every dispatch covers all of them, and
//! each world has its own settings, residual, control record and stopping.
//! A world's arithmetic is that of the world alone, so its result is the
//! same to the bit; dispatches and round trips per solve are those of the
//! slowest world, whatever the number of worlds ([`profile`] counts them).
//!
//! * `contact_pass` (one thread per contact): twist y = Dᵀv + b, scaled step,
//!   exact cone projection, relaxation; writes γ and, for each end, the
//!   velocity change M⁻¹D_end Δγ into that end's own *slot*. Slots are laid
//!   out in CSR order, so each body's slots are contiguous.
//! * `body_pass` (one thread per body): adds its slots in order to v and ω.
//!   No float atomics, fixed summation order → bit-identical runs.
//! * With a tolerance, every `check_every` iterations `residual_pass`
//!   (per-contact natural-map residual, workgroup tree reduction) and
//!   `finalize` (one workgroup per world) compute each world's relative
//!   residual on the GPU and mark the world done; once all are, `finalize`
//!   zeroes the indirect dispatch sizes; every later dispatch of the chunk
//!   then launches no workgroups, and the host encodes no further chunk.
//!   wgpu's own check of indirect arguments (a dispatch and a barrier per
//!   indirect dispatch) is off: the arguments are ours (`instance`).
//! * APGD's momentum is computed by every contact thread from the world's
//!   θ (kept at the iteration's parity), so it needs no dispatch of its own.
//! * γ and the slots are stored as two `vec4` per 6-vector, and each contact
//!   loads its two body records once: Mesa's software driver (lavapipe)
//!   turns every storage access into a loop over its SIMD lanes, so fewer,
//!   wider accesses are faster there even though they move more bytes.
//!   With timestamp queries (where offered) the solver times its own
//!   iteration passes ([`jacobi::GpuJacobi::last_pass_seconds`]).
//!
//! The CPU f32 mirror ([`crate::solver::jacobi_f32`]) runs the same
//! functions in the same order on the same records; tests compare the two
//! after 1 and after K iterations, and both against the f64 reference.
//!
//! Limits: each storage binding must fit the adapter's
//! `max_storage_buffer_binding_size` (128 MiB on lavapipe: about 1.3 million
//! contacts at 96 bytes each); a larger problem is refused with an error that
//! says which buffer and by how much, never truncated.

use std::fmt;

/// Mesa's Vulkan drivers (lavapipe among them) probe the Wayland window
/// system when an instance is made and print "error: XDG_RUNTIME_DIR is
/// invalid or not set in the environment." when there is no session
/// directory — harmless for repose, which opens no window, but alarming.
/// Without a usable one, point it at a private directory under the temp
/// dir (made with mode 0700). The command line calls it first in `main`,
/// before any thread; the Python module when it is imported.
pub fn headless_runtime_dir() {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        let usable = std::env::var_os("XDG_RUNTIME_DIR")
            .map(std::path::PathBuf::from)
            .is_some_and(|d| d.is_dir());
        if usable {
            return;
        }
        let user = std::env::var("USER").unwrap_or_else(|_| "user".into());
        let dir = std::env::temp_dir().join(format!("repose-runtime-{user}"));
        if dir.is_dir() || std::fs::DirBuilder::new().mode(0o700).create(&dir).is_ok() {
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
    }
}

pub mod assemble;
pub mod collide;
pub mod copy;
pub mod integrate;
pub mod jacobi;
pub mod layout;
pub mod pipelines;
pub mod positions;
pub mod profile;
pub mod resident;
pub mod scan;
pub mod warm;

/// A GPU device and queue, with what was chosen and why.
pub struct GpuContext {
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// The adapter's description (name, backend, device type).
    pub info: wgpu::AdapterInfo,
    /// The limits the device was created with (the adapter's own).
    pub limits: wgpu::Limits,
}

impl fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GpuContext({})", self.describe())
    }
}

/// What can go wrong on the GPU path.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// A buffer would exceed the adapter's limits.
    #[error("the problem does not fit the GPU: the {what} buffer needs {bytes} bytes but the adapter allows {limit} per binding ({count} items); use --backend cpu or a smaller scene")]
    TooLarge {
        /// Which buffer.
        what: &'static str,
        /// Bytes needed.
        bytes: u64,
        /// The adapter's limit.
        limit: u64,
        /// Number of items (contacts or bodies).
        count: usize,
    },
    /// wgpu reported an error (validation, out of memory, device lost).
    #[error("GPU error: {0}")]
    Wgpu(String),
    /// Worlds that cannot share one solve (their method or check interval
    /// differs).
    #[error("these worlds cannot be solved in one batch: {0}")]
    Batch(String),
}

/// The wgpu instance. wgpu checks the arguments of every indirect dispatch
/// on the device before it runs (`InstanceFlags::VALIDATION_INDIRECT_CALL`,
/// on by default): a dispatch and a barrier of its own for each, which
/// doubles the dispatches of a solve's loop. repose turns it off: its
/// indirect arguments are written only by the host (workgroup counts
/// checked against the adapter's limits, [`jacobi::GpuJacobi::check_fits`])
/// and by its own `finalize` kernel (zeros), so they are always within the
/// limits the check enforces. (Without the check, D3D12 would report zero
/// `num_workgroups`; repose builds for Vulkan only.)
/// `WGPU_VALIDATION_INDIRECT_CALL=1` turns the check back on.
fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.flags
        .remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
    wgpu::Instance::new(desc.with_env())
}

impl GpuContext {
    /// Opens the best adapter (honouring `WGPU_BACKEND`, `WGPU_ADAPTER_NAME`),
    /// or returns `None` when there is none. Never panics.
    pub fn try_new() -> Option<Self> {
        let inst = instance();
        let adapter = pollster::block_on(inst.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
            ..Default::default()
        }))
        .ok()?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        // Timestamp queries time the solver's compute pass on the device
        // itself (`repose bench`); optional, used only where offered.
        let features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
        let desc = wgpu::DeviceDescriptor {
            label: Some("repose"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        };
        let (device, queue) = match pollster::block_on(adapter.request_device(&desc)) {
            Ok(dq) => dq,
            Err(e) => {
                log::warn!("GPU adapter {} found but no device: {e}", info.name);
                return None;
            }
        };
        device.on_uncaptured_error(std::sync::Arc::new(|e: wgpu::Error| {
            log::error!("uncaptured GPU error: {e}");
        }));
        Some(GpuContext {
            device,
            queue,
            info,
            limits,
        })
    }

    /// Whether the adapter is a software one (lavapipe, llvmpipe: any
    /// `DeviceType::Cpu`), slower than the CPU backend: `--backend auto`
    /// leaves it for the CPU.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// "name (backend, device type)".
    pub fn describe(&self) -> String {
        format!(
            "{} ({:?}, {:?})",
            self.info.name, self.info.backend, self.info.device_type
        )
    }

    /// Every adapter the instance sees, described one per line (for `repose info`).
    pub fn list_adapters() -> Vec<String> {
        let inst = instance();
        pollster::block_on(inst.enumerate_adapters(wgpu::Backends::all()))
            .into_iter()
            .map(|a| {
                let i = a.get_info();
                let l = a.limits();
                format!(
                    "{} — {:?}, {:?}, driver {} {}; max storage binding {} MiB, max buffer {} MiB, max workgroups/dim {}",
                    i.name,
                    i.backend,
                    i.device_type,
                    i.driver,
                    i.driver_info,
                    l.max_storage_buffer_binding_size >> 20,
                    l.max_buffer_size >> 20,
                    l.max_compute_workgroups_per_dimension
                )
            })
            .collect()
    }
}

/// For tests: a GPU context, or `None` with a visible skip message when no
/// adapter exists. Panics instead when `REPOSE_REQUIRE_GPU` is set, so CI
/// cannot count a skipped GPU test as passed.
pub fn context_for_tests(test: &str) -> Option<GpuContext> {
    match GpuContext::try_new() {
        Some(c) => Some(c),
        None => {
            if std::env::var_os("REPOSE_REQUIRE_GPU").is_some_and(|v| !v.is_empty() && v != "0") {
                panic!("{test}: REPOSE_REQUIRE_GPU is set but no GPU adapter was found (install mesa-vulkan-drivers, set WGPU_BACKEND=vulkan)");
            }
            eprintln!(
                "SKIPPED {test}: no GPU adapter (set REPOSE_REQUIRE_GPU=1 to make this a failure)"
            );
            None
        }
    }
}
