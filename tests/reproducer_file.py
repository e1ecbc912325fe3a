"""A file under reproducers/ loaded as a module of its own name (reproducers/ is no package), for the rule tables that
test what a reproducer or its conftest decides without running it."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load(file_name: str, module_name: str) -> types.ModuleType:
    """reproducers/<file_name> executed as a fresh module called module_name."""
    spec = importlib.util.spec_from_file_location(module_name, ROOT / "reproducers" / file_name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
