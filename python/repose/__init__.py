"""repose from Python: scenes, runs, studies, and the state as NumPy arrays.

The same scene files, ``--set`` paths, outputs and error messages as the
``repose`` command line::

    import repose

    summary = repose.run("scenes/pile.ron", out="out/pile", overwrite=True)
    print(summary["extra"]["angle_of_repose"]["angle_deg"])

    sim = repose.Simulation("scenes/pile.ron", set={"materials.0.rolling": 0.001})
    sim.run(until=0.5)
    x = sim.positions            # (n, 3) float64, a copy
    c = sim.contacts()           # dict of arrays: body_a, body_b, point, normal, forces

Long calls release the GIL, show progress (tqdm where installed, else the
command line's own progress line) and stop cleanly on Ctrl-C, raising
:class:`Interrupted` with the partial result; the outputs on disk stay
valid. Log lines go to stderr as the command line's do; ``RUST_LOG=warn``
(set before ``import repose``) quiets them.
"""

from __future__ import annotations

import csv
import json
import math
import numbers
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy

from . import _repose
from ._errors import Interrupted, ReposeError, RunError, SceneError, StepError
from ._repose import Scene

__version__ = _repose.__version__

__all__ = [
    "Scene",
    "Simulation",
    "run",
    "measure",
    "sweep",
    "calibrate",
    "read_table",
    "to_frame",
    "ReposeError",
    "SceneError",
    "RunError",
    "StepError",
    "Interrupted",
]

PathLike = Union[str, "os.PathLike[str]"]
SceneLike = Union[Scene, PathLike]


def _bar(total: int, desc: str):
    """A tqdm bar (the notebook one inside Jupyter), or None without tqdm."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit="step", dynamic_ncols=True)


class _Progress:
    """Feeds a tqdm bar from the ``(done, total)`` calls of the compiled layer."""

    def __init__(self, bar) -> None:
        self.bar = bar
        self.shown = 0

    def __call__(self, done: int, total: int) -> None:
        if done > self.shown:
            self.bar.update(done - self.shown)
            self.shown = done


class Simulation(_repose.Simulation):
    """A scene's world, stepped from Python.

    ``Simulation(scene, backend="auto", solver=None, set=None)``: ``scene``
    is a :class:`Scene` or a scene file's path; ``set`` overrides fields by
    their ``--set`` paths; ``backend`` and ``solver`` are as on the command
    line. ``step(n)`` takes n steps, ``run(until=t)`` steps to a time; the
    state (``positions``, ``velocities``, ``angular_velocities``,
    ``orientations``, ``radii``, ``masses``, ``material_ids``,
    ``shape_ids``) comes as NumPy copies, the last step's contacts from
    ``contacts()`` and its solver statistics from ``last_step``.
    """

    def run(
        self,
        until: Optional[float] = None,
        *,
        steps: Optional[int] = None,
        progress: bool = True,
    ) -> int:
        """Steps to the simulated time ``until`` (s; default: the scene's
        duration) or by ``steps`` steps; returns the steps taken. With
        ``progress`` and tqdm installed, a bar shows how far it is.
        Ctrl-C stops after the current step with KeyboardInterrupt."""
        if steps is None:
            end = self.scene.duration if until is None else float(until)
            if not math.isfinite(end):
                raise ValueError(f"run: until must be a finite time in seconds (got {until!r})")
            steps = max(0, round((end - self.time) / self.time_step))
        elif until is not None:
            raise ValueError("run: give until or steps, not both")
        elif isinstance(steps, bool) or not isinstance(steps, numbers.Integral):
            raise TypeError(f"run: steps must be a whole number (got {steps!r})")
        steps = int(steps)
        bar = _bar(steps, self.scene.name) if progress and steps > 0 else None
        taken = 0
        try:
            chunk = max(1, min(100, steps // 100 or 1))
            while taken < steps:
                n = min(chunk, steps - taken)
                self.step(n)
                taken += n
                if bar is not None:
                    bar.update(n)
        finally:
            if bar is not None:
                bar.close()
        return taken


    def remove_bodies(self, ids: Any) -> None:
        """Removes the bodies whose ids are given (whole numbers: a list or
        an integer array); the others keep their order and are numbered
        0, 1, … again. Ids that are not whole numbers (floats, booleans)
        are refused, never truncated."""
        a = numpy.asarray(ids)
        if a.size == 0:
            a = a.astype(numpy.int64)
        if a.dtype.kind not in "iu":
            raise TypeError(
                f"remove_bodies: body ids must be whole numbers (a list of int or an integer array), got {a.dtype} values such as {a.flat[0]!r}"
            )
        super().remove_bodies(a.astype(numpy.int64).ravel())


def _interrupted(what: str, result: Any) -> Interrupted:
    return Interrupted(f"{what} interrupted; its outputs are complete up to where it stopped", result)


def run(
    scene: SceneLike,
    out: Optional[PathLike] = None,
    *,
    set: Optional[Mapping[str, Any]] = None,
    backend: str = "auto",
    solver: Optional[str] = None,
    frames: bool = True,
    picture: bool = True,
    overwrite: bool = False,
    progress: bool = True,
) -> Dict[str, Any]:
    """Runs a scene to its end as ``repose run`` does and returns its
    summary (the ``summary.json`` the run writes, as a dict).

    ``out`` is the output directory (default ``out/<scene name>/``);
    ``frames=False`` writes no VTU frames, ``picture=False`` no
    ``final.png``; ``overwrite`` replaces an earlier run's outputs there.
    Raises :class:`SceneError` for a bad scene, :class:`RunError` when the
    run fails (outputs so far stay), :class:`Interrupted` on Ctrl-C (with
    the summary in ``.result``)."""
    if not isinstance(scene, Scene):
        scene = Scene.load(os.fspath(scene), set=set)
        set = None
    elif set:
        scene = scene.with_set(set)
        set = None
    bar = _bar(scene.steps, scene.name) if progress else None
    on_progress = _Progress(bar) if bar is not None else None
    try:
        text, interrupted = _repose.run_scene(
            scene,
            out=None if out is None else os.fspath(out),
            backend=backend,
            solver=solver,
            frames=frames,
            picture=picture,
            overwrite=overwrite,
            cli_progress=progress and bar is None,
            on_progress=on_progress,
        )
    finally:
        if bar is not None:
            bar.close()
    summary = json.loads(text)
    if interrupted:
        raise _interrupted("the run", summary)
    return summary


def measure(dir: PathLike, *, method: Optional[str] = None, floor: Optional[float] = None) -> Dict[str, Any]:
    """Measures the heap in a run's output directory again, as ``repose
    measure`` does (recording it in its ``summary.json``); returns the
    measurement: ``angle_deg``, ``angle_stderr_deg``, ``height``,
    ``base_radius``, the flanks' fits, and ``floor_source``. ``method`` is
    "radial" (a conical heap) or "x"/"y" (a planar one); ``floor`` the
    floor height (m)."""
    return json.loads(_repose.measure_dir(os.fspath(dir), method=method, floor=floor))


def _number(text: str) -> Any:
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_table(path: PathLike) -> List[Dict[str, Any]]:
    """A CSV table that repose wrote (``sweep.csv``, ``calibrate.csv``,
    ``walls.csv``, ``final.csv``) as a list of dicts, numbers as int or
    float and empty cells as None."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            rows = [{k: _number(v) for k, v in row.items()} for row in reader]
            header = reader.fieldnames or []
    except (UnicodeDecodeError, csv.Error) as e:
        raise ValueError(f"{os.fspath(path)}: not a table repose wrote ({e})") from None
    if any("\x00" in h for h in header):
        raise ValueError(f"{os.fspath(path)}: not a table repose wrote (its header holds NUL bytes)")
    if rows and any(None in row for row in rows):
        line = next(i for i, row in enumerate(rows) if None in row) + 2
        raise ValueError(f"{os.fspath(path)}:{line}: more fields than the header has: not a table repose wrote")
    return rows


def to_frame(rows: Iterable[Mapping[str, Any]]):
    """A pandas DataFrame of a table's rows (needs pandas)."""
    try:
        import pandas as pd
    except ImportError as e:
        raise ImportError("to_frame needs pandas: pip install pandas") from e
    return pd.DataFrame(list(rows))


def _vary_args(vary: Union[Mapping[str, Any], Sequence[str]]) -> List[str]:
    if isinstance(vary, Mapping):
        args = []
        for path, values in vary.items():
            if isinstance(values, str):
                spec = values
            else:
                spec = ",".join(repr(float(v)) if not isinstance(v, str) else v for v in values)
            args.append(f"{path}={spec}")
        return args
    if isinstance(vary, str):
        return [vary]
    return list(vary)


def _scene_file(scene: SceneLike, out_dir: str, name: str) -> str:
    """The path of a scene file for the studies, which read files (their
    manifests record the file and its hash, for reruns and merges): a
    path as given; a :class:`Scene` written as RON to ``out_dir/name``,
    inside the study's own directory, so that the study can be rerun from
    its outputs alone."""
    if not isinstance(scene, Scene):
        return os.fspath(scene)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(scene.to_str())
    return path


def sweep(
    scene: SceneLike,
    vary: Union[Mapping[str, Any], Sequence[str]],
    *,
    set: Optional[Mapping[str, Any]] = None,
    seeds: int = 1,
    jobs: int = 1,
    out: Optional[PathLike] = None,
    backend: str = "auto",
    frames: bool = False,
    rerun: bool = False,
    batch: Optional[int] = None,
    progress: bool = True,
    frame: bool = False,
):
    """Runs a parameter sweep as ``repose sweep`` does and returns
    ``sweep.csv`` as a list of dicts (a pandas DataFrame with
    ``frame=True``).

    ``vary`` maps scene paths to values — a list (``[0, 0.001, 0.002]``)
    or the command line's text (``"0:0.0025:6"``); ``"a+b"`` sets both
    paths — or is a list of ``--vary`` arguments. ``set`` maps scene paths
    to the values every run takes alike (``repose sweep --set``; not a
    varied path). ``scene`` is a :class:`Scene` or a scene file's path; a
    :class:`Scene` is written to ``<out>/base_scene.ron``, the file the
    sweep then records. Outputs go to ``out``
    (default ``out/<name>_sweep/``): ``sweep.csv``, ``sweep.png``, the
    contact sheet and ``runs/``. Runs that failed have their ``error``
    filled in; Ctrl-C raises :class:`Interrupted` with the rows so far."""
    if isinstance(scene, Scene) and out is None:
        out = os.path.join("out", f"{scene.name}_sweep")
    scene_file = _scene_file(scene, "" if out is None else os.fspath(out), "base_scene.ron")
    out_dir, _files, _failed, interrupted = _repose.sweep(
        scene_file,
        _vary_args(vary),
        set=set,
        seeds=seeds,
        jobs=jobs,
        out=None if out is None else os.fspath(out),
        backend=backend,
        frames=frames,
        rerun=rerun,
        batch=batch,
        cli_progress=progress,
    )
    table = Path(out_dir) / "sweep.csv"
    rows = read_table(table) if table.is_file() else []
    if interrupted:
        raise _interrupted("the sweep", rows)
    return to_frame(rows) if frame else rows


def calibrate(
    scenes: Union[SceneLike, Sequence[SceneLike]],
    params: Mapping[str, Tuple[float, float]],
    targets: Union[float, Sequence[float]],
    *,
    set: Optional[Mapping[str, Any]] = None,
    seeds: int = 1,
    tol: float = 1.0,
    max_evals: int = 12,
    jobs: int = 1,
    out: Optional[PathLike] = None,
    backend: str = "auto",
    rerun: bool = False,
    progress: bool = True,
) -> Dict[str, Any]:
    """Finds the parameters that give measured angles, as ``repose
    calibrate`` does: ``params`` maps scene paths to ``(low, high)``
    ranges, ``targets`` gives one angle (degrees) per scene, ``set`` maps
    scene paths to the values every run takes alike (``repose calibrate
    --set``; not a calibrated path). Returns the
    outcome: ``status``, ``estimate``, ``interval``, ``message`` and
    ``evaluations``, plus ``files`` (what it wrote) and ``table`` (the rows
    of ``calibrate.csv``). Each scene is a :class:`Scene` or a scene
    file's path; a :class:`Scene` is written to ``<out>/scene_<i>.ron``
    (``i`` its place in ``scenes``), the file the calibration records."""
    if isinstance(scenes, (str, os.PathLike, Scene)):
        scenes = [scenes]
    scenes = list(scenes)
    if out is None and scenes and isinstance(scenes[0], Scene):
        out = os.path.join("out", f"{scenes[0].name}_calibrate")
    scenes = [
        _scene_file(s, "" if out is None else os.fspath(out), f"scene_{i}.ron")
        for i, s in enumerate(scenes)
    ]
    if isinstance(targets, (int, float)):
        targets = [targets]
    text, files, interrupted = _repose.calibrate(
        scenes,
        [(p, float(lo), float(hi)) for p, (lo, hi) in params.items()],
        [float(t) for t in targets],
        set=set,
        seeds=seeds,
        tol=tol,
        max_evals=max_evals,
        jobs=jobs,
        out=None if out is None else os.fspath(out),
        backend=backend,
        rerun=rerun,
        cli_progress=progress,
    )
    outcome = json.loads(text)
    outcome["files"] = [os.fspath(f) for f in files]
    tables = [f for f in files if Path(f).name == "calibrate.csv"]
    outcome["table"] = read_table(tables[0]) if tables else []
    if interrupted:
        raise _interrupted("the calibration", outcome)
    return outcome
