// Projected Jacobi iteration for the 6-D cone complementarity problem
// (Tasora & Anitescu 2013, eq. 46), in f32, for one or many worlds at once.
// Pairs with src/gpu/jacobi/mod.rs; the structs mirror src/solver/packed.rs and
// src/gpu/jacobi/records.rs, and src/solver/jacobi_f32.rs is the CPU mirror of every
// function here, operation for operation.
//
// One iteration = two dispatches:
//   contact_pass: per contact, twist y = Dᵀv + b from the current body
//                 velocities, scaled step, exact cone projection, relaxation;
//                 writes γ and the velocity M⁻¹ D_end γ it gives each end
//                 into that end's own slot.
//   body_pass:    per body, v = v_free + its contiguous slots in CSR order.
// Velocities are rebuilt from the whole impulses every iteration, never
// accumulated from increments: an f32 increment below half an ulp of |v|
// would be lost, and the losses would build up with the iteration count
// (src/solver/jacobi_f32.rs, module docs).
// No atomics on floats, fixed summation order: deterministic run to run.
// At each residual check (every `check_every` iterations, when a tolerance
// is set) and at a world's iteration cap, residual_pass + finalize reduce
// each world's natural-map residual on the GPU and mark the world done;
// once every world is done, finalize zeroes the indirect dispatch sizes and
// later passes launch no workgroups (no host readback in the loop).
//
// Worlds (a batch): each world's contacts and bodies occupy their own
// ranges, each starting at a multiple of the workgroup size, so that every
// workgroup belongs to one world (`groups` maps workgroups to worlds) and a
// world's residual partial sums are its own. A world's arithmetic is the
// same whether it runs alone or in a batch: the same records, the same
// operations, the same reduction tree. A done world's threads return at
// once, so its state stops changing while the others go on.
//
// APGD (params.method = 1; src/solver/jacobi_f32.rs `solve_apgd` is its
// mirror): the iterate x lives in the first halves of `gamma` and `bodies`
// (γ and V(x)), the extrapolated point v in the second halves (from
// n_contacts and n_bodies). One iteration = apgd_contact_pass (β from θ;
// x' = Π(v − ωBŷ(v)), v' = x' + β(x' − x), slots M⁻¹Dx') +
// apgd_body_pass (V(x') = v_free + slots, V(v') = V(x') + β(V(x') − V(x))).
// θ lives in two places per world, read at the iteration's parity and
// written at the other, so no thread reads what another writes within a
// dispatch. finalize restarts (θ = 1) when the residual grew since the
// previous check.
//
// Shapes: a world with tensors = 1 has world inverse inertia tensors in the
// third region of `bodies` (from 2 n_bodies), applied by the body passes to
// the summed angular impulses (gather_slots, apply_inertia). The fourth
// region (from 3 n_bodies) holds the free velocities v_free.
//
// Memory layout: γ and the slots are vec4 arrays (two vec4 per 6-vector),
// and each contact loads its two body records once. Mesa's lavapipe turns
// every storage load or store into a loop over the SIMD lanes, so the number
// of accesses, not the bytes, sets its speed.

const WG: u32 = 256u;
const RWG: u32 = 256u;
const NONE: u32 = 0xffffffffu;

struct Params {
    n_contacts: u32,   // contacts of all worlds, with the padding between them
    n_bodies: u32,     // bodies likewise
    n_worlds: u32,
    check_every: u32,
    method: u32,       // 0 = projected Jacobi, 1 = APGD (restart at residual checks)
    contact_groups: u32, // workgroups over the contacts (the bodies' follow in `groups`)
    pad0: u32,
    pad1: u32,
}

// One world of the batch: its ranges and its settings.
struct World {
    contact_start: u32,
    contact_end: u32,
    body_start: u32,
    body_end: u32,
    partial_start: u32,
    partial_end: u32,
    max_iterations: u32,
    law: u32,          // 0 = associated, 1 = De Saxcé (ŷ = y + g(y))
    weighted: u32,     // residual: 1 = weighted by b_f (impulses), 0 = unweighted
    tensors: u32,      // 1 = inverse inertia tensors in the third body region (shapes)
    omega: f32,
    lambda: f32,
    tolerance: f32,    // relative residual tolerance (0 = none)
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

struct Contact {
    n: vec4<f32>,      // normal (A → B), μ
    u: vec4<f32>,      // tangent u, ρ; w = n × u
    arm_a: vec4<f32>,  // s_A, b_f
    arm_b: vec4<f32>,  // s_B, b_t
    bias: vec4<f32>,   // (b_n, b_u, b_w), σ
    ids: vec4<u32>,    // body_a, body_b (NONE = wall), slot_a, slot_b
}

struct Body {
    v: vec4<f32>,      // velocity, 1/m
    w: vec4<f32>,      // angular velocity (world), 1/I
}

// One world's loop control and result.
struct Control {
    done: u32,
    checks: u32,
    iterations: u32,
    converged: u32,
    residual_abs: f32,
    residual_rel: f32,
    gamma_norm: f32,
    y_norm: f32,
    theta0: f32,       // APGD: Nesterov's θ_k at even k (1 at the start and after a restart)
    theta1: f32,       // APGD: θ_k at odd k
    beta: f32,         // APGD: the momentum β_k of the current iteration
    last_rel: f32,     // APGD: the relative residual of the previous check
}

// The batch's own state.
struct Batch {
    clock: u32,              // iterations performed by the batch (body_pass counts)
    remaining: atomic<u32>,  // worlds not yet done
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> contacts: array<Contact>;
@group(0) @binding(2) var<storage, read_write> bodies: array<Body>;
@group(0) @binding(3) var<storage, read_write> gamma: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> slots: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> offsets: array<u32>;
@group(0) @binding(6) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> control: array<Control>;
@group(0) @binding(8) var<storage, read> worlds: array<World>;
// The world of each contact workgroup, then of each body workgroup.
@group(0) @binding(9) var<storage, read> groups: array<u32>;
@group(0) @binding(10) var<storage, read_write> batch: Batch;
// Indirect dispatch arguments of contact_pass, body_pass and residual_pass
// (three (x, y, z) triples). finalize zeroes them once every world is done,
// so the rest of the encoded loop launches no work at all. Bound only for
// finalize (group 1), never while the dispatches read them.
@group(1) @binding(0) var<storage, read_write> indirect: array<u32, 9>;

struct V6 {
    f: vec3<f32>,
    t: vec3<f32>,
}

// Exact Euclidean projection onto { μ x_n ≥ |(x_u, x_w)|, ρ x_n ≥ |(t_u, t_w)|,
// σ x_n ≥ |t_n| } by the closed form of Tasora & Anitescu 2013, App. C /
// Acary & Bourrier 2021, Prop. 5.2:
// block k (sliding μ, spinning σ, rolling ρ) is saturated iff
// φ_k = n_k − μ_k x₀ + Σ_{j≠k} μ_j min(μ_j n_k − μ_k n_j, 0) > 0, and then
// y₀ = (x₀ + Σ_sat μ_k n_k) / (1 + Σ_sat μ_k²); saturated blocks are scaled to
// length μ_k y₀. The input is prescaled by a power of two (exact).
fn project(x: V6, mu: f32, rho: f32, sigma: f32) -> V6 {
    let m = max(max(max(abs(x.f.x), abs(x.f.y)), max(abs(x.f.z), abs(x.t.x))), max(abs(x.t.y), abs(x.t.z)));
    if (m == 0.0) {
        return V6(vec3<f32>(0.0), vec3<f32>(0.0));
    }
    let e = frexp(m).exp;
    let s = ldexp(1.0, -e);
    let inv = ldexp(1.0, e);
    let x0 = x.f.x * s;
    let gu = x.f.y * s;
    let gw = x.f.z * s;
    let tn = x.t.x * s;
    let tu = x.t.y * s;
    let tw = x.t.z * s;
    let c = array<f32, 3>(mu, sigma, rho);
    let n = array<f32, 3>(sqrt(gu * gu + gw * gw), abs(tn), sqrt(tu * tu + tw * tw));
    var num = x0;
    var den = 1.0;
    for (var k = 0u; k < 3u; k++) {
        var phi = n[k] - c[k] * x0;
        for (var j = 0u; j < 3u; j++) {
            if (j != k) {
                phi += c[j] * min(c[j] * n[k] - c[k] * n[j], 0.0);
            }
        }
        if (phi > 0.0) {
            num += c[k] * n[k];
            den += c[k] * c[k];
        }
    }
    var y0 = 0.0;
    if (num > 0.0) {
        y0 = num / den;
    }
    let t0 = shrink(c[0] * y0, n[0]) * inv;
    let t1 = shrink(c[1] * y0, n[1]) * inv;
    let t2 = shrink(c[2] * y0, n[2]) * inv;
    return V6(vec3<f32>(y0 * inv, gu * t0, gw * t0), vec3<f32>(tn * t1, tu * t2, tw * t2));
}

fn shrink(a: f32, n: f32) -> f32 {
    if (a < n) {
        return a / n;
    }
    return 1.0;
}

fn load_gamma(i: u32) -> V6 {
    let a = gamma[2u * i];
    let b = gamma[2u * i + 1u];
    return V6(a.xyz, vec3<f32>(a.w, b.xy));
}

// γ of contact i is two vec4s (f, t_n) and (t_u, t_w, 0, 0): on software
// drivers every storage access costs a per-lane loop, so two vector accesses
// beat six scalar ones (the 8 bytes of padding are cheaper than the loops).
fn store_gamma(i: u32, f: vec3<f32>, t: vec3<f32>) {
    gamma[2u * i] = vec4<f32>(f, t.x);
    gamma[2u * i + 1u] = vec4<f32>(t.yz, 0.0, 0.0);
}

// The two ends' body records, loaded once per contact (a wall end reads as
// zero velocity and zero inverse mass).
struct Ends {
    a: Body,
    b: Body,
}

fn load_ends(c: Contact) -> Ends {
    return load_ends_at(c, 0u);
}

// The ends' records from the half of `bodies` that starts at `base`.
fn load_ends_at(c: Contact, base: u32) -> Ends {
    var e = Ends(bodies[base + c.ids.x], Body(vec4<f32>(0.0), vec4<f32>(0.0)));
    if (c.ids.y != NONE) {
        e.b = bodies[base + c.ids.y];
    }
    return e;
}

// Twist y = Dᵀv + b: velocity of B relative to A at the contact point, and
// relative angular velocity, in the frame (n, u, w).
fn twist(c: Contact, e: Ends) -> V6 {
    let n = c.n.xyz;
    let u = c.u.xyz;
    let w = cross(n, u);
    let vrel = e.b.v.xyz + cross(e.b.w.xyz, c.arm_b.xyz) - (e.a.v.xyz + cross(e.a.w.xyz, c.arm_a.xyz));
    let wrel = e.b.w.xyz - e.a.w.xyz;
    return V6(vec3<f32>(dot(n, vrel) + c.bias.x, dot(u, vrel) + c.bias.y, dot(w, vrel) + c.bias.z),
              vec3<f32>(dot(n, wrel), dot(u, wrel), dot(w, wrel)));
}

// The velocity the law pairs with γ: y itself (associated, law 0) or, for
// De Saxcé, ŷ = y + (μ‖y_T‖ + σ|y_s| + ρ‖y_R‖, 0, …) (Acary & Bourrier 2021,
// eq. 63 + spin).
fn law_velocity(y: V6, c: Contact, law: u32) -> V6 {
    if (law == 0u) {
        return y;
    }
    let g = c.n.w * length(y.f.yz) + c.bias.w * abs(y.t.x) + c.u.w * length(y.t.yz);
    return V6(vec3<f32>(y.f.x + g, y.f.y, y.f.z), y.t);
}

fn flat_index(gid: vec3<u32>, nwg: vec3<u32>, wg: u32) -> u32 {
    return gid.x + gid.y * nwg.x * wg;
}

// The world of contact i (contact workgroups first in `groups`).
fn contact_world(i: u32) -> u32 {
    return groups[i / WG];
}

// The world of body k (body workgroups after the contacts' in `groups`).
fn body_world(k: u32) -> u32 {
    return groups[params.contact_groups + k / WG];
}

@compute @workgroup_size(WG)
fn contact_pass(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_index(gid, nwg, WG);
    if (i >= params.n_contacts) {
        return;
    }
    let wi = contact_world(i);
    let wd = worlds[wi];
    if (i >= wd.contact_end || control[wi].done != 0u) {
        return;
    }
    let c = contacts[i];
    let g = load_gamma(i);
    let e = load_ends(c);
    // x = Π(γ − ω B ŷ); torque rows scaled by r = √(b_f/b_t) for the
    // B⁻¹-metric projection (projected_step).
    let p = projected_step(c, g, law_velocity(twist(c, e), c, wd.law), wd.omega);
    let lam = wd.lambda;
    let gn = V6(lam * p.f + (1.0 - lam) * g.f, lam * p.t + (1.0 - lam) * g.t);
    store_gamma(i, gn.f, gn.t);
    write_slots(c, e, gn);
}

// The velocity M⁻¹ D_end γ that impulse γ gives each end, into the end's
// own slot.
fn write_slots(c: Contact, e: Ends, d: V6) {
    let n = c.n.xyz;
    let u = c.u.xyz;
    let w = cross(n, u);
    let f = n * d.f.x + u * d.f.y + w * d.f.z;
    let t = n * d.t.x + u * d.t.y + w * d.t.z;
    slots[2u * c.ids.z] = vec4<f32>(f * (-e.a.v.w), 0.0);
    slots[2u * c.ids.z + 1u] = vec4<f32>((cross(c.arm_a.xyz, f) + t) * (-e.a.w.w), 0.0);
    if (c.ids.y != NONE) {
        slots[2u * c.ids.w] = vec4<f32>(f * e.b.v.w, 0.0);
        slots[2u * c.ids.w + 1u] = vec4<f32>((cross(c.arm_b.xyz, f) + t) * e.b.w.w, 0.0);
    }
}

// The projected step x = Π(g − ω B ŷ) (in the metric B⁻¹) of contact c.
fn projected_step(c: Contact, g: V6, y: V6, omega: f32) -> V6 {
    let bf = c.arm_a.w;
    let bt = c.arm_b.w;
    let r = sqrt(bf / bt);
    let sf = omega * bf;
    let st = omega * bt;
    let x = V6(g.f - sf * y.f, (g.t - st * y.t) * r);
    var p = project(x, c.n.w, c.u.w * r, c.bias.w * r);
    p.t = p.t / r;
    return p;
}

// APGD: Nesterov's θ_k of world wi at iteration k (the batch clock).
fn apgd_theta(wi: u32, k: u32) -> f32 {
    if ((k & 1u) == 0u) {
        return control[wi].theta0;
    }
    return control[wi].theta1;
}

@compute @workgroup_size(WG)
fn apgd_contact_pass(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_index(gid, nwg, WG);
    if (i >= params.n_contacts) {
        return;
    }
    let wi = contact_world(i);
    let wd = worlds[wi];
    if (i >= wd.contact_end || control[wi].done != 0u) {
        return;
    }
    // β_k from θ_k, the same in every thread; the world's first contact
    // keeps β_k for the body pass and θ_{k+1} for the next iteration, in
    // places no thread of this dispatch reads.
    let k = batch.clock;
    let th = apgd_theta(wi, k);
    let next = 0.5 * th * (sqrt(th * th + 4.0) - th);
    let beta = th * (1.0 - th) / (th * th + next);
    if (i == wd.contact_start) {
        control[wi].beta = beta;
        if ((k & 1u) == 0u) {
            control[wi].theta1 = next;
        } else {
            control[wi].theta0 = next;
        }
    }
    let c = contacts[i];
    let v = load_gamma(params.n_contacts + i);
    let e = load_ends_at(c, params.n_bodies);
    let xn = projected_step(c, v, law_velocity(twist(c, e), c, wd.law), wd.omega);
    let x = load_gamma(i);
    store_gamma(i, xn.f, xn.t);
    store_gamma(params.n_contacts + i, xn.f + beta * (xn.f - x.f), xn.t + beta * (xn.t - x.t));
    write_slots(c, e, xn);
}

@compute @workgroup_size(WG)
fn apgd_body_pass(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = flat_index(gid, nwg, WG);
    if (k == 0u) {
        batch.clock += 1u;
    }
    if (k >= params.n_bodies) {
        return;
    }
    let wi = body_world(k);
    let wd = worlds[wi];
    if (k >= wd.body_end || control[wi].done != 0u) {
        return;
    }
    let d = gather_slots(k, wd.tensors);
    let bx = bodies[k];
    let bf = bodies[3u * params.n_bodies + k];
    let xl = bf.v.xyz + d.f;
    let xa = bf.w.xyz + d.t;
    let beta = control[wi].beta;
    bodies[k] = Body(vec4<f32>(xl, bf.v.w), vec4<f32>(xa, bf.w.w));
    bodies[params.n_bodies + k] = Body(vec4<f32>(xl + beta * (xl - bx.v.xyz), bf.v.w),
                                       vec4<f32>(xa + beta * (xa - bx.w.xyz), bf.w.w));
}

@compute @workgroup_size(WG)
fn body_pass(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = flat_index(gid, nwg, WG);
    if (k == 0u) {
        batch.clock += 1u;
    }
    if (k >= params.n_bodies) {
        return;
    }
    let wi = body_world(k);
    let wd = worlds[wi];
    if (k >= wd.body_end || control[wi].done != 0u) {
        return;
    }
    let d = gather_slots(k, wd.tensors);
    let f = bodies[3u * params.n_bodies + k];
    bodies[k] = Body(vec4<f32>(f.v.xyz + d.f, f.v.w), vec4<f32>(f.w.xyz + d.t, f.w.w));
}

// Body k's contact velocity: its contiguous slots added in CSR order. With
// tensors (scenes with shapes) the angular slots hold impulses (the
// records' 1/I is 1) and the sum goes through I⁻¹.
fn gather_slots(k: u32, tensors: u32) -> V6 {
    var dl = vec3<f32>(0.0);
    var da = vec3<f32>(0.0);
    for (var s = offsets[k]; s < offsets[k + 1u]; s++) {
        dl += slots[2u * s].xyz;
        da += slots[2u * s + 1u].xyz;
    }
    if (tensors != 0u) {
        da = apply_inertia(k, da);
    }
    return V6(dl, da);
}

// I⁻¹ t for body k: the symmetric world inverse inertia stored after the
// two halves of body records, v = (xx, yy, zz, 0), w = (xy, xz, yz, 0)
// (src/solver/packed.rs `PackedInertia::apply`, in the same order).
fn apply_inertia(k: u32, t: vec3<f32>) -> vec3<f32> {
    let m = bodies[2u * params.n_bodies + k];
    let d = m.v.xyz;
    let o = m.w.xyz;
    return vec3<f32>(d.x * t.x + o.x * t.y + o.y * t.z,
                     o.x * t.x + d.y * t.y + o.z * t.z,
                     o.y * t.x + o.z * t.y + d.z * t.z);
}

var<workgroup> red: array<vec4<f32>, 256>;

// Per contact, weighted (c = b_f, the contact's effective mass):
// (‖γ − Π(γ − c ŷ)‖², ‖γ‖², ‖c ŷ‖²); unweighted: (‖γ − Π(γ − ŷ)‖², ‖γ‖², ‖y‖²).
// Weighting makes c ŷ an impulse like γ, so fast contacts elsewhere cannot
// hide a stale impulse (src/solver/mod.rs `weighted_residual`).
fn residual_terms(c: Contact, g: V6, y: V6, wd: World) -> vec4<f32> {
    // cy = c ŷ (weighted) or ŷ; s = the velocity-side scale term.
    var cy = law_velocity(y, c, wd.law);
    var s = y;
    if (wd.weighted != 0u) {
        cy = V6(c.arm_a.w * cy.f, c.arm_a.w * cy.t);
        s = cy;
    }
    let p = project(V6(g.f - cy.f, g.t - cy.t), c.n.w, c.u.w, c.bias.w);
    let ef = g.f - p.f;
    let et = g.t - p.t;
    return vec4<f32>(dot(ef, ef) + dot(et, et), dot(g.f, g.f) + dot(g.t, g.t), dot(s.f, s.f) + dot(s.t, s.t), 0.0);
}

// Per contact residual_terms, reduced per workgroup into `partials` (one
// per workgroup; a workgroup's contacts are all of one world). Done worlds
// contribute nothing (finalize reads only the worlds still running).
@compute @workgroup_size(RWG)
fn residual_pass(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = flat_index(gid, nwg, RWG);
    var acc = vec4<f32>(0.0);
    if (i < params.n_contacts) {
        let wi = contact_world(i);
        let wd = worlds[wi];
        if (i < wd.contact_end && control[wi].done == 0u) {
            let c = contacts[i];
            acc = residual_terms(c, load_gamma(i), twist(c, load_ends(c)), wd);
        }
    }
    tree_reduce(li, acc);
    if (li == 0u) {
        partials[wid.x + wid.y * nwg.x] = red[0];
    }
}

// Workgroup tree reduction: every invocation contributes `acc`; the sum ends
// in red[0]. Called from uniform control flow only (it has barriers).
fn tree_reduce(li: u32, acc: vec4<f32>) {
    red[li] = acc;
    workgroupBarrier();
    for (var s = RWG / 2u; s > 0u; s = s / 2u) {
        if (li < s) {
            red[li] += red[li + s];
        }
        workgroupBarrier();
    }
}

// Sums world wd's partials (one workgroup) into red[0], in the same order
// for a world alone and in a batch (indices relative to its first partial).
fn reduce_partials(li: u32, wd: World) {
    var acc = vec4<f32>(0.0);
    for (var q = wd.partial_start + li; q < wd.partial_end; q += RWG) {
        acc += partials[q];
    }
    tree_reduce(li, acc);
}

// Writes the residual of world wi from its sums; whether it meets `tolerance`.
fn record(wi: u32, sums: vec4<f32>, tolerance: f32) -> bool {
    let abs_res = sqrt(sums.x);
    let gn = sqrt(sums.y);
    let yn = sqrt(sums.z);
    let scale = max(gn, yn);
    var rel = abs_res;
    if (scale > 1.1920929e-7) {
        rel = abs_res / scale;
    }
    // An overflowed sum (a diverging solve) is never converged: infinite
    // or NaN sums fail these comparisons.
    if (!(abs_res <= 3.4028235e38 && scale <= 3.4028235e38)) {
        rel = 3.4028235e38;
    }
    control[wi].residual_abs = abs_res;
    control[wi].residual_rel = rel;
    control[wi].gamma_norm = gn;
    control[wi].y_norm = yn;
    return rel <= tolerance;
}

// World wi is done: once the last world is, the loop's indirect sizes are
// zeroed and the rest of the encoded iterations launch nothing.
fn finish_world(wi: u32) {
    control[wi].done = 1u;
    if (atomicSub(&batch.remaining, 1u) == 1u) {
        for (var q = 0u; q < 9u; q++) {
            indirect[q] = 0u;
        }
    }
}

// One workgroup per world, after iteration k = batch.clock (the host
// encodes it at each residual check and at each world's cap): at the
// world's cap the final residual (the world is done, converged or not); at a
// check, stop the world if its tolerance is met, else (APGD) restart when
// the residual grew since the previous check. Other worlds' caps pass by.
@compute @workgroup_size(RWG)
fn finalize(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let wi = wid.x;
    let wd = worlds[wi];
    reduce_partials(li, wd);
    if (li != 0u || control[wi].done != 0u) {
        return;
    }
    let k = batch.clock;
    if (k == wd.max_iterations) {
        control[wi].iterations = k;
        if (record(wi, red[0], wd.tolerance)) {
            control[wi].converged = 1u;
        }
        finish_world(wi);
    } else if (wd.tolerance > 0.0 && k % params.check_every == 0u) {
        control[wi].checks += 1u;
        if (record(wi, red[0], wd.tolerance)) {
            control[wi].converged = 1u;
            control[wi].iterations = k;
            finish_world(wi);
        } else if (params.method == 1u) {
            // APGD restart: the residual grew since the previous check.
            if (control[wi].residual_rel > control[wi].last_rel) {
                if ((k & 1u) == 0u) {
                    control[wi].theta0 = 1.0;
                } else {
                    control[wi].theta1 = 1.0;
                }
            }
            control[wi].last_rel = control[wi].residual_rel;
        }
    }
}
