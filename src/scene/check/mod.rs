//! Validation of a scene: every rule of the format, each violation
//! reported as an [`Issue`] with the field path and the offending value.
//! The fields' own rules come first ([`fields`]); then the spheres are
//! generated and checked against the envelope, the boundaries and the
//! tracked ids ([`check`]). The checks that read the file's text before it
//! becomes a scene (its version, NaN and ∞ anywhere) are in [`text`].

use super::error::{Issue, SceneError};
use super::generate::{self, PlacedSphere};
use super::overlaps;
use super::schema::{Scene, SphereSource};

mod fields;
mod text;

use fields::{check_fields, fmt_vec};
pub(crate) use text::{non_finite_numbers, peek_version};

/// Full validation: fields, then generation, then the spheres against the
/// boundaries and the tracked ids. Returns the generated spheres. With
/// `warn`, spheres that start overlapping a boundary or each other are
/// logged (once per built world, not at every validation of the scene).
pub(crate) fn check(scene: &Scene, warn: bool) -> Result<Vec<PlacedSphere>, SceneError> {
    let invalid = |issues| SceneError::Invalid {
        file: label(scene),
        issues,
    };
    let issues = check_fields(scene);
    if !issues.is_empty() {
        return Err(invalid(issues));
    }
    let placed = generate::generate(scene).map_err(invalid)?;

    let mut issues = Vec::new();
    // An envelope past the largest radius makes distant pairs contacts: the
    // problem grows with the envelope cubed (a 6.3 GB problem for 3,136
    // spheres was seen), so it is refused before anything is allocated.
    if let Some(e) = scene.contact.envelope {
        let inlet_max = scene.spheres.iter().filter_map(|s| match s {
            SphereSource::Inlet(i) => Some(
                i.radius_max
                    .unwrap_or(i.effective_radius())
                    .max(i.effective_radius()),
            ),
            _ => None,
        });
        let r_max = placed
            .iter()
            .map(|p| p.init.radius)
            .chain(inlet_max)
            .fold(0.0f64, f64::max);
        if r_max > 0.0 && e > r_max {
            issues.push(Issue::new(
                "contact.envelope",
                format!(
                    "{e} m is larger than the largest sphere radius ({r_max} m): every pair \
                     closer than two radii plus {e} m would enter the contact problem, which grows \
                     with the envelope cubed; use at most the radius (the default is 0.1 × it)"
                ),
            ));
        }
    }
    if let Some(p) = placed.iter().find(|p| !p.init.pos.is_finite()) {
        issues.push(Issue::new(
            format!(
                "spheres[{}] ({}) sphere {}",
                p.source,
                scene.spheres[p.source].kind(),
                p.index
            ),
            format!(
                "centre {} is not finite (origin or spacing too large)",
                fmt_vec(p.init.pos)
            ),
        ));
        return Err(invalid(issues));
    }
    let boundaries = scene.built_boundaries()?;
    for (bi, b) in boundaries.iter().enumerate() {
        // Per source: the first sphere outside, and how many more.
        let mut outside: Vec<(usize, &PlacedSphere)> = Vec::new(); // (count, first)
        let mut overlapping = 0usize;
        if let crate::boundary::Shape::Cylinder { radius, .. } = b.shape {
            if let Some(p) = placed.iter().find(|p| p.init.radius >= radius) {
                issues.push(Issue::new(
                    format!("boundaries[{bi}].radius"),
                    format!(
                        "cylinder {:?} of radius {radius} cannot hold spheres[{}] ({}) of {} {}",
                        b.name,
                        p.source,
                        scene.spheres[p.source].kind(),
                        if p.body.is_some() {
                            "bounding radius"
                        } else {
                            "radius"
                        },
                        p.init.radius
                    ),
                ));
                continue;
            }
        }
        for p in &placed {
            match b.clearance(p.init.pos) {
                Some(d) if d >= 0.0 => {
                    if d < p.init.radius && overlaps::body_crosses_boundary(p, b) {
                        overlapping += 1;
                    }
                }
                _ => match outside.last_mut() {
                    Some((n, q)) if q.source == p.source => *n += 1,
                    _ => outside.push((1, p)),
                },
            }
        }
        for (count, p) in outside {
            let kind = scene.spheres[p.source].kind();
            let who = if kind == "Sphere" {
                format!("spheres[{}] ({kind})", p.source)
            } else {
                format!("spheres[{}] ({kind}) sphere {}", p.source, p.index)
            };
            let more = if count > 1 {
                format!(" (and {} more spheres of this source)", count - 1)
            } else {
                String::new()
            };
            issues.push(Issue::new(
                who,
                format!(
                    "centre {} is outside boundary {:?} (boundaries[{bi}]){more}",
                    fmt_vec(p.init.pos),
                    b.name
                ),
            ));
        }
        if warn && overlapping > 0 {
            log::warn!(
                "{}: {overlapping} spheres start overlapping boundary {:?}; contact will push them out",
                label(scene),
                b.name
            );
        }
    }

    // An inlet's region must hold its largest sphere somewhere clear of
    // the boundaries (while they stand still; moving ones may make room
    // later): else the inlet stops at its first such sphere.
    if boundaries.iter().all(|b| b.geometry_still()) {
        for (i, src) in scene.spheres.iter().enumerate() {
            let SphereSource::Inlet(inl) = src else {
                continue;
            };
            let r = inl.largest_radius();
            if r > 0.0 && !crate::inlet::region_holds(&inl.region, &boundaries, r) {
                issues.push(Issue::new(
                    format!("spheres[{i}].region"),
                    format!(
                        "no place of the region, among {} tried, holds a sphere of radius {r} m (the largest this inlet emits) inside the boundaries and clear of them: the inlet would stop at its first such sphere; move or enlarge the region, or give smaller sizes",
                        crate::inlet::REGION_CHECK_TRIES
                    ),
                ));
            }
        }
    }

    // Inlets add their spheres after the built ones: ids up to the total.
    let total = placed.len().saturating_add(scene.inlet_count());
    for (i, &id) in scene.output.track.iter().enumerate() {
        if id >= total {
            issues.push(Issue::new(
                format!("output.track[{i}]"),
                format!(
                    "body id {id} is out of range (the scene has {total} sphere{}, ids 0..={})",
                    if total == 1 { "" } else { "s" },
                    total.saturating_sub(1)
                ),
            ));
        }
    }
    if !issues.is_empty() {
        return Err(invalid(issues));
    }
    if warn {
        overlaps::warn_overlaps(scene, &placed, &label(scene));
    }
    Ok(placed)
}

fn label(scene: &Scene) -> String {
    if scene.file.is_empty() {
        "<scene>".to_string()
    } else {
        scene.file.clone()
    }
}
