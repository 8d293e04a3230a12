//! Building the initial [`World`] of a scene: the generated spheres and
//! bodies, the boundaries (meshes read and placed), the inlets, the
//! materials and the settings.

use glam::DVec3;

use super::error::{Issue, SceneError};
use super::schema::{BoundarySpec, MeshSpec, Scene, SphereSource};
use super::{check, generate};
use crate::bodies::{Bodies, SphereInit};
use crate::boundary::{Boundary, Shape};
use crate::inlet::InletSettings;
use crate::model::Model;
use crate::world::World;

impl Scene {
    /// Validates, generates the spheres and returns the initial [`World`]:
    /// bodies, boundaries, materials, gravity, time step, contact and solver
    /// settings.
    pub fn build(&self) -> Result<World, SceneError> {
        self.build_with(true)
    }

    /// [`build`](Self::build) without its warnings (spheres that start
    /// overlapping a boundary, …): for built-in cases that start so on
    /// purpose, such as `repose validate`'s.
    pub fn build_quietly(&self) -> Result<World, SceneError> {
        self.build_with(false)
    }

    fn build_with(&self, warn: bool) -> Result<World, SceneError> {
        let placed = check::check(self, warn)?;
        let mut bodies = Bodies::default();
        for p in &placed {
            match &p.body {
                Some(b) => bodies.push_body(b),
                None => bodies.push(&p.init),
            };
        }
        let model = Model {
            boundaries: self.built_boundaries()?,
            materials: self.materials.clone(),
            gravity: self.gravity,
            time_step: self.time_step,
            contact: self.contact.clone(),
            solver: self.solver.clone(),
            formulation: self.formulation.clone(),
            inlets: self.inlets(),
        };
        Ok(World::from_model(model, bodies))
    }

    /// The scene's inlets' settings (`radius_max` at least `radius`).
    /// Assumes a validated scene.
    pub fn inlets(&self) -> Vec<InletSettings> {
        self.spheres
            .iter()
            .enumerate()
            .filter_map(|(i, src)| match src {
                SphereSource::Inlet(s) => Some(InletSettings {
                    name: format!("spheres[{i}] (Inlet)"),
                    region: s.region.clone(),
                    rate: s.rate,
                    count: s.count,
                    radius: s.effective_radius(),
                    radius_max: s.largest_radius().max(s.effective_radius()),
                    sizes: s.sizes.clone(),
                    shape: s.shape.as_ref().map(|shape| {
                        generate::prototype(self, shape, s.material, DVec3::ZERO, s.density)
                    }),
                    random_orientation: s.random_orientation,
                    material: s.material,
                    density: s
                        .density
                        .unwrap_or(self.materials[s.material as usize].density),
                    velocity: s.velocity,
                    velocity_jitter: s.velocity_jitter,
                    seed: s.seed,
                    start_time: s.start_time,
                }),
                _ => None,
            })
            .collect()
    }

    /// The prepared surface of a mesh boundary (read once per process per
    /// file version: [`crate::collision::mesh::load_surface`]).
    pub fn mesh_surface(
        &self,
        m: &MeshSpec,
    ) -> Result<crate::collision::mesh::LoadedSurface, crate::mesh::MeshError> {
        crate::collision::mesh::load_surface(&self.mesh_path(m), m.scale, m.flip, m.two_sided)
    }

    /// The boundaries as the simulation sees them (normals normalised,
    /// default names filled in, meshes read). Assumes a validated scene;
    /// the only error left is a mesh file that changed or vanished since.
    pub fn built_boundaries(&self) -> Result<Vec<Boundary>, SceneError> {
        self.boundaries
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let name = self.boundary_name(i);
                Ok(match b {
                    BoundarySpec::Plane(p) => Boundary {
                        name,
                        shape: Shape::Plane {
                            normal: p.normal.normalize_or_zero(),
                        },
                        origin: p.point,
                        velocity: p.velocity,
                        angular_velocity: DVec3::ZERO,
                        start_time: 0.0,
                        material: p.material,
                    },
                    BoundarySpec::Box(bx) => Boundary {
                        name,
                        shape: Shape::BoxContainer {
                            half_extents: bx.half_extents,
                            open_top: bx.open_top,
                        },
                        origin: bx.center,
                        velocity: bx.velocity,
                        angular_velocity: DVec3::ZERO,
                        start_time: 0.0,
                        material: bx.material,
                    },
                    BoundarySpec::Plate(p) => Boundary {
                        name,
                        shape: Shape::Plate {
                            half_x: p.half_extents.x,
                            half_y: p.half_extents.y,
                        },
                        origin: p.center,
                        velocity: p.velocity,
                        angular_velocity: DVec3::ZERO,
                        start_time: 0.0,
                        material: p.material,
                    },
                    BoundarySpec::Cylinder(c) => {
                        let axis = c.axis.normalize_or_zero();
                        Boundary {
                            name,
                            shape: Shape::Cylinder {
                                axis,
                                radius: c.radius,
                                half_length: c.half_length,
                                caps: c.caps,
                            },
                            origin: c.center,
                            velocity: c.velocity,
                            angular_velocity: axis * c.angular_velocity,
                            start_time: c.start_time,
                            material: c.material,
                        }
                    }
                    BoundarySpec::Mesh(m) => {
                        let loaded = self.mesh_surface(m).map_err(|e| SceneError::Invalid {
                            file: self.file.clone(),
                            issues: vec![Issue::new(
                                format!("boundaries[{i}].file"),
                                e.to_string(),
                            )],
                        })?;
                        Boundary {
                            name,
                            shape: Shape::Mesh {
                                surface: loaded.surface,
                                rot: m.rot.unwrap_or_default().normalize(),
                            },
                            origin: m.pos,
                            velocity: m.velocity,
                            angular_velocity: m.angular_velocity,
                            start_time: m.start_time,
                            material: m.material,
                        }
                    }
                })
            })
            .collect()
    }

    /// The mass and inertia of a sphere of radius `r` given the optional
    /// explicit values, the optional density and the material index (which
    /// must be valid).
    pub(super) fn mass_inertia(
        &self,
        r: f64,
        mass: Option<f64>,
        inertia: Option<f64>,
        density: Option<f64>,
        material: u32,
    ) -> (f64, f64) {
        let m = mass.unwrap_or_else(|| {
            let rho = density.unwrap_or(self.materials[material as usize].density);
            SphereInit::solid_mass(r, rho)
        });
        (
            m,
            inertia.unwrap_or_else(|| SphereInit::solid_inertia(m, r)),
        )
    }
}
