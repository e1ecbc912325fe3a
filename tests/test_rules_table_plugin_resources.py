"""Rule table for the session's shared resources (rlcheck.plugin.resources): the one-line failure when Ray is missing,
when the embedded Ray starts early (only in a run of checks and reproducers that uses it, never in an xdist worker or
--collect-only), how the early start hands its Ray, its failure or its timeout to the fixture that takes it, and each
registry check as a pytest param (GPU checks marked with their count). A fake Ray stands in: no Ray starts here."""

from __future__ import annotations

import dataclasses
import sys
import threading
import types
from pathlib import Path

import pytest

from rlcheck.cluster.local_ray import EmbeddedRayError, RayEndpoints
from rlcheck.plugin import resources
from rlcheck.plugin.items import PACKAGED_CHECKS
from rlcheck.plugin.options import RunContext, context_key
from rlcheck.plugin.resources import EarlyRay

MISSING = ("Ray is not installed in this Python ({python}): the cluster checks need it (the embedded loopback Ray and "
           "--ray-address alike); run rlcheck with the training image's interpreter, or pip install 'ray[default]'")
ENDPOINTS = RayEndpoints(gcs_address="127.0.0.1:6379", dashboard_url="http://127.0.0.1:8265", nodes=1)


def _spec(found):
    def find_spec(name):
        assert name == "ray"
        if isinstance(found, type) and issubclass(found, Exception):
            raise found("half imported")
        return object() if found else None
    return find_spec


# --- Ray missing ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("found", [False, ImportError, ValueError])
def test_a_missing_or_broken_ray_fails_the_fixture_with_one_line_naming_what_to_install(monkeypatch, found):
    monkeypatch.setattr(resources.importlib.util, "find_spec", _spec(found))
    with pytest.raises(pytest.fail.Exception) as caught:
        resources.require_ray()
    assert caught.value.msg == MISSING.format(python=sys.executable)
    assert caught.value.pytrace is False


def test_an_importable_ray_is_required_silently(monkeypatch):
    monkeypatch.setattr(resources.importlib.util, "find_spec", _spec(True))
    assert resources.require_ray() is None


# --- the early start ------------------------------------------------------------------------------------------------
class _Ray:
    def __init__(self, *, fails: BaseException | None = None, hold: threading.Event | None = None) -> None:
        self.fails, self.hold = fails, hold
        self.calls: list[object] = []

    def start(self, *, jobs: bool) -> RayEndpoints:
        self.calls.append(("start", jobs))
        if self.hold is not None:
            self.hold.wait(10)
        if self.fails is not None:
            raise self.fails
        return ENDPOINTS

    def stop(self) -> None:
        self.calls.append("stop")


@pytest.mark.parametrize(("kwargs", "jobs"), [({}, True), ({"jobs": False}, False)])
def test_the_early_ray_starts_in_a_daemon_thread_and_hands_over_its_endpoints(kwargs, jobs):
    ray = _Ray()
    early = EarlyRay(ray, **kwargs)
    assert (early.endpoints, early.error, early.thread.name, early.thread.daemon) == (
        None, None, "rlcheck-early-ray", True)
    assert early.begin() is early
    assert early.take() == ENDPOINTS
    assert ray.calls == [("start", jobs)]
    early.end()
    assert ray.calls == [("start", jobs), "stop"]


@pytest.mark.parametrize("error", [EmbeddedRayError("the head did not answer"), KeyboardInterrupt()])
def test_the_early_rays_failure_is_raised_by_the_fixture_that_takes_it(error):
    ray = _Ray(fails=error)
    early = EarlyRay(ray).begin()
    with pytest.raises(type(error)) as caught:
        early.take()
    assert caught.value is error and early.endpoints is None
    early.end()
    assert ray.calls == [("start", True), "stop"]


def test_an_early_ray_still_starting_after_the_wait_is_an_error_naming_the_wait():
    hold = threading.Event()
    ray = _Ray(hold=hold)
    early = EarlyRay(ray).begin()
    try:
        with pytest.raises(EmbeddedRayError) as caught:
            early.take(join_s=0.2)
        assert str(caught.value) == "the embedded Ray started early did not come up within 0 s"
    finally:
        hold.set()
    early.end()
    assert not early.thread.is_alive() and ray.calls == [("start", True), "stop"]


def test_the_end_waits_for_the_start_a_bounded_time_then_stops_it_anyway():
    hold = threading.Event()
    ray = _Ray(hold=hold)
    early = EarlyRay(ray).begin()
    try:
        early.end(join_s=0.1)
        assert ray.calls == [("start", True), "stop"]
        assert early.thread.is_alive()  # stopped while its start still waited: the wait was bounded
    finally:
        hold.set()
        early.thread.join(10)


@pytest.mark.parametrize("fails", [None, EmbeddedRayError("the head did not answer")])
def test_what_waits_for_the_start_runs_in_order_in_the_starts_thread_once_it_ended(fails):
    hold = threading.Event()
    early = EarlyRay(_Ray(hold=hold, fails=fails)).begin()
    ran: list[tuple[str, str, bool]] = []

    def waiter(name: str):
        return lambda: ran.append((name, threading.current_thread().name, early.endpoints is not None))
    early.then(waiter("warm interpreters"))
    early.then(waiter("second"))
    assert ran == []
    hold.set()
    early.thread.join(10)
    assert ran == [("warm interpreters", "rlcheck-early-ray", fails is None), ("second", "rlcheck-early-ray",
                                                                                 fails is None)]
    early.then(waiter("late"))  # after the start ended: at once, in the caller's thread
    assert ran[2] == ("late", threading.current_thread().name, fails is None)
    early.end()


def _session_config(early: EarlyRay | None = None, decided: bool = False):
    stash = pytest.Stash()
    if early is not None:
        stash[resources.early_key] = early
    if decided:
        stash[resources.decided_key] = True
    return types.SimpleNamespace(stash=stash)


def test_after_early_ray_waits_for_the_early_ray_when_one_starts():
    hold = threading.Event()
    early = EarlyRay(_Ray(hold=hold)).begin()
    ran: list[str] = []
    resources.after_early_ray(_session_config(early), lambda: ran.append("called"))  # type: ignore[arg-type]
    assert ran == []
    hold.set()
    early.thread.join(10)
    assert ran == ["called"]
    early.end()


def test_after_early_ray_calls_at_once_when_none_starts_early_and_waits_for_the_decision_before_it():
    ran: list[str] = []
    decided = _session_config(decided=True)
    resources.after_early_ray(decided, lambda: ran.append("at once"))  # type: ignore[arg-type]
    assert ran == ["at once"] and resources.pending_key not in decided.stash
    undecided = _session_config()
    first, second = (lambda: ran.append("first")), (lambda: ran.append("second"))
    resources.after_early_ray(undecided, first)  # type: ignore[arg-type]
    resources.after_early_ray(undecided, second)  # type: ignore[arg-type]
    assert ran == ["at once"] and undecided.stash[resources.pending_key] == [first, second]


def test_the_sessions_end_stops_the_early_ray_only_when_there_is_one():
    ray = _Ray()
    session = types.SimpleNamespace(config=types.SimpleNamespace(stash=pytest.Stash()))
    resources.pytest_sessionfinish(session)  # type: ignore[arg-type]
    session.config.stash[resources.early_key] = EarlyRay(ray).begin()
    resources.pytest_sessionfinish(session)  # type: ignore[arg-type]
    assert ray.calls == [("start", True), "stop"]


# --- when it starts early -------------------------------------------------------------------------------------------
def _config(address: str | None = None, *, worker: bool = False, collectonly: object = False):
    stash = pytest.Stash()
    stash[context_key] = RunContext(hardware_requested="none", profile=None, hardware_evidence="e",
                                    recipe="qwen3-4b-colocated", ray_address=address, report_dir=Path("."),
                                    quick=False)
    option = types.SimpleNamespace() if collectonly is None else types.SimpleNamespace(collectonly=collectonly)
    config = types.SimpleNamespace(stash=stash, option=option)
    if worker:
        config.workerinput = {"workerid": "gw0"}
    return config


def _test(nodeid: str, *fixtures: str):
    """A collected test: its path, id and fixtures, and no marker (a real item answers get_closest_marker)."""
    return types.SimpleNamespace(path=Path("/project") / nodeid.split("::")[0], nodeid=nodeid, fixturenames=fixtures,
                                 get_closest_marker=lambda name: None)


CHECK = "checks/test_cluster.py::test_cluster_gpus"
REPRO = "reproducers/test_repro_x.py::test_repro_x"


@pytest.mark.parametrize(("items", "config", "wants"), [
    ([_test(CHECK, "ray_cluster")], _config(), True),
    ([_test(REPRO, "local_ray")], _config(), True),
    # --ray-address: the cluster checks use the user's cluster, the reproducers still the embedded one
    ([_test(CHECK, "ray_cluster")], _config("ray://head:10001"), False),
    ([_test(REPRO, "local_ray")], _config("ray://head:10001"), True),
    ([_test(CHECK, "check_inputs"), _test(REPRO, "local_ray")], _config(), True),
    ([_test(CHECK, "check_inputs")], _config(), False),
    # an item that has no fixtures (a doctest, a plugin's own item) among them: its neighbours decide
    ([types.SimpleNamespace(path=Path("/project/checks/x.txt"), nodeid="checks/x.txt::x"), _test(CHECK, "local_ray")],
     _config(), True),
    ([_test(CHECK)], _config(), False),
    ([], _config(), False),
    # a self-test run (any item that is no check or reproducer), an xdist worker, --collect-only: first use starts it
    ([_test(CHECK, "ray_cluster"), _test("tests/test_x.py::test_x")], _config(), False),
    ([_test("testcases/test_e2e.py::test_case", "ray_cluster")], _config(), False),
    ([_test(CHECK, "ray_cluster")], _config(worker=True), False),
    ([_test(CHECK, "ray_cluster")], _config(collectonly=True), False),
    ([_test(CHECK, "ray_cluster")], _config(collectonly=None), True),  # an early config without pytest's option
])
def test_the_embedded_ray_starts_early_only_in_a_run_of_checks_and_reproducers_that_uses_it(monkeypatch, items,
                                                                                               config, wants):
    monkeypatch.setattr(resources.importlib.util, "find_spec", _spec(True))
    assert resources.wants_early_ray(config, items) is wants  # type: ignore[arg-type]


def test_a_packaged_check_counts_as_a_check_wherever_its_node_id_starts(monkeypatch):
    monkeypatch.setattr(resources.importlib.util, "find_spec", _spec(True))
    item = types.SimpleNamespace(path=PACKAGED_CHECKS / "test_cluster.py", nodeid="test_cluster.py::test_cluster",
                                 fixturenames=("ray_cluster",))
    assert resources.wants_early_ray(_config(), [item]) is True  # type: ignore[arg-type]


@pytest.mark.parametrize("found", [False, ImportError, ValueError])
def test_no_early_ray_without_an_importable_ray(monkeypatch, found):
    monkeypatch.setattr(resources.importlib.util, "find_spec", _spec(found))
    assert resources.wants_early_ray(_config(), [_test(CHECK, "ray_cluster")]) is False  # type: ignore[arg-type]


# --- whether the early Ray starts its dashboard (the Jobs API) ------------------------------------------------------
def _slow(nodeid: str, *fixtures: str, slow: bool = True):
    """A collected test whose markers are asked for (get_closest_marker), marked slow or not."""
    item = _test(nodeid, *fixtures)
    item.get_closest_marker = lambda name: object() if (name == "slow" and slow) else None
    return item


@pytest.mark.parametrize(("items", "quick", "jobs"), [
    ([_test(REPRO, "local_ray")], False, True),
    ([_test(CHECK, "ray_cluster"), _test(REPRO, "record_result", "local_ray")], False, True),
    ([_test(CHECK, "ray_cluster")], False, False),  # the cluster checks reach the GCS alone
    ([_test(CHECK, "ray_cluster"), _test(REPRO, "embedded_ray")], False, False),
    # a kept verdict's stand-in asks for no fixture
    ([types.SimpleNamespace(path=Path("/project/reproducers/test_repro_x.py"), nodeid=REPRO)], False, False),
    ([], False, False),
    # --quick: a slow test that submits jobs is skipped, so it needs none; one not marked slow still does
    ([_slow(REPRO, "local_ray")], True, False),
    ([_slow(REPRO, "local_ray")], False, True),
    ([_slow(REPRO, "local_ray", slow=False)], True, True),
    ([_slow(REPRO, "local_ray"), _test(REPRO, "local_ray")], True, True),  # one not marked slow: it runs
    ([_slow(REPRO, "ray_cluster", slow=False)], True, False),
])
def test_the_dashboard_starts_only_for_a_test_that_submits_jobs(items, quick, jobs):
    config = _config()
    config.stash[context_key] = dataclasses.replace(config.stash[context_key], quick=quick)
    assert resources.needs_jobs(config, items) is jobs  # type: ignore[arg-type]


@pytest.mark.parametrize(("fixtures", "dashboard"), [(("ray_cluster",), False), (("local_ray",), True)])
def test_the_early_ray_is_made_with_the_dashboard_its_tests_need(monkeypatch, fixtures, dashboard):
    made: list = []

    class Made:
        def __init__(self, **kwargs):
            made.append(kwargs)

        def start(self, *, jobs):
            made.append(("start", jobs))
            return ENDPOINTS

        def stop(self):
            made.append("stop")

    monkeypatch.setattr(resources.importlib.util, "find_spec", _spec(True))
    monkeypatch.setattr(resources, "EmbeddedRay", Made)
    config = _config()
    resources.pytest_collection_finish(types.SimpleNamespace(config=config, items=[_test(CHECK, *fixtures)]))
    early = config.stash[resources.early_key]
    assert early.take() == ENDPOINTS and config.stash[resources.decided_key] is True
    early.end()
    assert made == [{"dashboard": dashboard}, ("start", False), "stop"]


# --- the registry's checks as params --------------------------------------------------------------------------------
def _check(check_id: str, gpu_count: int):
    return types.SimpleNamespace(id=check_id, gpu_count=gpu_count)


GPU_AREA = (_check("gpu_node_inventory", 0), _check("gpu_bf16_gemm", 1), _check("gpu_nccl_allreduce", 2))


def test_each_check_of_an_area_is_a_param_with_its_id_and_gpu_checks_are_marked_with_their_count(monkeypatch):
    asked = []
    monkeypatch.setattr(resources.preflight, "by_area", lambda area: asked.append(area) or GPU_AREA)
    params = resources.check_params("gpu")
    assert asked == ["gpu"]
    assert [(p.id, p.values, [(m.name, m.args, m.kwargs) for m in p.marks]) for p in params] == [
        ("gpu_node_inventory", (GPU_AREA[0],), []),
        ("gpu_bf16_gemm", (GPU_AREA[1],), [("gpu", (), {"count": 1})]),
        ("gpu_nccl_allreduce", (GPU_AREA[2],), [("gpu", (), {"count": 2})])]


def test_an_area_without_checks_gives_no_params(monkeypatch):
    monkeypatch.setattr(resources.preflight, "by_area", lambda area: ())
    assert resources.check_params("image") == []
