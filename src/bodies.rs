//! Dynamic bodies as structs of arrays: spheres, and rigid bodies of the
//! other shapes of [`crate::shape`].
//!
//! Every per-body quantity lives in its own `Vec`, indexed by body id, so the
//! solver and collision stages stream through exactly the fields they need
//! (MuJoCo's model/data split, Box2D's body SoA). Angular velocities are
//! kept in the world frame. Spheres have isotropic inertia (a scalar), so
//! for them the orientation only matters for output and for tracking spin;
//! a body of another shape has principal moments in its body frame, and its
//! world inverse inertia R I_b⁻¹ Rᵀ follows its orientation
//! ([`Bodies::inv_inertia_world`]). For such a body `radius` is the radius
//! of its bounding ball (the broadphase's view of it) and `inv_inertia` the
//! largest principal inverse moment (a bound the solvers' step sizes use).

use glam::{DMat3, DQuat, DVec3};
use serde::{Deserialize, Serialize};

use crate::shape::{self, BodyShape, Shape};

/// `Bodies::shape` of a plain sphere.
pub const SPHERE: u32 = u32::MAX;

/// All dynamic bodies of a simulation, one entry per body in each vector.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bodies {
    /// Centre positions (m).
    pub pos: Vec<DVec3>,
    /// Orientations as unit quaternions (body → world).
    pub rot: Vec<DQuat>,
    /// Linear velocities (m/s).
    pub vel: Vec<DVec3>,
    /// Angular velocities in the world frame (rad/s).
    pub omega: Vec<DVec3>,
    /// Radii (m).
    pub radius: Vec<f64>,
    /// Inverse masses (1/kg).
    pub inv_mass: Vec<f64>,
    /// Inverse scalar moments of inertia about the centre (1/(kg m²)).
    pub inv_inertia: Vec<f64>,
    /// Index into the scene's materials table.
    pub material: Vec<u32>,
    /// Each body's entry in `shapes`, or [`SPHERE`] for a plain sphere.
    pub shape: Vec<u32>,
    /// The shapes of the bodies that are not plain spheres, in body frames;
    /// consecutive bodies of the same shape share an entry.
    pub shapes: Vec<BodyShape>,
    /// Principal inverse moments in the body frame (1/(kg m²)); a sphere's
    /// scalar three times.
    pub inv_inertia_body: Vec<DVec3>,
}

/// The initial state of a rigid body of any shape.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyInit {
    /// The shape, in its body frame (centre of mass at the origin,
    /// principal axes along the axes: see [`Shape::to_body_frame`]).
    pub shape: Shape,
    /// Centre of mass (m).
    pub pos: DVec3,
    /// Orientation of the body frame (body → world).
    pub rot: DQuat,
    /// Linear velocity (m/s).
    pub vel: DVec3,
    /// Angular velocity, world frame (rad/s).
    pub omega: DVec3,
    /// Mass (kg).
    pub mass: f64,
    /// Principal moments of inertia about the centre of mass (kg m²).
    pub principal: DVec3,
    /// Material index.
    pub material: u32,
}

/// The initial state of one sphere, as scene generators produce it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphereInit {
    /// Centre position (m).
    pub pos: DVec3,
    /// Radius (m).
    pub radius: f64,
    /// Mass (kg).
    pub mass: f64,
    /// Moment of inertia about the centre (kg m²).
    pub inertia: f64,
    /// Linear velocity (m/s).
    pub vel: DVec3,
    /// Angular velocity, world frame (rad/s).
    pub omega: DVec3,
    /// Material index.
    pub material: u32,
}

impl BodyInit {
    /// The body's bounding ball: a sphere at its centre of the shape's
    /// bounding radius, with its mass, motion and material (the largest
    /// principal moment as the ball's inertia). The checks that place and
    /// compare spheres see a body as this ball.
    pub fn bounding_ball(&self) -> SphereInit {
        SphereInit {
            pos: self.pos,
            radius: self.shape.bounding_radius(),
            mass: self.mass,
            inertia: self.principal.max_element(),
            vel: self.vel,
            omega: self.omega,
            material: self.material,
        }
    }
}

impl SphereInit {
    /// Mass of a solid sphere of the given radius and density: (4/3) π r³ ρ.
    pub fn solid_mass(radius: f64, density: f64) -> f64 {
        4.0 / 3.0 * std::f64::consts::PI * radius.powi(3) * density
    }

    /// Moment of inertia of a solid sphere about its centre: (2/5) m r².
    pub fn solid_inertia(mass: f64, radius: f64) -> f64 {
        0.4 * mass * radius * radius
    }
}

impl Bodies {
    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// True when there are no bodies.
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Checks what a `Bodies` read from a file must hold before use: every
    /// array one entry per body, and every shape index in the shapes
    /// table; the reason where not.
    pub fn check_arrays(&self) -> Result<(), String> {
        let n = self.pos.len();
        let lengths = [
            self.rot.len(),
            self.vel.len(),
            self.omega.len(),
            self.radius.len(),
            self.inv_mass.len(),
            self.inv_inertia.len(),
            self.material.len(),
            self.shape.len(),
            self.inv_inertia_body.len(),
        ];
        if lengths.iter().any(|&m| m != n) {
            return Err("the body arrays differ in length".into());
        }
        if let Some(i) =
            (0..n).find(|&i| self.shape[i] != SPHERE && self.shape[i] as usize >= self.shapes.len())
        {
            return Err(format!(
                "body {i} refers to shape {} of the {} held",
                self.shape[i],
                self.shapes.len()
            ));
        }
        Ok(())
    }

    /// Keeps the bodies whose entry in `keep` is true, in their order (the
    /// kept bodies' ids close up); the shapes table stays as it is.
    ///
    /// # Panics
    /// When `keep` is not one entry per body.
    pub fn retain(&mut self, keep: &[bool]) {
        assert_eq!(keep.len(), self.len(), "one keep flag per body");
        fn filter<T>(v: &mut Vec<T>, keep: &[bool]) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
        filter(&mut self.pos, keep);
        filter(&mut self.rot, keep);
        filter(&mut self.vel, keep);
        filter(&mut self.omega, keep);
        filter(&mut self.radius, keep);
        filter(&mut self.inv_mass, keep);
        filter(&mut self.inv_inertia, keep);
        filter(&mut self.material, keep);
        filter(&mut self.shape, keep);
        filter(&mut self.inv_inertia_body, keep);
    }

    /// Appends one sphere; returns its body id.
    pub fn push(&mut self, s: &SphereInit) -> usize {
        self.pos.push(s.pos);
        self.rot.push(DQuat::IDENTITY);
        self.vel.push(s.vel);
        self.omega.push(s.omega);
        self.radius.push(s.radius);
        self.inv_mass.push(1.0 / s.mass);
        self.inv_inertia.push(1.0 / s.inertia);
        self.material.push(s.material);
        self.shape.push(SPHERE);
        self.inv_inertia_body.push(DVec3::splat(1.0 / s.inertia));
        self.len() - 1
    }

    /// Appends a rigid body of any shape; returns its body id. A sphere
    /// with equal principal moments takes the sphere path.
    pub fn push_body(&mut self, b: &BodyInit) -> usize {
        if let Shape::Sphere { radius } = b.shape {
            if b.principal.x == b.principal.y && b.principal.y == b.principal.z {
                let id = self.push(&SphereInit {
                    pos: b.pos,
                    radius,
                    mass: b.mass,
                    inertia: b.principal.x,
                    vel: b.vel,
                    omega: b.omega,
                    material: b.material,
                });
                self.rot[id] = b.rot.normalize();
                return id;
            }
        }
        let inv = b.principal.recip();
        self.pos.push(b.pos);
        self.rot.push(b.rot.normalize());
        self.vel.push(b.vel);
        self.omega.push(b.omega);
        self.radius.push(b.shape.bounding_radius());
        self.inv_mass.push(1.0 / b.mass);
        self.inv_inertia.push(inv.max_element());
        self.material.push(b.material);
        // Bodies of one source share one shape (and its collider and mesh).
        match self.shapes.last() {
            Some(last) if last.shape == b.shape => self.shape.push(self.shapes.len() as u32 - 1),
            _ => {
                self.shape.push(self.shapes.len() as u32);
                self.shapes.push(BodyShape::new(b.shape.clone()));
            }
        }
        self.inv_inertia_body.push(inv);
        self.len() - 1
    }

    /// True when some body is not a plain sphere.
    pub fn has_shapes(&self) -> bool {
        !self.shapes.is_empty()
    }

    /// Body i's shape, `None` for a plain sphere.
    pub fn shape_of(&self, i: usize) -> Option<&BodyShape> {
        match self.shape[i] {
            SPHERE => None,
            k => Some(&self.shapes[k as usize]),
        }
    }

    /// Body i's world inverse inertia R I_b⁻¹ Rᵀ.
    pub fn inv_inertia_world(&self, i: usize) -> DMat3 {
        match self.shape[i] {
            SPHERE => DMat3::from_diagonal(DVec3::splat(self.inv_inertia[i])),
            _ => shape::world_inverse_inertia(self.rot[i], self.inv_inertia_body[i]),
        }
    }

    /// Builds the arrays from a list of sphere initial states.
    pub fn from_inits(inits: &[SphereInit]) -> Self {
        let mut b = Bodies::default();
        for s in inits {
            b.push(s);
        }
        b
    }

    /// Body i's angular momentum about its centre, world frame (kg m²/s).
    pub fn angular_momentum(&self, i: usize) -> DVec3 {
        match self.shape[i] {
            SPHERE => self.omega[i] / self.inv_inertia[i],
            _ => {
                let q = self.rot[i];
                q * ((q.inverse() * self.omega[i]) / self.inv_inertia_body[i])
            }
        }
    }

    /// Total kinetic energy, translational plus rotational (J).
    pub fn kinetic_energy(&self) -> f64 {
        (0..self.len())
            .map(|i| {
                0.5 * self.vel[i].length_squared() / self.inv_mass[i]
                    + 0.5 * self.omega[i].dot(self.angular_momentum(i))
            })
            .sum()
    }

    /// The largest radius (0 when empty).
    pub fn max_radius(&self) -> f64 {
        self.radius.iter().copied().fold(0.0, f64::max)
    }
}
