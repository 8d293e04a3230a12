//! `repose measure DIR`: re-measure the heap of a saved run from its
//! `final.csv` and record the result in its `summary.json`.
//!
//! The settings are those the run measured with (`extra.angle_of_repose.settings`
//! in `summary.json`) when recorded, else the defaults; the method can be
//! overridden. The floor is, in order: the one given (`--floor`), the one the
//! run recorded (`extra.floor_z`, from the scene), the one of an earlier
//! measurement (`extra.angle_of_repose.floor_z`), or the lowest sphere
//! bottom in `final.csv`. `summary.json` is rewritten atomically with
//! `extra.angle_of_repose` replaced and every other field kept as it was
//! (also fields this version does not know).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use glam::DVec3;
use serde_json::Value;

use crate::analysis::{measure_heap, HeapMeasurement, HeapMethod, HeapSettings};
use crate::output::csv::read_final_csv;
use crate::output::summary::write_json;

/// What to change relative to the recorded settings.
#[derive(Clone, Debug, Default)]
pub struct MeasureOptions {
    /// Profile method; `None`: as recorded, else radial.
    pub method: Option<HeapMethod>,
    /// Floor height (m); `None`: as recorded, else the lowest sphere bottom.
    pub floor: Option<f64>,
}

/// The result of re-measuring a directory.
#[derive(Clone, Debug)]
pub struct Remeasured {
    /// The measurement (also written into `summary.json`).
    pub measurement: HeapMeasurement,
    /// Where the floor height came from, in words.
    pub floor_source: String,
    /// The `summary.json` that was updated.
    pub summary_path: PathBuf,
}

/// Re-measures the heap in `dir` (see the [module docs](self)) and
/// updates `dir/summary.json`. Errors name the file and the reason: a
/// missing or malformed `final.csv` or `summary.json`, a heap that cannot
/// be measured, a summary that cannot be written.
pub fn measure_dir(dir: &Path, opts: &MeasureOptions) -> Result<Remeasured> {
    let csv_path = dir.join("final.csv");
    let summary_path = dir.join("summary.json");
    let rows = read_final_csv(&csv_path)?;
    let text = std::fs::read_to_string(&summary_path)
        .with_context(|| format!("{}: cannot read", summary_path.display()))?;
    let mut summary: Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}: not valid JSON: {e}",
            summary_path.display(),
            e.line()
        )
    })?;
    let Some(obj) = summary.as_object_mut() else {
        bail!(
            "{}: expected a JSON object (a repose summary), found {}",
            summary_path.display(),
            kind(&summary)
        );
    };
    let extra = obj
        .entry("extra")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(extra) = extra.as_object_mut() else {
        bail!(
            "{}: `extra` must be a JSON object, found {}",
            summary_path.display(),
            kind(extra)
        );
    };
    let previous = extra.get("angle_of_repose");
    let mut settings: HeapSettings = previous
        .and_then(|p| p.get("settings"))
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default();
    if let Some(m) = opts.method {
        settings.method = m;
    }

    let positions: Vec<DVec3> = rows.iter().map(|r| DVec3::new(r[1], r[2], r[3])).collect();
    let radii: Vec<f64> = rows.iter().map(|r| r[10]).collect();
    let recorded = |v: Option<&Value>| v.and_then(Value::as_f64);
    let (floor, floor_source) = if let Some(z) = opts.floor {
        (z, "given with --floor".to_string())
    } else if let Some(z) = recorded(extra.get("floor_z")) {
        (
            z,
            format!("recorded by the run ({})", summary_path.display()),
        )
    } else if let Some(z) = recorded(previous.and_then(|p| p.get("floor_z"))) {
        (
            z,
            format!("of the earlier measurement ({})", summary_path.display()),
        )
    } else {
        let low = (0..rows.len())
            .map(|i| positions[i].z - radii[i])
            .fold(f64::INFINITY, f64::min);
        (low, "the lowest sphere bottom in final.csv".to_string())
    };
    let m = measure_heap(&positions, &radii, floor, &settings)
        .with_context(|| format!("{}: cannot measure the heap", csv_path.display()))?;
    extra.insert(
        "angle_of_repose".into(),
        serde_json::to_value(&m).context("cannot represent the measurement as JSON")?,
    );
    extra.remove("angle_of_repose_error");
    write_json(&summary_path, &summary)?;
    Ok(Remeasured {
        measurement: m,
        floor_source,
        summary_path,
    })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A readable multi-line report of a measurement.
pub fn format_report(m: &HeapMeasurement, floor_source: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "angle of repose: {:.2}° ± {:.2}° ({} method)",
        m.angle_deg,
        m.angle_stderr_deg,
        m.method.name()
    );
    for f in &m.flanks {
        let _ = writeln!(
            s,
            "  {:<6} flank: {:.2}° ± {:.2}° (slope {:.4} ± {:.4}, {} bins from {:.4} to {:.4} m)",
            f.side, f.angle_deg, f.angle_stderr_deg, f.slope, f.slope_stderr, f.bins, f.from, f.to
        );
    }
    let _ = writeln!(s, "height:          {:.4} m", m.height);
    let _ = writeln!(s, "base radius:     {:.4} m", m.base_radius);
    let _ = writeln!(s, "atan(H/R):       {:.2}°", m.height_base_angle_deg);
    let _ = writeln!(
        s,
        "spheres:         {} ({} in the floor layer); {} of {} profile bins fitted, {:.4e} m wide",
        m.spheres, m.floor_layer_spheres, m.bins_used, m.bins_total, m.bin_width
    );
    let _ = writeln!(
        s,
        "pile axis:       ({:.4}, {:.4}) m; floor z = {} m ({floor_source})",
        m.center.x, m.center.y, m.floor_z
    );
    let _ = write!(s, "method:          {}", m.description);
    s
}
