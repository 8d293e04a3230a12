//! The existence criterion of Acary & Cadoux 2011 checked as a conic
//! program (issue #14).
//!
//! The incremental problem of one time step with Coulomb friction
//! (Acary & Cadoux 2011, eq. 5),
//! M v + f = Hᵀ r, u = H v + w, (u^i, r^i) ∈ 𝒞(e^i, μ^i),
//! has a solution when M is positive definite and
//!
//! ```text
//! ∃ v:  (H v + w)^i ∈ K_{e^i, 1/μ^i}  for every contact i            (A)
//! ```
//!
//! (Theorem 3): the kinematics let every contact separate with a relative
//! velocity inside the cone of half-angle atan(1/μ) around its normal
//! (K_{e,α} = {x : ‖x_T‖ ≤ α x_N}; for μ = 0 the half-space x_N ≥ 0). (A)
//! is a feasibility question; §5 turns it into the program
//!
//! ```text
//! max s   subject to   (H v + w − c_e s)^i ∈ K_{e^i, 1/μ^i}  (every i)     (eq. 39)
//! ```
//!
//! with c_e the stacked normals: s ≥ 0 means (A) holds and a solution is
//! **guaranteed**; s > 0 that it is **robust** (a small change of the data
//! keeps it, §2.3). Where some v makes every contact separate strictly,
//! (39) is unbounded (s grows with v): we cap s at 1, so s = 1 reads "at
//! least 1". A linear program in 2-D (the cones are wedges), a second-order
//! cone program in 3-D; both go to `clarabel` (the interior-point method
//! the solver family already uses), in the variables x = (v, s):
//!
//! | rows | cone |
//! |---|---|
//! | ((H v + w)_N − s, μ (H v + w)_T) per contact with μ > 0 | second-order cone of dimension d |
//! | (H v + w)_N − s per contact with μ = 0 | nonnegative |
//! | 1 − s | nonnegative (the cap) |
//!
//! Per contact the rows of H and w are ordered normal first, then the
//! d − 1 tangents (repose's convention).

use std::path::Path;

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};
use serde::{Deserialize, Serialize};

use crate::siconos::SiconosProblem;

/// One step's incremental problem, as far as the criterion needs it:
/// H (n_c d × m, row-major), w (n_c d) and μ per contact; d = 2 or 3. As a
/// RON file (`repose check-existence FILE.ron`):
///
/// ```ron
/// IncrementalProblem(dim: 2, dofs: 1, h: [0.5, 0.866], w: [0.0, 1.0], mu: [0.5])
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IncrementalProblem {
    /// Rows per contact: 2 (plane) or 3 (space).
    pub dim: usize,
    /// Unknown velocities m (the columns of H).
    pub dofs: usize,
    /// H, row-major, normal row first per contact.
    pub h: Vec<f64>,
    /// w, ordered as H's rows.
    pub w: Vec<f64>,
    /// Friction coefficient per contact (≥ 0).
    pub mu: Vec<f64>,
}

/// What the check found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExistenceReport {
    /// The optimal s of eq. 39, capped at 1 (NaN when the solver failed).
    pub s: f64,
    /// s ≥ 0: condition (A) holds, a solution exists.
    pub guaranteed: bool,
    /// s > 0: the existence survives small changes of the data.
    pub robust: bool,
    /// The conic solver's status, e.g. `Solved`.
    pub status: String,
}

/// s below this magnitude counts as 0 (the solver's accuracy).
const S_TOL: f64 = 1e-7;

impl IncrementalProblem {
    /// Contacts.
    pub fn n_contacts(&self) -> usize {
        self.mu.len()
    }

    /// Named problems with the data: sizes, finiteness, μ ≥ 0.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let (d, m, n) = (self.dim, self.dofs, self.n_contacts());
        if !(d == 2 || d == 3) {
            out.push(format!("dim: must be 2 or 3 (got {d})"));
        }
        if n == 0 {
            out.push(
                "mu: no contacts (one friction coefficient per contact is needed)".to_string(),
            );
        }
        if m == 0 {
            out.push("dofs: must be at least 1".to_string());
        }
        // Counts read from a file multiply checked: a product that wraps
        // (release builds wrap silently) could match a short array.
        match n.checked_mul(d).and_then(|nd| nd.checked_mul(m)) {
            Some(want) if self.h.len() == want => {}
            Some(want) => out.push(format!(
                "H: has {} entries, expected {n} contacts × {d} rows × {m} columns = {want}",
                self.h.len()
            )),
            None => out.push(format!(
                "dofs: {n} contacts × {d} rows × {m} columns is more entries than this machine can count"
            )),
        }
        match n.checked_mul(d) {
            Some(want) if self.w.len() == want => {}
            Some(want) => out.push(format!(
                "w: has {} entries, expected {n} contacts × {d} = {want}",
                self.w.len()
            )),
            None => out.push(format!("w: {n} contacts × {d} overflows")),
        }
        if let Some(i) = self.mu.iter().position(|&x| !(x >= 0.0 && x.is_finite())) {
            out.push(format!(
                "mu[{i}]: must be finite and ≥ 0 (got {})",
                self.mu[i]
            ));
        }
        if self.h.iter().chain(&self.w).any(|x| !x.is_finite()) {
            out.push("H, w: every entry must be finite".to_string());
        }
        out
    }
}

/// Reads an incremental problem from a RON file; errors name the file,
/// the field and the reason.
pub fn read_ron(path: &Path) -> Result<IncrementalProblem, String> {
    let file = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: {e}"))?;
    let p: IncrementalProblem = ron::from_str(&text).map_err(|e| format!("{file}: {e}"))?;
    let problems = p.problems();
    if problems.is_empty() {
        Ok(p)
    } else {
        Err(format!("{file}: {}", problems.join("; ")))
    }
}

/// The criterion for a problem known only in reduced form, u = W r + q
/// (a Siconos file): with M positive definite, range(H) = range(W) and
/// w − q lies in it, so (A) reads ∃ x: (W x + q)^i ∈ K_{e_i, 1/μ_i}: H = the
/// sliding rows (normal and two tangents) of W over every unknown, w = q's.
pub fn from_siconos(p: &SiconosProblem) -> IncrementalProblem {
    let (d, n) = (p.dim, p.n_contacts);
    let m = d * n;
    let dense = p.w.to_dense();
    let rows: Vec<usize> = (0..n)
        .flat_map(|i| (0..3).map(move |k| d * i + k))
        .collect();
    IncrementalProblem {
        dim: 3,
        dofs: m,
        h: rows
            .iter()
            .flat_map(|&r| dense[r * m..(r + 1) * m].iter().copied())
            .collect(),
        w: rows.iter().map(|&r| p.q[r]).collect(),
        mu: p.mu.clone(),
    }
}

/// Solves eq. 39 for `p` (module docs).
///
/// # Panics
/// When `p` has problems ([`IncrementalProblem::problems`]).
pub fn check(p: &IncrementalProblem) -> ExistenceReport {
    let problems = p.problems();
    assert!(problems.is_empty(), "incremental problem: {problems:?}");
    let (d, m) = (p.dim, p.dofs);
    let s_col = m;
    // Constraint rows A x + slack = b, slack in the cones.
    let (mut ri, mut ci, mut vi) = (Vec::new(), Vec::new(), Vec::new());
    let mut b = Vec::new();
    let mut cones = Vec::new();
    let mut row = 0;
    for (i, &mu) in p.mu.iter().enumerate() {
        let rows: Vec<(usize, f64)> = if mu > 0.0 {
            (0..d)
                .map(|k| (i * d + k, if k == 0 { 1.0 } else { mu }))
                .collect()
        } else {
            vec![(i * d, 1.0)]
        };
        for (k, &(hr, scale)) in rows.iter().enumerate() {
            // slack = scale (H v + w)_hr − [k = 0] s  ⇒  A = −scale H_hr, +s on the normal row.
            for j in 0..m {
                let h = p.h[hr * m + j];
                if h != 0.0 {
                    ri.push(row);
                    ci.push(j);
                    vi.push(-scale * h);
                }
            }
            if k == 0 {
                ri.push(row);
                ci.push(s_col);
                vi.push(1.0);
            }
            b.push(scale * p.w[hr]);
            row += 1;
        }
        cones.push(if mu > 0.0 {
            SupportedConeT::SecondOrderConeT(d)
        } else {
            SupportedConeT::NonnegativeConeT(1)
        });
    }
    // The cap: 1 − s ≥ 0.
    ri.push(row);
    ci.push(s_col);
    vi.push(1.0);
    b.push(1.0);
    row += 1;
    cones.push(SupportedConeT::NonnegativeConeT(1));
    let a = CscMatrix::new_from_triplets(row, m + 1, ri, ci, vi);
    let pm = CscMatrix::zeros((m + 1, m + 1));
    let mut q = vec![0.0; m + 1];
    q[s_col] = -1.0;
    let settings = DefaultSettings {
        verbose: false,
        ..DefaultSettings::default()
    };
    let failed = |status: String| ExistenceReport {
        s: f64::NAN,
        guaranteed: false,
        robust: false,
        status,
    };
    let Ok(mut solver) = DefaultSolver::new(&pm, &q, &a, &b, &cones, settings) else {
        return failed("the conic solver refused the problem".into());
    };
    solver.solve();
    let sol = &solver.solution;
    let status = format!("{:?}", sol.status);
    if !matches!(
        sol.status,
        SolverStatus::Solved | SolverStatus::AlmostSolved
    ) {
        // Primal infeasible cannot happen (s → −∞ fits any v); report it.
        return failed(status);
    }
    let s = sol.x[s_col];
    ExistenceReport {
        s,
        guaranteed: s >= -S_TOL,
        robust: s > S_TOL,
        status,
    }
}

/// The incremental problem of a step's contact problem, for the sliding
/// friction cone (d = 3: the normal and two tangent rows of each 6-D
/// contact; rolling and spinning resistance are left out, as the Coulomb
/// model of Acary & Cadoux 2011 has none): H = Dᵀ over the bodies'
/// velocities (6 per body: linear, then angular) and w the constant twist
/// term (the stabilisation bias and the boundaries' velocities), so that
/// u = H v + w is the contact velocity after the step.
pub fn from_contact_problem(p: &crate::problem::ContactProblem) -> IncrementalProblem {
    use glam::DVec3;
    let (nc, nb) = (p.n_contacts(), p.n_bodies());
    let m = 6 * nb;
    let zero = vec![DVec3::ZERO; nb];
    let w: Vec<[f64; 6]> = (0..nc).map(|i| p.twist(i, &zero, &zero)).collect();
    let mut h = vec![0.0; 3 * nc * m];
    // Column by column: a unit velocity of one body's one component.
    let (mut v, mut om) = (zero.clone(), zero.clone());
    for k in 0..nb {
        for c in 0..6 {
            let e = DVec3::from_array(std::array::from_fn(|d| f64::from(u8::from(d == c % 3))));
            if c < 3 {
                v[k] = e;
            } else {
                om[k] = e;
            }
            let col = 6 * k + c;
            let lo = p.csr_offsets[k] as usize;
            let hi = p.csr_offsets[k + 1] as usize;
            for &slot in &p.csr_slots[lo..hi] {
                let i = (slot >> 1) as usize;
                let t = p.twist(i, &v, &om);
                for r in 0..3 {
                    h[(3 * i + r) * m + col] = t[r] - w[i][r];
                }
            }
            v[k] = DVec3::ZERO;
            om[k] = DVec3::ZERO;
        }
    }
    IncrementalProblem {
        dim: 3,
        dofs: m,
        h,
        w: w.iter().flat_map(|t| [t[0], t[1], t[2]]).collect(),
        mu: p.cone.iter().map(|c| c.mu).collect(),
    }
}

/// The Painlevé-like example of Acary & Cadoux 2011, §4.2 (eqs. 30–31 with
/// m = l = h = 1, g = −1, v₀ = 0): a bar on the ground at angle θ, its end
/// sliding at u₀; one contact, d = 2, H = (cos θ, sin θ) (tangent, normal),
/// w = (u₀, 0). Here ordered normal first: H = (sin θ; cos θ), w = (0; u₀).
pub fn painleve(u0: f64, theta: f64, mu: f64) -> IncrementalProblem {
    IncrementalProblem {
        dim: 2,
        dofs: 1,
        h: vec![theta.sin(), theta.cos()],
        w: vec![0.0, u0],
        mu: vec![mu],
    }
}
