"""The exceptions repose raises. Their messages are the command line's."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple


class ReposeError(Exception):
    """Base of repose's own errors."""


class SceneError(ReposeError, ValueError):
    """A scene could not be read, parsed, overridden, validated or built.

    Attributes:
        kind: "io", "syntax", "invalid", "override" or "set".
        file: the scene file (or the label given to ``Scene.from_str``).
        line, col: where a syntax error is (1-based), else None.
        issues: ``(path, reason)`` pairs: each field that is wrong and why.
    """

    def __init__(
        self,
        message: str,
        kind: str = "invalid",
        file: Optional[str] = None,
        line: Optional[int] = None,
        col: Optional[int] = None,
        issues: Optional[List[Tuple[str, str]]] = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.file = file
        self.line = line
        self.col = col
        self.issues = list(issues or [])


class RunError(ReposeError, RuntimeError):
    """A run, a study or a request on a simulation failed (outputs written
    so far stay on disk; the message says what happened and where)."""


class StepError(RunError):
    """A step of a ``Simulation`` failed; ``step`` is its index (1-based)."""

    def __init__(self, message: str, step: Optional[int] = None) -> None:
        super().__init__(message)
        self.step = step


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run or study cleanly.

    ``result`` is what it had done: for ``run``, the summary (its
    ``"stopped"`` is ``"interrupted"``; the outputs are complete for the
    last step and a checkpoint is kept, so ``repose run --resume DIR``
    continues); for ``sweep`` the rows of the runs that finished.
    """

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


# Shown as repose.SceneError (not repose._errors.SceneError) in tracebacks.
for _cls in (ReposeError, SceneError, RunError, StepError, Interrupted):
    _cls.__module__ = "repose"
