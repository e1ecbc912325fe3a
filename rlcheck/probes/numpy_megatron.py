"""numpy major against what the installed Megatron needs (catalogue: numpy2-megatron)."""

from __future__ import annotations

import dataclasses
import re

from rlcheck import catalog
from rlcheck.probes.packages import InstalledPackages, PackageSource
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "numpy2-megatron"
MEGATRON_DISTRIBUTIONS = ("megatron-core", "megatron-lm")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NumpyMegatronObservation:
    numpy_version: str | None
    megatron_distribution: str | None
    """Which distribution provides Megatron (megatron-core wheel, or megatron-lm from git)."""
    megatron_version: str | None
    megatron_numpy_requirement: str | None
    """Megatron's own Requires-Dist line for numpy, e.g. 'numpy<2.0.0' (0.13, 0.15) or 'numpy' (0.16+)."""


def collect_numpy_megatron(packages: PackageSource | None = None) -> NumpyMegatronObservation:
    packages = packages or InstalledPackages()
    dist = next((d for d in MEGATRON_DISTRIBUTIONS if packages.version(d)), None)
    requirement = None
    if dist:
        requirement = next((r.split(";")[0].strip() for r in packages.requires(dist)
                            if re.match(r"numpy\b", r)), None)
    return NumpyMegatronObservation(
        numpy_version=packages.version("numpy"), megatron_distribution=dist,
        megatron_version=packages.version(dist) if dist else None, megatron_numpy_requirement=requirement,
    )


def evaluate_numpy_megatron(obs: NumpyMegatronObservation) -> Verdict:
    entry = catalog.get(FAILURE_ID)
    base = {"check_id": "image_numpy_major", "failure_id": FAILURE_ID}
    if obs.megatron_version is None:
        return Verdict(**base, status=Status.SKIP,
                       summary="needs Megatron (megatron-core or megatron-lm): found none installed")
    megatron = f"{obs.megatron_distribution} {obs.megatron_version}"
    if obs.numpy_version is None:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"numpy is not installed beside {megatron}",
                       remedy='pip install "numpy<2"')
    need = obs.megatron_numpy_requirement or "numpy (no range in its metadata)"
    details = f"numpy {obs.numpy_version}; {megatron} declares: {need}"
    if entry.live_in({"numpy": obs.numpy_version}):
        return Verdict(**base, status=Status.FAIL, details=details, remedy=entry.remedy,
                       summary=f"numpy {obs.numpy_version} installed with {megatron}; expected numpy<2 "
                               f"(numpy 1.x, as SLIME's image pins it)")
    return Verdict(**base, status=Status.PASS, details=details,
                   summary=f"numpy {obs.numpy_version} with {megatron}: numpy 1.x as Megatron needs")
