"""What one trial of a kernel under a pass config came to: the bisect's currency (kernels.bisect, bisect_target)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    bad: bool
    """The kernel failed its check (non-finite values or error over the bound)."""
    detail: str
    """One line, e.g. `dq: nonfinite 98.2%, ...`."""
    error: str = ""
    """Compile or launch error; an errored trial is neither bad nor a cure."""
    metrics: dict[str, Any] = field(default_factory=dict)
