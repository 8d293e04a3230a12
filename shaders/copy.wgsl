// Memory-copy kernel: dst[i] = src[i] over vec4<f32> arrays, PER_THREAD
// elements per invocation, strided by the number of invocations so that
// neighbouring invocations touch neighbouring elements (fewer invocations: on
// software drivers the per-invocation overhead otherwise dominates a copy).
// Pairs with src/gpu/copy.rs. Its bandwidth (bytes read + written per
// second) is the ceiling the bandwidth-bound Jacobi kernels are measured
// against.

const WG: u32 = 256u;
const PER_THREAD: u32 = 4u;

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    let stride = nwg.x * nwg.y * WG;
    let n = arrayLength(&dst);
    for (var k = 0u; k < PER_THREAD; k++) {
        let i = t + k * stride;
        if (i < n) {
            dst[i] = src[i];
        }
    }
}
