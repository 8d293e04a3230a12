//! The pyramid LCP formulation of Peiret et al. 2017 (Peiret, Kövecses &
//! Font-Llagunes): Coulomb friction faceted by k tangent directions, with
//! *phantom inertia* on the friction saturations so that the LCP's lead
//! matrix has full rank, constraint relaxation (stiffness and damping) on
//! the normal and tangential rows, reduced by the Schur complement to a
//! standard LCP and solved exactly by Lemke's method ([`crate::lcp`]).
//! A direct method for small systems: the lead matrix is dense.
//!
//! # The step problem (Peiret et al. 2017, eqs. 10–11, 28–30, 35, 39–43)
//!
//! Per contact i, impulses p = h λ: normal p_n ≥ 0 and tangential p_T ∈ R²
//! in the contact's (u, w) plane; u = W p + q the contact velocities after
//! the step, W = J M⁻¹ Jᵀ the Delassus matrix of the (normal, t1, t2) rows
//! and q = J v_free (+ a moving boundary's velocity). With directions
//! E_i = [e_1 … e_k] in the tangent plane, the tangential velocity is
//! parametrised by w_up, w_lo ≥ 0 (eq. 28) and the friction saturations
//! carry the phantom inertia ρ (eqs. 29–30):
//!
//! ```text
//! u_n  = W_n p + q_n + ε_n p_n + d_n                 ≥ 0  ⊥  p_n  ≥ 0
//! W_T p + q_T + ε_T p_T + d_T = E (w_up − w_lo)                        (eqs. 28, 39)
//! h σ̃_lo = μ p_n + Eᵀ p_T + ρ w_lo                   ≥ 0  ⊥  w_up ≥ 0   (eq. 30)
//! h σ̃_up = μ p_n − Eᵀ p_T + ρ w_up                   ≥ 0  ⊥  w_lo ≥ 0   (eq. 29)
//! ```
//!
//! Sliding in +e makes w_up > 0, so σ̃_lo = 0 and the friction force along
//! e is −μ λ_n (with w_lo = 0, ρ drops out); w_up and w_lo cannot both be
//! positive (adding the two saturations would give 2μ p_n + ρ(w_up + w_lo)
//! = 0). Without ρ the columns of w_up and w_lo in the reduced lead matrix
//! are opposite, so it is rank-deficient; with ρ > 0 it has full rank
//! (`tests/pyramid.rs` shows both).
//!
//! **Relaxation** (eqs. 40–42): for a stiffness k and damping b,
//! ε = (k h² + b h)⁻¹; the normal row's d_n = ε_n h k_n Φ (Φ the gap), so
//! that a contact in compression carries λ_n = −k_n (Φ + h u_n) − b_n u_n;
//! the tangential d_T = −ε_t (p_T⁻ + h b_t u_T⁻) from the previous step's
//! impulse p_T⁻ and slip u_T⁻ (a bristle: λ_T⁺ − λ_T⁻ = −k_t h u_T⁺ −
//! b_t (u_T⁺ − u_T⁻) while sticking). k = b = 0 is the rigid row (ε = 0,
//! and the normal row's d_n is the complementarity formulation's
//! stabilisation max(Φ/h, −v_rec)). With four vertex contacts of a box the
//! tangential rows are dependent and must be relaxed (W_T + ε_T must be
//! invertible: that is what eliminates p_T).
//!
//! **Sticking and sliding contacts** (eqs. 31–34, 43). A contact whose
//! previous step had p_n > 0 and slip ‖u_T⁻‖ ≥ v_th (the velocity
//! threshold), and pressed enough that ε_l below is at most 1e6 times W's
//! largest diagonal entry, is posed in its sliding frame: E = [e_t, e_l] (along and
//! across u_T⁻), μ on both, and the lateral row relaxed by
//! ε_l = ‖u_T⁻‖ / (μ p_n⁻), which makes the lateral force −μ λ_n u_l/‖u_T⁻‖,
//! the Coulomb force's lateral component for a small turn of the slip
//! (the paper's hybrid regularisation; its d_l is not given, ours is 0, and
//! the bristle term acts along e_t only). Other contacts use the k directions
//! e_l = (cos πl/k, sin πl/k), l < k, of the (u, w) plane: two bounds each,
//! a 2k-gon (k = 2 is the paper's box).
//!
//! **The reduction.** A = W_TT + ε_T is symmetric positive definite when
//! relaxed; with X = A⁻¹ [W_TN, E, r_T], r_T = q_T + d_T, p_T = X_E (w_up −
//! w_lo) − X_N p_n − x_r, and the LCP in z = (p_n, w_up, w_lo) has
//!
//! ```text
//!         ⎡ W_NN + ε_N − W_NT X_N    W_NT X_E       −W_NT X_E     ⎤       ⎡ q_N + d_N − W_NT x_r ⎤
//! M   =   ⎢ μ − Eᵀ X_N               Eᵀ X_E         −Eᵀ X_E + ρ   ⎥   q = ⎢ −Eᵀ x_r              ⎥
//!         ⎣ μ + Eᵀ X_N               −Eᵀ X_E + ρ    Eᵀ X_E        ⎦       ⎣ Eᵀ x_r               ⎦
//! ```
//!
//! of n + 2K unknowns (K = Σ k_i).
//!
//! **Lemke and k > 2.** For x = (p_n, a, b) ≥ 0,
//! xᵀ M x = p_nᵀ S p_n + (a − b)ᵀ G (a − b) + 2ρ aᵀb + μ-terms ≥ 0 (S the
//! Schur complement, G = Eᵀ A⁻¹ E): M is copositive. With k = 2 directions
//! E is invertible, so xᵀ M x = 0 only at x = 0 (ρ, ε_n > 0): M is strictly
//! copositive and Lemke's method solves the LCP for any q (Cottle, Pang &
//! Stone, §4.4). With k > 2 directions in a plane E has a kernel:
//! a − b in it with aᵀb = 0 gives xᵀ M x = 0 while (M + Mᵀ) x = 2ρ (b, a)
//! ≠ 0 — not copositive-plus, and Lemke's method did end on rays (the
//! cube's third step). So with k > 2 each saturation also gets δ w on its
//! own slip (δ = `slip_damping` / max W_ii): strictly copositive again, at
//! the price of a friction impulse larger by δ times the slip speed. Lemke's pivots are O(size²) each on a
//! dense tableau, so steps above [`MAX_UNKNOWNS`] are refused with a named
//! error rather than left to crawl. The formulation has sliding friction
//! only (scene validation refuses rolling and spinning friction).

mod step;

pub use step::{histories, step};

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};
use serde::{Deserialize, Serialize};

use crate::lcp::{lemke, LemkeOutcome};
use crate::problem::explicit::ExplicitDelassus;
use crate::problem::{stabilisation, ContactProblem};

/// The largest LCP (n + 2K unknowns) a step may pose: about 0.1 s of
/// Lemke pivots here at this size.
pub const MAX_UNKNOWNS: usize = 600;

/// A sliding contact whose lateral relaxation ε_l would exceed this many
/// times W's scale (its largest diagonal entry) is posed as sticking:
/// beyond it the lateral force is negligible and W_TT + ε_T would lose its
/// precision.
const EPS_L_CAP: f64 = 1e6;

/// The pyramid formulation's settings (`formulation: PyramidLcp(…)` in a
/// scene). The defaults are the contact parameters of Peiret et al. 2017
/// (Table 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PyramidSettings {
    /// Tangent directions k of a sticking contact (≥ 2; each bounds the
    /// force both ways, so the friction disk becomes a 2k-gon). Default 2.
    pub directions: usize,
    /// The phantom inertia ρ (kg) on the friction saturations. Default 1e-3.
    pub phantom_inertia: f64,
    /// Normal relaxation stiffness k_n (N/m); 0 with `normal_damping` 0:
    /// rigid. Default 1e10.
    pub normal_stiffness: f64,
    /// Normal relaxation damping b_n (N s/m). Default 1e8.
    pub normal_damping: f64,
    /// Tangential (bristle) stiffness k_t (N/m). Default 1e8.
    pub tangent_stiffness: f64,
    /// Tangential damping b_t (N s/m). Default 1e5.
    pub tangent_damping: f64,
    /// δ, relative to the smallest effective mass 1/max W_ii: with more than
    /// two directions each saturation also gets + δ w on its own slip
    /// (module docs, "Lemke and k > 2"). Default 1e-6.
    pub slip_damping: f64,
    /// The slip speed v_th (m/s) from which a contact is posed in its
    /// sliding frame. Default 1e-3.
    pub velocity_threshold: f64,
}

impl Default for PyramidSettings {
    fn default() -> Self {
        PyramidSettings {
            directions: 2,
            phantom_inertia: 1e-3,
            normal_stiffness: 1e10,
            normal_damping: 1e8,
            tangent_stiffness: 1e8,
            tangent_damping: 1e5,
            slip_damping: 1e-6,
            velocity_threshold: 1e-3,
        }
    }
}

impl PyramidSettings {
    /// What is wrong with these settings, as (field, reason) pairs.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if !(2..=64).contains(&self.directions) {
            out.push((
                "directions".to_string(),
                format!("must be 2 to 64 (got {})", self.directions),
            ));
        }
        let non_negative = [
            ("phantom_inertia", self.phantom_inertia),
            ("normal_stiffness", self.normal_stiffness),
            ("normal_damping", self.normal_damping),
            ("tangent_stiffness", self.tangent_stiffness),
            ("tangent_damping", self.tangent_damping),
            ("slip_damping", self.slip_damping),
        ];
        for (field, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                out.push((
                    field.to_string(),
                    format!("must be finite and ≥ 0 (got {v})"),
                ));
            }
        }
        if !(self.velocity_threshold.is_finite() && self.velocity_threshold > 0.0) {
            out.push((
                "velocity_threshold".to_string(),
                format!("must be finite and > 0 (got {})", self.velocity_threshold),
            ));
        }
        out
    }
}

/// What a contact brings from the previous step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LcpHistory {
    /// The previous impulse (p_n, p_u, p_w) in this step's contact frame.
    pub impulse: [f64; 3],
    /// The slip (u·v_rel, w·v_rel) at the start of this step.
    pub slip: [f64; 2],
}

/// Why a pyramid step could not be solved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PyramidError {
    /// The LCP would exceed [`MAX_UNKNOWNS`].
    #[error("the pyramid LCP of {contacts} contacts has {unknowns} unknowns, above the {limit} a dense Lemke solve is allowed (it is for small systems: use formulation Complementarity, or fewer directions)")]
    TooLarge {
        /// Contacts of the step.
        contacts: usize,
        /// n + 2K.
        unknowns: usize,
        /// [`MAX_UNKNOWNS`].
        limit: usize,
    },
    /// W_TT + ε_T is singular: dependent tangential rows not relaxed.
    #[error("the tangential rows of {contacts} contacts are dependent (e.g. a box's four corners) and not relaxed; set tangent_stiffness or tangent_damping > 0")]
    Redundant {
        /// Contacts of the step.
        contacts: usize,
    },
    /// Lemke's method ended on a ray.
    #[error("Lemke's method ended on a ray after {pivots} pivots ({entering} could not enter): the LCP has no solution it can reach")]
    Ray {
        /// Pivots taken.
        pivots: usize,
        /// The variable that could not enter.
        entering: String,
    },
    /// Lemke's method reached its pivot limit.
    #[error("Lemke's method stopped at its limit of {pivots} pivots")]
    PivotLimit {
        /// Pivots taken.
        pivots: usize,
    },
}

/// A step's pyramid LCP, reduced (module docs), with what turns its
/// solution back into impulses.
pub struct PyramidLcp {
    /// Contacts.
    pub n: usize,
    /// The directions in the (u, w) plane of their contacts (K of them).
    pub dirs: Vec<[f64; 2]>,
    /// The contact of each direction.
    pub owner: Vec<usize>,
    /// Whether each contact was posed in its sliding frame.
    pub sliding: Vec<bool>,
    /// The lead matrix M (row-major, size²).
    pub m: Vec<f64>,
    /// The constant q.
    pub q: Vec<f64>,
    x_n: DMatrix<f64>,
    x_e: DMatrix<f64>,
    x_r: DVector<f64>,
}

/// The numerical rank of a lead matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rank {
    /// Singular values above the tolerance.
    pub rank: usize,
    /// The matrix's size.
    pub size: usize,
    /// The largest and smallest singular values.
    pub sigma_max: f64,
    /// See `sigma_max`.
    pub sigma_min: f64,
    /// The tolerance: size · f64 ε · σ_max (the usual numerical rank).
    pub tolerance: f64,
}

/// The numerical rank of the n × n row-major matrix `m` (singular values
/// by nalgebra's SVD).
pub fn rank(m: &[f64], n: usize) -> Rank {
    let svd = DMatrix::from_row_slice(n, n, m).svd(false, false);
    let s = &svd.singular_values;
    let sigma_max = s.iter().cloned().fold(0.0, f64::max);
    let sigma_min = s.iter().cloned().fold(f64::INFINITY, f64::min);
    let tolerance = n as f64 * f64::EPSILON * sigma_max;
    Rank {
        rank: s.iter().filter(|&&x| x > tolerance).count(),
        size: n,
        sigma_max,
        sigma_min,
        tolerance,
    }
}

/// ε = (k h² + b h)⁻¹, or 0 for a rigid row (k = b = 0).
fn relaxation(k: f64, b: f64, h: f64) -> f64 {
    let s = k * h * h + b * h;
    if s > 0.0 {
        1.0 / s
    } else {
        0.0
    }
}

impl PyramidLcp {
    /// Poses the LCP of `problem` (its normal and sliding rows; rolling and
    /// spinning rows are left out), with each contact's `history`.
    pub fn build(
        problem: &ContactProblem,
        history: &[LcpHistory],
        s: &PyramidSettings,
        h: f64,
        max_recovery_speed: f64,
    ) -> Result<Self, PyramidError> {
        let n = problem.n_contacts();
        assert_eq!(history.len(), n, "one history per contact");
        // W's scale (its largest normal diagonal entry), for the ε_l cap.
        let w_scale = (0..n)
            .map(|i| problem.diag_block(i)[0][0])
            .fold(f64::MIN_POSITIVE, f64::max);
        // Directions per contact.
        let mut dirs = Vec::new();
        let mut owner = Vec::new();
        let mut sliding = vec![false; n];
        let eps_t = relaxation(s.tangent_stiffness, s.tangent_damping, h);
        let eps_n = relaxation(s.normal_stiffness, s.normal_damping, h);
        // ε_T blocks and d_T, per contact.
        let mut eps_blocks = vec![[[0.0; 2]; 2]; n];
        let mut d_t = vec![[0.0; 2]; n];
        for i in 0..n {
            let hist = &history[i];
            let mu = problem.cone[i].mu;
            let [su, sw] = hist.slip;
            let speed = su.hypot(sw);
            let bristle = [
                -eps_t * (hist.impulse[1] + h * s.tangent_damping * su),
                -eps_t * (hist.impulse[2] + h * s.tangent_damping * sw),
            ];
            // A contact that barely pressed (ε_l beyond the cap: a lateral
            // force below 1e-6 of W's effective mass per unit slip) is
            // posed as sticking: its friction is as small either way, and
            // the cap keeps W_TT + ε_T well conditioned.
            let eps_l = if hist.impulse[0] > 0.0 && mu > 0.0 {
                speed / (mu * hist.impulse[0])
            } else {
                f64::INFINITY
            };
            if speed >= s.velocity_threshold && eps_l <= EPS_L_CAP * w_scale {
                sliding[i] = true;
                let et = [su / speed, sw / speed];
                let el = [-et[1], et[0]];
                for r in 0..2 {
                    for c in 0..2 {
                        eps_blocks[i][r][c] = eps_t * et[r] * et[c] + eps_l * el[r] * el[c];
                    }
                }
                let along = bristle[0] * et[0] + bristle[1] * et[1];
                d_t[i] = [along * et[0], along * et[1]];
                dirs.extend([et, el]);
                owner.extend([i, i]);
            } else {
                eps_blocks[i] = [[eps_t, 0.0], [0.0, eps_t]];
                d_t[i] = bristle;
                for l in 0..s.directions {
                    let a = std::f64::consts::PI * l as f64 / s.directions as f64;
                    dirs.push([a.cos(), a.sin()]);
                    owner.push(i);
                }
            }
        }
        let k = dirs.len();
        let size = n + 2 * k;
        if size > MAX_UNKNOWNS {
            return Err(PyramidError::TooLarge {
                contacts: n,
                unknowns: size,
                limit: MAX_UNKNOWNS,
            });
        }
        // W over (normal rows 0..n, tangential rows n + 2i, n + 2i + 1).
        let explicit = ExplicitDelassus::from_problem(problem);
        let mut w_nn = DMatrix::zeros(n, n);
        let mut w_nt = DMatrix::zeros(n, 2 * n);
        let mut w_tt = DMatrix::zeros(2 * n, 2 * n);
        for i in 0..n {
            for b in explicit.row_offsets[i]..explicit.row_offsets[i + 1] {
                let (j, blk) = (explicit.cols[b], &explicit.blocks[b]);
                w_nn[(i, j)] = blk[0][0];
                for c in 0..2 {
                    w_nt[(i, 2 * j + c)] = blk[0][1 + c];
                    for r in 0..2 {
                        w_tt[(2 * i + r, 2 * j + c)] = blk[1 + r][1 + c];
                    }
                }
            }
        }
        let w_tn = w_nt.transpose();
        // q and d.
        let mut q_n = DVector::zeros(n);
        let mut r_t = DVector::zeros(2 * n);
        for i in 0..n {
            let t = problem.twist(i, &problem.v_free, &problem.w_free);
            let stab = stabilisation(problem.gap[i], h, max_recovery_speed);
            let d_n = if eps_n > 0.0 {
                eps_n * h * s.normal_stiffness * problem.gap[i]
            } else {
                stab
            };
            q_n[i] = t[0] - stab + d_n;
            r_t[2 * i] = t[1] + d_t[i][0];
            r_t[2 * i + 1] = t[2] + d_t[i][1];
        }
        let mut a = w_tt;
        for (i, blk) in eps_blocks.iter().enumerate() {
            for r in 0..2 {
                for c in 0..2 {
                    a[(2 * i + r, 2 * i + c)] += blk[r][c];
                }
            }
        }
        let chol: Cholesky<f64, Dyn> = match Cholesky::new(a) {
            Some(c) => c,
            None if n == 0 => unreachable!("a 0 × 0 matrix factors"),
            None => return Err(PyramidError::Redundant { contacts: n }),
        };
        let mut e = DMatrix::zeros(2 * n, k);
        for (l, (d, &i)) in dirs.iter().zip(&owner).enumerate() {
            e[(2 * i, l)] = d[0];
            e[(2 * i + 1, l)] = d[1];
        }
        let x_n = chol.solve(&w_tn);
        let x_e = chol.solve(&e);
        let x_r = chol.solve(&r_t);
        let et = e.transpose();
        let m_nn = &w_nn - &w_nt * &x_n;
        let c_ne = &w_nt * &x_e;
        let g = &et * &x_e;
        let b = &et * &x_n;
        let q_top = &q_n - &w_nt * &x_r;
        let q_mid = -(&et * &x_r);
        let mut m = vec![0.0; size * size];
        let mut q = vec![0.0; size];
        let (up, lo) = (n, n + k);
        let rho = s.phantom_inertia;
        let delta = if s.directions > 2 {
            s.slip_damping / w_scale
        } else {
            0.0
        };
        for i in 0..n {
            let row = &mut m[i * size..(i + 1) * size];
            for j in 0..n {
                row[j] = m_nn[(i, j)];
            }
            row[i] += eps_n;
            for l in 0..k {
                row[up + l] = c_ne[(i, l)];
                row[lo + l] = -c_ne[(i, l)];
            }
            q[i] = q_top[i];
        }
        for l in 0..k {
            let mu = problem.cone[owner[l]].mu;
            // σ̃_lo (complementary to w_up), then σ̃_up (to w_lo).
            for (row_index, sign) in [(up + l, 1.0), (lo + l, -1.0)] {
                let row = &mut m[row_index * size..(row_index + 1) * size];
                for j in 0..n {
                    row[j] = -sign * b[(l, j)];
                }
                row[owner[l]] += mu;
                for c in 0..k {
                    row[up + c] = sign * g[(l, c)];
                    row[lo + c] = -sign * g[(l, c)];
                }
                q[row_index] = sign * q_mid[l];
            }
            m[(up + l) * size + lo + l] += rho;
            m[(lo + l) * size + up + l] += rho;
            m[(up + l) * size + up + l] += delta;
            m[(lo + l) * size + lo + l] += delta;
        }
        Ok(PyramidLcp {
            n,
            dirs,
            owner,
            sliding,
            m,
            q,
            x_n,
            x_e,
            x_r,
        })
    }

    /// Unknowns n + 2K.
    pub fn size(&self) -> usize {
        self.q.len()
    }

    /// The impulses (p_n, p_u, p_w) of each contact for a solution z.
    pub fn impulses(&self, z: &[f64]) -> Vec<[f64; 3]> {
        let (n, k) = (self.n, self.dirs.len());
        let p_n = DVector::from_column_slice(&z[..n]);
        let slip = DVector::from_iterator(k, (0..k).map(|l| z[n + l] - z[n + k + l]));
        let p_t = &self.x_e * slip - &self.x_n * &p_n - &self.x_r;
        (0..n)
            .map(|i| [p_n[i], p_t[2 * i], p_t[2 * i + 1]])
            .collect()
    }

    /// Solves the LCP by Lemke's method: the impulses and the pivots taken.
    pub fn solve(&self) -> Result<(Vec<[f64; 3]>, usize), PyramidError> {
        if self.n == 0 {
            return Ok((Vec::new(), 0));
        }
        match lemke(&self.m, &self.q, 50 * self.size()) {
            LemkeOutcome::Solved { z, pivots, .. } => Ok((self.impulses(&z), pivots)),
            LemkeOutcome::Ray { pivots, entering } => Err(PyramidError::Ray { pivots, entering }),
            LemkeOutcome::PivotLimit { pivots } => Err(PyramidError::PivotLimit { pivots }),
        }
    }

    /// The numerical rank of the lead matrix.
    pub fn rank(&self) -> Rank {
        rank(&self.m, self.size())
    }
}
