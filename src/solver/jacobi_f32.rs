//! The projected Jacobi iteration (and the GPU's APGD, [`solve_apgd`]) in
//! f32 on the packed problem: the CPU mirror of the GPU solvers
//! (`shaders/jacobi.wgsl`), operation for operation.
//!
//! Same iteration as [`super::jacobi`] (Tasora & Anitescu 2013, eq. 46, two
//! step scalars per contact, projection in the metric B⁻¹), in the two-pass
//! form the GPU uses: the contact pass turns each contact's new impulse γ_i
//! into the velocity M⁻¹ D_end γ_i it gives each of its two ends, written
//! to that end's own slot; the body pass rebuilds each body's velocity as
//! v = v_free + the sum of its contiguous slots, in CSR order. No atomics
//! and a fixed summation order: deterministic, and the same sums as the
//! GPU's.
//!
//! **Why whole contributions, not increments.** Adding each iteration's
//! change M⁻¹ D Δγ to the running velocity loses, in f32, every change
//! below half an ulp of |v|, and the loss builds up with the iteration
//! count: after thousands of iterations the velocities the solver converges
//! on are no longer those of its impulses, and the residual it reports is
//! not that of the impulses it returns. Rebuilt from v_free and the
//! current γ at every body pass, a body's velocity is always one f32
//! evaluation of v_free + M⁻¹ D γ, whatever the iteration count, so the
//! residual the solver reports is the residual of the impulses it returns,
//! to f32 rounding. The cost is the same: the contact pass writes γ_i's
//! contribution in place of Δγ_i's, and the body pass reads v_free in place
//! of the old v.

use bytemuck::Zeroable;
use rayon::prelude::*;

use super::packed::{PackedBody, PackedContact, PackedInertia, PackedProblem};
use super::{SolveStats, SolverSettings};
use crate::material::FrictionLaw;

/// Marker for a wall end in `ids.y`.
pub const NONE: u32 = u32::MAX;

type V3 = [f32; 3];

#[inline]
fn xyz(v: &[f32; 4]) -> V3 {
    [v[0], v[1], v[2]]
}
#[inline]
fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
#[inline]
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
#[inline]
fn scale(a: V3, s: f32) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
#[inline]
fn dot(a: V3, b: V3) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
#[inline]
fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// f32 projection onto the 6-D cone: the closed form of [`crate::cone::project`]
/// (Tasora & Anitescu 2013, App. C; Acary & Bourrier 2021, Prop. 5.2),
/// written as the WGSL `project` is, with the exact power-of-two prescaling
/// that keeps squares in range.
pub fn project_f32(x: &[f32; 6], mu: f32, rho: f32, sigma: f32) -> [f32; 6] {
    let m = x.iter().fold(0.0f32, |a, v| a.max(v.abs()));
    if m == 0.0 {
        return [0.0; 6];
    }
    // s = 2^(−e) with m = f·2^e, f ∈ [0.5, 1): m·s ∈ [0.5, 1).
    let e = frexp_exp(m);
    let s = ldexp(1.0, -e);
    let inv = ldexp(1.0, e);
    let x0 = x[0] * s;
    let (gu, gw, tn, tu, tw) = (x[1] * s, x[2] * s, x[3] * s, x[4] * s, x[5] * s);
    let c = [mu, sigma, rho];
    let n = [
        (gu * gu + gw * gw).sqrt(),
        tn.abs(),
        (tu * tu + tw * tw).sqrt(),
    ];
    let mut num = x0;
    let mut den = 1.0f32;
    for k in 0..3 {
        // φ_k = n_k − μ_k x₀ + Σ_{j≠k} μ_j min(μ_j n_k − μ_k n_j, 0) > 0 ⇔ block k saturated.
        let mut phi = n[k] - c[k] * x0;
        for j in 0..3 {
            if j != k {
                phi += c[j] * (c[j] * n[k] - c[k] * n[j]).min(0.0);
            }
        }
        if phi > 0.0 {
            num += c[k] * n[k];
            den += c[k] * c[k];
        }
    }
    let y0 = if num > 0.0 { num / den } else { 0.0 };
    let shrink = |a: f32, nk: f32| if a < nk { a / nk } else { 1.0 };
    let t0 = shrink(c[0] * y0, n[0]) * inv;
    let t1 = shrink(c[1] * y0, n[1]) * inv;
    let t2 = shrink(c[2] * y0, n[2]) * inv;
    [y0 * inv, gu * t0, gw * t0, tn * t1, tu * t2, tw * t2]
}

/// Exponent e of m = f·2^e with f ∈ [0.5, 1) (WGSL `frexp(m).exp`), for normal m;
/// subnormals are treated as the smallest normal exponent.
#[inline]
fn frexp_exp(m: f32) -> i32 {
    let bits = ((m.to_bits() >> 23) & 0xff) as i32;
    bits.max(1) - 126
}

/// x·2^e for the exponent range used here (WGSL `ldexp`).
#[inline]
fn ldexp(x: f32, e: i32) -> f32 {
    let e = e.clamp(-126, 127);
    x * f32::from_bits(((e + 127) as u32) << 23)
}

/// The contact's twist y = Dᵀv + b from the current body records.
#[inline]
pub fn twist(c: &PackedContact, bodies: &[PackedBody]) -> [f32; 6] {
    let n = xyz(&c.n);
    let u = xyz(&c.u);
    let w = cross(n, u);
    // WGSL `load_ends`: a wall end reads as a zero record.
    let a = &bodies[c.ids[0] as usize];
    let b = if c.ids[1] != NONE {
        bodies[c.ids[1] as usize]
    } else {
        PackedBody::zeroed()
    };
    let vrel = sub(
        add(xyz(&b.v), cross(xyz(&b.w), xyz(&c.arm_b))),
        add(xyz(&a.v), cross(xyz(&a.w), xyz(&c.arm_a))),
    );
    let wrel = sub(xyz(&b.w), xyz(&a.w));
    [
        dot(n, vrel) + c.bias[0],
        dot(u, vrel) + c.bias[1],
        dot(w, vrel) + c.bias[2],
        dot(n, wrel),
        dot(u, wrel),
        dot(w, wrel),
    ]
}

/// The velocity the law pairs with γ (WGSL `law_velocity`): y itself, or for
/// De Saxcé ŷ = y + (μ‖y_T‖ + σ|y_s| + ρ‖y_R‖, 0, …) (Acary & Bourrier 2021,
/// eq. 63 + spin).
#[inline]
pub fn law_velocity(c: &PackedContact, y: &[f32; 6], law: FrictionLaw) -> [f32; 6] {
    match law {
        FrictionLaw::Associated => *y,
        FrictionLaw::DeSaxce => {
            let g = c.n[3] * (y[1] * y[1] + y[2] * y[2]).sqrt()
                + c.bias[3] * y[3].abs()
                + c.u[3] * (y[4] * y[4] + y[5] * y[5]).sqrt();
            [y[0] + g, y[1], y[2], y[3], y[4], y[5]]
        }
    }
}

/// One contact's Jacobi update: the new impulse from the old one and the
/// law's velocity ŷ ([`law_velocity`] of the twist).
#[inline]
pub fn update(c: &PackedContact, g: &[f32; 6], y: &[f32; 6], omega: f32, lambda: f32) -> [f32; 6] {
    let (bf, bt) = (c.arm_a[3], c.arm_b[3]);
    let r = (bf / bt).sqrt();
    let (sf, st) = (omega * bf, omega * bt);
    let x = [
        g[0] - sf * y[0],
        g[1] - sf * y[1],
        g[2] - sf * y[2],
        (g[3] - st * y[3]) * r,
        (g[4] - st * y[4]) * r,
        (g[5] - st * y[5]) * r,
    ];
    let mut p = project_f32(&x, c.n[3], c.u[3] * r, c.bias[3] * r);
    for v in &mut p[3..] {
        *v /= r;
    }
    std::array::from_fn(|k| lambda * p[k] + (1.0 - lambda) * g[k])
}

/// Velocities (M⁻¹ D_A γ, M⁻¹ D_B γ), linear and angular, that impulse γ
/// gives end A and end B (WGSL `write_slots`).
#[inline]
pub fn end_velocities(c: &PackedContact, dg: &[f32; 6], bodies: &[PackedBody]) -> [[f32; 6]; 2] {
    let n = xyz(&c.n);
    let u = xyz(&c.u);
    let w = cross(n, u);
    let f = add(add(scale(n, dg[0]), scale(u, dg[1])), scale(w, dg[2]));
    let t = add(add(scale(n, dg[3]), scale(u, dg[4])), scale(w, dg[5]));
    let a = &bodies[c.ids[0] as usize];
    let la = scale(f, -a.v[3]);
    let aa = scale(add(cross(xyz(&c.arm_a), f), t), -a.w[3]);
    let mut out = [[la[0], la[1], la[2], aa[0], aa[1], aa[2]], [0.0; 6]];
    if c.ids[1] != NONE {
        let b = &bodies[c.ids[1] as usize];
        let lb = scale(f, b.v[3]);
        let ab = scale(add(cross(xyz(&c.arm_b), f), t), b.w[3]);
        out[1] = [lb[0], lb[1], lb[2], ab[0], ab[1], ab[2]];
    }
    out
}

/// Squared natural-map residual of one contact and the two squared norms of
/// its scale (WGSL `residual_terms`). Weighted
/// ([`ResidualMeasure::Weighted`](super::ResidualMeasure::Weighted), c = b_f,
/// the contact's effective mass): (‖γ − Π(γ − c ŷ)‖², ‖γ‖², ‖c ŷ‖²).
/// Unweighted ([`ResidualMeasure::Contact`](super::ResidualMeasure::Contact)):
/// (‖γ − Π(γ − ŷ)‖², ‖γ‖², ‖y‖²). ŷ is the [`law_velocity`] of y.
#[inline]
pub fn residual_terms(
    c: &PackedContact,
    g: &[f32; 6],
    y: &[f32; 6],
    law: FrictionLaw,
    weighted: bool,
) -> [f32; 3] {
    let yh = law_velocity(c, y, law);
    let w = if weighted { c.arm_a[3] } else { 1.0 };
    let cy: [f32; 6] = std::array::from_fn(|k| w * yh[k]);
    let d: [f32; 6] = std::array::from_fn(|k| g[k] - cy[k]);
    let p = project_f32(&d, c.n[3], c.u[3], c.bias[3]);
    let scale_terms = if weighted { &cy } else { y };
    let mut out = [0.0f32; 3];
    for k in 0..6 {
        let e = g[k] - p[k];
        out[0] += e * e;
        out[1] += g[k] * g[k];
        out[2] += scale_terms[k] * scale_terms[k];
    }
    out
}

/// Whether the f32 backends weight their residual: yes for
/// [`ResidualMeasure::Weighted`](super::ResidualMeasure::Weighted) (the
/// default); [`ResidualMeasure::Contact`](super::ResidualMeasure::Contact)
/// is unweighted, and so is `Siconos`, whose ‖r‖ the f32 records do not hold.
pub fn weighted(s: &SolverSettings) -> bool {
    s.residual == super::ResidualMeasure::Weighted
}

/// The relative natural-map residual of `gamma` with the body records of
/// `p` (their velocities must be those of `gamma`) into `stats`: summed in
/// f64, with the WGSL `record`'s threshold (f32 ε) and its rule that an
/// overflowed sum (a diverging solve) is never converged.
fn residual_into(
    p: &PackedProblem,
    gamma: &[[f32; 6]],
    law: FrictionLaw,
    weighted: bool,
    stats: &mut SolveStats,
) {
    let bodies = &p.bodies;
    let sums = p
        .contacts
        .par_iter()
        .zip(gamma.par_iter())
        .map(|(c, g)| {
            let t = residual_terms(c, g, &twist(c, bodies), law, weighted);
            [t[0] as f64, t[1] as f64, t[2] as f64]
        })
        .reduce(|| [0.0; 3], |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2]]);
    let abs = sums[0].sqrt();
    let scale = sums[1].sqrt().max(sums[2].sqrt());
    stats.residual_abs = abs;
    stats.residual_rel = if !(abs <= f32::MAX as f64 && scale <= f32::MAX as f64) {
        f64::NAN
    } else if scale > f32::EPSILON as f64 {
        abs / scale
    } else {
        abs
    };
}

/// The residual check of iteration `it` (every `check_every` iterations with
/// a tolerance, and always after the last): `None` when none is due, else
/// the residual written into `stats` and whether it met the tolerance (then
/// `stats.converged` is set).
fn residual_check(
    p: &PackedProblem,
    gamma: &[[f32; 6]],
    law: FrictionLaw,
    weighted: bool,
    s: &SolverSettings,
    it: usize,
    stats: &mut SolveStats,
) -> Option<bool> {
    if !super::is_check(it, s) {
        return None;
    }
    residual_into(p, gamma, law, weighted, stats);
    stats.converged = stats.residual_rel <= s.tolerance;
    Some(stats.converged)
}

/// Reusable buffers of the f32 solver.
#[derive(Default)]
pub struct JacobiF32Workspace {
    deltas: Vec<[[f32; 6]; 2]>,
    /// APGD's extrapolated point v and its body records.
    gamma_v: Vec<[f32; 6]>,
    bodies_v: Vec<PackedBody>,
}

/// The sum of one body's contact velocities: its `slots` (`2 × contact +
/// end`, in CSR order) into the contact pass's `deltas`, added in that
/// order (the body pass of both methods, as the WGSL `gather_slots` does).
/// With an inertia record the angular slots are impulses, and the tensor
/// turns their sum into the angular velocity change (WGSL `apply_inertia`).
#[inline]
fn gather(deltas: &[[[f32; 6]; 2]], slots: &[u32], inertia: Option<&PackedInertia>) -> [f32; 6] {
    let mut acc = [0.0f32; 6];
    for &slot in slots {
        let d = &deltas[(slot >> 1) as usize][(slot & 1) as usize];
        for q in 0..6 {
            acc[q] += d[q];
        }
    }
    if let Some(m) = inertia {
        let t = m.apply([acc[3], acc[4], acc[5]]);
        acc[3..].copy_from_slice(&t);
    }
    acc
}

/// Runs the f32 solver of `s.method` on a packed problem: projected Jacobi,
/// or APGD ([`solve_apgd`]) when the method is
/// [`Apgd`](super::SolverMethod::Apgd). `gamma` is the
/// warm start (the body records must hold v_free + M⁻¹Dγ₀ and the free
/// records v_free, as [`super::packed::pack`] makes them) and is
/// overwritten; the body records end with the final velocities,
/// v_free + M⁻¹Dγ evaluated once in f32 from the final γ.
/// `csr_slots` is the problem's slot list (`2 × contact + end`, in CSR order).
pub fn solve(
    p: &mut PackedProblem,
    csr_slots: &[u32],
    gamma: &mut [[f32; 6]],
    s: &SolverSettings,
    ws: &mut JacobiF32Workspace,
) -> SolveStats {
    if s.method == super::SolverMethod::Apgd {
        return solve_apgd(p, csr_slots, gamma, s, ws);
    }
    let nc = p.contacts.len();
    assert_eq!(gamma.len(), nc);
    let mut stats = SolveStats::default();
    if nc == 0 {
        stats.converged = true;
        return stats;
    }
    let (omega, lambda) = (s.omega as f32, s.lambda as f32);
    let law = p.law;
    let weighted = weighted(s);
    ws.deltas.resize(nc, [[0.0; 6]; 2]);
    let mut it = 0;
    loop {
        if let Some(true) = residual_check(p, gamma, law, weighted, s, it, &mut stats) {
            break;
        }
        if it == s.max_iterations {
            break;
        }
        // Contact pass: new impulse, and the velocity it gives each end.
        {
            let bodies = &p.bodies;
            p.contacts
                .par_iter()
                .zip(gamma.par_iter_mut())
                .zip(ws.deltas.par_iter_mut())
                .with_min_len(256)
                .for_each(|((c, g), d)| {
                    let y = law_velocity(c, &twist(c, bodies), law);
                    *g = update(c, g, &y, omega, lambda);
                    *d = end_velocities(c, g, bodies);
                });
        }
        // Body pass: v = v_free + each body's slots in CSR order.
        {
            let deltas = &ws.deltas;
            let offsets = &p.offsets;
            let inertia = &p.inertia;
            let free = &p.free;
            p.bodies
                .par_iter_mut()
                .enumerate()
                .with_min_len(256)
                .for_each(|(k, b)| {
                    let acc = gather(
                        deltas,
                        &csr_slots[offsets[k] as usize..offsets[k + 1] as usize],
                        inertia.get(k),
                    );
                    for q in 0..3 {
                        b.v[q] = free[k].v[q] + acc[q];
                        b.w[q] = free[k].w[q] + acc[q + 3];
                    }
                });
        }
        it += 1;
    }
    stats.iterations = it;
    stats
}

/// Nesterov's momentum of the GPU APGD (WGSL `apgd_contact_pass`): from θ_k,
/// θ_{k+1} = θ_k (√(θ_k² + 4) − θ_k) / 2 and β_k = θ_k (1 − θ_k) / (θ_k² + θ_{k+1}),
/// in f32 as the shader computes them. Returns (β_k, θ_{k+1}).
#[inline]
pub fn apgd_momentum(theta: f32) -> (f32, f32) {
    let next = 0.5 * theta * ((theta * theta + 4.0).sqrt() - theta);
    (theta * (1.0 - theta) / (theta * theta + next), next)
}

/// The GPU's APGD in f32, operation for operation (WGSL
/// `apgd_contact_pass`, `apgd_body_pass`): the accelerated projected
/// gradient of [`super::apgd`] without its line search and gradient test,
/// which need a global reduction every iteration. Instead:
///
/// * a fixed step t = ω in the Jacobi metric B (whose scaling bounds the
///   largest eigenvalue of B^½ N B^½ by about 1, so ω = 1 is the step 1/L);
/// * the restart at residual checks: when the residual has grown since the
///   previous check, θ = 1 (the next β is 0, momentum dropped);
/// * De Saxcé's ŷ evaluated at the extrapolated point every iteration.
///
/// Iteration k, with x_k the iterate (`gamma`, body records = V(x_k)) and
/// v_k the extrapolated point (kept with its own body records V(v_k)):
///
/// ```text
/// x_{k+1} = Π(v_k − ω B ŷ(v_k)),   v_{k+1} = x_{k+1} + β_k (x_{k+1} − x_k)
/// V(x_{k+1}) = v_free + M⁻¹ D x_{k+1}                  (slots, CSR order)
/// V(v_{k+1}) = V(x_{k+1}) + β_k (V(x_{k+1}) − V(x_k))  (velocities are linear in γ)
/// ```
///
/// V(x_{k+1}) is rebuilt from the whole impulses every iteration (module
/// docs), so neither velocity drifts from its impulses as iterations add up.
///
/// one contact pass and one body pass per iteration, like Jacobi.
pub fn solve_apgd(
    p: &mut PackedProblem,
    csr_slots: &[u32],
    gamma: &mut [[f32; 6]],
    s: &SolverSettings,
    ws: &mut JacobiF32Workspace,
) -> SolveStats {
    let nc = p.contacts.len();
    assert_eq!(gamma.len(), nc);
    let mut stats = SolveStats::default();
    if nc == 0 {
        stats.converged = true;
        return stats;
    }
    let omega = s.omega as f32;
    let law = p.law;
    let weighted = weighted(s);
    ws.deltas.resize(nc, [[0.0; 6]; 2]);
    ws.gamma_v.clear();
    ws.gamma_v.extend_from_slice(gamma);
    ws.bodies_v.clear();
    ws.bodies_v.extend_from_slice(&p.bodies);
    let mut theta = 1.0f32;
    let mut last_rel = f64::INFINITY;
    let mut it = 0;
    loop {
        match residual_check(p, gamma, law, weighted, s, it, &mut stats) {
            Some(true) => break,
            Some(false) => {
                // Restart when the residual grew (NaN never restarts: it
                // fails the comparison, as in the shader).
                if stats.residual_rel > last_rel {
                    theta = 1.0;
                }
                last_rel = stats.residual_rel;
            }
            None => {}
        }
        if it == s.max_iterations {
            break;
        }
        let (beta, next) = apgd_momentum(theta);
        theta = next;
        // Contact pass at the extrapolated point.
        {
            let bodies_v = &ws.bodies_v;
            p.contacts
                .par_iter()
                .zip(gamma.par_iter_mut())
                .zip(ws.gamma_v.par_iter_mut())
                .zip(ws.deltas.par_iter_mut())
                .with_min_len(256)
                .for_each(|(((c, x), v), d)| {
                    let y = law_velocity(c, &twist(c, bodies_v), law);
                    let xn = update(c, v, &y, omega, 1.0);
                    *d = end_velocities(c, &xn, bodies_v);
                    *v = std::array::from_fn(|k| xn[k] + beta * (xn[k] - x[k]));
                    *x = xn;
                });
        }
        // Body pass: V(x_{k+1}) from v_free and the slots, then V(v_{k+1}).
        {
            let deltas = &ws.deltas;
            let offsets = &p.offsets;
            let inertia = &p.inertia;
            let free = &p.free;
            p.bodies
                .par_iter_mut()
                .zip(ws.bodies_v.par_iter_mut())
                .enumerate()
                .with_min_len(256)
                .for_each(|(k, (bx, bv))| {
                    let acc = gather(
                        deltas,
                        &csr_slots[offsets[k] as usize..offsets[k + 1] as usize],
                        inertia.get(k),
                    );
                    for q in 0..3 {
                        let xl = free[k].v[q] + acc[q];
                        let xa = free[k].w[q] + acc[q + 3];
                        bv.v[q] = xl + beta * (xl - bx.v[q]);
                        bv.w[q] = xa + beta * (xa - bx.w[q]);
                        bx.v[q] = xl;
                        bx.w[q] = xa;
                    }
                });
        }
        it += 1;
    }
    stats.iterations = it;
    stats
}
