"""Turns markers into skips that name what is missing and what was found."""

from __future__ import annotations

import pytest

from rlcheck.option_table import skipped_by_quick
from rlcheck.plugin.options import RunContext, get_context
from rlcheck.probes.node import gpus


def _found_gpus(gpus: tuple[gpus.GpuInfo, ...]) -> str:
    if not gpus:
        return "none"
    kinds = sorted({(g.name, g.compute_capability) for g in gpus})
    parts = [f"{name} (sm_{cc.replace('.', '')})" if cc else f"{name} (sm unknown)" for name, cc in kinds]
    return f"{len(gpus)} x {', '.join(parts)}"


def gpu_skip_reason(marker: pytest.Mark, gpus: tuple[gpus.GpuInfo, ...], error: str = "") -> str | None:
    """Why a GPU test cannot run here (None: it can). error: why the GPUs could not be read (said, never read as
    'no GPU'; the gpu_node_inventory check judges it)."""
    min_sm = int(marker.kwargs.get("min_sm", 90))
    count = int(marker.kwargs.get("count", 1))
    usable = [g for g in gpus if g.compute_capability
              and int(g.compute_capability.replace(".", "")) >= min_sm]
    if len(usable) >= count:
        return None
    need = "a CUDA GPU" if count == 1 else f"{count} CUDA GPUs"
    found = f"could not read the GPUs: {error}" if error else f"found {_found_gpus(gpus)}"
    return f"needs {need} (sm_{min_sm}+): {found}"


CLUSTER_NEEDED = "needs a Ray cluster (--ray-address): found none, only the embedded loopback Ray"
"""Why a test marked `cluster` is skipped without --ray-address (the self-tests fail any other test skipped so)."""


def skip_reason(item: pytest.Item, ctx: RunContext) -> str | None:
    if skipped_by_quick(item, ctx.quick):
        return "slow (more than about 30 s): skipped by --quick"
    marker = item.get_closest_marker("gpu")
    if marker is not None:
        if ctx.no_local_gpus:
            return "--no-local-gpus: this machine's own GPUs are not judged (a Ray client or login node)"
        found = gpus.detect()
        reason = gpu_skip_reason(marker, found.gpus, found.error)
        if reason:
            return reason
    if item.get_closest_marker("e2e"):
        missing = []
        if ctx.ray_address is None and not ctx.dry_run:
            missing.append("a GPU Ray cluster (--ray-address): found none, only the embedded loopback Ray")
        if ctx.profile is None and not ctx.dry_run:  # a dry run renders each case on the hardware it fits
            missing.append(f"a hardware profile (--hardware): found {ctx.hardware_evidence}")
        if missing:
            return "needs " + "; and ".join(missing)
    if item.get_closest_marker("cluster") and ctx.ray_address is None:
        return CLUSTER_NEEDED
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    reason = skip_reason(item, get_context(item.config))
    if reason:
        pytest.skip(reason)
