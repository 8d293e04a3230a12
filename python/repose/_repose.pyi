"""Type stubs of the compiled module `repose._repose` (see repose/__init__.py
for the user-facing functions built on it)."""

from os import PathLike
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Path = Union[str, PathLike[str]]
_Set = Optional[Mapping[str, Union[str, int, float, bool, None]]]

class Scene:
    """A validated scene: a scene file (RON) with any overrides applied."""

    @staticmethod
    def load(path: _Path, set: _Set = None) -> Scene:
        """Reads, overrides (``--set`` paths) and validates a scene file;
        raises ``repose.SceneError`` naming the file, field and reason."""
    @staticmethod
    def from_str(text: str, name: str = "<string>", set: _Set = None) -> Scene:
        """Parses scene text; ``name`` labels it in errors."""
    def with_set(self, set: Mapping[str, Union[str, int, float, bool, None]]) -> Scene:
        """A copy with the overrides applied and validated."""
    def to_str(self) -> str:
        """The scene as RON text, every field written out."""
    @property
    def name(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def duration(self) -> float:
        """Simulated duration (s)."""
    @property
    def time_step(self) -> float:
        """Time step h (s)."""
    @property
    def steps(self) -> int:
        """Steps of a run to the end."""

class Simulation:
    """A scene's world stepped from Python; arrays returned are copies."""

    def __init__(
        self,
        scene: Union[Scene, _Path],
        backend: str = "auto",
        solver: Optional[str] = None,
        set: _Set = None,
    ) -> None: ...
    def step(self, n: int = 1) -> int:
        """Takes n steps (GIL released); KeyboardInterrupt between steps on Ctrl-C."""
    @property
    def time(self) -> float: ...
    @property
    def step_index(self) -> int: ...
    @property
    def time_step(self) -> float: ...
    @property
    def gravity(self) -> npt.NDArray[np.float64]:
        """Shape (3,), m/s²."""
    @property
    def scene(self) -> Scene: ...
    @property
    def backend(self) -> str: ...
    @property
    def backend_reason(self) -> str: ...
    def __len__(self) -> int: ...
    @property
    def positions(self) -> npt.NDArray[np.float64]:
        """Centres (m), shape (n, 3)."""
    @property
    def velocities(self) -> npt.NDArray[np.float64]:
        """Linear velocities (m/s), shape (n, 3)."""
    @property
    def angular_velocities(self) -> npt.NDArray[np.float64]:
        """World-frame angular velocities (rad/s), shape (n, 3)."""
    @property
    def orientations(self) -> npt.NDArray[np.float64]:
        """Unit quaternions (w, x, y, z), body → world, shape (n, 4)."""
    @property
    def radii(self) -> npt.NDArray[np.float64]: ...
    @property
    def masses(self) -> npt.NDArray[np.float64]: ...
    @property
    def material_ids(self) -> npt.NDArray[np.int64]: ...
    @property
    def shape_ids(self) -> npt.NDArray[np.int64]:
        """-1 for a plain sphere, else the index of the body's shape."""
    @property
    def boundary_names(self) -> List[str]: ...
    def set_velocities(self, v: npt.ArrayLike) -> None: ...
    def set_angular_velocities(self, w: npt.ArrayLike) -> None: ...
    def set_positions(self, x: npt.ArrayLike) -> None: ...
    def remove_bodies(self, ids: npt.ArrayLike) -> None: ...
    @property
    def last_step(self) -> Optional[Dict[str, Any]]:
        """iterations, residual, residual_abs, converged, contacts,
        substeps, fallback_iterations, fallback_seconds, timed_out."""
    @property
    def stage_times(self) -> Dict[str, float]: ...
    def contacts(self) -> Dict[str, npt.NDArray[Any]]:
        """body_a, body_b, boundary, point, normal, gap, normal_force,
        tangential_force, force, spinning_torque, rolling_torque,
        elastic_energy."""

def run_scene(
    scene: Union[Scene, _Path],
    out: Optional[_Path] = None,
    set: _Set = None,
    backend: str = "auto",
    solver: Optional[str] = None,
    frames: bool = True,
    picture: bool = True,
    overwrite: bool = False,
    cli_progress: bool = False,
    on_progress: Optional[Callable[[int, int], None]] = None,
) -> Tuple[str, bool]: ...
def measure_dir(dir: _Path, method: Optional[str] = None, floor: Optional[float] = None) -> str: ...
def sweep(
    scene: _Path,
    vary: Sequence[str],
    set: _Set = None,
    seeds: int = 1,
    jobs: int = 1,
    out: Optional[_Path] = None,
    backend: str = "auto",
    frames: bool = False,
    rerun: bool = False,
    batch: Optional[int] = None,
    cli_progress: bool = False,
) -> Tuple[str, List[str], int, bool]: ...
def calibrate(
    scenes: Sequence[_Path],
    params: Sequence[Tuple[str, float, float]],
    targets: Sequence[float],
    set: _Set = None,
    seeds: int = 1,
    tol: float = 1.0,
    max_evals: int = 12,
    jobs: int = 1,
    out: Optional[_Path] = None,
    backend: str = "auto",
    rerun: bool = False,
    cli_progress: bool = False,
) -> Tuple[str, List[str], bool]: ...
