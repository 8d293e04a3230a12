//! Dense linear complementarity problems and Lemke's method: the direct
//! solver of `repose solve --solver lemke` (on [`pyramid_lcp`], the anchor
//! form) and of the pyramid formulation ([`crate::formulation::pyramid`]).
//!
//! ```text
//! find z ≥ 0 with w = M z + q ≥ 0 and zᵀ w = 0          (LCP(q, M))
//! ```
//!
//! **Lemke's method** (complementary pivoting; Cottle, Pang & Stone, *The
//! Linear Complementarity Problem*, §4.4). With the covering vector d = 1
//! and an artificial variable z₀ the system w − M z − d z₀ = q starts from
//! the basis of the w's; z₀ enters at the most negative q_i (so that every
//! basic variable is ≥ 0), and from then on the *complement* of the
//! variable that just left enters (z_i after w_i, w_i after z_i), the
//! leaving variable chosen by the minimum-ratio test. It stops when
//!
//! | outcome | meaning |
//! |---|---|
//! | z₀ leaves the basis | a solution (z, w) |
//! | the entering column has no positive entry | **ray termination**: the path runs off to infinity. For M copositive-plus (e.g. positive semidefinite) this proves the LCP infeasible |
//! | the pivot limit is reached | reported, never a loop: ties in the ratio test are broken lexicographically (by the rows of the current basis inverse), which rules cycling out |
//!
//! One pivot is a Gauss–Jordan step on the n × (2n + 2) tableau, O(n²): for
//! small dense systems (hundreds of unknowns), where it is exact up to
//! rounding whatever the conditioning that stops iterative methods.

/// What Lemke's method ended with.
#[derive(Clone, Debug, PartialEq)]
pub enum LemkeOutcome {
    /// A solution: z, and w = M z + q.
    Solved {
        /// z ≥ 0.
        z: Vec<f64>,
        /// w = M z + q ≥ 0, complementary to z.
        w: Vec<f64>,
        /// Pivots taken.
        pivots: usize,
    },
    /// Ray termination: the entering variable's column had no positive
    /// entry (for a copositive-plus M: the LCP has no solution).
    Ray {
        /// Pivots taken before it.
        pivots: usize,
        /// The variable that could not enter, e.g. `z3` or `w0`.
        entering: String,
    },
    /// The pivot limit was reached.
    PivotLimit {
        /// Pivots taken.
        pivots: usize,
    },
}

impl LemkeOutcome {
    /// z of a solution, `None` otherwise.
    pub fn solution(&self) -> Option<&[f64]> {
        match self {
            LemkeOutcome::Solved { z, .. } => Some(z),
            _ => None,
        }
    }
}

/// The faceted ("pyramid") LCP of a 3-D frictional contact problem in
/// reduced form, u = W r + q with per contact (normal, t1, t2) rows and
/// Coulomb friction μ_i (the De Saxcé law of Siconos' files): the friction
/// disk is replaced by the polygon of `k` directions d_l = (cos 2πl/k,
/// sin 2πl/k), r_T = D β with β ≥ 0, and (Stewart & Trinkle 1996; the
/// faceted cone of Peiret et al. 2017 without its phantom inertia)
///
/// ```text
/// u_N = W_NN r_N + W_NT D β + q_N ≥ 0            ⊥ r_N ≥ 0
/// Dᵀ u_T + λ 1 ≥ 0                               ⊥ β ≥ 0
/// μ r_N − 1ᵀ β ≥ 0                               ⊥ λ ≥ 0
/// ```
///
/// (λ the sliding speed): an LCP in z = (r_N, β, λ) per contact, k + 2
/// unknowns each, of M row-major. Returns (M, q); [`pyramid_impulses`]
/// turns its z back into r.
///
/// # Panics
/// When the sizes do not match (W is 3n × 3n, q 3n, μ n) or k < 3.
pub fn pyramid_lcp(w: &[f64], q: &[f64], mu: &[f64], k: usize) -> (Vec<f64>, Vec<f64>) {
    let n = mu.len();
    let d3 = 3 * n;
    assert!(k >= 3, "a friction polygon needs at least 3 directions");
    assert_eq!(w.len(), d3 * d3, "W must be {d3} × {d3}");
    assert_eq!(q.len(), d3, "q must have {d3} entries");
    let dirs: Vec<[f64; 2]> = (0..k)
        .map(|l| {
            let a = 2.0 * std::f64::consts::PI * l as f64 / k as f64;
            [a.cos(), a.sin()]
        })
        .collect();
    let per = k + 2;
    let size = n * per;
    // Unknown index: r_N of contact i at i·per, β_{i,l} at i·per + 1 + l, λ_i at i·per + k + 1.
    // The velocity row u_c of W (c in 0..3n) applied to z: W_c,3j r_N,j + Σ_l (W_c,3j+1 d_l0 + W_c,3j+2 d_l1) β_j,l.
    let u_row = |c: usize| -> Vec<f64> {
        let mut row = vec![0.0; size];
        for j in 0..n {
            row[j * per] = w[c * d3 + 3 * j];
            for (l, d) in dirs.iter().enumerate() {
                row[j * per + 1 + l] = w[c * d3 + 3 * j + 1] * d[0] + w[c * d3 + 3 * j + 2] * d[1];
            }
        }
        row
    };
    let mut m = vec![0.0; size * size];
    let mut qq = vec![0.0; size];
    for i in 0..n {
        let base = i * per;
        // Normal row.
        m[base * size..(base + 1) * size].copy_from_slice(&u_row(3 * i));
        qq[base] = q[3 * i];
        // Tangential rows: d_lᵀ u_T + λ_i.
        let (t1, t2) = (u_row(3 * i + 1), u_row(3 * i + 2));
        for (l, d) in dirs.iter().enumerate() {
            let r = base + 1 + l;
            for c in 0..size {
                m[r * size + c] = d[0] * t1[c] + d[1] * t2[c];
            }
            m[r * size + base + k + 1] = 1.0;
            qq[r] = d[0] * q[3 * i + 1] + d[1] * q[3 * i + 2];
        }
        // Friction row: μ r_N − Σ β.
        let r = base + k + 1;
        m[r * size + base] = mu[i];
        for l in 0..k {
            m[r * size + base + 1 + l] = -1.0;
        }
    }
    (m, qq)
}

/// The impulses r (3 per contact: normal, t1, t2) of a solution z of
/// [`pyramid_lcp`] with `k` directions.
pub fn pyramid_impulses(z: &[f64], n: usize, k: usize) -> Vec<f64> {
    let per = k + 2;
    let mut r = vec![0.0; 3 * n];
    for i in 0..n {
        r[3 * i] = z[i * per];
        for l in 0..k {
            let a = 2.0 * std::f64::consts::PI * l as f64 / k as f64;
            let b = z[i * per + 1 + l];
            r[3 * i + 1] += b * a.cos();
            r[3 * i + 2] += b * a.sin();
        }
    }
    r
}

/// Entries below this (relative to the column's largest) count as zero in
/// the ratio test.
const PIVOT_TOL: f64 = 1e-12;

/// Solves LCP(q, M) by Lemke's method (module docs), M given row-major
/// (n × n), at most `max_pivots` pivots.
///
/// # Panics
/// When `m` does not hold n² entries.
pub fn lemke(m: &[f64], q: &[f64], max_pivots: usize) -> LemkeOutcome {
    let n = q.len();
    assert_eq!(m.len(), n * n, "M must be {n} × {n}");
    if q.iter().all(|&v| v >= 0.0) {
        return LemkeOutcome::Solved {
            z: vec![0.0; n],
            w: q.to_vec(),
            pivots: 0,
        };
    }
    // Columns: w_0..w_{n−1} (0..n), z_0..z_{n−1} (n..2n), z₀ (2n), rhs (2n+1).
    let cols = 2 * n + 2;
    let (art, rhs) = (2 * n, 2 * n + 1);
    let mut t = vec![0.0; n * cols];
    for i in 0..n {
        let row = &mut t[i * cols..(i + 1) * cols];
        row[i] = 1.0;
        for j in 0..n {
            row[n + j] = -m[i * n + j];
        }
        row[art] = -1.0;
        row[rhs] = q[i];
    }
    let mut basis: Vec<usize> = (0..n).collect();
    // z₀ enters where q is most negative.
    let first = (0..n)
        .min_by(|&a, &b| q[a].total_cmp(&q[b]))
        .expect("n > 0: q has a negative entry");
    pivot(&mut t, cols, first, art);
    let mut leaving = basis[first];
    basis[first] = art;
    let name = |v: usize| {
        if v < n {
            format!("w{v}")
        } else if v < 2 * n {
            format!("z{}", v - n)
        } else {
            "z0 (artificial)".to_string()
        }
    };
    for pivots in 1..=max_pivots {
        let entering = if leaving < n {
            leaving + n
        } else {
            leaving - n
        };
        let Some(r) = ratio_row(&t, cols, n, entering, rhs) else {
            return LemkeOutcome::Ray {
                pivots,
                entering: name(entering),
            };
        };
        pivot(&mut t, cols, r, entering);
        leaving = basis[r];
        basis[r] = entering;
        if leaving == art {
            let mut z = vec![0.0; n];
            let mut w = vec![0.0; n];
            for (i, &v) in basis.iter().enumerate() {
                let value = t[i * cols + rhs].max(0.0);
                if v < n {
                    w[v] = value;
                } else {
                    z[v - n] = value;
                }
            }
            // w from z, so that the pair is consistent to rounding.
            for (i, wi) in w.iter_mut().enumerate() {
                *wi = q[i] + (0..n).map(|j| m[i * n + j] * z[j]).sum::<f64>();
            }
            return LemkeOutcome::Solved { z, w, pivots };
        }
    }
    LemkeOutcome::PivotLimit { pivots: max_pivots }
}

/// The leaving row for `entering`: the minimum ratio rhs_i / a_i over
/// a_i > 0, ties broken lexicographically by the rows of the basis inverse
/// (the tableau's first n columns) over a_i; `None` for ray termination.
fn ratio_row(t: &[f64], cols: usize, n: usize, entering: usize, rhs: usize) -> Option<usize> {
    let scale = (0..n)
        .map(|i| t[i * cols + entering].abs())
        .fold(0.0, f64::max);
    let candidates: Vec<usize> = (0..n)
        .filter(|&i| t[i * cols + entering] > PIVOT_TOL * scale.max(1.0))
        .collect();
    let key = |i: usize, k: usize| -> f64 {
        let a = t[i * cols + entering];
        if k == 0 {
            t[i * cols + rhs] / a
        } else {
            t[i * cols + k - 1] / a
        }
    };
    let mut best: Vec<usize> = candidates;
    // Lexicographic minimum: the ratio first, then each column of B⁻¹.
    for k in 0..=n {
        if best.len() <= 1 {
            break;
        }
        let min = best
            .iter()
            .map(|&i| key(i, k))
            .fold(f64::INFINITY, f64::min);
        let tol = 1e-12 * min.abs().max(1e-300);
        best.retain(|&i| key(i, k) <= min + tol);
    }
    best.first().copied()
}

/// Gauss–Jordan pivot of the tableau on (row r, column c).
fn pivot(t: &mut [f64], cols: usize, r: usize, c: usize) {
    let n = t.len() / cols;
    let p = t[r * cols + c];
    for v in &mut t[r * cols..(r + 1) * cols] {
        *v /= p;
    }
    let row: Vec<f64> = t[r * cols..(r + 1) * cols].to_vec();
    for i in 0..n {
        if i == r {
            continue;
        }
        let f = t[i * cols + c];
        if f != 0.0 {
            for (v, &pr) in t[i * cols..(i + 1) * cols].iter_mut().zip(&row) {
                *v -= f * pr;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks z ≥ 0, w = M z + q ≥ 0 and zᵀw = 0 to `tol`.
    fn assert_solves(m: &[f64], q: &[f64], z: &[f64], tol: f64) {
        let n = q.len();
        for i in 0..n {
            let w = q[i] + (0..n).map(|j| m[i * n + j] * z[j]).sum::<f64>();
            assert!(z[i] >= -tol && w >= -tol, "row {i}: z {} w {w}", z[i]);
            assert!((z[i] * w).abs() <= tol, "row {i}: z w = {}", z[i] * w);
        }
    }

    /// A 2 × 2 P-matrix problem whose solution is known: M = [[2, 1],
    /// [1, 2]], q = (−5, −6): z = (4/3, 7/3), w = 0.
    #[test]
    fn solves_a_small_known_problem() {
        let m = [2.0, 1.0, 1.0, 2.0];
        let q = [-5.0, -6.0];
        let out = lemke(&m, &q, 100);
        let z = out.solution().expect("solved");
        assert!(
            (z[0] - 4.0 / 3.0).abs() < 1e-12 && (z[1] - 7.0 / 3.0).abs() < 1e-12,
            "{z:?}"
        );
        assert_solves(&m, &q, z, 1e-12);
    }

    /// M = [[1, −1], [−1, 1]] is positive semidefinite (copositive-plus);
    /// with q = (−1, −1) the rows z₁ − z₂ ≥ 1 and z₂ − z₁ ≥ 1 cannot both
    /// hold: Lemke's method ends on a ray, which for such M proves it.
    #[test]
    fn infeasible_copositive_plus_problem_ends_on_a_ray() {
        let out = lemke(&[1.0, -1.0, -1.0, 1.0], &[-1.0, -1.0], 100);
        assert!(matches!(out, LemkeOutcome::Ray { .. }), "{out:?}");
    }

    /// q ≥ 0: z = 0 at once.
    #[test]
    fn nonnegative_q_is_solved_by_zero() {
        let out = lemke(&[1.0, 0.0, 0.0, 1.0], &[0.5, 0.0], 10);
        assert_eq!(
            out,
            LemkeOutcome::Solved {
                z: vec![0.0, 0.0],
                w: vec![0.5, 0.0],
                pivots: 0
            }
        );
    }
}
