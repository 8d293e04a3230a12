//! Checks before and during a run: the output directory (another run's
//! files are refused or, with `--overwrite`, removed), the tunnelling
//! warning, and the non-finite state that stops a run as diverged.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::bodies::Bodies;

/// Whether `name` is a file `repose run` writes into its output directory
/// (or a temporary of one, `NAME.tmp`, that a killed run leaves).
fn is_run_output(name: &str) -> bool {
    const FILES: [&str; 7] = [
        super::checkpoint::CHECKPOINT_FILE,
        "summary.json",
        "final.csv",
        "final.png",
        "track.csv",
        "frames.pvd",
        "scene.ron",
    ];
    FILES.contains(&name)
        || (name.starts_with("frame_") && name.ends_with(".vtu"))
        || (name.starts_with("problem_step") && name.ends_with(".dat"))
        || name.ends_with(".tmp")
}

/// Creates the output directory, or checks an existing one: when it holds
/// another run's outputs ([`is_run_output`]) it is refused unless
/// `overwrite`, which removes them first (other files are left alone).
pub(super) fn prepare_output_dir(out: &Path, overwrite: bool) -> Result<()> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create output directory {}", out.display()))?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(out)
        .with_context(|| format!("cannot read output directory {}", out.display()))?
        .flatten()
        .filter(|e| e.path().is_file())
        .filter(|e| e.file_name().to_str().is_some_and(is_run_output))
        .map(|e| e.path())
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    found.sort();
    if !overwrite {
        let names: Vec<String> = found
            .iter()
            .take(3)
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        anyhow::bail!(
            "output directory {} holds the outputs of another run ({} files: {}{}); \
             pass --overwrite to replace them, or choose another --out",
            out.display(),
            found.len(),
            names.join(", "),
            if found.len() > 3 { ", …" } else { "" }
        );
    }
    for p in &found {
        std::fs::remove_file(p)
            .with_context(|| format!("--overwrite: cannot remove {}", p.display()))?;
    }
    log::info!(
        "--overwrite: removed {} files of an earlier run from {}",
        found.len(),
        out.display()
    );
    Ok(())
}

/// A warning when a sphere starts (or an inlet emits one) fast enough to
/// cross its own radius in one time step: contacts are found at the start
/// of a step, so such a sphere can pass through a wall or another sphere
/// between two detections (tunnelling).
pub fn tunnelling_risk(world: &crate::world::World) -> Option<String> {
    let h = world.time_step;
    let b = &world.bodies;
    // (speed, radius, body index or inlet index)
    let bodies = (0..b.len()).map(|i| (b.vel[i].length(), b.radius[i], Ok(i)));
    let inlets = world.inlets.iter().enumerate().map(|(k, inl)| {
        let s = &inl.settings;
        // The jitter is per component: at most √3 times it in length.
        let v = s.velocity.length() + 3f64.sqrt() * s.velocity_jitter;
        (v, s.radius, Err(k))
    });
    bodies
        .chain(inlets)
        .filter(|(v, r, _)| v * h > *r)
        .max_by(|a, b| (a.0 * h / a.1).total_cmp(&(b.0 * h / b.1)))
        .map(|(v, r, who)| {
            let what = match who {
                Ok(i) => format!("sphere {i}"),
                Err(k) => format!("inlet {:?}", world.inlets[k].settings.name),
            };
            format!(
                "tunnelling risk: {what} moves {v:.3e} m/s, {:.3e} m a step of {h:e} s, more than its radius {r:e} m; \
                 it may pass through walls or spheres between two contact detections (use a smaller time_step)",
                v * h
            )
        })
}

/// The first non-finite quantity of the bodies, named with its body, or
/// `None` when every position, orientation and velocity is finite.
pub(super) fn non_finite(b: &Bodies) -> Option<String> {
    (0..b.len()).find_map(|i| {
        let quantity = if !b.pos[i].is_finite() {
            format!("position is {}", b.pos[i])
        } else if !b.vel[i].is_finite() {
            format!("velocity is {} m/s", b.vel[i])
        } else if !b.omega[i].is_finite() {
            format!("angular velocity is {} rad/s", b.omega[i])
        } else if !b.rot[i].is_finite() {
            format!("orientation is {}", b.rot[i])
        } else {
            return None;
        };
        Some(format!("body {i}'s {quantity}"))
    })
}
