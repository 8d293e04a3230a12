//! Bulk measures of the bodies in a region (a box or a cylinder), sampled
//! at every frame
//! (`analysis.bulk`, written to `bulk.csv`): solid fraction, mean
//! coordination number, the Love–Weber stress tensor and the kinetic
//! energy.
//!
//! With V the region's volume and P the bodies whose centres lie in it:
//!
//! ```text
//! solid fraction   φ = Σ_{p∈P} (4/3) π r_p³ / V
//! coordination     Z = (Σ_{p∈P} number of p's contacts with f_n > 0) / |P|
//! stress           σ_ij = −(1/V) Σ_{p∈P} Σ_{c∋p} (x_c − x_p)_i f_j^{c→p}     (compression > 0)
//! kinetic energy   E = Σ_{p∈P} ½ m_p |v_p|² + ½ ω_p · L_p
//! elastic energy   U = Σ_c U_c · (ends of c in P) / (ends of c that are bodies)
//! ```
//!
//! * φ counts a sphere wholly when its centre is inside, so near the faces
//!   it errs by the spheres the faces cut (a share of about 3 r / L of the
//!   bodies for a region of side L); keep the region a few diameters
//!   inside the packing, or the box the whole packing.
//! * Z counts only contacts that carry a load (pairs inside the collision
//!   envelope but apart have f_n = 0), boundary contacts included; a body
//!   is counted once per contact, so a pair inside adds 2 to the sum.
//! * σ is Love's and Weber's mean stress from the contact forces on the
//!   bodies in P (each body's contacts at their contact points x_c, the
//!   forces f^{c→p} on it), symmetric in equilibrium; the symmetric part is
//!   reported. For a column of N equal spheres of weight W and radius r
//!   resting on a floor, Σ ... = W r N², so σ_zz = W r N² / V (a test).
//! * U shares each contact's stored energy U_c (the penalty formulation's
//!   springs, [`ContactForces::elastic_energy`]) equally between its two
//!   bodies, and gives a boundary contact's wholly to its body; a region
//!   holding every body counts every contact once. Rigid contacts store
//!   none: U = 0 under the complementarity and pyramid formulations.
//!
//! The forces are the step's mean contact forces under the rigid
//! formulations, the loads at the frame's state under the penalty one
//! ([`ContactForces`]).

use glam::{DMat3, DVec3};
use serde::{Deserialize, Serialize};

use crate::bodies::Bodies;
use crate::collision::NO_BODY;
use crate::contact_forces::ContactForces;

/// `analysis.bulk: Box(min: …, max: …)` or `Cylinder(center: …, axis: …,
/// radius: …, half_length: …)`: the region measured.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum BulkSettings {
    /// An axis-aligned box.
    Box {
        /// The corner with the smallest coordinates (m).
        min: DVec3,
        /// The corner with the largest coordinates (m).
        max: DVec3,
    },
    /// A solid cylinder (a silo's or a drum's inside).
    Cylinder {
        /// The centre of its axis (m).
        center: DVec3,
        /// The direction of its axis (normalised).
        axis: DVec3,
        /// Its radius (m).
        radius: f64,
        /// Half its length along the axis (m).
        half_length: f64,
    },
}

impl BulkSettings {
    /// Every value that is out of range, as `(field, reason)`.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut p = Vec::new();
        match *self {
            BulkSettings::Box { min, max } => {
                if !(min.is_finite() && max.is_finite()) {
                    p.push(("min".into(), "the corners must be finite".into()));
                } else if max.cmple(min).any() {
                    p.push((
                        "max".into(),
                        format!("must exceed min on every axis (min {min}, max {max})"),
                    ));
                }
            }
            BulkSettings::Cylinder {
                center,
                axis,
                radius,
                half_length,
            } => {
                if !center.is_finite() {
                    p.push(("center".into(), format!("must be finite (got {center})")));
                }
                if !(axis.is_finite() && axis.length() > 0.0) {
                    p.push((
                        "axis".into(),
                        format!("must be finite and not zero (got {axis})"),
                    ));
                }
                if !(radius.is_finite() && radius > 0.0) {
                    p.push(("radius".into(), format!("must be > 0 (got {radius})")));
                }
                if !(half_length.is_finite() && half_length > 0.0) {
                    p.push((
                        "half_length".into(),
                        format!("must be > 0 (got {half_length})"),
                    ));
                }
            }
        }
        p
    }

    /// Whether `x` lies in the region (its surface included).
    pub fn contains(&self, x: DVec3) -> bool {
        match *self {
            BulkSettings::Box { min, max } => x.cmpge(min).all() && x.cmple(max).all(),
            BulkSettings::Cylinder {
                center,
                axis,
                radius,
                half_length,
            } => {
                let a = axis.normalize();
                let d = x - center;
                let along = d.dot(a);
                along.abs() <= half_length && (d - along * a).length() <= radius
            }
        }
    }

    /// The region's volume (m³).
    pub fn volume(&self) -> f64 {
        match *self {
            BulkSettings::Box { min, max } => {
                let s = max - min;
                s.x * s.y * s.z
            }
            BulkSettings::Cylinder {
                radius,
                half_length,
                ..
            } => std::f64::consts::PI * radius * radius * 2.0 * half_length,
        }
    }
}

/// One frame's bulk measures (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BulkSample {
    /// Simulated time (s).
    pub time: f64,
    /// Bodies whose centres lie in the region.
    pub bodies: usize,
    /// Solid fraction φ.
    pub solid_fraction: f64,
    /// Mean coordination number Z over loaded contacts (0 without bodies).
    pub coordination: f64,
    /// σ_xx, σ_yy, σ_zz, σ_xy, σ_xz, σ_yz (Pa; compression positive).
    pub stress: [f64; 6],
    /// Kinetic energy, translational and rotational (J).
    pub kinetic_energy: f64,
    /// Elastic energy stored in the contacts of the bodies in the region
    /// (J; module docs). Absent from a `bulk.csv` written before it was
    /// reported: read as 0.
    #[serde(default)]
    pub elastic_energy: f64,
}

/// The header of `bulk.csv`.
pub const BULK_CSV_HEADER: &str =
    "time,bodies,solid_fraction,coordination,sxx,syy,szz,sxy,sxz,syz,kinetic_energy,elastic_energy";

/// The header of a `bulk.csv` written before the elastic energy was
/// reported (still read, for a resumed run).
const BULK_CSV_HEADER_V1: &str =
    "time,bodies,solid_fraction,coordination,sxx,syy,szz,sxy,sxz,syz,kinetic_energy";

/// Measures the bodies of `b` in the region `s` at `time`, with the
/// contacts `c` (their lever arms give x_c − x_p).
pub fn measure_bulk(s: &BulkSettings, b: &Bodies, c: &ContactForces, time: f64) -> BulkSample {
    let inside: Vec<bool> = b.pos.iter().map(|&x| s.contains(x)).collect();
    let v = s.volume();
    let mut solid = 0.0;
    let mut energy = 0.0;
    let mut n = 0usize;
    for i in (0..b.len()).filter(|&i| inside[i]) {
        n += 1;
        solid += 4.0 / 3.0 * std::f64::consts::PI * b.radius[i].powi(3);
        energy += 0.5 * b.vel[i].length_squared() / b.inv_mass[i]
            + 0.5 * b.omega[i].dot(b.angular_momentum(i));
    }
    let mut ends = 0usize;
    let mut elastic = 0.0;
    let mut sum = DMat3::ZERO;
    // Σ (x_c − x_p) ⊗ f on p, as columns: sum.col(j)[i] += d_i f_j.
    let mut add = |d: DVec3, f: DVec3| {
        sum += DMat3::from_cols(d * f.x, d * f.y, d * f.z);
    };
    for k in 0..c.len() {
        let f = c.force(k);
        let loaded = c.normal_force[k] > 0.0;
        let a = c.body_a[k] as usize;
        if inside[a] {
            ends += usize::from(loaded);
            add(c.arm_a[k], -f);
        }
        let bb = c.body_b[k];
        let in_b = bb != NO_BODY && inside[bb as usize];
        if in_b {
            ends += usize::from(loaded);
            add(c.arm_b[k], f);
        }
        let u = c.energy(k);
        elastic += match (inside[a], in_b, bb == NO_BODY) {
            (true, _, true) | (true, true, false) => u,
            (true, false, false) | (false, true, false) => 0.5 * u,
            _ => 0.0,
        };
    }
    let m = -sum / v;
    let sym = |i: usize, j: usize| 0.5 * (m.col(j)[i] + m.col(i)[j]);
    BulkSample {
        time,
        bodies: n,
        solid_fraction: solid / v,
        coordination: if n > 0 { ends as f64 / n as f64 } else { 0.0 },
        stress: [
            sym(0, 0),
            sym(1, 1),
            sym(2, 2),
            sym(0, 1),
            sym(0, 2),
            sym(1, 2),
        ],
        kinetic_energy: energy,
        elastic_energy: elastic,
    }
}

/// Writes `samples` as `bulk.csv` ([`BULK_CSV_HEADER`], one row per frame;
/// numbers as the other CSV files write them), atomically.
pub fn write_bulk_csv(path: &std::path::Path, samples: &[BulkSample]) -> std::io::Result<()> {
    use crate::output::csv::Num;
    use std::io::Write;
    crate::output::write_atomic(path, |w| {
        writeln!(w, "{BULK_CSV_HEADER}")?;
        for s in samples {
            write!(w, "{},{},{}", Num(s.time), s.bodies, Num(s.solid_fraction))?;
            write!(w, ",{}", Num(s.coordination))?;
            for x in s.stress {
                write!(w, ",{}", Num(x))?;
            }
            writeln!(w, ",{},{}", Num(s.kinetic_energy), Num(s.elastic_energy))?;
        }
        Ok(())
    })
}

/// Reads back a `bulk.csv` that [`write_bulk_csv`] wrote, or one of the
/// earlier layout without `elastic_energy` (for a resumed run); errors
/// name the file and line.
pub fn read_bulk_csv(path: &std::path::Path) -> Result<Vec<BulkSample>, String> {
    let text =
        crate::output::bounded::read_text(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut lines = text.lines();
    let columns = match lines.next() {
        Some(BULK_CSV_HEADER) => 12,
        Some(BULK_CSV_HEADER_V1) => 11,
        _ => {
            return Err(format!(
                "{}: not a bulk.csv (its header differs)",
                path.display()
            ))
        }
    };
    lines
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(k, l)| {
            let bad = || format!("{}:{}: malformed row {l:?}", path.display(), k + 2);
            let f: Vec<f64> = l
                .split(',')
                .map(|x| x.parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| bad())?;
            if f.len() != columns {
                return Err(bad());
            }
            Ok(BulkSample {
                time: f[0],
                bodies: f[1] as usize,
                solid_fraction: f[2],
                coordination: f[3],
                stress: [f[4], f[5], f[6], f[7], f[8], f[9]],
                kinetic_energy: f[10],
                elastic_energy: f.get(11).copied().unwrap_or(0.0),
            })
        })
        .collect()
}
