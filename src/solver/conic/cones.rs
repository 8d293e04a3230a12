//! The per-cone algebra of the interior-point method in
//! [`conic`](super): the cone blocks (zero, orthant, second-order), their
//! Jordan products, the Nesterov–Todd scaling and the step to a cone's
//! boundary (the formulas are in the parent module's docs).

/// One cone block of the constraint rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Block {
    /// Equality rows (s = 0).
    Zero { off: usize, dim: usize },
    /// s ≥ 0 componentwise.
    Nonneg { off: usize, dim: usize },
    /// s₀ ≥ ‖s₁‖.
    Soc { off: usize, dim: usize },
}

impl Block {
    /// (first row, rows).
    pub(super) fn range(&self) -> (usize, usize) {
        match *self {
            Block::Zero { off, dim } | Block::Nonneg { off, dim } | Block::Soc { off, dim } => {
                (off, dim)
            }
        }
    }
}

/// Euclidean norm.
pub(super) fn norm(v: &[f64]) -> f64 {
    v.iter().map(|a| a * a).sum::<f64>().sqrt()
}

/// √det u = √(u₀² − ‖u₁‖²) of a point inside a second-order cone, as
/// √((u₀ − ‖u₁‖)(u₀ + ‖u₁‖)).
pub(super) fn soc_root_det(u: &[f64]) -> f64 {
    let n1 = norm(&u[1..]);
    ((u[0] - n1) * (u[0] + n1)).max(0.0).sqrt()
}

/// The largest α with l + α d in the second-order cone, for l inside it
/// (+∞ when the ray never leaves): the smallest positive root of
/// det(l + α d) = 0.
pub(super) fn soc_step(l: &[f64], d: &[f64]) -> f64 {
    let dot1: f64 = l[1..].iter().zip(&d[1..]).map(|(a, b)| a * b).sum();
    let a = d[0] * d[0] - d[1..].iter().map(|v| v * v).sum::<f64>();
    let b = 2.0 * (l[0] * d[0] - dot1);
    let rd = soc_root_det(l);
    let c = rd * rd;
    if c <= 0.0 {
        return 0.0;
    }
    let disc = b * b - 4.0 * a * c;
    if a == 0.0 {
        return if b < 0.0 { -c / b } else { f64::INFINITY };
    }
    if disc < 0.0 {
        return f64::INFINITY;
    }
    let sq = disc.sqrt();
    let qq = -0.5 * (b + b.signum() * sq);
    let mut best = f64::INFINITY;
    for root in [qq / a, if qq != 0.0 { c / qq } else { f64::INFINITY }] {
        if root > 0.0 {
            best = best.min(root);
        }
    }
    best
}

/// The Nesterov–Todd scaling of one block at (s, z).
#[derive(Clone, Debug)]
pub(super) enum Scaling {
    /// Equality rows: no scaling.
    Zero,
    /// W = diag(w), w = √(s/z).
    Nonneg(Vec<f64>),
    /// W = η W̄(w̄).
    Soc { eta: f64, w: Vec<f64> },
}

impl Scaling {
    /// W = I.
    pub(super) fn unit(b: &Block) -> Self {
        match *b {
            Block::Zero { .. } => Scaling::Zero,
            Block::Nonneg { dim, .. } => Scaling::Nonneg(vec![1.0; dim]),
            Block::Soc { dim, .. } => {
                let mut w = vec![0.0; dim];
                w[0] = 1.0;
                Scaling::Soc { eta: 1.0, w }
            }
        }
    }

    /// The scaling at (s, z), both inside the block's cone.
    #[cfg(test)]
    pub(super) fn at(b: &Block, s: &[f64], z: &[f64]) -> Self {
        let mut sc = Scaling::unit(b);
        sc.update(b, s, z);
        sc
    }

    /// Becomes the scaling at (s, z), in place (no allocation: it runs
    /// for every cone at every Newton step). `self` is of `b`'s type.
    pub(super) fn update(&mut self, b: &Block, s: &[f64], z: &[f64]) {
        match (self, *b) {
            (Scaling::Zero, Block::Zero { .. }) => {}
            (Scaling::Nonneg(w), Block::Nonneg { off, .. }) => {
                for (r, wr) in w.iter_mut().enumerate() {
                    *wr = (s[off + r] / z[off + r]).sqrt();
                }
            }
            (Scaling::Soc { eta, w }, Block::Soc { off, dim }) => {
                let (s, z) = (&s[off..off + dim], &z[off..off + dim]);
                let (rs, rz) = (soc_root_det(s), soc_root_det(z));
                // s̄ = s/√det s, z̄ = z/√det z, γ = √((1 + s̄ᵀz̄)/2).
                let dot: f64 = s.iter().zip(z).map(|(a, b)| (a / rs) * (b / rz)).sum();
                let g = (0.5 * (1.0 + dot)).sqrt();
                w[0] = (s[0] / rs + z[0] / rz) / (2.0 * g);
                for k in 1..dim {
                    w[k] = (s[k] / rs - z[k] / rz) / (2.0 * g);
                }
                *eta = (rs / rz).sqrt();
            }
            _ => unreachable!("a scaling updated with another block type"),
        }
    }

    /// out = W v (or W⁻¹ v) on the block's rows.
    pub(super) fn apply(&self, b: &Block, v: &[f64], out: &mut [f64], inverse: bool) {
        let (off, dim) = b.range();
        match self {
            Scaling::Zero => out[off..off + dim].copy_from_slice(&v[off..off + dim]),
            Scaling::Nonneg(w) => {
                for r in 0..dim {
                    out[off + r] = if inverse {
                        v[off + r] / w[r]
                    } else {
                        v[off + r] * w[r]
                    };
                }
            }
            Scaling::Soc { eta, w } => {
                let v = &v[off..off + dim];
                let sign = if inverse { -1.0 } else { 1.0 };
                let dot1: f64 = w[1..].iter().zip(&v[1..]).map(|(a, b)| a * b).sum();
                let scale = if inverse { 1.0 / eta } else { *eta };
                out[off] = scale * (w[0] * v[0] + sign * dot1);
                let c = dot1 / (1.0 + w[0]);
                for k in 1..dim {
                    out[off + k] = scale * (sign * v[0] * w[k] + v[k] + c * w[k]);
                }
            }
        }
    }
}

/// d = −λ∘λ − a∘b + c e on one block's rows (nothing on zero rows).
pub(super) fn jordan_corrector(b: &Block, l: &[f64], a: &[f64], bb: &[f64], c: f64, d: &mut [f64]) {
    match *b {
        Block::Zero { off, dim } => d[off..off + dim].fill(0.0),
        Block::Nonneg { off, dim } => {
            for r in off..off + dim {
                d[r] = -l[r] * l[r] - a[r] * bb[r] + c;
            }
        }
        Block::Soc { off, dim } => {
            let (l, a, bb) = (&l[off..off + dim], &a[off..off + dim], &bb[off..off + dim]);
            let ll: f64 = l.iter().map(|v| v * v).sum();
            let ab: f64 = a.iter().zip(bb).map(|(x, y)| x * y).sum();
            d[off] = -ll - ab + c;
            for k in 1..dim {
                d[off + k] = -2.0 * l[0] * l[k] - (a[0] * bb[k] + bb[0] * a[k]);
            }
        }
    }
}

/// t = λ \ d (the x with λ ∘ x = d) on one block's rows.
pub(super) fn inverse_product(b: &Block, l: &[f64], d: &[f64], t: &mut [f64]) {
    match *b {
        Block::Zero { off, dim } => t[off..off + dim].fill(0.0),
        Block::Nonneg { off, dim } => {
            for r in off..off + dim {
                t[r] = d[r] / l[r];
            }
        }
        Block::Soc { off, dim } => {
            let (l, d) = (&l[off..off + dim], &d[off..off + dim]);
            let rd = soc_root_det(l);
            let det = rd * rd;
            let dot1: f64 = l[1..].iter().zip(&d[1..]).map(|(a, b)| a * b).sum();
            let t0 = (l[0] * d[0] - dot1) / det;
            t[off] = t0;
            for k in 1..dim {
                t[off + k] = (d[k] - t0 * l[k]) / l[0];
            }
        }
    }
}
