// Records shared by the device stages (collide, assemble, warm,
// integrate): each of those shaders is compiled with this file in front of
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
