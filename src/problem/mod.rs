//! The contact problem: the one representation every solver reads.
//!
//! A [`ContactProblem`] holds, per contact, the two ends, the contact frame
//! R_p = [n, u, w], the lever arms s_A, s_B from the body centres to the
//! contact point, the cone coefficients (μ, ρ, σ) of
//! Tasora & Anitescu 2013, eq. 31 and the constant part of the contact
//! twist (stabilisation plus boundary motion); per body, the inverse mass
//! and inertia and the *free* velocity (velocity after gravity, before
//! contact impulses); and a body → contact-end CSR index so each body can
//! gather its contacts' impulses in a fixed order.
//!
//! # The D blocks (Tasora & Anitescu 2013, App. B, eqs. 52–57)
//!
//! γ_i = (γ_n, γ_u, γ_w, τ_n, τ_u, τ_w) is the impulse of contact i: force
//! F = γ_n n + γ_u u + γ_w w and torque T = τ_n n + τ_u u + τ_w w acting on B,
//! and their opposites on A (with A as the reference body, the signs of
//! eqs. 52–57 swap, as the paper notes). With v = (ẋ, ω) per body and
//! ω in the world frame (spheres are isotropic), for the end with lever arm s:
//!
//! ```text
//!   D_Bᵀ = [ R_pᵀ      −R_pᵀ s̃ ]        D_Aᵀ = −[ R_pᵀ      −R_pᵀ s̃_A ]
//!          [ 0          R_pᵀ   ]                 [ 0          R_pᵀ     ]
//! ```
//!
//! so that Dᵀ v is the twist of B relative to A in the contact frame:
//! (n·v_rel, u·v_rel, w·v_rel, n·ω_rel, u·ω_rel, w·ω_rel) with
//! v_rel = (v_B + ω_B × s_B) − (v_A + ω_A × s_A), ω_rel = ω_B − ω_A.
//! Row k of −R_pᵀ s̃ applied to ω is e_k·(ω × s) = ω·(s × e_k).
//!
//! # The cone complementarity problem (Tasora & Anitescu 2013, eqs. 38–40)
//!
//! N = Dᵀ M⁻¹ D, r = Dᵀ M⁻¹ k̃ + b = Dᵀ v_free + b: find γ ∈ Y with
//! Nγ + r ∈ −Y° and γ ⊥ Nγ + r. Here b_i = (max(Φ_i/h, −v_rec), 0, …, 0) plus
//! the boundary's velocity seen in the contact frame (a moving wall is end B
//! with infinite mass: its surface velocity at the contact point enters the
//! force rows and its angular velocity the torque rows as constants).

use glam::{DMat3, DVec3};
use rayon::prelude::*;

use crate::bodies::Bodies;
use crate::collision::{ContactGeom, NO_BODY};
use crate::material::{ConeCoeffs, FrictionLaw, Material};

pub mod explicit;

/// The normal row's stabilisation b = Φ/h (Tasora & Anitescu 2013,
/// eq. 18), clamped so that an overlap is pushed apart at most at
/// `max_recovery_speed`.
pub fn stabilisation(gap: f64, h: f64, max_recovery_speed: f64) -> f64 {
    (gap / h).max(-max_recovery_speed)
}

/// One contact's 6-vector (γ_n, γ_u, γ_w, τ_n, τ_u, τ_w) or twist.
pub type Vec6 = [f64; 6];

/// An orthonormal frame [n, u, w] from a unit normal, deterministic and
/// continuous away from n_z = −1 (Duff et al., "Building an orthonormal basis,
/// revisited", 2017).
pub fn tangent_frame(n: DVec3) -> [DVec3; 3] {
    let sign = 1.0f64.copysign(n.z);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    let u = DVec3::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x);
    let w = DVec3::new(b, sign + n.y * n.y * a, -n.y);
    [n, u, w]
}

/// The contact problem of one time step (see the module docs for the maths).
#[derive(Clone, Debug, Default)]
pub struct ContactProblem {
    /// Body A of each contact.
    pub body_a: Vec<u32>,
    /// Body B of each contact, or [`NO_BODY`] for a kinematic boundary.
    pub body_b: Vec<u32>,
    /// Contact frame [n, u, w]; n points from A to B.
    pub frame: Vec<[DVec3; 3]>,
    /// Lever arm s_A = contact point − centre of A.
    pub arm_a: Vec<DVec3>,
    /// Lever arm s_B = contact point − centre of B (unused for boundaries).
    pub arm_b: Vec<DVec3>,
    /// Cone coefficients (μ, ρ, σ).
    pub cone: Vec<ConeCoeffs>,
    /// Constant twist term: stabilisation b_i plus boundary velocity.
    pub bias: Vec<Vec6>,
    /// Gap Φ_i at the start of the step (m).
    pub gap: Vec<f64>,
    /// Warm-start pair key of each contact.
    pub key: Vec<u64>,
    /// The boundary index of each contact's end B, [`NO_WALL`](crate::collision::NO_WALL) for a body
    /// pair; empty for a problem read from a file (no boundaries known).
    pub wall: Vec<u32>,
    /// Inverse mass of each body.
    pub inv_mass: Vec<f64>,
    /// Inverse moment of inertia of each sphere; for a body of another
    /// shape the largest principal inverse moment (a bound: step sizes).
    pub inv_inertia: Vec<f64>,
    /// World inverse inertia tensor R I_b⁻¹ Rᵀ of every body, or empty when
    /// every body is a sphere (then `inv_inertia` is exact).
    pub inv_inertia_world: Vec<DMat3>,
    /// Its symmetric square root R I_b^-½ Rᵀ (the interior point's lifted
    /// form), empty with it.
    pub inv_inertia_sqrt: Vec<DMat3>,
    /// Free linear velocity v + h M⁻¹ f of each body.
    pub v_free: Vec<DVec3>,
    /// Free angular velocity of each body.
    pub w_free: Vec<DVec3>,
    /// CSR offsets: body k's contact ends are `csr_slots[csr_offsets[k]..csr_offsets[k+1]]`.
    pub csr_offsets: Vec<u32>,
    /// Contact-end slots, `2 × contact + end` (end 0 = A, 1 = B), sorted by contact within a body.
    pub csr_slots: Vec<u32>,
    /// The contact law every contact obeys (associated or De Saxcé).
    pub law: FrictionLaw,
}

impl ContactProblem {
    /// Number of contacts.
    pub fn n_contacts(&self) -> usize {
        self.body_a.len()
    }

    /// Number of bodies.
    pub fn n_bodies(&self) -> usize {
        self.inv_mass.len()
    }

    /// Assembles the problem of a step from the bodies, the detected contacts
    /// and the step settings. `v_free`/`w_free` are the velocities after the
    /// non-contact forces of this step.
    #[allow(clippy::too_many_arguments)]
    pub fn assemble(
        bodies: &Bodies,
        contacts: &[ContactGeom],
        materials: &[Material],
        v_free: Vec<DVec3>,
        w_free: Vec<DVec3>,
        h: f64,
        max_recovery_speed: f64,
    ) -> Self {
        let nc = contacts.len();
        let mut p = ContactProblem {
            body_a: Vec::with_capacity(nc),
            body_b: Vec::with_capacity(nc),
            frame: Vec::with_capacity(nc),
            arm_a: Vec::with_capacity(nc),
            arm_b: Vec::with_capacity(nc),
            cone: Vec::with_capacity(nc),
            bias: Vec::with_capacity(nc),
            gap: Vec::with_capacity(nc),
            key: Vec::with_capacity(nc),
            wall: Vec::with_capacity(nc),
            inv_mass: bodies.inv_mass.clone(),
            inv_inertia: bodies.inv_inertia.clone(),
            inv_inertia_world: if bodies.has_shapes() {
                (0..bodies.len())
                    .map(|k| bodies.inv_inertia_world(k))
                    .collect()
            } else {
                Vec::new()
            },
            inv_inertia_sqrt: if bodies.has_shapes() {
                (0..bodies.len())
                    .map(|k| {
                        crate::shape::world_inverse_inertia(
                            bodies.rot[k],
                            bodies.inv_inertia_body[k].powf(0.5),
                        )
                    })
                    .collect()
            } else {
                Vec::new()
            },
            v_free,
            w_free,
            ..Default::default()
        };
        for c in contacts {
            let a = c.a as usize;
            let frame = tangent_frame(c.normal);
            let arm_a = c.point - bodies.pos[a];
            let arm_b = if c.b == NO_BODY {
                DVec3::ZERO
            } else {
                c.point - bodies.pos[c.b as usize]
            };
            let mat_a = &materials[bodies.material[a] as usize];
            let mat_b = &materials[c.material_b as usize];
            let stab = stabilisation(c.gap, h, max_recovery_speed);
            // End B = a boundary with infinite mass: its surface velocity
            // enters v_rel = v_B,surface − (v_A + ω_A × s_A) and its angular
            // velocity ω_rel = ω_B − ω_A as constants (both zero for spheres).
            let vw = c.wall_velocity;
            let ww = c.wall_omega;
            p.bias.push([
                stab + frame[0].dot(vw),
                frame[1].dot(vw),
                frame[2].dot(vw),
                frame[0].dot(ww),
                frame[1].dot(ww),
                frame[2].dot(ww),
            ]);
            p.body_a.push(c.a);
            p.body_b.push(c.b);
            p.frame.push(frame);
            p.arm_a.push(arm_a);
            p.arm_b.push(arm_b);
            p.cone.push(ConeCoeffs::combine(mat_a, mat_b));
            p.gap.push(c.gap);
            p.key.push(c.key);
            p.wall.push(c.wall);
        }
        p.build_csr();
        p
    }

    /// Builds the body → contact-end index by a counting sort (slots of a
    /// body appear in increasing contact order, so gathers are deterministic).
    pub fn build_csr(&mut self) {
        let nb = self.n_bodies();
        let mut counts = vec![0u32; nb + 1];
        for i in 0..self.n_contacts() {
            counts[self.body_a[i] as usize + 1] += 1;
            if self.body_b[i] != NO_BODY {
                counts[self.body_b[i] as usize + 1] += 1;
            }
        }
        for k in 0..nb {
            counts[k + 1] += counts[k];
        }
        let mut fill = counts.clone();
        let mut slots = vec![0u32; counts[nb] as usize];
        for i in 0..self.n_contacts() {
            let a = self.body_a[i] as usize;
            slots[fill[a] as usize] = 2 * i as u32;
            fill[a] += 1;
            if self.body_b[i] != NO_BODY {
                let b = self.body_b[i] as usize;
                slots[fill[b] as usize] = 2 * i as u32 + 1;
                fill[b] += 1;
            }
        }
        self.csr_offsets = counts;
        self.csr_slots = slots;
    }

    /// Body k's angular velocity change I⁻¹ t for an angular impulse t.
    #[inline]
    pub fn ang(&self, k: usize, t: DVec3) -> DVec3 {
        if self.inv_inertia_world.is_empty() {
            t * self.inv_inertia[k]
        } else {
            self.inv_inertia_world[k] * t
        }
    }

    /// Body k's world inverse inertia tensor.
    pub fn inv_inertia_tensor(&self, k: usize) -> DMat3 {
        if self.inv_inertia_world.is_empty() {
            DMat3::from_diagonal(DVec3::splat(self.inv_inertia[k]))
        } else {
            self.inv_inertia_world[k]
        }
    }

    /// Body k's M^-½ on the angular rows: the tensor's square root.
    pub fn inv_inertia_root(&self, k: usize) -> DMat3 {
        if self.inv_inertia_sqrt.is_empty() {
            DMat3::from_diagonal(DVec3::splat(self.inv_inertia[k].sqrt()))
        } else {
            self.inv_inertia_sqrt[k]
        }
    }

    /// Whether some body has a full inertia tensor (not a sphere): the f32
    /// and GPU records carry a scalar inertia only.
    pub fn has_tensors(&self) -> bool {
        !self.inv_inertia_world.is_empty()
    }

    /// Whether any contact has a non-zero torque-row bias (a spinning
    /// boundary): the f32/GPU records carry only the force rows, so such a
    /// problem must be solved by the f64 CPU solver.
    pub fn has_torque_bias(&self) -> bool {
        self.bias
            .iter()
            .any(|b| b[3] != 0.0 || b[4] != 0.0 || b[5] != 0.0)
    }

    /// Contact i's twist Dᵢᵀ v + bᵢ for the given body velocities.
    #[inline]
    pub fn twist(&self, i: usize, v: &[DVec3], w: &[DVec3]) -> Vec6 {
        let a = self.body_a[i] as usize;
        let b = self.body_b[i];
        let mut vrel = -(v[a] + w[a].cross(self.arm_a[i]));
        let mut wrel = -w[a];
        if b != NO_BODY {
            let b = b as usize;
            vrel += v[b] + w[b].cross(self.arm_b[i]);
            wrel += w[b];
        }
        let [n, u, wt] = self.frame[i];
        let c = &self.bias[i];
        [
            n.dot(vrel) + c[0],
            u.dot(vrel) + c[1],
            wt.dot(vrel) + c[2],
            n.dot(wrel) + c[3],
            u.dot(wrel) + c[4],
            wt.dot(wrel) + c[5],
        ]
    }

    /// Body velocities v = v_free + M⁻¹ D γ, gathered per body over its CSR
    /// slots in fixed order (deterministic for any thread count).
    pub fn velocities_into(&self, gamma: &[Vec6], v: &mut [DVec3], w: &mut [DVec3]) {
        let ft: Vec<(DVec3, DVec3)> = gamma
            .par_iter()
            .enumerate()
            .map(|(i, g)| self.world_impulse(i, g))
            .collect();
        self.velocities_from_world(&ft, v, w);
    }

    /// Contact i's impulse as world vectors (F, T) = (γ_n n + γ_u u + γ_w w,
    /// τ_n n + τ_u u + τ_w w).
    #[inline]
    pub fn world_impulse(&self, i: usize, g: &Vec6) -> (DVec3, DVec3) {
        let [n, u, w] = self.frame[i];
        (
            n * g[0] + u * g[1] + w * g[2],
            n * g[3] + u * g[4] + w * g[5],
        )
    }

    /// Body velocities v = v_free + M⁻¹ D γ from the contacts' world impulses
    /// (see [`ContactProblem::world_impulse`]), gathered in fixed CSR order.
    pub fn velocities_from_world(&self, ft: &[(DVec3, DVec3)], v: &mut [DVec3], w: &mut [DVec3]) {
        v.par_iter_mut()
            .zip(w.par_iter_mut())
            .enumerate()
            .with_min_len(64)
            .for_each(|(k, (vk, wk))| {
                let (mut dl, mut da) = (DVec3::ZERO, DVec3::ZERO);
                let lo = self.csr_offsets[k] as usize;
                let hi = self.csr_offsets[k + 1] as usize;
                for &slot in &self.csr_slots[lo..hi] {
                    let i = (slot >> 1) as usize;
                    let (f, t) = ft[i];
                    // End A gets −(F, s_A × F + T), end B +(F, s_B × F + T).
                    if slot & 1 == 0 {
                        dl -= f;
                        da -= self.arm_a[i].cross(f) + t;
                    } else {
                        dl += f;
                        da += self.arm_b[i].cross(f) + t;
                    }
                }
                *vk = self.v_free[k] + dl * self.inv_mass[k];
                *wk = self.w_free[k] + self.ang(k, da);
            });
    }

    /// The six rows of D_eᵀ for contact-end slot `2 i + end` (end 0 = A,
    /// 1 = B), each as its (linear, angular) parts acting on (v, ω) of that
    /// end's body: force row k = ±(e_k, s × e_k), torque row k = ±(0, e_k),
    /// − for A, + for B (module docs).
    pub fn end_rows(&self, slot: u32) -> [(DVec3, DVec3); 6] {
        let i = (slot >> 1) as usize;
        let (sign, arm) = if slot & 1 == 0 {
            (-1.0, self.arm_a[i])
        } else {
            (1.0, self.arm_b[i])
        };
        let e = self.frame[i];
        std::array::from_fn(|k| {
            if k < 3 {
                (e[k] * sign, arm.cross(e[k]) * sign)
            } else {
                (DVec3::ZERO, e[k - 3] * sign)
            }
        })
    }

    /// The diagonal block N_ii = Σ_ends D_eᵀ M_e⁻¹ D_e of contact i (6×6).
    pub fn diag_block(&self, i: usize) -> [[f64; 6]; 6] {
        let mut out = [[0.0; 6]; 6];
        let a = self.body_a[i] as usize;
        let rows = self.end_rows(2 * i as u32);
        add_end_block(
            &mut out,
            self.inv_mass[a],
            &self.inv_inertia_tensor(a),
            &rows,
            &rows,
        );
        if self.body_b[i] != NO_BODY {
            let b = self.body_b[i] as usize;
            let rows = self.end_rows(2 * i as u32 + 1);
            add_end_block(
                &mut out,
                self.inv_mass[b],
                &self.inv_inertia_tensor(b),
                &rows,
                &rows,
            );
        }
        out
    }
}

/// Adds D_eᵀ M⁻¹ D_f of two contact ends on the same body (inverse mass
/// `m`, world inverse inertia tensor `j`; rows from
/// [`ContactProblem::end_rows`]) into `out`.
pub fn add_end_block(
    out: &mut [[f64; 6]; 6],
    m: f64,
    j: &DMat3,
    e: &[(DVec3, DVec3); 6],
    f: &[(DVec3, DVec3); 6],
) {
    for (r, a) in e.iter().enumerate() {
        for (c, b) in f.iter().enumerate() {
            out[r][c] += m * a.0.dot(b.0) + a.1.dot(*j * b.1);
        }
    }
}

/// A Delassus operator: the affine map γ ↦ Nγ + r of a cone complementarity
/// problem, whatever N's storage (matrix-free body form or explicit blocks).
pub trait Delassus {
    /// Number of contacts (each a 6-vector of unknowns).
    fn n_contacts(&self) -> usize;
    /// Cone coefficients of contact i.
    fn cone(&self, i: usize) -> ConeCoeffs;
    /// The contact law of every contact (associated unless stated).
    fn law(&self) -> FrictionLaw {
        FrictionLaw::Associated
    }
    /// y = Nγ + r.
    fn apply(&mut self, gamma: &[Vec6], y: &mut [Vec6]);
    /// The 6×6 diagonal block N_ii.
    fn diag_block(&self, i: usize) -> [[f64; 6]; 6];
    /// N and r as explicit 6×6 blocks (for the methods that factor N).
    fn explicit(&self) -> explicit::ExplicitDelassus;
    /// The problem in body form (D, M⁻¹, v_free, b) when the operator has it;
    /// `None` for an operator known only by its blocks (a file's W).
    fn body_form(&self) -> Option<&ContactProblem> {
        None
    }
    /// Per-contact step scalars (b_f, b_t) of the Jacobi iteration (force and
    /// torque rows), chosen so that the scaled operator B^½ N B^½ has its
    /// largest eigenvalue at most about 1.
    fn jacobi_scales(&self, out: &mut Vec<(f64, f64)>);
    /// One Jacobi sweep in place: with y = Nγ + r for the current γ, replaces
    /// every γ_i by `update(i, γ_i, y_i)`. `gamma` must not change between
    /// calls except through this method (operators may cache data derived
    /// from it; [`Delassus::apply`] resets such caches).
    fn sweep(&mut self, gamma: &mut [Vec6], update: &(dyn Fn(usize, &Vec6, &Vec6) -> Vec6 + Sync));
    /// One block Gauss–Seidel sweep in place (Acary & Bourrier 2021, §5.2):
    /// visits the contacts in index order; for each, `local(i, γ_i, y_i)`
    /// receives y_i = (Nγ + r)_i computed with the latest values of every
    /// contact visited before it, and returns the new γ_i, which is used
    /// from then on.
    fn gauss_seidel_sweep(
        &mut self,
        gamma: &mut [Vec6],
        local: &mut dyn FnMut(usize, &Vec6, &Vec6) -> Vec6,
    );
}

/// Euclidean norm over all contacts' 6-vectors.
pub fn norm(x: &[Vec6]) -> f64 {
    x.iter().flatten().map(|v| v * v).sum::<f64>().sqrt()
}

/// The matrix-free body form of N (Tasora & Anitescu 2013, eq. 38): apply =
/// gather M⁻¹Dγ per body, then Dᵀv per contact. Keeps the body velocities
/// of the last apply.
///
/// Each contact's impulse is kept as world vectors (F, T), so the per-body
/// gather reads 48 bytes per contact end instead of the frame and γ; the
/// fused [`Delassus::sweep`] updates γ_i and its (F, T) in the same pass that
/// computes y_i (no y array written and read back).
pub struct BodyDelassus<'a> {
    /// The problem.
    pub problem: &'a ContactProblem,
    /// Linear velocities from the last `apply`.
    pub v: Vec<DVec3>,
    /// Angular velocities from the last `apply`.
    pub w: Vec<DVec3>,
    /// World impulses (F, T) per contact, valid for the γ of the last sweep.
    ft: Vec<(DVec3, DVec3)>,
    ft_valid: bool,
}

impl<'a> BodyDelassus<'a> {
    /// Wraps a problem.
    pub fn new(problem: &'a ContactProblem) -> Self {
        BodyDelassus {
            problem,
            v: problem.v_free.clone(),
            w: problem.w_free.clone(),
            ft: Vec::new(),
            ft_valid: false,
        }
    }

    fn compute_ft(&mut self, gamma: &[Vec6]) {
        let p = self.problem;
        gamma
            .par_iter()
            .enumerate()
            .with_min_len(256)
            .map(|(i, g)| p.world_impulse(i, g))
            .collect_into_vec(&mut self.ft);
    }
}

impl Delassus for BodyDelassus<'_> {
    fn n_contacts(&self) -> usize {
        self.problem.n_contacts()
    }
    fn cone(&self, i: usize) -> ConeCoeffs {
        self.problem.cone[i]
    }
    fn law(&self) -> FrictionLaw {
        self.problem.law
    }
    fn apply(&mut self, gamma: &[Vec6], y: &mut [Vec6]) {
        let p = self.problem;
        self.compute_ft(gamma);
        self.ft_valid = false;
        p.velocities_from_world(&self.ft, &mut self.v, &mut self.w);
        let (v, w) = (&self.v, &self.w);
        y.par_iter_mut()
            .with_min_len(256)
            .enumerate()
            .for_each(|(i, yi)| *yi = p.twist(i, v, w));
    }
    fn sweep(&mut self, gamma: &mut [Vec6], update: &(dyn Fn(usize, &Vec6, &Vec6) -> Vec6 + Sync)) {
        let p = self.problem;
        if !self.ft_valid {
            self.compute_ft(gamma);
        }
        p.velocities_from_world(&self.ft, &mut self.v, &mut self.w);
        let (v, w) = (&self.v, &self.w);
        gamma
            .par_iter_mut()
            .zip(self.ft.par_iter_mut())
            .with_min_len(256)
            .enumerate()
            .for_each(|(i, (g, ft))| {
                let y = p.twist(i, v, w);
                *g = update(i, g, &y);
                *ft = p.world_impulse(i, g);
            });
        self.ft_valid = true;
    }
    /// Sequential: body velocities v = v_free + M⁻¹Dγ are formed once, then
    /// each contact reads its twist from them and pushes its impulse change
    /// M⁻¹ D_i Δγ_i into its two bodies before the next contact is visited.
    fn gauss_seidel_sweep(
        &mut self,
        gamma: &mut [Vec6],
        local: &mut dyn FnMut(usize, &Vec6, &Vec6) -> Vec6,
    ) {
        let p = self.problem;
        self.ft_valid = false;
        p.velocities_into(gamma, &mut self.v, &mut self.w);
        let (v, w) = (&mut self.v, &mut self.w);
        for (i, g) in gamma.iter_mut().enumerate() {
            let y = p.twist(i, v, w);
            let new = local(i, g, &y);
            let delta: Vec6 = std::array::from_fn(|k| new[k] - g[k]);
            *g = new;
            let (f, t) = p.world_impulse(i, &delta);
            // End A gets −(F, s_A × F + T), end B +(F, s_B × F + T).
            let a = p.body_a[i] as usize;
            v[a] -= f * p.inv_mass[a];
            w[a] -= p.ang(a, p.arm_a[i].cross(f) + t);
            if p.body_b[i] != NO_BODY {
                let b = p.body_b[i] as usize;
                v[b] += f * p.inv_mass[b];
                w[b] += p.ang(b, p.arm_b[i].cross(f) + t);
            }
        }
    }
    fn diag_block(&self, i: usize) -> [[f64; 6]; 6] {
        self.problem.diag_block(i)
    }
    fn body_form(&self) -> Option<&ContactProblem> {
        Some(self.problem)
    }
    fn explicit(&self) -> explicit::ExplicitDelassus {
        explicit::ExplicitDelassus::from_problem(self.problem)
    }
    /// Bound per end e with n_e contacts, inverse mass m_e, inverse inertia
    /// j_e and arm s_e: D_eᵀ M_e⁻¹ D_e = m_e L Lᵀ + j_e A Aᵀ, where L picks the
    /// force rows and A has rows (s_e × e_k) and e_k. Scaled by
    /// B = diag(b_f I₃, b_t I₃), its largest eigenvalue is at most
    /// b_f m_e + j_e (b_f |s_e|² + b_t). With b_t = b_f ℓ² (ℓ² the mean |s_e|²,
    /// the length that converts torques to forces) and mass splitting over the
    /// n_e contacts that share a body (block Gershgorin):
    /// b_f = 1 / Σ_e n_e (m_e + j_e (|s_e|² + ℓ²)).
    fn jacobi_scales(&self, out: &mut Vec<(f64, f64)>) {
        let p = self.problem;
        let count = |k: usize| (p.csr_offsets[k + 1] - p.csr_offsets[k]) as f64;
        (0..p.n_contacts())
            .into_par_iter()
            .map(|i| {
                let a = p.body_a[i] as usize;
                let mut ends = vec![(
                    count(a),
                    p.inv_mass[a],
                    p.inv_inertia[a],
                    p.arm_a[i].length_squared(),
                )];
                if p.body_b[i] != NO_BODY {
                    let b = p.body_b[i] as usize;
                    ends.push((
                        count(b),
                        p.inv_mass[b],
                        p.inv_inertia[b],
                        p.arm_b[i].length_squared(),
                    ));
                }
                let l2 = ends.iter().map(|e| e.3).sum::<f64>() / ends.len() as f64;
                let denom: f64 = ends
                    .iter()
                    .map(|&(n, m, j, s2)| n * (m + j * (s2 + l2)))
                    .sum();
                let bf = 1.0 / denom;
                let bt = if l2 > 0.0 { bf * l2 } else { bf };
                (bf, bt)
            })
            .collect_into_vec(out);
    }
}
