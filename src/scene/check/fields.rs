//! The rules of every field of a scene that can be checked without
//! generating its spheres, section by section (the run, the solver, contact
//! and output, analysis and formulation, materials, sphere sources,
//! boundaries), each violation an [`Issue`] with the field's path and the
//! offending value.

use std::collections::HashMap;

use glam::DVec3;

use crate::inlet::InletRegion;
use crate::scene::error::Issue;
use crate::scene::generate;
use crate::scene::schema::{BoundarySpec, Scene, SphereSource, MAX_SPHERES, SCENE_VERSION};

/// Most steps a scene may ask for (`duration / time_step`): past this a
/// typo (1e300 s, h = 1e-300 s) is refused at load instead of running for
/// ever.
pub const MAX_STEPS: f64 = 1e9;

/// Collects issues; every check first rejects NaN and ±∞.
struct Checker {
    issues: Vec<Issue>,
    n_materials: usize,
}

/// A vector as the scene file writes it.
pub(super) fn fmt_vec(v: DVec3) -> String {
    format!("({}, {}, {})", v.x, v.y, v.z)
}

impl Checker {
    fn push(&mut self, path: impl Into<String>, reason: impl Into<String>) {
        self.issues.push(Issue::new(path, reason));
    }

    fn finite(&mut self, path: &str, x: f64) -> bool {
        if x.is_finite() {
            true
        } else {
            self.push(path, format!("must be a finite number (got {x})"));
            false
        }
    }

    /// x > 0.
    fn positive(&mut self, path: &str, x: f64) {
        if self.finite(path, x) && x <= 0.0 {
            self.push(path, format!("must be > 0 (got {x})"));
        }
    }

    /// A sphere's radius: ≥ [`MIN_RADIUS`](crate::sizes::MIN_RADIUS).
    fn radius(&mut self, path: &str, r: f64) {
        use crate::sizes::MIN_RADIUS;
        if self.finite(path, r) && r < MIN_RADIUS {
            self.push(
                path,
                format!(
                    "must be ≥ {MIN_RADIUS:e} m (got {}); radii are in metres",
                    crate::sizes::quoted(r)
                ),
            );
        }
    }

    /// x ≥ 0.
    fn non_negative(&mut self, path: &str, x: f64) {
        if self.finite(path, x) && x < 0.0 {
            self.push(path, format!("must be ≥ 0 (got {x})"));
        }
    }

    fn opt_positive(&mut self, path: &str, x: Option<f64>) {
        if let Some(x) = x {
            self.positive(path, x);
        }
    }

    /// A source's `radius` (spheres) or `shape` (exactly one; `prefix` is
    /// the source's path). Returns the radius bodies are placed by: the
    /// spheres', or the bounding radius of the shape about its centre of
    /// mass (0 when invalid).
    fn radius_or_shape(
        &mut self,
        prefix: &str,
        radius: Option<f64>,
        shape: &Option<crate::shape::Shape>,
    ) -> f64 {
        let f = |field: &str| format!("{prefix}.{field}");
        match (shape, radius) {
            (None, None) => {
                self.push(f("radius"), "missing: give `radius` (spheres) or `shape`");
                0.0
            }
            (None, Some(r)) => {
                self.radius(&f("radius"), r);
                r
            }
            (Some(shape), r) => {
                if r.is_some() {
                    self.push(
                        f("radius"),
                        "give either radius (spheres) or shape, not both",
                    );
                }
                match shape.validate() {
                    Ok(()) => shape
                        .to_body_frame(&shape.mass_properties(1.0))
                        .bounding_radius(),
                    Err(why) => {
                        self.push(f(&format!("shape ({})", shape.kind())), why);
                        0.0
                    }
                }
            }
        }
    }

    /// A source's `radius_max`: ≥ its radius, and for spheres only.
    fn radius_range(&mut self, prefix: &str, radius: f64, radius_max: Option<f64>, shaped: bool) {
        let path = format!("{prefix}.radius_max");
        match radius_max {
            Some(rm) if shaped => self.push(
                path,
                format!("a range of radii is for spheres, not a shape (got {rm})"),
            ),
            Some(rm) if self.finite(&path, rm) && rm < radius => {
                self.push(path, format!("must be ≥ radius = {radius} (got {rm})"))
            }
            _ => {}
        }
    }

    /// A source's `sizes` (`prefix` its path), which stand instead of
    /// `radius`, `radius_max` and `shape`; returns its bounds.
    fn sizes(
        &mut self,
        prefix: &str,
        d: &crate::sizes::SizeDistribution,
        radius: Option<f64>,
        radius_max: Option<f64>,
        shape: &Option<crate::shape::Shape>,
    ) -> (f64, f64) {
        if radius.is_some() || radius_max.is_some() {
            self.push(
                format!("{prefix}.sizes"),
                "give either radius (and radius_max) or sizes, not both",
            );
        }
        if shape.is_some() {
            self.push(
                format!("{prefix}.sizes"),
                "a distribution of radii is for spheres, not a shape",
            );
        }
        let problems = d.problems();
        let ok = problems.is_empty();
        for (field, why) in problems {
            self.push(format!("{prefix}.sizes.{field}"), why);
        }
        if ok {
            d.bounds()
        } else {
            (0.0, 0.0)
        }
    }

    /// A body's `mass` and `density` (at most one, each > 0; `prefix` is
    /// the source's path).
    fn mass_or_density(&mut self, prefix: &str, mass: Option<f64>, density: Option<f64>) {
        self.opt_positive(&format!("{prefix}.density"), density);
        self.opt_positive(&format!("{prefix}.mass"), mass);
        if mass.is_some() && density.is_some() {
            self.push(
                format!("{prefix}.mass"),
                "give either mass or density, not both (mass would win and density be ignored)",
            );
        }
    }

    fn vec_finite(&mut self, path: &str, v: DVec3) -> bool {
        if v.is_finite() {
            true
        } else {
            self.push(path, format!("must be finite (got {})", fmt_vec(v)));
            false
        }
    }

    /// An optional orientation quaternion: it must have a direction.
    fn rotation(&mut self, path: &str, rot: Option<glam::DQuat>) {
        if let Some(q) = rot {
            let l = q.length();
            if !(l.is_finite() && l > 1e-12) {
                self.push(
                    path,
                    format!(
                        "quaternion (w: {}, x: {}, y: {}, z: {}) has no direction (zero or not finite)",
                        q.w, q.x, q.y, q.z
                    ),
                );
            }
        }
    }

    fn material(&mut self, path: &str, m: u32) {
        if m as usize >= self.n_materials {
            let have = match self.n_materials {
                0 => "the materials table is empty".to_string(),
                1 => "the only material is 0".to_string(),
                n => format!("materials are 0..={}", n - 1),
            };
            self.push(path, format!("material index {m} is out of range ({have})"));
        }
    }
}

/// Everything that can be checked without generating spheres.
pub(super) fn check_fields(scene: &Scene) -> Vec<Issue> {
    let mut c = Checker {
        issues: Vec::new(),
        n_materials: scene.materials.len(),
    };

    if scene.version != SCENE_VERSION {
        c.push(
            "version",
            format!(
                "unsupported version {} (this build reads {SCENE_VERSION})",
                scene.version
            ),
        );
        return c.issues;
    }
    check_run(&mut c, scene);
    check_solver(&mut c, scene);
    check_contact_and_output(&mut c, scene);
    check_analysis_and_formulation(&mut c, scene);
    check_materials(&mut c, scene);
    check_sources(&mut c, scene);
    check_boundaries(&mut c, scene);
    c.issues
}

/// The rules of the scene's name, its time step and duration, gravity.
fn check_run(c: &mut Checker, scene: &Scene) {
    let name = &scene.name;
    if name.is_empty() {
        c.push("name", "must not be empty");
    } else if name == "."
        || name == ".."
        || name.contains(['/', '\\'])
        || name.chars().any(char::is_control)
    {
        c.push(
            "name",
            format!("{name:?} cannot name an output directory (no '/', '\\', control characters, '.' or '..')"),
        );
    }
    c.positive("time_step", scene.time_step);
    c.positive("duration", scene.duration);
    if scene.time_step > 0.0 && scene.duration > 0.0 && scene.duration.is_finite() {
        let steps = scene.duration / scene.time_step;
        if steps > MAX_STEPS {
            c.push(
                "duration",
                format!(
                    "{:e} s at time_step {:e} s is {steps:.3e} steps, more than the {MAX_STEPS:.0e} \
                     a run may take; shorten the duration or lengthen the time step",
                    scene.duration, scene.time_step
                ),
            );
        }
    }
    c.vec_finite("gravity", scene.gravity);
}

/// The rules of the `solver` section.
fn check_solver(c: &mut Checker, scene: &Scene) {
    let s = &scene.solver;
    if s.max_iterations == 0 {
        c.push("solver.max_iterations", "must be ≥ 1 (got 0)");
    }
    c.non_negative("solver.tolerance", s.tolerance);
    c.positive("solver.omega", s.omega);
    if c.finite("solver.lambda", s.lambda) && !(s.lambda > 0.0 && s.lambda <= 1.0) {
        c.push(
            "solver.lambda",
            format!("must be in (0, 1] (got {})", s.lambda),
        );
    }
    if let Err(why) = crate::solver::pgs::check_depth(s.anderson) {
        c.push("solver.anderson", why);
    }
    if s.check_every == 0 {
        c.push("solver.check_every", "must be ≥ 1 (got 0)");
    }
    if s.fallback_max_iterations == Some(0) {
        c.push("solver.fallback_max_iterations", "must be ≥ 1 (got 0)");
    } else if s.fallback_max_iterations.is_some() && s.fallback.is_none() {
        c.push(
            "solver.fallback_max_iterations",
            "is set but solver.fallback is not: name the fallback method, or leave the cap out",
        );
    }
    if let Some(f) = s.fallback {
        if f == s.method {
            c.push(
                "solver.fallback",
                format!("is solver.method itself ({f}); name another method or leave it out"),
            );
        } else if s.tolerance == 0.0 {
            c.push(
                "solver.fallback",
                "needs solver.tolerance > 0 (with 0 no step meets it, and the fallback would run on every step)",
            );
        }
    }
}

/// The rules of the `contact` and `output` sections.
fn check_contact_and_output(c: &mut Checker, scene: &Scene) {
    if let Some(e) = scene.contact.envelope {
        c.non_negative("contact.envelope", e);
    }
    c.non_negative(
        "contact.max_recovery_speed",
        scene.contact.max_recovery_speed,
    );
    c.opt_positive("output.frame_interval", scene.output.frame_interval);
    let pic = &scene.output.picture;
    for (field, v, min) in [
        ("width", pic.width, crate::render::particles::MIN_WIDTH),
        ("height", pic.height, crate::render::particles::MIN_HEIGHT),
    ] {
        let max = crate::render::image::MAX_SIDE;
        if !(min..=max).contains(&v) {
            c.push(
                format!("output.picture.{field}"),
                format!("must be {min}…{max} pixels (got {v})"),
            );
        }
    }
    c.opt_positive(
        "output.checkpoint.every_seconds",
        scene.output.checkpoint.every_seconds,
    );
    if scene.output.checkpoint.keep && !scene.output.checkpoint.enabled {
        c.push(
            "output.checkpoint.keep",
            "keeps the checkpoint, but `enabled: false` writes none: set one of them",
        );
    }
    if scene.output.checkpoint.every_steps == Some(0) {
        c.push(
            "output.checkpoint.every_steps",
            "must be at least 1 (leave it out for no step-count checkpoints)",
        );
    }
    for (i, &step) in scene.output.dump_problems.iter().enumerate() {
        if step == 0 {
            c.push(
                format!("output.dump_problems[{i}]"),
                "steps count from 1 (the first step); got 0",
            );
        }
    }
}

/// The rules of the `analysis` section and the formulation's settings.
fn check_analysis_and_formulation(c: &mut Checker, scene: &Scene) {
    for (field, reason) in scene.analysis.problems() {
        c.push(format!("analysis.{field}"), reason);
    }

    if let crate::formulation::Formulation::Penalty(p) = &scene.formulation {
        for (field, reason) in p.problems() {
            c.push(format!("formulation.Penalty.{field}"), reason);
        }
    }
    if let crate::formulation::Formulation::PyramidLcp(p) = &scene.formulation {
        for (field, reason) in p.problems() {
            c.push(format!("formulation.PyramidLcp.{field}"), reason);
        }
        for (i, m) in scene.materials.iter().enumerate() {
            for (field, v) in [("rolling", m.rolling), ("spinning", m.spinning)] {
                if v != 0.0 {
                    c.push(
                        format!("materials[{i}].{field}"),
                        format!("the PyramidLcp formulation has sliding friction only; must be 0 (got {v})"),
                    );
                }
            }
        }
    }
}

/// The rules of the materials.
fn check_materials(c: &mut Checker, scene: &Scene) {
    if scene.materials.is_empty() {
        c.push("materials", "the scene needs at least one material");
    }
    for (i, m) in scene.materials.iter().enumerate() {
        let p = format!("materials[{i}]");
        c.non_negative(&format!("{p}.friction"), m.friction);
        c.non_negative(&format!("{p}.rolling"), m.rolling);
        c.non_negative(&format!("{p}.spinning"), m.spinning);
        c.positive(&format!("{p}.density"), m.density);
        // The penalty formulation's fields (complementarity scenes ignore
        // them, but a wrong value is wrong in either).
        c.positive(&format!("{p}.young_modulus"), m.young_modulus);
        if !(0.0..0.5).contains(&m.poisson_ratio) {
            c.push(
                format!("{p}.poisson_ratio"),
                format!("must be in [0, 0.5) (got {})", m.poisson_ratio),
            );
        }
        if !(m.restitution > 0.0 && m.restitution <= 1.0) {
            c.push(
                format!("{p}.restitution"),
                format!("must be in (0, 1] (got {})", m.restitution),
            );
        }
        if let Some(v) = m.static_friction {
            c.non_negative(&format!("{p}.static_friction"), v);
        }
        if let Some(v) = m.kinetic_friction {
            c.non_negative(&format!("{p}.kinetic_friction"), v);
        }
        if m.mu_kinetic() > m.mu_static() {
            c.push(
                format!("{p}.kinetic_friction"),
                format!(
                    "the kinetic friction {} exceeds the static friction {} \
                     (Fang & Negrut 2020: μ_s ≥ μ_k)",
                    m.mu_kinetic(),
                    m.mu_static()
                ),
            );
        }
        if let Some(k) = m.slide_stiffness {
            c.positive(&format!("{p}.slide_stiffness"), k);
        }
        c.non_negative(&format!("{p}.roll_eta"), m.roll_eta);
        c.non_negative(&format!("{p}.spin_eta"), m.spin_eta);
    }
}

/// The rules of the sphere sources (`spheres`), their sizes, shapes and counts.
fn check_sources(c: &mut Checker, scene: &Scene) {
    if scene.spheres.is_empty() {
        c.push(
            "spheres",
            "the scene has no spheres (add a Sphere, Lattice, RandomBox or Inlet)",
        );
    }
    let mut total: usize = 0;
    for (i, src) in scene.spheres.iter().enumerate() {
        let p = format!("spheres[{i}]");
        let f = |field: &str| format!("{p}.{field}");
        match src {
            SphereSource::Sphere(s) => {
                c.vec_finite(&f("pos"), s.pos);
                c.radius(&f("radius"), s.radius);
                c.material(&f("material"), s.material);
                c.vec_finite(&f("velocity"), s.velocity);
                c.vec_finite(&f("angular_velocity"), s.angular_velocity);
                c.mass_or_density(&p, s.mass, s.density);
                c.opt_positive(&f("inertia"), s.inertia);
            }
            SphereSource::Body(b) => {
                c.vec_finite(&f("pos"), b.pos);
                if let Err(why) = b.shape.validate() {
                    c.push(f(&format!("shape ({})", b.shape.kind())), why);
                }
                c.rotation(&f("rot"), b.rot);
                c.material(&f("material"), b.material);
                c.vec_finite(&f("velocity"), b.velocity);
                c.vec_finite(&f("angular_velocity"), b.angular_velocity);
                c.mass_or_density(&p, b.mass, b.density);
                if let Some(i) = b.inertia {
                    if let Err(why) = crate::shape::validate_inertia(i) {
                        c.push(f("inertia"), why);
                    }
                }
            }
            SphereSource::Lattice(l) => {
                c.vec_finite(&f("origin"), l.origin);
                if l.count.contains(&0) {
                    let [x, y, z] = l.count;
                    c.push(
                        f("count"),
                        format!("every count must be ≥ 1 (got ({x}, {y}, {z}))"),
                    );
                }
                c.positive(&f("spacing"), l.spacing);
                // The radius the spacing rule uses: the spheres', or the
                // bounding radius of the shape about its centre of mass.
                let radius = c.radius_or_shape(&p, l.radius, &l.shape);
                c.material(&f("material"), l.material);
                c.vec_finite(&f("velocity"), l.velocity);
                c.opt_positive(&f("density"), l.density);
                if c.finite(&f("jitter"), l.jitter) && !(0.0..0.5).contains(&l.jitter) {
                    c.push(
                        f("jitter"),
                        format!("must be in [0, 0.5) (got {})", l.jitter),
                    );
                } else if l.spacing > 0.0 && radius > 0.0 && l.jitter.is_finite() {
                    let free = l.spacing * (1.0 - 2.0 * l.jitter);
                    if free < 2.0 * radius * (1.0 - 1e-12) {
                        let what = if l.shape.is_some() {
                            "bounding radius"
                        } else {
                            "radius"
                        };
                        c.push(
                            f("spacing"),
                            format!(
                                "neighbouring spheres could overlap: spacing·(1 − 2·jitter) = {free} \
                                 must be ≥ 2·{what} = {}",
                                2.0 * radius
                            ),
                        );
                    }
                }
            }
            SphereSource::RandomBox(b) => {
                let ok_min = c.vec_finite(&f("min"), b.min);
                let ok_max = c.vec_finite(&f("max"), b.max);
                if b.count == 0 {
                    c.push(f("count"), "must be ≥ 1 (got 0)");
                }
                let (_, r_max) = match &b.sizes {
                    Some(d) => c.sizes(&p, d, b.radius, b.radius_max, &b.shape),
                    None => {
                        let radius = c.radius_or_shape(&p, b.radius, &b.shape);
                        c.radius_range(&p, radius, b.radius_max, b.shape.is_some());
                        (radius, b.radius_max.unwrap_or(radius).max(radius))
                    }
                };
                c.material(&f("material"), b.material);
                c.vec_finite(&f("velocity"), b.velocity);
                c.opt_positive(&f("density"), b.density);
                if ok_min && ok_max && r_max.is_finite() && r_max > 0.0 {
                    let size = b.max - b.min;
                    if size.cmplt(DVec3::splat(2.0 * r_max)).any() {
                        c.push(
                            f("max"),
                            format!(
                                "the box min {} .. max {} has size {}, too small along some axis \
                                 for a sphere of diameter {}",
                                fmt_vec(b.min),
                                fmt_vec(b.max),
                                fmt_vec(size),
                                2.0 * r_max
                            ),
                        );
                    }
                }
            }
            SphereSource::FromFile(ff) => {
                if ff.file.trim().is_empty() {
                    c.push(
                        f("file"),
                        "must name a run's final.csv, frame_NNNNN.csv or checkpoint.bin",
                    );
                }
                if let Some(m) = ff.material {
                    c.material(&f("material"), m);
                }
                c.vec_finite(&f("offset"), ff.offset);
                if let Some(b) = &ff.within {
                    let ok = c.vec_finite(&f("within.min"), b.min)
                        & c.vec_finite(&f("within.max"), b.max);
                    if ok && b.max.cmplt(b.min).any() {
                        c.push(
                            f("within"),
                            format!(
                                "max {} is below min {} along some axis",
                                fmt_vec(b.max),
                                fmt_vec(b.min)
                            ),
                        );
                    }
                }
            }
            SphereSource::Inlet(inl) => {
                match &inl.region {
                    InletRegion::Box { min, max } => {
                        let ok = c.vec_finite(&f("region.min"), *min)
                            & c.vec_finite(&f("region.max"), *max);
                        if ok && max.cmplt(*min).any() {
                            c.push(
                                f("region.max"),
                                format!(
                                    "must be ≥ region.min on every axis (got min {} .. max {})",
                                    fmt_vec(*min),
                                    fmt_vec(*max)
                                ),
                            );
                        }
                    }
                    InletRegion::Disk {
                        center,
                        normal,
                        radius,
                    } => {
                        c.vec_finite(&f("region.center"), *center);
                        if c.vec_finite(&f("region.normal"), *normal) && normal.length() == 0.0 {
                            c.push(f("region.normal"), "must not be zero (got (0, 0, 0))");
                        }
                        c.positive(&f("region.radius"), *radius);
                    }
                }
                c.positive(&f("rate"), inl.rate);
                if inl.count == 0 {
                    c.push(f("count"), "must be ≥ 1 (got 0)");
                }
                match &inl.sizes {
                    Some(d) => {
                        c.sizes(&p, d, inl.radius, inl.radius_max, &inl.shape);
                    }
                    None => {
                        let radius = c.radius_or_shape(&p, inl.radius, &inl.shape);
                        c.radius_range(&p, radius, inl.radius_max, inl.shape.is_some());
                    }
                }
                c.material(&f("material"), inl.material);
                c.opt_positive(&f("density"), inl.density);
                c.vec_finite(&f("velocity"), inl.velocity);
                c.non_negative(&f("velocity_jitter"), inl.velocity_jitter);
                c.non_negative(&f("start_time"), inl.start_time);
            }
        }
        let n = generate::source_count(src);
        total = total.saturating_add(n);
        if n > MAX_SPHERES || total > MAX_SPHERES {
            c.push(
                f("count"),
                format!(
                    "too many spheres ({total} so far; a scene may have at most {MAX_SPHERES})"
                ),
            );
            break;
        }
    }
}

/// The rules of the boundaries, their materials, geometry and names.
fn check_boundaries(c: &mut Checker, scene: &Scene) {
    let mut names: HashMap<String, usize> = HashMap::new();
    for (i, b) in scene.boundaries.iter().enumerate() {
        let p = format!("boundaries[{i}]");
        let f = |field: &str| format!("{p}.{field}");
        match b {
            BoundarySpec::Plane(pl) => {
                c.vec_finite(&f("point"), pl.point);
                if c.vec_finite(&f("normal"), pl.normal) && pl.normal.length() == 0.0 {
                    c.push(f("normal"), "must not be zero (got (0, 0, 0))");
                }
                c.material(&f("material"), pl.material);
                c.vec_finite(&f("velocity"), pl.velocity);
            }
            BoundarySpec::Box(bx) => {
                c.vec_finite(&f("center"), bx.center);
                if c.vec_finite(&f("half_extents"), bx.half_extents)
                    && bx.half_extents.cmple(DVec3::ZERO).any()
                {
                    c.push(
                        f("half_extents"),
                        format!(
                            "every half extent must be > 0 (got {})",
                            fmt_vec(bx.half_extents)
                        ),
                    );
                }
                c.material(&f("material"), bx.material);
                c.vec_finite(&f("velocity"), bx.velocity);
            }
            BoundarySpec::Plate(pl) => {
                c.vec_finite(&f("center"), pl.center);
                let h = pl.half_extents;
                if !(h.x.is_finite() && h.y.is_finite() && h.x > 0.0 && h.y > 0.0) {
                    c.push(
                        f("half_extents"),
                        format!(
                            "both half extents must be finite and > 0 (got ({}, {}))",
                            h.x, h.y
                        ),
                    );
                }
                c.material(&f("material"), pl.material);
                c.vec_finite(&f("velocity"), pl.velocity);
            }
            BoundarySpec::Mesh(m) => {
                c.vec_finite(&f("pos"), m.pos);
                c.positive(&f("scale"), m.scale);
                c.rotation(&f("rot"), m.rot);
                c.material(&f("material"), m.material);
                c.vec_finite(&f("velocity"), m.velocity);
                c.vec_finite(&f("angular_velocity"), m.angular_velocity);
                c.non_negative(&f("start_time"), m.start_time);
                if m.scale.is_finite() && m.scale > 0.0 {
                    if let Err(e) = scene.mesh_surface(m) {
                        c.push(f("file"), e.to_string());
                    }
                }
                if let Some(s) = scene.spheres.iter().position(|s| {
                    matches!(source_shape(s), Some(crate::shape::Shape::Ellipsoid { .. }))
                }) {
                    c.push(
                        format!("spheres[{s}].shape"),
                        format!("an ellipsoid cannot meet the mesh boundary {:?} yet (mesh contact is for spheres and polyhedral or round parry shapes: boxes, cylinders, capsules, convex polyhedra)", scene.boundary_name(i)),
                    );
                }
            }
            BoundarySpec::Cylinder(cy) => {
                c.vec_finite(&f("center"), cy.center);
                if c.vec_finite(&f("axis"), cy.axis) && cy.axis.length() == 0.0 {
                    c.push(f("axis"), "must not be zero (got (0, 0, 0))");
                }
                c.positive(&f("radius"), cy.radius);
                c.positive(&f("half_length"), cy.half_length);
                c.material(&f("material"), cy.material);
                c.vec_finite(&f("velocity"), cy.velocity);
                c.finite(&f("angular_velocity"), cy.angular_velocity);
                c.non_negative(&f("start_time"), cy.start_time);
            }
        }
        let name = scene.boundary_name(i);
        if let Some(j) = names.insert(name.clone(), i) {
            c.push(
                f("name"),
                format!("duplicate boundary name {name:?} (also boundaries[{j}])"),
            );
        }
    }
}

/// The shape a source makes its bodies of (`None`: plain spheres).
fn source_shape(s: &SphereSource) -> Option<&crate::shape::Shape> {
    match s {
        SphereSource::Sphere(_) => None,
        SphereSource::Body(b) => Some(&b.shape),
        SphereSource::Lattice(l) => l.shape.as_ref(),
        SphereSource::RandomBox(r) => r.shape.as_ref(),
        SphereSource::Inlet(i) => i.shape.as_ref(),
        SphereSource::FromFile(_) => None,
    }
}
