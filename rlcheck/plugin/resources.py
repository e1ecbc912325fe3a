"""Session resources the checks and reproducers share: Ray on loopback, or the user's cluster."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from rlcheck import preflight
from rlcheck.cluster.local_ray import EmbeddedRay, EmbeddedRayError, RayEndpoints
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


class EarlyRay:
    """The session's embedded Ray, started in a thread as soon as collection shows that a test will use it, so that
    its start-up (a Ray head, its dashboard and job agent: most of a second preflight on the same image) overlaps the
    checks that run before the cluster ones; the local_ray fixture takes it over, and the session's end stops it
    when no test did."""

    JOIN_S = 180.0 + 60.0 + 90.0 + 30.0
    """EmbeddedRay.start's own bounds (ready, dashboard, job agent) and a margin: a wait that ends in a verdict."""

    def __init__(self, ray: Any) -> None:
        self.ray = ray
        self.endpoints: RayEndpoints | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._start, name="rlcheck-early-ray", daemon=True)

    def _start(self) -> None:
        try:
            self.endpoints = self.ray.start()
        except BaseException as exc:  # given to the fixture that takes it, which fails with it
            self.error = exc

    def begin(self) -> EarlyRay:
        self.thread.start()
        return self

    def take(self, join_s: float = JOIN_S) -> RayEndpoints:
        self.thread.join(join_s)
        if self.thread.is_alive():
            raise EmbeddedRayError(f"the embedded Ray started early did not come up within {join_s:.0f} s")
        if self.error is not None:
            raise self.error
        assert self.endpoints is not None
        return self.endpoints

    def end(self, join_s: float = JOIN_S) -> None:
        """Stop it (after its start ended: a holder spawned later would outlive the session)."""
        self.thread.join(join_s)
        self.ray.stop()


early_key = pytest.StashKey[EarlyRay]()


def wants_early_ray(config: pytest.Config, items: list[pytest.Item]) -> bool:
    """A test of this session will use the embedded Ray (local_ray, or ray_cluster without --ray-address); not in
    an xdist worker (each would start its own); not for --collect-only; Ray importable."""
    if hasattr(config, "workerinput") or config.getoption("collectonly", False):
        return False
    use = {"local_ray"} | ({"ray_cluster"} if get_context(config).ray_address is None else set())
    if not any(use & set(getattr(item, "fixturenames", ())) for item in items):
        return False
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    if wants_early_ray(session.config, session.items):
        session.config.stash[early_key] = EarlyRay(EmbeddedRay()).begin()


def pytest_sessionfinish(session: pytest.Session) -> None:
    early = session.config.stash.get(early_key, None)
    if early is not None:
        early.end()


@pytest.fixture(scope="session")
def local_ray(pytestconfig: pytest.Config) -> Iterator[RayEndpoints]:
    """An embedded single-machine Ray on 127.0.0.1, whatever --ray-address says (the one started early when
    collection saw a test needing it).

    Reproducers use it: what they submit reads files of this machine.
    """
    require_ray()
    early = pytestconfig.stash.get(early_key, None)
    if early is None:
        with EmbeddedRay() as endpoints:
            yield endpoints
        return
    try:
        yield early.take()
    finally:
        early.end()


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
