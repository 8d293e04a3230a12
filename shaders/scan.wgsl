// Exclusive prefix sum of a u32 array, in place (pairs with src/gpu/scan.rs;
// the CPU mirror is `repose::gpu::scan::exclusive_scan`).
//
// One level: `scan_blocks` scans each block of WG elements in workgroup
// memory (Hillis–Steele, log2 WG steps) and writes the block's total to
// `sums`; the host scans `sums` the same way (one more level, until a level
// fits one block) and `add_blocks` adds each block's scanned total back.
// Integer sums in a fixed order: the same result on every run and device.

const WG: u32 = 256u;

struct ScanParams {
    // Elements of `data` at this level.
    n: u32,
    // Workgroups per row of a 2-D grid (the dispatch's x count).
    row: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: ScanParams;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> sums: array<u32>;

var<workgroup> tile: array<u32, WG>;

fn block_of(wg: vec3<u32>) -> u32 {
    return wg.y * params.row + wg.x;
}

@compute @workgroup_size(WG)
fn scan_blocks(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let block = block_of(wg);
    let g = block * WG + t;
    var v = 0u;
    if g < params.n {
        v = data[g];
    }
    tile[t] = v;
    workgroupBarrier();
    for (var o = 1u; o < WG; o = o << 1u) {
        var add = 0u;
        if t >= o {
            add = tile[t - o];
        }
        workgroupBarrier();
        tile[t] = tile[t] + add;
        workgroupBarrier();
    }
    if g < params.n {
        data[g] = tile[t] - v;
    }
    if t == WG - 1u && block * WG < params.n {
        sums[block] = tile[t];
    }
}

@compute @workgroup_size(WG)
fn add_blocks(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let block = block_of(wg);
    let g = block * WG + t;
    if g < params.n {
        data[g] = data[g] + sums[block];
    }
}
