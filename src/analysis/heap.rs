//! The heap measurement: surface profile, flank fits, height and base
//! radius of a pile of spheres. The method is described in the [module
//! docs](super).

use glam::{DVec2, DVec3};
use serde::{Deserialize, Serialize};

use super::fit::fit_line;
use super::AnalysisError;

/// A horizontal axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Axis {
    /// The x axis.
    #[default]
    X,
    /// The y axis.
    Y,
}

impl Axis {
    /// `"x"` or `"y"`.
    pub fn name(self) -> &'static str {
        match self {
            Axis::X => "x",
            Axis::Y => "y",
        }
    }
}

/// How the surface profile is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeapMethod {
    /// A conical (3-D) heap: bins of horizontal distance from the vertical
    /// pile axis; one flank, all directions together.
    #[default]
    Radial,
    /// A planar (2-D, wedge-shaped) heap whose crest runs across `axis`:
    /// bins of the coordinate along `axis`; two flanks (left: below the
    /// crest coordinate, right: above it) fitted separately.
    Planar {
        /// The axis along which the heap's cross-section is taken (the
        /// crest runs along the other horizontal axis).
        axis: Axis,
    },
}

impl HeapMethod {
    /// A short name: `radial`, `planar-x` or `planar-y`.
    pub fn name(self) -> &'static str {
        match self {
            HeapMethod::Radial => "radial",
            HeapMethod::Planar { axis: Axis::X } => "planar-x",
            HeapMethod::Planar { axis: Axis::Y } => "planar-y",
        }
    }
}

/// Default lower end of the flank window, as a fraction of the profile's
/// height range (excludes the toe).
pub const DEFAULT_FLANK_FROM: f64 = 0.2;
/// Default upper end of the flank window (excludes the cap).
pub const DEFAULT_FLANK_TO: f64 = 0.8;
/// Default quantile of the floor-layer footprint that defines the base radius.
pub const DEFAULT_BASE_QUANTILE: f64 = 0.98;
/// Default least number of profile bins in a flank fit.
pub const DEFAULT_MIN_BINS: usize = 4;

/// Settings of the heap measurement (scene: `analysis.heap`; every field
/// optional).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HeapSettings {
    /// Radial (conical heap) or planar (2-D heap). Default `Radial`.
    pub method: HeapMethod,
    /// Horizontal position (x, y) of the pile axis (m); for a planar heap
    /// only the component along its axis is used (the crest). `None`: the
    /// horizontal centroid of the sphere centres.
    pub center: Option<DVec2>,
    /// Width of the profile bins (m, > 0). `None`: the mean sphere diameter.
    pub bin_width: Option<f64>,
    /// Lower end of the flank window as a fraction of the profile's height
    /// range, in [0, 1) (default 0.2): lower bins are the toe.
    pub flank_from: f64,
    /// Upper end of the flank window, in (`flank_from`, 1] (default 0.8):
    /// higher bins are the cap.
    pub flank_to: f64,
    /// Quantile of the floor layer's footprint radii taken as the base
    /// radius, in (0, 1] (default 0.98; 1 = the outermost sphere).
    pub base_quantile: f64,
    /// Least number of bins a flank fit needs (≥ 3; default 4).
    pub min_bins: usize,
    /// Height (m, world z) above which sphere centres are not part of the
    /// heap — what still sits in a funnel over it (the fixed-funnel method,
    /// `scenes/funnel.ron`). `None` (default): every sphere on the floor.
    pub ceiling: Option<f64>,
}

impl Default for HeapSettings {
    fn default() -> Self {
        HeapSettings {
            method: HeapMethod::Radial,
            center: None,
            bin_width: None,
            flank_from: DEFAULT_FLANK_FROM,
            flank_to: DEFAULT_FLANK_TO,
            base_quantile: DEFAULT_BASE_QUANTILE,
            min_bins: DEFAULT_MIN_BINS,
            ceiling: None,
        }
    }
}

impl HeapSettings {
    /// Default settings with the given method.
    pub fn with_method(method: HeapMethod) -> Self {
        HeapSettings {
            method,
            ..Default::default()
        }
    }

    /// Every value that is out of range, as `(field, reason)` (empty when
    /// the settings are valid).
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut p = Vec::new();
        if let Some(c) = self.center {
            if !c.is_finite() {
                p.push(("center", format!("must be finite (got ({}, {}))", c.x, c.y)));
            }
        }
        if let Some(c) = self.ceiling {
            if !c.is_finite() {
                p.push(("ceiling", format!("must be a finite height (got {c})")));
            }
        }
        if let Some(w) = self.bin_width {
            if !(w.is_finite() && w > 0.0) {
                p.push((
                    "bin_width",
                    format!("must be a finite number > 0 (got {w})"),
                ));
            }
        }
        let (a, b) = (self.flank_from, self.flank_to);
        if !(a.is_finite() && (0.0..1.0).contains(&a)) {
            p.push(("flank_from", format!("must be in [0, 1) (got {a})")));
        } else if !(b.is_finite() && b > a && b <= 1.0) {
            p.push((
                "flank_to",
                format!("must be in (flank_from, 1] = ({a}, 1] (got {b})"),
            ));
        }
        let q = self.base_quantile;
        if !(q.is_finite() && q > 0.0 && q <= 1.0) {
            p.push(("base_quantile", format!("must be in (0, 1] (got {q})")));
        }
        if self.min_bins < 3 {
            p.push((
                "min_bins",
                format!(
                    "must be ≥ 3 (a line fit with an error needs 3 points; got {})",
                    self.min_bins
                ),
            ));
        }
        p
    }
}

/// The straight-line fit on one flank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlankFit {
    /// `radial`, `left` (below the crest coordinate) or `right`.
    pub side: String,
    /// Angle of the flank, atan(|slope|) (degrees).
    pub angle_deg: f64,
    /// Standard error of the angle (degrees): the slope's standard error
    /// through the derivative of atan, s.e.(slope) / (1 + slope²).
    pub angle_stderr_deg: f64,
    /// Fitted slope d(height)/d(distance from the axis); negative on a heap.
    pub slope: f64,
    /// Standard error of the slope.
    pub slope_stderr: f64,
    /// Profile bins fitted.
    pub bins: usize,
    /// Distance from the axis (m) of the innermost fitted bin's centre.
    pub from: f64,
    /// Distance from the axis (m) of the outermost fitted bin's centre.
    pub to: f64,
}

/// The measured shape of a heap: angle of repose with its standard error,
/// height, base radius and the height/base-radius angle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeapMeasurement {
    /// The profile method.
    pub method: HeapMethod,
    /// The method and its parameters in words.
    pub description: String,
    /// Angle of repose (degrees): the mean of the flank angles.
    pub angle_deg: f64,
    /// Its standard error (degrees): √(Σ sᵢ²) / n over the n flanks fitted.
    pub angle_stderr_deg: f64,
    /// The flank fits (one for `Radial`; `left` and/or `right` for `Planar`).
    pub flanks: Vec<FlankFit>,
    /// Height: top of the highest sphere above the floor (m).
    pub height: f64,
    /// Base radius (m): the `base_quantile` of the footprint radii
    /// (distance from the axis + sphere radius) of the floor layer.
    pub base_radius: f64,
    /// atan(height / base radius) (degrees).
    pub height_base_angle_deg: f64,
    /// Number of spheres measured.
    pub spheres: usize,
    /// Spheres left out because their centre is below the floor (fallen
    /// off a plate).
    #[serde(default)]
    pub spheres_below_floor: usize,
    /// Spheres in the floor layer (centre at most one mean diameter above
    /// the floor): the heap's footprint, from which the base radius comes.
    /// Not the pile's `bottom_spheres`, which counts only those touching
    /// the floor (a gap of at most [`TOUCH_GAP`] of the radius), so the
    /// floor layer also holds spheres lying low on others.
    pub floor_layer_spheres: usize,
    /// Of them, the spheres outside the pile's footprint: floor-layer
    /// spheres not connected to the pile through spheres that touch
    /// (strays that rolled away), left out of the base radius.
    #[serde(default)]
    pub floor_layer_strays: usize,
    /// Profile bins fitted, over all flanks.
    pub bins_used: usize,
    /// Profile bins holding at least one sphere, over all flanks.
    pub bins_total: usize,
    /// Horizontal position (x, y) of the pile axis used (m).
    pub center: DVec2,
    /// Height of the floor (m).
    pub floor_z: f64,
    /// Width of the profile bins (m).
    pub bin_width: f64,
    /// The flank window: profile heights above the floor (m) from which to
    /// which bins were fitted.
    pub flank_window: [f64; 2],
    /// The settings measured with (for re-measuring the same way).
    pub settings: HeapSettings,
}

/// A sphere touches the floor when the gap under it is at most this
/// fraction of its radius (resting spheres overlap or float by far less;
/// the next layer up is ≈ 0.6 radius or more above the floor).
pub const TOUCH_GAP: f64 = 0.05;

/// One profile bin: its highest sphere top above the floor, and that
/// sphere's distance from the axis.
#[derive(Clone, Copy, Debug)]
struct Bin {
    distance: f64,
    height: f64,
}

/// The surface profile: for spheres given as `(distance from the axis, top
/// above the floor)`, the highest top in each bin of width `w`, placed at
/// the distance of the sphere it belongs to; among equal tops (a lattice
/// layer: within `tie`) the outermost, which is the one nearest the free
/// surface of a falling flank. Empty bins are left out.
fn profile(points: impl Iterator<Item = (f64, f64)>, w: f64, tie: f64) -> Vec<Bin> {
    let empty = Bin {
        distance: 0.0,
        height: f64::NEG_INFINITY,
    };
    let mut best: Vec<Bin> = Vec::new();
    for (d, top) in points {
        // Distances are finite and ≥ 0, and w > 0: the index is finite; cap
        // it so a far stray sphere cannot ask for a huge vector.
        let k = ((d / w).floor() as usize).min(1 << 24);
        if k >= best.len() {
            best.resize(k + 1, empty);
        }
        let b = &mut best[k];
        if top > b.height + tie || (top >= b.height - tie && d > b.distance) {
            *b = Bin {
                distance: d,
                height: top,
            };
        }
    }
    best.into_iter().filter(|b| b.height.is_finite()).collect()
}

/// Two spheres whose centre distance is at most this factor times the sum
/// of their radii touch, for the pile's connectivity (resting neighbours
/// overlap or sit a rounding apart).
pub const FOOTPRINT_TOUCH: f64 = 1.05;

/// The pile's footprint: the indices of the floor-layer spheres (centre at
/// most `layer` above the floor) of the pile, the largest group of spheres
/// connected through touching ones ([`FOOTPRINT_TOUCH`]) that reaches the
/// floor layer. A grain that
/// rolled away from the pile, or a few that gathered at a wall, form groups
/// of their own and are left out. Neighbours are found on a grid of cells
/// one largest diameter wide (O(n) for spheres of similar size), the
/// groups by union–find; ties between equal groups go to the one with the
/// lowest sphere index.
fn pile_footprint(positions: &[DVec3], radii: &[f64], floor_z: f64, layer: f64) -> Vec<usize> {
    let n = positions.len();
    let r_max = radii.iter().copied().fold(0.0, f64::max);
    let cell = (2.0 * r_max * FOOTPRINT_TOUCH).max(f64::MIN_POSITIVE);
    let key = |p: DVec3| {
        let c = (p / cell).floor();
        (c.x as i64, c.y as i64, c.z as i64)
    };
    let mut grid: std::collections::HashMap<(i64, i64, i64), Vec<usize>> = Default::default();
    for (i, p) in positions.iter().enumerate() {
        grid.entry(key(*p)).or_default().push(i);
    }
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut a: usize) -> usize {
        while parent[a] != a {
            parent[a] = parent[parent[a]];
            a = parent[a];
        }
        a
    }
    for i in 0..n {
        let (cx, cy, cz) = key(positions[i]);
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let Some(cands) = grid.get(&(cx + dx, cy + dy, cz + dz)) else {
                        continue;
                    };
                    for &j in cands {
                        if j <= i {
                            continue;
                        }
                        let d = positions[i].distance(positions[j]);
                        if d <= FOOTPRINT_TOUCH * (radii[i] + radii[j]) {
                            let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                            if a != b {
                                parent[a.max(b)] = a.min(b);
                            }
                        }
                    }
                }
            }
        }
    }
    let roots: Vec<usize> = (0..n).map(|i| find(&mut parent, i)).collect();
    let in_layer = |i: usize| positions[i].z - floor_z <= layer;
    // Only a group that reaches the floor layer stands on the floor (a
    // stream still falling may be the largest group of all).
    let mut size = vec![0usize; n];
    let mut on_floor = vec![false; n];
    for (i, &r) in roots.iter().enumerate() {
        size[r] += 1;
        on_floor[r] |= in_layer(i);
    }
    let Some(pile) = (0..n)
        .filter(|&r| on_floor[r])
        .max_by(|&a, &b| size[a].cmp(&size[b]).then(b.cmp(&a)))
    else {
        return Vec::new();
    };
    (0..n)
        .filter(|&i| roots[i] == pile && in_layer(i))
        .collect()
}

/// The `q` quantile (nearest rank) of `v` (not empty).
fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// Checks the spheres and the floor, and keeps the spheres on the floor:
/// those whose centre is below it are not (they fell off a plate onto
/// whatever catches them). Returns the kept centres and radii and how many
/// were left out.
fn on_floor(
    positions: &[DVec3],
    radii: &[f64],
    floor_z: f64,
) -> Result<(Vec<DVec3>, Vec<f64>, usize), AnalysisError> {
    super::check_counts(positions, radii)?;
    if !floor_z.is_finite() {
        return Err(AnalysisError::InvalidSetting {
            field: "floor".into(),
            reason: format!("must be a finite number (got {floor_z})"),
        });
    }
    for (i, (p, &r)) in positions.iter().zip(radii).enumerate() {
        if !p.is_finite() {
            return Err(AnalysisError::InvalidSphere {
                index: i,
                reason: format!("centre ({}, {}, {}) is not finite", p.x, p.y, p.z),
            });
        }
        if !(r.is_finite() && r > 0.0) {
            return Err(AnalysisError::InvalidSphere {
                index: i,
                reason: format!("radius must be finite and > 0 (got {r})"),
            });
        }
    }
    let (kept, kept_r): (Vec<DVec3>, Vec<f64>) = positions
        .iter()
        .zip(radii)
        .filter(|(p, _)| p.z >= floor_z)
        .map(|(p, r)| (*p, *r))
        .unzip();
    if kept.is_empty() {
        return Err(AnalysisError::Degenerate(format!(
            "no sphere top is above the floor at z = {floor_z}: all {} sphere centres are below it (is the floor right?)",
            positions.len()
        )));
    }
    let below = positions.len() - kept.len();
    Ok((kept, kept_r, below))
}

/// The size of a pile as Acary & Bourrier 2021 measure it (§6.2, Fig. 5):
/// its height and the mean radius of its bottom, both also over the mean
/// diameter. Unlike the angle it needs no slope to fit, so a single layer
/// has one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PileSize {
    /// Height of the floor (m).
    pub floor_z: f64,
    /// Spheres on the floor (centre at or above it).
    pub spheres: usize,
    /// Spheres left out because their centre is below the floor (fallen
    /// off a plate).
    pub spheres_below_floor: usize,
    /// Mean sphere diameter (m), the unit of the normalised sizes.
    pub mean_diameter: f64,
    /// Top of the highest sphere above the floor (m).
    pub height: f64,
    /// Height over the mean diameter (1 for a single layer).
    pub height_over_diameter: f64,
    /// Spheres in contact with the floor (gap ≤ [`TOUCH_GAP`] × radius):
    /// the bottom of the pile.
    pub bottom_spheres: usize,
    /// Mean horizontal distance (m) of the bottom spheres' centres from
    /// their centroid: the "mean radius" of the pile of Acary & Bourrier 2021.
    /// `None` (written `null`) when no sphere touches the floor.
    pub bottom_mean_radius: Option<f64>,
    /// The same over the mean diameter.
    pub bottom_mean_radius_over_diameter: Option<f64>,
}

/// Measures the [`PileSize`] of spheres on the floor at `floor_z`.
///
/// Errors (never a panic): as [`measure_heap`] for the spheres and the
/// floor; no sphere top above the floor.
pub fn measure_pile(
    positions: &[DVec3],
    radii: &[f64],
    floor_z: f64,
) -> Result<PileSize, AnalysisError> {
    let (positions, radii, spheres_below_floor) = on_floor(positions, radii, floor_z)?;
    let n = positions.len();
    let mean_d = 2.0 * radii.iter().sum::<f64>() / n as f64;
    let height = (0..n)
        .map(|i| positions[i].z + radii[i] - floor_z)
        .fold(f64::NEG_INFINITY, f64::max);
    // "The spheres that are in contact with the horizontal surface, which
    // constitute the bottom of the pile. The centroid of [these] is computed
    // in the horizontal plane and the mean radius is the average distance
    // to the centroid" (Acary & Bourrier 2021, §6.2).
    let touching: Vec<DVec2> = (0..n)
        .filter(|&i| positions[i].z - radii[i] - floor_z <= TOUCH_GAP * radii[i])
        .map(|i| positions[i].truncate())
        .collect();
    let bottom_mean_radius = (!touching.is_empty()).then(|| {
        let k = touching.len() as f64;
        let c = touching.iter().sum::<DVec2>() / k;
        touching.iter().map(|p| (*p - c).length()).sum::<f64>() / k
    });
    Ok(PileSize {
        floor_z,
        spheres: n,
        spheres_below_floor,
        mean_diameter: mean_d,
        height,
        height_over_diameter: height / mean_d,
        bottom_spheres: touching.len(),
        bottom_mean_radius,
        bottom_mean_radius_over_diameter: bottom_mean_radius.map(|r| r / mean_d),
    })
}

/// Measures the heap formed by spheres with centres `positions` and radii
/// `radii` resting on the horizontal floor at height `floor_z` (z is up),
/// as described in the [module docs](super).
///
/// Errors (never a panic, never NaN): no spheres; `positions` and `radii`
/// of different lengths; a non-finite position, a radius that is not finite
/// and > 0; a non-finite floor; invalid settings; no sphere top above the
/// floor or no sphere resting on it; too few profile bins in the flank
/// window for a line fit (a single sphere, a pile a few grains wide).
pub fn measure_heap(
    positions: &[DVec3],
    radii: &[f64],
    floor_z: f64,
    settings: &HeapSettings,
) -> Result<HeapMeasurement, AnalysisError> {
    if let Some((field, reason)) = settings.problems().into_iter().next() {
        return Err(AnalysisError::InvalidSetting {
            field: format!("heap.{field}"),
            reason,
        });
    }
    let (mut positions, mut radii, spheres_below_floor) = on_floor(positions, radii, floor_z)?;
    if let Some(c) = settings.ceiling {
        (positions, radii) = positions
            .into_iter()
            .zip(radii)
            .filter(|(p, _)| p.z <= c)
            .unzip();
        if positions.is_empty() {
            return Err(AnalysisError::Degenerate(format!(
                "no sphere centre between the floor at z = {floor_z} and the ceiling at z = {c}"
            )));
        }
    }
    let n = positions.len();
    let mean_r = radii.iter().sum::<f64>() / n as f64;
    let w = settings.bin_width.unwrap_or(2.0 * mean_r);
    let center = settings
        .center
        .unwrap_or_else(|| positions.iter().map(|p| p.truncate()).sum::<DVec2>() / n as f64);

    // Tops closer than this are one lattice layer, only rounded apart.
    let tie = 1e-6 * mean_r;
    let top = |i: usize| positions[i].z + radii[i] - floor_z;
    let height = (0..n).map(top).fold(f64::NEG_INFINITY, f64::max);
    if height <= 0.0 {
        return Err(AnalysisError::Degenerate(format!(
            "no sphere top is above the floor at z = {floor_z} (highest top at z = {})",
            floor_z + height
        )));
    }

    // Signed coordinate of each sphere: the distance from the axis (radial)
    // or the coordinate relative to the crest (planar).
    let signed = |i: usize| -> f64 {
        let p = positions[i];
        match settings.method {
            HeapMethod::Radial => (p.truncate() - center).length(),
            HeapMethod::Planar { axis: Axis::X } => p.x - center.x,
            HeapMethod::Planar { axis: Axis::Y } => p.y - center.y,
        }
    };
    let sides: Vec<(&str, Vec<Bin>)> = match settings.method {
        HeapMethod::Radial => vec![(
            "radial",
            profile((0..n).map(|i| (signed(i), top(i))), w, tie),
        )],
        HeapMethod::Planar { .. } => vec![
            (
                "left",
                profile(
                    (0..n)
                        .map(|i| (signed(i), top(i)))
                        .filter(|&(s, _)| s <= 0.0)
                        .map(|(s, t)| (-s, t)),
                    w,
                    tie,
                ),
            ),
            (
                "right",
                profile(
                    (0..n)
                        .map(|i| (signed(i), top(i)))
                        .filter(|&(s, _)| s >= 0.0),
                    w,
                    tie,
                ),
            ),
        ],
    };

    // Base radius: the footprint of the floor layer.
    let floor_layer: Vec<f64> = (0..n)
        .filter(|&i| positions[i].z - floor_z <= 2.0 * mean_r)
        .map(|i| signed(i).abs() + radii[i])
        .collect();
    let floor_layer_spheres = floor_layer.len();
    if floor_layer.is_empty() {
        let lowest = (0..n)
            .map(|i| positions[i].z - radii[i])
            .fold(f64::INFINITY, f64::min);
        return Err(AnalysisError::Degenerate(format!(
            "no sphere rests on the floor at z = {floor_z} (no centre within one mean diameter, {:.4e} m, of it; the lowest sphere bottom is at z = {lowest}): is the floor right?",
            2.0 * mean_r
        )));
    }
    let members = pile_footprint(&positions, &radii, floor_z, 2.0 * mean_r);
    let floor_layer_strays = floor_layer_spheres - members.len();
    let base_radius = quantile(
        members
            .iter()
            .map(|&i| signed(i).abs() + radii[i])
            .collect(),
        settings.base_quantile,
    );

    // The flank window, relative to the profile's height range.
    let lowest_bin = sides
        .iter()
        .flat_map(|(_, bins)| bins.iter().map(|b| b.height))
        .fold(f64::INFINITY, f64::min);
    let range = height - lowest_bin;
    let (lo, hi) = if range < 2.0 * mean_r {
        // Less than a grain high above its lowest bin: a layer, not a heap;
        // there is no cap or toe to leave out, and the window would only
        // pick bins out of the roughness.
        (lowest_bin, height)
    } else {
        (
            lowest_bin + settings.flank_from * range,
            lowest_bin + settings.flank_to * range,
        )
    };

    let mut flanks = Vec::new();
    let mut found = Vec::new();
    for (side, bins) in &sides {
        let pts: Vec<(f64, f64)> = bins
            .iter()
            // The slack keeps a layer lying exactly on a window edge in,
            // however the floor height rounds.
            .filter(|b| b.height >= lo - tie && b.height <= hi + tie)
            .map(|b| (b.distance, b.height))
            .collect();
        found.push(format!("{side}: {}", pts.len()));
        if pts.len() < settings.min_bins {
            continue;
        }
        let Some(f) = fit_line(&pts) else { continue };
        if !(f.slope.is_finite() && f.slope_stderr.is_finite()) {
            continue;
        }
        let deg = f64::to_degrees;
        flanks.push(FlankFit {
            side: side.to_string(),
            angle_deg: deg(f.slope.abs().atan()),
            angle_stderr_deg: deg(f.slope_stderr / (1.0 + f.slope * f.slope)),
            slope: f.slope,
            slope_stderr: f.slope_stderr,
            bins: pts.len(),
            from: pts.iter().map(|p| p.0).fold(f64::INFINITY, f64::min),
            to: pts.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
        });
    }
    if flanks.is_empty() {
        return Err(AnalysisError::TooFewBins {
            found: found.join(", "),
            needed: settings.min_bins,
            window: [lo, hi],
            bin_width: w,
        });
    }
    let k = flanks.len() as f64;
    let angle_deg = flanks.iter().map(|f| f.angle_deg).sum::<f64>() / k;
    let angle_stderr_deg = flanks
        .iter()
        .map(|f| f.angle_stderr_deg * f.angle_stderr_deg)
        .sum::<f64>()
        .sqrt()
        / k;
    let description = format!(
        "{} profile: highest sphere top per bin of {:.4e} m {}, at that sphere's distance; straight-line fit per flank on the bins between {:.0} % and {:.0} % of the profile's height range above its lowest bin (all bins when that range is under one mean diameter), angle = atan(|slope|), flanks averaged; base radius = {} quantile of the footprint of the pile's floor layer (the spheres within one mean diameter of the floor that belong to the pile, the largest group of touching spheres; strays left out)",
        settings.method.name(),
        w,
        match settings.method {
            HeapMethod::Radial => "of distance from the pile axis".to_string(),
            HeapMethod::Planar { axis } => format!("along {} on each side of the crest", axis.name()),
        },
        100.0 * settings.flank_from,
        100.0 * settings.flank_to,
        settings.base_quantile
    );
    Ok(HeapMeasurement {
        method: settings.method,
        description,
        angle_deg,
        angle_stderr_deg,
        bins_used: flanks.iter().map(|f| f.bins).sum(),
        flanks,
        height,
        base_radius,
        height_base_angle_deg: (height / base_radius).atan().to_degrees(),
        spheres: n,
        spheres_below_floor,
        floor_layer_spheres,
        floor_layer_strays,
        bins_total: sides.iter().map(|(_, b)| b.len()).sum(),
        center,
        floor_z,
        bin_width: w,
        flank_window: [lo, hi],
        settings: settings.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pile is the largest group that stands on the floor: a stream
    /// still falling, touching itself and larger than anything on the
    /// floor (a run stopped mid-pour), is not taken for it; and of the
    /// groups on the floor the largest wins.
    #[test]
    fn the_footprint_is_the_largest_group_on_the_floor_not_a_falling_stream() {
        let r = 0.01;
        let mut p: Vec<DVec3> = (0..5)
            .map(|k| DVec3::new(2.0 * r * k as f64, 0.0, r))
            .collect();
        p.push(DVec3::new(1.0, 0.0, r)); // a stray
        p.extend((0..50).map(|k| DVec3::new(0.0, 0.0, 0.5 + 2.0 * r * k as f64)));
        let radii = vec![r; p.len()];
        assert_eq!(
            pile_footprint(&p, &radii, 0.0, 2.0 * r),
            vec![0, 1, 2, 3, 4]
        );
    }
}
