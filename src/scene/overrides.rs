//! `--set path=value` overrides.
//!
//! The scene is turned into a JSON tree (serde's data model: structs are
//! objects, lists and vectors are arrays, an enum variant is a one-key object
//! such as `{"Lattice": {…}}`, `None` is `null`), the dotted path is walked,
//! the leaf replaced, and the tree read back into a [`Scene`], so the
//! override is type-checked like the file itself.
//!
//! Path syntax: keys and list indices separated by dots, `[i]` also accepted
//! for indices: `materials.0.rolling`, `materials[0].rolling`,
//! `spheres.1.count.2`, `solver.omega`, `gravity.2` (or `gravity.z`). An enum
//! variant is passed through without naming it (`spheres.1.count` reaches the
//! `count` of `Lattice(…)`; `spheres.1.Lattice.count` works too).
//!
//! Values: a JSON number, `true`/`false`, `None`/`null` (for optional fields),
//! `Some(x)` (same as `x`), or text (for string fields such as `name`; quotes
//! optional). Only single values can be set, not whole structs or lists —
//! except that an enum can be switched to another variant by its name, the
//! new variant's fields taking their defaults: `formulation=Penalty` (a
//! penalty formulation with default settings), `formulation=Complementarity`,
//! `solver.method=Apgd`. Naming the variant it already is keeps its fields.
//! A variant may also be written with fields, as a scene file writes it:
//! `formulation=Penalty(normal: Hooke(stiffness: 1e5), skin: Some(0.2))` is
//! that variant, the fields it leaves out at their defaults (whatever it
//! held before). Where the whole value does not read, it is applied field
//! by field — the variant with its fields' defaults, then
//! `formulation.normal=…`, `formulation.skin=…` as overrides of their own —
//! so that the error names the field it is about.

use serde_json::Value;

use super::error::SceneError;
use super::schema::Scene;

/// Splits a `path=value` argument at its first `=`.
pub fn parse_set(arg: &str) -> Result<(String, String), SceneError> {
    let err = |reason: &str| SceneError::SetSyntax {
        arg: arg.to_string(),
        reason: reason.to_string(),
    };
    let (path, value) = arg
        .split_once('=')
        .ok_or_else(|| err("expected path=value, e.g. materials.0.rolling=0.02"))?;
    let (path, value) = (path.trim(), value.trim());
    if path.is_empty() {
        return Err(err("the path before '=' is empty"));
    }
    if value.is_empty() {
        return Err(err("the value after '=' is empty"));
    }
    Ok((path.to_string(), value.to_string()))
}

/// Returns a copy of `scene` with the scalar at `path` set to `value` (see
/// the module docs for both syntaxes). The result is type-checked but not
/// validated; [`Scene::with_overrides`] and [`Scene::load`] validate.
pub fn apply_override(scene: &Scene, path: &str, value: &str) -> Result<Scene, SceneError> {
    let fail = |reason: String| SceneError::Override {
        file: if scene.file.is_empty() {
            "<scene>".to_string()
        } else {
            scene.file.clone()
        },
        path: path.to_string(),
        value: value.to_string(),
        reason,
    };
    let tree = serde_json::to_value(scene)
        .map_err(|e| fail(format!("cannot represent the scene for overriding: {e}")))?;
    // A variant with fields; should it fail, the value may still be plain
    // text that looks like one (a name with brackets), and only if that
    // fails too does the variant's error stand.
    let with_fields = || -> Result<Option<Scene>, SceneError> {
        let Some((name, fields)) = variant_with_fields(value).map_err(fail)? else {
            return Ok(None);
        };
        // The variant as written, the fields it leaves out at their defaults.
        if let Some(body) = ron_to_json(value) {
            let mut whole = tree.clone();
            if let Ok((node, _)) = walk(&mut whole, path) {
                if variant_body(node).is_some() || node.is_string() {
                    *node = body;
                    if let Ok(mut out) = serde_json::from_value::<Scene>(whole) {
                        out.file = scene.file.clone();
                        return Ok(Some(out));
                    }
                }
            }
        }
        // Else field by field, so that the error names the field it is
        // about: the variant with its fields' defaults, then each field.
        let mut fresh = tree.clone();
        set_in_tree(&mut fresh, path, name, Variant::Fresh).map_err(fail)?;
        let mut out: Scene = serde_json::from_value(fresh)
            .map_err(|e| fail(format!("as `{name}` with its fields' defaults: {e}")))?;
        out.file = scene.file.clone();
        for (field, v) in fields {
            out = apply_override(&out, &format!("{}.{field}", path.trim()), v)?;
        }
        Ok(Some(out))
    };
    let variant_error = match with_fields() {
        Ok(Some(out)) => return Ok(out),
        Ok(None) => None,
        Err(e) => Some(e),
    };
    let plain = plain_override(scene, tree, path, value, &fail);
    match (plain, variant_error) {
        (Err(_), Some(e)) => Err(e),
        (plain, _) => plain,
    }
}

/// [`apply_override`] of a value that is not a variant with fields, on the
/// scene's `tree`.
fn plain_override(
    scene: &Scene,
    tree: Value,
    path: &str,
    value: &str,
    fail: &dyn Fn(String) -> SceneError,
) -> Result<Scene, SceneError> {
    let mut unit = tree.clone();
    set_in_tree(&mut unit, path, value, Variant::Unit).map_err(fail)?;
    let mut out: Scene = match serde_json::from_value(unit) {
        Ok(s) => s,
        // A variant name: a unit variant failed; try it with its fields'
        // defaults (`Penalty` → `Penalty(…)`).
        Err(e) if is_variant_name(value) => {
            let mut with_fields = tree;
            set_in_tree(&mut with_fields, path, value, Variant::Defaults).map_err(fail)?;
            serde_json::from_value(with_fields).map_err(|e2| {
                let (e, e2) = (e.to_string(), e2.to_string());
                fail(if e == e2 {
                    e
                } else {
                    format!("{e}; as `{value}(…)` with its fields' defaults: {e2}")
                })
            })?
        }
        Err(e) => return Err(fail(e.to_string())),
    };
    out.file = scene.file.clone();
    Ok(out)
}

/// The one form of a path that comparisons use: segments between dots,
/// brackets read as segments, spaces trimmed (`materials[0].friction` and
/// ` materials.0.friction` are both `materials.0.friction`). A malformed
/// path comes back trimmed (applying it says why).
pub fn canonical_path(path: &str) -> String {
    segments(path).map_or_else(|_| path.trim().to_string(), |s| s.join("."))
}

/// Splits a path into segments (`a.b[2].c` → a, b, 2, c).
fn segments(path: &str) -> Result<Vec<String>, String> {
    let normalised = path.replace('[', ".").replace(']', "");
    let segs: Vec<String> = normalised
        .split('.')
        .map(|s| s.trim().to_string())
        .collect();
    if segs.iter().any(String::is_empty) {
        return Err(format!("malformed path {path:?} (empty segment)"));
    }
    Ok(segs)
}

/// Whether `v` is an enum variant as serde writes it: a one-key object whose
/// key starts with an upper-case letter.
fn variant_body(v: &Value) -> Option<(&String, &Value)> {
    let obj = v.as_object()?;
    if obj.len() != 1 {
        return None;
    }
    let (k, inner) = obj.iter().next()?;
    k.starts_with(|c: char| c.is_ascii_uppercase())
        .then_some((k, inner))
}

fn keys_of(v: &Value) -> String {
    match v {
        Value::Object(o) => {
            if let Some((_, inner)) = variant_body(v) {
                return keys_of(inner);
            }
            o.keys().cloned().collect::<Vec<_>>().join(", ")
        }
        Value::Array(a) if a.is_empty() => "none (the list is empty)".to_string(),
        Value::Array(a) if a.len() == 3 && a.iter().all(Value::is_number) => {
            "0, 1, 2 (or x, y, z)".to_string()
        }
        Value::Array(a) => format!("indices 0..={}", a.len() - 1),
        _ => "none".to_string(),
    }
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "a struct",
        Value::Array(_) => "a list",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::String(_) => "a string",
        Value::Null => "None",
    }
}

/// Whether `raw` reads as an enum variant's name (an identifier that starts
/// with an upper-case letter).
fn is_variant_name(raw: &str) -> bool {
    raw.starts_with(|c: char| c.is_ascii_uppercase())
        && raw.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// How a variant's name sets an enum ([`set_in_tree`]).
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    /// As a unit variant (`"Name"`); the variant it already is stays as it is.
    Unit,
    /// With an empty body (its fields' defaults); the variant it already is
    /// stays as it is.
    Defaults,
    /// With an empty body, whatever the variant was.
    Fresh,
}

/// A variant's name and its fields' (name, value) texts.
type VariantText<'a> = (&'a str, Vec<(&'a str, &'a str)>);

/// `Name(field: value, …)`, a variant with fields as a scene file writes it
/// (not `Some(…)`): its name and its fields' texts, split at the commas
/// outside brackets and quotes. `None` for any other value; an error for a
/// field that is not `name: value`.
fn variant_with_fields(raw: &str) -> Result<Option<VariantText<'_>>, String> {
    let raw = raw.trim();
    let Some(open) = raw.find('(') else {
        return Ok(None);
    };
    let name = raw[..open].trim();
    if !is_variant_name(name) || name == "Some" || !raw.ends_with(')') {
        return Ok(None);
    }
    let inner = &raw[open + 1..raw.len() - 1];
    let mut fields = Vec::new();
    for part in split_top(inner, ',') {
        let (field, value) = part
            .split_once(':')
            .map(|(f, v)| (f.trim(), v.trim()))
            .filter(|(f, v)| {
                !f.is_empty() && !v.is_empty() && f.chars().all(|c| c.is_alphanumeric() || c == '_')
            })
            .ok_or_else(|| {
                format!("in `{name}(…)`, `{part}` is not a field: write each as `name: value`")
            })?;
        fields.push((field, value));
    }
    Ok(Some((name, fields)))
}

/// The parts of `text` between the `sep` characters outside brackets and
/// quotes, trimmed, empty ones (a trailing comma's) left out.
fn split_top(text: &str, sep: char) -> Vec<&str> {
    let (mut parts, mut depth, mut quoted, mut from) = (Vec::new(), 0i32, false, 0);
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => depth += 1,
            ')' | ']' | '}' if !quoted => depth -= 1,
            c if c == sep && !quoted && depth == 0 => {
                parts.push(&text[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[from..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

/// A value as a scene file writes it, in serde's data model as the tree
/// holds it (module docs): a number, `true`/`false`, `None`, `Some(x)`, a
/// quoted string, a tuple or list, a unit variant `Name`, a variant with
/// fields `Name(a: x, …)` or one value `Name(x)`. `None` for text that is
/// none of these.
fn ron_to_json(text: &str) -> Option<Value> {
    let text = text.trim();
    match text {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        "None" => return Some(Value::Null),
        _ => {}
    }
    if let Ok(v @ (Value::Number(_) | Value::String(_))) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    if is_variant_name(text) {
        return Some(Value::String(text.to_string()));
    }
    let items = |inner: &str| -> Option<Value> {
        split_top(inner, ',')
            .into_iter()
            .map(ron_to_json)
            .collect::<Option<Vec<_>>>()
            .map(Value::Array)
    };
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return items(inner);
    }
    let open = text.find('(')?;
    let inner = text.strip_suffix(')')?.get(open + 1..)?;
    let name = text[..open].trim();
    match name {
        "" => return items(inner),
        "Some" => return ron_to_json(inner),
        _ => {}
    }
    let body = match variant_with_fields(text) {
        Ok(Some((_, fields))) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| Some((k.to_string(), ron_to_json(v)?)))
                .collect::<Option<_>>()?,
        ),
        // One value, not a field: `Name(x)`.
        Err(_) if is_variant_name(name) && split_top(inner, ',').len() == 1 => ron_to_json(inner)?,
        _ => return None,
    };
    Some(serde_json::json!({ name: body }))
}

/// The node at `path` of `tree` (passing through enum variants the path
/// does not name) and the path walked, or why the path leads nowhere.
fn walk<'t>(tree: &'t mut Value, path: &str) -> Result<(&'t mut Value, String), String> {
    let segs = segments(path)?;
    let mut node = tree;
    let mut walked = String::new();
    for seg in &segs {
        let here = if walked.is_empty() {
            "the top level".to_string()
        } else {
            format!("`{walked}`")
        };
        // Pass through an enum variant unless the segment names it.
        let through = match variant_body(node) {
            Some((k, _)) if k != seg => Some(k.clone()),
            _ => None,
        };
        if let Some(k) = through {
            node = node.get_mut(&k).expect("variant key present");
        }
        node = match node {
            Value::Object(obj) => {
                if !obj.contains_key(seg) {
                    let keys = obj.keys().cloned().collect::<Vec<_>>().join(", ");
                    return Err(format!("no key `{seg}` at {here}; available keys: {keys}"));
                }
                obj.get_mut(seg).expect("key present")
            }
            Value::Array(items) => {
                let n = items.len();
                let index = match seg.as_str() {
                    "x" if n == 3 => Some(0),
                    "y" if n == 3 => Some(1),
                    "z" if n == 3 => Some(2),
                    s => s.parse::<usize>().ok(),
                };
                match index {
                    Some(i) if i < n => &mut items[i],
                    Some(i) => {
                        return Err(format!(
                            "index {i} is out of range at {here} (it has {n} entries)"
                        ))
                    }
                    None => {
                        let keys = keys_of(&Value::Array(items.clone()));
                        return Err(format!(
                            "`{seg}` is not an index into the list at {here}; available: {keys}"
                        ));
                    }
                }
            }
            other => {
                return Err(format!(
                    "{here} is {}, it has no key `{seg}`",
                    describe(other)
                ))
            }
        };
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(seg);
    }
    Ok((node, walked))
}

/// Sets the leaf at `path` to `raw`; a variant's name as `variant` says.
fn set_in_tree(tree: &mut Value, path: &str, raw: &str, variant: Variant) -> Result<(), String> {
    let (node, walked) = walk(tree, path)?;

    // `None` is the empty optional (module docs), not a variant's name.
    if raw != "None" && is_variant_name(raw) && (variant_body(node).is_some() || node.is_string()) {
        // Switching an enum's variant (module docs).
        if variant != Variant::Fresh && variant_body(node).is_some_and(|(k, _)| k == raw) {
            return Ok(());
        }
        *node = if variant != Variant::Unit {
            serde_json::json!({ raw: {} })
        } else {
            Value::String(raw.to_string())
        };
        return Ok(());
    }
    if matches!(node, Value::Object(_) | Value::Array(_)) {
        return Err(format!(
            "`{walked}` is {}, not a single value; set one of its entries: {}",
            describe(node),
            keys_of(node)
        ));
    }
    let new = parse_value(raw, node)?;
    *node = new;
    Ok(())
}

/// The override value as JSON, checked against the kind of the current one.
fn parse_value(raw: &str, current: &Value) -> Result<Value, String> {
    let mut text = raw.trim();
    if let Some(inner) = text.strip_prefix("Some(").and_then(|t| t.strip_suffix(')')) {
        text = inner.trim();
    }
    if text == "None" {
        text = "null";
    }
    let parsed = serde_json::from_str::<Value>(text).ok();
    let new = match current {
        Value::String(_) => match parsed {
            Some(Value::String(s)) => Value::String(s),
            // An optional unit variant (`solver.fallback=None`).
            Some(Value::Null) => Value::Null,
            _ => Value::String(text.to_string()),
        },
        _ => parsed.unwrap_or_else(|| Value::String(text.to_string())),
    };
    if matches!(new, Value::Object(_) | Value::Array(_)) {
        return Err("only single values can be set (a number, true/false, None or text)".into());
    }
    match (current, &new) {
        (Value::Number(_), Value::Number(_) | Value::Null) => {}
        (Value::Number(_), _) => return Err(format!("expects a finite number (got `{raw}`)")),
        (Value::Bool(_), Value::Bool(_)) => {}
        (Value::Bool(_), _) => return Err(format!("expects true or false (got `{raw}`)")),
        _ => {}
    }
    Ok(new)
}
