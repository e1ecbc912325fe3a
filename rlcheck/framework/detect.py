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
JOB_SOURCE = "stated by the job"
"""How a framework read from the job itself (its RayJob image, its Miles launcher, its trainer path) is sourced."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Installed:
    framework: str | None
    """'slime' or 'miles' when importable here (found, not imported: importing SLIME pulls in SGLang and Megatron)
    or declared; None when neither."""
    version: str | None = None
    """Its release version ('0.3.1'); None when unknown or not a release (a source checkout between tags, main)."""
    main: bool = False
    """A checkout of main (a git commit with no release tag) or declared ==main: newer than every release. With
    version None and main False the release is unknown (no metadata, no git), which is not the same."""
    source: str = ""
    """How it was known: 'package metadata', 'git tag v0.3.1', 'git commit 624b824a8', '--framework',
    or JOB_SOURCE and the job (the job's own framework, judged only when nothing is declared or importable)."""

    def __post_init__(self) -> None:
        if self.main and self.version is not None:
            raise ValueError(f"main=True with version={self.version!r}: main has no release version")

    @property
    def release(self) -> str:
        """Its version as the verdicts say it: '0.3.1', 'main', or 'of unknown release'."""
        return self.version or ("main" if self.main else "of unknown release")

    @property
    def from_job(self) -> bool:
        return self.source.startswith(JOB_SOURCE)

    def describe(self) -> str:
        """For the report: the framework and version judged, and how rlcheck knows."""
        if self.framework is None:
            return "neither SLIME nor Miles importable here (judged by the recipe's framework's committed schema)"
        return f"{self.framework} {self.release} ({self.source or 'importable'})"


def parse_declared(text: str) -> Installed:
    """--framework slime==0.2.4 | miles==main; ValueError naming what is allowed."""
    match = DECLARED.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"--framework={text!r}: expected slime==VERSION or miles==VERSION (e.g. slime==0.2.4, "
                         "slime==main)")
    main = match.group(2) == "main"
    return Installed(framework=match.group(1), version=None if main else match.group(2), main=main,
                     source="--framework")


def checkout_version(package_dir: Path, timeout_s: float = 10.0) -> tuple[str | None, str]:
    """(release version, how) of a source checkout (package_dir: its package, whose parent is the tree): its exact
    tag, else its commit (main, how starting 'git commit'); (None, why) when git cannot say. A version file in the
    tree (setup.py) is not read: main carries the last release's there."""
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
            version, how = checkout_version(Path(places[0]))
            return Installed(framework=name, version=version, main=how.startswith("git commit"), source=how)
    return Installed(framework=None)


def resolve(declared: Installed | None) -> Installed:
    """--framework wins over what is installed here (preflight may run outside the training image)."""
    return declared if declared is not None else collect_installed()


def with_job(here: Installed, framework: str, version: str | None, how: str) -> Installed:
    """The framework judged: `here` (--framework, else the one importable) when it names one; else the job's own
    framework when the job states its version (how: where the job says it); else `here` (none: each check falls
    back to the recipe's framework, which a job's Recipe takes from the job)."""
    if here.framework is not None or framework not in FRAMEWORKS or not version:
        return here
    main = version == "main"
    return Installed(framework=framework, version=None if main else version.removeprefix("v"), main=main,
                     source=f"{JOB_SOURCE}: {how}")


def overlay_versions(versions: dict[str, str | None], installed: Installed | None) -> dict[str, str | None]:
    """Catalogue versions with slime/miles read from the framework judged (a checkout carries no metadata)."""
    out = dict(versions)
    for name in FRAMEWORKS:
        if name in out and installed is not None and installed.framework == name and installed.version:
            out[name] = installed.version
    return out


def choose(installed: Installed, recipe_framework: str, recipe_why: str = "the recipe's framework"
           ) -> tuple[Schema, str]:
    """(the schema that judges, why that one) for this machine and a recipe written for recipe_framework;
    recipe_why: where the recipe's framework came from, for the reason when nothing else names one."""
    if installed.framework is None:
        name = DEFAULT_SCHEMA[recipe_framework]
        return load(name), f"neither SLIME nor Miles importable here: the committed schema for {recipe_why}"
    name = COMMITTED.get((installed.framework, installed.version or ""), f"{installed.framework}-main")
    version = installed.version or ("main" if installed.main else "without a release version")
    exact = name != f"{installed.framework}-main" or installed.framework == "miles" or installed.main
    verb = "declared" if installed.source == "--framework" else "the job's own" if installed.from_job else "installed"
    how = f"{verb} {installed.framework} {version}" + ("" if exact else f": no schema of its own, judged by {name}")
    if installed.from_job:
        how += f" ({installed.source}; none declared with --framework or importable here)"
    return load(name), how
