//! The scene reference (`docs/scene-format.md`) names every field of the
//! scene schema: each settings struct is serialized with its defaults, and
//! every field name it has must appear, as `` `name` ``, in the section of
//! the reference that documents that struct. A field added to the schema
//! without a line in the reference fails here.

use std::path::Path;

use repose::analysis::{AnalysisSettings, DrumSettings, HeapSettings, SettleSettings};
use repose::formulation::penalty::PenaltySettings;
use repose::formulation::pyramid::PyramidSettings;
use repose::material::Material;
use repose::scene::{CheckpointSettings, OutputSettings, PictureSettings, Scene};
use repose::solver::SolverSettings;
use repose::world::ContactSettings;
use serde::Serialize;

fn reference() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scene-format.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The part of the reference that documents `ty`: from the heading that
/// names `` `ty` `` (else the line that introduces its table as
/// ``(`ty`)``) to the next heading of level 2.
fn section<'a>(doc: &'a str, ty: &str) -> &'a str {
    let needle = format!("`{ty}`");
    let mut offset = 0;
    let mut start = None;
    for line in doc.split_inclusive('\n') {
        if line.starts_with('#') && line.contains(&needle) {
            start = Some(offset);
            break;
        }
        offset += line.len();
    }
    let start = start
        .or_else(|| doc.find(&format!("({needle})")))
        .unwrap_or_else(|| panic!("docs/scene-format.md has no heading naming {needle}"));
    let rest = &doc[start..];
    let end = rest[1..].find("\n## ").map(|e| e + 1).unwrap_or(rest.len());
    &rest[..end]
}

/// The field names of `value` serialized (a struct: its keys).
fn fields<T: Serialize>(value: &T) -> Vec<String> {
    match serde_json::to_value(value).expect("serializes") {
        serde_json::Value::Object(map) => map.keys().cloned().collect(),
        other => panic!("not a struct: {other}"),
    }
}

fn check<T: Serialize>(doc: &str, ty: &str, value: &T) {
    let part = section(doc, ty);
    let missing: Vec<String> = fields(value)
        .into_iter()
        .filter(|f| !part.contains(&format!("`{f}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/scene-format.md: the section on `{ty}` does not name the field(s) {missing:?}"
    );
}

#[test]
fn every_scene_field_is_in_the_reference() {
    let doc = reference();
    let scene = Scene::from_str(
        r#"Scene(version: 1, time_step: 1e-3, duration: 1e-3,
                 materials: [(friction: 0.5)],
                 spheres: [Sphere(pos: (0.0, 0.0, 0.0), radius: 0.01)])"#,
        "minimal.ron",
        &[],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    check(&doc, "Scene", &scene);
    check(&doc, "SolverSettings", &SolverSettings::default());
    check(&doc, "ContactSettings", &ContactSettings::default());
    check(&doc, "OutputSettings", &OutputSettings::default());
    check(&doc, "CheckpointSettings", &CheckpointSettings::default());
    check(&doc, "PictureSettings", &PictureSettings::default());
    check(&doc, "AnalysisSettings", &AnalysisSettings::default());
    check(&doc, "HeapSettings", &HeapSettings::default());
    check(&doc, "DrumSettings", &DrumSettings::default());
    check(&doc, "SettleSettings", &SettleSettings::default());
    check(&doc, "Material", &Material::default());
    check(&doc, "PenaltySettings", &PenaltySettings::default());
    check(&doc, "PyramidSettings", &PyramidSettings::default());
}
