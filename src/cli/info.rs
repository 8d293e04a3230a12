//! `repose info`: what this build can do (version, threads, backends, GPU
//! adapters) and what `--backend auto` would choose here.

use std::process::ExitCode;

use anyhow::Result;

/// Runs `repose info`.
pub(crate) fn exec() -> Result<ExitCode> {
    println!("repose {}", env!("CARGO_PKG_VERSION"));
    println!("CPU threads (rayon): {}", rayon::current_num_threads());
    println!("backends: cpu (f64, every method), cpu-f32 (mirror of the GPU solvers), gpu (WGSL, wgpu: jacobi and apgd)");
    let adapters = repose::gpu::GpuContext::list_adapters();
    if adapters.is_empty() {
        println!("GPU adapters: none (install mesa-vulkan-drivers for lavapipe; set WGPU_BACKEND=vulkan)");
    }
    for a in adapters {
        println!("GPU adapter: {a}");
    }
    match repose::gpu::GpuContext::try_new() {
        Some(ctx) if ctx.is_software() => println!(
            "--backend auto would use: cpu (the only adapter, {}, is software; --backend gpu uses it)",
            ctx.describe()
        ),
        Some(ctx) => {
            println!(
                "--backend auto would use: {} for scenes of {} bodies or more, else cpu",
                ctx.describe(),
                repose::run::AUTO_GPU_MIN_BODIES
            );
            println!("enabled features: {:?}", ctx.device.features());
        }
        None => println!("--backend auto would use: cpu"),
    }
    Ok(ExitCode::SUCCESS)
}
