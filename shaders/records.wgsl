// Records shared by the device stages (collide, assemble, warm,
// integrate, positions): each of those shaders is compiled with this file in front of
// it (the Rust modules' SHADER constants), so a record is declared once.

// The marker of "no body" (end B of a boundary contact) and "no index".
const NONE: u32 = 0xffffffffu;

// One detected contact (repose::gpu::collide::DeviceContact): sphere a,
// sphere b or NONE, the pair key, the unit normal from a toward b, the
// signed gap, the contact point (the middle of the gap), the boundary
// index or NONE.
struct Contact {
    a: u32,
    b: u32,
    key_lo: u32,
    key_hi: u32,
    normal: vec3<f32>,
    gap: f32,
    point: vec3<f32>,
    wall: u32,
}

// One contact as the solver reads it (shaders/jacobi.wgsl `Contact`,
// repose::solver::packed::PackedContact).
struct Packed {
    n: vec4<f32>,
    u: vec4<f32>,
    arm_a: vec4<f32>,
    arm_b: vec4<f32>,
    bias: vec4<f32>,
    ids: vec4<u32>,
}

// One body's state (repose::gpu::integrate::BodyState): the centre in
// 64-bit fixed point, X = x / 2^-48 m as a high word (units of 2^-16 m)
// and a low word (units of 2^-48 m); velocities; orientation.
struct BodyState {
    // High words of the centre (xyz).
    cell: vec4<i32>,
    // Low words of the centre (xyz).
    frac: vec4<u32>,
    // Velocity (xyz) and 1/m (w).
    v: vec4<f32>,
    // Angular velocity (xyz) and 1/I (w).
    w: vec4<f32>,
    // Orientation quaternion (x, y, z, w).
    q: vec4<f32>,
}

// One body as assembly reads it (repose::gpu::assemble::AssembleBody).
struct AsmBody {
    pos: vec3<f32>,
    material: u32,
    inv_mass: f32,
    inv_inertia: f32,
    _pad0: u32,
    _pad1: u32,
}
