// Warm starts on the device (repose::gpu::warm): the previous step's
// impulses of persistent contacts, kept in world coordinates and sorted
// by pair key, turned into this step's frames; and this step's impulses
// stored the same way for the next.
//
//   warm_start  per contact: binary search of its key among the previous
//               step's records; found: gamma0 = (F.n, F.u, F.w, T.n, T.u,
//               T.w), otherwise 0
//   store_warm  per contact: its key and F = g_n n + g_u u + g_w w,
//               T = t_n n + t_u u + t_w w; the list is ascending in key, so
//               the records are too
//
// w = n x u, as shaders/jacobi.wgsl builds it.

// NONE, Contact and Packed: shaders/records.wgsl, compiled in front of this file.
const WG: u32 = 256u;

struct WarmParams {
    contacts: u32,
    // Records of the previous step.
    previous: u32,
    // Workgroups per row of the dispatch grid.
    row: u32,
    _pad0: u32,
}

// One contact's impulse in world coordinates (repose::gpu::warm::WarmRecord).
struct Warm {
    key_lo: u32,
    key_hi: u32,
    _pad0: u32,
    _pad1: u32,
    force: vec4<f32>,
    torque: vec4<f32>,
}

@group(0) @binding(0) var<uniform> params: WarmParams;
@group(0) @binding(1) var<storage, read> contacts: array<Contact>;
@group(0) @binding(2) var<storage, read> packed: array<Packed>;
@group(0) @binding(3) var<storage, read> previous: array<Warm>;
// Impulses as shaders/jacobi.wgsl holds them: (g_n, g_u, g_w, t_n),
// (t_u, t_w, 0, 0) per contact.
@group(0) @binding(4) var<storage, read_write> gamma: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> stored: array<Warm>;

fn thread(gid: vec3<u32>) -> u32 {
    return gid.x + gid.y * params.row * WG;
}

// Key (hi, lo) of record k below (hi, lo)?
fn below(k: u32, hi: u32, lo: u32) -> bool {
    let r = previous[k];
    return r.key_hi < hi || (r.key_hi == hi && r.key_lo < lo);
}

@compute @workgroup_size(WG)
fn warm_start(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = thread(gid);
    if i >= params.contacts {
        return;
    }
    let c = contacts[i];
    // The first record not below the key.
    var lo = 0u;
    var hi = params.previous;
    while lo < hi {
        let mid = lo + (hi - lo) / 2u;
        if below(mid, c.key_hi, c.key_lo) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    var g0 = vec4<f32>(0.0);
    var g1 = vec4<f32>(0.0);
    if lo < params.previous && previous[lo].key_hi == c.key_hi && previous[lo].key_lo == c.key_lo {
        let r = previous[lo];
        let n = packed[i].n.xyz;
        let u = packed[i].u.xyz;
        let w = cross(n, u);
        let f = r.force.xyz;
        let t = r.torque.xyz;
        g0 = vec4<f32>(dot(f, n), dot(f, u), dot(f, w), dot(t, n));
        g1 = vec4<f32>(dot(t, u), dot(t, w), 0.0, 0.0);
    }
    gamma[2u * i] = g0;
    gamma[2u * i + 1u] = g1;
}

@compute @workgroup_size(WG)
fn store_warm(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = thread(gid);
    if i >= params.contacts {
        return;
    }
    let n = packed[i].n.xyz;
    let u = packed[i].u.xyz;
    let w = cross(n, u);
    let g0 = gamma[2u * i];
    let g1 = gamma[2u * i + 1u];
    var r: Warm;
    r.key_lo = contacts[i].key_lo;
    r.key_hi = contacts[i].key_hi;
    r.force = vec4<f32>(n * g0.x + u * g0.y + w * g0.z, 0.0);
    r.torque = vec4<f32>(n * g0.w + u * g1.x + w * g1.y, 0.0);
    stored[i] = r;
}
