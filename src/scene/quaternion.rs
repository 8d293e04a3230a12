//! Orientations in scene files: a unit quaternion written with its parts
//! named, `rot: (w: 0.7071068, x: 0.7071068, y: 0, z: 0)` (a quarter turn
//! about x), so that the order cannot be mistaken. `final.csv`
//! (`qw,qx,qy,qz`), checkpoints and the Python arrays give (w, x, y, z);
//! scene files before this form read a bare `(a, b, c, d)` as
//! (x, y, z, w). A bare tuple is therefore refused, with the named form
//! it meant under the old reading, rather than guessed at.
//!
//! Used as `#[serde(default, with = "quaternion")]` on an
//! `Option<glam::DQuat>` field: `None` (or the field left out) is the
//! identity; the parts are normalised by the scene's builder. The same
//! named form goes through `--set` (`bodies.0.rot.w=0.5`) and is what a
//! run writes in its `scene.ron`.

use glam::DQuat;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The words a refusal of a bare tuple starts with (tests match on them).
pub const BARE_TUPLE: &str = "a quaternion as a bare tuple is ambiguous";

/// A quaternion with named parts (the serde form of the field).
struct Named(DQuat);

impl Serialize for Named {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let q = self.0;
        let mut st = s.serialize_struct("Quaternion", 4)?;
        st.serialize_field("w", &q.w)?;
        st.serialize_field("x", &q.x)?;
        st.serialize_field("y", &q.y)?;
        st.serialize_field("z", &q.z)?;
        st.end()
    }
}

impl<'de> Deserialize<'de> for Named {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NamedVisitor)
    }
}

struct NamedVisitor;

impl<'de> Visitor<'de> for NamedVisitor {
    type Value = Named;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a quaternion with its parts named, (w: …, x: …, y: …, z: …)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Named, A::Error> {
        const PARTS: [&str; 4] = ["w", "x", "y", "z"];
        let mut parts: [Option<f64>; 4] = [None; 4];
        while let Some(key) = map.next_key::<String>()? {
            let Some(k) = PARTS.iter().position(|p| *p == key) else {
                return Err(de::Error::unknown_field(&key, &PARTS));
            };
            if parts[k].is_some() {
                return Err(de::Error::duplicate_field(PARTS[k]));
            }
            parts[k] = Some(map.next_value()?);
        }
        let mut v = [0.0; 4];
        for (k, p) in parts.iter().enumerate() {
            v[k] = p.ok_or_else(|| de::Error::missing_field(PARTS[k]))?;
        }
        let [w, x, y, z] = v;
        Ok(Named(DQuat::from_xyzw(x, y, z, w)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Named, A::Error> {
        let mut parts = Vec::new();
        while let Ok(Some(v)) = seq.next_element::<f64>() {
            parts.push(v);
            if parts.len() > 4 {
                break;
            }
        }
        let meant = match parts[..] {
            [x, y, z, w] => format!(
                "; read as (x, y, z, w), as scene files before this form were, it is \
                 `(w: {w}, x: {x}, y: {y}, z: {z})`"
            ),
            _ => String::new(),
        };
        Err(de::Error::custom(format!(
            "{BARE_TUPLE}: write its parts named, `(w: …, x: …, y: …, z: …)` (final.csv, \
             checkpoints and Python give (w, x, y, z)){meant}"
        )))
    }
}

/// Serialises `Some(q)` as its named parts, `None` as none.
pub fn serialize<S: Serializer>(q: &Option<DQuat>, s: S) -> Result<S::Ok, S::Error> {
    q.map(Named).serialize(s)
}

/// Reads an optional quaternion with named parts; refuses a bare tuple.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DQuat>, D::Error> {
    Ok(Option::<Named>::deserialize(d)?.map(|n| n.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Holder {
        #[serde(default, with = "super")]
        rot: Option<DQuat>,
    }

    fn ron_opts() -> ron::Options {
        ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
    }

    #[test]
    fn named_parts_read_in_any_order_and_write_back_named() {
        let h: Holder = ron_opts()
            .from_str("(rot: (x: 0.5, y: 0.25, w: 0.75, z: 0.125))")
            .unwrap();
        assert_eq!(h.rot, Some(DQuat::from_xyzw(0.5, 0.25, 0.125, 0.75)));
        let text = ron_opts().to_string(&h).unwrap();
        assert!(text.contains("w:0.75,x:0.5,y:0.25,z:0.125"), "{text}");
        let back: Holder = ron_opts().from_str(&text).unwrap();
        assert_eq!(back, h);
        let json = serde_json::to_string(&h).unwrap();
        assert_eq!(json, r#"{"rot":{"w":0.75,"x":0.5,"y":0.25,"z":0.125}}"#);
        assert_eq!(serde_json::from_str::<Holder>(&json).unwrap(), h);
        let none: Holder = ron_opts().from_str("()").unwrap();
        assert_eq!(none.rot, None);
    }

    #[test]
    fn a_bare_tuple_is_refused_with_the_named_form_it_meant() {
        let e = ron_opts()
            .from_str::<Holder>("(rot: (0.7071068, 0, 0, 0.7071068))")
            .unwrap_err()
            .to_string();
        assert!(e.contains(BARE_TUPLE), "{e}");
        assert!(
            e.contains("`(w: 0.7071068, x: 0.7071068, y: 0, z: 0)`"),
            "{e}"
        );
        for bad in [
            "(rot: (w: 1, x: 0, y: 0))",
            "(rot: (w: 1, x: 0, y: 0, z: 0, v: 1))",
            "(rot: (w: 1, w: 1, x: 0, y: 0, z: 0))",
        ] {
            assert!(ron_opts().from_str::<Holder>(bad).is_err(), "{bad}");
        }
    }
}
