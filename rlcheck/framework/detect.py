"""Which framework will parse the job: the installed SLIME or Miles when importable, else the recipe's own."""

from __future__ import annotations

import dataclasses
import importlib.util
from importlib import metadata

from rlcheck.framework.schema import DEFAULT_SCHEMA, Schema, load

FRAMEWORKS = ("slime", "miles")
COMMITTED = {("slime", "0.2.4"): "slime-v0.2.4", ("slime", "0.3.1"): "slime-v0.3.1"}
"""Releases with a schema of their own; any other version of a framework is judged by its main schema."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Installed:
    framework: str | None
    """'slime' or 'miles' when importable here (found, not imported: importing SLIME pulls in SGLang and Megatron)."""
    version: str | None = None
    """Its distribution version; None when it is importable but carries no package metadata (a source checkout)."""


def collect_installed() -> Installed:
    for name in FRAMEWORKS:
        if importlib.util.find_spec(name) is not None:
            try:
                return Installed(framework=name, version=metadata.version(name))
            except metadata.PackageNotFoundError:
                return Installed(framework=name)
    return Installed(framework=None)


def choose(installed: Installed, recipe_framework: str) -> tuple[Schema, str]:
    """(the schema that judges, why that one) for this machine and a recipe written for recipe_framework."""
    if installed.framework is None:
        name = DEFAULT_SCHEMA[recipe_framework]
        return load(name), "neither SLIME nor Miles importable here: the committed schema for the recipe's framework"
    name = COMMITTED.get((installed.framework, installed.version or ""), f"{installed.framework}-main")
    version = installed.version or "without package metadata"
    exact = name != f"{installed.framework}-main" or installed.framework == "miles"
    how = f"installed {installed.framework} {version}" + ("" if exact else f": no schema of its own, judged by {name}")
    return load(name), how
