//! Parameter sweeps: one scene run over a grid of overridden values and
//! seeds, the angles of repose collected in one table and one plot, and
//! sweeps split into shards that a cluster scheduler spreads over machines
//! and [`merge`] joins again.
//!
//! # Design
//!
//! A sweep is nothing but many ordinary runs. Each grid point is the base
//! scene with `--set`-style overrides ([`Scene::with_overrides`]), so a
//! varied path means exactly what it means to `repose run --set`, is
//! type-checked the same way, and fails with the same message. Every run
//! writes a normal run directory (`final.csv`, `summary.json`, `final.png`,
//! `scene.ron`) under `DIR/runs/`, so any single run can be inspected,
//! re-rendered, re-measured (`repose measure`) or re-run from its
//! `scene.ron`; the sweep's own files are a summary of those directories.
//!
//! **The grid.** `--vary path=a:b:n` gives n values linearly from a to b
//! inclusive (n = 1 gives a), `--vary path=v1,v2,v3` an explicit list;
//! `path1+path2=…` sets several paths to the same value (ρ = σ sweeps). Several
//! `--vary` make the full cartesian product, enumerated like nested loops in
//! the order the options were given: the *first* varied parameter changes
//! slowest, the last one fastest, and the seed fastest of all. A run's
//! global index is its position in that enumeration, so it depends only on
//! the sweep's specification — never on sharding, `--jobs` or timing — and
//! names its directory, its row and its slot in a merge.
//!
//! **Seeds.** With `--seeds k`, every grid point is run k times with seed
//! offsets s = 0…k−1: every seeded sphere source of the scene (a `Lattice`'s
//! jitter `seed`, a `RandomBox`'s placement `seed`) gets `seed = base + s`,
//! where base is its own seed at that grid point (after the overrides).
//! Nothing else changes: the seed moves the initial sphere positions of
//! those sources, and through them everything after. Offset 0 is the scene
//! as written, so `--seeds 1` (the default) runs the scene's own seeds. A
//! `Lattice` without jitter draws no random numbers, so a scene without a
//! jittered lattice or a random box gives identical runs for every seed
//! (the sweep says so in a warning).
//!
//! **Validation first.** Every run's scene (every grid point and seed) is
//! built and validated before the first run starts: a misspelt path, a
//! value of the wrong type, an out-of-range coefficient at one grid point,
//! or a generator that cannot place its spheres for one seed stops the
//! sweep at once, with the usual message naming file, field and reason.
//!
//! **Failures are rows.** A run that fails once started (a diverging solve,
//! a heap that cannot be measured) does not stop the sweep: its row has the
//! `error` column filled and the numbers it has, and the sweep's exit code
//! says that some runs failed.
//!
//! **Concurrency.** `--jobs j` runs j scenes at once. Each run uses rayon
//! inside its solver; with j > 1 each worker installs its own rayon pool of
//! max(1, ⌊T / j⌋) threads (T = the global pool's size, i.e. the cores or
//! `RAYON_NUM_THREADS`), so the sweep uses about as many threads as cores
//! rather than j × T competing ones. With j = 1 the run uses the global
//! pool. The numbers of a run do not depend on its thread count (the CPU
//! solver sums in a fixed order), so `--jobs` changes wall times only.
//!
//! **Shards.** `--shard i/n` runs only the runs whose index ≡ i − 1 (mod n)
//! — a round-robin split, so every shard gets a similar mix of cheap and
//! expensive grid points — and writes `sweep.csv` with those rows and a
//! manifest `sweep.json` ([`Manifest`]): the scene file and a hash of its
//! contents, the varied values, seeds, the shard and the total run count.
//! [`merge`] checks that manifests agree (naming the directory that does
//! not), that every run index 0…total−1 is present exactly once, and writes
//! the joined table, plot and contact sheet. An unsharded sweep is shard
//! 1/1 and writes the same files directly.
//!
//! **Outputs** (see [`SWEEP_CSV_COLUMNS`] for the table):
//!
//! ```text
//! DIR/sweep.csv           one row per run, sorted by run index
//! DIR/sweep.json          the manifest
//! DIR/sweep.png           angle vs the first varied parameter, mean ± sd over seeds
//! DIR/sweep_height.png    height / mean diameter, the same way (seed 001 Fig. 5a)
//! DIR/sweep_mean_radius.png  bottom mean radius / mean diameter (seed 001 Fig. 5b)
//! DIR/contact_sheet.png   every run's final.png with its values and seed
//! DIR/runs/<name>/        each run's directory (name: see run_dir_name)
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

use crate::output::summary::Summary;
use crate::output::{write_atomic, ReadError};
use crate::render::{
    contact_sheet, fmt_num, plot_lines, read_png, write_png, Image, PlotOptions, Rgb, Series,
};
use crate::run::{run_scene, BackendChoice, RunOptions};
use crate::scene::{parse_set, Scene, SphereSource};

/// The most runs one sweep may have (a guard against typos such as
/// `--vary a=0:1:10000 --vary b=0:1:10000`).
pub const MAX_RUNS: usize = 1_000_000;

/// Columns of `sweep.csv` before the varied paths.
pub const LEADING_COLUMNS: [&str; 1] = ["run"];

/// Columns of `sweep.csv` after the varied paths (one column per varied
/// path, headed by the path, sits between `run` and `seed`).
pub const SWEEP_CSV_COLUMNS: [&str; 14] = [
    "seed",
    "angle_deg",
    "angle_stderr_deg",
    "height",
    "base_radius",
    "height_base_angle_deg",
    "height_over_diameter",
    "bottom_mean_radius",
    "bottom_mean_radius_over_diameter",
    "settle_time_s",
    "settled",
    "wall_time_s",
    "backend",
    "error",
];

/// How the `error` of a run that ran but could not be measured begins
/// (see [`SweepRow::run_failed`]).
pub const MEASURE_NOTE: &str = "cannot measure";

/// Version of the `sweep.json` manifest format.
pub const MANIFEST_VERSION: u32 = 1;

/// One varied parameter: a scene path and the values it takes, as text
/// (passed to [`Scene::with_overrides`] like a `--set` value).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vary {
    /// The scene path, as given (`materials.0.rolling`).
    pub path: String,
    /// The specification after `=`, as given (`0:0.01:6`, `0.1,0.2`).
    pub spec: String,
    /// The values, in order.
    pub values: Vec<String>,
}

impl Vary {
    /// The scene paths this parameter sets: `a+b+c` sets each of a, b and c
    /// to the same value (e.g. rolling and spinning friction together).
    pub fn linked_paths(&self) -> impl Iterator<Item = &str> {
        self.path.split('+')
    }

    /// Parses `path=a:b:n` (n values linearly from a to b inclusive; n = 1
    /// gives a) or `path=v1,v2,…` (an explicit list; one value is a list of
    /// one). Inner range values are rounded to 13 significant digits (so
    /// `0.1:0.5:5` gives 0.3, not 0.30000000000000004) and written as the
    /// shortest text that reads back to the same `f64`; the ends are a and
    /// b exactly.
    pub fn parse(arg: &str) -> Result<Vary> {
        let (path, spec) = parse_set(arg).map_err(|e| anyhow::anyhow!("--vary {e}"))?;
        let fail = |reason: String| anyhow::anyhow!("--vary {arg}: {reason}");
        let values = if spec.contains(':') {
            let parts: Vec<&str> = spec.split(':').map(str::trim).collect();
            if parts.len() != 3 {
                return Err(fail(format!(
                    "a range is start:end:count, e.g. 0:0.01:6 (got {} part{})",
                    parts.len(),
                    if parts.len() == 1 { "" } else { "s" }
                )));
            }
            let num = |what: &str, s: &str| -> Result<f64> {
                match s.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok(v),
                    _ => Err(fail(format!(
                        "the range {what} {s:?} is not a finite number"
                    ))),
                }
            };
            let a = num("start", parts[0])?;
            let b = num("end", parts[1])?;
            let n: usize = parts[2].parse().map_err(|_| {
                fail(format!(
                    "the range count {:?} is not a whole number ≥ 1",
                    parts[2]
                ))
            })?;
            if n == 0 {
                return Err(fail("the range count must be at least 1 (got 0)".into()));
            }
            if n > MAX_RUNS {
                return Err(fail(format!(
                    "the range count {n} is more than the {MAX_RUNS} runs a sweep may have"
                )));
            }
            (0..n)
                .map(|i| {
                    let v = if n == 1 {
                        a
                    } else if i == n - 1 {
                        b
                    } else {
                        let v = a + (b - a) * (i as f64 / (n - 1) as f64);
                        // Drop the rounding noise of the interpolation.
                        format!("{v:.12e}").parse().unwrap_or(v)
                    };
                    format!("{v}")
                })
                .collect()
        } else {
            let items: Vec<String> = spec.split(',').map(|s| s.trim().to_string()).collect();
            if let Some(k) = items.iter().position(String::is_empty) {
                return Err(fail(format!("list entry {} is empty", k + 1)));
            }
            items
        };
        Ok(Vary { path, spec, values })
    }
}

/// `--shard i/n`: the runs whose index ≡ i − 1 (mod n); i is 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, 1…count.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl Shard {
    /// The whole sweep as one shard.
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Parses `i/n` with 1 ≤ i ≤ n.
    pub fn parse(s: &str) -> Result<Shard> {
        let fail = |reason: &str| anyhow::anyhow!("--shard {s}: {reason}");
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| fail("expected i/n, e.g. 2/8 (the 2nd of 8 shards)"))?;
        let i: usize = i
            .trim()
            .parse()
            .map_err(|_| fail("i is not a whole number"))?;
        let n: usize = n
            .trim()
            .parse()
            .map_err(|_| fail("n is not a whole number"))?;
        if n == 0 {
            return Err(fail("n must be at least 1"));
        }
        if i == 0 || i > n {
            return Err(fail("i must be in 1…n (shards are counted from 1)"));
        }
        Ok(Shard { index: i, count: n })
    }

    /// Whether run `index` belongs to this shard.
    pub fn contains(&self, index: usize) -> bool {
        index % self.count == self.index - 1
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What is varied: the parameters and the number of seeds per grid point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepSpec {
    /// The varied parameters, first = slowest in the run order.
    pub vary: Vec<Vary>,
    /// Seeds per grid point (≥ 1).
    pub seeds: u64,
}

/// One run of a sweep: its global index, the value of each varied
/// parameter, and its seed offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunPoint {
    /// Position in the sweep's run order (0-based).
    pub index: usize,
    /// One value per varied parameter, in the order of [`SweepSpec::vary`].
    pub values: Vec<String>,
    /// The seed offset s (0…seeds−1) added to every seeded source.
    pub seed: u64,
}

impl SweepSpec {
    /// A specification from `--vary` arguments and `--seeds`; errors for
    /// malformed arguments, a path varied twice, zero seeds or too many runs.
    pub fn parse(vary: &[String], seeds: u64) -> Result<SweepSpec> {
        if seeds == 0 {
            bail!("--seeds must be at least 1 (got 0)");
        }
        let vary = vary
            .iter()
            .map(|v| Vary::parse(v))
            .collect::<Result<Vec<_>>>()?;
        let mut seen = BTreeSet::new();
        for v in &vary {
            if !seen.insert(v.path.as_str()) {
                bail!("--vary {}: this path is varied twice", v.path);
            }
        }
        let spec = SweepSpec { vary, seeds };
        spec.checked_total()?;
        Ok(spec)
    }

    fn checked_total(&self) -> Result<usize> {
        let mut n = usize::try_from(self.seeds).unwrap_or(usize::MAX);
        for v in &self.vary {
            n = n.saturating_mul(v.values.len());
        }
        if n > MAX_RUNS {
            bail!("the sweep would have {n} runs; at most {MAX_RUNS} are allowed");
        }
        Ok(n)
    }

    /// The number of runs: the product of the value counts times the seeds.
    pub fn total_runs(&self) -> usize {
        self.checked_total().unwrap_or(MAX_RUNS)
    }

    /// Every run in run order (first varied parameter slowest, seed fastest).
    pub fn points(&self) -> Vec<RunPoint> {
        let total = self.total_runs();
        (0..total).map(|i| self.point(i)).collect()
    }

    /// Run `index` (must be below [`SweepSpec::total_runs`]).
    pub fn point(&self, index: usize) -> RunPoint {
        let seeds = self.seeds as usize;
        let seed = (index % seeds) as u64;
        let mut rest = index / seeds;
        let mut values = vec![String::new(); self.vary.len()];
        for (k, v) in self.vary.iter().enumerate().rev() {
            let n = v.values.len();
            values[k] = v.values[rest % n].clone();
            rest /= n;
        }
        RunPoint {
            index,
            values,
            seed,
        }
    }

    /// The name of run `p`'s directory under `DIR/runs/`:
    /// `<index>_<path>=<value>_…_seed<s>`, the index zero-padded to the
    /// digits of the last index, every character other than ASCII letters,
    /// digits and `.` `+` `-` `=` replaced by `_`.
    pub fn run_dir_name(&self, p: &RunPoint) -> String {
        let width = self.total_runs().saturating_sub(1).to_string().len();
        let mut name = format!("{:0width$}", p.index);
        for (v, value) in self.vary.iter().zip(&p.values) {
            name.push('_');
            name.push_str(&safe_name(&v.path));
            name.push('=');
            name.push_str(&safe_name(value));
        }
        let _ = write!(name, "_seed{}", p.seed);
        name
    }

    /// The caption of run `p`: `path = value, …, seed s`.
    pub fn caption(&self, p: &RunPoint) -> String {
        let mut parts: Vec<String> = self
            .vary
            .iter()
            .zip(&p.values)
            .map(|(v, value)| format!("{} = {value}", v.path))
            .collect();
        parts.push(format!("seed {}", p.seed));
        parts.join(", ")
    }
}

fn safe_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Applies seed offset `s` to every seeded sphere source of `scene`
/// (`Lattice`, `RandomBox` and `Inlet`: `seed = seed + s`, wrapping); offset 0
/// returns the scene unchanged.
pub fn apply_seed(scene: &Scene, s: u64) -> Scene {
    let mut out = scene.clone();
    if s == 0 {
        return out;
    }
    for src in &mut out.spheres {
        match src {
            SphereSource::Lattice(l) => l.seed = l.seed.wrapping_add(s),
            SphereSource::RandomBox(r) => r.seed = r.seed.wrapping_add(s),
            SphereSource::Inlet(i) => i.seed = i.seed.wrapping_add(s),
            SphereSource::Sphere(_) => {}
        }
    }
    out
}

/// Whether any sphere source of `scene` draws random numbers (a `RandomBox`,
/// an `Inlet`, or a `Lattice` with jitter > 0), i.e. whether seeds change anything.
pub fn has_seeded_source(scene: &Scene) -> bool {
    scene.spheres.iter().any(|s| match s {
        SphereSource::Lattice(l) => l.jitter > 0.0,
        SphereSource::RandomBox(_) | SphereSource::Inlet(_) => true,
        SphereSource::Sphere(_) => false,
    })
}

/// FNV-1a (64-bit) of `bytes` as `fnv1a64:<16 hex digits>`: a stable hash
/// of the scene file for the manifest (not a cryptographic one; it only
/// tells apart shards of different sweeps).
pub fn content_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

/// `sweep.json`: what a sweep (or one shard of it) is, so that [`merge`]
/// can check that shards belong together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_VERSION`].
    pub version: u32,
    /// The scene file as given on the command line.
    pub scene_file: String,
    /// The scene's name (plot title).
    pub scene_name: String,
    /// [`content_hash`] of the scene file's bytes.
    pub scene_hash: String,
    /// The varied parameters and seeds.
    pub spec: SweepSpec,
    /// The shard this directory holds (1/1 for a whole or merged sweep).
    pub shard: Shard,
    /// Number of runs of the whole sweep.
    pub total_runs: usize,
    /// The run indices whose rows `sweep.csv` holds.
    pub runs: Vec<usize>,
    /// Where each run's directory is, by run index: relative to this
    /// directory (`runs/<name>`), or after a merge the absolute paths of the
    /// run directories inside the shards.
    pub run_dirs: BTreeMap<usize, String>,
    /// Version of repose that wrote the file.
    pub repose_version: String,
}

impl Manifest {
    /// Reads `dir/sweep.json`; errors name the file.
    pub fn read(dir: &Path) -> Result<Manifest> {
        let path = dir.join("sweep.json");
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "{}: cannot read the sweep manifest (is {} a sweep directory?)",
                path.display(),
                dir.display()
            )
        })?;
        let m: Manifest = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a sweep manifest", path.display()))?;
        if m.version != MANIFEST_VERSION {
            bail!(
                "{}: manifest version {} (this build reads {MANIFEST_VERSION})",
                path.display(),
                m.version
            );
        }
        Ok(m)
    }

    /// Writes `dir/sweep.json` atomically.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join("sweep.json");
        let text = serde_json::to_string_pretty(self)?;
        write_atomic(&path, |w| {
            w.write_all(text.as_bytes()).and_then(|_| writeln!(w))
        })
        .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// One row of `sweep.csv`: one run's values, seed and results. Numbers are
/// `None` when the run has none (failed, or no heap analysis).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SweepRow {
    /// Run index.
    pub run: usize,
    /// One value per varied parameter.
    pub values: Vec<String>,
    /// Seed offset.
    pub seed: u64,
    /// Angle of repose (°), flanks averaged.
    pub angle_deg: Option<f64>,
    /// Its standard error (°).
    pub angle_stderr_deg: Option<f64>,
    /// Heap height above the floor (m).
    pub height: Option<f64>,
    /// Heap base radius (m).
    pub base_radius: Option<f64>,
    /// atan(height / base radius) (°).
    pub height_base_angle_deg: Option<f64>,
    /// Height over the mean diameter (seed 001 Fig. 5).
    pub height_over_diameter: Option<f64>,
    /// Mean distance of the floor-touching spheres from their centroid (m;
    /// seed 001's mean radius).
    pub bottom_mean_radius: Option<f64>,
    /// The same over the mean diameter (seed 001 Fig. 5).
    pub bottom_mean_radius_over_diameter: Option<f64>,
    /// When the pile settled (s of simulated time).
    pub settle_time_s: Option<f64>,
    /// Whether it was settled at the end.
    pub settled: Option<bool>,
    /// Wall-clock time of the run (s).
    pub wall_time_s: Option<f64>,
    /// The backend that ran it (empty when it never started).
    pub backend: String,
    /// Why the run failed, or ([`MEASURE_NOTE`] …) what could not be
    /// measured; empty when neither.
    pub error: String,
}

impl SweepRow {
    /// A row for `p` filled from a run's summary (results, settling, wall
    /// time, backend; `angle_of_repose_error` becomes `error`).
    pub fn from_summary(p: &RunPoint, s: &Summary) -> SweepRow {
        let mut row = SweepRow {
            run: p.index,
            values: p.values.clone(),
            seed: p.seed,
            wall_time_s: Some(s.wall_time_s),
            backend: s.backend.clone(),
            ..SweepRow::default()
        };
        let num = |v: Option<&serde_json::Value>, k: &str| {
            v.and_then(|v| v.get(k))
                .and_then(serde_json::Value::as_f64)
                .filter(|x| x.is_finite())
        };
        // The heap's angle, or a drum's dynamic angle.
        let a = s
            .extra
            .get("angle_of_repose")
            .or_else(|| s.extra.get("dynamic_angle"));
        row.angle_deg = num(a, "angle_deg");
        row.angle_stderr_deg = num(a, "angle_stderr_deg");
        row.base_radius = num(a, "base_radius");
        row.height_base_angle_deg = num(a, "height_base_angle_deg");
        let pile = s.extra.get("pile");
        row.height = num(a, "height").or_else(|| num(pile, "height"));
        row.height_over_diameter = num(pile, "height_over_diameter");
        row.bottom_mean_radius = num(pile, "bottom_mean_radius");
        row.bottom_mean_radius_over_diameter = num(pile, "bottom_mean_radius_over_diameter");
        let st = s.extra.get("settling");
        row.settle_time_s = num(st, "settle_time_s");
        row.settled = st
            .and_then(|v| v.get("settled"))
            .and_then(serde_json::Value::as_bool);
        if let Some(e) = s
            .extra
            .get("angle_of_repose_error")
            .and_then(serde_json::Value::as_str)
        {
            row.error = format!("{MEASURE_NOTE} the heap: {e}");
        }
        if let Some(e) = s
            .extra
            .get("dynamic_angle_error")
            .and_then(serde_json::Value::as_str)
        {
            row.error = format!("{MEASURE_NOTE} the dynamic angle: {e}");
        }
        if s.stopped == crate::output::summary::StopReason::Interrupted {
            // Not a result: the pile was stopped part way.
            row.error = format!(
                "interrupted after step {} (SIGINT/SIGTERM); its numbers are of that step",
                s.steps
            );
        }
        row
    }

    /// Whether the run itself failed (a diverging solve, a scene that could
    /// not run). A measurement that could not be made — a heap too flat for
    /// a slope, a pile that rolled off its plate — is noted in `error` too
    /// (prefixed [`MEASURE_NOTE`]) but is a result, not a failure: the run's
    /// other numbers stand and the sweep does not count it as failed.
    pub fn run_failed(&self) -> bool {
        !self.error.is_empty() && !self.error.starts_with(MEASURE_NOTE)
    }

    /// The numbers compared between runs: everything but the wall time.
    pub fn without_wall_time(&self) -> SweepRow {
        SweepRow {
            wall_time_s: None,
            ..self.clone()
        }
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt_num(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map(|x| format!("{x}"))
        .unwrap_or_default()
}

/// The header of `sweep.csv` for varied `paths`: `run`, the paths, then
/// [`SWEEP_CSV_COLUMNS`].
pub fn sweep_csv_header(paths: &[String]) -> Vec<String> {
    LEADING_COLUMNS
        .iter()
        .map(|s| s.to_string())
        .chain(paths.iter().cloned())
        .chain(SWEEP_CSV_COLUMNS.iter().map(|s| s.to_string()))
        .collect()
}

/// Writes `sweep.csv` (atomically): the header of [`sweep_csv_header`],
/// then `rows` in the given order. Numbers at full precision (Rust's
/// shortest round-trip form), empty cells for missing numbers, fields with
/// commas, quotes or line breaks quoted as in RFC 4180.
pub fn write_sweep_csv(path: &Path, paths: &[String], rows: &[SweepRow]) -> Result<()> {
    let header: Vec<String> = sweep_csv_header(paths)
        .iter()
        .map(|h| csv_field(h))
        .collect();
    write_atomic(path, |w| {
        writeln!(w, "{}", header.join(","))?;
        for r in rows {
            let mut cells = vec![r.run.to_string()];
            cells.extend(r.values.iter().map(|v| csv_field(v)));
            cells.push(r.seed.to_string());
            for v in [
                r.angle_deg,
                r.angle_stderr_deg,
                r.height,
                r.base_radius,
                r.height_base_angle_deg,
                r.height_over_diameter,
                r.bottom_mean_radius,
                r.bottom_mean_radius_over_diameter,
                r.settle_time_s,
            ] {
                cells.push(opt_num(v));
            }
            cells.push(r.settled.map(|b| b.to_string()).unwrap_or_default());
            cells.push(opt_num(r.wall_time_s));
            cells.push(csv_field(&r.backend));
            cells.push(csv_field(&r.error));
            writeln!(w, "{}", cells.join(","))?;
        }
        Ok(())
    })
    .with_context(|| format!("cannot write {}", path.display()))
}

/// One CSV record: its 1-based starting line and its fields.
type CsvRecord = (usize, Vec<String>);

/// Splits CSV text into records of fields (RFC 4180 quoting; `\n` or
/// `\r\n` line ends; empty lines skipped). Returns each record with its
/// 1-based starting line.
fn split_csv(text: &str) -> Result<Vec<CsvRecord>, (usize, String)> {
    let mut records = Vec::new();
    let mut field = String::new();
    let mut record: Vec<String> = Vec::new();
    let mut quoted = false;
    let mut line = 1;
    let mut start = 1;
    let mut chars = text.chars().peekable();
    let mut at_field_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                c => {
                    if c == '\n' {
                        line += 1;
                    }
                    field.push(c);
                }
            }
            continue;
        }
        match c {
            '"' if at_field_start => {
                quoted = true;
                at_field_start = false;
            }
            '"' => return Err((line, "a quote inside an unquoted field".into())),
            ',' => {
                record.push(std::mem::take(&mut field));
                at_field_start = true;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                if !(record.len() == 1 && record[0].is_empty()) {
                    records.push((start, std::mem::take(&mut record)));
                }
                record.clear();
                line += 1;
                start = line;
                at_field_start = true;
            }
            c => {
                field.push(c);
                at_field_start = false;
            }
        }
    }
    if quoted {
        return Err((line, "a quoted field is not closed".into()));
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push((start, record));
    }
    Ok(records)
}

/// Reads a `sweep.csv` written by [`write_sweep_csv`]; returns the varied
/// paths (from the header) and the rows, bit-for-bit the values written.
/// Errors name the file, the line and the column.
pub fn read_sweep_csv(path: &Path) -> Result<(Vec<String>, Vec<SweepRow>), ReadError> {
    let text = std::fs::read_to_string(path).map_err(|err| ReadError::Io {
        path: path.to_owned(),
        err,
    })?;
    let format = |line: usize, reason: String| ReadError::Format {
        path: path.to_owned(),
        line,
        reason,
    };
    let records = split_csv(&text).map_err(|(l, r)| format(l, r))?;
    let mut it = records.into_iter();
    let (_, header) = it
        .next()
        .ok_or_else(|| format(1, "empty file, expected a header".into()))?;
    let trailing = &SWEEP_CSV_COLUMNS[..];
    let n_vary = header
        .len()
        .checked_sub(1 + trailing.len())
        .ok_or_else(|| format(1, format!("header {header:?} has too few columns")))?;
    if header[0] != "run" || header[1 + n_vary..] != *trailing {
        return Err(format(
            1,
            format!(
                "header is {:?}, expected run, the varied paths, then {}",
                header.join(","),
                trailing.join(",")
            ),
        ));
    }
    let paths = header[1..1 + n_vary].to_vec();
    let mut rows = Vec::new();
    for (line, rec) in it {
        if rec.len() != header.len() {
            return Err(format(
                line,
                format!("{} fields, expected {}", rec.len(), header.len()),
            ));
        }
        let col = |k: usize| header[k].as_str();
        let opt = |k: usize| -> Result<Option<f64>, ReadError> {
            let s = rec[k].trim();
            if s.is_empty() {
                return Ok(None);
            }
            s.parse::<f64>().map(Some).map_err(|e| {
                format(
                    line,
                    format!("column `{}`: {s:?} is not a number ({e})", col(k)),
                )
            })
        };
        let whole = |k: usize| -> Result<u64, ReadError> {
            rec[k].trim().parse::<u64>().map_err(|_| {
                format(
                    line,
                    format!("column `{}`: {:?} is not a whole number", col(k), rec[k]),
                )
            })
        };
        let t = 1 + n_vary; // index of `seed`
        let settled = match rec[t + 10].trim() {
            "" => None,
            "true" => Some(true),
            "false" => Some(false),
            s => {
                return Err(format(
                    line,
                    format!("column `settled`: {s:?} is not true or false"),
                ))
            }
        };
        rows.push(SweepRow {
            run: whole(0)? as usize,
            values: rec[1..t].to_vec(),
            seed: whole(t)?,
            angle_deg: opt(t + 1)?,
            angle_stderr_deg: opt(t + 2)?,
            height: opt(t + 3)?,
            base_radius: opt(t + 4)?,
            height_base_angle_deg: opt(t + 5)?,
            height_over_diameter: opt(t + 6)?,
            bottom_mean_radius: opt(t + 7)?,
            bottom_mean_radius_over_diameter: opt(t + 8)?,
            settle_time_s: opt(t + 9)?,
            settled,
            wall_time_s: opt(t + 11)?,
            backend: rec[t + 12].clone(),
            error: rec[t + 13].clone(),
        });
    }
    Ok((paths, rows))
}

/// A sweep ready to run: the base scene, the specification, and every
/// run's validated scene.
#[derive(Clone, Debug)]
pub struct PreparedSweep {
    /// The scene file as given.
    pub scene_file: PathBuf,
    /// [`content_hash`] of its bytes.
    pub scene_hash: String,
    /// The base scene (no overrides).
    pub base: Scene,
    /// What is varied.
    pub spec: SweepSpec,
    /// Every run in run order with its scene (overrides and seed applied,
    /// validated).
    pub runs: Vec<(RunPoint, Scene)>,
}

/// Loads `scene_file`, builds every run's scene (overrides, then the seed
/// offset) and validates each: the first bad path, value or scene is an
/// error naming the run's values, the file, the field and the reason —
/// before anything runs.
pub fn prepare(scene_file: &Path, spec: SweepSpec) -> Result<PreparedSweep> {
    let bytes = std::fs::read(scene_file)
        .with_context(|| format!("{}: cannot read the scene file", scene_file.display()))?;
    let base = Scene::load(scene_file, &[])?;
    let mut runs = Vec::with_capacity(spec.total_runs());
    let mut grid_scene: Option<(Vec<String>, Scene)> = None;
    for p in spec.points() {
        let scene = match &grid_scene {
            Some((values, s)) if *values == p.values => s.clone(),
            _ => {
                let overrides: Vec<(String, String)> = spec
                    .vary
                    .iter()
                    .zip(&p.values)
                    .flat_map(|(v, value)| v.linked_paths().map(|p| (p.to_string(), value.clone())))
                    .collect();
                let s = base
                    .with_overrides(&overrides)
                    .with_context(|| format!("sweep run {} ({})", p.index, spec.caption(&p)))?;
                grid_scene = Some((p.values.clone(), s.clone()));
                s
            }
        };
        let scene = apply_seed(&scene, p.seed);
        if p.seed > 0 {
            scene
                .validate()
                .with_context(|| format!("sweep run {} ({})", p.index, spec.caption(&p)))?;
        }
        runs.push((p, scene));
    }
    if spec.seeds > 1 && !has_seeded_source(&base) {
        log::warn!(
            "--seeds {}: {} has no seeded sphere source (a RandomBox, or a Lattice with jitter > 0), so every seed gives the same run",
            spec.seeds,
            scene_file.display()
        );
    }
    if base.analysis.heap.is_none() {
        log::warn!(
            "{} has no analysis.heap section: the sweep records no angles of repose",
            scene_file.display()
        );
    }
    Ok(PreparedSweep {
        scene_file: scene_file.to_owned(),
        scene_hash: content_hash(&bytes),
        base,
        spec,
        runs,
    })
}

/// How to run a sweep.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// The sweep directory.
    pub out_dir: PathBuf,
    /// Runs at once (≥ 1).
    pub jobs: usize,
    /// Which shard to run ([`Shard::ALL`] for the whole sweep).
    pub shard: Shard,
    /// Keep VTU frames in the run directories (off by default).
    pub frames: bool,
    /// The solver backend of every run.
    pub backend: BackendChoice,
    /// Draw the overall progress bar (only when stderr is a terminal).
    pub progress: bool,
    /// Run every run, even one a previous sweep into the same directory
    /// finished; without it such runs are reused ([`finished_run`]).
    pub rerun: bool,
}

/// What a sweep or a merge produced.
#[derive(Clone, Debug)]
pub struct SweepReport {
    /// The rows written to `sweep.csv`, in run order.
    pub rows: Vec<SweepRow>,
    /// How many of them have an error.
    pub failed: usize,
    /// The sweep directory.
    pub out_dir: PathBuf,
    /// The files written (`sweep.csv`, `sweep.json`, and for a whole sweep
    /// `sweep.png` and `contact_sheet.png` when they could be made).
    pub files: Vec<PathBuf>,
}

/// Runs the runs of `opts.shard` of `sweep`, `opts.jobs` at a time, and
/// writes `sweep.csv` and `sweep.json` — and, for the whole sweep (shard
/// 1/1), `sweep.png` and `contact_sheet.png`. A run that fails is a row
/// with `error` filled; errors are returned only for the sweep's own
/// files.
pub fn run_sweep(sweep: &PreparedSweep, opts: &SweepOptions) -> Result<SweepReport> {
    crate::interrupt::install();
    if opts.jobs == 0 {
        bail!("--jobs must be at least 1 (got 0)");
    }
    let out = &opts.out_dir;
    let runs_dir = out.join("runs");
    std::fs::create_dir_all(&runs_dir)
        .with_context(|| format!("cannot create {}", runs_dir.display()))?;
    let mine: Vec<&(RunPoint, Scene)> = sweep
        .runs
        .iter()
        .filter(|(p, _)| opts.shard.contains(p.index))
        .collect();
    log::info!(
        "sweep of {}: {} runs in all, {} in shard {}, {} at a time",
        sweep.scene_file.display(),
        sweep.runs.len(),
        mine.len(),
        opts.shard,
        opts.jobs.min(mine.len().max(1))
    );
    let bar = if opts.progress {
        let b = ProgressBar::new(mine.len() as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40.cyan/blue} {pos}/{len} runs  ETA {eta}  {msg}",
            )
            .expect("valid template"),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let jobs = opts.jobs.min(mine.len()).max(1);
    let threads_per_run = (rayon::current_num_threads() / jobs).max(1);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<SweepRow>> = Mutex::new(Vec::with_capacity(mine.len()));
    let failed_count = AtomicUsize::new(0);
    let done_count = AtomicUsize::new(0);
    let sweep_start = std::time::Instant::now();
    let worker = || {
        let pool = if jobs > 1 {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads_per_run)
                .build()
                .ok()
        } else {
            None
        };
        loop {
            if crate::interrupt::requested() {
                // SIGINT/SIGTERM: finish the runs in progress (they stop
                // after their current step), start no more.
                break;
            }
            let k = next.fetch_add(1, Ordering::SeqCst);
            let Some((p, scene)) = mine.get(k) else {
                break;
            };
            let dir = runs_dir.join(sweep.spec.run_dir_name(p));
            let run = || {
                if !opts.rerun {
                    if let Some(row) = finished_run(p, scene, &dir, opts) {
                        log::info!(
                            "run {} was finished by an earlier sweep: reused ({})",
                            p.index,
                            dir.display()
                        );
                        return row;
                    }
                }
                run_one(p, scene, &dir, opts)
            };
            let row = match &pool {
                Some(pool) => pool.install(run),
                None => run(),
            };
            if row.run_failed() {
                failed_count.fetch_add(1, Ordering::SeqCst);
            }
            let done = done_count.fetch_add(1, Ordering::SeqCst) + 1;
            let elapsed = sweep_start.elapsed().as_secs_f64();
            let eta = elapsed / done as f64 * (mine.len() - done) as f64;
            let line = format!(
                "[{done}/{}, ETA {eta:.0} s] run {} ({}): {}, {} s wall",
                mine.len(),
                p.index,
                sweep.spec.caption(p),
                if row.run_failed() {
                    format!("FAILED: {}", row.error)
                } else {
                    let mut what = match (row.angle_deg, row.angle_stderr_deg) {
                        (Some(a), Some(e)) => format!("angle {a:.2}° ± {e:.2}°"),
                        _ => "no angle".to_string(),
                    };
                    if let Some(h) = row.height_over_diameter {
                        what += &format!(", height {h:.2} D");
                    }
                    if let Some(r) = row.bottom_mean_radius_over_diameter {
                        what += &format!(", mean radius {r:.2} D");
                    }
                    if !row.error.is_empty() {
                        what += &format!(" ({})", row.error);
                    }
                    what
                },
                row.wall_time_s.map(fmt_num).unwrap_or_else(|| "?".into())
            );
            bar.suspend(|| log::info!("{line}"));
            bar.inc(1);
            let failed = failed_count.load(Ordering::SeqCst);
            if failed > 0 {
                bar.set_message(format!("{failed} failed"));
            }
            results.lock().unwrap_or_else(|e| e.into_inner()).push(row);
        }
    };
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(worker);
        }
    });
    bar.finish_and_clear();
    let mut rows = results.into_inner().unwrap_or_else(|e| e.into_inner());
    if rows.len() < mine.len() {
        log::warn!(
            "interrupted: {} of {} runs were not started; sweep.csv lists the {} that ran",
            mine.len() - rows.len(),
            mine.len(),
            rows.len()
        );
    }
    rows.sort_by_key(|r| r.run);
    let manifest = Manifest {
        version: MANIFEST_VERSION,
        scene_file: sweep.scene_file.display().to_string(),
        scene_name: sweep.base.name.clone(),
        scene_hash: sweep.scene_hash.clone(),
        spec: sweep.spec.clone(),
        shard: opts.shard,
        total_runs: sweep.runs.len(),
        runs: rows.iter().map(|r| r.run).collect(),
        run_dirs: mine
            .iter()
            .map(|(p, _)| (p.index, format!("runs/{}", sweep.spec.run_dir_name(p))))
            .collect(),
        repose_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let whole = opts.shard.count == 1;
    write_outputs(out, &manifest, &rows, whole)
}

/// The row of a run that an earlier sweep into the same directory finished,
/// when it can stand for this one: its `summary.json` says it completed or
/// settled, it was written by this version of repose, its `scene.ron` is
/// this run's scene to the byte, and its frames were kept if this sweep
/// keeps them. A run that failed, was interrupted or killed (no summary),
/// or differs in any of these is run again.
fn finished_run(p: &RunPoint, scene: &Scene, dir: &Path, opts: &SweepOptions) -> Option<SweepRow> {
    use crate::output::summary::StopReason;
    // Summaries older than the `stopped` field cannot say how their run
    // ended: such runs are run again.
    let text = std::fs::read_to_string(dir.join("summary.json")).ok()?;
    let raw: serde_json::Value = serde_json::from_str(&text).ok()?;
    raw.get("stopped")?;
    let s: crate::output::summary::Summary = serde_json::from_value(raw).ok()?;
    if !matches!(s.stopped, StopReason::Completed | StopReason::Settled)
        || s.repose_version != env!("CARGO_PKG_VERSION")
        || (opts.frames && !dir.join("frames.pvd").exists())
    {
        return None;
    }
    let same_scene = std::fs::read_to_string(dir.join("scene.ron")).ok()? == scene.to_ron().ok()?;
    same_scene.then(|| SweepRow::from_summary(p, &s))
}

/// Runs one scene into `dir` and turns the outcome into a row.
fn run_one(p: &RunPoint, scene: &Scene, dir: &Path, opts: &SweepOptions) -> SweepRow {
    let t0 = Instant::now();
    let ropts = RunOptions {
        out_dir: Some(dir.to_owned()),
        progress: false,
        no_frames: !opts.frames,
        backend: opts.backend,
        no_picture: false,
        dump_steps: Vec::new(),
        // A sweep owns its run directories: running it again replaces them.
        overwrite: true,
    };
    match run_scene(scene, &ropts) {
        Ok(s) => SweepRow::from_summary(p, &s),
        Err(e) => {
            // The run writes summary.json before it reports a failed step;
            // keep what it has (backend, settling, wall time).
            let mut row = match crate::output::summary::read_summary(dir.join("summary.json")) {
                Ok(s) => SweepRow::from_summary(p, &s),
                Err(_) => SweepRow {
                    run: p.index,
                    values: p.values.clone(),
                    seed: p.seed,
                    wall_time_s: Some(t0.elapsed().as_secs_f64()),
                    ..SweepRow::default()
                },
            };
            row.error = format!("{e:#}");
            row
        }
    }
}

/// Writes `sweep.csv` and `sweep.json`, and with `whole` also `sweep.png`
/// and `contact_sheet.png` (a picture that cannot be made is a warning).
fn write_outputs(
    out: &Path,
    manifest: &Manifest,
    rows: &[SweepRow],
    whole: bool,
) -> Result<SweepReport> {
    let paths: Vec<String> = manifest.spec.vary.iter().map(|v| v.path.clone()).collect();
    let csv = out.join("sweep.csv");
    write_sweep_csv(&csv, &paths, rows)?;
    manifest.write(out)?;
    let mut files = vec![csv, out.join("sweep.json")];
    if whole {
        for metric in SweepMetric::ALL {
            // The pile-size plots only when some run has the numbers.
            if metric != SweepMetric::Angle && !rows.iter().any(|r| metric.of(r).is_some()) {
                continue;
            }
            let png = out.join(metric.file_name());
            match sweep_plot_of(&manifest.spec, &manifest.scene_name, rows, metric)
                .and_then(|img| write_png(&png, &img).map_err(anyhow::Error::new))
            {
                Ok(()) => files.push(png),
                Err(e) => log::warn!("no {}: {e:#}", png.display()),
            }
        }
        let sheet = out.join("contact_sheet.png");
        match sweep_contact_sheet(out, manifest, rows)
            .and_then(|img| write_png(&sheet, &img).map_err(anyhow::Error::new))
        {
            Ok(()) => files.push(sheet),
            Err(e) => log::warn!("no {}: {e:#}", sheet.display()),
        }
    }
    Ok(SweepReport {
        failed: rows.iter().filter(|r| r.run_failed()).count(),
        rows: rows.to_vec(),
        out_dir: out.to_owned(),
        files,
    })
}

/// Mean and sample standard deviation of `xs` (sd 0 for one value);
/// `None` for none.
pub fn mean_sd(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sd = if xs.len() > 1 {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    Some((mean, sd))
}

/// The series of `sweep.png`: the angle against the first varied
/// parameter, mean ± standard deviation over the runs with an angle at each
/// value (the seeds), one series per combination of the other varied
/// parameters (legend `name = value`, name the last segment of the path). Values of the first parameter that
/// are not numbers are plotted at their position in the list (0, 1, …).
/// Without varied parameters, one point at x = 0.
pub fn sweep_series(spec: &SweepSpec, rows: &[SweepRow]) -> Vec<Series> {
    sweep_series_of(spec, rows, &SweepMetric::Angle)
}

/// What a sweep plot shows on its y axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepMetric {
    /// The angle of repose (°): `sweep.png`.
    Angle,
    /// The height over the mean diameter (seed 001 Fig. 5a): `sweep_height.png`.
    HeightOverDiameter,
    /// The bottom's mean radius over the mean diameter (seed 001 Fig. 5b):
    /// `sweep_mean_radius.png`.
    MeanRadiusOverDiameter,
}

impl SweepMetric {
    /// Every metric, in the order the plots are written.
    pub const ALL: [SweepMetric; 3] = [
        SweepMetric::Angle,
        SweepMetric::HeightOverDiameter,
        SweepMetric::MeanRadiusOverDiameter,
    ];

    /// The metric's value in a row.
    pub fn of(self, r: &SweepRow) -> Option<f64> {
        match self {
            SweepMetric::Angle => r.angle_deg,
            SweepMetric::HeightOverDiameter => r.height_over_diameter,
            SweepMetric::MeanRadiusOverDiameter => r.bottom_mean_radius_over_diameter,
        }
    }

    /// The plot's file name.
    pub fn file_name(self) -> &'static str {
        match self {
            SweepMetric::Angle => "sweep.png",
            SweepMetric::HeightOverDiameter => "sweep_height.png",
            SweepMetric::MeanRadiusOverDiameter => "sweep_mean_radius.png",
        }
    }

    /// The y-axis label (and the title's subject).
    pub fn label(self) -> &'static str {
        match self {
            SweepMetric::Angle => "angle of repose (°)",
            SweepMetric::HeightOverDiameter => "pile height / mean diameter",
            SweepMetric::MeanRadiusOverDiameter => "mean radius of the bottom / mean diameter",
        }
    }
}

/// Whether the first varied parameter is drawn on a log₁₀ axis: all its
/// values are numbers > 0 spanning at least two decades (seed 001's
/// 1e-5 … 1 rolling coefficients).
pub fn sweep_log_x(spec: &SweepSpec) -> bool {
    let Some(v) = spec.vary.first() else {
        return false;
    };
    let xs: Option<Vec<f64>> = v.values.iter().map(|x| x.parse::<f64>().ok()).collect();
    match xs {
        Some(xs) if !xs.is_empty() && xs.iter().all(|x| *x > 0.0 && x.is_finite()) => {
            let (lo, hi) = xs
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
            hi / lo >= 100.0
        }
        _ => false,
    }
}

/// [`sweep_series`] for any [`SweepMetric`]; x is log₁₀ of the value when
/// [`sweep_log_x`].
pub fn sweep_series_of(spec: &SweepSpec, rows: &[SweepRow], metric: &SweepMetric) -> Vec<Series> {
    let log_x = sweep_log_x(spec);
    let first: Vec<String> = spec
        .vary
        .first()
        .map(|v| v.values.clone())
        .unwrap_or_else(|| vec![String::new()]);
    let numeric = first.iter().all(|v| v.parse::<f64>().is_ok());
    let x_of = |k: usize| {
        if numeric {
            let x = first[k].parse::<f64>().unwrap_or(f64::NAN);
            if log_x {
                x.log10()
            } else {
                x
            }
        } else {
            k as f64
        }
    };
    // Group: rest-values → first-value index → angles.
    let mut groups: BTreeMap<Vec<usize>, BTreeMap<usize, Vec<f64>>> = BTreeMap::new();
    let index_of = |k: usize, value: &str| {
        spec.vary[k]
            .values
            .iter()
            .position(|v| v == value)
            .unwrap_or(usize::MAX)
    };
    // Every combination gets a series, even one without angles (a gap).
    for p in spec.points() {
        let rest: Vec<usize> = (1..spec.vary.len())
            .map(|k| index_of(k, &p.values[k]))
            .collect();
        let x = if spec.vary.is_empty() {
            0
        } else {
            index_of(0, &p.values[0])
        };
        groups.entry(rest).or_default().entry(x).or_default();
    }
    for r in rows {
        if r.values.len() != spec.vary.len() {
            continue;
        }
        let rest: Vec<usize> = (1..spec.vary.len())
            .map(|k| index_of(k, &r.values[k]))
            .collect();
        let x = if spec.vary.is_empty() {
            0
        } else {
            index_of(0, &r.values[0])
        };
        // A failed run has no numbers; a run whose heap had no slope to fit
        // (a single layer) still has its pile size.
        if let Some(a) = metric.of(r).filter(|a| a.is_finite()) {
            groups
                .entry(rest)
                .or_default()
                .entry(x)
                .or_default()
                .push(a);
        }
    }
    groups
        .into_iter()
        .map(|(rest, points)| {
            let label = rest
                .iter()
                .enumerate()
                .map(|(j, &i)| {
                    let v = &spec.vary[j + 1];
                    // The last segment of each linked path: the legend has
                    // room for "friction = 0.3", not for the full path.
                    let short: Vec<&str> = v
                        .path
                        .split('+')
                        .map(|p| p.rsplit('.').next().unwrap_or(p))
                        .collect();
                    format!(
                        "{} = {}",
                        short.join("+"),
                        v.values.get(i).map_or("?", |s| s)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let pts: Vec<(f64, f64, f64)> = points
                .into_iter()
                .map(|(x, angles)| {
                    let (m, sd) = mean_sd(&angles).unwrap_or((f64::NAN, f64::NAN));
                    (x_of(x), m, sd)
                })
                .collect();
            Series::with_errors(label, &pts)
        })
        .collect()
}

/// `sweep.png`: [`sweep_series`] drawn with [`plot_lines`], titled with the
/// scene name.
pub fn sweep_plot(spec: &SweepSpec, scene_name: &str, rows: &[SweepRow]) -> Result<Image> {
    sweep_plot_of(spec, scene_name, rows, SweepMetric::Angle)
}

/// The plot of one [`SweepMetric`] (`sweep.png` for the angle).
pub fn sweep_plot_of(
    spec: &SweepSpec,
    scene_name: &str,
    rows: &[SweepRow],
    metric: SweepMetric,
) -> Result<Image> {
    let x_label = match spec.vary.first() {
        Some(v) if sweep_log_x(spec) => format!("log10 {}", v.path),
        Some(v) if v.values.iter().all(|x| x.parse::<f64>().is_ok()) => v.path.clone(),
        Some(v) => format!("{} (position in the list)", v.path),
        None => "(nothing varied)".to_string(),
    };
    let opts = PlotOptions {
        title: format!(
            "{scene_name}: {}, mean ± sd over {} seed{}",
            metric.label(),
            spec.seeds,
            if spec.seeds == 1 { "" } else { "s" }
        ),
        x_label,
        y_label: metric.label().to_string(),
        ..PlotOptions::default()
    };
    Ok(plot_lines(&sweep_series_of(spec, rows, &metric), &opts)?)
}

/// A compact caption for a thumbnail: `name=value … s<seed>`, each path
/// shortened to its last segment unless two paths share it.
fn short_caption(spec: &SweepSpec, p: &RunPoint) -> String {
    let last = |path: &str| {
        path.rsplit(['.', '[', ']'])
            .find(|s| !s.is_empty())
            .unwrap_or(path)
            .to_string()
    };
    let shorts: Vec<String> = spec.vary.iter().map(|v| last(&v.path)).collect();
    let unique = shorts.iter().collect::<BTreeSet<_>>().len() == shorts.len();
    let mut parts: Vec<String> = spec
        .vary
        .iter()
        .zip(&shorts)
        .zip(&p.values)
        .map(|((v, short), value)| format!("{}={value}", if unique { short } else { &v.path }))
        .collect();
    parts.push(format!("s{}", p.seed));
    parts.join(" ")
}

/// `contact_sheet.png`: every run's `final.png` (found through the
/// manifest's `run_dirs`, relative to `dir`) with a caption of its index,
/// values (paths shortened to their last segment) and seed; a missing or unreadable picture is a grey tile whose caption
/// says so. ⌈√n⌉ columns.
pub fn sweep_contact_sheet(dir: &Path, manifest: &Manifest, rows: &[SweepRow]) -> Result<Image> {
    let mut items = Vec::with_capacity(rows.len());
    for r in rows {
        let p = RunPoint {
            index: r.run,
            values: r.values.clone(),
            seed: r.seed,
        };
        let mut caption = format!("#{} {}", r.run, short_caption(&manifest.spec, &p));
        let pic = manifest
            .run_dirs
            .get(&r.run)
            .map(|d| dir.join(d).join("final.png"));
        let img = match pic.as_ref().map(read_png) {
            Some(Ok(img)) => img,
            _ => {
                caption.push_str(" (no picture)");
                Image::new(400, 200, Rgb::LIGHT_GREY)?
            }
        };
        items.push((img, caption));
    }
    let cols = (items.len() as f64).sqrt().ceil().max(1.0) as usize;
    Ok(contact_sheet(&items, cols)?)
}

/// Joins the sweep directories `dirs` (shards of one sweep) into `out`:
/// checks that their manifests describe the same sweep (scene hash, varied
/// values, seeds, total; an error names the first directory that differs
/// from the first one), that no run is in two directories and none is
/// missing (errors list them), then writes `sweep.csv` (sorted by run
/// index), `sweep.json` (shard 1/1, run directories as paths into the
/// shards), `sweep.png` and `contact_sheet.png`.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<SweepReport> {
    if dirs.is_empty() {
        bail!("merge: no sweep directories given");
    }
    // Nothing is created until every shard checks out.
    let out_abs = std::fs::canonicalize(out).unwrap_or_else(|_| out.to_owned());
    let mut first: Option<(PathBuf, Manifest)> = None;
    let mut rows: Vec<SweepRow> = Vec::new();
    let mut run_dirs = BTreeMap::new();
    let mut owner: BTreeMap<usize, PathBuf> = BTreeMap::new();
    let mut duplicates: Vec<String> = Vec::new();
    for dir in dirs {
        if std::fs::canonicalize(dir).ok().as_ref() == Some(&out_abs) {
            bail!(
                "merge: --out {} is one of the directories to merge; choose another",
                out.display()
            );
        }
        let m = Manifest::read(dir)?;
        if let Some((d0, m0)) = &first {
            let mut differs = Vec::new();
            if m.scene_hash != m0.scene_hash {
                differs.push(format!(
                    "scene file contents ({} {} vs {} {})",
                    m.scene_file, m.scene_hash, m0.scene_file, m0.scene_hash
                ));
            }
            if m.spec != m0.spec {
                differs.push("varied parameters or seeds".to_string());
            }
            if m.total_runs != m0.total_runs {
                differs.push(format!("run count ({} vs {})", m.total_runs, m0.total_runs));
            }
            if !differs.is_empty() {
                bail!(
                    "merge: {} is not a shard of the same sweep as {}: its {} differ",
                    dir.display(),
                    d0.display(),
                    differs.join(", ")
                );
            }
        }
        let csv = dir.join("sweep.csv");
        let (paths, shard_rows) = read_sweep_csv(&csv)?;
        let want: Vec<String> = m.spec.vary.iter().map(|v| v.path.clone()).collect();
        if paths != want {
            bail!(
                "{}: columns {:?} do not match the varied paths {:?} of {}",
                csv.display(),
                paths,
                want,
                dir.join("sweep.json").display()
            );
        }
        for r in shard_rows {
            if r.run >= m.total_runs {
                bail!(
                    "{}: run {} is beyond the sweep's {} runs",
                    csv.display(),
                    r.run,
                    m.total_runs
                );
            }
            if let Some(prev) = owner.get(&r.run) {
                duplicates.push(format!(
                    "run {} (in {} and {})",
                    r.run,
                    prev.display(),
                    dir.display()
                ));
                continue;
            }
            owner.insert(r.run, dir.clone());
            if let Some(d) = m.run_dirs.get(&r.run) {
                let full = dir.join(d);
                let rel = std::fs::canonicalize(&full)
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| full.display().to_string());
                run_dirs.insert(r.run, rel);
            }
            rows.push(r);
        }
        if first.is_none() {
            first = Some((dir.clone(), m));
        }
    }
    let (_, m0) = first.expect("at least one directory");
    if !duplicates.is_empty() {
        bail!(
            "merge: {} run{} found twice: {}",
            duplicates.len(),
            if duplicates.len() == 1 { "" } else { "s" },
            duplicates.join("; ")
        );
    }
    let missing: Vec<usize> = (0..m0.total_runs)
        .filter(|i| !owner.contains_key(i))
        .collect();
    if !missing.is_empty() {
        let shown: Vec<String> = missing.iter().take(20).map(|i| i.to_string()).collect();
        let shards: BTreeSet<String> = if m0.shard.count > 1 {
            missing
                .iter()
                .map(|i| format!("{}/{}", i % m0.shard.count + 1, m0.shard.count))
                .collect()
        } else {
            BTreeSet::new()
        };
        bail!(
            "merge: {} of {} runs missing: {}{}{}",
            missing.len(),
            m0.total_runs,
            shown.join(", "),
            if missing.len() > shown.len() {
                ", …"
            } else {
                ""
            },
            if shards.is_empty() {
                String::new()
            } else {
                format!(
                    " (shard{} {} not given)",
                    if shards.len() == 1 { "" } else { "s" },
                    shards.into_iter().collect::<Vec<_>>().join(", ")
                )
            }
        );
    }
    rows.sort_by_key(|r| r.run);
    let manifest = Manifest {
        shard: Shard::ALL,
        runs: rows.iter().map(|r| r.run).collect(),
        run_dirs,
        repose_version: env!("CARGO_PKG_VERSION").to_string(),
        ..m0
    };
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    write_outputs(out, &manifest, &rows, true)
}
