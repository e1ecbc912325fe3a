"""numpy major against what the installed Megatron needs (catalogue: numpy2-megatron)."""

from __future__ import annotations

import dataclasses
import re

from packaging.version import InvalidVersion, Version

from rlcheck import catalog
from rlcheck.probes.node.packages import InstalledPackages, PackageSource
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "numpy2-megatron"
MEGATRON_DISTRIBUTIONS = ("megatron-core", "megatron-lm")
# Checkpoints pickle numpy objects (RNG state) by module path: numpy.core under 1.x, numpy._core under 2.x;
# Megatron allowlists only the running numpy's path for torch.load(weights_only=True).
NUMPY2_REMEDY = ('keep numpy<2 where checkpoints are shared with numpy 1.x images (SLIME\'s pins numpy 1.26.4): '
                 'a legacy checkpoint pickled under one numpy major does not load under the other')


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
    base = {"failure_id": FAILURE_ID}
    if obs.megatron_version is None:
        return Verdict(**base, status=Status.SKIP,
                       summary="needs Megatron (megatron-core or megatron-lm): found none installed")
    megatron = f"{obs.megatron_distribution} {obs.megatron_version}"
    if obs.numpy_version is None:
        return Verdict(**base, status=Status.UNKNOWN, summary=f"numpy is not installed beside {megatron}",
                       remedy='pip install "numpy<2"')
    need = obs.megatron_numpy_requirement or "numpy (no range in its metadata)"
    details = f"numpy {obs.numpy_version}; {megatron} declares: {need}"
    # Megatron-LM from git reports megatron-core's version numbering (megatron/core/package_info.py).
    if entry.live_in({"numpy": obs.numpy_version, "megatron-core": obs.megatron_version}):
        return Verdict(**base, status=Status.FAIL, details=details, remedy=entry.remedy,
                       summary=f"numpy {obs.numpy_version} installed with {megatron}; expected numpy<2 "
                               f"(Megatron before 0.16 calls np.product, gone in numpy 2, when it saves a checkpoint)")
    if _major(obs.numpy_version) >= 2:
        return Verdict(**base, status=Status.WARN, details=details, remedy=NUMPY2_REMEDY,
                       summary=f"numpy {obs.numpy_version} with {megatron}: no known Megatron failure at this "
                               f"release; SLIME's image keeps numpy 1.26")
    return Verdict(**base, status=Status.PASS, details=details,
                   summary=f"numpy {obs.numpy_version} with {megatron}: numpy 1.x as Megatron needs")


def _major(version: str) -> int:
    try:
        return Version(version).major
    except InvalidVersion:
        return 0
