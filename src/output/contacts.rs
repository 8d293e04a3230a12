//! The contact output of a run (`output.contacts`, `repose run
//! --contacts`): each frame's contacts ([`ContactForces`]) as a `.vtu` of
//! lines, strung into `contacts.pvd`, and as a CSV table beside it.
//!
//! **The lines** (`contacts_NNNNN.vtu`): one `VTK_LINE` cell per contact,
//! from body A's centre to body B's, or to the contact point where B is a
//! boundary, so that the network of lines is the force chains. Cell data:
//!
//! | name | type | components | meaning |
//! | --- | --- | --- | --- |
//! | `normal_force` | Float64 | 1 | f_n (N) |
//! | `force` | Float64 | 3 | f_n n + f_t on B (N) |
//! | `tangential_force` | Float64 | 3 | f_t (N) |
//! | `spinning_torque` | Float64 | 1 | t_s about n (N m) |
//! | `rolling_torque` | Float64 | 3 | t_r (N m) |
//! | `gap` | Float64 | 1 | signed distance (m) |
//! | `elastic_energy` | Float64 | 1 | energy the contact stores (J; penalty springs, else 0) |
//! | `body_a`, `body_b` | Int64 | 1 | ends; `body_b` −1 for a boundary |
//! | `boundary` | Int32 | 1 | the boundary's index, −1 between bodies |
//!
//! In ParaView: open `contacts.pvd` beside `frames.pvd`, colour by
//! `normal_force`; Filters → Tube with *Vary Radius* by `normal_force`
//! draws thicker lines for stronger contacts.
//!
//! **The table** (`contacts_NNNNN.csv`), one row per contact:
//! `body_a,body_b,boundary,px,py,pz,nx,ny,nz,gap,fn,ftx,fty,ftz,ts,trx,try,trz,elastic_energy`
//! — `body_b` empty where B is a boundary, `boundary` its name (empty
//! between bodies), then the point, the normal, the gap, the loads on B
//! and the stored energy, in SI units. The loads are the step's impulses over its length
//! (means over the step that ends at the frame; [`crate::contact_forces`]).

use std::io::{self, Write};
use std::path::Path;

use crate::bodies::Bodies;
use crate::collision::NO_BODY;
use crate::contact_forces::ContactForces;

use super::csv::Num;
use super::vtk::{begin_piece, data_array, end_piece, put_f64};
use super::write_atomic;

/// The header of a frame's contact table.
pub const CONTACTS_CSV_HEADER: &str =
    "body_a,body_b,boundary,px,py,pz,nx,ny,nz,gap,fn,ftx,fty,ftz,ts,trx,try,trz,elastic_energy";

/// The VTK cell type number of a line segment.
const VTK_LINE: u8 = 3;

/// Writes the contacts `c` of the frame at `time` as lines (module docs),
/// atomically; `bodies` give the centres.
///
/// Errors: I/O failures; `InvalidInput` when `time` is not finite or a
/// contact names a body that is not there.
pub fn write_contacts_vtu(
    path: impl AsRef<Path>,
    c: &ContactForces,
    bodies: &Bodies,
    time: f64,
) -> io::Result<()> {
    let n = bodies.len();
    let bad = (0..c.len()).find(|&k| {
        c.body_a[k] as usize >= n || (c.body_b[k] != NO_BODY && c.body_b[k] as usize >= n)
    });
    if let Some(k) = bad {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("contact {k} names a body beyond the {n} there are"),
        ));
    }
    if !time.is_finite() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("frame time {time} is not finite"),
        ));
    }
    write_atomic(path.as_ref(), |w| write_lines_to(w, c, bodies, time))
}

fn write_lines_to<W: Write>(
    w: &mut W,
    c: &ContactForces,
    bodies: &Bodies,
    time: f64,
) -> io::Result<()> {
    let m = c.len();
    let f = 8;
    let ends = |k: usize| {
        let a = bodies.pos[c.body_a[k] as usize];
        let b = match c.body_b[k] {
            NO_BODY => c.point[k],
            j => bodies.pos[j as usize],
        };
        [a, b]
    };
    let scalar = |w: &mut W, name: &str, v: &dyn Fn(usize) -> f64| {
        data_array(w, "Float64", name, &[], f * m, |e| {
            (0..m).try_for_each(|k| put_f64(e, v(k)))
        })
    };
    let vector = |w: &mut W, name: &str, v: &dyn Fn(usize) -> glam::DVec3| {
        data_array(w, "Float64", name, &["", "", ""], 3 * f * m, |e| {
            (0..m).try_for_each(|k| v(k).to_array().iter().try_for_each(|&x| put_f64(e, x)))
        })
    };
    begin_piece(w, time, 2 * m, m)?;
    writeln!(
        w,
        "      <CellData Scalars=\"normal_force\" Vectors=\"force\">"
    )?;
    scalar(w, "normal_force", &|k| c.normal_force[k])?;
    vector(w, "force", &|k| c.force(k))?;
    vector(w, "tangential_force", &|k| c.tangential_force[k])?;
    scalar(w, "spinning_torque", &|k| c.spinning_torque[k])?;
    vector(w, "rolling_torque", &|k| c.rolling_torque[k])?;
    scalar(w, "gap", &|k| c.gap[k])?;
    scalar(w, "elastic_energy", &|k| c.energy(k))?;
    data_array(w, "Int64", "body_a", &[], 8 * m, |e| {
        (0..m).try_for_each(|k| e.write_all(&i64::from(c.body_a[k]).to_le_bytes()))
    })?;
    data_array(w, "Int64", "body_b", &[], 8 * m, |e| {
        (0..m).try_for_each(|k| {
            let b = if c.body_b[k] == NO_BODY {
                -1
            } else {
                i64::from(c.body_b[k])
            };
            e.write_all(&b.to_le_bytes())
        })
    })?;
    data_array(w, "Int32", "boundary", &[], 4 * m, |e| {
        (0..m).try_for_each(|k| {
            let b = if c.body_b[k] == NO_BODY {
                c.wall[k] as i32
            } else {
                -1
            };
            e.write_all(&b.to_le_bytes())
        })
    })?;
    writeln!(w, "      </CellData>")?;
    writeln!(w, "      <Points>")?;
    data_array(
        w,
        "Float64",
        "position",
        &["", "", ""],
        2 * 3 * f * m,
        |e| {
            (0..m).try_for_each(|k| {
                ends(k)
                    .iter()
                    .try_for_each(|p| p.to_array().iter().try_for_each(|&x| put_f64(e, x)))
            })
        },
    )?;
    writeln!(w, "      </Points>")?;
    writeln!(w, "      <Cells>")?;
    data_array(w, "Int64", "connectivity", &[], 2 * 8 * m, |e| {
        (0..2 * m as i64).try_for_each(|i| e.write_all(&i.to_le_bytes()))
    })?;
    data_array(w, "Int64", "offsets", &[], 8 * m, |e| {
        (1..=m as i64).try_for_each(|k| e.write_all(&(2 * k).to_le_bytes()))
    })?;
    data_array(w, "UInt8", "types", &[], m, |e| {
        (0..m).try_for_each(|_| e.write_all(&[VTK_LINE]))
    })?;
    writeln!(w, "      </Cells>")?;
    end_piece(w)
}

/// Writes the contacts `c` as a CSV table (module docs), atomically;
/// `boundaries` names the boundaries by index.
pub fn write_contacts_csv(
    path: impl AsRef<Path>,
    c: &ContactForces,
    boundaries: &[String],
) -> io::Result<()> {
    write_atomic(path.as_ref(), |w| {
        writeln!(w, "{CONTACTS_CSV_HEADER}")?;
        for k in 0..c.len() {
            write!(w, "{},", c.body_a[k])?;
            if c.body_b[k] == NO_BODY {
                let name = boundaries
                    .get(c.wall[k] as usize)
                    .map_or("", String::as_str);
                write!(w, ",{}", super::walls_csv::csv_field(name))?;
            } else {
                write!(w, "{},", c.body_b[k])?;
            }
            let (p, n, t, r) = (
                c.point[k],
                c.normal[k],
                c.tangential_force[k],
                c.rolling_torque[k],
            );
            for x in [p.x, p.y, p.z, n.x, n.y, n.z, c.gap[k], c.normal_force[k]] {
                write!(w, ",{}", Num(x))?;
            }
            for x in [t.x, t.y, t.z, c.spinning_torque[k], r.x, r.y, r.z] {
                write!(w, ",{}", Num(x))?;
            }
            writeln!(w, ",{}", Num(c.energy(k)))?;
        }
        Ok(())
    })
}
