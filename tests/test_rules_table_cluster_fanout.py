"""Rule table for the per-node fan-out's decisions (rlcheck.cluster.fanout): how nodes are named, which failure is a
node that died and which an error, when a node is a timeout, a task that ran off its pin, the connect bounded by its
deadline, what the driver prints and how the caller's hard deadline grows with the plan. Ray is a stand-in module
here (the rule is the point; tests/test_fanout.py runs the real Ray); the driver's process machinery runs for real."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import types

import pytest

from rlcheck.cluster import fanout
from rlcheck.cluster.fanout_result import NODE, PLAN, RESULT, FanoutResult, NodeAnswer, NodeFacts, Outcome


def _node(i: int, host: str | None = None, head: bool = False) -> NodeFacts:
    return NodeFacts(node_id=f"{i:02d}" + "ab" * 27, address=f"10.0.0.{i}", hostname=host or f"h{i}", is_head=head,
                     ray_gpus=8.0)


# --- named -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("hosts", "names"), [
    (["a", "b"], ["a", "b"]),
    (["a", "a", "b"], ["a#01ababab", "a#02ababab", "b"]),  # a shared host name: the node id's start tells them apart
    (["", "b"], ["node#01ababab", "b"]),  # no host name at all
    ([], []),
])
def test_each_node_is_named_by_its_host_or_with_its_id(hosts, names):
    nodes = [NodeFacts(node_id=f"{i:02d}" + "ab" * 27, address="x", hostname=h, is_head=False, ray_gpus=0.0)
             for i, h in enumerate(hosts, 1)]
    assert [n.name for n in fanout.named(nodes)] == names


# --- a stand-in Ray --------------------------------------------------------------------------------------------------


class Died(Exception):
    pass


class Crashed(Exception):
    pass


class Other(Exception):
    pass


@pytest.fixture
def ray(monkeypatch):
    """A `ray` module: nodes, per-ref results (a dict or an exception), a scripted wait, cancel recorded."""
    mod = types.ModuleType("ray")
    exc = types.ModuleType("ray.exceptions")
    for name in ("NodeDiedError", "TaskUnschedulableError", "ObjectLostError", "LocalRayletDiedError",
                 "RaySystemError"):
        setattr(exc, name, type(name, (Died,), {}))
    exc.WorkerCrashedError = type("WorkerCrashedError", (Crashed,), {})
    util = types.ModuleType("ray.util")
    strategies = types.ModuleType("ray.util.scheduling_strategies")
    strategies.NodeAffinitySchedulingStrategy = lambda node_id, soft: ("pin", node_id, soft)
    state = {"results": {}, "waits": [], "cancelled": [], "submitted": [], "got": [], "nodes": [], "init": None,
             "node_id": "me"}

    class Task:
        def options(self, scheduling_strategy, name):
            return types.SimpleNamespace(remote=lambda collector, kwargs: self.submit(scheduling_strategy, name,
                                                                                      collector, kwargs))

        @staticmethod
        def submit(strategy, name, collector, kwargs):
            ref = f"ref-{strategy[1][:2]}"
            state["submitted"].append((strategy, name, collector, kwargs))
            return ref

    def remote(**opts):
        assert opts == {"num_cpus": 0, "max_retries": 0}
        return lambda fn: state.update(task_fn=fn) or Task()

    def wait(pending, num_returns, timeout):
        script = state["waits"].pop(0) if state["waits"] else ("all",)
        if script[0] == "all":
            return list(pending), []
        ready = [r for r in pending if r in script[1]]
        return ready, [r for r in pending if r not in ready]

    def get(ref, timeout):
        state["got"].append((ref, timeout))
        value = state["results"][ref]
        if isinstance(value, BaseException):
            raise value
        return value

    def cancel(ref, force):
        state["cancelled"].append((ref, force))
        if ref == "ref-99":
            raise RuntimeError("node is gone")

    def init(**kwargs):
        state["init_kwargs"] = kwargs
        if isinstance(state["init"], BaseException):
            raise state["init"]

    mod.remote, mod.wait, mod.get, mod.cancel, mod.init = remote, wait, get, cancel, init
    mod.nodes = lambda: state["nodes"]
    mod.get_runtime_context = lambda: types.SimpleNamespace(get_node_id=lambda: state["node_id"])
    mod.exceptions, mod.util, util.scheduling_strategies = exc, util, strategies
    for name, module in (("ray", mod), ("ray.exceptions", exc), ("ray.util", util),
                         ("ray.util.scheduling_strategies", strategies)):
        monkeypatch.setitem(sys.modules, name, module)
    state["exc"] = exc
    return state


# --- _failed and _answer ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "outcome"), [
    ("NodeDiedError", Outcome.DIED), ("WorkerCrashedError", Outcome.DIED), ("TaskUnschedulableError", Outcome.DIED),
    ("ObjectLostError", Outcome.DIED), ("LocalRayletDiedError", Outcome.DIED), ("RaySystemError", Outcome.DIED),
])
def test_a_node_whose_raylet_or_worker_died_is_died(ray, name, outcome):
    raised = getattr(ray["exc"], name)("first line\nthe last line\n")
    got = fanout._failed(_node(1), raised, 2.5)
    assert got == NodeAnswer(node=_node(1), outcome=outcome, elapsed_s=2.5, detail=f"{name}: the last line")


@pytest.mark.parametrize(("raised", "detail"), [
    (ValueError("collector broke"), "ValueError: collector broke"),
    (Other(""), "Other: "),  # nothing said: the type alone
    (Other("  \n"), "Other: "),
    (Other("x" * 3000), "Other: " + "x" * 1993),  # at most 2,000 characters
])
def test_any_other_failure_is_this_nodes_error(ray, raised, detail):
    got = fanout._failed(_node(1), raised, 1.0)
    assert (got.outcome, got.detail) == (Outcome.ERROR, detail)


def test_no_answer_by_the_deadline_is_a_timeout(ray):
    got = fanout._answer(_node(1), "ref-01", None, 61.2)
    assert got == NodeAnswer(node=_node(1), outcome=Outcome.TIMEOUT, elapsed_s=61.2,
                             detail="no answer within 61 s")
    assert ray["got"] == []  # never asked


def test_an_answer_fetched_with_a_bound(ray):
    node = _node(1)
    ray["results"]["ref-01"] = {"ran_on": node.node_id, "observation": {"gpus": 8}, "collect_s": 1.26}
    got = fanout._answer(node, "ref-01", 3.5, 60.0)
    assert got == NodeAnswer(node=node, outcome=Outcome.ANSWERED, elapsed_s=3.5, observation={"gpus": 8},
                             detail="collected in 1.3 s")
    assert ray["got"] == [("ref-01", 10)]


def test_a_task_that_ran_off_its_pin_is_an_error(ray):
    node = _node(1)
    ray["results"]["ref-01"] = {"ran_on": "other", "observation": {}, "collect_s": 0.0}
    got = fanout._answer(node, "ref-01", 3.5, 60.0)
    assert got == NodeAnswer(node=node, outcome=Outcome.ERROR, elapsed_s=3.5,
                             detail=f"the task pinned to {node.node_id} ran on other")  # no observation kept


def test_a_fetch_that_raises_is_the_nodes_failure(ray):
    ray["results"]["ref-01"] = ray["exc"].NodeDiedError("raylet gone")
    assert fanout._answer(_node(1), "ref-01", 4.0, 60.0) == NodeAnswer(
        node=_node(1), outcome=Outcome.DIED, elapsed_s=4.0, detail="NodeDiedError: raylet gone")


# --- fan_out_connected -----------------------------------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 1000.0

    def monotonic(self):
        return self.now


def test_every_node_gets_one_pinned_task_and_its_answer_in_rays_order(ray, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(fanout, "time", types.SimpleNamespace(monotonic=clock.monotonic))  # this module's clock only
    nodes = [_node(1), _node(2), _node(3)]
    for n in nodes:
        ray["results"][f"ref-{n.node_id[:2]}"] = {"ran_on": n.node_id, "observation": {"n": n.hostname},
                                                  "collect_s": 0.5}
    emitted = []
    got = fanout.fan_out_connected("m:f", {"k": 1}, 60.0, nodes=nodes, emit=lambda i, a: emitted.append((i, a)))
    assert ray["task_fn"] is fanout.run_collector  # the task each node runs is the collector's wrapper
    assert [(s[0], s[1], s[2], s[3]) for s in ray["submitted"]] == [
        (("pin", n.node_id, False), f"rlcheck-node-probe-{n.node_id[:8]}", "m:f", {"k": 1}) for n in nodes]
    assert [a.outcome for a in got] == [Outcome.ANSWERED] * 3
    assert [a.observation for a in got] == [None] * 3  # with emit: the driver keeps no observation
    assert [(i, a.observation) for i, a in emitted] == [(0, {"n": "h1"}), (1, {"n": "h2"}), (2, {"n": "h3"})]


def test_without_emit_the_answers_keep_their_observations(ray):
    node = _node(1)
    ray["results"]["ref-01"] = {"ran_on": node.node_id, "observation": {"x": 1}, "collect_s": 0.1}
    assert [a.observation for a in fanout.fan_out_connected("m:f", {}, 60.0, nodes=[node])] == [{"x": 1}]


def test_nodes_not_done_by_the_deadline_are_cancelled_and_timed_out(ray, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(fanout, "time", types.SimpleNamespace(monotonic=clock.monotonic))  # this module's clock only
    fast, slow, gone = _node(1), _node(2), _node(99)
    ray["results"]["ref-01"] = {"ran_on": fast.node_id, "observation": {}, "collect_s": 0.1}

    def wait(pending, num_returns, timeout):
        ray["wait_timeouts"] = [*ray.get("wait_timeouts", []), (num_returns, timeout)]
        if "ref-01" in pending and num_returns == 1:
            clock.now += 1.23456
            return ["ref-01"], [r for r in pending if r != "ref-01"]
        if num_returns > 1:
            return [], list(pending)  # the others are not done yet
        clock.now += 1000.0  # the deadline passes
        return [], list(pending)

    monkeypatch.setattr(sys.modules["ray"], "wait", wait)
    got = fanout.fan_out_connected("m:f", {}, 60.0, nodes=[fast, slow, gone])
    deadline = 60.0 + 0.1 * 3
    assert [(a.node.hostname, a.outcome, a.elapsed_s) for a in got] == [
        ("h1", Outcome.ANSWERED, 1.235), ("h2", Outcome.TIMEOUT, deadline), ("h99", Outcome.TIMEOUT, deadline)]
    assert ray["cancelled"] == [("ref-02", True), ("ref-99", True)]  # a node that cannot cancel is abandoned
    # the first wait is bounded by the whole node deadline; a second takes every other finished task at once; with
    # none ready, the next wait is for what is left of the deadline (no sweep of the rest with nothing in hand)
    assert [(n, pytest.approx(t)) for n, t in ray["wait_timeouts"]] == [(1, deadline), (2, 0),
                                                                        (1, deadline - 1.23456)]


@pytest.mark.parametrize(("left_s", "outcome"), [
    (0.0, Outcome.TIMEOUT),  # the deadline reached: not waited on once more, though its answer was about to come
    (0.5, Outcome.ANSWERED),  # half a second left: waited on for that half second
    (1.0, Outcome.ANSWERED),
])
def test_a_node_is_waited_on_until_the_deadline_and_not_at_it(ray, monkeypatch, left_s, outcome):
    clock = Clock()
    monkeypatch.setattr(fanout, "time", types.SimpleNamespace(monotonic=clock.monotonic))  # this module's clock only
    node = _node(1)
    ray["results"]["ref-01"] = {"ran_on": node.node_id, "observation": {}, "collect_s": 0.1}
    deadline = fanout.node_deadline_s(60.0, 1)
    timeouts = []

    def wait(pending, num_returns, timeout):
        timeouts.append(timeout)
        if len(timeouts) == 1:  # nothing until left_s before the deadline
            clock.now = 1000.0 + deadline - left_s
            return [], list(pending)
        return list(pending), []  # asked again: the answer is there

    monkeypatch.setattr(sys.modules["ray"], "wait", wait)
    [got] = fanout.fan_out_connected("m:f", {}, 60.0, nodes=[node])
    assert got.outcome is outcome
    first = pytest.approx(deadline)
    assert timeouts == ([first] if outcome is Outcome.TIMEOUT else [first, pytest.approx(left_s)])


def test_without_nodes_given_the_alive_nodes_are_listed(ray):
    ray["nodes"] = [{"NodeID": f"{i}" * 56, "NodeManagerAddress": f"10.0.0.{i}", "NodeManagerHostname": f"gpu-{i}",
                     "Alive": i != 2, "Resources": {"GPU": 8.0}} for i in (1, 2, 3)]
    for i in (1, 3):
        ray["results"][f"ref-{i}{i}"] = {"ran_on": f"{i}" * 56, "observation": {"i": i}, "collect_s": 0.2}
    got = fanout.fan_out_connected("m:f", {}, 60.0)
    assert [(a.node.name, a.outcome, a.observation) for a in got] == [
        ("gpu-1", Outcome.ANSWERED, {"i": 1}), ("gpu-3", Outcome.ANSWERED, {"i": 3})]
    assert [s[0][1] for s in ray["submitted"]] == ["1" * 56, "3" * 56]  # none pinned to the dead node


def test_no_nodes_no_tasks(ray):
    assert fanout.fan_out_connected("m:f", {}, 60.0, nodes=[]) == [] and ray["submitted"] == []


def test_the_alive_nodes_are_listed_and_named(ray):
    ray["nodes"] = [
        {"NodeID": "a" * 56, "NodeManagerAddress": "10.0.0.1", "NodeManagerHostname": "x", "Alive": True,
         "Resources": {"GPU": 8.0, "node:__internal_head__": 1.0}},
        {"NodeID": "b" * 56, "NodeManagerAddress": "10.0.0.2", "NodeManagerHostname": "x", "Alive": True,
         "Resources": {}},
        {"NodeID": "c" * 56, "NodeManagerAddress": "10.0.0.3", "NodeManagerHostname": "y", "Alive": False,
         "Resources": {"GPU": 8.0}},
    ]
    got = fanout.alive_nodes()
    assert [(n.address, n.is_head, n.ray_gpus, n.name) for n in got] == [
        ("10.0.0.1", True, 8.0, "x#aaaaaaaa"), ("10.0.0.2", False, 0.0, "x#bbbbbbbb")]


def test_run_collector_calls_the_target_and_says_where_it_ran(ray):
    ray["node_id"] = "n1"
    got = fanout.run_collector("json:dumps", {"obj": [1]})
    assert (got["ran_on"], got["observation"]) == ("n1", "[1]") and got["collect_s"] >= 0


def test_run_collector_takes_the_module_up_to_the_first_colon(ray):
    # a module name has no colon: all after the first one is the name looked up in the module (here, a missing one)
    with pytest.raises(AttributeError, match="module 'json' has no attribute 'dumps:v2'"):
        fanout.run_collector("json:dumps:v2", {"obj": [1]})


# --- _connect and drive ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("raised", "said"), [
    (None, ""),
    (ConnectionError("could not reach\nGCS at 10.0.0.1:6379"), "ConnectionError: GCS at 10.0.0.1:6379"),
    (RuntimeError(""), "RuntimeError: "),
])
def test_connect_says_what_happened(ray, raised, said):
    ray["init"] = raised
    assert fanout._connect("10.0.0.1:6379", 5.0, ship=False) == said
    assert ray["init_kwargs"]["address"] == "10.0.0.1:6379" and ray["init_kwargs"]["runtime_env"] is None


def test_connect_ships_the_package_when_asked(ray):
    fanout._connect("ray://h:10001", 5.0, ship=True)
    assert ray["init_kwargs"]["runtime_env"]["py_modules"]


def test_connect_that_does_not_return_is_bounded(ray, monkeypatch):
    import threading

    gate = threading.Event()
    monkeypatch.setattr(sys.modules["ray"], "init", lambda **kw: gate.wait(5))
    try:
        assert fanout._connect("10.0.0.1:6379", 0.2, ship=False) == ("ray.init(address='10.0.0.1:6379') did not "
                                                                     "return within 0 s")
    finally:
        gate.set()


def _args(**kw) -> argparse.Namespace:
    return argparse.Namespace(**{"address": "10.0.0.1:6379", "connect_timeout_s": 30.0, "ship": False,
                                 "collector": "m:f", "kwargs": "{}", "node_timeout_s": 60.0, **kw})


def test_drive_that_cannot_connect_is_not_connected_naming_what_was_tried(ray, capsys):
    ray["init"] = ConnectionError("refused")
    got = fanout.drive(_args())
    assert (got.connected, got.error, got.tried, got.nodes) == (
        False, "ConnectionError: refused", "ray.init(address='10.0.0.1:6379') with a 30 s deadline", ())
    assert capsys.readouterr().out == ""  # no plan: nothing was listed


def test_drive_prints_its_plan_then_each_answer_and_counts_dead_nodes(ray, capsys):
    ray["nodes"] = [{"NodeID": f"{i}" * 56, "NodeManagerAddress": f"10.0.0.{i}", "NodeManagerHostname": f"h{i}",
                     "Alive": i != 3, "Resources": {}} for i in (1, 2, 3)]
    for i in (1, 2):
        ray["results"][f"ref-{i}{i}"] = {"ran_on": f"{i}" * 56, "observation": {"i": i}, "collect_s": 0.0}
    got = fanout.drive(_args())
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == PLAN + json.dumps({"nodes": 2})
    assert [json.loads(x.removeprefix(NODE))["observation"] for x in lines[1:]] == [{"i": 1}, {"i": 2}]
    assert all(x.startswith(NODE) for x in lines[1:]) and len(lines) == 3
    assert (got.connected, got.dead_nodes, len(got.nodes), got.error) == (True, 1, 2, "")


def test_main_prints_one_result_line_last(ray, capsys, monkeypatch):
    monkeypatch.setattr(fanout, "drive", lambda args: FanoutResult(address=args.address, connected=False, tried="t",
                                                                   error="e"))
    assert fanout._main(["--address", "10.0.0.1:6379"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [RESULT + json.dumps(FanoutResult(address="10.0.0.1:6379", connected=False, tried="t",
                                                    error="e").to_dict())]


def test_main_flushes_and_leaves_with_the_drivers_code_without_rays_shutdown(monkeypatch):
    events = []
    monkeypatch.setattr(fanout, "_main", lambda: events.append("drove") or 0)
    out = FlushCounting()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(fanout, "os", types.SimpleNamespace(_exit=lambda code: events.append((code, out.flushes))))
    fanout.main()
    assert events == ["drove", (0, 1)]


def test_main_defaults(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(fanout, "drive", lambda args: seen.append(args) or FanoutResult(address="a", connected=False,
                                                                                       tried="t"))
    fanout._main(["--address", "h:1"])
    a = seen[0]
    assert (a.collector, a.kwargs, a.node_timeout_s, a.connect_timeout_s, a.job_python, a.ship) == (
        fanout.COLLECTOR, "{}", 60.0, 30.0, "python", False)


# --- fan_out and run_planned -----------------------------------------------------------------------------------------


def test_a_refused_address_is_said_at_once(monkeypatch):
    monkeypatch.setattr(fanout.reach, "refused", lambda address: f"{address}: connection refused")
    ran = []
    monkeypatch.setattr(fanout, "run_planned", lambda *a, **k: ran.append(a))
    got = fanout.fan_out("10.0.0.1:6379")
    assert (got.connected, got.tried, got.error, ran) == (False, "a TCP connection to 10.0.0.1:6379",
                                                          "10.0.0.1:6379: connection refused", [])


@pytest.mark.parametrize(("address", "ship", "extra_s", "loopback"), [
    ("127.0.0.1:6379", False, 0.0, True),
    ("10.0.0.1:6379", False, 0.0, False),
    ("ray://10.0.0.1:10001", True, 0.0, False),
    ("http://10.0.0.1:8265", True, 30.0 + 60.0, False),
    ("https://h:8265", True, 30.0 + 60.0, False),
])
def test_fan_out_runs_the_driver_with_its_planned_deadline(monkeypatch, address, ship, extra_s, loopback):
    monkeypatch.setattr(fanout.reach, "refused", lambda a: "")
    seen = {}

    def run_planned(argv, *, env, deadline_s):
        seen.update(argv=argv, env=env, none=deadline_s(None), four=deadline_s(4))
        return fanout.subproc.Completed(argv=tuple(argv), returncode=0, stdout=RESULT + json.dumps(
            FanoutResult(address=address, connected=True, tried="t").to_dict()) + "\n", stderr="", timed_out=False), 1.0

    monkeypatch.setattr(fanout, "run_planned", run_planned)
    got = fanout.fan_out(address, kwargs={"a": 1}, job_python="/py")
    assert got.connected
    assert seen["argv"] == [sys.executable, "-m", "rlcheck.cluster.fanout", "--address", address, "--collector",
                            fanout.COLLECTOR, "--kwargs", '{"a": 1}', "--node-timeout-s", "60.0",
                            "--connect-timeout-s", "30.0", "--job-python", "/py", *(["--ship"] if ship else [])]
    assert seen["none"] == pytest.approx(extra_s + 30.0 + 60.0 + 45.0)
    assert seen["four"] == pytest.approx(extra_s + 30.0 + 60.0 + 0.4 + 45.0 + 0.4)
    assert seen["env"]["RAY_USAGE_STATS_ENABLED"] == "0"
    assert ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" in seen["env"]) is loopback


def test_a_driver_that_gives_no_result_says_why(monkeypatch):
    monkeypatch.setattr(fanout.reach, "refused", lambda a: "")
    done = fanout.subproc.Completed(argv=("x",), returncode=None, stdout="", stderr="a\nb\nc\nd\n", timed_out=True)
    monkeypatch.setattr(fanout, "run_planned", lambda argv, env, deadline_s: (done, 135.0))
    got = fanout.fan_out("10.0.0.1:6379")
    assert (got.connected, got.tried, got.error) == (
        False, "the fan-out driver (python -m rlcheck.cluster.fanout) with a 135 s deadline",
        "the driver gave no result (killed at its deadline): b\nc\nd")


def test_run_planned_grows_the_deadline_with_the_plan_and_kills_at_it():
    code = (f"import sys, time; print({PLAN!r} + '{{\"nodes\": 3}}', flush=True); print('err', file=sys.stderr); "
            "time.sleep(60)")
    asked = []

    def deadline_s(nodes):
        asked.append(nodes)
        return 2.0 if nodes is None else 1.0 + nodes * 0.1

    done, limit = fanout.run_planned([sys.executable, "-c", code], env={}, deadline_s=deadline_s)
    assert asked == [None, 3] and limit == pytest.approx(1.3)
    assert (done.timed_out, done.returncode, done.stderr) == (True, None, "err\n")
    assert done.stdout.startswith(PLAN)


def test_run_planned_of_a_driver_that_ends_keeps_its_code():
    done, limit = fanout.run_planned([sys.executable, "-c", "print('x'); raise SystemExit(3)"], env={},
                                     deadline_s=lambda nodes: 30.0)
    assert (done.timed_out, done.returncode, done.stdout, limit) == (False, 3, "x\n", 30.0)


def test_run_planned_gives_the_driver_no_stdin_only_its_env_and_a_session_of_its_own(monkeypatch):
    monkeypatch.setenv("RLCHECK_CALLERS_OWN", "1")
    code = ("import os, sys; print(repr(sys.stdin.read())); "
            "print(os.environ.get('RLCHECK_GIVEN'), os.environ.get('RLCHECK_CALLERS_OWN')); "
            "print('own session' if os.getsid(0) == os.getpid() else 'the caller session'); "
            "print('ray: one', file=sys.stderr); print('ray: two', file=sys.stderr)")
    argv = [sys.executable, "-c", code]
    typed, keys = os.pipe()  # the caller's stdin has something in it: the driver must not read it
    os.write(keys, b"y\n")
    os.close(keys)
    saved = os.dup(0)
    os.dup2(typed, 0)
    try:
        done, limit = fanout.run_planned(argv, env={"RLCHECK_GIVEN": "yes"}, deadline_s=lambda nodes: 30.0)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(typed)
    assert done == fanout.subproc.Completed(argv=tuple(argv), returncode=0, stdout="''\nyes None\nown session\n",
                                            stderr="ray: one\nray: two\n", timed_out=False)


def test_run_planned_stops_reading_what_an_escaped_process_holds_open(monkeypatch):
    monkeypatch.setattr(fanout.subproc, "DRAIN_S", 0.2)
    made = []
    real = threading.Thread

    def thread(*a, **kw):
        made.append(real(*a, **kw))
        return made[-1]

    monkeypatch.setattr(fanout.threading, "Thread", thread)
    escaped = "import time; time.sleep(5); print('late', flush=True)"  # left the group: the kill cannot reach it
    code = (f"import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', {escaped!r}], "
            "start_new_session=True); print(p.pid, flush=True)")
    done, _ = fanout.run_planned([sys.executable, "-c", code], env={}, deadline_s=lambda nodes: 30.0)
    try:
        # the driver's own lines, read within DRAIN_S of its end; not what the escaped process writes later
        assert (done.returncode, done.timed_out, done.stdout.splitlines()[1:]) == (0, False, [])
        assert [t.daemon for t in made] == [True, True]  # a reader blocked on that pipe keeps no interpreter alive
    finally:
        with contextlib.suppress(ProcessLookupError, ValueError, IndexError):
            os.kill(int(done.stdout.split()[0]), signal.SIGKILL)


def test_run_planned_waits_in_steps_of_a_second_at_most_and_kills_at_the_deadline(monkeypatch):
    readings = iter([0.0, 8.5, 9.95, 10.0, 11.0, 12.0])  # the start, then each look at what is left of 10 s
    now = []
    monkeypatch.setattr(fanout, "time", types.SimpleNamespace(monotonic=lambda: now.append(next(readings)) or now[-1]))
    asked, killed_at = [], []

    class Driver(subprocess.Popen):
        def wait(self, timeout=None):
            if killed_at:  # the kill's own wait for the group to end
                return super().wait(timeout)
            asked.append(timeout)
            raise subprocess.TimeoutExpired(self.args, timeout)  # still running at every step

    real_kill = fanout.subproc.kill_group
    monkeypatch.setattr(fanout.subproc, "kill_group", lambda proc: killed_at.append(now[-1]) or real_kill(proc))
    monkeypatch.setattr(fanout.subprocess, "Popen", Driver)
    done, limit = fanout.run_planned([sys.executable, "-c", "import time; time.sleep(60)"], env={},
                                     deadline_s=lambda nodes: 10.0)
    assert asked == [1.0, pytest.approx(0.05)]  # 1.5 s left: a 1 s step (a new plan is read between steps)
    assert killed_at == [10.0]  # at the deadline itself, not one step later
    assert (done.timed_out, done.returncode, limit) == (True, None, 10.0)


FANOUT_HELP = """\
usage: fanout [-h] --address ADDRESS [--collector COLLECTOR] [--kwargs KWARGS] [--node-timeout-s NODE_TIMEOUT_S]
              [--connect-timeout-s CONNECT_TIMEOUT_S] [--job-python JOB_PYTHON] [--ship]

rlcheck per-node fan-out driver (prints one result line)

options:
  -h, --help            show this help message and exit
  --address ADDRESS
  --collector COLLECTOR
  --kwargs KWARGS       JSON keyword arguments for the collector
  --node-timeout-s NODE_TIMEOUT_S
  --connect-timeout-s CONNECT_TIMEOUT_S
  --job-python JOB_PYTHON
                        interpreter for the job driver (http addresses)
  --ship                ship rlcheck to the workers (runtime_env py_modules)
"""


def test_the_driver_says_its_options(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setattr(sys, "argv", ["fanout"])
    with pytest.raises(SystemExit) as exc:
        fanout._main(["--help"])
    assert exc.value.code == 0 and capsys.readouterr().out == FANOUT_HELP
    with pytest.raises(SystemExit) as exc:
        fanout._main([])  # --address is required
    assert exc.value.code == 2 and "the following arguments are required: --address" in capsys.readouterr().err


@pytest.mark.parametrize(("address", "through_job"), [("http://h:8265", True), ("https://h:8265", True),
                                                      ("ray://h:10001", False), ("h:6379", False)])
def test_the_driver_goes_in_by_the_addresss_scheme(monkeypatch, address, through_job):
    from rlcheck.cluster import fanout_job

    seen = []
    result = FanoutResult(address=address, connected=False, tried="t")
    monkeypatch.setattr(fanout, "drive", lambda args: seen.append(("drive", args)) or result)
    monkeypatch.setattr(fanout_job, "drive_through_job", lambda args: seen.append(("job", args)) or result)
    out = FlushCounting()
    monkeypatch.setattr(sys, "stdout", out)
    fanout._main(["--address", address, "--kwargs", '{"a": 1}', "--node-timeout-s", "5", "--connect-timeout-s", "6.5",
                  "--job-python", "/py", "--ship", "--collector", "m:g"])
    [(way, args)] = seen
    assert way == ("job" if through_job else "drive")
    # the deadlines are numbers (seconds), whichever way the driver goes in
    assert (args.address, args.collector, args.kwargs, args.node_timeout_s, args.connect_timeout_s, args.job_python,
            args.ship) == (address, "m:g", '{"a": 1}', 5.0, 6.5, "/py", True)
    assert out.text == RESULT + json.dumps(result.to_dict()) + "\n"
    assert out.flushes == 1  # the result line is out before the driver leaves with os._exit


# --- what each step hands on (the recorded calls, a stepped clock) ---------------------------------------------------


class Stepped:
    """time.monotonic of the fan-out module: each call 1.5 s after the last."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        self.now += 1.5
        return self.now


class FlushCounting:
    def __init__(self):
        self.text, self.flushes = "", 0

    def write(self, text):
        self.text += text

    def flush(self):
        self.flushes += 1


def test_connect_asks_ray_for_a_quiet_driver_in_a_daemon_thread(ray, monkeypatch):
    import logging
    import threading

    made = []
    real = threading.Thread

    def thread(*a, **kw):
        made.append(kw.get("daemon"))
        return real(*a, **kw)

    monkeypatch.setattr(fanout.threading, "Thread", thread)
    assert fanout._connect("10.0.0.1:6379", 5.0, ship=False) == ""
    assert made == [True]  # a connect that never returns does not keep the driver alive
    assert ray["init_kwargs"] == {"address": "10.0.0.1:6379", "logging_level": logging.ERROR, "log_to_driver": False,
                                  "runtime_env": None}


def test_drive_hands_on_what_it_was_given_and_times_itself(ray, monkeypatch):
    monkeypatch.setattr(fanout, "time", types.SimpleNamespace(monotonic=Stepped()))  # this module's clock only
    asked = {}
    monkeypatch.setattr(fanout, "_connect", lambda *a: asked.setdefault("connect", a) and "")
    nodes = [_node(1)]
    monkeypatch.setattr(fanout, "alive_nodes", lambda: nodes)

    def connected(collector, kwargs, node_timeout_s, *, nodes, emit):
        asked["fan"] = (collector, kwargs, node_timeout_s, nodes)
        emit(0, NodeAnswer(node=nodes[0], outcome=Outcome.ANSWERED, elapsed_s=1.0))
        return [NodeAnswer(node=nodes[0], outcome=Outcome.ANSWERED, elapsed_s=1.0)]

    monkeypatch.setattr(fanout, "fan_out_connected", connected)
    out = FlushCounting()
    monkeypatch.setattr(sys, "stdout", out)
    got = fanout.drive(_args(address="h:1", connect_timeout_s=7.0, ship=True, collector="m:g", kwargs='{"a": 2}',
                             node_timeout_s=9.0))
    assert asked == {"connect": ("h:1", 7.0, True), "fan": ("m:g", {"a": 2}, 9.0, nodes)}
    assert (got.address, got.tried, got.elapsed_s) == ("h:1", "ray.init(address='h:1') with a 7 s deadline", 1.5)
    assert out.flushes == 2 and json.loads(out.text.splitlines()[1].removeprefix(NODE))["index"] == 0


def test_drive_that_cannot_connect_times_itself(ray, monkeypatch):
    monkeypatch.setattr(fanout, "time", types.SimpleNamespace(monotonic=Stepped()))  # this module's clock only
    monkeypatch.setattr(fanout, "_connect", lambda *a: "ConnectionError: no")
    got = fanout.drive(_args(address="h:2"))
    assert (got.address, got.elapsed_s) == ("h:2", 1.5)


class Observation:
    def to_dict(self):
        return {"as": "dict"}


@pytest.mark.parametrize(("target", "observation"), [
    ("tests.test_rules_table_cluster_fanout:Observation", {"as": "dict"}),  # a result with to_dict: its dict
    ("json:loads", [1]),  # plain data as it is
])
def test_run_collector_returns_plain_data_and_its_time(ray, monkeypatch, target, observation):
    clock = iter([10.0, 11.23456]).__next__
    monkeypatch.setattr(fanout, "time", types.SimpleNamespace(monotonic=clock))  # this module's clock only
    kwargs = {} if "Observation" in target else {"s": "[1]"}
    got = fanout.run_collector(target, kwargs)
    assert got == {"ran_on": "me", "observation": observation, "collect_s": 1.235}


def test_fan_out_defaults_and_what_a_lost_driver_reports(monkeypatch):
    monkeypatch.setattr(fanout.reach, "refused", lambda a: "")
    monkeypatch.setattr(fanout, "time", types.SimpleNamespace(monotonic=Stepped()))  # this module's clock only
    seen = {}
    done = fanout.subproc.Completed(argv=("x",), returncode=1, stdout="", stderr="boom\n", timed_out=False)

    def run_planned(argv, *, env, deadline_s):
        seen.update(argv=argv, env=env)
        return done, 100.0

    monkeypatch.setattr(fanout, "run_planned", run_planned)
    got = fanout.fan_out("127.0.0.1:6379")
    assert seen["argv"][seen["argv"].index("--job-python") + 1] == "python"
    assert seen["env"]["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"
    assert (got.address, got.elapsed_s, got.error) == ("127.0.0.1:6379", 1.5, "the driver gave no result (exit code "
                                                                             "1): boom")
    monkeypatch.setattr(fanout.reach, "refused", lambda a: "refused")
    assert fanout.fan_out("10.0.0.9:6379").address == "10.0.0.9:6379"
