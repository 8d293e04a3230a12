//! The scene reference (`docs/scene-format.md`) names every field of the
//! scene schema: each settings struct is serialized with its defaults, and
//! every field name it has must appear, as `` `name` ``, in the section of
//! the reference that documents that struct; each sphere source and
//! boundary, parsed from its required fields alone and serialized, the
//! same in its `###` section; every variant of the enums a scene names
//! inside those (shapes, inlet regions, caps, heap methods, formulations,
//! the penalty models, solver methods and residuals, friction laws,
//! picture options), with its fields, in the section that documents the
//! field holding it. A field or variant added to the schema without a
//! line in the reference fails here.

use std::path::Path;

use repose::analysis::{
    AnalysisSettings, DischargeSettings, DrumSettings, HeapSettings, SettleSettings,
};
use repose::formulation::penalty::PenaltySettings;
use repose::formulation::pyramid::PyramidSettings;
use repose::material::Material;
use repose::model::ContactSettings;
use repose::scene::{CheckpointSettings, OutputSettings, PictureSettings, Scene};
use repose::solver::SolverSettings;
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
    check(
        &doc,
        "DischargeSettings",
        &parse::<DischargeSettings>("(below: 0.0, from: Some(0.1), to: Some(0.2))"),
    );
    check(&doc, "Material", &Material::default());
    check(&doc, "PenaltySettings", &PenaltySettings::default());
    check(&doc, "PyramidSettings", &PyramidSettings::default());
}

/// The part of the reference on one variant: from its `###` heading, which
/// names `` `Variant(…)` ``, to the next heading.
fn variant_section<'a>(doc: &'a str, variant: &str) -> &'a str {
    let needle = format!("### `{variant}(…)`");
    let start = doc
        .find(&needle)
        .unwrap_or_else(|| panic!("docs/scene-format.md has no heading {needle:?}"));
    let rest = &doc[start..];
    let end = rest[1..].find("\n#").map(|e| e + 1).unwrap_or(rest.len());
    &rest[..end]
}

/// Parses RON as scene files are read (implicit `Some`, newtype variants
/// written as their struct).
fn parse<T: serde::de::DeserializeOwned>(ron_text: &str) -> T {
    use ron::extensions::Extensions;
    ron::Options::default()
        .with_default_extension(Extensions::IMPLICIT_SOME | Extensions::UNWRAP_VARIANT_NEWTYPES)
        .from_str(ron_text)
        .unwrap_or_else(|e| panic!("{ron_text}: {e}"))
}

/// The fields of one enum variant written with only its required fields:
/// serialized, every field (defaults included) is a key.
fn variant_fields<T: Serialize + serde::de::DeserializeOwned>(
    ron_text: &str,
) -> (String, Vec<String>) {
    let value: T = parse(ron_text);
    match serde_json::to_value(&value).expect("serializes") {
        serde_json::Value::Object(map) if map.len() == 1 => {
            let (variant, inner) = map.into_iter().next().unwrap();
            match inner {
                serde_json::Value::Object(fields) => (variant, fields.keys().cloned().collect()),
                other => panic!("{variant}: not a struct: {other}"),
            }
        }
        other => panic!("not an externally tagged variant: {other}"),
    }
}

fn check_variants<T: Serialize + serde::de::DeserializeOwned>(doc: &str, minimal: &[&str]) {
    for text in minimal {
        let (variant, fields) = variant_fields::<T>(text);
        let part = variant_section(doc, &variant);
        let missing: Vec<&String> = fields
            .iter()
            .filter(|f| !part.contains(&format!("`{f}`")))
            .collect();
        assert!(
            missing.is_empty(),
            "docs/scene-format.md: the section on `{variant}(…)` does not name the field(s) {missing:?}"
        );
    }
}

/// Every sphere source and boundary, written with its required fields only
/// (serde fills the rest with defaults): each field it has is named in its
/// section of the reference. A new variant needs a line here too: the
/// exhaustive matches below fail to compile without one (they cannot see
/// that it has no line, but the one who adds the arm adds the line).
#[test]
fn every_source_and_boundary_field_is_in_the_reference() {
    use repose::scene::{BoundarySpec, SphereSource};
    let doc = reference();
    let sources = [
        "Sphere(pos: (0.0, 0.0, 0.0), radius: 0.01)",
        "Body(pos: (0.0, 0.0, 0.0), shape: Sphere(radius: 0.01))",
        "Lattice(origin: (0.0, 0.0, 0.0), count: (1, 1, 1), spacing: 0.02, radius: 0.01)",
        "RandomBox(min: (0.0, 0.0, 0.0), max: (1.0, 1.0, 1.0), count: 1, radius: 0.01)",
        "Inlet(region: Box(min: (0.0, 0.0, 0.0), max: (1.0, 1.0, 1.0)), rate: 1, count: 1, radius: 0.01)",
        "FromFile(file: \"final.csv\", material: 0, within: (min: (0.0, 0.0, 0.0), max: (1.0, 1.0, 1.0)))",
    ];
    let boundaries = [
        "Plane(point: (0.0, 0.0, 0.0), normal: (0.0, 0.0, 1.0))",
        "Box(center: (0.0, 0.0, 0.0), half_extents: (1.0, 1.0, 1.0))",
        "Cylinder(center: (0.0, 0.0, 0.0), axis: (0.0, 0.0, 1.0), radius: 1.0, half_length: 1.0)",
        "Plate(center: (0.0, 0.0, 0.0), half_extents: (1.0, 1.0))",
        "Mesh(file: \"m.stl\")",
    ];
    // Every variant is listed: a new one makes these matches fail to compile.
    for t in sources {
        match parse::<SphereSource>(t) {
            SphereSource::Sphere(_)
            | SphereSource::Body(_)
            | SphereSource::Lattice(_)
            | SphereSource::RandomBox(_)
            | SphereSource::Inlet(_)
            | SphereSource::FromFile(_) => {}
        }
    }
    for t in boundaries {
        match parse::<BoundarySpec>(t) {
            BoundarySpec::Plane(_)
            | BoundarySpec::Box(_)
            | BoundarySpec::Cylinder(_)
            | BoundarySpec::Plate(_)
            | BoundarySpec::Mesh(_) => {}
        }
    }
    let kinds: Vec<&str> = sources
        .iter()
        .map(|t| parse::<SphereSource>(t).kind())
        .collect();
    assert_eq!(
        kinds,
        [
            "Sphere",
            "Body",
            "Lattice",
            "RandomBox",
            "Inlet",
            "FromFile"
        ]
    );
    let kinds: Vec<&str> = boundaries
        .iter()
        .map(|t| parse::<BoundarySpec>(t).kind())
        .collect();
    assert_eq!(kinds, ["Plane", "Box", "Cylinder", "Plate", "Mesh"]);
    check_variants::<SphereSource>(&doc, &sources);
    check_variants::<BoundarySpec>(&doc, &boundaries);
}

/// A variant's name (`"Hertz"` of a unit variant, the key of a struct or
/// newtype variant) and the names of its fields (none for a unit variant).
fn variant_and_fields<T: Serialize>(value: &T) -> (String, Vec<String>) {
    match serde_json::to_value(value).expect("serializes") {
        serde_json::Value::String(name) => (name, Vec::new()),
        serde_json::Value::Object(map) if map.len() == 1 => {
            let (name, inner) = map.into_iter().next().unwrap();
            let fields = match inner {
                serde_json::Value::Object(f) => f.keys().cloned().collect(),
                _ => Vec::new(),
            };
            (name, fields)
        }
        other => panic!("not an externally tagged enum value: {other}"),
    }
}

/// Every value's variant is named in `part` (as `` `Name`` followed by
/// `` ` ``, `(` or `:`, or as a field's value in an example, `: Name)`)
/// and so is each of its fields (as `` `field` `` or `field:` in an
/// example).
fn check_enum<T: Serialize>(part: &str, where_: &str, values: &[T]) {
    for v in values {
        let (name, fields) = variant_and_fields(v);
        let named = ["`", "(", ":"]
            .iter()
            .any(|end| part.contains(&format!("`{name}{end}")))
            || part.contains(&format!(": {name})"));
        assert!(
            named,
            "docs/scene-format.md: {where_} does not name the variant `{name}`"
        );
        let missing: Vec<&String> = fields
            .iter()
            .filter(|f| !part.contains(&format!("`{f}`")) && !part.contains(&format!("{f}:")))
            .collect();
        assert!(
            missing.is_empty(),
            "docs/scene-format.md: {where_} does not name the field(s) {missing:?} of `{name}`"
        );
    }
}

/// Every variant of every enum a scene can name below its top-level
/// structs is in the reference, with its fields. Each list is checked
/// complete by an exhaustive match: a new variant does not compile until
/// it is listed here (and then fails until it is documented).
#[test]
fn every_nested_variant_and_its_fields_are_in_the_reference() {
    use glam::DVec3;
    use repose::analysis::{Axis, HeapMethod};
    use repose::boundary::Caps;
    use repose::formulation::penalty::{NormalModel, RollingModel, SpinModel};
    use repose::formulation::Formulation;
    use repose::inlet::InletRegion;
    use repose::material::FrictionLaw;
    use repose::scene::{ColourBy, LookAlong};
    use repose::shape::Shape;
    use repose::sizes::{Basis, SizeDistribution};
    use repose::solver::{ResidualMeasure, SolverMethod};
    let doc = reference();
    let v = DVec3::ONE;

    let shapes = [
        Shape::Sphere { radius: 1.0 },
        Shape::Box { half_extents: v },
        Shape::Cylinder {
            radius: 1.0,
            half_height: 1.0,
        },
        Shape::Capsule {
            radius: 1.0,
            half_height: 1.0,
        },
        parse::<Shape>("Ellipsoid(radii: (1.0, 1.0, 1.0))"),
        parse::<Shape>("ConvexPolyhedron(vertices: [(0.0, 0.0, 0.0)])"),
    ];
    for s in &shapes {
        match s {
            Shape::Sphere { .. }
            | Shape::Box { .. }
            | Shape::Cylinder { .. }
            | Shape::Capsule { .. }
            | Shape::Ellipsoid { .. }
            | Shape::ConvexPolyhedron { .. } => {}
        }
    }
    check_enum(
        variant_section(&doc, "Body"),
        "the section on `Body(…)`",
        &shapes,
    );

    let regions = [
        InletRegion::Box { min: v, max: v },
        InletRegion::Disk {
            center: v,
            normal: v,
            radius: 1.0,
        },
    ];
    for r in &regions {
        match r {
            InletRegion::Box { .. } | InletRegion::Disk { .. } => {}
        }
    }
    check_enum(
        variant_section(&doc, "Inlet"),
        "the section on `Inlet(…)`",
        &regions,
    );

    let laws = [
        parse::<SizeDistribution>("Classes(classes: [(1.0, 2.0, 1.0)], by: Mass)"),
        parse::<SizeDistribution>("Normal(mean: 1.0, sd: 1.0, min: 0.5, max: 1.5)"),
        parse::<SizeDistribution>("LogNormal(median: 1.0, sigma: 1.0, min: 0.5, max: 2.0)"),
    ];
    for l in &laws {
        match l {
            SizeDistribution::Classes { .. }
            | SizeDistribution::Normal { .. }
            | SizeDistribution::LogNormal { .. } => {}
        }
    }
    let sizes = section(&doc, "SizeDistribution");
    check_enum(sizes, "the section on `SizeDistribution`", &laws);
    let bases = [Basis::Number, Basis::Mass];
    for b in bases {
        match b {
            Basis::Number | Basis::Mass => {}
        }
    }
    check_enum(sizes, "the section on `SizeDistribution`", &bases);

    let regions = [
        parse::<repose::analysis::BulkSettings>("Box(min: (0.0, 0.0, 0.0), max: (1.0, 1.0, 1.0))"),
        parse::<repose::analysis::BulkSettings>(
            "Cylinder(center: (0.0, 0.0, 0.0), axis: (0.0, 0.0, 1.0), radius: 1.0, half_length: 1.0)",
        ),
    ];
    for r in &regions {
        match r {
            repose::analysis::BulkSettings::Box { .. }
            | repose::analysis::BulkSettings::Cylinder { .. } => {}
        }
    }
    check_enum(
        section(&doc, "BulkSettings"),
        "the section on `BulkSettings`",
        &regions,
    );

    let caps = [Caps::Open, Caps::Bottom, Caps::Both];
    for c in caps {
        match c {
            Caps::Open | Caps::Bottom | Caps::Both => {}
        }
    }
    check_enum(
        variant_section(&doc, "Cylinder"),
        "the section on `Cylinder(…)`",
        &caps,
    );

    let heap = section(&doc, "HeapSettings");
    let methods = [HeapMethod::Radial, HeapMethod::Planar { axis: Axis::X }];
    for m in &methods {
        match m {
            HeapMethod::Radial | HeapMethod::Planar { .. } => {}
        }
    }
    check_enum(heap, "the section on `HeapSettings`", &methods);
    let axes = [Axis::X, Axis::Y];
    for a in axes {
        match a {
            Axis::X | Axis::Y => {}
        }
    }
    check_enum(heap, "the section on `HeapSettings`", &axes);

    let formulations = [
        Formulation::Complementarity,
        Formulation::Penalty(Default::default()),
        Formulation::PyramidLcp(Default::default()),
    ];
    for f in &formulations {
        match f {
            Formulation::Complementarity | Formulation::Penalty(_) | Formulation::PyramidLcp(_) => {
            }
        }
    }
    // The newtype variants' fields are the settings structs checked by
    // `every_scene_field_is_in_the_reference`; here only their names.
    check_enum(
        section(&doc, "formulation: …"),
        "the section on `formulation`",
        &formulations,
    );

    let penalty = section(&doc, "PenaltySettings");
    let normals = [
        NormalModel::Hertz,
        parse::<NormalModel>("Hooke(stiffness: 1.0)"),
    ];
    for n in &normals {
        match n {
            NormalModel::Hertz | NormalModel::Hooke { .. } => {}
        }
    }
    check_enum(penalty, "the section on `PenaltySettings`", &normals);
    let rolling = [
        RollingModel::Tracked,
        parse::<RollingModel>("ConstantTorque(coefficient: 0.1)"),
    ];
    for r in &rolling {
        match r {
            RollingModel::Tracked | RollingModel::ConstantTorque { .. } => {}
        }
    }
    check_enum(penalty, "the section on `PenaltySettings`", &rolling);
    let spins = [SpinModel::Heuristic, SpinModel::Hertz];
    for s in spins {
        match s {
            SpinModel::Heuristic | SpinModel::Hertz => {}
        }
    }
    check_enum(penalty, "the section on `PenaltySettings`", &spins);

    let solver = section(&doc, "SolverSettings");
    check_enum(
        solver,
        "the section on `SolverSettings`",
        &SolverMethod::ALL,
    );
    for m in SolverMethod::ALL {
        match m {
            SolverMethod::Jacobi
            | SolverMethod::Apgd
            | SolverMethod::Pgs
            | SolverMethod::FixedPoint
            | SolverMethod::ExtraGradient
            | SolverMethod::InteriorPoint
            | SolverMethod::Newton => {}
        }
    }
    let residuals = [
        ResidualMeasure::Weighted,
        ResidualMeasure::Contact,
        ResidualMeasure::Siconos,
    ];
    for r in residuals {
        match r {
            ResidualMeasure::Weighted | ResidualMeasure::Contact | ResidualMeasure::Siconos => {}
        }
    }
    check_enum(solver, "the section on `SolverSettings`", &residuals);

    let laws = [FrictionLaw::Associated, FrictionLaw::DeSaxce];
    for l in laws {
        match l {
            FrictionLaw::Associated | FrictionLaw::DeSaxce => {}
        }
    }
    check_enum(
        section(&doc, "ContactSettings"),
        "the section on `ContactSettings`",
        &laws,
    );

    let picture = section(&doc, "PictureSettings");
    let colours = [ColourBy::Height, ColourBy::Speed];
    for c in colours {
        match c {
            ColourBy::Height | ColourBy::Speed => {}
        }
    }
    check_enum(picture, "the section on `PictureSettings`", &colours);
    let looks = [LookAlong::Y, LookAlong::X];
    for l in looks {
        match l {
            LookAlong::Y | LookAlong::X => {}
        }
    }
    check_enum(picture, "the section on `PictureSettings`", &looks);
}
