// Contact assembly on the device (repose::gpu::assemble): from the
// detected contact list (shaders/collide.wgsl) to the solver's contact
// records (shaders/jacobi.wgsl `Contact`) and the body -> contact-end
// index, what repose::problem::ContactProblem::assemble and
// repose::solver::packed::pack build on the CPU.
//
//   count_ends     per contact: ends[a] += 1, ends[b] += 1 (integer atomics)
//   (scan)         ends[0..=bodies] -> each body's first slot, ends[bodies]
//                  the number of ends
//   fill_ends      per contact: its ends into their bodies' runs, in
//                  whatever order the atomics give
//   sort_ends      per body: its run sorted ascending (slot = 2 contact +
//                  end), the order ContactProblem::build_csr gives: the
//                  index is the same whatever the atomics did
//   index_ends     per slot position p: slot_of[slots[p]] = p
//   pack_contacts  per contact: frame, lever arms, cone, bias, Jacobi
//                  step scales and the two ends' slots
//
// Integer atomics only, so every run gives the same bits.

// NONE, Contact, Packed and AsmBody: shaders/records.wgsl, compiled in front of this file.
const WG: u32 = 256u;

struct AssembleParams {
    contacts: u32,
    bodies: u32,
    // Workgroups per row of the dispatch grid.
    row: u32,
    _pad0: u32,
    // Step (s) and the largest speed the stabilisation pushes apart at (m/s).
    h: f32,
    max_recovery: f32,
    _pad1: u32,
    _pad2: u32,
}

// One boundary (repose::gpu::assemble::AssembleWall): its surface velocity
// (a boundary that only translates: the same at every point) and material.
struct Wall {
    velocity: vec3<f32>,
    material: u32,
}

@group(0) @binding(0) var<uniform> params: AssembleParams;
@group(0) @binding(1) var<storage, read> contacts: array<Contact>;
@group(0) @binding(2) var<storage, read> bodies: array<AsmBody>;
// Friction, rolling and spinning coefficients of each material (xyz).
@group(0) @binding(3) var<storage, read> materials: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> walls: array<Wall>;
// Per body its number of ends, then (scanned) its first slot, and one
// more for the total; then per body a fill cursor.
@group(0) @binding(5) var<storage, read_write> ends: array<atomic<u32>>;
// The slots (2 contact + end) by body, then slot_of: each slot's position.
@group(0) @binding(6) var<storage, read_write> slots: array<u32>;
@group(0) @binding(7) var<storage, read_write> packed: array<Packed>;

fn thread(gid: vec3<u32>) -> u32 {
    return gid.x + gid.y * params.row * WG;
}

@compute @workgroup_size(WG)
fn count_ends(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = thread(gid);
    if i >= params.contacts {
        return;
    }
    let c = contacts[i];
    atomicAdd(&ends[c.a], 1u);
    if c.b != NONE {
        atomicAdd(&ends[c.b], 1u);
    }
}

@compute @workgroup_size(WG)
fn fill_ends(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = thread(gid);
    if i >= params.contacts {
        return;
    }
    let c = contacts[i];
    let cursor = params.bodies + 1u;
    slots[atomicLoad(&ends[c.a]) + atomicAdd(&ends[cursor + c.a], 1u)] = 2u * i;
    if c.b != NONE {
        slots[atomicLoad(&ends[c.b]) + atomicAdd(&ends[cursor + c.b], 1u)] = 2u * i + 1u;
    }
}

@compute @workgroup_size(WG)
fn sort_ends(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = thread(gid);
    if k >= params.bodies {
        return;
    }
    let lo = atomicLoad(&ends[k]);
    let hi = atomicLoad(&ends[k + 1u]);
    // Insertion sort: a body's run is short (its contacts).
    for (var p = lo + 1u; p < hi; p++) {
        let s = slots[p];
        var q = p;
        while q > lo && slots[q - 1u] > s {
            slots[q] = slots[q - 1u];
            q -= 1u;
        }
        slots[q] = s;
    }
}

@compute @workgroup_size(WG)
fn index_ends(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = thread(gid);
    if p >= atomicLoad(&ends[params.bodies]) {
        return;
    }
    slots[2u * params.contacts + slots[p]] = p;
}

// The orthonormal frame [n, u, w] of repose::problem::tangent_frame
// (Duff et al. 2017), in f32: u and w.
fn tangents(n: vec3<f32>) -> array<vec3<f32>, 2> {
    // copysign(1, n.z): -0 has the sign bit, as on the CPU.
    let sign = select(1.0, -1.0, (bitcast<u32>(n.z) & 0x80000000u) != 0u);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    let u = vec3<f32>(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x);
    let w = vec3<f32>(b, sign + n.y * n.y * a, -n.y);
    return array<vec3<f32>, 2>(u, w);
}

fn count_of(k: u32) -> f32 {
    return f32(atomicLoad(&ends[k + 1u]) - atomicLoad(&ends[k]));
}

@compute @workgroup_size(WG)
fn pack_contacts(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = thread(gid);
    if i >= params.contacts {
        return;
    }
    let c = contacts[i];
    let ba = bodies[c.a];
    let t = tangents(c.normal);
    let arm_a = c.point - ba.pos;
    var arm_b = vec3<f32>(0.0);
    var mat_b = 0u;
    var v_wall = vec3<f32>(0.0);
    // Jacobi step scales (repose::problem::BodyDelassus::jacobi_scales):
    // l2 the mean squared arm of the contact's ends, then
    // b_f = 1 / sum over ends of count (1/m + 1/I (|s|^2 + l2)).
    let sa2 = dot(arm_a, arm_a);
    var l2 = sa2;
    var slot_b = NONE;
    if c.b != NONE {
        let bb = bodies[c.b];
        arm_b = c.point - bb.pos;
        mat_b = bb.material;
        l2 = (sa2 + dot(arm_b, arm_b)) / 2.0;
        slot_b = slots[2u * params.contacts + 2u * i + 1u];
    } else {
        let w = walls[c.wall];
        mat_b = w.material;
        v_wall = w.velocity;
    }
    var denom = count_of(c.a) * (ba.inv_mass + ba.inv_inertia * (sa2 + l2));
    if c.b != NONE {
        let bb = bodies[c.b];
        denom += count_of(c.b) * (bb.inv_mass + bb.inv_inertia * (dot(arm_b, arm_b) + l2));
    }
    let bf = 1.0 / denom;
    let bt = select(bf, bf * l2, l2 > 0.0);
    let ma = materials[ba.material].xyz;
    let mb = materials[mat_b].xyz;
    let cone = min(ma, mb);
    let stab = max(c.gap / params.h, -params.max_recovery);
    var r: Packed;
    r.n = vec4<f32>(c.normal, cone.x);
    r.u = vec4<f32>(t[0], cone.y);
    r.arm_a = vec4<f32>(arm_a, bf);
    r.arm_b = vec4<f32>(arm_b, bt);
    r.bias = vec4<f32>(
        stab + dot(c.normal, v_wall),
        dot(t[0], v_wall),
        dot(t[1], v_wall),
        cone.z,
    );
    r.ids = vec4<u32>(c.a, c.b, slots[2u * params.contacts + 2u * i], slot_b);
    packed[i] = r;
}
