"""Side directories: other versions of a package for reproducers, never the main environment.

scripts/setup-sidecars.sh fills them (pip install --target); a reproducer puts one first
on the PYTHONPATH of a child process.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DIR = Path(__file__).resolve().parents[2] / ".sidecar"


def path(name: str) -> Path | None:
    """The prepared side directory `name`, or None when set-up has not made it."""
    root = Path(os.environ.get("RLCHECK_SIDECAR_DIR", DEFAULT_DIR))
    candidate = root / name
    return candidate if (candidate / ".done").exists() else None


def missing(name: str) -> str:
    root = os.environ.get("RLCHECK_SIDECAR_DIR", DEFAULT_DIR)
    return f"side directory {name!r} not found under {root}: run ./run setup (scripts/setup-sidecars.sh)"
