"""Rule table for the embedded loopback Ray the suite runs its cluster checks on (rlcheck.cluster.local_ray): the
holder's argv, each way its start ends (ready, an error line, an early exit with its last lines, no READY line in
time, a dashboard that does not answer, a first job that does not succeed: each the whole message and the holder
stopped), the job agent waited for once, and the stop (stdin closed, then the group killed when it does not go).
A stand-in holder process, clock-free: no Ray (test_early_ray.py and the loopback tests start a real one)."""

from __future__ import annotations

import io
import json
import subprocess
import threading
import types

import pytest

from rlcheck.cluster import local_ray
from rlcheck.cluster.launch import JobOutcome
from rlcheck.cluster.local_ray import READY, EmbeddedRay, EmbeddedRayError, NodeSpec, RayEndpoints
from rlcheck.process.wait import WaitResult


def test_the_holders_two_line_prefixes():
    assert (READY, local_ray.ERROR) == ("RLCHECK_RAY_READY ", "RLCHECK_RAY_ERROR ")


@pytest.mark.parametrize(("spec", "as_dict"), [
    (NodeSpec(), {"num_gpus": 0, "env": {}}),
    (NodeSpec(num_gpus=8, env={"A": "1"}), {"num_gpus": 8, "env": {"A": "1"}}),
])
def test_a_node_spec_as_the_holder_reads_it(spec, as_dict):
    assert spec.to_dict() == as_dict


def test_a_negative_gpu_count_is_refused():
    with pytest.raises(ValueError) as err:
        NodeSpec(num_gpus=-1)
    assert str(err.value) == "num_gpus=-1: must be >= 0"


def test_the_extra_nodes_are_at_least_the_specs_given():
    assert EmbeddedRay(extra_nodes=1, node_specs=[NodeSpec(), NodeSpec()]).extra_nodes == 2
    assert EmbeddedRay(extra_nodes=3, node_specs=[NodeSpec()]).extra_nodes == 3
    ray = EmbeddedRay()
    assert (ray.num_cpus, ray.extra_nodes, ray.start_timeout_s, ray.node_specs) == (2, 0, 180.0, ())
    assert ray.dashboard is True
    assert (ray.proc, ray.endpoints) == (None, None)


class Holder:
    """The holder process as EmbeddedRay sees it: its output lines, then EOF; exits when stdin closes (or not)."""

    def __init__(self, lines: list[str], exits_on_eof: bool = True) -> None:
        self.stdout = io.StringIO("".join(f"{line}\n" for line in lines))
        self.stdin = types.SimpleNamespace(close=self._close)
        self.exits_on_eof, self.returncode, self.events = exits_on_eof, None, []

    def _close(self):
        self.events.append("stdin closed")
        if self.exits_on_eof:
            self.returncode = 0

    def poll(self):
        return self.returncode

    def wait(self, timeout):
        self.events.append(("wait", timeout))
        if self.returncode is None:
            raise subprocess.TimeoutExpired("holder", timeout)
        return self.returncode


READY_DOC = {"gcs_address": "127.0.0.1:6379", "dashboard_url": "http://127.0.0.1:8265", "nodes": 2,
             "node_ids": ["h", "w"], "raylet_pids": {"h": 11, "w": 12}}
ENDPOINTS = RayEndpoints(gcs_address="127.0.0.1:6379", dashboard_url="http://127.0.0.1:8265", nodes=2,
                         node_ids=("h", "w"), raylet_pids={"h": 11, "w": 12})


@pytest.fixture
def holder(monkeypatch):
    """Start EmbeddedRay on a stand-in holder: returns (started argv/kwargs, killed groups, dashboard answers)."""
    seen: dict = {"popen": [], "killed": [], "health": WaitResult(ok=True, elapsed_s=0.1, attempts=1, last_error=""),
                  "holder": None, "jobs": []}

    def popen(argv, **kw):
        seen["popen"].append((argv, kw))
        return seen["holder"]

    def wait_http_ok(url, *, timeout_s):
        seen["health_asked"] = (url, timeout_s)
        return seen["health"]

    monkeypatch.setattr(local_ray.subprocess, "Popen", popen)
    monkeypatch.setattr(local_ray, "wait_http_ok", wait_http_ok)
    monkeypatch.setattr(local_ray, "free_loopback_port", lambda: 4242)
    monkeypatch.setattr(local_ray, "tempfile", types.SimpleNamespace(mkdtemp=lambda prefix, dir: f"{dir}/{prefix}x"))
    monkeypatch.setattr(local_ray.subproc, "child_env", lambda: {"ENV": "1"})
    monkeypatch.setattr(local_ray.subproc, "kill_group", lambda proc: seen["killed"].append(proc))
    return seen


def test_a_ready_holder_gives_its_endpoints_and_its_argv(holder):
    holder["holder"] = Holder(["starting", READY + json.dumps(READY_DOC)])
    ray = EmbeddedRay(num_cpus=3, extra_nodes=1)
    assert ray.start(jobs=False) == ENDPOINTS and ray.endpoints == ENDPOINTS
    argv, kw = holder["popen"][0]
    assert argv == [local_ray.sys.executable, "-m", "rlcheck.cluster.embedded_ray",
                    "--dashboard-port", "4242", "--num-cpus", "3", "--extra-nodes", "1", "--temp-dir", "/tmp/rlray-x"]
    assert kw == {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True,
                  "start_new_session": True, "env": {"ENV": "1"}}
    assert holder["health_asked"] == ("http://127.0.0.1:8265/api/version", 60)
    assert holder["holder"].events == [] and ray._seen == ["starting", READY + json.dumps(READY_DOC)]


def test_node_specs_travel_as_json(holder):
    holder["holder"] = Holder([READY + json.dumps({**READY_DOC, "node_ids": []})])
    ray = EmbeddedRay(node_specs=[NodeSpec(num_gpus=4, env={"X": "y"})])
    assert ray.start(jobs=False).node_ids == ()
    argv, _ = holder["popen"][0]
    assert argv[-4:] == ["--temp-dir", "/tmp/rlray-x", "--node-specs", '[{"num_gpus": 4, "env": {"X": "y"}}]']
    assert argv[argv.index("--extra-nodes") + 1] == "1"


def test_a_head_without_its_dashboard_says_so_and_waits_for_no_dashboard(holder):
    holder["holder"] = Holder([READY + json.dumps({**READY_DOC, "dashboard_url": ""})])
    ray = EmbeddedRay(dashboard=False)
    assert ray.start(jobs=False).dashboard_url == ""
    argv, _ = holder["popen"][0]
    assert argv[argv.index("-m") + 2:argv.index("--num-cpus")] == ["--no-dashboard"]
    assert "--dashboard-port" not in argv and "health_asked" not in holder


NO_JOBS = (r"^this embedded Ray was started without its dashboard \(dashboard=False\), so without Ray's Jobs API: "
           r"start one with its dashboard to submit jobs$")


def test_a_head_without_its_dashboard_refuses_jobs_before_it_starts(holder):
    ray = EmbeddedRay(dashboard=False)
    with pytest.raises(EmbeddedRayError, match=NO_JOBS):
        ray.start()
    assert holder["popen"] == [] and ray.proc is None


def test_a_head_without_its_dashboard_refuses_the_job_agents_wait(monkeypatch):
    ray = EmbeddedRay(dashboard=False)
    monkeypatch.setattr(ray, "_await_job_agent", lambda timeout_s: pytest.fail("no agent to wait for"))
    with pytest.raises(EmbeddedRayError, match=NO_JOBS):
        ray.ensure_jobs()
    assert ray._jobs_ready is False


def test_a_ready_line_without_node_ids_has_none():
    ray = EmbeddedRay()
    ray._lines.put(READY + json.dumps({"gcs_address": "g", "dashboard_url": "d", "nodes": 1}))
    assert ray._await_ready() == RayEndpoints(gcs_address="g", dashboard_url="d", nodes=1)


@pytest.mark.parametrize(("lines", "message"), [
    (["a", "RLCHECK_RAY_ERROR nodes on non-loopback addresses: ['10.0.0.1']", READY + "{}"],
     "nodes on non-loopback addresses: ['10.0.0.1']"),
    ([f"line {i}" for i in range(25)],
     "embedded Ray exited before it was ready:\n" + "\n".join(f"line {i}" for i in range(5, 25))),
    ([], "embedded Ray exited before it was ready:\n"),
])
def test_a_holder_that_fails_or_exits_says_why_and_is_stopped(holder, lines, message):
    holder["holder"] = Holder(lines)
    with pytest.raises(EmbeddedRayError) as err:
        EmbeddedRay().start()
    assert str(err.value) == message
    assert holder["holder"].events == ["stdin closed", ("wait", 60.0)]


def test_no_ready_line_in_time_says_so_with_the_last_lines():
    ray = EmbeddedRay(start_timeout_s=0.05)
    ray._lines.put("still starting")
    with pytest.raises(EmbeddedRayError) as err:
        ray._await_ready()
    assert str(err.value) == "embedded Ray not ready within 0 s:\nstill starting"


def test_no_time_left_reads_nothing():
    ray = EmbeddedRay(start_timeout_s=0)
    ray._lines.put(READY + json.dumps(READY_DOC))
    with pytest.raises(EmbeddedRayError, match="^embedded Ray not ready within 0 s:\n$"):
        ray._await_ready()


def test_a_dashboard_that_does_not_answer_stops_the_holder(holder):
    holder["holder"] = Holder([READY + json.dumps(READY_DOC)])
    holder["health"] = WaitResult(ok=False, elapsed_s=60.0, attempts=9, last_error="connection refused")
    with pytest.raises(EmbeddedRayError) as err:
        EmbeddedRay().start()
    assert str(err.value) == "Ray dashboard not answering after 60 s: connection refused"
    assert holder["holder"].events == ["stdin closed", ("wait", 60.0)]


@pytest.fixture
def jobs(monkeypatch):
    from rlcheck.cluster import launch

    seen: dict = {"status": "SUCCEEDED", "submitted": [], "waited": []}
    monkeypatch.setattr(launch, "submit_entrypoint", lambda url, text: seen["submitted"].append((url, text)) or "j1")
    monkeypatch.setattr(launch, "wait_job", lambda url, job, *, timeout_s: seen["waited"].append(
        (url, job, timeout_s)) or JobOutcome(job_id=job, status=seen["status"], logs="", elapsed_s=1.0))
    return seen


def test_start_waits_for_the_job_agent_once(holder, jobs):
    holder["holder"] = Holder([READY + json.dumps(READY_DOC)])
    ray = EmbeddedRay()
    assert ray.start() == ENDPOINTS
    ray.ensure_jobs()
    ray.ensure_jobs(timeout_s=5)
    assert jobs["submitted"] == [("http://127.0.0.1:8265", "true")]
    assert jobs["waited"] == [("http://127.0.0.1:8265", "j1", 90.0)]


def test_ensure_jobs_passes_its_bound(holder, jobs):
    holder["holder"] = Holder([READY + json.dumps(READY_DOC)])
    ray = EmbeddedRay()
    ray.start(jobs=False)
    assert jobs["submitted"] == []
    ray.ensure_jobs(timeout_s=7.5)
    assert jobs["waited"] == [("http://127.0.0.1:8265", "j1", 7.5)]


def test_a_first_job_that_does_not_succeed_stops_the_holder(holder, jobs):
    holder["holder"] = Holder([READY + json.dumps(READY_DOC)])
    jobs["status"] = "TIMEOUT"
    ray = EmbeddedRay()
    with pytest.raises(EmbeddedRayError) as err:
        ray.start()
    assert str(err.value) == "Ray's first job did not succeed within 90 s: TIMEOUT"
    assert holder["holder"].events == ["stdin closed", ("wait", 60.0)]
    with pytest.raises(EmbeddedRayError):  # not marked ready: a later user waits again
        ray.ensure_jobs(timeout_s=1)
    assert len(jobs["submitted"]) == 2


def test_stop_kills_the_group_of_a_holder_that_does_not_go(holder):
    ray = EmbeddedRay()
    ray.proc = Holder([], exits_on_eof=False)  # type: ignore[assignment]
    ray.stop(timeout_s=2.5)
    assert ray.proc.events == ["stdin closed", ("wait", 2.5)] and holder["killed"] == [ray.proc]


def test_stop_kills_the_group_when_stdin_cannot_be_closed(holder):
    ray = EmbeddedRay()
    proc = Holder([])

    def broken():
        raise OSError("closed")

    proc.stdin = types.SimpleNamespace(close=broken)
    ray.proc = proc  # type: ignore[assignment]
    ray.stop()
    assert holder["killed"] == [proc]


def test_stop_of_a_holder_not_started_or_gone_does_nothing(holder):
    EmbeddedRay().stop()
    ray = EmbeddedRay()
    ray.proc = Holder([])  # type: ignore[assignment]
    ray.proc.returncode = 1
    ray.stop()
    assert ray.proc.events == [] and holder["killed"] == []


def test_as_a_context_manager_it_starts_and_stops(holder, jobs):
    holder["holder"] = Holder([READY + json.dumps(READY_DOC)])
    with EmbeddedRay() as endpoints:
        assert endpoints == ENDPOINTS and holder["holder"].events == []
    assert holder["holder"].events == ["stdin closed", ("wait", 60.0)]
    assert jobs["submitted"] == [("http://127.0.0.1:8265", "true")]


def test_a_ready_line_at_the_deadline_itself_is_too_late(monkeypatch):
    monkeypatch.setattr(local_ray, "time", types.SimpleNamespace(monotonic=lambda: 5.0))  # no time passes
    ray = EmbeddedRay(start_timeout_s=0)
    ray._lines.put(READY + json.dumps(READY_DOC))
    with pytest.raises(EmbeddedRayError, match="^embedded Ray not ready within 0 s:\n$"):
        ray._await_ready()


def test_the_pump_passes_each_line_without_its_newline_then_the_end():
    ray = EmbeddedRay()
    ray.proc = Holder(["a  ", "endX", "\ttab"])  # type: ignore[assignment]
    ray._pump()
    assert [ray._lines.get_nowait() for _ in range(4)] == ["a  ", "endX", "\ttab", None]


def test_the_pump_needs_the_holders_output():
    ray = EmbeddedRay()
    proc = Holder([])
    proc.stdout = None  # type: ignore[assignment]
    ray.proc = proc  # type: ignore[assignment]
    with pytest.raises(AssertionError):
        ray._pump()


def test_the_pump_thread_is_a_daemon(holder, monkeypatch):
    made = []

    class Thread(threading.Thread):
        def __init__(self, **kw):
            made.append(kw.get("daemon"))
            super().__init__(**kw)

    monkeypatch.setattr(local_ray, "threading", types.SimpleNamespace(Thread=Thread, Lock=threading.Lock))
    holder["holder"] = Holder([READY + json.dumps(READY_DOC)])
    EmbeddedRay().start(jobs=False)
    assert made == [True]


# --- a start Ray itself gave up on is tried once more ----------------------------------------------------------------

RAY_GAVE_UP = ["Traceback (most recent call last):",
               "Exception: The current node timed out during startup. This could happen because some of the raylet "
               "failed to startup or the GCS has become overloaded."]


def _holders(holder, monkeypatch, *holders: Holder) -> list[Holder]:
    queue_ = list(holders)

    def popen(argv, **kw):
        holder["popen"].append((argv, kw))
        return queue_.pop(0)

    monkeypatch.setattr(local_ray.subprocess, "Popen", popen)
    return list(holders)


def test_a_start_ray_gave_up_on_is_tried_once_more_on_a_fresh_holder(holder, monkeypatch):
    first, second = _holders(holder, monkeypatch, Holder(RAY_GAVE_UP), Holder([READY + json.dumps(READY_DOC)]))
    ray = EmbeddedRay()
    assert ray.start(jobs=False) == ENDPOINTS
    assert len(holder["popen"]) == 2 and holder["popen"][0] == holder["popen"][1]
    assert holder["killed"] == [first]  # what the first holder left is killed with its group
    assert ray.retries == ["embedded Ray exited before it was ready:\n" + "\n".join(RAY_GAVE_UP)]
    assert ray._seen == [READY + json.dumps(READY_DOC)] and ray.proc is second


def test_a_start_that_fails_otherwise_is_not_tried_again(holder, monkeypatch):
    _holders(holder, monkeypatch, Holder(["Exception: port 6379 in use"]), Holder([READY + json.dumps(READY_DOC)]))
    ray = EmbeddedRay()
    with pytest.raises(EmbeddedRayError, match="^embedded Ray exited before it was ready:\nException: port 6379"):
        ray.start(jobs=False)
    assert len(holder["popen"]) == 1 and ray.retries == [] and holder["killed"] == []


def test_ray_giving_up_twice_ends_the_start_with_the_second_failure(holder, monkeypatch):
    first, second = _holders(holder, monkeypatch, Holder(RAY_GAVE_UP), Holder([*RAY_GAVE_UP, "again"]))
    ray = EmbeddedRay()
    with pytest.raises(EmbeddedRayError) as err:
        ray.start(jobs=False)
    assert str(err.value) == "embedded Ray exited before it was ready:\n" + "\n".join([*RAY_GAVE_UP, "again"])
    assert len(holder["popen"]) == 2 and len(ray.retries) == 1 and holder["killed"] == [first]
    assert local_ray.START_ATTEMPTS == 2 and local_ray.RAY_START_TIMEOUT == \
        "The current node timed out during startup"


def test_no_start_attempt_allowed_is_a_bug_said_as_such(holder, monkeypatch):
    holder["holder"] = Holder([READY + json.dumps(READY_DOC)])
    monkeypatch.setattr(local_ray, "START_ATTEMPTS", 0)
    with pytest.raises(AssertionError) as err:
        EmbeddedRay().start(jobs=False)
    assert str(err.value) == "unreachable" and holder["popen"] == []
