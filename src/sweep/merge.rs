//! Joining the shards of one sweep ([`merge()`]).

use super::*;

/// Joins the sweep directories `dirs` (shards of one sweep) into `out`:
/// checks that their manifests describe the same sweep (scene hash, varied
/// values, seeds, total; an error names the first directory that differs
/// from the first one), that no run is in two directories and none is
/// missing (errors list them), then writes `sweep.csv` (sorted by run
/// index), `sweep.json` (shard 1/1, run directories as paths into the
/// shards), `sweep.png` and `contact_sheet.png`.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<SweepReport> {
    merge_with(dirs, out, None)
}

/// [`merge()`], with `reference` curves drawn over the plots.
pub fn merge_with(
    dirs: &[PathBuf],
    out: &Path,
    reference: Option<&Reference>,
) -> Result<SweepReport> {
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
    write_outputs(out, &manifest, &rows, true, reference)
}
