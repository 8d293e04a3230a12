//! The contact problem packed in f32 for the GPU solver and its CPU f32
//! mirror: one 96-byte record per contact, two 32-byte records per body
//! (its velocity, and its free velocity v_free that the body passes rebuild
//! the velocity from).
//!
//! Both f32 solvers read exactly these records (built once by [`pack`]), so
//! they start from bit-identical inputs and differ only by the order of f32
//! operations. The `#[repr(C)]` structs mirror the WGSL structs of
//! `shaders/jacobi.wgsl`; a test checks sizes and field offsets agree.
//!
//! Layout (`vec4`s keep 16-byte alignment, so WGSL and Rust agree without padding):
//!
//! | field | xyz | w |
//! |---|---|---|
//! | `n` | contact normal n (A → B) | μ |
//! | `u` | first tangent u (w = n × u is recomputed) | ρ |
//! | `arm_a` | lever arm s_A | b_f (force-row step) |
//! | `arm_b` | lever arm s_B | b_t (torque-row step) |
//! | `bias` | (b_n, b_u, b_w): stabilisation + wall velocity | σ |
//! | `ids` | body_a, body_b (`u32::MAX` = wall), slot_a, slot_b | |
//!
//! slot_a / slot_b are the positions of the contact's two ends in the CSR
//! order of their bodies, so each body's slots are contiguous.
//!
//! Bodies that are not spheres (a scene with shapes, where
//! [`ContactProblem::has_tensors`]) carry their world inverse inertia
//! tensor I⁻¹ = R I_b⁻¹ Rᵀ as one [`PackedInertia`] record per body (every
//! body of such a scene, spheres as diag(1/I)), and their body records carry
//! 1 in place of the scalar 1/I: the contact pass then writes each end's
//! angular *impulse* s × f + t into its slot, and the body pass applies the
//! tensor to the sum of a body's slots (I⁻¹ is linear, so Σ I⁻¹ τ_e =
//! I⁻¹ Σ τ_e). Sphere-only problems have no inertia records and keep the
//! scalar path unchanged.

use bytemuck::{Pod, Zeroable};
use glam::DVec3;

use crate::collision::NO_BODY;
use crate::material::FrictionLaw;
use crate::problem::{ContactProblem, Delassus};

/// One contact, f32, 96 bytes (WGSL `Contact`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct PackedContact {
    /// Normal n (xyz) and μ (w).
    pub n: [f32; 4],
    /// Tangent u (xyz) and ρ (w).
    pub u: [f32; 4],
    /// Lever arm s_A (xyz) and b_f (w).
    pub arm_a: [f32; 4],
    /// Lever arm s_B (xyz) and b_t (w).
    pub arm_b: [f32; 4],
    /// Force-row bias (xyz) and σ (w).
    pub bias: [f32; 4],
    /// body_a, body_b, slot_a, slot_b.
    pub ids: [u32; 4],
}

/// One body, f32, 32 bytes (WGSL `Body`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct PackedBody {
    /// Linear velocity (xyz) and inverse mass (w).
    pub v: [f32; 4],
    /// Angular velocity (xyz) and inverse inertia (w).
    pub w: [f32; 4],
}

/// One body's world inverse inertia tensor, f32, 32 bytes (the WGSL `Body`
/// layout, stored after the two halves of body records):
/// `diag` = (I⁻¹xx, I⁻¹yy, I⁻¹zz, 0), `off` = (I⁻¹xy, I⁻¹xz, I⁻¹yz, 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct PackedInertia {
    /// Diagonal entries (xyz).
    pub diag: [f32; 4],
    /// Off-diagonal entries xy, xz, yz (xyz).
    pub off: [f32; 4],
}

impl PackedInertia {
    /// I⁻¹ t, in the order of operations of WGSL `apply_inertia`.
    #[inline]
    pub fn apply(&self, t: [f32; 3]) -> [f32; 3] {
        let (d, o) = (&self.diag, &self.off);
        [
            d[0] * t[0] + o[0] * t[1] + o[1] * t[2],
            o[0] * t[0] + d[1] * t[1] + o[2] * t[2],
            o[1] * t[0] + o[2] * t[1] + d[2] * t[2],
        ]
    }
}

/// The packed problem: contact and body records plus the CSR offsets of the
/// slots (body k owns slots `offsets[k]..offsets[k+1]`).
#[derive(Clone, Debug, Default)]
pub struct PackedProblem {
    /// Contact records.
    pub contacts: Vec<PackedContact>,
    /// Body records holding the initial velocities v_free + M⁻¹Dγ₀.
    pub bodies: Vec<PackedBody>,
    /// Body records holding the free velocities v_free (the same 1/m and
    /// 1/I): every body pass rebuilds a body's velocity as v_free + the sum
    /// of its slots, each slot one contact end's whole M⁻¹ D γ.
    pub free: Vec<PackedBody>,
    /// CSR offsets into the slot array (length bodies + 1).
    pub offsets: Vec<u32>,
    /// World inverse inertia tensors, one per body, when the problem has
    /// bodies that are not spheres; empty otherwise (the scalar path).
    pub inertia: Vec<PackedInertia>,
    /// The contact law of the problem.
    pub law: FrictionLaw,
}

fn v4(v: DVec3, w: f64) -> [f32; 4] {
    [v.x as f32, v.y as f32, v.z as f32, w as f32]
}

/// Packs a problem for the f32 solvers. `gamma0` is the starting impulse
/// (warm start); the body records get v = v_free + M⁻¹Dγ₀ computed in f64.
/// The frame's w is recomputed as n × u (as [`tangent_frame`] builds it) and
/// the torque rows of the bias must be zero: callers check
/// [`ContactProblem::has_torque_bias`] first (the step returns
/// `StepError::RotatingBoundary`, and `run::open_backend_for` routes scenes
/// with spinning boundaries to the f64 CPU solver), so a spinning wall is
/// never dropped silently.
///
/// [`tangent_frame`]: crate::problem::tangent_frame
pub fn pack(problem: &ContactProblem, gamma0: &[[f64; 6]]) -> PackedProblem {
    let nc = problem.n_contacts();
    let nb = problem.n_bodies();
    let mut scales = Vec::with_capacity(nc);
    crate::problem::BodyDelassus::new(problem).jacobi_scales(&mut scales);
    // Position of each contact end in its body's CSR run.
    let mut slot_of = vec![u32::MAX; 2 * nc];
    for (pos, &s) in problem.csr_slots.iter().enumerate() {
        slot_of[s as usize] = pos as u32;
    }
    let contacts = (0..nc)
        .map(|i| {
            let [n, u, _w] = problem.frame[i];
            let c = problem.cone[i];
            let b = problem.bias[i];
            debug_assert!(
                b[3] == 0.0 && b[4] == 0.0 && b[5] == 0.0,
                "torque bias not packed"
            );
            let (bf, bt) = scales[i];
            PackedContact {
                n: v4(n, c.mu),
                u: v4(u, c.rho),
                arm_a: v4(problem.arm_a[i], bf),
                arm_b: v4(problem.arm_b[i], bt),
                bias: [b[0] as f32, b[1] as f32, b[2] as f32, c.sigma as f32],
                ids: [
                    problem.body_a[i],
                    problem.body_b[i],
                    slot_of[2 * i],
                    if problem.body_b[i] == NO_BODY {
                        u32::MAX
                    } else {
                        slot_of[2 * i + 1]
                    },
                ],
            }
        })
        .collect();
    let mut v = vec![DVec3::ZERO; nb];
    let mut w = vec![DVec3::ZERO; nb];
    problem.velocities_into(gamma0, &mut v, &mut w);
    let tensors = problem.has_tensors();
    let record = |k: usize, v: DVec3, w: DVec3| PackedBody {
        v: v4(v, problem.inv_mass[k]),
        // With tensors the slots carry angular impulses (module docs).
        w: v4(w, if tensors { 1.0 } else { problem.inv_inertia[k] }),
    };
    let bodies = (0..nb).map(|k| record(k, v[k], w[k])).collect();
    let free = (0..nb)
        .map(|k| record(k, problem.v_free[k], problem.w_free[k]))
        .collect();
    let inertia = if tensors {
        (0..nb)
            .map(|k| {
                let m = problem.inv_inertia_tensor(k);
                PackedInertia {
                    diag: [m.x_axis.x as f32, m.y_axis.y as f32, m.z_axis.z as f32, 0.0],
                    off: [m.y_axis.x as f32, m.z_axis.x as f32, m.z_axis.y as f32, 0.0],
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    PackedProblem {
        contacts,
        bodies,
        free,
        offsets: problem.csr_offsets.clone(),
        inertia,
        law: problem.law,
    }
}
