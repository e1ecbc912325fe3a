"""Where collectors read installed packages from: the live environment, or a recording."""

from __future__ import annotations

import json
from importlib import metadata, util
from pathlib import Path
from typing import Protocol


def package_root(top: str) -> Path | None:
    """The folder holding the top-level package `top` (site-packages, usually), found without importing it."""
    try:
        spec = util.find_spec(top)
    except (ImportError, ValueError):  # a parent package missing or broken
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent


class PackageSource(Protocol):
    def version(self, name: str) -> str | None:
        """Installed version of a distribution, None when absent."""
        ...

    def requires(self, name: str) -> list[str]:
        """The distribution's Requires-Dist lines ([] when absent or none)."""
        ...


class InstalledPackages:
    """The packages of the Python environment running rlcheck."""

    def version(self, name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    def requires(self, name: str) -> list[str]:
        try:
            return list(metadata.requires(name) or [])
        except metadata.PackageNotFoundError:
            return []


class RecordedPackages:
    """Replays a recording: {"versions": {name: version|null}, "requires": {name: [lines]}}."""

    def __init__(self, data: dict[str, dict[str, object]]) -> None:
        self._versions = data.get("versions", {})
        self._requires = data.get("requires", {})

    @classmethod
    def from_file(cls, path: Path) -> RecordedPackages:
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def version(self, name: str) -> str | None:
        value = self._versions.get(name)
        return str(value) if value is not None else None

    def requires(self, name: str) -> list[str]:
        value = self._requires.get(name, [])
        return [str(x) for x in value] if isinstance(value, list) else []
