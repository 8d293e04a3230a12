//! What a run reports at its end besides the state: the picture of the
//! final state, and the analyses recorded in `summary.json` (settling, the
//! floor and the pile's size, the angle of repose, a drum's dynamic angle).

use std::path::Path;

use crate::analysis::{measure_heap, measure_pile, DrumSampler, SettleDetector};
use crate::output::summary::Summary;
use crate::render::{render_bodies, run_caption, write_png, ParticleOptions};
use crate::scene::Scene;

use super::scene_floor;

/// Writes `final.png`, the picture of the final state (settings from
/// `scene.output.picture`), and logs its path. A picture that cannot be
/// made (non-finite positions after a diverged step) or written is a
/// warning, not an error: the numbers of the run matter more.
pub(super) fn write_picture(scene: &Scene, world: &crate::world::World, path: &Path) {
    let pic = &scene.output.picture;
    let b = &world.state.bodies;
    let shown = crate::render::shown_above_floor(scene.analysis.floor, b.pos.iter().map(|p| p.z));
    let pos: Vec<glam::DVec3> = shown.iter().map(|&i| b.pos[i]).collect();
    let vel: Vec<glam::DVec3> = shown.iter().map(|&i| b.vel[i]).collect();
    let radius: Vec<f64> = shown.iter().map(|&i| b.radius[i]).collect();
    let surfaces: Vec<Option<crate::render::Surface>> = if b.has_shapes() {
        shown
            .iter()
            .map(|&i| {
                b.shape_of(i)
                    .map(|s| crate::shape::surface_triangles(s, b.pos[i], b.rot[i]))
            })
            .collect()
    } else {
        Vec::new()
    };
    let result = pic
        .colour
        .values(&pos, &vel)
        .and_then(|values| {
            let opts = ParticleOptions {
                width: pic.width,
                height: pic.height,
                colour_label: pic.colour.label().to_string(),
                caption: Some(run_caption(
                    &scene.name,
                    world.state.time,
                    pos.len(),
                    surfaces.iter().all(Option::is_none),
                    pic.colour,
                )),
                look_along: pic.look_along,
                walls: crate::boundary::mesh_triangles(&world.boundaries()),
                outlines: crate::render::cylinder_outlines(&world.boundaries()),
            };
            render_bodies(&pos, &radius, &values, &surfaces, &opts)
        })
        .map_err(anyhow::Error::new)
        .and_then(|img| write_png(path, &img).map_err(anyhow::Error::new));
    match result {
        Ok(()) => log::info!("picture of the final state: {}", path.display()),
        Err(e) => log::warn!("no picture of the final state ({}): {e:#}", path.display()),
    }
}

/// Writes the settling record, the floor and (when the scene asks for it
/// and the run did not fail) the heap measurement into `summary.extra`. A
/// heap that cannot be measured is a warning and an
/// `angle_of_repose_error` entry, not a failed run.
pub(super) fn record_analysis(
    scene: &Scene,
    world: &crate::world::World,
    settle: Option<&SettleDetector>,
    stopped: bool,
    completed: bool,
    summary: &mut Summary,
) {
    let extra = &mut summary.extra;
    let settling = match settle {
        Some(d) => {
            let r = d.report(stopped);
            match r.settle_time_s {
                // A stopped run has said so already.
                Some(t) if !stopped => log::info!("pile settled at t = {t:.4} s"),
                Some(_) => {}
                None if !world.inlets_finished() => {
                    log::info!("pile not settled at the end: the inlets were still emitting")
                }
                None => log::info!(
                    "pile not settled at the end ({}threshold {:.3e} J for {:.3} s)",
                    r.ke_per_particle_final_j
                        .map_or(String::new(), |ke| format!(
                            "mean kinetic energy per particle {ke:.3e} J, "
                        )),
                    r.ke_threshold_j,
                    r.hold_s
                ),
            }
            serde_json::to_value(r).unwrap_or(serde_json::Value::Null)
        }
        None => serde_json::Value::Null,
    };
    extra.insert("settling".into(), settling);
    let floor = scene
        .analysis
        .floor
        .or_else(|| scene_floor(&world.boundaries(), &world.state.bodies));
    if let Some(z) = floor {
        extra.insert("floor_z".into(), z.into());
        // The pile's size (Acary & Bourrier 2021, Fig. 5) needs no fit:
        // recorded whenever the floor is known, even for a layer too flat for
        // an angle.
        if completed && !world.state.bodies.is_empty() {
            let b = &world.state.bodies;
            match measure_pile(&b.pos, &b.radius, z) {
                Ok(p) => {
                    // Bodies of other shapes are measured by their bounding balls.
                    let what = if b.has_shapes() { "bodies" } else { "spheres" };
                    log::info!(
                        "pile: height {:.4} m = {:.2} diameters; {} {what} on the floor{}{}",
                        p.height,
                        p.height_over_diameter,
                        p.bottom_spheres,
                        match (p.bottom_mean_radius, p.bottom_mean_radius_over_diameter) {
                            (Some(r), Some(d)) =>
                                format!(", mean radius {r:.4} m = {d:.2} diameters"),
                            _ => String::new(),
                        },
                        if p.spheres_below_floor > 0 {
                            let n = p.spheres_below_floor;
                            let what = match (n, b.has_shapes()) {
                                (1, true) => "body",
                                (1, false) => "sphere",
                                _ => what,
                            };
                            format!("; {n} {what} fell below the floor")
                        } else {
                            String::new()
                        }
                    );
                    extra.insert(
                        "pile".into(),
                        serde_json::to_value(p).unwrap_or(serde_json::Value::Null),
                    );
                }
                Err(e) => log::warn!("cannot measure the pile: {e}"),
            }
        }
    }
    let Some(heap) = &scene.analysis.heap else {
        return;
    };
    if !completed {
        log::warn!("the run failed or diverged: the heap is not measured");
        return;
    }
    let b = &world.state.bodies;
    let floor = floor.unwrap_or_else(|| {
        (0..b.len())
            .map(|i| b.pos[i].z - b.radius[i])
            .fold(f64::INFINITY, f64::min)
    });
    match measure_heap(&b.pos, &b.radius, floor, heap) {
        Ok(m) => {
            log::info!(
                "angle of repose ({}): {:.2}° ± {:.2}°; height {:.4} m, base radius {:.4} m, atan(H/R) = {:.2}°",
                m.method.name(),
                m.angle_deg,
                m.angle_stderr_deg,
                m.height,
                m.base_radius,
                m.height_base_angle_deg
            );
            extra.insert(
                "angle_of_repose".into(),
                serde_json::to_value(m).unwrap_or(serde_json::Value::Null),
            );
        }
        Err(e) => {
            log::warn!("cannot measure the heap: {e}");
            extra.insert("angle_of_repose_error".into(), e.to_string().into());
        }
    }
}

/// Writes `discharge.csv` (time, bodies and mass below the plane, every
/// step) and `extra.discharge` (or `discharge_error`).
pub(super) fn record_discharge(
    d: &crate::analysis::DischargeSampler,
    out: &std::path::Path,
    completed: bool,
    summary: &mut Summary,
) {
    let path = out.join("discharge.csv");
    let written = crate::output::write_atomic(&path, |w| {
        use std::io::Write;
        writeln!(w, "time,discharged,discharged_mass")?;
        for (t, m, n) in &d.samples {
            writeln!(w, "{t},{n},{m}")?;
        }
        Ok(())
    });
    if let Err(e) = written {
        log::warn!("cannot write {}: {e}", path.display());
    }
    if !completed {
        log::warn!("the run failed or diverged: the discharge rate is not reported");
        return;
    }
    match d.finish() {
        Ok(r) => {
            log::info!(
                "discharge below z = {} m: {:.4e} kg/s ± {:.1e} ({:.1} bodies/s) from t = {:.3} s to {:.3} s; {} bodies ({:.4e} kg) discharged",
                d.settings.below,
                r.rate_kg_s,
                r.rate_stderr_kg_s,
                r.rate_per_s,
                r.window_s[0],
                r.window_s[1],
                r.discharged,
                r.discharged_kg
            );
            summary.extra.insert(
                "discharge".into(),
                serde_json::to_value(r).unwrap_or(serde_json::Value::Null),
            );
        }
        Err(e) => {
            log::warn!("cannot measure the discharge: {e}");
            summary.extra.insert("discharge_error".into(), e.into());
        }
    }
}

/// Writes `extra.dynamic_angle` (or `dynamic_angle_error`).
pub(super) fn record_dynamic_angle(d: DrumSampler, completed: bool, summary: &mut Summary) {
    if !completed {
        log::warn!("the run failed or diverged: the dynamic angle is not reported");
        return;
    }
    match d.finish() {
        Ok(a) => {
            log::info!(
                "dynamic angle of drum {:?}: {:.2}° (sd {:.2}° over {} samples from t = {:.3} s to {:.3} s; {} of them rising toward the wall's rising side)",
                a.boundary,
                a.angle_deg,
                a.angle_sd_deg,
                a.samples,
                a.window_s[0],
                a.window_s[1],
                a.samples_rising_with_the_wall
            );
            summary.extra.insert(
                "dynamic_angle".into(),
                serde_json::to_value(a).unwrap_or(serde_json::Value::Null),
            );
        }
        Err(e) => {
            log::warn!("cannot measure the dynamic angle: {e}");
            summary
                .extra
                .insert("dynamic_angle_error".into(), e.to_string().into());
        }
    }
}
