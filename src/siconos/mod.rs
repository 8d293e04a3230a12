//! Reader for the frictional-contact problems of the Siconos test suite, and
//! their embedding into repose's 6-D contact problem.
//!
//! # What for
//!
//! Siconos ships real contact problems (`tests/data/siconos/`, README beside
//! them) in the *local* form: find r and u = W r + q with, per contact i,
//!
//! ```text
//! r_i ∈ K_i,   û_i = u_i + g(u_i) ∈ K_i*,   û_i ⊥ r_i          (Acary & Bourrier 2021, eq. 63)
//! g(u_i) = (μ_i ‖u_{T,i}‖ + μ_{r,i} ‖ω_{R,i}‖, 0, …, 0)
//! ```
//!
//! where K_i is the Coulomb cone {‖r_T‖ ≤ μ r_N} (d = 3, components
//! (n, t1, t2)) or the rolling cone K_r = {‖r_T‖ ≤ μ r_N, ‖m_R‖ ≤ μ_r r_N}
//! (d = 5, components (n, t1, t2, roll1, roll2)).
//!
//! **repose's extension, d = 6.** Siconos has no spinning row. Problems that
//! repose writes ([`SiconosProblem::from_delassus`], `repose run
//! --dump-problem`) carry repose's whole cone as d = 6 with components
//! (n, t1, t2, roll1, roll2, spin): the d = 5 layout with the spinning row
//! appended, so the first five rows read as an rfc3d problem. K_i adds
//! |m_S| ≤ μ_s r_N, g(u_i) adds μ_s |ω_S,i|, and a line of μ_s follows the
//! μ_r line. Such a file may end with `law associated` or `law desaxce`
//! (the default, Siconos' law) so that a problem of the associated law
//! (Tasora & Anitescu 2013) is solved as posed; the error is then measured
//! with û = u. Such a problem is a [`Delassus`](crate::problem::Delassus)
//! operator in its own right: [`SiconosProblem::to_delassus`] embeds it
//! into repose's 6-D contact (γ_n, γ_u, γ_w, τ_n, τ_u, τ_w) so that every
//! repose solver can run on it, and [`SiconosProblem::error`] measures a
//! solution with Siconos' own error (computed directly in d-space, as an
//! independent check of that embedding).
//!
//! # The text format (whitespace separated; blank lines are skipped)
//!
//! ```text
//! d                       3 (fc3d), 5 (rfc3d) or 6 (repose's, above)
//! nc                      number of contacts
//! storageType size0 size1 the matrix W (size0 = size1 = d·nc), then one of:
//!   0 dense:        "size0 size1", then size0·size1 values, column-major
//!   1 sparse-block: nbblocks [blocknumber0 blocknumber1, cumulative row block
//!                   sizes, cumulative column block sizes, filled1 filled2,
//!                   block-row pointers (filled1), block columns (filled2), then
//!                   per block its number and its entries, column-major];
//!                   nbblocks = 0 ends the matrix (W = 0)
//!   2 sparse:       an origin flag, then a CSparse dump: a banner line
//!                   ("CSparse Version …"), a line "m-by-n, nzmax: … nnz: …, 1-norm: …"
//!                   followed by "col j : locations a to b" headers and "i : value"
//!                   lines (compressed columns), or a line "triplet: m-by-n, nzmax: …
//!                   nnz: k" followed by k lines "i j : value"
//! q                       d·nc values
//! μ                       nc values
//! μ_r                     nc values (d = 5 and 6)
//! μ_s                     nc values (d = 6 only)
//! [law NAME]              optional: `associated` or `desaxce` (default)
//! [flag]                  optional legacy `isComplete` flag (0 or 1) that old
//!                         Siconos writers append; anything else is an error
//! ```
//!
//! The CSparse dump prints values with 6 significant digits (`%g`), so a
//! problem read from it matches its dense twin only to about 5e-6 relative.
//!
//! Every error names the file, the line and the reason
//! (`rfc3d/x.dat:17: expected a number for q[3], found "abc"`); no input makes
//! the reader panic, and no allocation is sized by a header value before the
//! data that justifies it has been read.

mod parse;

use std::fmt;
use std::path::Path;

use crate::cone::{project, project_coulomb, project_rolling};
use crate::material::{ConeCoeffs, FrictionLaw};
use crate::problem::explicit::ExplicitDelassus;
use crate::problem::Vec6;

/// Why a Siconos problem could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SiconosError {
    /// The file could not be read.
    #[error("{file}: cannot read the file: {err}")]
    Io {
        /// The file.
        file: String,
        /// The underlying error.
        err: std::io::Error,
    },
    /// The text does not hold a valid problem: `file:line: reason`.
    #[error("{file}:{line}: {reason}")]
    Parse {
        /// The file.
        file: String,
        /// 1-based line of the offending token (the last line for an
        /// unexpected end of file).
        line: usize,
        /// What is wrong, with the offending value.
        reason: String,
    },
}

impl SiconosError {
    /// The 1-based line of a parse error (`None` for an I/O error).
    pub fn line(&self) -> Option<usize> {
        match self {
            SiconosError::Io { .. } => None,
            SiconosError::Parse { line, .. } => Some(*line),
        }
    }
}

/// How the file stored W (Siconos' `storageType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// 0: dense, column-major.
    Dense,
    /// 1: sparse-block (Siconos' SBM).
    SparseBlock,
    /// 2: sparse (a CSparse dump).
    Sparse,
}

impl fmt::Display for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Storage::Dense => "dense",
            Storage::SparseBlock => "sparse-block",
            Storage::Sparse => "sparse",
        })
    }
}

/// A square matrix of `dim × dim` blocks in block-CSR form: block row i holds
/// the blocks `row_offsets[i]..row_offsets[i + 1]`, in increasing column
/// order. Every diagonal block is stored (possibly zero); all-zero
/// off-diagonal blocks are not.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockMatrix {
    /// Block size d.
    pub dim: usize,
    /// Block-row offsets into `cols` (length: number of block rows + 1).
    pub row_offsets: Vec<usize>,
    /// Block column of each stored block.
    pub cols: Vec<usize>,
    /// The stored blocks, `dim * dim` values each, row-major.
    pub blocks: Vec<f64>,
}

impl BlockMatrix {
    /// Number of block rows (= block columns).
    pub fn n_block_rows(&self) -> usize {
        self.row_offsets.len().saturating_sub(1)
    }

    /// Number of stored blocks.
    pub fn n_blocks(&self) -> usize {
        self.cols.len()
    }

    /// Stored block k (row-major `dim × dim`).
    pub fn block(&self, k: usize) -> &[f64] {
        let s = self.dim * self.dim;
        &self.blocks[k * s..(k + 1) * s]
    }

    /// Block (i, j) if stored.
    pub fn get(&self, i: usize, j: usize) -> Option<&[f64]> {
        let range = self.row_offsets[i]..self.row_offsets[i + 1];
        let k = self.cols[range.clone()].binary_search(&j).ok()?;
        Some(self.block(range.start + k))
    }

    /// out = W x.
    pub fn mul(&self, x: &[f64], out: &mut [f64]) {
        let d = self.dim;
        let n = self.n_block_rows() * d;
        assert_eq!(x.len(), n, "W x: x has length {}, expected {n}", x.len());
        assert_eq!(
            out.len(),
            n,
            "W x: out has length {}, expected {n}",
            out.len()
        );
        for i in 0..self.n_block_rows() {
            let o = &mut out[i * d..(i + 1) * d];
            o.fill(0.0);
            for k in self.row_offsets[i]..self.row_offsets[i + 1] {
                let (b, xj) = (self.block(k), &x[self.cols[k] * d..(self.cols[k] + 1) * d]);
                for (r, or) in o.iter_mut().enumerate() {
                    *or += (0..d).map(|c| b[r * d + c] * xj[c]).sum::<f64>();
                }
            }
        }
    }

    /// The full matrix, row-major `n × n` with n = d · block rows (for tests
    /// and small problems).
    pub fn to_dense(&self) -> Vec<f64> {
        let d = self.dim;
        let n = self.n_block_rows() * d;
        let mut m = vec![0.0; n * n];
        for i in 0..self.n_block_rows() {
            for k in self.row_offsets[i]..self.row_offsets[i + 1] {
                let (j, b) = (self.cols[k], self.block(k));
                for r in 0..d {
                    for c in 0..d {
                        m[(i * d + r) * n + j * d + c] = b[r * d + c];
                    }
                }
            }
        }
        m
    }
}

/// Siconos' error of a candidate solution r (data README; Siconos'
/// `fc3d_compute_error` / `rolling_fc3d_compute_error`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SiconosErrorMeasure {
    /// e = ‖r − Π_K(r − (u + g(u)))‖ over all contacts, u = W r + q.
    pub abs: f64,
    /// e / max(‖q‖, ‖r‖, ‖u‖) (e itself when that max is below machine ε).
    pub rel: f64,
}

/// One Siconos contact problem (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct SiconosProblem {
    /// Contact dimension d: 3 (fc3d), 5 (rfc3d) or 6 (repose's extension).
    pub dim: usize,
    /// Number of contacts nc.
    pub n_contacts: usize,
    /// W as block-CSR of d×d blocks.
    pub w: BlockMatrix,
    /// q, d·nc values.
    pub q: Vec<f64>,
    /// Sliding friction μ per contact.
    pub mu: Vec<f64>,
    /// Rolling friction μ_r per contact (d = 5 and 6); empty for d = 3.
    pub mu_r: Vec<f64>,
    /// Spinning friction μ_s per contact (d = 6); empty otherwise.
    pub mu_s: Vec<f64>,
    /// The contact law the problem is posed with (De Saxcé unless the file
    /// says `law associated`).
    pub law: FrictionLaw,
    /// How the file stored W.
    pub storage: Storage,
}

/// The 6-D component (γ_n, γ_u, γ_w, τ_n, τ_u, τ_w) of each of the d
/// components: (n, t1, t2) → 0, 1, 2; (n, t1, t2, roll1, roll2) → 0, 1, 2, 4, 5
/// (Siconos has no spinning component); repose's d = 6 appends spin → 3.
fn component_map(dim: usize) -> &'static [usize] {
    match dim {
        3 => &[0, 1, 2],
        5 => &[0, 1, 2, 4, 5],
        _ => &[0, 1, 2, 4, 5, 3],
    }
}

impl SiconosProblem {
    /// Reads a problem from a file (see the module docs for the format).
    pub fn read(path: &Path) -> Result<Self, SiconosError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|err| SiconosError::Io {
            file: file.clone(),
            err,
        })?;
        Self::parse(&text, &file)
    }

    /// Parses a problem from its text; `file` names it in error messages.
    pub fn parse(text: &str, file: &str) -> Result<Self, SiconosError> {
        parse::problem(text, file)
    }

    /// out = W r (without q).
    pub fn w_times(&self, r: &[f64], out: &mut [f64]) {
        self.w.mul(r, out);
    }

    /// The problem as a 6-D explicit Delassus operator: each d×d block of W
    /// placed in a zero 6×6 block at rows/columns (0, 1, 2) for d = 3,
    /// (0, 1, 2, 4, 5) for d = 5 (no spinning component) or all six for
    /// d = 6, q embedded likewise, cones (μ_i, ρ = μ_{r,i} (0 for d = 3),
    /// σ = μ_{s,i} (0 unless d = 6)), and the problem's law (De Saxcé,
    /// Acary & Bourrier 2021, eq. 63, unless the file says otherwise). So
    /// `apply(embed(r))` = embed(W r + q).
    pub fn to_delassus(&self) -> ExplicitDelassus {
        let d = self.dim;
        let map = component_map(d);
        let blocks = (0..self.w.n_blocks())
            .map(|k| {
                let b = self.w.block(k);
                let mut out = [[0.0; 6]; 6];
                for (r, &rr) in map.iter().enumerate() {
                    for (c, &cc) in map.iter().enumerate() {
                        out[rr][cc] = b[r * d + c];
                    }
                }
                out
            })
            .collect();
        // `ExplicitDelassus` has a private scratch field: start from its default.
        let mut out = ExplicitDelassus::default();
        out.row_offsets = self.w.row_offsets.clone();
        out.cols = self.w.cols.clone();
        out.blocks = blocks;
        out.r = self.embed(&self.q);
        out.cones = (0..self.n_contacts)
            .map(|i| ConeCoeffs {
                mu: self.mu[i],
                rho: self.mu_r.get(i).copied().unwrap_or(0.0),
                sigma: self.mu_s.get(i).copied().unwrap_or(0.0),
            })
            .collect();
        out.law = self.law;
        out
    }

    /// A d = 6 problem (repose's extension, module docs) holding `op`'s
    /// blocks, r and cones exactly: the inverse of [`SiconosProblem::to_delassus`].
    pub fn from_delassus(op: &ExplicitDelassus) -> Self {
        let dim = 6;
        let map = component_map(dim);
        let nc = op.r.len();
        let mut w = BlockMatrix {
            dim,
            row_offsets: op.row_offsets.clone(),
            cols: op.cols.clone(),
            blocks: Vec::with_capacity(op.blocks.len() * 36),
        };
        for b in &op.blocks {
            for &rr in map {
                w.blocks.extend(map.iter().map(|&cc| b[rr][cc]));
            }
        }
        SiconosProblem {
            dim,
            n_contacts: nc,
            w,
            q: op
                .r
                .iter()
                .flat_map(|r| map.iter().map(move |&c| r[c]))
                .collect(),
            mu: op.cones.iter().map(|c| c.mu).collect(),
            mu_r: op.cones.iter().map(|c| c.rho).collect(),
            mu_s: op.cones.iter().map(|c| c.sigma).collect(),
            law: op.law,
            storage: Storage::SparseBlock,
        }
    }

    /// The problem as text in the sparse-block storage (type 1), every
    /// number in Rust's shortest round-trip form, so that reading it back
    /// gives the same problem bit for bit. A d = 6 problem ends with its
    /// `law` line.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let (d, nc) = (self.dim, self.n_contacts);
        let n = d * nc;
        let nb = self.w.n_blocks();
        let mut s = String::with_capacity(nb * d * d * 24 + n * 24);
        let join = |s: &mut String, v: &mut dyn Iterator<Item = String>| {
            let v: Vec<String> = v.collect();
            s.push_str(&v.join(" "));
            s.push('\n');
        };
        let _ = writeln!(s, "{d}\n{nc}\n1\n{n}\n{n}\n{nb}\n{nc}\n{nc}");
        join(&mut s, &mut (1..=nc).map(|k| (k * d).to_string()));
        join(&mut s, &mut (1..=nc).map(|k| (k * d).to_string()));
        let _ = writeln!(s, "{}\n{nb}", nc + 1);
        join(
            &mut s,
            &mut self.w.row_offsets.iter().map(|x| x.to_string()),
        );
        join(&mut s, &mut self.w.cols.iter().map(|x| x.to_string()));
        for k in 0..nb {
            let b = self.w.block(k);
            let _ = writeln!(s, "{k}");
            // Column-major entries.
            join(
                &mut s,
                &mut (0..d * d).map(|e| format!("{:e}", b[(e % d) * d + e / d])),
            );
        }
        join(&mut s, &mut self.q.iter().map(|x| format!("{x:e}")));
        join(&mut s, &mut self.mu.iter().map(|x| format!("{x:e}")));
        if d >= 5 {
            join(&mut s, &mut self.mu_r.iter().map(|x| format!("{x:e}")));
        }
        if d == 6 {
            join(&mut s, &mut self.mu_s.iter().map(|x| format!("{x:e}")));
            let law = match self.law {
                FrictionLaw::Associated => "associated",
                FrictionLaw::DeSaxce => "desaxce",
            };
            let _ = writeln!(s, "law {law}");
        }
        s
    }

    /// A d·nc vector as one 6-vector per contact (missing components zero).
    pub fn embed(&self, r: &[f64]) -> Vec<Vec6> {
        let d = self.dim;
        assert_eq!(r.len(), d * self.n_contacts, "embed: wrong vector length");
        let map = component_map(d);
        r.chunks_exact(d)
            .map(|ri| {
                let mut g = [0.0; 6];
                for (k, &c) in map.iter().enumerate() {
                    g[c] = ri[k];
                }
                g
            })
            .collect()
    }

    /// The inverse of [`SiconosProblem::embed`]: the d components of each
    /// 6-vector (the others are dropped).
    pub fn extract(&self, g: &[Vec6]) -> Vec<f64> {
        assert_eq!(
            g.len(),
            self.n_contacts,
            "extract: wrong number of contacts"
        );
        let map = component_map(self.dim);
        g.iter()
            .flat_map(|gi| map.iter().map(move |&c| gi[c]))
            .collect()
    }

    /// Siconos' error of r (data README): with u = W r + q and the De Saxcé
    /// velocity û_i = u_i + (μ_i‖u_{T,i}‖ + μ_{r,i}‖ω_{R,i}‖, 0, …)
    /// (Acary & Bourrier 2021, eq. 63), abs = ‖r − Π_K(r − û)‖ summed over
    /// contacts in the 2-norm, and
    /// rel = abs / max(‖q‖, ‖r‖, ‖u‖) unless that max is below machine ε.
    /// Π_K is [`project_coulomb`] (d = 3) or [`project_rolling`] (d = 5,
    /// Acary & Bourrier 2021, Prop. 5.2): computed in d-space, independently
    /// of the 6-D path. For d = 6 it is the 6-D projection [`project`] (the
    /// spinning term μ_s |ω_S| joins g), and under `law associated` û = u.
    pub fn error(&self, r: &[f64]) -> SiconosErrorMeasure {
        let d = self.dim;
        let n = d * self.n_contacts;
        assert_eq!(r.len(), n, "error: r has length {}, expected {n}", r.len());
        let mut u = vec![0.0; n];
        self.w_times(r, &mut u);
        for (ui, qi) in u.iter_mut().zip(&self.q) {
            *ui += qi;
        }
        let mut sum = 0.0;
        for i in 0..self.n_contacts {
            let (ri, ui) = (&r[i * d..(i + 1) * d], &u[i * d..(i + 1) * d]);
            let mut g = self.mu[i] * ui[1].hypot(ui[2]);
            if d >= 5 {
                g += self.mu_r[i] * ui[3].hypot(ui[4]);
            }
            if d == 6 {
                g += self.mu_s[i] * ui[5].abs();
            }
            if self.law == FrictionLaw::Associated {
                g = 0.0;
            }
            let x = |k: usize| ri[k] - ui[k] - if k == 0 { g } else { 0.0 };
            if d == 6 {
                // (n, t1, t2, roll1, roll2, spin) → repose's (n, u, w, spin, roll).
                let z = [x(0), x(1), x(2), x(5), x(3), x(4)];
                let c = ConeCoeffs {
                    mu: self.mu[i],
                    rho: self.mu_r[i],
                    sigma: self.mu_s[i],
                };
                let p = project(&z, &c);
                let pd = [p[0], p[1], p[2], p[4], p[5], p[3]];
                sum += (0..6).map(|k| (ri[k] - pd[k]).powi(2)).sum::<f64>();
            } else if d == 3 {
                let p = project_coulomb(&[x(0), x(1), x(2)], self.mu[i]);
                sum += (0..3).map(|k| (ri[k] - p[k]).powi(2)).sum::<f64>();
            } else {
                let p = project_rolling(&[x(0), x(1), x(2), x(3), x(4)], self.mu[i], self.mu_r[i]);
                sum += (0..5).map(|k| (ri[k] - p[k]).powi(2)).sum::<f64>();
            }
        }
        let abs = sum.sqrt();
        let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let scale = norm(&self.q).max(norm(r)).max(norm(&u));
        let rel = if scale >= f64::EPSILON {
            abs / scale
        } else {
            abs
        };
        SiconosErrorMeasure { abs, rel }
    }
}

#[cfg(test)]
mod tests {
    use super::parse::{parse_index, parse_signed};
    use super::*;

    #[test]
    fn parses_a_minimal_dense_problem_column_major() {
        let text = "3\n1\n0\n3\n3\n3 3\n1 2 3\n4 5 6\n7 8 9\n-1 0 0\n0.5\n";
        let p = SiconosProblem::parse(text, "t.dat").unwrap();
        assert_eq!(p.storage, Storage::Dense);
        // Column-major: the second printed line is column 1.
        assert_eq!(p.w.to_dense(), vec![1., 4., 7., 2., 5., 8., 3., 6., 9.]);
        assert_eq!(p.q, vec![-1.0, 0.0, 0.0]);
        assert_eq!(p.mu, vec![0.5]);
        assert!(p.mu_r.is_empty());
    }

    #[test]
    fn index_accepts_g_printed_large_integers() {
        assert_eq!(parse_index("1e+06"), Some(1_000_000));
        assert_eq!(parse_index("12"), Some(12));
        assert_eq!(parse_index("-1"), None);
        assert_eq!(parse_index("1.5"), None);
        assert_eq!(parse_signed("-1"), Some(-1));
    }
}
