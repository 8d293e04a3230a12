//! Exact Euclidean projection onto one contact's 6-D friction cone, and the
//! helpers built on it (membership test, projection in a diagonal metric,
//! the Coulomb 3-D special case, the natural-map residual).
//!
//! # The cone
//!
//! A contact's reaction is the 6-vector x = (γ_n, γ_u, γ_w, τ_n, τ_u, τ_w):
//! normal force, two sliding forces, spinning torque, two rolling torques.
//! It must lie in the cone of Tasora & Anitescu 2013, eq. 31,
//!
//! ```text
//! C = { μ γ_n ≥ ‖(γ_u, γ_w)‖,  ρ γ_n ≥ ‖(τ_u, τ_w)‖,  σ γ_n ≥ |τ_n| },   γ_n ≥ 0,
//! ```
//!
//! with μ (sliding), ρ (rolling) and σ (spinning) all ≥ 0. A zero coefficient
//! collapses its part of the cone: the corresponding components must vanish.
//! The normal reaction is unilateral, γ_n ≥ 0; this is implied by eq. 31 as
//! soon as one coefficient is positive and is imposed explicitly when all
//! three are zero (so that the cone is then the normal half-line).
//!
//! # The closed form (Tasora & Anitescu 2013, App. C; Acary & Bourrier 2021, Prop. 5.2)
//!
//! Write x = (x₀, l₁, l₂, l₃) with x₀ = γ_n and the blocks
//! l₁ = (γ_u, γ_w) with coefficient μ₁ = μ, l₂ = τ_n with μ₂ = σ, and
//! l₃ = (τ_u, τ_w) with μ₃ = ρ; write n_k = ‖l_k‖. C is the intersection of the
//! three circular cones K_k = { μ_k y₀ ≥ ‖y_k‖ } that share the component y₀.
//!
//! **Collinearity** (Tasora & Anitescu 2013, App. C). Each block of the
//! projection p is a non-negative multiple of the same block of x: rotating p_k
//! towards l_k keeps ‖p_k‖ (hence feasibility) and strictly decreases ‖p − x‖
//! otherwise. So p_k = t_k l_k with t_k ∈ [0, 1], and for a fixed normal value
//! y₀ ≥ 0 the best t_k is t_k(y₀) = min(1, μ_k y₀ / n_k): blocks that fit are
//! kept, the others are shortened to the cone's surface, ‖p_k‖ = μ_k y₀
//! ("saturated").
//!
//! **Reduction to one variable.** Substituting t_k(y₀), the projection reduces to
//!
//! ```text
//! min_{y₀ ≥ 0} ψ(y₀) = (y₀ − x₀)² + Σ_{k : μ_k y₀ < n_k} (μ_k y₀ − n_k)²,
//! ```
//!
//! a convex, C¹, piecewise quadratic with breakpoints b_k = n_k / μ_k
//! (b_k = +∞ for μ_k = 0: such a block is always saturated, projects to 0 and
//! only adds the constant n_k² to ψ). On the piece where the saturated set is
//! A = { k : y₀ < b_k }, setting ψ′ = 0 gives
//!
//! ```text
//! y₀* = (x₀ + Σ_{k∈A} μ_k n_k) / (1 + Σ_{k∈A} μ_k²),
//! ```
//!
//! the formula of Acary & Bourrier 2021, Prop. 5.2 (there for two cones; here
//! three). The empty A is the inside case (p = x); if the formula with every
//! block saturated is ≤ 0 the minimiser is y₀ = 0 and p = 0, which happens
//! exactly when x₀ + Σ_k μ_k n_k ≤ 0, i.e. x lies in the polar cone C°.
//!
//! **Which piece, without sorting.** Tasora & Anitescu 2013 (App. C) sort the
//! breakpoints and sweep the pieces, accepting the candidate that lies in its
//! own piece. We find the same piece with no sort: ψ″ ≥ 2 > 0, so ψ′ is
//! strictly increasing and the minimiser lies left of b_k (block k saturated)
//! exactly when ψ′(b_k) > 0. Multiplying ψ′(b_k)/2 by μ_k > 0 to avoid
//! the division,
//!
//! ```text
//! φ_k = n_k − μ_k x₀ + Σ_{j≠k} μ_j · min(μ_j n_k − μ_k n_j, 0),   k ∈ A ⇔ φ_k > 0.
//! ```
//!
//! For μ_k = 0 this gives φ_k = n_k, i.e. saturated (a zero block is the same
//! either way). When φ_k = 0 the minimiser sits on b_k and both choices give
//! the same y₀*; near such ties rounding may pick either piece, which changes
//! y₀* only at the rounding level because ψ′ is continuous. The polar case is
//! consistent too: if x ∈ C° then ψ′(0) ≥ 0, so every block with n_k > 0 has
//! φ_k > 0 and the formula's numerator is x₀ + Σ μ_k n_k ≤ 0.
//!
//! Finally p₀ = max(y₀*, 0) and p_k = t_k(p₀) l_k with t_k = min(1, μ_k p₀ / n_k)
//! (t_k = 1 for n_k = 0), which also guarantees ‖p_k‖ ≤ μ_k p₀ up to one rounding.
//! The result is exact in the sense of the closed form: no iteration and no
//! sequence of separate projections onto each cone (which does not give the
//! projection onto the intersection).
//!
//! **Numerics.** The projection is positively homogeneous, Π(αx) = αΠ(x) for
//! α > 0, so the input is first scaled by a power of two (exact) that brings its
//! largest component into [1, 2): squares in the norms can then neither
//! overflow nor underflow, for any finite input (the output is finite whenever
//! ‖x‖ is, since ‖Π(x)‖ ≤ ‖x‖). Points inside C are returned
//! bit-for-bit. The code has a fixed loop over the three blocks, no allocation
//! and no sorting, so that it ports directly to WGSL.
//!
//! # Helpers
//!
//! * [`project_scaled`]: projection in the metric B⁻¹ with B = diag(b_f·I₃, b_t·I₃),
//!   used by the projected Jacobi step with one weight for force rows and one
//!   for torque rows (docs/solvers.md).
//! * [`project_coulomb`], [`project_rolling`]: the 3-D Coulomb cone and the
//!   5-D rolling cone of Acary & Bourrier 2021 (Prop. 5.2), written out
//!   separately (not via [`project`]) so that tests can check the two
//!   implementations against each other; used for Siconos' own error measure
//!   (`crate::siconos`).
//! * [`natural_map_residual_sq`]: ‖γ − Π_C(γ − y)‖², the natural-map residual
//!   of one contact's cone complementarity problem (Tasora & Anitescu 2013,
//!   eq. 40).

use crate::material::ConeCoeffs;

/// One contact's 6-vector (γ_n, γ_u, γ_w, τ_n, τ_u, τ_w): normal, two sliding,
/// spinning, two rolling (Tasora & Anitescu 2013, §4 order).
pub type Vec6 = [f64; 6];

/// The power of two `s` (and its inverse) such that `m · s ∈ [1, 2)` for a
/// normal `m > 0`; clamped so that both stay normal numbers. Multiplying by
/// either is exact (barring underflow of components far below `m`).
#[inline]
fn pow2_scale(m: f64) -> (f64, f64) {
    let e = ((m.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    let e = e.clamp(-1022, 1022);
    let s = f64::from_bits(((1023 - e) as u64) << 52);
    let inv = f64::from_bits(((1023 + e) as u64) << 52);
    (s, inv)
}

/// Shrink factor t = min(1, a / n) of a block of length `n` onto length `a ≥ 0`
/// (1 when the block already fits, including n = 0).
#[inline]
pub(crate) fn shrink(a: f64, n: f64) -> f64 {
    if a < n {
        a / n
    } else {
        1.0
    }
}

/// The saturated set A of the closed form (module docs), from the sign of
/// ψ′ at each breakpoint (no sorting), with the numerator and denominator
/// of y₀* = (x₀ + Σ_A μ_k n_k) / (1 + Σ_A μ_k²); blocks in the order
/// sliding, spinning, rolling. Shared by [`project`] and
/// [`project_jacobian`], so both take the same piece.
#[inline]
fn saturated_set(x0: f64, n: &[f64; 3], mu: &[f64; 3]) -> ([bool; 3], f64, f64) {
    let mut saturated = [false; 3];
    let mut num = x0;
    let mut den = 1.0;
    for k in 0..3 {
        let mut phi = n[k] - mu[k] * x0;
        for j in 0..3 {
            if j != k {
                phi += mu[j] * (mu[j] * n[k] - mu[k] * n[j]).min(0.0);
            }
        }
        if phi > 0.0 {
            saturated[k] = true;
            num += mu[k] * n[k];
            den += mu[k] * mu[k];
        }
    }
    (saturated, num, den)
}

/// Exact Euclidean projection of `x` onto the friction cone C of
/// Tasora & Anitescu 2013, eq. 31, with coefficients `c` (all ≥ 0), by the
/// closed form of Tasora & Anitescu 2013, App. C / Acary & Bourrier 2021,
/// Prop. 5.2 derived in the module docs.
///
/// Returns `x` itself (bit for bit) when `x ∈ C`, and zero when `x` is in the
/// polar cone. No intermediate overflows or underflows: the output is finite
/// for every finite input whose norm ‖x‖ is finite (‖Π(x)‖ ≤ ‖x‖).
pub fn project(x: &Vec6, c: &ConeCoeffs) -> Vec6 {
    debug_assert!(
        c.mu >= 0.0 && c.rho >= 0.0 && c.sigma >= 0.0,
        "cone coefficients must be ≥ 0, got {c:?}"
    );
    let m = x.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
    if m == 0.0 {
        return [0.0; 6];
    }
    let (s, inv) = pow2_scale(m);
    let x0 = x[0] * s;
    let (gu, gw, tn, tu, tw) = (x[1] * s, x[2] * s, x[3] * s, x[4] * s, x[5] * s);

    // Blocks in the order of the module docs: sliding (μ), spinning (σ), rolling (ρ).
    let mu = [c.mu, c.sigma, c.rho];
    let n = [
        (gu * gu + gw * gw).sqrt(),
        tn.abs(),
        (tu * tu + tw * tw).sqrt(),
    ];

    let (_, num, den) = saturated_set(x0, &n, &mu);
    let y0 = if num > 0.0 { num / den } else { 0.0 };

    let t0 = shrink(mu[0] * y0, n[0]) * inv;
    let t1 = shrink(mu[1] * y0, n[1]) * inv;
    let t2 = shrink(mu[2] * y0, n[2]) * inv;
    [y0 * inv, gu * t0, gw * t0, tn * t1, tu * t2, tw * t2]
}

/// The Jacobian DΠ(x) of [`project`] (row r, column c: ∂p_r/∂x_c), from
/// the same closed form: with the saturated set A and D = 1 + Σ_A μ_k²,
///
/// ```text
/// p₀ = (x₀ + Σ_A μ_k n_k)/D:      ∂p₀/∂x₀ = 1/D,   ∂p₀/∂l_k = μ_k l̂_kᵀ/D   (k ∈ A)
/// p_k = μ_k p₀ l̂_k  (k ∈ A):      ∂p_k/∂x = μ_k l̂_k ∂p₀/∂x + [block k] μ_k p₀ (I − l̂_k l̂_kᵀ)/n_k
/// p_k = l_k  (k ∉ A):             ∂p_k/∂l_k = I
/// ```
///
/// I inside C, 0 in the polar cone. Where x sits on a piece's border (a
/// kink of Π) it returns one of the pieces' derivatives — an element of
/// Clarke's generalized Jacobian, what a semismooth Newton step needs.
pub fn project_jacobian(x: &Vec6, c: &ConeCoeffs) -> [[f64; 6]; 6] {
    let mut d = [[0.0; 6]; 6];
    let m = x.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
    if m == 0.0 {
        return d;
    }
    let (s, _) = pow2_scale(m);
    let xs: Vec6 = std::array::from_fn(|k| x[k] * s);
    let mu = [c.mu, c.sigma, c.rho];
    let rows: [&[usize]; 3] = [&[1, 2], &[3], &[4, 5]];
    let n = [
        (xs[1] * xs[1] + xs[2] * xs[2]).sqrt(),
        xs[3].abs(),
        (xs[4] * xs[4] + xs[5] * xs[5]).sqrt(),
    ];
    let (saturated, num, den) = saturated_set(xs[0], &n, &mu);
    if num <= 0.0 {
        return d; // the polar cone: Π = 0 nearby
    }
    // p₀ of the scaled x (that of x is p0 / s); its gradient is scale-free,
    // p₀ being homogeneous of degree 1.
    let p0 = num / den;
    let mut dp0 = [0.0; 6];
    dp0[0] = 1.0 / den;
    let unit = |k: usize, r: usize| if n[k] > 0.0 { xs[r] / n[k] } else { 0.0 };
    for k in 0..3 {
        if saturated[k] && mu[k] > 0.0 {
            for &r in rows[k] {
                dp0[r] = mu[k] * unit(k, r) / den;
            }
        }
    }
    d[0] = dp0;
    for k in 0..3 {
        if !saturated[k] {
            for &r in rows[k] {
                d[r][r] = 1.0;
            }
            continue;
        }
        if mu[k] == 0.0 || n[k] == 0.0 {
            continue; // p_k = 0 around x
        }
        for &r in rows[k] {
            for col in 0..6 {
                d[r][col] = mu[k] * unit(k, r) * dp0[col];
            }
            for &q in rows[k] {
                let eye = if q == r { 1.0 } else { 0.0 };
                d[r][q] += mu[k] * p0 * (eye - unit(k, r) * unit(k, q)) / n[k];
            }
        }
    }
    d
}

/// Whether `x ∈ C` up to a tolerance relative to ‖x‖: with ε = `tol`·‖x‖, it
/// checks γ_n ≥ −ε and, for each part with coefficient μ_k, that its violation
/// ‖l_k‖ − μ_k γ_n is at most ε·√(1 + μ_k²) (that violation divided by
/// √(1 + μ_k²) is the distance to that part's cone when x is not in its polar).
/// `tol = 0` is the exact test.
pub fn is_inside(x: &Vec6, c: &ConeCoeffs, tol: f64) -> bool {
    let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    let eps = tol * norm;
    let parts = [
        (c.mu, x[1].hypot(x[2])),
        (c.sigma, x[3].abs()),
        (c.rho, x[4].hypot(x[5])),
    ];
    x[0] >= -eps
        && parts
            .iter()
            .all(|&(mu, n)| n - mu * x[0] <= eps * (1.0 + mu * mu).sqrt())
}

/// Whether `x` lies in the dual cone C* = {x_n ≥ μ‖x_t‖ + σ|x_s| + ρ‖x_r‖}
/// (the sum of the three parts' duals, since C is their intersection);
/// exact test. −x ∈ C° exactly then, so Π_C(−x) = 0.
pub fn is_in_dual(x: &Vec6, c: &ConeCoeffs) -> bool {
    x[0] >= c.mu * x[1].hypot(x[2]) + c.sigma * x[3].abs() + c.rho * x[4].hypot(x[5])
}

/// Projection in the diagonal metric diag(1/b_f ×3, 1/b_t ×3), b_f, b_t > 0:
/// argmin_{y∈C} (y−x)ᵀ B⁻¹ (y−x). Implemented by scaling: z = (x_f/√b_f, x_t/√b_t),
/// project z onto the cone with (μ, ρ√(b_f/b_t), σ√(b_f/b_t)), map back y = (√b_f z_f, √b_t z_t).
///
/// Here the force rows are x_f = (γ_n, γ_u, γ_w) and the torque rows
/// x_t = (τ_n, τ_u, τ_w). Because the projection is positively homogeneous the
/// common factor 1/√b_f is dropped: z = (x_f, r·x_t) with r = √(b_f/b_t), and
/// y = (p_f, p_t / r). With b_f = b_t this is exactly [`project`].
pub fn project_scaled(x: &Vec6, c: &ConeCoeffs, b_f: f64, b_t: f64) -> Vec6 {
    debug_assert!(
        b_f > 0.0 && b_t > 0.0,
        "metric weights must be > 0, got b_f = {b_f}, b_t = {b_t}"
    );
    if b_f == b_t {
        return project(x, c);
    }
    let r = (b_f / b_t).sqrt();
    let z = [x[0], x[1], x[2], x[3] * r, x[4] * r, x[5] * r];
    let cz = ConeCoeffs {
        mu: c.mu,
        rho: c.rho * r,
        sigma: c.sigma * r,
    };
    let p = project(&z, &cz);
    [p[0], p[1], p[2], p[3] / r, p[4] / r, p[5] / r]
}

/// Coulomb 3-D cone (γ_n, γ_u, γ_w) with μ: special case of the 6-D one.
///
/// The closed form with a single block: inside → x; μ‖(γ_u, γ_w)‖ ≤ −γ_n (polar)
/// → 0; otherwise γ_n* = (γ_n + μ‖(γ_u, γ_w)‖)/(1 + μ²) and the tangential part
/// is scaled to length μ γ_n*.
pub fn project_coulomb(x: &[f64; 3], mu: f64) -> [f64; 3] {
    debug_assert!(mu >= 0.0, "friction coefficient must be ≥ 0, got {mu}");
    let m = x[0].abs().max(x[1].abs()).max(x[2].abs());
    if m == 0.0 {
        return [0.0; 3];
    }
    let (s, inv) = pow2_scale(m);
    let (x0, gu, gw) = (x[0] * s, x[1] * s, x[2] * s);
    let n = (gu * gu + gw * gw).sqrt();
    // One block: saturated iff φ = n − μ x₀ > 0 (see the module docs).
    let (num, den) = if n - mu * x0 > 0.0 {
        (x0 + mu * n, 1.0 + mu * mu)
    } else {
        (x0, 1.0)
    };
    let y0 = if num > 0.0 { num / den } else { 0.0 };
    let t = shrink(mu * y0, n) * inv;
    [y0 * inv, gu * t, gw * t]
}

/// Exact Euclidean projection onto the 5-D rolling-friction cone of
/// Acary & Bourrier 2021 (§5, eq. 63), K_r = { ‖r_T‖ ≤ μ r_N, ‖m_R‖ ≤ μ_r r_N }
/// with x = (r_N, r_T, m_R) = (normal, 2 sliding, 2 rolling) and μ, μ_r ≥ 0,
/// by the case analysis of Acary & Bourrier 2021, Prop. 5.2, with
/// n_T = ‖r̄_T‖, n_R = ‖m̄_R‖:
///
/// 1. x ∈ K_r (r_N ≥ 0 included, for μ = μ_r = 0): x itself (bit for bit);
/// 2. −x ∈ K_r*, i.e. r̄_N + μ n_T + μ_r n_R ≤ 0: 0;
/// 3. both parts saturated (eq. 68): r_N = (r̄_N + μ n_T + μ_r n_R)/(1 + μ² + μ_r²),
///    valid if μ r_N < n_T and μ_r r_N < n_R;
/// 4. sliding saturated only (eq. 69): r_N = (r̄_N + μ n_T)/(1 + μ²),
///    valid if μ r_N < n_T and μ_r r_N ≥ n_R;
/// 5. rolling saturated only (eq. 70): r_N = (r̄_N + μ_r n_R)/(1 + μ_r²),
///    valid if μ_r r_N < n_R and μ r_N ≥ n_T;
///
/// a saturated part is scaled to length μ r_N (resp. μ_r r_N), the other kept.
/// Exactly one of 3–5 holds in exact arithmetic when 1 and 2 do not (up to
/// ties, where the candidates coincide); should rounding reject all three, the
/// candidate nearest x is taken. The input is scaled by a power of two first,
/// as in [`project`]. This is an implementation independent of [`project`]
/// (it is the special case ρ = μ_r, σ = 0 there), so that each checks the other.
pub fn project_rolling(x: &[f64; 5], mu: f64, mu_r: f64) -> [f64; 5] {
    debug_assert!(
        mu >= 0.0 && mu_r >= 0.0,
        "friction coefficients must be ≥ 0, got μ = {mu}, μ_r = {mu_r}"
    );
    let m = x.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
    if m == 0.0 {
        return [0.0; 5];
    }
    let (s, inv) = pow2_scale(m);
    let xs = x.map(|v| v * s);
    let rn = xs[0];
    let nt = (xs[1] * xs[1] + xs[2] * xs[2]).sqrt();
    let nr = (xs[3] * xs[3] + xs[4] * xs[4]).sqrt();

    // Case 1: inside.
    if rn >= 0.0 && nt <= mu * rn && nr <= mu_r * rn {
        return *x;
    }
    // Case 2: in the polar cone.
    if rn + mu * nt + mu_r * nr <= 0.0 {
        return [0.0; 5];
    }
    // The point with normal value y, each part shrunk onto its cone if needed.
    let point = |y: f64| -> [f64; 5] {
        let tt = shrink(mu * y, nt) * inv;
        let tr = shrink(mu_r * y, nr) * inv;
        [y * inv, xs[1] * tt, xs[2] * tt, xs[3] * tr, xs[4] * tr]
    };
    // Cases 3, 4, 5 (eqs. 68, 69, 70).
    let both = (rn + mu * nt + mu_r * nr) / (1.0 + mu * mu + mu_r * mu_r);
    let slide = (rn + mu * nt) / (1.0 + mu * mu);
    let roll = (rn + mu_r * nr) / (1.0 + mu_r * mu_r);
    if mu * both < nt && mu_r * both < nr {
        return point(both);
    }
    if mu * slide < nt && mu_r * slide >= nr {
        return point(slide);
    }
    if mu_r * roll < nr && mu * roll >= nt {
        return point(roll);
    }
    // Only reached by rounding near a tie between cases: the candidates are
    // then nearly equal; take the one nearest x.
    let dist2 = |p: &[f64; 5]| -> f64 { (0..5).map(|i| (p[i] - x[i]).powi(2)).sum() };
    [both, slide, roll]
        .into_iter()
        .filter(|&y| y > 0.0)
        .map(point)
        .min_by(|a, b| dist2(a).total_cmp(&dist2(b)))
        .unwrap_or([0.0; 5])
}

/// Squared natural-map residual ‖γ − Π_C(γ − y)‖² of one contact's cone
/// complementarity problem γ ∈ C, y ∈ C* (dual cone), γ ⊥ y
/// (Tasora & Anitescu 2013, eq. 40, with y the contact's velocity Nγ + r). It
/// vanishes exactly at solutions.
pub fn natural_map_residual_sq(gamma: &Vec6, y: &Vec6, c: &ConeCoeffs) -> f64 {
    let d: Vec6 = std::array::from_fn(|i| gamma[i] - y[i]);
    let p = project(&d, c);
    (0..6).map(|i| (gamma[i] - p[i]).powi(2)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DΠ against central differences of [`project`] at random points of
    /// every kind (inside, polar, one to three blocks saturated), away from
    /// the pieces' borders, for cones with and without zero coefficients.
    #[test]
    fn the_projection_jacobian_matches_finite_differences() {
        let mut rng = crate::rng::Rng::new(7);
        let cones = [
            ConeCoeffs {
                mu: 0.5,
                rho: 0.1,
                sigma: 0.05,
            },
            ConeCoeffs {
                mu: 1.0,
                rho: 2.0,
                sigma: 0.0,
            },
            ConeCoeffs {
                mu: 0.3,
                rho: 0.0,
                sigma: 0.0,
            },
        ];
        let mut checked = 0;
        for c in &cones {
            for _ in 0..2000 {
                let x: Vec6 = std::array::from_fn(|_| rng.uniform(-1.0, 1.0));
                let h = 1e-6;
                let jac = project_jacobian(&x, c);
                // Skip points within a few h of a kink: the two sides differ.
                let mut worst: f64 = 0.0;
                let mut kink = false;
                for col in 0..6 {
                    let (mut a, mut b) = (x, x);
                    a[col] += h;
                    b[col] -= h;
                    let (pa, pb, p) = (project(&a, c), project(&b, c), project(&x, c));
                    for r in 0..6 {
                        let fd = (pa[r] - pb[r]) / (2.0 * h);
                        let one_sided = (pa[r] - p[r]) / h - (p[r] - pb[r]) / h;
                        if one_sided.abs() > 1e-4 {
                            kink = true;
                        }
                        worst = worst.max((fd - jac[r][col]).abs());
                    }
                }
                if kink {
                    continue;
                }
                checked += 1;
                assert!(
                    worst < 1e-6,
                    "cone {c:?}, x = {x:?}: |DΠ − finite differences| = {worst:e}"
                );
            }
        }
        assert!(checked > 5000, "only {checked} points away from kinks");
    }

    fn cc(mu: f64, rho: f64, sigma: f64) -> ConeCoeffs {
        ConeCoeffs { mu, rho, sigma }
    }

    fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
        let err = got
            .iter()
            .zip(want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            err <= tol,
            "{what}: got {got:?}, want {want:?}, max error {err:e} > tolerance {tol:e}"
        );
    }

    #[test]
    fn projection_of_zero_is_zero() {
        assert_eq!(project(&[0.0; 6], &cc(0.5, 0.1, 0.1)), [0.0; 6]);
        assert_eq!(project(&[0.0; 6], &cc(0.0, 0.0, 0.0)), [0.0; 6]);
        assert_eq!(project_coulomb(&[0.0; 3], 0.3), [0.0; 3]);
    }

    #[test]
    fn projection_is_identity_inside_cone_bit_for_bit() {
        let c = cc(0.5, 0.02, 0.01);
        let x = [3.0, 1.0, -0.7, 0.01, -0.03, 0.02];
        assert_eq!(
            project(&x, &c),
            x,
            "interior point must be returned unchanged"
        );
        // Exactly on the boundary of all three parts (binary-exact values, 3-4-5
        // triangles so that the norms are exact too).
        let x = [8.0, 3.0, 4.0, 0.5, -0.75, 1.0];
        assert_eq!(project(&x, &cc(0.625, 0.15625, 0.0625)), x);
    }

    #[test]
    fn projection_is_zero_on_polar_cone() {
        let c = cc(0.5, 0.1, 0.2);
        // x₀ + Σ μ_k n_k = −10 + 0.5·5 + 0.2·1 + 0.1·5 = −6.8 < 0.
        let x = [-10.0, 3.0, 4.0, 1.0, 3.0, -4.0];
        assert_eq!(project(&x, &c), [0.0; 6]);
        // On the polar boundary: x₀ + Σ μ_k n_k = 0 exactly.
        let x = [-2.5, 3.0, 4.0, 0.0, 0.0, 0.0];
        assert_close(
            &project(&x, &cc(0.5, 0.0, 0.0)),
            &[0.0; 6],
            0.0,
            "polar boundary",
        );
    }

    #[test]
    fn projection_with_all_coefficients_zero_is_the_normal_half_line() {
        let c = cc(0.0, 0.0, 0.0);
        let x = [2.0, 1.0, -1.0, 3.0, 0.5, 0.25];
        assert_eq!(project(&x, &c), [2.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        let x = [-2.0, 1.0, -1.0, 3.0, 0.5, 0.25];
        assert_eq!(project(&x, &c), [0.0; 6]);
    }

    #[test]
    fn projection_matches_hand_computed_single_cone_case() {
        // Only sliding is violated: y₀ = (x₀ + μ n)/(1 + μ²) = (1 + 0.5·5)/1.25 = 2.8,
        // tangential shrunk to length μ y₀ = 1.4 along (3, 4)/5.
        let x = [1.0, 3.0, 4.0, 0.0, 0.0, 0.0];
        let want = [2.8, 1.4 * 0.6, 1.4 * 0.8, 0.0, 0.0, 0.0];
        assert_close(
            &project(&x, &cc(0.5, 1.0, 1.0)),
            &want,
            1e-15,
            "sliding only",
        );
        assert_close(
            &project_coulomb(&[1.0, 3.0, 4.0], 0.5),
            &want[..3],
            1e-15,
            "coulomb",
        );
    }

    #[test]
    fn projection_is_finite_and_homogeneous_at_extreme_scales() {
        let c = cc(0.7, 0.3, 0.2);
        let x = [0.3, -1.2, 0.8, 0.5, 0.9, -0.4];
        let p = project(&x, &c);
        for scale in [1e-300, 1e-160, 1e160, 1e300, f64::MIN_POSITIVE] {
            let xs = x.map(|v| v * scale);
            let ps = project(&xs, &c);
            let want = p.map(|v| v * scale);
            assert_close(
                &ps.map(|v| v / scale),
                &want.map(|v| v / scale),
                1e-14,
                &format!("scale {scale:e}"),
            );
        }
        let huge = [5e307, -5e307, 5e307, 1.0, -5e307, 0.0];
        assert!(project(&huge, &c).iter().all(|v| v.is_finite()));
        let tiny = [5e-324, -5e-324, 0.0, 5e-324, 0.0, 0.0];
        assert!(project(&tiny, &c).iter().all(|v| v.is_finite()));
    }

    #[test]
    fn pow2_scale_brings_largest_component_into_unit_octave() {
        for m in [1.0, 1.5, 3.0, 1e-3, 7e5, 1e300, 1e-300] {
            let (s, inv) = pow2_scale(m);
            assert!((1.0..2.0).contains(&(m * s)), "m = {m:e}, m·s = {}", m * s);
            assert_eq!(s * inv, 1.0, "m = {m:e}");
        }
    }

    #[test]
    fn is_inside_accepts_boundary_and_rejects_violations() {
        let c = cc(0.625, 0.15625, 0.0625);
        let on = [8.0, 3.0, 4.0, 0.5, -0.75, 1.0];
        assert!(is_inside(&on, &c, 0.0));
        let out = [8.0, 3.0, 4.0 + 1e-5, 0.5, -0.75, 1.0];
        assert!(!is_inside(&out, &c, 0.0));
        assert!(!is_inside(&out, &c, 1e-9));
        assert!(is_inside(&out, &c, 1e-5));
        assert!(!is_inside(&[-1.0, 0.0, 0.0, 0.0, 0.0, 0.0], &c, 1e-9));
    }

    /// x ∈ C* exactly when the projection of −x onto C is 0 (−x ∈ C°),
    /// checked on points on both sides of the dual cone's boundary.
    #[test]
    fn is_in_dual_agrees_with_the_projection_of_the_opposite_point() {
        let c = cc(0.625, 0.15625, 0.0625);
        // On the boundary: x_n = μ‖x_t‖ + σ|x_s| + ρ‖x_r‖ = 0.625·5 + 0.0625·2 + 0.15625·4.
        let edge = [3.875, 3.0, 4.0, -2.0, 0.0, 4.0];
        for (dn, inside) in [(1e-3, true), (0.0, true), (-1e-3, false)] {
            let x = [edge[0] + dn, edge[1], edge[2], edge[3], edge[4], edge[5]];
            let neg = x.map(|v| -v);
            let p = project(&neg, &c);
            let zero = p.iter().all(|v| v.abs() <= 1e-12);
            assert_eq!(is_in_dual(&x, &c), inside, "x_n offset {dn}");
            assert_eq!(zero, inside, "x_n offset {dn}: Π(−x) = {p:?}");
        }
    }
}
