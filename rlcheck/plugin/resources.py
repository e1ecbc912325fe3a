"""Session resources the checks and reproducers share: Ray on loopback, or the user's cluster."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rlcheck import preflight
from rlcheck.cluster.local_ray import EmbeddedRay, EmbeddedRayError, RayEndpoints
from rlcheck.option_table import skipped_by_quick
from rlcheck.plugin.items import kind_of_item
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

    def __init__(self, ray: Any, *, jobs: bool = True) -> None:
        self.ray, self.jobs = ray, jobs
        self.endpoints: RayEndpoints | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._start, name="rlcheck-early-ray", daemon=True)
        self._after: list[Callable[[], object]] | None = []
        """What waits for the start to end (None once it ended)."""
        self._lock = threading.Lock()

    def _start(self) -> None:
        try:
            self.endpoints = self.ray.start(jobs=self.jobs)
        except BaseException as exc:  # given to the fixture that takes it, which fails with it
            self.error = exc
        finally:
            with self._lock:
                after, self._after = self._after or [], None
            for call in after:
                call()

    def then(self, call: Callable[[], object]) -> None:
        """Call once the start has ended, well or not (at once when it has), in the start's thread."""
        with self._lock:
            if self._after is not None:
                self._after.append(call)
                return
        call()

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
pending_key = pytest.StashKey[list[Callable[[], object]]]()
decided_key = pytest.StashKey[bool]()


def early_ray_jobs(config: pytest.Config) -> RayEndpoints:
    """The session's Ray started at collection, once up and taking jobs (what local_ray hands a test), for a run
    started ahead of its test; LookupError where none starts early (the test then uses local_ray itself)."""
    early = config.stash.get(early_key, None)
    if early is None:
        raise LookupError("no embedded Ray was started at collection in this session")
    endpoints = early.take()
    early.ray.ensure_jobs()
    return endpoints


def has_early_ray(config: pytest.Config) -> bool:
    """Whether the session's Ray starts at collection (decided at the end of collection)."""
    return config.stash.get(early_key, None) is not None


def after_early_ray(config: pytest.Config, call: Callable[[], object]) -> None:
    """Call once the session's embedded Ray, started at collection, is up or failed; at once where none starts early.

    For what else starts cold at collection (the reproducers' warm interpreters): beside it, Ray's raylet missed
    Ray's own 30 s registration deadline at load 15-25 (ray/_private/node.py), and every cluster check was UNKNOWN.
    Called before the decision (a conftest.py's pytest_collection_finish runs before this plugin's), it waits for it.
    """
    early = config.stash.get(early_key, None)
    if early is not None:
        early.then(call)
    elif config.stash.get(decided_key, False):
        call()
    else:
        config.stash.setdefault(pending_key, []).append(call)


def wants_early_ray(config: pytest.Config, items: list[pytest.Item]) -> bool:
    """A test of this session will use the embedded Ray (local_ray, or ray_cluster without --ray-address); only in a
    run of checks and reproducers (the main job: in a self-test run a Ray started at collection would live through
    every other test, so there it starts on first use); not in an xdist worker (each would start its own); not for
    --collect-only; Ray importable."""
    if hasattr(config, "workerinput") or getattr(config.option, "collectonly", False):  # pytest's own option
        return False
    if any(kind_of_item(item) not in ("check", "reproducer") for item in items):
        return False
    use = {"local_ray"} | ({"ray_cluster"} if get_context(config).ray_address is None else set())
    if not any(use & set(getattr(item, "fixturenames", ())) for item in items):
        return False
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def needs_jobs(config: pytest.Config, items: list[pytest.Item]) -> bool:
    """A test of this session submits Ray jobs (it asks for local_ray, which hands out a Ray taking jobs): only then
    does the session's Ray start its dashboard, which the Jobs API needs; the cluster checks reach its GCS alone. A
    reproducer whose kept verdict stands in for it asks for nothing (rlcheck.plugin.cache), and one marked slow runs
    nothing under --quick (rlcheck.plugin.gating skips it)."""
    quick = get_context(config).quick
    return any("local_ray" in getattr(item, "fixturenames", ()) and not skipped_by_quick(item, quick)
               for item in items)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    config = session.config
    pending = config.stash.get(pending_key, [])
    config.stash[pending_key] = []
    if wants_early_ray(config, session.items):  # its job agent is awaited by local_ray, when a test uses it
        early = EarlyRay(EmbeddedRay(dashboard=needs_jobs(config, session.items)), jobs=False)
        for call in pending:
            early.then(call)
        config.stash[early_key] = early.begin()
    else:
        for call in pending:
            call()
    config.stash[decided_key] = True


def pytest_sessionfinish(session: pytest.Session) -> None:
    early = session.config.stash.get(early_key, None)
    if early is not None:
        early.end()


@pytest.fixture(scope="session")
def embedded_ray(pytestconfig: pytest.Config) -> Iterator[EmbeddedRay]:
    """The session's embedded single-machine Ray on 127.0.0.1 (the one started early when collection saw a test
    needing it), answering on its GCS and dashboard; its job agent is local_ray's to await."""
    require_ray()
    early = pytestconfig.stash.get(early_key, None)
    if early is None:
        ray = EmbeddedRay()
        try:
            ray.start(jobs=False)
            yield ray
        finally:
            ray.stop()
        return
    try:
        early.take()
        yield early.ray
    finally:
        early.end()


@pytest.fixture(scope="session")
def local_ray(embedded_ray: EmbeddedRay) -> RayEndpoints:
    """The embedded Ray, whatever --ray-address says, with its job agent taking jobs.

    Reproducers use it: what they submit reads files of this machine.
    """
    embedded_ray.ensure_jobs()
    assert embedded_ray.endpoints is not None
    return embedded_ray.endpoints


@pytest.fixture(scope="session")
def ray_cluster(pytestconfig: pytest.Config, request: pytest.FixtureRequest) -> RayEndpoints:
    """The cluster under check: --ray-address when given, else the session's embedded loopback Ray (local_ray)."""
    require_ray()
    address = get_context(pytestconfig).ray_address
    if address is None:  # one embedded Ray per session, not two; the fan-out reaches its GCS, no job is submitted
        ray: EmbeddedRay = request.getfixturevalue("embedded_ray")
        assert ray.endpoints is not None
        return ray.endpoints
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
