// Memory-copy kernel: dst[i] = src[i] over vec4<f32> arrays. Pairs with
// src/gpu/copy.rs. Its bandwidth (bytes read + written per second) is the
// ceiling the bandwidth-bound Jacobi kernels are measured against.

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(256)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < arrayLength(&dst)) {
        dst[i] = src[i];
    }
}
