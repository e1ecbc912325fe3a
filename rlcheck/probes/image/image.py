"""Image checks: what the training image has installed, judged without a GPU and without importing GPU code."""

from __future__ import annotations

import dataclasses
import platform
import sys
from collections.abc import Iterable, Mapping
from importlib import machinery, util
from typing import Any

from rlcheck import catalog
from rlcheck.hardware import HardwareProfile
from rlcheck.probes.node.packages import InstalledPackages, PackageSource
from rlcheck.verdict import Status, Verdict

FIRST_WITH_TRAINING = "0.17.0"  # megatron-core wheels ship megatron.training from 0.17.0 (Megatron-LM #3573)


def _has_module(name: str) -> bool:
    """name is where Python's import system finds it (sys.modules, then each parent's search path), found without
    running any package's code: importlib's find_spec imports the parents, and megatron.training's __init__ imports
    torch and Megatron's whole training loop (a minute on a loaded host, in a Slurm prolog that has 25 s)."""
    try:
        parts = name.split(".")
        spec = util.find_spec(parts[0])  # a top-level module: nothing runs
        for i in range(1, len(parts)):
            locations = spec.submodule_search_locations if spec is not None else None
            if locations is None:  # not found, or a module that is no package
                return False
            child = ".".join(parts[:i + 1])
            if ".".join(parts[:i]) in sys.modules:  # the parent is imported: its own __path__, as an import would
                spec = util.find_spec(child)
            else:
                spec = machinery.PathFinder.find_spec(child, list(locations))
        return spec is not None
    except (ImportError, ValueError):  # a parent package missing or broken
        return False


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class MegatronObservation:
    megatron_core: str | None
    """megatron-core version, None when not installed as a wheel (e.g. Megatron-LM from git)."""
    has_core: bool
    has_training: bool
    """megatron.training.arguments importable (what SLIME's train.py needs)."""


def collect_megatron(packages: PackageSource | None = None) -> MegatronObservation:
    packages = packages or InstalledPackages()
    return MegatronObservation(megatron_core=packages.version("megatron-core"), has_core=_has_module("megatron.core"),
                               has_training=_has_module("megatron.training.arguments"))


def evaluate_megatron_training(obs: MegatronObservation) -> Verdict:
    base = {"failure_id": "megatron-training-missing"}
    where = f"megatron-core {obs.megatron_core}" if obs.megatron_core else "Megatron"
    if not obs.has_core and not obs.has_training:
        return Verdict(**base, status=Status.SKIP, summary="needs Megatron (megatron.core): found none installed")
    if obs.has_training:
        return Verdict(**base, status=Status.PASS, summary=f"{where} provides megatron.training.arguments")
    return Verdict(**base, status=Status.FAIL, remedy=catalog.get("megatron-training-missing").remedy,
                   summary=f"{where} has no megatron.training (validate_args): it ships from megatron-core "
                           f"{FIRST_WITH_TRAINING}, or put Megatron-LM from git on PYTHONPATH")


MBRIDGE_INTERNAL_FROM = "0.3.1"  # SLIME's tools/convert_hf_to_torch_dist.py uses its own hf_to_megatron from v0.3.1


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class MbridgeObservation:
    has_mbridge: bool
    slime: str | None = None
    """The SLIME judged: a release ('0.2.4'), 'main' (a checkout of main, newer than every release), 'unknown'
    (installed, release not known); None: no SLIME here or declared (judged as the reference image's v0.2.4)."""


def evaluate_mbridge(recipe_is_moe: bool, recipe_id: str, has_mbridge: bool, slime: str | None = None) -> Verdict:
    """slime: as MbridgeObservation.slime."""
    base = {"failure_id": "mbridge-missing"}
    if not recipe_is_moe:
        return Verdict(**base, status=Status.SKIP, summary=f"{recipe_id} is dense: its torch_dist checkpoint ships "
                                                           "converted, mbridge is not needed")
    internal = mbridge_internal(slime)
    if internal:
        return Verdict(**base, status=Status.SKIP, summary=f"SLIME {slime} converts HF -> Megatron without mbridge "
                                                           f"(its own since {MBRIDGE_INTERNAL_FROM})")
    if has_mbridge:
        return Verdict(**base, status=Status.PASS, summary=f"mbridge importable for {recipe_id}'s HF -> Megatron "
                                                           "conversion")
    if internal is None:
        said = "of unknown release" if slime == "unknown" else f"{slime!r} (not a release version)"
        return Verdict(**base, status=Status.UNKNOWN,
                       summary=f"mbridge is not installed, and SLIME {said} needs it only before "
                               f"{MBRIDGE_INTERNAL_FROM}: pass --framework slime==VERSION to judge {recipe_id}")
    return Verdict(**base, status=Status.FAIL, remedy=catalog.get("mbridge-missing").remedy,
                   summary=f"{recipe_id} converts its HF checkpoint with mbridge: not installed"
                           + (f" (SLIME {slime})" if slime else
                              " (no SLIME here or declared: judged as the reference image's SLIME v0.2.4)"))


def mbridge_internal(slime: str | None) -> bool | None:
    """SLIME converts without mbridge: True from 0.3.1 and on main; False before (and with no SLIME: the reference
    v0.2.4); None when its release cannot be told."""
    from packaging.version import InvalidVersion, Version

    if slime is None:
        return False
    if slime == "main":
        return True
    try:
        return Version(slime) >= Version(MBRIDGE_INTERNAL_FROM)
    except InvalidVersion:  # 'unknown', or a string that is no version
        return None


def collect_mbridge() -> MbridgeObservation:
    from importlib import metadata

    try:
        slime = metadata.version("slime") if _has_module("slime") else None
    except metadata.PackageNotFoundError:  # a source checkout: the registry's collector reads its git tag instead
        slime = "unknown"
    return MbridgeObservation(has_mbridge=_has_module("mbridge"), slime=slime)


def live_failures(versions: dict[str, str | None]) -> list[catalog.KnownFailure]:
    """Catalogue entries whose every affected package is installed inside its range."""
    return [e for e in catalog.load_catalog().values() if e.live_in(versions) is True]


def evaluate_versions(versions: dict[str, str | None], guarded_by: Mapping[str, str] | None = None) -> Verdict:
    """guarded_by: catalogue id -> the check or reproducer that guards it (from the check registry)."""
    installed = ", ".join(f"{k} {v}" for k, v in sorted(versions.items()) if v)
    live = live_failures(versions)
    if not live:
        return Verdict(status=Status.PASS, summary="no installed version is in a known failure's range",
                       details=installed)
    lines = [f"{e.id}: {', '.join(f'{a.package} {versions[a.package]} in {a.specifier}' for a in e.affected)}; "
             f"guarded by {(guarded_by or {}).get(e.id) or e.reproducer or 'the scanner'}" for e in live]
    return Verdict(status=Status.WARN, details="\n".join([installed, *lines]),
                   summary=f"{len(live)} known failure(s) live at these versions, each guarded by its own check: "
                           f"{', '.join(e.id for e in live)}")


def affected_packages() -> tuple[str, ...]:
    return tuple(sorted({a.package for e in catalog.load_catalog().values() for a in e.affected}))


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ArchObservation:
    machine: str
    """platform.machine() of this host: x86_64 or aarch64."""
    foreign_wheels: tuple[str, ...]
    """Installed distributions whose wheel tags name another CPU architecture."""


def foreign_wheels(machine: str, wheels: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """Distributions (name version, WHEEL file text) whose wheel tags name another CPU than machine."""
    other = "aarch64" if machine == "x86_64" else "x86_64"
    return tuple(sorted(name for name, text in wheels
                        if any(line.startswith("Tag:") and line.rstrip().endswith(other)
                               for line in text.splitlines())))


def _name_version(dist: Any) -> str:
    """'name version' from the METADATA header's own lines: importlib's metadata parses the whole file as an e-mail
    (seconds for an image's few hundred distributions); the parse stays the fallback for an odd header."""
    head: dict[str, str] = {}
    for line in (dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "").splitlines():
        if not line.strip():  # the header ends at the first blank line
            break
        field, sep, value = line.partition(": ")
        if sep and field in ("Name", "Version"):
            head.setdefault(field, value)
    if "Name" in head and "Version" in head:
        return f"{head['Name'].strip()} {head['Version'].strip()}"
    return f"{dist.metadata['Name']} {dist.version}"


def _installed_wheels() -> list[tuple[str, str]]:
    from importlib import metadata

    return [(_name_version(d), d.read_text("WHEEL") or "") for d in metadata.distributions()]


def collect_arch(machine: str | None = None, wheels: Iterable[tuple[str, str]] | None = None) -> ArchObservation:
    """This host's CPU and the installed wheels built for another (both injectable for recorded inputs)."""
    machine = machine or platform.machine()
    return ArchObservation(machine=machine,
                           foreign_wheels=foreign_wheels(machine, _installed_wheels() if wheels is None else wheels))


def evaluate_arch(obs: ArchObservation, profile: HardwareProfile | None) -> Verdict:
    if obs.foreign_wheels:
        return Verdict(status=Status.FAIL, details="\n".join(obs.foreign_wheels),
                       summary=f"{len(obs.foreign_wheels)} installed wheel(s) built for another CPU than this "
                               f"{obs.machine} host: {', '.join(obs.foreign_wheels[:3])}",
                       remedy="Build the image for the hosts' architecture (GB200/GB300 hosts are aarch64); "
                              "rebuild or replace x86_64-only wheels such as the sgl-router wheel.")
    if profile is not None and profile.cpu_arch != obs.machine:
        return Verdict(status=Status.FAIL,
                       summary=f"this image runs on {obs.machine}; {profile.name} hosts are {profile.cpu_arch}",
                       remedy=f"Build and check the image on {profile.cpu_arch} (a multi-arch build).")
    return Verdict(status=Status.PASS, summary=f"{obs.machine}: every installed wheel matches the host")
