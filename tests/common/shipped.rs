//! Loading the shipped scenes (`scenes/*.ron`) in the tests that go through
//! all of them, on a clean clone too: a scene that starts from another
//! run's state (`FromFile(file: "../out/NAME/final.csv")`, e.g.
//! `hopper_discharge.ron` after `hopper_fill.ron`) reads, while that run's
//! file is not there, the initial state of `scenes/NAME.ron`, written to a
//! temporary file. Included with `#[path = "common/shipped.rs"] mod
//! shipped;`.
#![allow(dead_code)]

use std::path::Path;

use repose::output::csv::write_final_csv;
use repose::scene::{Scene, SphereSource};

pub fn load_shipped(path: &Path) -> Result<Scene, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let raw = Scene::parse(&text, &path.display().to_string()).map_err(|e| e.to_string())?;
    let mut sets = Vec::new();
    for (i, s) in raw.spheres.iter().enumerate() {
        let SphereSource::FromFile(f) = s else {
            continue;
        };
        let file = raw.relative_path(&f.file);
        if file.is_file() {
            continue;
        }
        let name = file
            .parent()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| {
                format!(
                    "{}: spheres[{i}]: no run directory in {}",
                    path.display(),
                    f.file
                )
            })?;
        let before = path.with_file_name(format!("{name}.ron"));
        let world = Scene::load(&before, &[])
            .and_then(|s| s.build())
            .map_err(|e| format!("{}: the scene before it: {e}", path.display()))?;
        let tmp = std::env::temp_dir().join(format!(
            "repose-test-{}-{name}-{i}-final.csv",
            std::process::id()
        ));
        write_final_csv(&tmp, &world.state.bodies)
            .map_err(|e| format!("{}: {e}", tmp.display()))?;
        sets.push((
            format!("spheres.{i}.file"),
            format!("{:?}", tmp.display().to_string()),
        ));
    }
    Scene::load(path, &sets).map_err(|e| e.to_string())
}
