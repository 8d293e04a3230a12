//! The sweep's files: the manifest `sweep.json` and the table `sweep.csv`
//! (one [`SweepRow`] per run), written and read back.

use super::*;
use crate::output::bounded::clip;

/// `sweep.json`: what a sweep (or one shard of it) is, so that [`merge()`]
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
    /// Height over the mean diameter (Acary & Bourrier 2021, Fig. 5).
    pub height_over_diameter: Option<f64>,
    /// Mean distance of the floor-touching spheres from their centroid (m;
    /// the mean radius of Acary & Bourrier 2021).
    pub bottom_mean_radius: Option<f64>,
    /// The same over the mean diameter (Acary & Bourrier 2021, Fig. 5).
    pub bottom_mean_radius_over_diameter: Option<f64>,
    /// When the pile settled (s of simulated time).
    pub settle_time_s: Option<f64>,
    /// Whether it was settled at the end.
    pub settled: Option<bool>,
    /// Steps the run took.
    pub steps: Option<u64>,
    /// Of them, the steps whose solve stopped short of the tolerance (at
    /// its iteration cap or time limit): where most are, the run's numbers
    /// depend on the cap.
    pub steps_not_converged: Option<u64>,
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
            steps: Some(s.steps),
            steps_not_converged: Some(s.solver.steps_not_converged),
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
    let header = sweep_csv_header(paths);
    write_atomic(path, |w| {
        let mut out = csv_writer(w);
        out.write_record(&header)?;
        for r in rows {
            let mut cells = vec![r.run.to_string()];
            cells.extend(r.values.iter().cloned());
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
            for n in [r.steps, r.steps_not_converged] {
                cells.push(n.map(|n| n.to_string()).unwrap_or_default());
            }
            cells.push(opt_num(r.wall_time_s));
            cells.push(r.backend.clone());
            cells.push(r.error.clone());
            out.write_record(&cells)?;
        }
        out.flush()
    })
    .with_context(|| format!("cannot write {}", path.display()))
}

/// The `csv` crate's writer as sweep.csv is written: `,`, `\n` line ends,
/// fields quoted (RFC 4180) only when they hold a comma, a quote or a line
/// break. Numbers are formatted here (Rust's shortest round-trip form), so
/// the file reads back to the same bits.
pub(crate) fn csv_writer<W: std::io::Write>(w: W) -> csv::Writer<W> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(w)
}

/// One CSV record: its 1-based starting line and its fields.
type CsvRecord = (usize, Vec<String>);

/// Splits CSV text into records of fields with the `csv` crate (RFC 4180
/// quoting; `\n` or `\r\n` line ends; empty lines skipped; records of any
/// length, checked by the caller). Returns each record with its 1-based
/// starting line.
fn split_csv(text: &str) -> Result<Vec<CsvRecord>, (usize, String)> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut records = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            (line, e.to_string())
        })?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        records.push((line, record.iter().map(str::to_owned).collect()));
    }
    Ok(records)
}

/// Reads a `sweep.csv` written by [`write_sweep_csv`]; returns the varied
/// paths (from the header) and the rows, bit-for-bit the values written.
/// Errors name the file, the line and the column.
pub fn read_sweep_csv(path: &Path) -> Result<(Vec<String>, Vec<SweepRow>), ReadError> {
    let text = crate::output::bounded::read_text(path).map_err(|err| ReadError::Io {
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
    // Tables written before the step counts were added have every column
    // but those two: they read with the counts missing.
    let older: Vec<&str> = SWEEP_CSV_COLUMNS
        .iter()
        .copied()
        .filter(|c| !matches!(*c, "steps" | "steps_not_converged"))
        .collect();
    let ends_with = |cols: &[&str]| {
        header.len() > cols.len()
            && header[header.len() - cols.len()..]
                .iter()
                .zip(cols)
                .all(|(h, c)| h == c)
    };
    let has_counts = ends_with(&SWEEP_CSV_COLUMNS);
    let trailing = &SWEEP_CSV_COLUMNS[..];
    let n_trailing = if has_counts {
        trailing.len()
    } else {
        older.len()
    };
    let n_vary = header.len().checked_sub(1 + n_trailing).ok_or_else(|| {
        format(
            1,
            format!("header {:?} has too few columns", clip(&header.join(","))),
        )
    })?;
    if header[0] != "run" || !(has_counts || ends_with(&older)) {
        return Err(format(
            1,
            format!(
                "header is {:?}, expected run, the varied paths, then {}",
                clip(&header.join(",")),
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
                    format!("column `{}`: {:?} is not a number ({e})", col(k), clip(s)),
                )
            })
        };
        let count = |k: usize| -> Result<Option<u64>, ReadError> {
            let s = rec[k].trim();
            if s.is_empty() {
                return Ok(None);
            }
            s.parse::<u64>().map(Some).map_err(|_| {
                format(
                    line,
                    format!("column `{}`: {:?} is not a whole number", col(k), clip(s)),
                )
            })
        };
        let whole = |k: usize| -> Result<u64, ReadError> {
            count(k)?.ok_or_else(|| {
                format(
                    line,
                    format!("column `{}`: empty, expected a whole number", col(k)),
                )
            })
        };
        let t = 1 + n_vary; // index of `seed`
                            // Columns after `settled` sit two further on in a table with counts.
        let after = |k: usize| if has_counts { t + k } else { t + k - 2 };
        let settled = match rec[t + 10].trim() {
            "" => None,
            "true" => Some(true),
            "false" => Some(false),
            s => {
                return Err(format(
                    line,
                    format!("column `settled`: {:?} is not true or false", clip(s)),
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
            steps: if has_counts { count(t + 11)? } else { None },
            steps_not_converged: if has_counts { count(t + 12)? } else { None },
            wall_time_s: opt(after(13))?,
            backend: rec[after(14)].clone(),
            error: rec[after(15)].clone(),
        });
    }
    Ok((paths, rows))
}
