// Contact detection on the device for spheres against spheres and against
// the analytic boundaries (pairs with src/gpu/collide.rs; the reference is
// the CPU's `repose::collision::detect`, which the tests compare it with).
//
// Passes, one thread per sphere (the host scans between them, scan.wgsl):
//
//   bin      cell of each centre, hashed to a bucket; bucket sizes (atomic
//            integer counts)
//   scan     bucket sizes -> bucket starts
//   scatter  each sphere into its bucket (atomic cursor: any order)
//   count    per sphere i: spheres j > i within reach, found in the 27
//            cells around i's, and boundary surfaces within the envelope
//   scan     counts -> each sphere's ranges of the contact list
//   write_contacts  per sphere: its pairs (sorted by j) and its boundary contacts
//            (in boundary, then surface order) into its ranges
//
// The list holds every sphere's pairs first (counts[0..n]) and then every
// sphere's boundary contacts (counts[n..2n]), so it is ascending in pair
// key, the order of the CPU's list: a pair's key is (a << 32) | b, a
// boundary contact's (1 << 63) | (a << 32) | (boundary << 4) | surface.
// Nothing depends on the order the atomics hand out places in a bucket:
// a sphere's candidates are filtered by its own cell and its pairs sorted
// by j, so the list is the same bits on every run.
//
// No contact is dropped: a sphere writes its ranges only where they end
// within `capacity`; the host reads the total (counts[2n] after the scan)
// and, when it is larger, runs `write_contacts` again into a larger list.

// NONE, Contact and Packed: shaders/records.wgsl, compiled in front of this file.
const WG: u32 = 256u;
const FACE: u32 = 0u;
const CYLINDER: u32 = 1u;
const PLATE: u32 = 2u;
// Cylinder caps (repose::boundary::Caps).
const CAPS_OPEN: u32 = 0u;
const CAPS_BOTH: u32 = 2u;

struct CollideParams {
    // Spheres.
    bodies: u32,
    // Boundary surface records.
    surfaces: u32,
    // Buckets - 1 (buckets a power of two).
    mask: u32,
    // Contact records the list holds.
    capacity: u32,
    // 1 / cell edge (1/m).
    inv_cell: f32,
    // Collision envelope (m).
    envelope: f32,
    // Largest and smallest radius (m): the crowding bound.
    r_max: f32,
    r_min: f32,
    // Workgroups per row of the dispatch grid.
    row: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// One surface a sphere may touch (repose::gpu::collide::SurfaceRecord).
//   FACE:     p = a point of the plane, n = unit normal into the free side,
//             lo/hi = where the centre must lie for the face to apply
//   CYLINDER: p = origin, p.w = radius, n = unit axis, n.w = half length,
//             caps (Open, Bottom, Both)
//   PLATE:    p = centre, p.w = half x, n.w = half y
struct Surface {
    kind: u32,
    boundary: u32,
    id: u32,
    caps: u32,
    p: vec4<f32>,
    n: vec4<f32>,
    lo: vec4<f32>,
    hi: vec4<f32>,
}

@group(0) @binding(0) var<uniform> params: CollideParams;
// Centre (xyz) and radius (w) of each sphere.
@group(0) @binding(1) var<storage, read> spheres: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> surfaces: array<Surface>;
// Each sphere's cell (xyz) and bucket (w).
@group(0) @binding(3) var<storage, read_write> cells: array<vec4<i32>>;
// Bucket sizes, then (scanned) bucket starts; one more than the buckets.
@group(0) @binding(4) var<storage, read_write> buckets: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> cursor: array<atomic<u32>>;
// Spheres by bucket.
@group(0) @binding(6) var<storage, read_write> sorted: array<u32>;
// Pair counts (0..n), boundary counts (n..2n), 0; scanned: the offsets.
@group(0) @binding(7) var<storage, read_write> counts: array<u32>;
@group(0) @binding(8) var<storage, read_write> contacts: array<Contact>;
// [0]: n - (the smallest crowded sphere), 0 when none.
@group(0) @binding(9) var<storage, read_write> status: array<atomic<u32>>;

fn thread_index(gid: vec3<u32>) -> u32 {
    return gid.y * params.row * WG + gid.x;
}

// Cells within +-2^30 so that the neighbours c +- 1 exist.
fn cell_of(x: vec3<f32>) -> vec3<i32> {
    let lim = 1073741824.0;
    return vec3<i32>(clamp(floor(x * params.inv_cell), vec3<f32>(-lim), vec3<f32>(lim)));
}

fn bucket_of(c: vec3<i32>) -> u32 {
    let u = bitcast<vec3<u32>>(c);
    return ((u.x * 73856093u) ^ (u.y * 19349663u) ^ (u.z * 83492791u)) & params.mask;
}

@compute @workgroup_size(WG)
fn bin(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = thread_index(gid);
    if i >= params.bodies {
        return;
    }
    let c = cell_of(spheres[i].xyz);
    let b = bucket_of(c);
    cells[i] = vec4<i32>(c, bitcast<i32>(b));
    atomicAdd(&buckets[b], 1u);
}

@compute @workgroup_size(WG)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = thread_index(gid);
    if i >= params.bodies {
        return;
    }
    let b = bitcast<u32>(cells[i].w);
    let at = atomicLoad(&buckets[b]) + atomicAdd(&cursor[b], 1u);
    sorted[at] = i;
}

// The most neighbours a sphere of radius r may have within reach
// (repose::collision, "A bound on crowding"), 2x the volume bound.
fn crowding_limit(r: f32) -> u32 {
    let outer = r + params.r_max + max(params.envelope, 0.0) + params.r_min;
    let fit = (outer * outer * outer - r * r * r) / (params.r_min * params.r_min * params.r_min);
    return u32(clamp(ceil(2.0 * fit), 32.0, 1e9));
}

// Spheres j > i within reach of sphere i: counted, and with `store` their
// ids stored at contacts[base ..] (at most `room` of them).
fn pairs_of(i: u32, store: bool, base: u32, room: u32) -> u32 {
    let s = spheres[i];
    let c = cells[i].xyz;
    var n = 0u;
    for (var dx = -1; dx <= 1; dx++) {
        for (var dy = -1; dy <= 1; dy++) {
            for (var dz = -1; dz <= 1; dz++) {
                let cc = c + vec3<i32>(dx, dy, dz);
                let b = bucket_of(cc);
                let first = atomicLoad(&buckets[b]);
                let last = atomicLoad(&buckets[b + 1u]);
                for (var k = first; k < last; k++) {
                    let j = sorted[k];
                    if j <= i || any(cells[j].xyz != cc) {
                        continue;
                    }
                    let t = spheres[j];
                    let d = t.xyz - s.xyz;
                    let reach = s.w + t.w + params.envelope;
                    if dot(d, d) < reach * reach {
                        if store && n < room {
                            contacts[base + n].b = j;
                        }
                        n++;
                    }
                }
            }
        }
    }
    return n;
}

// Writes (when `store` and `slot` is within the list) sphere i's contact
// with a boundary surface whose unit normal `towards` the centre and the
// centre's signed distance along it are given, if its gap is below the
// envelope; returns 1 if there is such a contact.
fn surface_contact(i: u32, f: Surface, id: u32, towards: vec3<f32>, distance: f32, store: bool, slot: u32) -> u32 {
    let s = spheres[i];
    let gap = distance - s.w;
    if gap >= params.envelope {
        return 0u;
    }
    if store && slot < params.capacity {
        let normal = -towards;
        var c: Contact;
        c.a = i;
        c.b = NONE;
        c.key_lo = (f.boundary << 4u) | id;
        c.key_hi = 0x80000000u | i;
        c.normal = normal;
        c.gap = gap;
        c.point = s.xyz + normal * (s.w + 0.5 * gap);
        c.wall = f.boundary;
        contacts[slot] = c;
    }
    return 1u;
}

// A unit vector orthogonal to the unit vector a (Duff et al. 2017, as the
// CPU's glam `any_orthonormal_vector`).
fn any_orthonormal(a: vec3<f32>) -> vec3<f32> {
    let sign = select(-1.0, 1.0, a.z >= 0.0);
    let k = -1.0 / (sign + a.z);
    let b = a.x * a.y * k;
    return vec3<f32>(b, sign + a.y * a.y * k, -a.y);
}

// Sphere i's contacts with every boundary surface, in record order (and a
// cylinder's surfaces in id order), counted and with `store` kept from
// contacts[base].
fn walls_of(i: u32, store: bool, base: u32) -> u32 {
    let x = spheres[i].xyz;
    var n = 0u;
    for (var k = 0u; k < params.surfaces; k++) {
        let f = surfaces[k];
        if f.kind == FACE {
            if all(x >= f.lo.xyz) && all(x <= f.hi.xyz) {
                n += surface_contact(i, f, f.id, f.n.xyz, dot(x - f.p.xyz, f.n.xyz), store, base + n);
            }
        } else if f.kind == CYLINDER {
            let axis = f.n.xyz;
            let radius = f.p.w;
            let l = f.n.w;
            let d = x - f.p.xyz;
            let a = dot(d, axis);
            let radial = d - axis * a;
            let rho = sqrt(dot(radial, radial));
            var e: vec3<f32>;
            if rho > 0.0 {
                e = radial / rho;
            } else {
                e = any_orthonormal(axis);
            }
            if rho < radius && a >= -l && a <= l {
                n += surface_contact(i, f, 0u, -e, radius - rho, store, base + n);
            }
            let bottom_closed = f.caps != CAPS_OPEN;
            let top_closed = f.caps == CAPS_BOTH;
            if rho <= radius {
                if bottom_closed {
                    n += surface_contact(i, f, 1u, axis, a + l, store, base + n);
                }
                if top_closed {
                    n += surface_contact(i, f, 2u, -axis, l - a, store, base + n);
                }
            }
            // Rim edges of open ends: the nearest point of the circle.
            for (var end = 0u; end < 2u; end++) {
                let open_here = select(!top_closed && a > l, !bottom_closed && a < -l, end == 0u);
                if open_here {
                    let q = axis * select(l, -l, end == 0u) + e * radius;
                    let v = d - q;
                    let dist = sqrt(dot(v, v));
                    var normal = -e;
                    if dist > 0.0 {
                        normal = v / dist;
                    }
                    n += surface_contact(i, f, 3u + end, normal, dist, store, base + n);
                }
            }
        } else if f.kind == PLATE {
            let d = x - f.p.xyz;
            let hx = f.p.w;
            let hy = f.n.w;
            let q = vec3<f32>(clamp(d.x, -hx, hx), clamp(d.y, -hy, hy), 0.0);
            if q.x == d.x && q.y == d.y {
                // Over the face, from above; under it nothing.
                if d.z >= 0.0 {
                    n += surface_contact(i, f, 0u, vec3<f32>(0.0, 0.0, 1.0), d.z, store, base + n);
                }
            } else {
                let v = d - q;
                let dist = sqrt(dot(v, v));
                n += surface_contact(i, f, 1u, v / dist, dist, store, base + n);
            }
        }
    }
    return n;
}

@compute @workgroup_size(WG)
fn count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = thread_index(gid);
    let n = params.bodies;
    if i == 0u {
        counts[2u * n] = 0u;
    }
    if i >= n {
        return;
    }
    let pairs = pairs_of(i, false, 0u, 0u);
    if pairs > crowding_limit(spheres[i].w) {
        atomicMax(&status[0], n - i);
    }
    counts[i] = pairs;
    counts[n + i] = walls_of(i, false, 0u);
}

// The contact of spheres i < j (repose::collision::sphere_pair).
fn sphere_pair(i: u32, j: u32) -> Contact {
    let s = spheres[i];
    let t = spheres[j];
    let d = t.xyz - s.xyz;
    let dist = sqrt(dot(d, d));
    var normal = vec3<f32>(0.0, 0.0, 1.0);
    if dist > 0.0 {
        normal = d * (1.0 / dist);
    }
    let gap = dist - s.w - t.w;
    var c: Contact;
    c.a = i;
    c.b = j;
    c.key_lo = j;
    c.key_hi = i;
    c.normal = normal;
    c.gap = gap;
    c.point = s.xyz + normal * (s.w + 0.5 * gap);
    c.wall = NONE;
    return c;
}

@compute @workgroup_size(WG)
fn write_contacts(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = thread_index(gid);
    let n = params.bodies;
    if i >= n {
        return;
    }
    let p0 = counts[i];
    let p1 = counts[i + 1u];
    if p1 <= params.capacity && p1 > p0 {
        pairs_of(i, true, p0, p1 - p0);
        // Insertion sort of the partners (a few dozen at most).
        for (var k = p0 + 1u; k < p1; k++) {
            let j = contacts[k].b;
            var m = k;
            while m > p0 && contacts[m - 1u].b > j {
                contacts[m].b = contacts[m - 1u].b;
                m--;
            }
            contacts[m].b = j;
        }
        for (var k = p0; k < p1; k++) {
            contacts[k] = sphere_pair(i, contacts[k].b);
        }
    }
    let w0 = counts[n + i];
    let w1 = counts[n + i + 1u];
    if w1 <= params.capacity && w1 > w0 {
        walls_of(i, true, w0);
    }
}
