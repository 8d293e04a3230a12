//! Layout of the WGSL structs. (see the crate docs in `main.rs`).

use super::*;

/// The scalar kind of a Rust record field, for comparison with WGSL's.
trait Scalar {
    const KIND: naga::ScalarKind;
}
impl Scalar for f32 {
    const KIND: naga::ScalarKind = naga::ScalarKind::Float;
}
impl Scalar for u32 {
    const KIND: naga::ScalarKind = naga::ScalarKind::Uint;
}
impl Scalar for i32 {
    const KIND: naga::ScalarKind = naga::ScalarKind::Sint;
}
impl<T: Scalar, const N: usize> Scalar for [T; N] {
    const KIND: naga::ScalarKind = T::KIND;
}
fn kind_of<T: Scalar>(_: &T) -> naga::ScalarKind {
    T::KIND
}

/// A WGSL struct member as compared: (name, offset, size, scalar kind).
type Member = (String, u32, u32, naga::ScalarKind);

/// A parsed shader with its type layouts.
struct Shader {
    file: &'static str,
    module: naga::Module,
    layouter: naga::proc::Layouter,
}

impl Shader {
    /// Parses `source`, named `file` in messages.
    fn parse(file: &'static str, source: &str) -> Self {
        let module = naga::front::wgsl::parse_str(source)
            .unwrap_or_else(|e| panic!("{file} does not parse: {e}"));
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(module.to_ctx()).expect("WGSL type layouts");
        Shader {
            file,
            module,
            layouter,
        }
    }

    fn struct_type(&self, name: &str) -> naga::Handle<naga::Type> {
        self.module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no struct {name} in {}", self.file))
            .0
    }

    /// (name, offset, size, scalar kind) of each member of struct `name`,
    /// and the struct's size and array stride.
    fn members(&self, name: &str) -> (Vec<Member>, u32, u32) {
        let h = self.struct_type(name);
        let naga::TypeInner::Struct { members, .. } = &self.module.types[h].inner else {
            panic!("WGSL {name} is not a struct");
        };
        let fields = members
            .iter()
            .map(|m| {
                let kind = match self.module.types[m.ty].inner {
                    naga::TypeInner::Scalar(s)
                    | naga::TypeInner::Vector { scalar: s, .. }
                    | naga::TypeInner::Atomic(s) => s.kind,
                    ref other => {
                        panic!("WGSL {name}.{:?}: unexpected member type {other:?}", m.name)
                    }
                };
                (
                    m.name.clone().unwrap_or_default(),
                    m.offset,
                    self.layouter[m.ty].size,
                    kind,
                )
            })
            .collect();
        (fields, self.layouter[h].size, self.layouter[h].to_stride())
    }

    /// The value of the WGSL `const` named `name` (a u32 literal).
    fn const_u32(&self, name: &str) -> u32 {
        let (_, c) = self
            .module
            .constants
            .iter()
            .find(|(_, c)| c.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no const {name} in {}", self.file));
        match self.module.global_expressions[c.init] {
            naga::Expression::Literal(naga::Literal::U32(v)) => v,
            ref e => panic!("WGSL const {name} is {e:?}, not a u32 literal"),
        }
    }
}

/// Asserts that WGSL struct `$wgsl` and `#[repr(C)]` type `$rust` have the
/// same fields, in order, at the same offsets, of the same sizes and scalar
/// kinds, and the same size (which is also the WGSL array stride).
macro_rules! assert_same_layout {
    ($shader:expr, $wgsl:literal, $rust:ty, [$($field:ident),* $(,)?]) => {{
        let (members, size, stride) = $shader.members($wgsl);
        let zero = <$rust as bytemuck::Zeroable>::zeroed();
        let rust: Vec<Member> = vec![$((
            stringify!($field).to_string(),
            std::mem::offset_of!($rust, $field) as u32,
            std::mem::size_of_val(&zero.$field) as u32,
            kind_of(&zero.$field),
        )),*];
        assert_eq!(
            members, rust,
            "WGSL {} and Rust {}: fields (name, offset, size, kind) differ",
            $wgsl, stringify!($rust)
        );
        assert_eq!(size as usize, std::mem::size_of::<$rust>(), "size of WGSL {} vs Rust {}", $wgsl, stringify!($rust));
        assert_eq!(stride as usize, std::mem::size_of::<$rust>(), "array stride of WGSL {} vs size of Rust {}", $wgsl, stringify!($rust));
        eprintln!("OBSERVED WGSL {} = Rust {}: {} fields, {} bytes", $wgsl, stringify!($rust), members.len(), size);
    }};
}

/// Property 6: every Pod record mirrors its WGSL struct exactly (parsed
/// from shaders/jacobi.wgsl by naga, laid out by naga's WGSL layout rules),
/// the bindings use those structs, and the WGSL constants and workgroup
/// sizes are the Rust ones.
#[test]
fn wgsl_structs_match_rust_records() {
    let shader = Shader::parse("shaders/jacobi.wgsl", repose::gpu::jacobi::SHADER);
    assert_same_layout!(
        shader,
        "Contact",
        PackedContact,
        [n, u, arm_a, arm_b, bias, ids]
    );
    assert_same_layout!(shader, "Body", PackedBody, [v, w]);
    // An inertia record is read as a `Body` (from the third region):
    // diag in place of v, off in place of w.
    {
        let (members, size, _) = shader.members("Body");
        let zero = PackedInertia::default();
        let rust: Vec<Member> = vec![
            (
                "v".into(),
                std::mem::offset_of!(PackedInertia, diag) as u32,
                std::mem::size_of_val(&zero.diag) as u32,
                kind_of(&zero.diag),
            ),
            (
                "w".into(),
                std::mem::offset_of!(PackedInertia, off) as u32,
                std::mem::size_of_val(&zero.off) as u32,
                kind_of(&zero.off),
            ),
        ];
        assert_eq!(
            members, rust,
            "WGSL Body vs Rust PackedInertia (diag = v, off = w)"
        );
        assert_eq!(size as usize, std::mem::size_of::<PackedInertia>());
    }
    assert_same_layout!(
        shader,
        "Params",
        Params,
        [
            n_contacts,
            n_bodies,
            n_worlds,
            check_every,
            method,
            contact_groups,
            pad0,
            pad1
        ]
    );
    assert_same_layout!(
        shader,
        "World",
        WorldRecord,
        [
            contact_start,
            contact_end,
            body_start,
            body_end,
            partial_start,
            partial_end,
            max_iterations,
            law,
            weighted,
            tensors,
            omega,
            lambda,
            tolerance,
            pad0,
            pad1,
            pad2
        ]
    );
    assert_same_layout!(
        shader,
        "Control",
        Control,
        [
            done,
            checks,
            iterations,
            converged,
            residual_abs,
            residual_rel,
            gamma_norm,
            y_norm,
            theta0,
            theta1,
            beta,
            last_rel
        ]
    );
    // `remaining` is an atomic<u32> in WGSL, a u32 in Rust.
    assert_same_layout!(shader, "Batch", BatchRecord, [clock, remaining, pad0, pad1]);

    // The bound variables are of those types.
    let m = &shader.module;
    let global = |name: &str| {
        m.global_variables
            .iter()
            .find(|(_, g)| g.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no global {name} in shaders/jacobi.wgsl"))
            .1
    };
    let element = |name: &str| match m.types[global(name).ty].inner {
        naga::TypeInner::Array { base, .. } => base,
        ref t => panic!("WGSL {name} is {t:?}, not an array"),
    };
    assert_eq!(global("params").ty, shader.struct_type("Params"));
    assert_eq!(element("control"), shader.struct_type("Control"));
    assert_eq!(element("worlds"), shader.struct_type("World"));
    assert_eq!(global("batch").ty, shader.struct_type("Batch"));
    assert_eq!(element("contacts"), shader.struct_type("Contact"));
    assert_eq!(element("bodies"), shader.struct_type("Body"));

    // Constants and workgroup sizes.
    use repose::gpu::layout::{RWG, WG};
    assert_eq!(shader.const_u32("WG"), WG, "WGSL WG vs Rust WG");
    assert_eq!(shader.const_u32("RWG"), RWG, "WGSL RWG vs Rust RWG");
    assert_eq!(
        shader.const_u32("NONE"),
        jacobi_f32::NONE,
        "WGSL NONE vs the mirror's wall marker"
    );
    assert_eq!(
        jacobi_f32::NONE,
        NO_BODY,
        "the packed wall marker is the collision one"
    );
    let red = global("red");
    match m.types[red.ty].inner {
        naga::TypeInner::Array {
            size: naga::ArraySize::Constant(len),
            ..
        } => assert_eq!(
            len.get(),
            RWG,
            "WGSL red[] must hold one entry per residual thread"
        ),
        ref t => panic!("WGSL red is {t:?}"),
    }
    for ep in &m.entry_points {
        let want = match ep.name.as_str() {
            "contact_pass" | "body_pass" | "apgd_contact_pass" | "apgd_body_pass" => WG,
            "residual_pass" | "finalize" => RWG,
            other => panic!("unexpected entry point {other}: add it to this test"),
        };
        assert_eq!(
            ep.workgroup_size,
            [want, 1, 1],
            "@workgroup_size of {} (the host dispatches groups of {want})",
            ep.name
        );
    }
    eprintln!(
        "OBSERVED WG = {WG}, RWG = {RWG}, NONE = {:#x}; {} entry points checked",
        jacobi_f32::NONE,
        m.entry_points.len()
    );
}

/// Property 6 for the resident step's shaders (detection, assembly, warm
/// starts, integration, scan): their records mirror
/// the Rust ones, and their constants and workgroup sizes are the Rust
/// ones.
#[test]
fn resident_step_wgsl_structs_match_rust_records() {
    use repose::gpu::collide::{self, kind, CollideParams, DeviceContact, SurfaceRecord};
    use repose::gpu::scan::{self, ScanParams};
    let c = Shader::parse("shaders/collide.wgsl", collide::SHADER);
    assert_same_layout!(
        c,
        "CollideParams",
        CollideParams,
        [
            bodies, surfaces, mask, capacity, inv_cell, envelope, r_max, r_min, row, _pad0, _pad1,
            _pad2
        ]
    );
    assert_same_layout!(
        c,
        "Surface",
        SurfaceRecord,
        [kind, boundary, id, caps, p, n, lo, hi]
    );
    assert_same_layout!(
        c,
        "Contact",
        DeviceContact,
        [a, b, key_lo, key_hi, normal, gap, point, wall]
    );
    for (name, want) in [
        ("WG", collide::WG),
        ("NONE", NO_BODY),
        ("FACE", kind::FACE),
        ("CYLINDER", kind::CYLINDER),
        ("PLATE", kind::PLATE),
        // repose::gpu::collide writes Caps::Open as 0, Caps::Both as 2.
        ("CAPS_OPEN", 0),
        ("CAPS_BOTH", 2),
    ] {
        assert_eq!(
            c.const_u32(name),
            want,
            "shaders/collide.wgsl {name} vs Rust"
        );
    }
    use repose::gpu::assemble::{self, AssembleBody, AssembleParams, AssembleWall};
    let a = Shader::parse("shaders/assemble.wgsl", assemble::SHADER);
    assert_same_layout!(
        a,
        "AssembleParams",
        AssembleParams,
        [contacts, bodies, row, _pad0, h, max_recovery, _pad1, _pad2]
    );
    assert_same_layout!(
        a,
        "AsmBody",
        AssembleBody,
        [pos, material, inv_mass, inv_inertia, _pad0, _pad1]
    );
    assert_same_layout!(a, "Wall", AssembleWall, [velocity, material]);
    assert_same_layout!(
        a,
        "Contact",
        DeviceContact,
        [a, b, key_lo, key_hi, normal, gap, point, wall]
    );
    assert_same_layout!(a, "Packed", PackedContact, [n, u, arm_a, arm_b, bias, ids]);
    assert_eq!(
        a.const_u32("WG"),
        assemble::WG,
        "shaders/assemble.wgsl WG vs Rust"
    );
    assert_eq!(
        a.const_u32("NONE"),
        NO_BODY,
        "shaders/assemble.wgsl NONE vs Rust"
    );
    use repose::gpu::warm::{self, WarmParams, WarmRecord};
    let w = Shader::parse("shaders/warm.wgsl", warm::SHADER);
    assert_same_layout!(
        w,
        "WarmParams",
        WarmParams,
        [contacts, previous, row, _pad0]
    );
    assert_same_layout!(
        w,
        "Warm",
        WarmRecord,
        [key_lo, key_hi, _pad0, _pad1, force, torque]
    );
    assert_same_layout!(
        w,
        "Contact",
        DeviceContact,
        [a, b, key_lo, key_hi, normal, gap, point, wall]
    );
    assert_same_layout!(w, "Packed", PackedContact, [n, u, arm_a, arm_b, bias, ids]);
    assert_eq!(w.const_u32("WG"), warm::WG, "shaders/warm.wgsl WG vs Rust");
    use repose::gpu::integrate::{self, BodyState, IntegrateParams};
    let g = Shader::parse("shaders/integrate.wgsl", integrate::SHADER);
    assert_same_layout!(
        g,
        "IntegrateParams",
        IntegrateParams,
        [bodies, contacts, row, _pad0, gravity]
    );
    assert_same_layout!(g, "BodyState", BodyState, [cell, frac, v, w, q]);
    assert_same_layout!(g, "Packed", PackedContact, [n, u, arm_a, arm_b, bias, ids]);
    assert_same_layout!(g, "Body", PackedBody, [v, w]);
    assert_eq!(
        g.const_u32("WG"),
        integrate::WG,
        "shaders/integrate.wgsl WG vs Rust"
    );
    use repose::gpu::positions::{self, PositionsParams, ShapeRecord};
    let o = Shader::parse("shaders/positions.wgsl", positions::SHADER);
    assert_same_layout!(
        o,
        "PositionsParams",
        PositionsParams,
        [bodies, row, _pad0, _pad1]
    );
    assert_same_layout!(o, "Shape", ShapeRecord, [radius, material, _pad0, _pad1]);
    assert_same_layout!(
        o,
        "AsmBody",
        AssembleBody,
        [pos, material, inv_mass, inv_inertia, _pad0, _pad1]
    );
    assert_same_layout!(o, "BodyState", BodyState, [cell, frac, v, w, q]);
    assert_eq!(
        o.const_u32("WG"),
        positions::WG,
        "shaders/positions.wgsl WG vs Rust"
    );
    let s = Shader::parse("shaders/scan.wgsl", scan::SHADER);
    assert_same_layout!(s, "ScanParams", ScanParams, [n, row, _pad0, _pad1]);
    assert_eq!(s.const_u32("WG"), scan::WG, "shaders/scan.wgsl WG vs Rust");
    for (sh, wg) in [
        (&c, collide::WG),
        (&a, assemble::WG),
        (&w, warm::WG),
        (&g, integrate::WG),
        (&o, positions::WG),
        (&s, scan::WG),
    ] {
        for ep in &sh.module.entry_points {
            assert_eq!(
                ep.workgroup_size,
                [wg, 1, 1],
                "{}: @workgroup_size of {} (the host dispatches groups of {wg})",
                sh.file,
                ep.name
            );
        }
    }
}
