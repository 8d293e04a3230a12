//! Parameter sweeps: one scene run over a grid of overridden values and
//! seeds, the angles of repose collected in one table and one plot, and
//! sweeps split into shards that a cluster scheduler spreads over machines
//! and [`merge()`] joins again.
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
//! [`merge()`] checks that manifests agree (naming the directory that does
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
//! DIR/sweep_height.png    height / mean diameter, the same way (Acary & Bourrier 2021, Fig. 5a)
//! DIR/sweep_mean_radius.png  bottom mean radius / mean diameter (Acary & Bourrier 2021, Fig. 5b)
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
    SeriesStyle,
};
use crate::run::{resume_run, run_scene, BackendChoice, ResumeOptions, RunOptions};
use crate::scene::{parse_set, Scene, SphereSource};

mod merge;
mod plots;
mod reference;
mod running;
mod table;

pub use merge::*;
pub use plots::*;
pub use reference::*;
use running::write_outputs;
pub use running::*;
pub use table::*;

/// The most runs one sweep may have (a guard against typos such as
/// `--vary a=0:1:10000 --vary b=0:1:10000`).
pub const MAX_RUNS: usize = 1_000_000;

/// Columns of `sweep.csv` before the varied paths.
pub const LEADING_COLUMNS: [&str; 1] = ["run"];

/// Columns of `sweep.csv` after the varied paths (one column per varied
/// path, headed by the path, sits between `run` and `seed`).
pub const SWEEP_CSV_COLUMNS: [&str; 16] = [
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
    "steps",
    "steps_not_converged",
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

/// What is varied: the parameters and the number of seeds per grid point;
/// and what every run sets alike.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepSpec {
    /// The varied parameters, first = slowest in the run order.
    pub vary: Vec<Vary>,
    /// Seeds per grid point (≥ 1).
    pub seeds: u64,
    /// Overrides applied to every run before the varied values (`--set`,
    /// `--solver`, `--fallback`), as (path, value); none of their paths is
    /// varied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<(String, String)>,
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
        // Paths compare in their one canonical form (`a[0].b` is `a.0.b`),
        // each half of a linked `a+b` on its own.
        let mut seen = BTreeSet::new();
        for v in &vary {
            if !v
                .linked_paths()
                .all(|p| seen.insert(crate::scene::canonical_path(p)))
            {
                bail!("--vary {}: this path is varied twice", v.path);
            }
        }
        let spec = SweepSpec {
            vary,
            seeds,
            set: Vec::new(),
        };
        spec.checked_total()?;
        Ok(spec)
    }

    /// The same sweep with `set` applied to every run; an error where a
    /// set path is also varied (which value would a run take?).
    pub fn with_set(mut self, set: Vec<(String, String)>) -> Result<SweepSpec> {
        for (path, _) in &set {
            let path_c = crate::scene::canonical_path(path);
            if self.vary.iter().any(|v| {
                v.linked_paths()
                    .any(|p| crate::scene::canonical_path(p) == path_c)
            }) {
                bail!("--set {path}: this path is also varied (--vary); give it one or the other");
            }
        }
        self.set = set;
        Ok(self)
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

pub(crate) fn safe_name(s: &str) -> String {
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
            SphereSource::Sphere(_) | SphereSource::Body(_) | SphereSource::FromFile(_) => {}
        }
    }
    out
}

/// Whether any sphere source of `scene` draws random numbers (a `RandomBox`,
/// an `Inlet`, or a `Lattice` with jitter > 0), i.e. whether seeds change anything.
pub fn has_seeded_source(scene: &Scene) -> bool {
    scene.spheres.iter().any(|s| match s {
        SphereSource::Lattice(l) => l.jitter > 0.0 || l.random_orientation,
        SphereSource::RandomBox(_) | SphereSource::Inlet(_) => true,
        SphereSource::Sphere(_) | SphereSource::Body(_) | SphereSource::FromFile(_) => false,
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
