//! The penalty law of [`super::loads::contact_loads`] for four contacts at
//! once, in SIMD lanes (`wide::f64x4`: one AVX register where the build
//! enables AVX, two SSE2 registers otherwise), for the neighbour list's
//! driver: four sphere pairs ([`four_pairs`], their geometry made in lanes
//! too) or four sphere–boundary contacts as the detection gives them
//! ([`four_walls`]), through one law.
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
//! tests (`lanes/tests.rs`) compare the two on random contacts bit for bit.
//!
//! **AVX-512.** The law keeps more numbers live than AVX2's 16 vector
//! registers hold: a quarter of the instructions of [`four_pairs`] were
//! spills to the stack. On a processor with AVX-512 (VL: 32 registers of
//! the same 256-bit width) [`four_pairs`] and [`four_walls`] run a second
//! version compiled for it (the `multiversion` crate picks one at the first
//! call by what the processor has; the binary still runs on AVX2 alone):
//! the same operations, so the same bits — the tests compare both versions
//! with the scalar law (on a processor without AVX-512 both are the
//! baseline). No 512-bit registers are used.
//!
//! Only what varies per sub-step for every contact is in lanes; the rolling
//! model must be `Tracked` (the legacy constant torque goes through the
//! scalar law), and the normal and spin models, the same for all contacts,
//! are branched on once.

use glam::DVec3;
use wide::{f64x4, u64x4, CmpEq, CmpGt, CmpLe, CmpLt};

use super::held::{self, Held};
use super::loads::{Context, Loads, PairConstants};
use super::normal::NormalModel;
use super::{PairCoefficients, SpinModel};
use crate::collision::{ContactGeom, NO_BODY};

type F = f64x4;

/// Contacts per batch.
pub(super) const N: usize = 4;

/// Four lanes of one number, read from the four contacts by `f`.
#[inline(always)]
fn lanes(f: impl Fn(usize) -> f64) -> F {
    F::new(std::array::from_fn(f))
}

/// Four contacts' [`Held::flags`] in lanes, to read masks from
/// ([`Flags::has`]) and to write them back ([`Flags::of`]).
#[derive(Clone, Copy)]
struct Flags(u64x4);

impl Flags {
    /// The flags of the four histories.
    #[inline(always)]
    fn gather(hist: &[&Held; N]) -> Self {
        Flags(u64x4::from(std::array::from_fn::<u64, N, _>(|l| {
            hist[l].flags
        })))
    }

    /// A mask: all bits set in the lanes whose flags have `bit`.
    #[inline(always)]
    fn has(self, bit: u64) -> F {
        let bit = u64x4::splat(bit);
        bytemuck::cast((self.0 & bit).cmp_eq(bit))
    }

    /// The flags with `bit` where the mask `m` is set, else none.
    #[inline(always)]
    fn of(m: F, bit: u64) -> Self {
        Flags(bytemuck::cast::<F, u64x4>(m) & u64x4::splat(bit))
    }

    /// Both sets of flags.
    #[inline(always)]
    fn or(self, o: Flags) -> Self {
        Flags(self.0 | o.0)
    }
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

/// `slide::carry`: a deflection turned into the plane normal to `n`,
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
/// must be `Tracked`. Two versions, picked at the first call (module docs,
/// "AVX-512").
#[multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx512dq+avx512bw+avx512cd"))]
pub(super) fn four_pairs(
    cx: &Context,
    at: [usize; N],
    pairs: &[(u32, u32)],
    constants: &[PairConstants],
    history: &mut [Held],
    loads: &mut [Loads],
) {
    pairs_law(cx, at, pairs, constants, history, loads)
}

/// [`four_pairs`]' body, inlined into each of its versions (the tests
/// also call it directly: the build's baseline features, no dispatch).
#[inline(always)]
fn pairs_law(
    cx: &Context,
    at: [usize; N],
    pairs: &[(u32, u32)],
    constants: &[PairConstants],
    history: &mut [Held],
    loads: &mut [Loads],
) {
    let ij: [(usize, usize); N] =
        std::array::from_fn(|l| (pairs[at[l]].0 as usize, pairs[at[l]].1 as usize));
    let b = cx.bodies;
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
    // loads::contact_loads: the ends' motion at the contact point.
    let omega_a = V::gather(|l| b.omega[ij[l].0]);
    let omega_b = V::gather(|l| b.omega[ij[l].1]);
    let ra = point.sub(xa);
    let ua = V::gather(|l| b.vel[ij[l].0]).add(omega_a.cross(ra));
    let rb = point.sub(xb);
    let ub = V::gather(|l| b.vel[ij[l].1]).add(omega_b.cross(rb));
    let ends = Ends {
        n,
        gap,
        point,
        ra,
        rb,
        ua,
        ub,
        omega_a,
        omega_b,
    };
    let pc = Coefficients::of(std::array::from_fn(|l| {
        cx.pair_of(b.material[ij[l].0], b.material[ij[l].1])
    }));
    let k: [&PairConstants; N] = std::array::from_fn(|l| &constants[at[l]]);
    let out = law(cx, &ends, k, &pc, std::array::from_fn(|l| &history[at[l]]));
    out.store(|l, h, loaded| {
        history[at[l]] = h;
        loads[at[l]] = loaded;
    });
}

/// The loads of four sphere–boundary contacts `walls` (as the general
/// detection gives them: B is no body) with their constants, into
/// `loads`, advancing their histories `history` (packed, [`Held`]) over
/// the sub-step: the scalar law's bits (module docs). The
/// rolling model must be `Tracked`. Two versions, as [`four_pairs`].
#[multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx512dq+avx512bw+avx512cd"))]
pub(super) fn four_walls(
    cx: &Context,
    walls: &[ContactGeom],
    constants: &[PairConstants; N],
    history: &mut [Held],
    loads: &mut [Loads],
) {
    walls_law(cx, walls, constants, history, loads)
}

/// [`four_walls`]' body, inlined into each of its versions (the tests
/// also call it directly: the build's baseline features, no dispatch).
#[inline(always)]
fn walls_law(
    cx: &Context,
    walls: &[ContactGeom],
    constants: &[PairConstants; N],
    history: &mut [Held],
    loads: &mut [Loads],
) {
    let b = cx.bodies;
    let c: [&ContactGeom; N] = std::array::from_fn(|l| &walls[l]);
    let a: [usize; N] = std::array::from_fn(|l| c[l].a as usize);
    debug_assert!(c.iter().all(|c| c.b == NO_BODY));
    // loads::contact_loads with B a boundary: B's surface moves with the
    // wall's velocity, turns with its angular velocity, and has no arm.
    let point = V::gather(|l| c[l].point);
    let omega_a = V::gather(|l| b.omega[a[l]]);
    let ra = point.sub(V::gather(|l| b.pos[a[l]]));
    let ua = V::gather(|l| b.vel[a[l]]).add(omega_a.cross(ra));
    let ends = Ends {
        n: V::gather(|l| c[l].normal),
        gap: lanes(|l| c[l].gap),
        point,
        ra,
        rb: V::ZERO,
        ua,
        ub: V::gather(|l| c[l].wall_velocity),
        omega_a,
        omega_b: V::gather(|l| c[l].wall_omega),
    };
    let pc = Coefficients::of(std::array::from_fn(|l| {
        cx.pair_of(b.material[a[l]], c[l].material_b)
    }));
    let k: [&PairConstants; N] = std::array::from_fn(|l| &constants[l]);
    let out = law(cx, &ends, k, &pc, std::array::from_fn(|l| &history[l]));
    out.store(|l, h, loaded| {
        history[l] = h;
        loads[l] = loaded;
    });
}

/// Four contacts' geometry and their ends' motion at the contact point, in
/// lanes (as `loads::contact_loads` names them).
struct Ends {
    /// The unit normal from A toward B.
    n: V,
    /// The signed gap (negative: overlap).
    gap: F,
    /// The contact point.
    point: V,
    /// The contact point from A's centre, and from B's (zero for a wall).
    ra: V,
    rb: V,
    /// A's and B's velocities at the contact point.
    ua: V,
    ub: V,
    /// A's and B's angular velocities.
    omega_a: V,
    omega_b: V,
}

/// The law's results for four contacts, in lanes: each contact's new
/// history and loads ([`Out::store`]).
struct Out {
    slide: V,
    theta_a: V,
    theta_b: V,
    phi: F,
    /// The four new histories' modes, and [`held::POINT`].
    flags: Flags,
    point: V,
    force_b: V,
    torque_a: V,
    torque_b: V,
}

impl Out {
    /// Hands each lane's new history and loads to `put(lane, …)`.
    #[inline(always)]
    fn store(self, mut put: impl FnMut(usize, Held, Loads)) {
        let (force_b, torque_a, torque_b) = (
            self.force_b.lanes(),
            self.torque_a.lanes(),
            self.torque_b.lanes(),
        );
        let (slide, theta_a, theta_b, point) = (
            self.slide.lanes(),
            self.theta_a.lanes(),
            self.theta_b.lanes(),
            self.point.lanes(),
        );
        let phi = self.phi.to_array();
        let flags = self.flags.0.to_array();
        for l in 0..N {
            let h = Held {
                slide: slide[l],
                roll: [theta_a[l], theta_b[l]],
                point: point[l],
                spin: phi[l],
                flags: flags[l],
            };
            let loaded = Loads {
                force_b: force_b[l],
                torque_a: torque_a[l],
                torque_b: torque_b[l],
            };
            put(l, h, loaded);
        }
    }
}

/// `loads::contact_loads` for four contacts with their ends `e`, constants
/// `k`, pair coefficients `pc` and histories at the start of the sub-step
/// `hist`: their new histories and loads.
#[inline(always)]
fn law(cx: &Context, e: &Ends, k: [&PairConstants; N], pc: &Coefficients, hist: [&Held; N]) -> Out {
    let settings = cx.settings;
    debug_assert_eq!(settings.rolling, super::RollingModel::Tracked);
    let (dt, inv_dt) = (F::splat(cx.dt), F::splat(cx.inv_dt));
    let Ends {
        n,
        gap,
        point,
        ra,
        rb,
        ua,
        ub,
        omega_a,
        omega_b,
    } = *e;
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
    let flags = Flags::gather(&hist);
    let slide_old = V::gather(|l| hist[l].slide);
    let slide_slipping = flags.has(held::SLIDE);
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
    let had_point = flags.has(held::POINT);
    let last = V::gather(|l| hist[l].point);
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
        V::gather(|l| hist[l].roll[0]),
        flags.has(held::ROLL_A),
        &springs,
        n,
        travel_a,
        kappa_a,
    );
    let (roll_b, theta_b, slips_b) = roll(
        springs_on,
        V::gather(|l| hist[l].roll[1]),
        flags.has(held::ROLL_B),
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
    let spin_slipping = flags.has(held::SPIN);
    let (spin, phi, spin_slips) = {
        let phi = lanes(|l| hist[l].spin) + dt * rate;
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
    let flags = Flags::of(slide_slips, held::SLIDE)
        .or(Flags::of(slips_a, held::ROLL_A))
        .or(Flags::of(slips_b, held::ROLL_B))
        .or(Flags::of(spin_slips, held::SPIN))
        .or(Flags(u64x4::splat(held::POINT)));
    Out {
        slide: slide_new,
        theta_a,
        theta_b,
        phi,
        flags,
        point,
        force_b: on_b,
        torque_a,
        torque_b,
    }
}

#[cfg(test)]
mod tests;
