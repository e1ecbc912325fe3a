"""Session resources the checks and reproducers share: Ray on loopback, or the user's cluster."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from rlcheck import preflight
from rlcheck.cluster.local_ray import EmbeddedRay, RayEndpoints
from rlcheck.plugin.options import get_context
from rlcheck.preflight import gate
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.preflight.registry import Inputs

RAY_MISSING = ("Ray is not installed in this Python ({python}): the cluster checks need it (the embedded loopback Ray "
               "and --ray-address alike); run rlcheck with the training image's interpreter, or pip install "
               "'ray[default]'")


def require_ray() -> None:
    """Fail the fixture with one line naming what to install (no traceback: pytrace=False) when Ray is missing."""
    try:
        found = importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):  # a broken or half-imported ray is as good as none
        found = False
    if not found:
        pytest.fail(RAY_MISSING.format(python=sys.executable), pytrace=False)


@pytest.fixture(scope="session")
def local_ray() -> Iterator[RayEndpoints]:
    """An embedded single-machine Ray on 127.0.0.1, whatever --ray-address says.

    Reproducers use it: what they submit reads files of this machine.
    """
    require_ray()
    with EmbeddedRay() as endpoints:
        yield endpoints


@pytest.fixture(scope="session")
def ray_cluster(pytestconfig: pytest.Config, request: pytest.FixtureRequest) -> RayEndpoints:
    """The cluster under check: --ray-address when given, else the session's embedded loopback Ray (local_ray)."""
    require_ray()
    address = get_context(pytestconfig).ray_address
    if address is None:
        endpoints: RayEndpoints = request.getfixturevalue("local_ray")  # one embedded Ray per session, not two
        return endpoints
    dashboard = address if address.startswith("http") else ""
    return RayEndpoints(gcs_address=address, dashboard_url=dashboard, nodes=0)


@pytest.fixture(scope="session")
def check_inputs(pytestconfig: pytest.Config) -> Inputs:
    """What the registry's checks judge: --job, else --recipe on --hardware (the one place that decides the fit)."""
    ctx = get_context(pytestconfig)
    if ctx.job_path:
        inputs = inputs_for_job(ctx.job, ctx.profile, ctx.job_error)
    else:
        inputs = gate.inputs_for(ctx.recipe, ctx.profile)
    return dataclasses.replace(inputs, framework=ctx.framework, declared=ctx.declared,
                               local_gpus=not ctx.no_local_gpus)


def check_params(area: str) -> list[Any]:
    """The registry's checks of one area as pytest params: each its own test id, GPU checks marked."""
    out = []
    for check in preflight.by_area(area):
        marks = [pytest.mark.gpu(count=check.gpu_count)] if check.gpu_count else []
        out.append(pytest.param(check, id=check.id, marks=marks))
    return out
