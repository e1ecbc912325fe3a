"""Which framework will parse the job, and at which version: declared (--framework slime==0.2.4), else the
installed SLIME or Miles (package metadata, else its git checkout's tag or commit), else the recipe's own."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from importlib import metadata
from pathlib import Path

from rlcheck.framework.schema import DEFAULT_SCHEMA, Schema, load
from rlcheck.process import subproc

FRAMEWORKS = ("slime", "miles")
COMMITTED = {("slime", "0.2.4"): "slime-v0.2.4", ("slime", "0.3.1"): "slime-v0.3.1"}
"""Releases with a schema of their own; any other version of a framework is judged by its main schema."""
DECLARED = re.compile(r"(slime|miles)==v?([0-9][0-9A-Za-z.+-]*|main)")
TAG = re.compile(r"v?(\d+(?:\.\d+)+(?:\.post\d+)?)")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Installed:
    framework: str | None
    """'slime' or 'miles' when importable here (found, not imported: importing SLIME pulls in SGLang and Megatron)
    or declared; None when neither."""
    version: str | None = None
    """Its release version ('0.3.1'); None when unknown or not a release (a source checkout between tags, main)."""
    source: str = ""
    """How it was known: 'package metadata', 'git tag v0.3.1', 'git commit 624b824a8', '--framework'."""

    def describe(self) -> str:
        """For the report: the framework and version judged, and how rlcheck knows."""
        if self.framework is None:
            return "neither SLIME nor Miles importable here (judged by the recipe's framework's committed schema)"
        return f"{self.framework} {self.version or 'of unknown release'} ({self.source or 'importable'})"


def parse_declared(text: str) -> Installed:
    """--framework slime==0.2.4 | miles==main; ValueError naming what is allowed."""
    match = DECLARED.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"--framework={text!r}: expected slime==VERSION or miles==VERSION (e.g. slime==0.2.4, "
                         "slime==main)")
    version = None if match.group(2) == "main" else match.group(2)
    return Installed(framework=match.group(1), version=version, source="--framework")


def _checkout_version(package_dir: Path, timeout_s: float = 10.0) -> tuple[str | None, str]:
    """(release version, how) of a source checkout: its exact tag, else its commit; (None, why) when git cannot say."""
    root = str(package_dir.parent)
    try:
        tag = subproc.run(["git", "-C", root, "describe", "--tags", "--exact-match"], timeout_s=timeout_s)
    except OSError as exc:  # no git in the image
        return None, f"no package metadata, and git could not run: {exc.strerror or exc}"
    if tag.returncode == 0 and (match := TAG.fullmatch(tag.stdout.strip())):
        return match.group(1), f"git tag {tag.stdout.strip()}"
    head = subproc.run(["git", "-C", root, "rev-parse", "--short=9", "HEAD"], timeout_s=timeout_s)
    if head.returncode == 0 and head.stdout.strip():
        return None, f"git commit {head.stdout.strip()} (no release tag: judged as main)"
    return None, "no package metadata and no git checkout"


def collect_installed() -> Installed:
    for name in FRAMEWORKS:
        spec = importlib.util.find_spec(name)
        if spec is None:
            continue
        try:
            return Installed(framework=name, version=metadata.version(name), source="package metadata")
        except metadata.PackageNotFoundError:
            places = list(spec.submodule_search_locations or ())
            if not places:
                return Installed(framework=name, source="no package metadata")
            version, how = _checkout_version(Path(places[0]))
            return Installed(framework=name, version=version, source=how)
    return Installed(framework=None)


def resolve(declared: Installed | None) -> Installed:
    """--framework wins over what is installed here (preflight may run outside the training image)."""
    return declared if declared is not None else collect_installed()


def overlay_versions(versions: dict[str, str | None], installed: Installed | None) -> dict[str, str | None]:
    """Catalogue versions with slime/miles read from the framework judged (a checkout carries no metadata)."""
    out = dict(versions)
    for name in FRAMEWORKS:
        if name in out and installed is not None and installed.framework == name and installed.version:
            out[name] = installed.version
    return out


def choose(installed: Installed, recipe_framework: str) -> tuple[Schema, str]:
    """(the schema that judges, why that one) for this machine and a recipe written for recipe_framework."""
    if installed.framework is None:
        name = DEFAULT_SCHEMA[recipe_framework]
        return load(name), "neither SLIME nor Miles importable here: the committed schema for the recipe's framework"
    name = COMMITTED.get((installed.framework, installed.version or ""), f"{installed.framework}-main")
    version = installed.version or "without a release version"
    exact = name != f"{installed.framework}-main" or installed.framework == "miles"
    verb = "declared" if installed.source == "--framework" else "installed"
    how = f"{verb} {installed.framework} {version}" + ("" if exact else f": no schema of its own, judged by {name}")
    return load(name), how
