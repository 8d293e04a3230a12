"""Physics driven from Python: a closed form, and the contacts' forces
against the bodies' change of momentum."""

import numpy as np

import repose

from conftest import SCENES

ROLLING = """
Scene(
    version: 1,
    name: "rolling_stop",
    time_step: 1e-3,
    duration: 3.0,
    gravity: (0.0, 0.0, -9.81),
    solver: (method: Apgd, max_iterations: 3000, tolerance: 1e-8),
    materials: [(name: "m", friction: 0.8, rolling: 0.002, spinning: 0.0, density: 1000.0)],
    spheres: [Sphere(pos: (0.0, 0.0, 0.05), radius: 0.05, velocity: (0.5, 0.0, 0.0),
                     angular_velocity: (0.0, 10.0, 0.0), material: 0)],
    boundaries: [Plane(name: "floor", point: (0.0, 0.0, 0.0), normal: (0.0, 0.0, 1.0), material: 0)],
)
"""


def test_rolling_resistance_stops_a_sphere_at_the_closed_form_distance():
    # Tasora & Anitescu 2013, §6.1 for a sphere: uniform deceleration
    # a = (5/7) rho g / R, stopping distance 7 R v0^2 / (10 rho g) = 0.4460 m
    # after 1.784 s.
    r, v0, rho, g = 0.05, 0.5, 0.002, 9.81
    a = 5.0 / 7.0 * rho * g / r
    d_stop = v0 * v0 / (2.0 * a)
    sim = repose.Simulation(repose.Scene.from_str(ROLLING), backend="cpu")
    sim.run(until=1.5 * v0 / a, progress=False)
    x = sim.positions[0, 0]
    # The step's discretisation moves the stop by at most v0 h = 5e-4 m
    # (0.11 %) and the solver's 1e-8 tolerance by far less: 1 % is the
    # bound `repose validate` holds its rolling_resistance case to.
    tol = 0.01 * d_stop
    assert abs(x - d_stop) <= tol, f"stopping distance {x:.6f} m, closed form {d_stop:.6f} m, tolerance {tol:.2e} m"
    speed = np.linalg.norm(sim.velocities[0])
    assert speed <= 1e-6, f"final speed {speed:.3e} m/s, expected 0 (at rest after the stop)"


def momentum_balance(sim):
    """Takes one step; returns the largest force and torque misfits (N,
    N m), the weight of the heaviest body, and the step's contacts."""
    v0, w0, x0 = sim.velocities, sim.angular_velocities, sim.positions
    sim.step(1)
    c = sim.contacts()
    h, g, m = sim.time_step, sim.gravity, sim.masses
    inertia = 0.4 * m * sim.radii**2
    n = len(sim)
    force = np.zeros((n, 3))
    torque = np.zeros((n, 3))
    t_contact = c["spinning_torque"][:, None] * c["normal"] + c["rolling_torque"]
    for k in range(len(c["body_a"])):
        a, b = c["body_a"][k], c["body_b"][k]
        f, p = c["force"][k], c["point"][k]
        force[a] -= f
        torque[a] -= np.cross(p - x0[a], f) + t_contact[k]
        if b >= 0:
            force[b] += f
            torque[b] += np.cross(p - x0[b], f) + t_contact[k]
    want_f = m[:, None] * ((sim.velocities - v0) / h - g)
    want_t = inertia[:, None] * (sim.angular_velocities - w0) / h
    weight = m.max() * np.linalg.norm(g)
    return np.abs(force - want_f).max(), np.abs(torque - want_t).max(), weight, c


def test_contact_forces_add_up_to_each_bodys_change_of_momentum():
    # v+ = v + h g + h/m sum(+-F) for every sphere (Tasora & Anitescu 2013,
    # eq. 44), and w+ = w + h/I sum(+-(s x F + T)): the contacts' mean forces
    # and torques over a step give back each body's change of velocity to
    # rounding.
    # A pile being poured: sliding, rolling and spinning contacts.
    sim = repose.Simulation(SCENES / "pile.ron", backend="cpu", set={"spheres.0.count": 300})
    sim.step(250)
    err_f, err_t, weight, c = momentum_balance(sim)
    r = sim.radii.max()
    m = len(c["body_a"])
    assert m > len(sim), f"{m} contacts among {len(sim)} spheres"
    assert np.abs(c["rolling_torque"]).max() > 0 and np.abs(c["tangential_force"]).max() > 0
    # Each side sums a few f64 terms of up to ~100 weights (impacts):
    # rounding leaves < 1e-12 of that.
    assert err_f <= 1e-10 * weight, f"force balance off by {err_f:.3e} N (weight {weight:.3e} N)"
    assert err_t <= 1e-10 * weight * r, f"torque balance off by {err_t:.3e} N m (weight x radius {weight * r:.3e} N m)"


def test_a_settled_columns_floor_carries_its_weight():
    sim = repose.Simulation(SCENES / "column.ron", backend="cpu", set={"solver.tolerance": 1e-10})
    sim.step(300)
    err_f, _, weight, c = momentum_balance(sim)
    assert err_f <= 1e-10 * weight, f"force balance off by {err_f:.3e} N (weight {weight:.3e} N)"
    # End B of a boundary contact is the wall: the forces on the walls add
    # up to the column's weight, less its (vanishing) acceleration.
    on_walls = c["force"][c["body_b"] < 0].sum(axis=0)
    total = sim.masses.sum() * np.linalg.norm(sim.gravity)
    # At rest after 0.3 s (speeds below 1e-9 m/s, changing by less than
    # that a step), the column's momentum changes by < 1e-6 h weights.
    assert abs(-on_walls[2] - total) <= 1e-6 * total, f"the walls carry {-on_walls[2]:.9f} N, the column weighs {total:.9f} N"
