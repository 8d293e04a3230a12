//! An explicit Delassus operator: N stored as dense 6×6 blocks in block-CSR
//! form, plus the vector r. Used for imported problems and to cross-check the
//! matrix-free body form.

use super::{ContactProblem, Delassus, Vec6};
use crate::material::{ConeCoeffs, FrictionLaw};

/// N as a block-sparse matrix of 6×6 blocks (block-CSR), with r and the cones.
#[derive(Clone, Debug, Default)]
pub struct ExplicitDelassus {
    /// Block-row offsets into `cols`/`blocks` (length n + 1).
    pub row_offsets: Vec<usize>,
    /// Block column of each stored block.
    pub cols: Vec<usize>,
    /// The stored blocks, row-major 6×6.
    pub blocks: Vec<[[f64; 6]; 6]>,
    /// The constant term r.
    pub r: Vec<Vec6>,
    /// Cone coefficients per contact.
    pub cones: Vec<ConeCoeffs>,
    /// The contact law the problem is posed with.
    pub law: FrictionLaw,
    /// Scratch for y = Nγ + r in [`Delassus::sweep`] (no allocation per iteration).
    scratch: Vec<Vec6>,
}

impl ExplicitDelassus {
    /// Assembles N = Dᵀ M⁻¹ D and r explicitly from any other operator by
    /// applying it to unit vectors (O(n²) applies: for tests on small problems).
    pub fn from_operator<D: Delassus>(op: &mut D) -> Self {
        let n = op.n_contacts();
        let zero = vec![[0.0; 6]; n];
        let mut r = vec![[0.0; 6]; n];
        op.apply(&zero, &mut r);
        let mut dense = vec![vec![[[0.0; 6]; 6]; n]; n];
        let mut e = zero.clone();
        let mut y = zero.clone();
        for j in 0..n {
            for c in 0..6 {
                e[j][c] = 1.0;
                op.apply(&e, &mut y);
                e[j][c] = 0.0;
                for i in 0..n {
                    for rr in 0..6 {
                        dense[i][j][rr][c] = y[i][rr] - r[i][rr];
                    }
                }
            }
        }
        let mut out = ExplicitDelassus {
            r,
            cones: (0..n).map(|i| op.cone(i)).collect(),
            law: op.law(),
            row_offsets: vec![0],
            ..Default::default()
        };
        for (i, row) in dense.into_iter().enumerate() {
            for (j, blk) in row.into_iter().enumerate() {
                if blk.iter().flatten().any(|&x| x != 0.0) || i == j {
                    out.cols.push(j);
                    out.blocks.push(blk);
                }
            }
            out.row_offsets.push(out.cols.len());
        }
        out
    }
}

impl ExplicitDelassus {
    /// N = Dᵀ M⁻¹ D and r = Dᵀ v_free + b of a simulation step's problem,
    /// assembled block by block from the body form: block (i, j) sums, over
    /// the bodies that contacts i and j share, m D_iᵀ D_j over the linear
    /// rows plus j D_iᵀ D_j over the angular rows (module docs of
    /// [`crate::problem`]), with the ends' signs (A −, B +). O(Σ_bodies
    /// contacts²): fit for writing a step's problem out, not for every step.
    pub fn from_problem(p: &ContactProblem) -> Self {
        use std::collections::BTreeMap;
        let n = p.n_contacts();
        let mut rows_of: Vec<BTreeMap<usize, [[f64; 6]; 6]>> = vec![BTreeMap::new(); n];
        for b in 0..p.n_bodies() {
            let slots = &p.csr_slots[p.csr_offsets[b] as usize..p.csr_offsets[b + 1] as usize];
            let rows: Vec<_> = slots.iter().map(|&s| p.end_rows(s)).collect();
            let (m, j) = (p.inv_mass[b], p.inv_inertia_tensor(b));
            for (&si, ri) in slots.iter().zip(&rows) {
                for (&sj, rj) in slots.iter().zip(&rows) {
                    let blk = rows_of[(si >> 1) as usize]
                        .entry((sj >> 1) as usize)
                        .or_insert([[0.0; 6]; 6]);
                    super::add_end_block(blk, m, &j, ri, rj);
                }
            }
        }
        let mut out = ExplicitDelassus {
            r: (0..n).map(|i| p.twist(i, &p.v_free, &p.w_free)).collect(),
            cones: p.cone.clone(),
            law: p.law,
            row_offsets: vec![0],
            ..Default::default()
        };
        for (i, mut row) in rows_of.into_iter().enumerate() {
            row.entry(i).or_insert([[0.0; 6]; 6]);
            for (c, blk) in row {
                out.cols.push(c);
                out.blocks.push(blk);
            }
            out.row_offsets.push(out.cols.len());
        }
        out
    }

    /// Row i of the operator: (Nγ + r)_i.
    pub fn row(&self, i: usize, gamma: &[Vec6]) -> Vec6 {
        let mut acc = self.r[i];
        for k in self.row_offsets[i]..self.row_offsets[i + 1] {
            let (blk, g) = (&self.blocks[k], &gamma[self.cols[k]]);
            for (r, a) in acc.iter_mut().enumerate() {
                *a += (0..6).map(|c| blk[r][c] * g[c]).sum::<f64>();
            }
        }
        acc
    }
}

impl Delassus for ExplicitDelassus {
    fn n_contacts(&self) -> usize {
        self.r.len()
    }
    fn cone(&self, i: usize) -> ConeCoeffs {
        self.cones[i]
    }
    fn law(&self) -> FrictionLaw {
        self.law
    }
    fn apply(&mut self, gamma: &[Vec6], y: &mut [Vec6]) {
        for (i, yi) in y.iter_mut().enumerate() {
            *yi = self.row(i, gamma);
        }
    }
    fn sweep(&mut self, gamma: &mut [Vec6], update: &(dyn Fn(usize, &Vec6, &Vec6) -> Vec6 + Sync)) {
        let mut y = std::mem::take(&mut self.scratch);
        y.resize(gamma.len(), [0.0; 6]);
        self.apply(gamma, &mut y);
        for (i, g) in gamma.iter_mut().enumerate() {
            *g = update(i, g, &y[i]);
        }
        self.scratch = y;
    }
    fn gauss_seidel_sweep(
        &mut self,
        gamma: &mut [Vec6],
        local: &mut dyn FnMut(usize, &Vec6, &Vec6) -> Vec6,
    ) {
        for i in 0..gamma.len() {
            let y = self.row(i, gamma);
            gamma[i] = local(i, &gamma[i], &y);
        }
    }
    fn explicit(&self) -> ExplicitDelassus {
        self.clone()
    }
    fn diag_block(&self, i: usize) -> [[f64; 6]; 6] {
        (self.row_offsets[i]..self.row_offsets[i + 1])
            .find(|&k| self.cols[k] == i)
            .map(|k| self.blocks[k])
            .unwrap_or([[0.0; 6]; 6])
    }
    /// Gershgorin: b for each group of rows (force, torque) is 1 / the largest
    /// absolute row sum of those rows, so every row of BN sums to ≤ 1 and
    /// λ_max(BN) ≤ 1. A group whose rows are all zero takes the other's value.
    fn jacobi_scales(&self, out: &mut Vec<(f64, f64)>) {
        out.clear();
        for i in 0..self.n_contacts() {
            let mut sums = [0.0f64; 6];
            for k in self.row_offsets[i]..self.row_offsets[i + 1] {
                for (r, s) in sums.iter_mut().enumerate() {
                    *s += self.blocks[k][r].iter().map(|v| v.abs()).sum::<f64>();
                }
            }
            out.push(gershgorin_scales(&sums));
        }
    }
}

/// Gershgorin step scales (b_f, b_t) from the absolute row sums of a
/// contact's rows of N: 1 / the largest sum among the force rows and among
/// the torque rows, so every row of BN sums to at most 1 and λ_max(BN) ≤ 1.
/// A group whose rows are all zero takes the other's value (1 if both are).
pub fn gershgorin_scales(row_sums: &[f64; 6]) -> (f64, f64) {
    let f = row_sums[..3].iter().copied().fold(0.0, f64::max);
    let t = row_sums[3..].iter().copied().fold(0.0, f64::max);
    let inv = |x: f64| if x > 0.0 { 1.0 / x } else { 0.0 };
    let (mut bf, mut bt) = (inv(f), inv(t));
    if bf == 0.0 {
        bf = if bt > 0.0 { bt } else { 1.0 };
    }
    if bt == 0.0 {
        bt = bf;
    }
    (bf, bt)
}
