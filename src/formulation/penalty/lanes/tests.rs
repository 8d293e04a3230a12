//! The lanes' law against the scalar law, bit for bit: sphere pairs and
//! sphere–boundary contacts.

use super::super::loads::contact_loads;
use super::super::{ContactHistory, PenaltySettings, PenaltyWorkspace, RollingModel};
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

/// A random history of a contact at `point`: fresh, or springs
/// sticking or slipping with deflections within and beyond their caps,
/// the last contact point near `point` or none.
fn random_history(draw: &mut Draw, point: DVec3) -> ContactHistory {
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
    h.point = (draw.next() < 0.9).then(|| point + draw.vec(moved));
    h
}

/// The three materials of the tests: the third switches every spring
/// off (K_E set to 0).
fn test_materials() -> Vec<Material> {
    vec![
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
    ]
}

/// The settings of each normal and spin model (rolling `Tracked`), each
/// with a workspace whose pair table is made for `materials`.
fn models(materials: &[Material]) -> Vec<(PenaltySettings, PenaltyWorkspace)> {
    let mut out = Vec::new();
    for normal in [NormalModel::Hertz, NormalModel::Hooke { stiffness: 2e4 }] {
        for spinning in [SpinModel::Heuristic, SpinModel::Hertz] {
            let settings = PenaltySettings {
                normal,
                spinning,
                rolling: RollingModel::Tracked,
                ..PenaltySettings::default()
            };
            let mut ws = PenaltyWorkspace::default();
            ws.refresh_pair_table(normal, materials);
            out.push((settings, ws));
        }
    }
    out
}

/// The law's context over the bodies `b`, at a sub-step of 10 µs.
fn context<'a>(
    b: &'a Bodies,
    materials: &'a [Material],
    ws: &'a PenaltyWorkspace,
    settings: &'a PenaltySettings,
) -> Context<'a> {
    let dt = 1e-5;
    Context {
        bodies: b,
        materials,
        pairs: &ws.pair_table,
        settings,
        dt,
        inv_dt: 1.0 / dt,
    }
}

/// A sphere far from the others, in random motion: a body no lane uses.
fn push_spare(b: &mut Bodies, draw: &mut Draw) {
    b.push(&SphereInit {
        pos: DVec3::new(0.0, 100.0, 0.0) + draw.vec(1.0),
        radius: 5e-3,
        mass: 1.0,
        inertia: 1e-5,
        vel: draw.vec(1.0),
        omega: draw.vec(100.0),
        material: random_material(draw),
    });
}

/// A random material of [`test_materials`], mostly the first.
fn random_material(draw: &mut Draw) -> u32 {
    match draw.next() {
        x if x < 0.7 => 0,
        x if x < 0.9 => 1,
        _ => 2,
    }
}

/// A version of [`four_pairs`].
type PairsLaw =
    fn(&Context, [usize; N], &[(u32, u32)], &[PairConstants], &mut [Held], &mut [Loads]);
/// A version of [`four_walls`].
type WallsLaw = fn(&Context, &[ContactGeom], &[PairConstants; N], &mut [Held], &mut [Loads]);

/// The dispatched version (AVX-512 where the processor has it) and the
/// baseline: both must give the scalar law's bits.
const PAIR_VERSIONS: [(&str, PairsLaw); 2] = [("dispatched", four_pairs), ("baseline", pairs_law)];
const WALL_VERSIONS: [(&str, WallsLaw); 2] = [("dispatched", four_walls), ("baseline", walls_law)];

/// The lanes' law gives the scalar law's bits on sphere–boundary
/// contacts as on pairs: random spheres against walls of random normal,
/// overlap (some touching only by rounding), surface velocity and
/// angular velocity (none for a still wall), with random histories, the
/// three materials on either end, under each normal and spin model.
#[test]
fn lanes_give_the_scalar_laws_bits_against_walls() {
    let materials = test_materials();
    let mut draw = Draw(13);
    let mut slipping = 0;
    for (settings, ws) in models(&materials) {
        let (normal, spinning) = (settings.normal, settings.spinning);
        for _ in 0..500 {
            let mut b = Bodies::default();
            let mut walls = Vec::new();
            for l in 0..N {
                // A body between the lanes' spheres: lane l's is body 2l + 1,
                // so a lane that read body l would read the wrong one.
                push_spare(&mut b, &mut draw);
                let r = draw.log(1e-3, 4e-3);
                let mass = SphereInit::solid_mass(r, 2500.0);
                let pos = DVec3::new(l as f64, 0.0, 0.0) + draw.vec(0.1);
                let a = b.push(&SphereInit {
                    pos,
                    radius: r,
                    mass,
                    inertia: SphereInit::solid_inertia(mass, r),
                    vel: draw.vec(0.1),
                    omega: draw.vec(50.0),
                    material: random_material(&mut draw),
                }) as u32;
                let normal = draw.vec(1.0).normalize();
                let gap = match draw.next() {
                    x if x < 0.05 => 0.0,
                    x if x < 0.1 => -f64::EPSILON * r,
                    _ => -draw.log(1e-8, 1e-4),
                };
                let moving = draw.next() < 0.5;
                walls.push(ContactGeom {
                    a,
                    b: NO_BODY,
                    key: collision::wall_key(a, l, 0),
                    normal,
                    point: pos + normal * (r + 0.5 * gap),
                    gap,
                    material_b: random_material(&mut draw),
                    wall_velocity: if moving { draw.vec(0.2) } else { DVec3::ZERO },
                    wall_omega: if moving { draw.vec(5.0) } else { DVec3::ZERO },
                    wall: l as u32,
                });
            }
            let cx = context(&b, &materials, &ws, &settings);
            let constants: [PairConstants; N] =
                std::array::from_fn(|l| PairConstants::of_contact(&cx, &walls[l]));
            let history: Vec<(u64, ContactHistory)> = walls
                .iter()
                .map(|c| (c.key, random_history(&mut draw, c.point)))
                .collect();
            let mut scalar = history.clone();
            let scalar_loads: Vec<Loads> = (0..N)
                .map(|l| contact_loads(&cx, &walls[l], &constants[l], &mut scalar[l].1))
                .collect();
            for (version, four) in WALL_VERSIONS {
                let mut held: Vec<Held> = history.iter().map(|h| h.1.into()).collect();
                let mut lane_loads = vec![Loads::default(); N];
                four(&cx, &walls, &constants, &mut held, &mut lane_loads);
                let lane_history: Vec<ContactHistory> = held.into_iter().map(Into::into).collect();
                for l in 0..N {
                    assert_eq!(
                        bits(&lane_history[l], &lane_loads[l]),
                        bits(&scalar[l].1, &scalar_loads[l]),
                        "{version}, {normal:?}, {spinning:?}, lane {l}: lanes {:?} {:?} vs \
                     scalar {:?} {:?}, from {:?}, contact {:?}",
                        lane_history[l],
                        lane_loads[l],
                        scalar[l],
                        scalar_loads[l],
                        history[l],
                        walls[l]
                    );
                }
            }
            slipping += scalar.iter().filter(|h| h.1.slide.slipping).count();
        }
    }
    assert!(
        slipping >= 500,
        "{slipping} lanes slid: the cases miss slipping"
    );
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
    let materials = test_materials();
    let mut draw = Draw(7);
    // Lanes where a spring stuck with a deflection after the sub-step,
    // where it slipped, and where it was off (no deflection, not
    // slipping): slide, roll A, roll B, spin.
    let mut modes = [[0usize; 3]; 4];
    for (settings, ws) in models(&materials) {
        let (normal, spinning) = (settings.normal, settings.spinning);
        for _ in 0..500 {
            let mut b = Bodies::default();
            let mut pairs = Vec::new();
            for l in 0..N {
                push_spare(&mut b, &mut draw);
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
                        material: random_material(&mut draw),
                    }) as u32
                });
                pairs.push((ids[0], ids[1]));
            }
            let cx = context(&b, &materials, &ws, &settings);
            let constants: Vec<PairConstants> = pairs
                .iter()
                .map(|&(i, j)| PairConstants::of_spheres(&cx, i as usize, j as usize))
                .collect();
            let history: Vec<ContactHistory> = pairs
                .iter()
                .map(|&(i, j)| {
                    let c = collision::sphere_pair(&b, i as usize, j as usize);
                    random_history(&mut draw, c.point)
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
            // The lanes' pairs at slots `at` of eight, the other slots
            // holding lane 0's pair with a history and loads of their own,
            // which must stay as they are.
            let at = [5, 2, 7, 0];
            let slots = 2 * N;
            let lane_of = |k: usize| at.iter().position(|&a| a == k);
            let store_pairs: Vec<(u32, u32)> =
                (0..slots).map(|k| pairs[lane_of(k).unwrap_or(0)]).collect();
            let store_constants: Vec<PairConstants> = (0..slots)
                .map(|k| constants[lane_of(k).unwrap_or(0)])
                .collect();
            let spare = random_history(&mut draw, DVec3::ZERO);
            for (version, four) in PAIR_VERSIONS {
                let mut lane_history: Vec<Held> = (0..slots)
                    .map(|k| lane_of(k).map_or(spare, |l| history[l]).into())
                    .collect();
                let spare_loads = Loads {
                    force_b: DVec3::splat(1.0),
                    ..Loads::default()
                };
                let mut lane_loads = vec![spare_loads; slots];
                four(
                    &cx,
                    at,
                    &store_pairs,
                    &store_constants,
                    &mut lane_history,
                    &mut lane_loads,
                );
                for k in (0..slots).filter(|&k| lane_of(k).is_none()) {
                    assert_eq!(
                        bits(&lane_history[k].into(), &lane_loads[k]),
                        bits(&spare, &spare_loads),
                        "slot {k}, in no lane, was written"
                    );
                }
                let lane_history: Vec<ContactHistory> =
                    at.iter().map(|&k| lane_history[k].into()).collect();
                let lane_loads: Vec<Loads> = at.iter().map(|&k| lane_loads[k]).collect();
                for l in 0..N {
                    assert_eq!(
                        bits(&lane_history[l], &lane_loads[l]),
                        bits(&scalar[l], &scalar_loads[l]),
                        "{version}, {normal:?}, {spinning:?}, lane {l}: lanes {:?} {:?} vs \
                     scalar {:?} {:?}, from {:?}",
                        lane_history[l],
                        lane_loads[l],
                        scalar[l],
                        scalar_loads[l],
                        history[l]
                    );
                }
            }
            for h in &scalar {
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
    for (what, [stuck, slipped, off]) in ["slide", "roll A", "roll B", "spin"].iter().zip(modes) {
        assert!(
            stuck >= 200 && slipped >= 200 && off >= 200,
            "{what}: {stuck} lanes stuck, {slipped} slipped, {off} off: \
             the cases miss a mode"
        );
    }
}
