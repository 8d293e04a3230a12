//! The penalty law of [`super::loads::contact_loads`] for four sphere
//! pairs at once, in SIMD lanes (`wide::f64x4`: one AVX register where the
//! build enables AVX, two SSE2 registers otherwise), for the neighbour
//! list's driver.
//!
//! The scalar law is bound by its instruction count: every `DVec3`
//! operation there is three scalar ones (callgrind: ≈ 800 instructions a
//! contact, half a sub-step's time on the 6,000-bead bench bed). Here each
//! operation is done for four contacts by one (AVX) or two (SSE2)
//! instructions. The law's branches — stick or slip of each spring, caps
//! reached or not, a pair's first sub-step, a spring switched off by a zero
//! coefficient — become selects between both sides, computed for all four.
//!
//! **The same bits as the scalar law.** Every lane does the IEEE operations
//! the scalar law does, in the same order (products and sums associate as
//! there; no fused multiply–add; square roots and divisions are correctly
//! rounded in both), and a side not taken is discarded whole, never mixed
//! in: where the scalar law multiplies by nothing, a lane multiplies by
//! exactly 1; where it returns zero, a lane selects +0. Negation flips the
//! sign bit (not 0 − x, which would turn −0 into +0). So a list run gives
//! the bits of a full detection, which uses the scalar law, and the unit
//! test below compares the two on random contacts bit for bit.
//!
//! Only what varies per sub-step for every pair is in lanes; the rolling
//! model must be `Tracked` (the legacy constant torque goes through the
//! scalar law), and the normal and spin models, the same for all pairs,
//! are branched on once.

use glam::DVec3;
use wide::{f64x4, CmpEq, CmpGt, CmpLe, CmpLt};

use super::loads::{Context, Loads, PairConstants};
use super::normal::NormalModel;
use super::{ContactHistory, PairCoefficients, SpinModel};

type F = f64x4;

/// Contacts per batch.
pub(super) const N: usize = 4;

/// Four lanes of one number, read from the four contacts by `f`.
#[inline(always)]
fn lanes(f: impl Fn(usize) -> f64) -> F {
    F::new(std::array::from_fn(f))
}

/// A mask: all bits set in the lanes where `f` holds.
#[inline(always)]
fn mask(f: impl Fn(usize) -> bool) -> F {
    let on = f64::from_bits(u64::MAX);
    lanes(|l| if f(l) { on } else { 0.0 })
}

/// −x, exactly (the sign bit flipped).
#[inline(always)]
fn neg(x: F) -> F {
    x ^ F::splat(-0.0)
}

/// Lane by lane, `t` where `m` is set, else `f`.
#[inline(always)]
fn select(m: F, t: F, f: F) -> F {
    m.blend(t, f)
}

/// Three lanes of vectors: x, y, z each for four contacts.
#[derive(Clone, Copy)]
struct V {
    x: F,
    y: F,
    z: F,
}

impl V {
    const ZERO: V = V {
        x: F::ZERO,
        y: F::ZERO,
        z: F::ZERO,
    };

    #[inline(always)]
    fn gather(f: impl Fn(usize) -> DVec3) -> V {
        let v: [DVec3; N] = std::array::from_fn(f);
        V {
            x: F::new(std::array::from_fn(|l| v[l].x)),
            y: F::new(std::array::from_fn(|l| v[l].y)),
            z: F::new(std::array::from_fn(|l| v[l].z)),
        }
    }

    #[inline(always)]
    fn lanes(self) -> [DVec3; N] {
        let (x, y, z) = (self.x.to_array(), self.y.to_array(), self.z.to_array());
        std::array::from_fn(|l| DVec3::new(x[l], y[l], z[l]))
    }

    /// As glam's `dot`: (x x′ + y y′) + z z′.
    #[inline(always)]
    fn dot(self, o: V) -> F {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    /// As glam's `cross`.
    #[inline(always)]
    fn cross(self, o: V) -> V {
        V {
            x: self.y * o.z - o.y * self.z,
            y: self.z * o.x - o.z * self.x,
            z: self.x * o.y - o.x * self.y,
        }
    }

    #[inline(always)]
    fn scale(self, s: F) -> V {
        V {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }

    #[inline(always)]
    fn add(self, o: V) -> V {
        V {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }

    #[inline(always)]
    fn sub(self, o: V) -> V {
        V {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }

    #[inline(always)]
    fn neg(self) -> V {
        V {
            x: neg(self.x),
            y: neg(self.y),
            z: neg(self.z),
        }
    }

    #[inline(always)]
    fn select(m: F, t: V, f: V) -> V {
        V {
            x: select(m, t.x, f.x),
            y: select(m, t.y, f.y),
            z: select(m, t.z, f.z),
        }
    }

    /// The part of `self` in the plane normal to `n`.
    #[inline(always)]
    fn tangential(self, n: V) -> V {
        self.sub(n.scale(self.dot(n)))
    }
}

/// `roll_spin::carry`: a deflection turned into the plane normal to `n`,
/// keeping its length (+0 for a zero deflection or one along `n`).
#[inline(always)]
fn carry(d: V, n: V) -> V {
    let len2 = d.dot(d);
    let carried = d.tangential(n);
    let c2 = carried.dot(carried);
    let keep = !len2.cmp_eq(F::ZERO) & c2.cmp_gt(F::ZERO);
    V::select(keep, carried.scale((len2 / c2).sqrt()), V::ZERO)
}

/// `slide::cap`: the factor that brings a deflection of squared length
/// `len2` back to its cap (the kinetic one where it slipped, else the
/// static one), and whether it slips now.
#[inline(always)]
fn cap(len2: F, slipping: F, static_cap: F, kinetic_cap: F) -> (F, F) {
    let limit = select(slipping, kinetic_cap, static_cap);
    let over = len2.cmp_gt(limit * limit);
    (scale_where(over, limit, len2), over)
}

/// limit/√len2 in the lanes of `over`, else 1 (computed in every lane:
/// branching on whether any lane reaches its cap was 6 % slower).
#[inline(always)]
fn scale_where(over: F, limit: F, len2: F) -> F {
    select(over, limit / len2.sqrt(), F::ONE)
}

/// A vector brought back to length `limit` where longer (`x * 1` else).
#[inline(always)]
fn limited(v: V, limit: F) -> V {
    let v2 = v.dot(v);
    v.scale(scale_where(v2.cmp_gt(limit * limit), limit, v2))
}

/// One rocking spring (`roll_spin::roll` with its `RollSprings`) for the
/// four lanes: the torque, and the spring's new deflection and mode.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn roll(
    on: F,
    deflection: V,
    slipping: F,
    springs: &Springs,
    n: V,
    travel: V,
    curvature: F,
) -> (V, V, F) {
    let rock = travel.scale(curvature);
    let theta = carry(deflection, n).add(rock);
    let (f, slips) = cap(theta.dot(theta), slipping, springs.caps.0, springs.caps.1);
    let theta = theta.scale(f);
    let torque = n.cross(theta).scale(springs.stiffness);
    let sticking = limited(
        torque.add(n.cross(rock).scale(springs.damping)),
        springs.limit,
    );
    let torque = V::select(slips, torque, sticking);
    (
        V::select(on, torque, V::ZERO),
        V::select(on, theta, V::ZERO),
        on & slips,
    )
}

/// The lanes' pair coefficients ([`PairCoefficients`]) that the law reads.
struct Coefficients {
    /// Where K_E is set, and its value there (else 0).
    has_k_e: F,
    k_e: F,
    mu_s: F,
    mu_k: F,
    eta_r: F,
    root_eta_r: F,
    eta_psi: F,
    root_eta_psi: F,
}

impl Coefficients {
    /// The coefficients of the lanes' material pairs: broadcast where all
    /// four are one pair (as in a scene of one material), else gathered.
    #[inline(always)]
    fn of(pc: [&PairCoefficients; N]) -> Self {
        let same = pc.iter().all(|p| std::ptr::eq(*p, pc[0]));
        let one = |f: &dyn Fn(&PairCoefficients) -> f64| -> F {
            if same {
                F::splat(f(pc[0]))
            } else {
                lanes(|l| f(pc[l]))
            }
        };
        let on = f64::from_bits(u64::MAX);
        Coefficients {
            has_k_e: one(&|p| if p.slide_stiffness.is_some() { on } else { 0.0 }),
            k_e: one(&|p| p.slide_stiffness.unwrap_or(0.0)),
            mu_s: one(&|p| p.mu_s),
            mu_k: one(&|p| p.mu_k),
            eta_r: one(&|p| p.eta_r),
            root_eta_r: one(&|p| p.root_eta_r),
            eta_psi: one(&|p| p.eta_psi),
            root_eta_psi: one(&|p| p.root_eta_psi),
        }
    }
}

/// `roll_spin::RollSprings` in lanes.
struct Springs {
    stiffness: F,
    damping: F,
    caps: (F, F),
    limit: F,
}

/// The loads of four touching sphere pairs, `pairs[at[l]]` for lanes
/// l = 0…3, into `loads[at[l]]`, advancing their histories `history[at[l]]`
/// over the sub-step: the scalar law's bits (module docs). The rolling model
/// must be `Tracked`.
#[inline(never)]
pub(super) fn four_pairs(
    cx: &Context,
    at: [usize; N],
    pairs: &[(u32, u32)],
    constants: &[PairConstants],
    history: &mut [ContactHistory],
    loads: &mut [Loads],
) {
    let ij: [(usize, usize); N] =
        std::array::from_fn(|l| (pairs[at[l]].0 as usize, pairs[at[l]].1 as usize));
    let k: [&PairConstants; N] = std::array::from_fn(|l| &constants[at[l]]);
    let hist = |l: usize| &history[at[l]];
    let (b, settings) = (cx.bodies, cx.settings);
    debug_assert_eq!(settings.rolling, super::RollingModel::Tracked);
    let (dt, inv_dt) = (F::splat(cx.dt), F::splat(cx.inv_dt));
    let pc = Coefficients::of(std::array::from_fn(|l| {
        cx.pair_of(b.material[ij[l].0], b.material[ij[l].1])
    }));
    // collision::sphere_pair.
    let xa = V::gather(|l| b.pos[ij[l].0]);
    let xb = V::gather(|l| b.pos[ij[l].1]);
    let (ra_len, rb_len) = (lanes(|l| b.radius[ij[l].0]), lanes(|l| b.radius[ij[l].1]));
    let d = xb.sub(xa);
    let dist = d.dot(d).sqrt();
    let n = V::select(
        dist.cmp_gt(F::ZERO),
        d.scale(F::ONE / dist),
        V {
            x: F::ZERO,
            y: F::ZERO,
            z: F::ONE,
        },
    );
    let gap = dist - ra_len - rb_len;
    let point = xa.add(n.scale(ra_len + F::splat(0.5) * gap));
    // loads::contact_loads.
    let omega_a = V::gather(|l| b.omega[ij[l].0]);
    let omega_b = V::gather(|l| b.omega[ij[l].1]);
    let ra = point.sub(xa);
    let ua = V::gather(|l| b.vel[ij[l].0]).add(omega_a.cross(ra));
    let rb = point.sub(xb);
    let ub = V::gather(|l| b.vel[ij[l].1]).add(omega_b.cross(rb));
    let rel = ub.sub(ua);
    let delta = select(neg(gap).cmp_gt(F::ZERO), neg(gap), F::ZERO);
    let (kappa_a, kappa_b) = (lanes(|l| k[l].kappa[0]), lanes(|l| k[l].kappa[1]));
    let kappa = kappa_a + kappa_b;
    let inv_kappa = lanes(|l| k[l].inv_kappa);
    // normal::normal_force.
    let (nk, ndamp) = (lanes(|l| k[l].normal.k), lanes(|l| k[l].normal.damping));
    let (elastic, stiffness, quarter) = match settings.normal {
        NormalModel::Hertz => {
            let root = delta.sqrt();
            (nk * delta * root, F::splat(1.5) * nk * root, root.sqrt())
        }
        NormalModel::Hooke { .. } => (nk * delta, nk, F::ONE),
    };
    let sum = elastic + ndamp * quarter * neg(rel.dot(n));
    let load = select(sum.cmp_gt(F::ZERO), sum, F::ZERO);
    let (has_k_e, k_e_set) = (pc.has_k_e, pc.k_e);
    let k_e = select(has_k_e, k_e_set, F::splat(2.0 / 7.0) * stiffness);
    let root = select(has_k_e, F::ONE, quarter);
    let inv_k_e = F::ONE / k_e;
    let (mu_s, mu_k) = (pc.mu_s, pc.mu_k);
    // slide::slide, where K_E > 0.
    let slide_on = k_e.cmp_gt(F::ZERO);
    let slide_old = V::gather(|l| hist(l).slide.deflection);
    let slide_slipping = mask(|l| hist(l).slide.slipping);
    let (slide_new, slide_slips, friction) = {
        let damping = F::splat(2.0) * lanes(|l| k[l].root_k[0]) * root;
        let rate = rel.tangential(n);
        let s = carry(slide_old, n).add(rate.scale(dt));
        let reach = load * inv_k_e;
        let (scale, slips) = cap(s.dot(s), slide_slipping, mu_s * reach, mu_k * reach);
        let s = s.scale(scale);
        let force = s.scale(k_e);
        let sticking = limited(force.add(rate.scale(damping)), mu_s * load);
        let force = V::select(slips, force, sticking).neg();
        (
            V::select(slide_on, s, slide_old),
            select(slide_on, slips, slide_slipping),
            V::select(slide_on, force, V::ZERO),
        )
    };
    // The contact point's travel over each body since the last sub-step.
    let had_point = mask(|l| hist(l).point.is_some());
    let last = V::gather(|l| hist(l).point.unwrap_or(DVec3::ZERO));
    let dc = point.sub(last);
    let travel_a = V::select(had_point, dc.sub(ua.scale(dt)).tangential(n), V::ZERO);
    let travel_b = V::select(had_point, dc.sub(ub.scale(dt)).tangential(n), V::ZERO);
    let eta_r = pc.eta_r;
    let root_inertia_k_e = lanes(|l| k[l].root_k[1]) * root;
    // RollSprings::new (rolling `Tracked`).
    let springs_on = !(eta_r.cmp_le(F::ZERO) | kappa.cmp_le(F::ZERO) | k_e.cmp_le(F::ZERO));
    let springs = {
        let scale = F::splat(0.5) * kappa * load * inv_k_e;
        Springs {
            stiffness: F::splat(4.0) * eta_r * k_e * inv_kappa * inv_kappa,
            damping: F::splat(4.0) * pc.root_eta_r * root_inertia_k_e * inv_kappa * inv_dt,
            caps: (mu_s * scale, mu_k * scale),
            limit: F::splat(2.0) * eta_r * mu_s * load * inv_kappa,
        }
    };
    let (roll_a, theta_a, slips_a) = roll(
        springs_on,
        V::gather(|l| hist(l).roll[0].deflection),
        mask(|l| hist(l).roll[0].slipping),
        &springs,
        n,
        travel_a,
        kappa_a,
    );
    let (roll_b, theta_b, slips_b) = roll(
        springs_on,
        V::gather(|l| hist(l).roll[1].deflection),
        mask(|l| hist(l).roll[1].slipping),
        &springs,
        n.neg(),
        travel_b,
        kappa_b,
    );
    // roll_spin::spin.
    let rate = omega_b.sub(omega_a).dot(n);
    let (eta_psi, root_eta_psi, curvature, inv_curvature) = match settings.spinning {
        SpinModel::Heuristic => (pc.eta_psi, pc.root_eta_psi, kappa, inv_kappa),
        SpinModel::Hertz => {
            let radius = (delta * inv_kappa).sqrt();
            (
                F::splat(0.5),
                F::splat(std::f64::consts::FRAC_1_SQRT_2),
                F::ONE / radius,
                radius,
            )
        }
    };
    let spin_on = !(eta_psi.cmp_le(F::ZERO) | curvature.cmp_le(F::ZERO) | k_e.cmp_le(F::ZERO));
    let spin_slipping = mask(|l| hist(l).spin.slipping);
    let (spin, phi, spin_slips) = {
        let phi = lanes(|l| hist(l).spin.deflection) + dt * rate;
        let k_psi = eta_psi * k_e * inv_curvature * inv_curvature;
        let scale = curvature * load * inv_k_e;
        let (f, slips) = cap(phi * phi, spin_slipping, mu_s * scale, mu_k * scale);
        let phi = phi * f;
        let torque = neg(k_psi) * phi;
        let d_psi = F::splat(2.0) * root_eta_psi * root_inertia_k_e * inv_curvature;
        let limit = eta_psi * mu_s * load * inv_curvature;
        let sticking = torque - d_psi * rate;
        let sticking = select(sticking.cmp_lt(neg(limit)), neg(limit), sticking);
        let sticking = select(sticking.cmp_gt(limit), limit, sticking);
        (
            select(spin_on, select(slips, torque, sticking), F::ZERO),
            select(spin_on, phi, F::ZERO),
            spin_on & slips,
        )
    };
    let spin_b = n.scale(spin);
    let on_b = n.scale(load).add(friction);
    let torque_a = ra.cross(on_b.neg()).add(roll_a).sub(spin_b);
    let torque_b = rb.cross(on_b).add(roll_b).add(spin_b);
    // Out of the lanes.
    let (force_b, torque_a, torque_b) = (on_b.lanes(), torque_a.lanes(), torque_b.lanes());
    let (slide_new, theta_a, theta_b, point) = (
        slide_new.lanes(),
        theta_a.lanes(),
        theta_b.lanes(),
        point.lanes(),
    );
    let phi = phi.to_array();
    let bits = |m: F, l: usize| m.move_mask() >> l & 1 == 1;
    for l in 0..N {
        let h = &mut history[at[l]];
        h.slide.deflection = slide_new[l];
        h.slide.slipping = bits(slide_slips, l);
        h.roll[0].deflection = theta_a[l];
        h.roll[0].slipping = bits(slips_a, l);
        h.roll[1].deflection = theta_b[l];
        h.roll[1].slipping = bits(slips_b, l);
        h.spin.deflection = phi[l];
        h.spin.slipping = bits(spin_slips, l);
        h.point = Some(point[l]);
        loads[at[l]] = Loads {
            force_b: force_b[l],
            torque_a: torque_a[l],
            torque_b: torque_b[l],
        };
    }
}

#[cfg(test)]
mod tests {
    use super::super::loads::contact_loads;
    use super::super::{PenaltySettings, PenaltyWorkspace, RollingModel};
    use super::*;
    use crate::bodies::{Bodies, SphereInit};
    use crate::collision;
    use crate::material::Material;

    /// A small deterministic generator (splitmix64), uniform in [0, 1).
    struct Draw(u64);

    impl Draw {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
        fn signed(&mut self) -> f64 {
            2.0 * self.next() - 1.0
        }
        fn vec(&mut self, scale: f64) -> DVec3 {
            DVec3::new(self.signed(), self.signed(), self.signed()) * scale
        }
        /// log-uniform in [lo, hi].
        fn log(&mut self, lo: f64, hi: f64) -> f64 {
            lo * (hi / lo).powf(self.next())
        }
    }

    /// Every bit of a history and of loads, in one list.
    fn bits(h: &ContactHistory, l: &Loads) -> Vec<u64> {
        let v = |v: DVec3| [v.x.to_bits(), v.y.to_bits(), v.z.to_bits()];
        let mut out = Vec::new();
        out.extend(v(h.slide.deflection));
        out.extend(v(h.roll[0].deflection));
        out.extend(v(h.roll[1].deflection));
        out.push(h.spin.deflection.to_bits());
        out.extend(
            [
                h.slide.slipping,
                h.roll[0].slipping,
                h.roll[1].slipping,
                h.spin.slipping,
                h.point.is_some(),
            ]
            .map(u64::from),
        );
        out.extend(v(h.point.unwrap_or_default()));
        out.extend(v(l.force_b));
        out.extend(v(l.torque_a));
        out.extend(v(l.torque_b));
        out
    }

    /// The lanes' law gives the scalar law's bits — loads and advanced
    /// histories — on random touching sphere pairs (some touching only by
    /// rounding: a gap of ±1 ulp) with random histories (fresh, sticking,
    /// slipping, deflections within and beyond their caps, last contact
    /// points near the new one), three materials (the third switches every
    /// spring off: K_E set to 0), under each normal and spin model; and the
    /// cases cover each spring sticking with a deflection, slipping and off.
    #[test]
    fn lanes_give_the_scalar_laws_bits() {
        let materials = vec![
            Material {
                roll_eta: 0.1,
                spin_eta: 0.05,
                static_friction: Some(0.5),
                kinetic_friction: Some(0.4),
                ..Material::default()
            },
            Material {
                slide_stiffness: Some(3e3),
                roll_eta: 0.2,
                spin_eta: 0.02,
                young_modulus: 5e7,
                ..Material::default()
            },
            Material {
                slide_stiffness: Some(0.0),
                ..Material::default()
            },
        ];
        let mut draw = Draw(7);
        // Lanes where a spring stuck with a deflection after the sub-step,
        // where it slipped, and where it was off (no deflection, not
        // slipping): slide, roll A, roll B, spin.
        let mut modes = [[0usize; 3]; 4];
        for normal in [NormalModel::Hertz, NormalModel::Hooke { stiffness: 2e4 }] {
            for spinning in [SpinModel::Heuristic, SpinModel::Hertz] {
                let settings = PenaltySettings {
                    normal,
                    spinning,
                    rolling: RollingModel::Tracked,
                    ..PenaltySettings::default()
                };
                let mut ws = PenaltyWorkspace::default();
                ws.refresh_pair_table(normal, &materials);
                for _ in 0..500 {
                    let mut b = Bodies::default();
                    let mut pairs = Vec::new();
                    for l in 0..N {
                        let r = [draw.log(1e-3, 4e-3), draw.log(1e-3, 4e-3)];
                        let at = DVec3::new(l as f64, 0.0, 0.0);
                        let dir = draw.vec(1.0).normalize();
                        let overlap = if draw.next() < 0.05 {
                            0.0
                        } else {
                            draw.log(1e-8, 1e-4)
                        };
                        let ends = [at, at + dir * (r[0] + r[1] - overlap)];
                        let ids = [0, 1].map(|e| {
                            b.push(&SphereInit {
                                pos: ends[e],
                                radius: r[e],
                                mass: SphereInit::solid_mass(r[e], 2500.0),
                                inertia: SphereInit::solid_inertia(
                                    SphereInit::solid_mass(r[e], 2500.0),
                                    r[e],
                                ),
                                vel: draw.vec(0.1),
                                omega: draw.vec(50.0),
                                material: match draw.next() {
                                    x if x < 0.7 => 0,
                                    x if x < 0.9 => 1,
                                    _ => 2,
                                },
                            }) as u32
                        });
                        pairs.push((ids[0], ids[1]));
                    }
                    let dt = 1e-5;
                    let cx = Context {
                        bodies: &b,
                        materials: &materials,
                        pairs: &ws.pair_table,
                        settings: &settings,
                        dt,
                        inv_dt: 1.0 / dt,
                    };
                    let constants: Vec<PairConstants> = pairs
                        .iter()
                        .map(|&(i, j)| PairConstants::of_spheres(&cx, i as usize, j as usize))
                        .collect();
                    let history: Vec<ContactHistory> = pairs
                        .iter()
                        .map(|&(i, j)| {
                            let c = collision::sphere_pair(&b, i as usize, j as usize);
                            if draw.next() < 0.2 {
                                return ContactHistory::default();
                            }
                            let mut h = ContactHistory::default();
                            let size = draw.log(1e-12, 1e-3);
                            h.slide.deflection = draw.vec(size);
                            h.slide.slipping = draw.next() < 0.5;
                            for roll in &mut h.roll {
                                let size = draw.log(1e-12, 1e-1);
                                roll.deflection = draw.vec(size);
                                roll.slipping = draw.next() < 0.5;
                            }
                            h.spin.deflection = draw.signed() * draw.log(1e-12, 1e-1);
                            h.spin.slipping = draw.next() < 0.5;
                            let moved = draw.log(1e-10, 1e-5);
                            h.point = (draw.next() < 0.9).then(|| c.point + draw.vec(moved));
                            h
                        })
                        .collect();
                    let mut scalar = history.clone();
                    let scalar_loads: Vec<Loads> = (0..N)
                        .map(|l| {
                            let (i, j) = pairs[l];
                            let c = collision::sphere_pair(&b, i as usize, j as usize);
                            contact_loads(&cx, &c, &constants[l], &mut scalar[l])
                        })
                        .collect();
                    let mut lane_history = history.clone();
                    let mut lane_loads = vec![Loads::default(); N];
                    let at = std::array::from_fn(|l| l);
                    four_pairs(
                        &cx,
                        at,
                        &pairs,
                        &constants,
                        &mut lane_history,
                        &mut lane_loads,
                    );
                    for l in 0..N {
                        assert_eq!(
                            bits(&lane_history[l], &lane_loads[l]),
                            bits(&scalar[l], &scalar_loads[l]),
                            "{normal:?}, {spinning:?}, lane {l}: lanes {:?} {:?} vs \
                             scalar {:?} {:?}, from {:?}",
                            lane_history[l],
                            lane_loads[l],
                            scalar[l],
                            scalar_loads[l],
                            history[l]
                        );
                        let h = &scalar[l];
                        let springs = [
                            (h.slide.slipping, h.slide.deflection != DVec3::ZERO),
                            (h.roll[0].slipping, h.roll[0].deflection != DVec3::ZERO),
                            (h.roll[1].slipping, h.roll[1].deflection != DVec3::ZERO),
                            (h.spin.slipping, h.spin.deflection != 0.0),
                        ];
                        for (m, (slipping, deflected)) in modes.iter_mut().zip(springs) {
                            m[match (slipping, deflected) {
                                (false, true) => 0,
                                (true, _) => 1,
                                (false, false) => 2,
                            }] += 1;
                        }
                    }
                }
            }
        }
        for (what, [stuck, slipped, off]) in ["slide", "roll A", "roll B", "spin"].iter().zip(modes)
        {
            assert!(
                stuck >= 200 && slipped >= 200 && off >= 200,
                "{what}: {stuck} lanes stuck, {slipped} slipped, {off} off: \
                 the cases miss a mode"
            );
        }
    }
}
