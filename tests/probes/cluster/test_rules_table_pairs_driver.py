"""Rule table for the pairwise all-reduce driver (rlcheck.probes.cluster.pairs_driver) without a cluster: Ray's calls
and the rank tasks are replaced by recording stand-ins, so each rule is judged on its own: a pair's outcome from its
ranks (no port, not done, a rank's error, the slower rank's bandwidth), what each rank is given, which rounds run
and when the all-nodes round is skipped, the waits and the hard deadline, a Ray job's answer through the Jobs API,
and the child's result line. tests/probes/cluster/test_pairs_loopback.py runs the same driver on a real Ray."""

from __future__ import annotations

import argparse
import json
import sys
import time
import types

import pytest
import ray

from rlcheck.cluster import launch
from rlcheck.cluster.fanout_result import NodeFacts
from rlcheck.probes.cluster import nccl_pairs
from rlcheck.probes.cluster import pairs_driver as pd
from rlcheck.probes.cluster.nccl_pairs import GroupResult, PairOutcome, PairResult, PairsObservation
from rlcheck.process import subproc


def _facts(name: str, gpus: float = 1.0) -> NodeFacts:
    return NodeFacts(node_id=name, address=f"10.0.0.{ord(name[0]) - 96}", hostname=name, is_head=name == "a",
                     ray_gpus=gpus)


FACTS = {n: _facts(n) for n in "abcd"} | {"e": _facts("e", 0.0)}
ERROR = PairResult(first="a", second="b", backend="nccl", outcome=PairOutcome.ERROR)


def _args(**changes) -> argparse.Namespace:
    base = {"address": "10.0.0.1:6379", "member": pd.MEMBER, "member_kwargs": "{}", "size_bytes": 1024,
            "iterations": 3, "pair_timeout_s": 20.0, "connect_timeout_s": 30.0, "floor_gbps": None,
            "job_python": "python", "nodes": 4}
    return argparse.Namespace(**base | changes)


# --- a pair's outcome from its ranks --------------------------------------------------------------------------


@pytest.mark.parametrize(("refs", "done", "answers", "outcome", "busbw", "detail"), [
    ([], set(), {}, PairOutcome.ERROR, None, "no rendezvous port from rank 0"),
    (["r0", "r1"], {"r0"}, {}, PairOutcome.TIMEOUT, None, "not done within 7.5 s"),
    (["r0", "r1"], {"r0", "r1"}, {"r0": (None, "RuntimeError: NCCL timeout"), "r1": (None, "OSError: gone")},
     PairOutcome.ERROR, None, "RuntimeError: NCCL timeout; OSError: gone"),
    (["r0", "r1"], {"r0", "r1"}, {"r0": ({"busbw_gbps": 40}, ""), "r1": (None, "OSError: gone")},
     PairOutcome.ERROR, None, "OSError: gone"),
    # the slower rank's view is the pair's bandwidth
    (["r0", "r1"], {"r0", "r1"}, {"r0": ({"busbw_gbps": "41.5"}, ""), "r1": ({"busbw_gbps": 40.25}, "")},
     PairOutcome.MEASURED, 40.25, ""),
])
def test_a_pairs_outcome_from_its_ranks(monkeypatch, refs, done, answers, outcome, busbw, detail):
    monkeypatch.setattr(pd, "_get", answers.__getitem__)
    assert pd._result(ERROR, refs, done, 7.5) == PairResult(first="a", second="b", backend="nccl", outcome=outcome,
                                                            busbw_gbps=busbw, detail=detail)


@pytest.mark.parametrize(("raised", "said"), [
    (RuntimeError("Traceback ...\n  File x\nRuntimeError: NCCL error  "), "RuntimeError: RuntimeError: NCCL error"),
    (TimeoutError(""), "TimeoutError: "),
    (ValueError("x" * 600), "ValueError: " + "x" * 488),
])
def test_a_ranks_error_is_its_last_line(monkeypatch, raised, said):
    def get(ref, timeout):
        assert timeout == 10
        raise raised

    monkeypatch.setattr(ray, "get", get)
    assert pd._get("ref") == (None, said)
    monkeypatch.setattr(ray, "get", lambda ref, timeout: {"observation": {"busbw_gbps": float(ref == "ref")}})
    assert pd._get("ref") == ({"busbw_gbps": 1.0}, "")


def test_wait_keeps_what_is_done_and_cancels_the_rest(monkeypatch):
    waits, cancelled = [], []

    def wait(pending, num_returns, timeout):
        waits.append((list(pending), num_returns))
        ready = [p for p in pending if p in ("r0", "r2")][:1]
        if not ready:
            time.sleep(min(timeout, 0.01))
        return ready, [p for p in pending if p not in ready]

    def cancel(ref, force):
        assert force is True
        cancelled.append(ref)
        if ref == "r3":
            raise RuntimeError("the node is dead")  # abandoned, not raised

    monkeypatch.setattr(ray, "wait", wait)
    monkeypatch.setattr(ray, "cancel", cancel)
    assert pd._wait(["r0", "r1", "r2", "r3"], 0.05) == {"r0", "r2"}
    assert waits[:3] == [(["r0", "r1", "r2", "r3"], 1), (["r1", "r2", "r3"], 1), (["r1", "r3"], 1)]
    assert cancelled == ["r1", "r3"]
    waits.clear()
    assert pd._wait(["r0"], 0) == set() and waits == []
    # no time left at all (the clock did not move): nothing is waited for
    monkeypatch.setattr(pd, "time", types.SimpleNamespace(monotonic=lambda: 100.0))
    assert pd._wait(["r0"], 0) == set() and waits == []


# --- what each rank is given --------------------------------------------------------------------------------


class _Ref:
    def __init__(self, node: str, backend: str, name: str, member: str, kwargs: dict):
        self.node, self.backend, self.name, self.member, self.kwargs = node, backend, name, member, kwargs


def _record_tasks(monkeypatch) -> list[_Ref]:
    made: list[_Ref] = []

    def task(node, backend, name):
        class Task:
            @staticmethod
            def remote(member, kwargs):
                made.append(_Ref(node.node_id, backend, name, member, kwargs))
                return made[-1]
        return Task

    monkeypatch.setattr(pd, "_task", task)
    return made


def test_ranks_get_the_rendezvous_of_their_groups_first_node(monkeypatch):
    made = _record_tasks(monkeypatch)
    waits = []

    def wait(refs, timeout_s):
        waits.append((list(refs), timeout_s))
        return {r for r in refs if r.node != "c"}  # c's port never comes

    monkeypatch.setattr(pd, "_wait", wait)
    monkeypatch.setattr(pd, "_get", lambda ref: ({"a": 2900, "e": None}.get(ref.node, 2901), ""))
    args = _args(member="m:f", member_kwargs='{"delay_s": 1, "rank": 9, "timeout_s": 5}')
    ranks = pd._ranks([("a", "b"), ("c", "d"), ("e", "a"), ("d", "b", "a")], ["nccl", "gloo", "gloo", "nccl"],
                      FACTS, args)
    ports = made[:4]
    assert [(p.node, p.backend, p.name, p.member, p.kwargs) for p in ports] == [
        (n, "gloo", "rlcheck-pair-port", "rlcheck.probes.node.pair_member:pick_port", {"address": FACTS[n].address})
        for n in "aced"]
    assert waits == [(ports, pd.PORT_TIMEOUT_S + pd.PER_NODE_S * 4)]
    # c's port did not come and e's rank 0 gave none: no ranks for those groups
    assert [len(r) for r in ranks] == [2, 0, 0, 3]
    common = {"size_bytes": 1024, "iterations": 3, "delay_s": 1, "timeout_s": 5}
    assert [(r.node, r.backend, r.name, r.member, r.kwargs) for r in ranks[0]] == [
        ("a", "nccl", "rlcheck-pair-rank0", "m:f", {"world_size": 2, "master_addr": FACTS["a"].address,
                                                    "master_port": 2900, "backend": "nccl", **common, "rank": 0}),
        ("b", "nccl", "rlcheck-pair-rank1", "m:f", {"world_size": 2, "master_addr": FACTS["a"].address,
                                                    "master_port": 2900, "backend": "nccl", **common, "rank": 1})]
    assert [(r.node, r.name, r.kwargs["rank"], r.kwargs["world_size"], r.kwargs["master_addr"],
             r.kwargs["master_port"]) for r in ranks[3]] == [
        ("d", "rlcheck-pair-rank0", 0, 3, FACTS["d"].address, 2901),
        ("b", "rlcheck-pair-rank1", 1, 3, FACTS["d"].address, 2901),
        ("a", "rlcheck-pair-rank2", 2, 3, FACTS["d"].address, 2901)]


def test_task_asks_a_gpu_for_nccl_and_no_cpu_for_gloo(monkeypatch):
    asked = []

    def remote(**resources):
        asked.append(resources)

        class Fn:
            @staticmethod
            def options(scheduling_strategy, name):
                asked.append((scheduling_strategy.node_id, scheduling_strategy.soft, name))
                return "task"
        def wrap(f):
            asked.append(f.__name__)
            return Fn
        return wrap

    monkeypatch.setattr(ray, "remote", remote)
    gpu, cpu = (NodeFacts(node_id=c * 56, address="10.0.0.9", hostname=c, is_head=False, ray_gpus=g)
                for c, g in (("b", 1.0), ("e", 0.0)))
    assert pd._task(gpu, "nccl", "n1") == "task" and pd._task(cpu, "gloo", "n2") == "task"
    assert asked == [{"max_retries": 0, "num_gpus": 1}, "run_collector", ("b" * 56, False, "n1"),
                     {"max_retries": 0, "num_cpus": 0}, "run_collector", ("e" * 56, False, "n2")]


# --- rounds ---------------------------------------------------------------------------------------------------


def _fake_ranks(monkeypatch, answers: dict[str, tuple[dict | None, str]], *, port_missing: frozenset = frozenset(),
                hung: frozenset = frozenset()):
    """Each group's ranks are its node names (rank refs); answers by node; the waits are recorded."""
    calls, waits = [], []

    def ranks(groups, backends, facts, args):
        assert facts is FACTS and args.pair_timeout_s == 20.0
        calls.append((list(groups), list(backends)))
        return [[] if g[0] in port_missing else [f"{g[0]}{g}:{n}" for n in g] for g in groups]

    def wait(refs, timeout_s):
        waits.append(timeout_s)
        return {r for r in refs if r.split(":")[1] not in hung}

    monkeypatch.setattr(pd, "_ranks", ranks)
    monkeypatch.setattr(pd, "_wait", wait)
    monkeypatch.setattr(pd, "_get", lambda ref: answers[ref.split(":")[1]])
    return calls, waits


def test_round_judges_every_pair_and_waits_for_its_ranks(monkeypatch):
    ok = ({"busbw_gbps": 50.0}, "")
    calls, waits = _fake_ranks(monkeypatch, {"a": ok, "b": ({"busbw_gbps": 30.0}, ""), "c": ok, "d": ok, "e": ok},
                               port_missing=frozenset({"c"}), hung=frozenset({"e"}))
    out = pd.run_round([("a", "b"), ("c", "d"), ("d", "e")], FACTS, _args(), repair=True)
    assert calls == [([("a", "b"), ("c", "d"), ("d", "e")], ["nccl", "nccl", "gloo"])]
    assert waits == [pytest.approx(20.0 + 2 * pd.PER_NODE_S * 6)]
    assert out == [
        PairResult(first="a", second="b", backend="nccl", outcome=PairOutcome.MEASURED, busbw_gbps=30.0, repair=True),
        PairResult(first="c", second="d", backend="nccl", outcome=PairOutcome.ERROR,
                   detail="no rendezvous port from rank 0", repair=True),
        PairResult(first="d", second="e", backend="gloo", outcome=PairOutcome.TIMEOUT, detail="not done within 20 s",
                   repair=True)]


@pytest.mark.parametrize(("nodes", "backend"), [(["a", "b", "c"], "nccl"), (["a", "e", "c"], "gloo")])
def test_all_nodes_round_is_one_group_on_nccl_only_when_every_node_has_a_gpu(monkeypatch, nodes, backend):
    calls, waits = _fake_ranks(monkeypatch, {n: ({"busbw_gbps": 10.0 + i}, "") for i, n in enumerate(nodes)})
    assert pd.run_group(nodes, FACTS, _args()) == GroupResult(nodes=tuple(nodes), backend=backend,
                                                              outcome=PairOutcome.MEASURED, busbw_gbps=10.0)
    assert calls == [([tuple(nodes)], [backend])] and waits == [pytest.approx(20.0 + 2 * pd.PER_NODE_S * 3)]
    calls, waits = _fake_ranks(monkeypatch, {n: (None, "E: x") for n in nodes}, hung=frozenset({nodes[1]}))
    assert pd.run_group(nodes, FACTS, _args()) == GroupResult(nodes=tuple(nodes), backend=backend,
                                                              outcome=PairOutcome.TIMEOUT,
                                                              detail="not done within 20 s")
    _fake_ranks(monkeypatch, {}, port_missing=frozenset({nodes[0]}))
    assert pd.run_group(nodes, FACTS, _args()) == GroupResult(nodes=tuple(nodes), backend=backend,
                                                              outcome=PairOutcome.ERROR,
                                                              detail="no rendezvous port from rank 0")


# --- the whole drive ------------------------------------------------------------------------------------------


def _drive(monkeypatch, nodes: list[NodeFacts], measured: bool, *, error: str = "", repairs: int = 0,
           address: str = "ray://h:10001"):
    connects, rounds, groups = [], [], []
    paired = {n.node_id: n for n in nccl_pairs.paired_nodes(nodes)}

    def connect(address, timeout_s, ship):
        connects.append((address, timeout_s, ship))
        return error

    def run_round(pairs, facts, args, repair):
        assert facts == paired and args.floor_gbps == 7.5
        rounds.append((list(pairs), repair))
        outcome = PairOutcome.MEASURED if measured else PairOutcome.TIMEOUT
        return [PairResult(first=a, second=b, backend="nccl", outcome=outcome, repair=repair) for a, b in pairs]

    def run_group(group, facts, args):
        assert facts == paired and args.floor_gbps == 7.5
        groups.append(list(group))
        return GroupResult(nodes=tuple(group), backend="nccl", outcome=PairOutcome.MEASURED, busbw_gbps=1.0)

    monkeypatch.setattr(pd, "_connect", connect)
    monkeypatch.setattr(pd, "alive_nodes", lambda: nodes)
    monkeypatch.setattr(pd, "run_round", run_round)
    monkeypatch.setattr(pd, "run_group", run_group)
    def repair_rounds(results, floor):
        assert floor == 7.5 and len(results) == sum(len(p) for p, _ in rounds)
        return [[("a", "b")]] * repairs

    monkeypatch.setattr(nccl_pairs, "repair_rounds", repair_rounds)
    return pd.drive(_args(address=address, floor_gbps=7.5)), connects, rounds, groups


TRIED = "ray.init(address='ray://h:10001') with a 30 s deadline"


def test_drive_without_ray_says_what_was_tried(monkeypatch):
    obs, connects, rounds, _ = _drive(monkeypatch, [], True, error="ray.init did not return within 30 s")
    assert obs == PairsObservation(address="ray://h:10001", connected=False, tried=TRIED, size_bytes=1024,
                                   iterations=3, error="ray.init did not return within 30 s")
    assert connects == [("ray://h:10001", 30.0, True)] and rounds == []


def test_drive_ships_rlcheck_only_to_a_ray_client_address(monkeypatch):
    _, connects, _, _ = _drive(monkeypatch, [], True, error="no", address="10.0.0.1:6379")
    assert connects == [("10.0.0.1:6379", 30.0, False)]


def test_drive_rings_repairs_twice_at_most_then_runs_every_finished_node_together(monkeypatch):
    nodes = [FACTS[n] for n in "abcd"] + [FACTS["e"]]  # e has no GPU: the four GPU nodes are paired
    obs, _, rounds, groups = _drive(monkeypatch, nodes, True, repairs=3)
    ring = nccl_pairs.ring_rounds(["a", "b", "c", "d"])
    assert rounds == [(p, False) for p in ring] + [([("a", "b")], True)] * 2
    assert groups == [["a", "b", "c", "d"]]
    assert obs.connected and obs.tried == TRIED and obs.nodes == tuple(nodes[:4]) and obs.all_nodes_skipped == ""
    assert obs.all_nodes == GroupResult(nodes=("a", "b", "c", "d"), backend="nccl", outcome=PairOutcome.MEASURED,
                                        busbw_gbps=1.0)
    assert len(obs.pairs) == sum(len(p) for p in ring) + 2 and (obs.size_bytes, obs.iterations) == (1024, 3)


@pytest.mark.parametrize(("names", "measured", "skipped"), [
    ("ab", True, "2 node(s) finished a pair; it needs 3"),
    ("abcd", False, "0 node(s) finished a pair; it needs 3"),
])
def test_drive_skips_the_all_nodes_round_below_three_finished_nodes(monkeypatch, names, measured, skipped):
    obs, _, rounds, groups = _drive(monkeypatch, [FACTS[n] for n in names], measured)
    assert (obs.all_nodes, obs.all_nodes_skipped, groups) == (None, skipped, [])
    assert obs.connected and obs.nodes == tuple(FACTS[n] for n in names)
    assert len(obs.pairs) == sum(len(p) for p, _ in rounds) > 0


def test_drive_runs_three_finished_nodes_together(monkeypatch):
    obs, _, _, groups = _drive(monkeypatch, [FACTS[n] for n in "abc"], True)
    assert groups == [["a", "b", "c"]] and obs.all_nodes_skipped == "" and obs.all_nodes is not None


# --- the deadline ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("nodes", "rounds"), [(2, 5), (3, 6), (16, 5), (17, 6)])
def test_deadline_is_every_rounds_waits(nodes, rounds):
    assert pd.max_rounds(nodes) == rounds
    assert pd.round_allowance_s(nodes) == pytest.approx(2 * 0.1 * nodes)
    per_round = 120.0 + 30.0 + 0.1 * nodes + 0.2 * nodes
    args = argparse.Namespace(pair_timeout_s=120.0, connect_timeout_s=30.0, nodes=nodes)
    assert pd.deadline_s(args) == pytest.approx(30.0 + rounds * per_round + 45.0)


# --- through the Jobs API ---------------------------------------------------------------------------------------


URL = "http://head:8265"
JOB_TRIED = f"a Ray job at {URL} running python -m rlcheck.probes.cluster.pairs_driver on the head"


def _through_job(monkeypatch, logs: str = "", status: str = "SUCCEEDED", refuse: Exception | None = None):
    seen = {}

    def submit(url, argv, *, runtime_env, metadata):
        seen.update(url=url, argv=argv, runtime_env=runtime_env, metadata=metadata)
        if refuse:
            raise refuse
        return "job-1"

    def wait(url, job_id, *, timeout_s):
        seen.update(wait=(url, job_id, timeout_s))
        return launch.JobOutcome(job_id=job_id, status=status, logs=logs, elapsed_s=1.0)

    monkeypatch.setattr(launch, "submit_argv", submit)
    monkeypatch.setattr(launch, "wait_job", wait)
    args = _args(address=URL + "/", job_python="/opt/py")
    return pd.through_job(args, ["--address", URL + "/", "--nodes", "4"]), seen, args


def test_through_job_runs_the_driver_on_the_head_and_takes_its_result(monkeypatch):
    inner = PairsObservation(address="auto", connected=True, tried="ray.init(address='auto')", size_bytes=1024)
    logs = f"start\n{pd.RESULT}{json.dumps(inner.to_dict())}\nbye\n"
    obs, seen, args = _through_job(monkeypatch, logs)
    assert obs == PairsObservation(address=URL + "/", connected=True, size_bytes=1024,
                                   tried=f"{JOB_TRIED}; ray.init(address='auto')")
    assert seen["url"] == URL and seen["argv"] == ["/opt/py", "-m", "rlcheck.probes.cluster.pairs_driver", "--address",
                                                   "auto", "--nodes", "4"]
    assert seen["metadata"] == {"rlcheck": "pairwise all-reduce"} and "py_modules" in seen["runtime_env"]
    assert seen["wait"] == (URL, "job-1", pytest.approx(pd.deadline_s(args) - 45.0 + 60.0))


def test_through_job_says_why_there_is_no_result(monkeypatch):
    obs, _, _ = _through_job(monkeypatch, "l1\nl2\nl3\nl4\n", status="FAILED")
    assert obs == PairsObservation(address=URL + "/", connected=False, tried=JOB_TRIED, size_bytes=1024, iterations=3,
                                   error="job job-1 ended FAILED with no result: l2 | l3 | l4")
    obs, _, _ = _through_job(monkeypatch, refuse=ConnectionError("refused"))
    assert obs == PairsObservation(address=URL + "/", connected=False, tried=JOB_TRIED, size_bytes=1024, iterations=3,
                                   error="ConnectionError: refused")
    obs, _, _ = _through_job(monkeypatch, refuse=ConnectionError("r" * 600))
    assert obs.error == "ConnectionError: " + "r" * 483 and len(obs.error) == 500
    obs, _, _ = _through_job(monkeypatch, "x" * 1200, status="FAILED")
    assert obs.error == "job job-1 ended FAILED with no result: " + "x" * 961 and len(obs.error) == 1000


def test_through_job_takes_the_url_without_its_trailing_slash(monkeypatch):
    seen = {}
    monkeypatch.setattr(launch, "submit_argv", lambda url, argv, **kw: seen.setdefault("url", url) and "job-1")
    monkeypatch.setattr(launch, "wait_job", lambda url, job_id, *, timeout_s: launch.JobOutcome(
        job_id=job_id, status="FAILED", logs="", elapsed_s=0.0))
    pd.through_job(_args(address="http://rayX/"), ["--address", "http://rayX/"])
    assert seen["url"] == "http://rayX"


# --- the child process and its result line ----------------------------------------------------------------------


def _run_pairs(monkeypatch, address: str, stdout: str, **kwargs):
    seen = {}

    def run(argv, *, timeout_s, env):
        seen.update(argv=argv, timeout_s=timeout_s, env=env)
        return subproc.Completed(argv=tuple(argv), returncode=None, stdout=stdout, stderr="err1\nerr2",
                                 timed_out=True)

    monkeypatch.setattr(subproc, "run", run)
    return pd.run_pairs(address, nodes=4, **kwargs), seen


def test_run_pairs_reads_the_last_result_line(monkeypatch):
    first = PairsObservation(address="x", connected=False, tried="first")
    last = PairsObservation(address="x", connected=True, tried="last")
    stdout = f"{pd.RESULT}{json.dumps(first.to_dict())}\nnoise\n{pd.RESULT}{json.dumps(last.to_dict())}\nmore\n"
    obs, seen = _run_pairs(monkeypatch, "10.0.0.1:6379", stdout, member="m:f", member_kwargs={"delay_s": 2},
                           size_bytes=8, iterations=2, pair_timeout_s=5.0, connect_timeout_s=3.0, floor_gbps=12.5,
                           job_python="/opt/py")
    assert obs == last
    assert seen["argv"] == [sys.executable, "-m", "rlcheck.probes.cluster.pairs_driver", "--address", "10.0.0.1:6379",
                            "--member", "m:f", "--member-kwargs", '{"delay_s": 2}', "--size-bytes", "8",
                            "--iterations", "2", "--pair-timeout-s", "5.0", "--connect-timeout-s", "3.0", "--nodes",
                            "4", "--job-python", "/opt/py", "--floor-gbps", "12.5"]
    deadline = pd.deadline_s(argparse.Namespace(connect_timeout_s=3.0, nodes=4, pair_timeout_s=5.0))
    assert seen["timeout_s"] == pytest.approx(deadline)
    assert seen["env"]["RAY_USAGE_STATS_ENABLED"] == "0" and "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" not in seen["env"]


@pytest.mark.parametrize(("address", "slack", "loopback"), [("127.0.0.1:6379", 0.0, True),
                                                            ("http://head:8265", 60.0, False),
                                                            ("https://head:8265", 60.0, False)])
def test_run_pairs_without_a_result_says_why(monkeypatch, address, slack, loopback):
    obs, seen = _run_pairs(monkeypatch, address, "out0\nout1\n")
    deadline = pd.deadline_s(argparse.Namespace(connect_timeout_s=30.0, nodes=4, pair_timeout_s=120.0)) + slack
    assert seen["timeout_s"] == pytest.approx(deadline)
    assert seen["argv"][3:] == ["--address", address, "--member", pd.MEMBER, "--member-kwargs", "{}", "--size-bytes",
                                str(64 << 20), "--iterations", "10", "--pair-timeout-s", "120.0",
                                "--connect-timeout-s", "30.0", "--nodes", "4", "--job-python", "python"]
    assert (seen["env"].get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") == "0") is loopback
    assert obs == PairsObservation(
        address=address, connected=False,
        tried=f"the pairs driver (python -m rlcheck.probes.cluster.pairs_driver) at {address} with a "
              f"{deadline:.0f} s deadline",
        error="the driver gave no result (killed at its deadline): out1\nerr1\nerr2")


@pytest.mark.parametrize(("address", "way"), [("10.0.0.1:6379", "drive"), ("ray://h:10001", "drive"),
                                              ("http://h:8265", "job"), ("https://h:8265", "job")])
def test_main_prints_one_result_line(monkeypatch, capsys, address, way):
    seen = []
    obs = PairsObservation(address=address, connected=True, tried="t")
    monkeypatch.setattr(pd, "drive", lambda args: seen.append(("drive", args.address)) or obs)
    monkeypatch.setattr(pd, "through_job", lambda args, argv: seen.append(("job", args.address, argv)) or obs)
    argv = ["--address", address, "--nodes", "3"]
    assert pd._main(argv) == 0
    assert seen == ([("drive", address)] if way == "drive" else [("job", address, argv)])
    assert capsys.readouterr().out == pd.RESULT + json.dumps(obs.to_dict()) + "\n"


def test_main_defaults(monkeypatch, capsys):
    parsed = {}

    def keep(args):
        parsed.update(vars(args))
        return PairsObservation(address="x", connected=False, tried="t")

    monkeypatch.setattr(pd, "drive", keep)
    pd._main(["--address", "x"])
    assert parsed == {"address": "x", "member": pd.MEMBER, "member_kwargs": "{}", "size_bytes": 64 << 20,
                      "iterations": 10, "pair_timeout_s": 120.0, "connect_timeout_s": 30.0, "floor_gbps": None,
                      "job_python": "python", "nodes": 2}


def test_main_reads_each_option_as_its_type(monkeypatch, capsys):
    parsed = {}
    monkeypatch.setattr(pd, "drive", lambda args: parsed.update(vars(args)) or PairsObservation(
        address="x", connected=False, tried="t"))
    pd._main(["--address", "x", "--member", "m:f", "--member-kwargs", '{"a": 1}', "--size-bytes", "8",
              "--iterations", "2", "--pair-timeout-s", "5", "--connect-timeout-s", "3", "--floor-gbps", "1.5",
              "--job-python", "/p", "--nodes", "4"])
    assert [(k, v, type(v)) for k, v in parsed.items()] == [
        ("address", "x", str), ("member", "m:f", str), ("member_kwargs", '{"a": 1}', str), ("size_bytes", 8, int),
        ("iterations", 2, int), ("pair_timeout_s", 5.0, float), ("connect_timeout_s", 3.0, float),
        ("floor_gbps", 1.5, float), ("job_python", "/p", str), ("nodes", 4, int)]


def test_main_needs_an_address_and_says_what_each_option_is(capsys):
    with pytest.raises(SystemExit):
        pd._main([])
    assert "the following arguments are required: --address" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        pd._main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    for said in (" rlcheck pairwise all-reduce driver (prints one result line) options: ",
                 "--member-kwargs MEMBER_KWARGS JSON keyword arguments added for the member",
                 "--job-python JOB_PYTHON interpreter for the job driver (http addresses)",
                 "--nodes NODES alive nodes the fan-out saw (sizes the deadline)"):
        assert said in out


def test_main_without_argv_reads_the_command_line(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(sys, "argv", ["pairs_driver.py", "--address", "http://h:8265", "--nodes", "3"])
    monkeypatch.setattr(pd, "through_job", lambda args, argv: seen.append(argv) or PairsObservation(
        address="x", connected=False, tried="t"))
    assert pd._main() == 0 and seen == [["--address", "http://h:8265", "--nodes", "3"]]
