//! Reading a scene: the file's text (bounded, UTF-8), RON with the
//! loader's extensions, the version, the scan for non-finite numbers,
//! `--set` overrides and validation, each failure a [`SceneError`] that
//! names the file, the field and the reason; and writing a scene back as
//! RON.

use std::path::Path;

use super::check;
use super::error::SceneError;
use super::generate::PlacedSphere;
use super::overrides::apply_override;
use super::schema::{BoundarySpec, Scene, SphereSource, SCENE_VERSION};

/// A hint for a syntax error just after `Some(`: with `implicit_some` an
/// optional field takes its value directly, and RON then reads `Some` as a
/// struct name and fails with a bare "Expected identifier".
fn some_hint(text: &str, line: usize, col: usize) -> &'static str {
    let before: String = text
        .lines()
        .nth(line.saturating_sub(1))
        .unwrap_or("")
        .chars()
        .take(col.saturating_sub(1) + 1)
        .collect();
    let tail = before.trim_end();
    if tail.ends_with("Some(") || tail.ends_with("Some((") {
        " (an optional field takes its value directly: write `heap: (…)`, not `heap: Some((…))`)"
    } else {
        ""
    }
}

/// The RON options the loader uses (see the module docs).
fn ron_options() -> ron::Options {
    use ron::extensions::Extensions;
    ron::Options::default()
        .with_default_extension(Extensions::IMPLICIT_SOME | Extensions::UNWRAP_VARIANT_NEWTYPES)
}

/// Largest scene file read (bytes): scenes are a few KiB; past this the file
/// is not a scene (a data file given by mistake, a device).
pub const MAX_SCENE_BYTES: u64 = 16 << 20;

/// The text of a scene file, checked as [`Scene::load`] describes; every
/// failure is an `io::Error` whose message says what is wrong.
fn read_scene_text(path: &Path) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file (a directory or a device); give the path of a .ron scene",
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_SCENE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SCENE_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!(
                "larger than {} MiB: not a scene file (scenes are a few KiB of RON text)",
                MAX_SCENE_BYTES >> 20
            ),
        ));
    }
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(e) => {
            let at = e.valid_up_to();
            let before = &body[..at];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let col = at
                - before
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1)
                + 1;
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!(
                    "not UTF-8 text: byte 0x{:02X} at line {line}, column {col} (offset {at}); \
                     save the scene as UTF-8",
                    body[at]
                ),
            ));
        }
    };
    if text.trim().is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidData,
            "the file is empty; a scene starts with `Scene(` (see scenes/pour.ron)",
        ));
    }
    Ok(text.to_string())
}

impl Scene {
    /// Reads, overrides and validates a scene file. `overrides` are
    /// `(path, value)` pairs as [`parse_set`](super::parse_set) returns them, applied in order.
    ///
    /// The file must be a regular file of at most [`MAX_SCENE_BYTES`] of
    /// UTF-8 text (a byte-order mark is accepted and skipped); an empty file,
    /// a device such as `/dev/zero` or a byte that is not UTF-8 (named with
    /// its line, column and offset) is an error before any parsing.
    pub fn load(path: &Path, overrides: &[(String, String)]) -> Result<Scene, SceneError> {
        let file = path.display().to_string();
        let text = read_scene_text(path).map_err(|err| SceneError::Io {
            file: file.clone(),
            err,
        })?;
        Scene::from_str(&text, &file, overrides)
    }

    /// Parses, overrides and validates scene text; `file_label` names it in
    /// errors (and gives the default `name`).
    pub fn from_str(
        text: &str,
        file_label: &str,
        overrides: &[(String, String)],
    ) -> Result<Scene, SceneError> {
        let mut scene = Scene::parse(text, file_label)?;
        for (path, value) in overrides {
            scene = apply_override(&scene, path, value)?;
        }
        scene.validate()?;
        Ok(scene)
    }

    /// Parses scene text without overrides or validation (beyond the
    /// version and a scan for non-finite numbers). Most callers want
    /// [`Scene::from_str`].
    pub fn parse(text: &str, file_label: &str) -> Result<Scene, SceneError> {
        let opts = ron_options();
        let mut scene: Scene = match opts.from_str(text) {
            Ok(s) => s,
            Err(e) => {
                // A file of another version may fail for another reason
                // (a field this build does not know): say the version first.
                if let Some(v) = check::peek_version(&opts, text) {
                    if v != SCENE_VERSION as f64 {
                        return Err(version_error(file_label, v));
                    }
                }
                // A file cut short (a copy interrupted, an editor crash)
                // fails at its end: say so rather than what was expected.
                let end = text.trim_end();
                let end_line = end.lines().count().max(1);
                let end_col = end.lines().last().map_or(0, |l| l.chars().count()) + 1;
                let at_end =
                    (e.position.line, e.position.col) >= (end_line, end_col.saturating_sub(1));
                // A required field left out is reported at the closing
                // parenthesis, which is the file's end for the scene itself.
                let missing = matches!(e.code, ron::Error::MissingStructField { .. });
                let early = if matches!(e.code, ron::Error::Eof) || (at_end && !missing) {
                    "the file ends early (cut short?): "
                } else {
                    ""
                };
                return Err(SceneError::Syntax {
                    file: file_label.to_string(),
                    line: e.position.line,
                    col: e.position.col,
                    message: format!(
                        "{early}{}{}",
                        e.code,
                        some_hint(text, e.position.line, e.position.col)
                    ),
                });
            }
        };
        if scene.version != SCENE_VERSION {
            return Err(version_error(file_label, scene.version as f64));
        }
        let issues = check::non_finite_numbers(&opts, text);
        if !issues.is_empty() {
            return Err(SceneError::Invalid {
                file: file_label.to_string(),
                issues,
            });
        }
        scene.file = file_label.to_string();
        if scene.name.is_empty() {
            scene.name = Path::new(file_label)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
        Ok(scene)
    }

    /// Applies `--set` overrides to a copy of this scene and validates the
    /// result (for sweeps: load the base scene once, vary it per run).
    pub fn with_overrides(&self, overrides: &[(String, String)]) -> Result<Scene, SceneError> {
        let mut scene = self.clone();
        for (path, value) in overrides {
            scene = apply_override(&scene, path, value)?;
        }
        scene.validate()?;
        Ok(scene)
    }

    /// Checks every rule of the format, runs the generators and checks the
    /// spheres against the boundaries; `Ok` means [`Scene::build`] succeeds.
    pub fn validate(&self) -> Result<(), SceneError> {
        check::check(self, false).map(|_| ())
    }

    /// The spheres this scene generates, in body-id order, each with its
    /// source (validates first).
    pub fn spheres(&self) -> Result<Vec<PlacedSphere>, SceneError> {
        check::check(self, false)
    }

    /// The scene as RON text that [`Scene::from_str`] reads back to an
    /// equal scene (for recording the resolved scene of a run). Mesh files
    /// are written as absolute paths, so that the text read from anywhere
    /// (a run's `scene.ron`, a checkpoint) finds them.
    pub fn to_ron(&self) -> Result<String, SceneError> {
        use ron::extensions::Extensions;
        let cfg = ron::ser::PrettyConfig::new()
            .extensions(Extensions::IMPLICIT_SOME | Extensions::UNWRAP_VARIANT_NEWTYPES);
        let mut resolved = self.clone();
        for b in &mut resolved.boundaries {
            if let BoundarySpec::Mesh(m) = b {
                let path = self.mesh_path(m);
                let path = std::path::absolute(&path).unwrap_or(path);
                m.file = path.display().to_string();
            }
        }
        for s in &mut resolved.spheres {
            if let SphereSource::FromFile(f) = s {
                let path = self.relative_path(&f.file);
                let path = std::path::absolute(&path).unwrap_or(path);
                f.file = path.display().to_string();
            }
        }
        let text = ron::ser::to_string_pretty(&resolved, cfg).map_err(|e| {
            SceneError::invalid(&self.file, "(scene)", format!("cannot write as RON: {e}"))
        })?;
        // Name the top-level struct as the files do: `Scene(` rather than `(`.
        let mut out = String::with_capacity(text.len() + 8);
        let mut named = false;
        for line in text.lines() {
            if !named && line == "(" {
                out.push_str("Scene(");
                named = true;
            } else {
                out.push_str(line);
            }
            out.push('\n');
        }
        Ok(out)
    }
}

fn version_error(file: &str, v: f64) -> SceneError {
    SceneError::invalid(
        file,
        "version",
        format!("unsupported version {v} (this build reads {SCENE_VERSION})"),
    )
}
