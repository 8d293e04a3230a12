// The contact stages' inputs from the device state (repose::gpu::positions):
// per body, the centre held in 64-bit fixed point (BodyState, written by
// shaders/integrate.wgsl) rounded to the nearest f32, ties to even, with
// the body's radius for detection (shaders/collide.wgsl reads vec4 spheres)
// and its material, 1/m and 1/I for assembly (AsmBody).
//
// The rounding is done on the integer: X = hi * 2^32 + lo in units of
// 2^-48 m, |X| normalised so its leading one is bit 63, the top 24 bits
// kept and rounded by the bits below (half and sticky), and the f32 built
// from its sign, exponent and mantissa bits: exact whatever a compiler does
// with float arithmetic, and the bits of Rust's `X as f32` times 2^-48.

// BodyState and AsmBody: shaders/records.wgsl, compiled in front of this file.
const WG: u32 = 256u;

struct PositionsParams {
    bodies: u32,
    // Workgroups per row of the dispatch grid.
    row: u32,
    _pad0: u32,
    _pad1: u32,
}

// What the state does not hold (repose::gpu::positions::ShapeRecord).
struct Shape {
    radius: f32,
    material: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: PositionsParams;
@group(0) @binding(1) var<storage, read> state: array<BodyState>;
@group(0) @binding(2) var<storage, read> shapes: array<Shape>;
// Centre (xyz) and radius (w), as detection reads them.
@group(0) @binding(3) var<storage, read_write> spheres: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> bodies: array<AsmBody>;

// The f32 nearest to (hi * 2^32 + lo) * 2^-48, ties to even.
fn centre(hi: i32, lo: u32) -> f32 {
    let neg = hi < 0;
    var mh = bitcast<u32>(hi);
    var ml = lo;
    if neg {
        ml = ~lo + 1u;
        mh = ~mh + select(0u, 1u, ml == 0u);
    }
    if mh == 0u && ml == 0u {
        return 0.0;
    }
    var lz = countLeadingZeros(mh);
    if mh == 0u {
        lz = 32u + countLeadingZeros(ml);
    }
    // Shift left by lz: the leading one to bit 63 of (mh, ml).
    if lz >= 32u {
        mh = ml << (lz - 32u);
        ml = 0u;
    } else if lz > 0u {
        mh = (mh << lz) | (ml >> (32u - lz));
        ml = ml << lz;
    }
    var m = mh >> 8u;
    let half = (mh >> 7u) & 1u;
    let sticky = (mh & 0x7fu) != 0u || ml != 0u;
    if half == 1u && (sticky || (m & 1u) == 1u) {
        m += 1u;
    }
    // m in [2^23, 2^24]: value = m * 2^(-8 - lz) = 1.f * 2^(15 - lz).
    var e = 15 - i32(lz);
    if m == 0x1000000u {
        m = 0x800000u;
        e += 1;
    }
    let bits = select(0u, 0x80000000u, neg) | (u32(e + 127) << 23u) | (m & 0x7fffffu);
    return bitcast<f32>(bits);
}

@compute @workgroup_size(WG)
fn contact_inputs(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x + gid.y * params.row * WG;
    if k >= params.bodies {
        return;
    }
    let b = state[k];
    let x = vec3<f32>(centre(b.cell.x, b.frac.x), centre(b.cell.y, b.frac.y), centre(b.cell.z, b.frac.z));
    let s = shapes[k];
    spheres[k] = vec4<f32>(x, s.radius);
    var a: AsmBody;
    a.pos = x;
    a.material = s.material;
    a.inv_mass = b.v.w;
    a.inv_inertia = b.w.w;
    bodies[k] = a;
}
