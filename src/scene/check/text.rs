//! Checks on a scene file's text before it is read as a scene: the
//! `version` of a document that did not parse, and every NaN or infinite
//! number with its path (which overrides, going through JSON, could not
//! see).

use crate::scene::error::Issue;

/// The `version` field of a document that did not parse as a [`Scene`], if
/// it can be read at all.
pub(crate) fn peek_version(opts: &ron::Options, text: &str) -> Option<f64> {
    let value: ron::Value = opts.from_str(text).ok()?;
    let ron::Value::Map(map) = value else {
        return None;
    };
    match map.get(&ron::Value::String("version".into()))? {
        ron::Value::Number(n) => Some(n.into_f64()),
        _ => None,
    }
}

/// Every NaN or infinite number anywhere in the document, with its path
/// (`spheres[3].pos[1]`). Runs on the text before overrides, which go
/// through JSON where NaN cannot be represented.
pub(crate) fn non_finite_numbers(opts: &ron::Options, text: &str) -> Vec<Issue> {
    fn walk(v: &ron::Value, path: &mut String, out: &mut Vec<Issue>) {
        match v {
            ron::Value::Number(n) => {
                let x = n.into_f64();
                if !x.is_finite() {
                    out.push(Issue::new(
                        path.clone(),
                        format!("must be a finite number (got {x})"),
                    ));
                }
            }
            ron::Value::Option(Some(inner)) => walk(inner, path, out),
            ron::Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    walk(item, path, out);
                    path.truncate(len);
                }
            }
            ron::Value::Map(map) => {
                for (k, item) in map.iter() {
                    let len = path.len();
                    let key = match k {
                        ron::Value::String(s) => s.clone(),
                        other => format!("{other:?}"),
                    };
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&key);
                    walk(item, path, out);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }
    let Ok(value) = opts.from_str::<ron::Value>(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk(&value, &mut String::new(), &mut out);
    out
}
