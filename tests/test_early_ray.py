"""The session's embedded Ray started early (rlcheck/plugin/resources.py EarlyRay, wants_early_ray): started when a
collected test will use it, never in an xdist worker or for --collect-only, taken over by local_ray, stopped at the
session's end after its start ended; a start that fails or hangs is the fixture's error, never a hang."""

from __future__ import annotations

import threading
import types

import pytest

from rlcheck.cluster.local_ray import EmbeddedRayError, RayEndpoints
from rlcheck.plugin import resources

ENDPOINTS = RayEndpoints(gcs_address="127.0.0.1:6379", dashboard_url="http://127.0.0.1:8265", nodes=1)


class FakeRay:
    """Stands in for EmbeddedRay (tests only): start() returns, raises or waits for a release."""

    def __init__(self, *, error=None, release=None):
        self.error, self.release = error, release
        self.events: list[str] = []

    def start(self, *, jobs):
        if self.release is not None:
            self.release.wait(10)
        self.events.append(f"start jobs={jobs}")
        if self.error is not None:
            raise self.error
        return ENDPOINTS

    def stop(self):
        self.events.append("stop")


@pytest.mark.parametrize("jobs", [True, False])
def test_take_gives_what_the_start_gave_and_end_stops_after_it(jobs):
    ray = FakeRay()
    early = resources.EarlyRay(ray, jobs=jobs).begin()
    assert early.take() == ENDPOINTS
    early.end()
    assert ray.events == [f"start jobs={jobs}", "stop"]


def test_the_job_agent_is_awaited_by_default():
    ray = FakeRay()
    resources.EarlyRay(ray).begin().end()
    assert ray.events == ["start jobs=True", "stop"]


def test_a_failed_start_is_raised_to_the_fixture():
    early = resources.EarlyRay(FakeRay(error=EmbeddedRayError("embedded Ray exited before it was ready"))).begin()
    with pytest.raises(EmbeddedRayError, match="exited before it was ready"):
        early.take()


def test_a_start_that_does_not_end_in_time_is_an_error_naming_the_wait():
    release = threading.Event()
    ray = FakeRay(release=release)
    early = resources.EarlyRay(ray).begin()
    with pytest.raises(EmbeddedRayError, match=r"the embedded Ray started early did not come up within 0 s"):
        early.take(join_s=0.05)
    release.set()
    early.end()  # stops only after the start ended: no holder outlives the session
    assert ray.events == ["start jobs=True", "stop"]


def test_the_wait_is_bounded_by_the_starts_own_bounds():
    assert resources.EarlyRay.JOIN_S == 180.0 + 60.0 + 90.0 + 30.0


def _config(*, worker=False, collectonly=False, ray_address=None):
    config = types.SimpleNamespace(option=types.SimpleNamespace(collectonly=collectonly))
    if worker:
        config.workerinput = {}
    return config, types.SimpleNamespace(ray_address=ray_address)


def _item(*fixtures, nodeid="checks/test_cluster.py::test_cluster[cluster_reachable]"):
    path = nodeid.split("::")[0]
    return types.SimpleNamespace(fixturenames=list(fixtures), nodeid=nodeid, path=path)


def _kept(nodeid="reproducers/test_repro_x.py::test_repro_x"):
    """A kept reproducer's stand-in item: no fixtures."""
    return types.SimpleNamespace(nodeid=nodeid, path=nodeid.split("::")[0])


@pytest.mark.parametrize(("kwargs", "items", "want"), [
    ({}, [_item("local_ray")], True),
    ({}, [_item("record_verdict"), _item("ray_cluster")], True),
    ({"ray_address": "10.0.0.1:6379"}, [_item("ray_cluster")], False),  # the user's cluster: no embedded Ray
    ({"ray_address": "10.0.0.1:6379"}, [_item("local_ray")], True),     # reproducers use it whatever the address
    ({}, [_item("record_verdict")], False),
    ({}, [], False),
    ({}, [_kept()], False),  # a kept reproducer's stand-in item has no fixtures
    ({}, [_kept(), _item("local_ray", nodeid="reproducers/test_repro_y.py::test_repro_y")], True),
    # a self-test run: its Ray would live through every other test
    ({}, [_item("local_ray", nodeid="tests/test_launch.py::test_launch")], False),
    ({}, [_item("ray_cluster"), _item(nodeid="tests/test_x.py::test_x")], False),
    ({}, [_item("local_ray", nodeid="testcases/test_e2e.py::test_case")], False),
    ({"worker": True}, [_item("local_ray")], False),
    ({"collectonly": True}, [_item("local_ray")], False),
])
def test_wants_early_ray(monkeypatch, kwargs, items, want):
    config, ctx = _config(**kwargs)
    monkeypatch.setattr(resources, "get_context", lambda _config: ctx)
    assert resources.wants_early_ray(config, items) is want


def test_not_without_ray(monkeypatch):
    config, ctx = _config()
    monkeypatch.setattr(resources, "get_context", lambda _config: ctx)
    monkeypatch.setattr(resources.importlib.util, "find_spec", lambda name: None)
    assert resources.wants_early_ray(config, [_item("local_ray")]) is False


def test_the_job_agent_is_awaited_once_whoever_asks_and_again_after_a_failure(monkeypatch):
    from rlcheck.cluster.local_ray import EmbeddedRay

    ray, calls = EmbeddedRay(), []

    def agent(timeout_s):
        calls.append(timeout_s)
        if len(calls) == 1:
            raise EmbeddedRayError("Ray's first job did not succeed within 90 s: FAILED")

    monkeypatch.setattr(ray, "_await_job_agent", agent)
    with pytest.raises(EmbeddedRayError, match="first job did not succeed"):
        ray.ensure_jobs()
    ray.ensure_jobs()
    ray.ensure_jobs(timeout_s=5)
    assert calls == [90.0, 90.0]


@pytest.mark.parametrize("error", [None, EmbeddedRayError("embedded Ray exited before it was ready")])
def test_what_waits_for_the_start_runs_once_it_ended_well_or_not(error):
    release = threading.Event()
    ray = FakeRay(release=release, error=error)
    early = resources.EarlyRay(ray)
    early.then(lambda: ray.events.append("queued before the start"))
    early.begin()
    early.then(lambda: ray.events.append("queued while it starts"))
    assert ray.events == []
    release.set()
    early.thread.join(10)
    early.then(lambda: ray.events.append("called at once"))
    assert ray.events == ["start jobs=True", "queued before the start", "queued while it starts", "called at once"]


def _stashed(**attrs):
    """What after_early_ray and the collection hook read of a config (a worker's: no Ray starts early there)."""
    return types.SimpleNamespace(stash=pytest.Stash(), option=types.SimpleNamespace(collectonly=False), **attrs)


def early_ray_of(config):
    return config.stash.get(resources.early_key, None)


def test_after_early_ray_waits_for_the_decision_then_runs_at_once_without_one():
    config, called = _stashed(workerinput={}), []
    resources.after_early_ray(config, lambda: called.append("registered at collection"))
    assert called == []  # the decision (this plugin's trylast pytest_collection_finish) is still to come
    resources.pytest_collection_finish(types.SimpleNamespace(config=config, items=[]))
    assert called == ["registered at collection"]
    assert early_ray_of(config) is None
    resources.after_early_ray(config, lambda: called.append("registered later"))
    assert called == ["registered at collection", "registered later"]


def test_after_early_ray_goes_to_the_started_ray():
    release = threading.Event()
    config, ray = _stashed(), FakeRay(release=release)
    config.stash[resources.early_key] = early = resources.EarlyRay(ray).begin()
    resources.after_early_ray(config, lambda: ray.events.append("after the start"))
    assert ray.events == []
    release.set()
    early.end()
    assert ray.events == ["start jobs=True", "after the start", "stop"]


def test_early_ray_jobs_waits_for_the_start_and_the_job_agent_and_has_early_ray_says_whether_one_starts():
    config, ray = _stashed(), FakeRay()
    assert resources.has_early_ray(config) is False
    with pytest.raises(LookupError, match="^no embedded Ray was started at collection in this session$"):
        resources.early_ray_jobs(config)
    ray.ensure_jobs = lambda: ray.events.append("job agent awaited")
    config.stash[resources.early_key] = early = resources.EarlyRay(ray, jobs=False).begin()
    assert resources.has_early_ray(config) is True
    assert resources.early_ray_jobs(config) == ENDPOINTS
    assert ray.events == ["start jobs=False", "job agent awaited"]
    early.end()


def test_early_ray_jobs_raises_the_failed_start():
    config = _stashed()
    config.stash[resources.early_key] = resources.EarlyRay(FakeRay(error=EmbeddedRayError("head died"))).begin()
    with pytest.raises(EmbeddedRayError, match="head died"):
        resources.early_ray_jobs(config)
