// Bodies before and after the solve, on the device (repose::gpu::integrate):
// the solver's body records from the state and the starting impulses, and
// the next state from the final impulses, what
// repose::solver::packed::pack and repose::formulation::complementarity::finish
// do on the CPU (spheres).
//
//   body_records  per body: v_free = v + h g, w_free = w; the records
//                 (v_free, 1/m), (w_free, 1/I) and v_free + M^-1 D gamma0
//   integrate     per body: v+ = v_free + M^-1 D gamma from the final
//                 impulses (not the solver's accumulated records), then
//                 x+ = x + h v+ (in 64-bit fixed point) and
//                 q+ = exp(h w+ / 2) q, renormalised; a body whose new
//                 velocity is not finite is flagged (the smallest such
//                 index) and the host keeps the state it came from
//
// M^-1 D gamma is gathered per body over its contact-end slots in their
// fixed order: end A gets -(F, s_A x F + T), end B +(F, s_B x F + T),
// F = g_n n + g_u u + g_w w, T = t_n n + t_u u + t_w w, w = n x u.

// NONE, Contact, Packed and BodyState: shaders/records.wgsl, compiled in front of this file.
const WG: u32 = 256u;

struct IntegrateParams {
    bodies: u32,
    contacts: u32,
    // Workgroups per row of the dispatch grid.
    row: u32,
    _pad0: u32,
    // Gravity (m/s^2, xyz) and the step h (s, w).
    gravity: vec4<f32>,
}

// As shaders/jacobi.wgsl `Body`.
struct Body {
    v: vec4<f32>,
    w: vec4<f32>,
}

@group(0) @binding(0) var<uniform> params: IntegrateParams;
@group(0) @binding(1) var<storage, read> packed: array<Packed>;
// Impulses, two vec4 per contact (shaders/jacobi.wgsl).
@group(0) @binding(2) var<storage, read> gamma: array<vec4<f32>>;
// Body k's slots are slots[ends[k] .. ends[k + 1]] (shaders/assemble.wgsl).
@group(0) @binding(3) var<storage, read> ends: array<u32>;
@group(0) @binding(4) var<storage, read> slots: array<u32>;
@group(0) @binding(5) var<storage, read> state: array<BodyState>;
// integrate: the next state; body_records: 2 x bodies `Body` records
// (start, then free), as shaders/jacobi.wgsl reads them.
@group(0) @binding(6) var<storage, read_write> next: array<BodyState>;
@group(0) @binding(7) var<storage, read_write> records: array<Body>;
// The smallest index of a body whose new velocity is not finite (NONE).
@group(0) @binding(8) var<storage, read_write> status: array<atomic<u32>>;

fn thread(gid: vec3<u32>) -> u32 {
    return gid.x + gid.y * params.row * WG;
}

// (linear, angular) impulse body k receives from the impulses.
fn gather(k: u32) -> array<vec3<f32>, 2> {
    var dl = vec3<f32>(0.0);
    var da = vec3<f32>(0.0);
    for (var p = ends[k]; p < ends[k + 1u]; p++) {
        let s = slots[p];
        let i = s >> 1u;
        let c = packed[i];
        let n = c.n.xyz;
        let u = c.u.xyz;
        let w = cross(n, u);
        let g0 = gamma[2u * i];
        let g1 = gamma[2u * i + 1u];
        let f = n * g0.x + u * g0.y + w * g0.z;
        let t = n * g0.w + u * g1.x + w * g1.y;
        if (s & 1u) == 0u {
            dl -= f;
            da -= cross(c.arm_a.xyz, f) + t;
        } else {
            dl += f;
            da += cross(c.arm_b.xyz, f) + t;
        }
    }
    return array<vec3<f32>, 2>(dl, da);
}

fn v_free(b: BodyState) -> vec3<f32> {
    return b.v.xyz + params.gravity.xyz * params.gravity.w;
}

@compute @workgroup_size(WG)
fn body_records(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = thread(gid);
    if k >= params.bodies {
        return;
    }
    let b = state[k];
    let vf = v_free(b);
    let d = gather(k);
    records[k] = Body(vec4<f32>(vf + d[0] * b.v.w, b.v.w), vec4<f32>(b.w.xyz + d[1] * b.w.w, b.w.w));
    records[params.bodies + k] = Body(vec4<f32>(vf, b.v.w), vec4<f32>(b.w.xyz, b.w.w));
}

// cos x and sin x / x to x^8 in y = x^2 (repose::integrate::series).
fn series(y: f32) -> vec2<f32> {
    let c = 1.0 + y * (-1.0 / 2.0 + y * (1.0 / 24.0 + y * (-1.0 / 720.0 + y / 40320.0)));
    let s = 1.0 + y * (-1.0 / 6.0 + y * (1.0 / 120.0 + y * (-1.0 / 5040.0 + y / 362880.0)));
    return vec2<f32>(c, s);
}

// exp(theta / 2) as a unit quaternion (repose::integrate::turn).
fn turn(theta: vec3<f32>) -> vec4<f32> {
    let t2 = dot(theta, theta);
    if t2 >= 0.04 {
        let angle = sqrt(t2);
        return vec4<f32>(theta / angle * sin(0.5 * angle), cos(0.5 * angle));
    }
    let cs = series(0.25 * t2);
    return vec4<f32>(theta * (0.5 * cs.y), cs.x);
}

// The Hamilton product a b of quaternions (x, y, z, w).
fn qmul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

// High-word units per metre (2^16) and low-word units per high-word unit
// (2^32).
const PER_METRE: f32 = 65536.0;
const PER_CELL: f32 = 4294967296.0;

// The centre (cell, frac) moved by d metres: |d| in fixed point, rounded
// to the nearest 2^-48 m (|d| - floor(|d|) is exact in f32, where 1 + d
// for a small negative d would not be), then added or subtracted with the
// carry or borrow. Integer arithmetic: exact, whatever the shader compiler
// does with float expressions.
fn advance(cell: vec3<i32>, frac: vec3<u32>, d: vec3<f32>) -> array<vec4<u32>, 2> {
    let a = abs(d * PER_METRE);
    let whole = floor(a);
    let part = round((a - whole) * PER_CELL);
    let over = part >= vec3<f32>(PER_CELL);
    let mh = bitcast<vec3<i32>>(vec3<u32>(whole)) + select(vec3<i32>(0), vec3<i32>(1), over);
    let ml = select(vec3<u32>(part), vec3<u32>(0u), over);
    let up_lo = frac + ml;
    let up_hi = cell + mh + select(vec3<i32>(0), vec3<i32>(1), up_lo < frac);
    let down_lo = frac - ml;
    let down_hi = cell - mh - select(vec3<i32>(0), vec3<i32>(1), frac < ml);
    let neg = d < vec3<f32>(0.0);
    let hi = select(up_hi, down_hi, neg);
    let lo = select(up_lo, down_lo, neg);
    return array<vec4<u32>, 2>(vec4<u32>(bitcast<vec3<u32>>(hi), 0u), vec4<u32>(lo, 0u));
}

// Finite: the exponent bits are not all ones (not an infinity or a NaN),
// read from the bits since a shader compiler may assume floats finite.
fn finite(x: vec3<f32>) -> bool {
    let e = bitcast<vec3<u32>>(x) & vec3<u32>(0x7f800000u);
    return all(e != vec3<u32>(0x7f800000u));
}

@compute @workgroup_size(WG)
fn integrate(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = thread(gid);
    if k >= params.bodies {
        return;
    }
    let b = state[k];
    let d = gather(k);
    let v = v_free(b) + d[0] * b.v.w;
    let w = b.w.xyz + d[1] * b.w.w;
    if !(finite(v) && finite(w)) {
        atomicMin(&status[0], k);
        next[k] = b;
        return;
    }
    let h = params.gravity.w;
    let x = advance(b.cell.xyz, b.frac.xyz, v * h);
    var r: BodyState;
    r.cell = bitcast<vec4<i32>>(x[0]);
    r.frac = x[1];
    r.v = vec4<f32>(v, b.v.w);
    r.w = vec4<f32>(w, b.w.w);
    r.q = normalize(qmul(turn(w * h), b.q));
    next[k] = r;
}
