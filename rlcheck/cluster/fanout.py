"""Per-node fan-out over Ray: one task pinned to every alive node, all at once, each bounded by a deadline.

fan_out() runs the driver in a child process (`python -m rlcheck.cluster.fanout`) and kills it at a hard deadline, so
neither Ray's connect (which retries for minutes against an unreachable address) nor a wedged node can hang
the caller. Inside the child, ray.init runs in a thread joined with the connect timeout; every task is pinned
with NodeAffinitySchedulingStrategy(node_id, soft=False) and the driver waits on all of them together until
the node deadline: a node that has not answered by then is `timeout`, one whose worker or raylet died is
`died`. What grows with the node count is bounded by the plan: the driver prints `RLCHECK_FANOUT_PLAN` with the
node count once it has listed the nodes, and the caller's hard deadline grows by PER_NODE_S for each (the node
deadline inside grows alike: N pinned tasks to submit, N answers to fetch); each answer is printed as it arrives
(one `RLCHECK_FANOUT_NODE` line) and dropped, so the driver's memory does not hold N observations at once. The
address picks the way in: host:port (a GCS, e.g. the embedded Ray) connects directly; ray://
goes through Ray Client; http(s):// submits the same driver as a Ray job through the Jobs API. The last two
ship the rlcheck package to the cluster (runtime_env py_modules): the cluster image need not have it.

This module is imported by the Ray worker of every node (the task function lives here): at module level it
imports only the standard library and rlcheck modules that do the same; Ray is imported inside functions.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from rlcheck.cluster.fanout_result import (
    JOB_SLACK_S,
    NODE,
    PLAN,
    RESULT,
    FanoutResult,
    NodeAnswer,
    NodeFacts,
    Outcome,
    node_deadline_s,
    package_runtime_env,
    parse_output,
    plan_deadline_s,
)
from rlcheck.process import reach, subproc

COLLECTOR = "rlcheck.probes.node.collect:collect_node"
HEAD_RESOURCE = "node:__internal_head__"
MARGIN_S = 45.0
"""Child start-up (Python, Ray import), result transfer and shutdown, on top of connect + node deadlines."""


def run_collector(target: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The task body on each node: call module:function(**kwargs); return its result and where it ran."""
    import ray

    module, _, name = target.partition(":")
    start = time.monotonic()
    result = getattr(importlib.import_module(module), name)(**kwargs)
    data = result.to_dict() if hasattr(result, "to_dict") else result
    return {"ran_on": ray.get_runtime_context().get_node_id(), "observation": data,
            "collect_s": round(time.monotonic() - start, 3)}


def alive_nodes() -> list[NodeFacts]:
    import ray

    nodes = [NodeFacts(node_id=n["NodeID"], address=n["NodeManagerAddress"], hostname=n["NodeManagerHostname"],
                       is_head=HEAD_RESOURCE in n["Resources"], ray_gpus=float(n["Resources"].get("GPU", 0.0)))
             for n in ray.nodes() if n["Alive"]]
    return named(nodes)


def named(nodes: list[NodeFacts]) -> list[NodeFacts]:
    """Each node named by its host name; nodes that share one (pods of one name, several raylets on a host) also
    by the start of their node id, so no two nodes' verdicts merge under one name."""
    counts = Counter(n.hostname for n in nodes)
    return [dataclasses.replace(n, name=n.hostname if n.hostname and counts[n.hostname] == 1
                                else f"{n.hostname or 'node'}#{n.node_id[:8]}") for n in nodes]


def _failed(node: NodeFacts, exc: BaseException, elapsed_s: float) -> NodeAnswer:
    import ray.exceptions as rex

    died = (rex.NodeDiedError, rex.WorkerCrashedError, rex.TaskUnschedulableError, rex.ObjectLostError,
            rex.LocalRayletDiedError, rex.RaySystemError)
    outcome = Outcome.DIED if isinstance(exc, died) else Outcome.ERROR
    text = str(exc).strip().splitlines()
    return NodeAnswer(node=node, outcome=outcome, elapsed_s=elapsed_s,
                      detail=f"{type(exc).__name__}: {text[-1] if text else ''}"[:2000])


def _answer(node: NodeFacts, ref: Any, done_s: float | None, node_timeout_s: float) -> NodeAnswer:
    import ray

    if done_s is None:
        return NodeAnswer(node=node, outcome=Outcome.TIMEOUT, elapsed_s=node_timeout_s,
                          detail=f"no answer within {node_timeout_s:.0f} s")
    try:
        got = ray.get(ref, timeout=10)
    except Exception as exc:  # any Ray or collector error is this node's answer, not the driver's crash
        return _failed(node, exc, done_s)
    if got["ran_on"] != node.node_id:
        return NodeAnswer(node=node, outcome=Outcome.ERROR, elapsed_s=done_s,
                          detail=f"the task pinned to {node.node_id} ran on {got['ran_on']}")
    return NodeAnswer(node=node, outcome=Outcome.ANSWERED, elapsed_s=done_s, observation=got["observation"],
                      detail=f"collected in {got['collect_s']:.1f} s")


Emit = Callable[[int, NodeAnswer], None]
"""Called with each node's index (in Ray's order) and its answer, as it is known."""


def fan_out_connected(collector: str, kwargs: dict[str, Any], node_timeout_s: float, *,
                      nodes: list[NodeFacts] | None = None, emit: Emit | None = None) -> list[NodeAnswer]:
    """With Ray connected: one task per alive node, waited on together until the node deadline (node_timeout_s
    plus PER_NODE_S per node). Each answer is fetched as soon as its task is done and its object released; with
    emit, each goes to emit and comes back without its observation (the driver keeps no N observations)."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = alive_nodes() if nodes is None else nodes
    deadline_s = node_deadline_s(node_timeout_s, len(nodes))
    task = ray.remote(num_cpus=0, max_retries=0)(run_collector)
    start = time.monotonic()
    index = {task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n.node_id, soft=False),
                          name=f"rlcheck-node-probe-{n.node_id[:8]}").remote(collector, kwargs): i
             for i, n in enumerate(nodes)}
    answers: list[NodeAnswer | None] = [None] * len(nodes)

    def settle(i: int, answer: NodeAnswer) -> None:
        if emit is not None:
            emit(i, answer)
            answer = dataclasses.replace(answer, observation=None)
        answers[i] = answer

    pending = list(index)
    while pending and (left := start + deadline_s - time.monotonic()) > 0:
        ready, pending = ray.wait(pending, num_returns=1, timeout=left)
        if ready and pending:  # every other task done by now too, in one call
            more, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
            ready += more
        done_s = round(time.monotonic() - start, 3)
        for ref in ready:
            i = index.pop(ref)
            settle(i, _answer(nodes[i], ref, done_s, deadline_s))
        del ready  # the answers are out: Ray frees their objects
    for ref in pending:
        try:
            ray.cancel(ref, force=True)
        except Exception:  # a task on a stopped or dead node may not be cancellable; it is abandoned
            pass
        settle(index[ref], _answer(nodes[index[ref]], ref, None, deadline_s))
    return [a for a in answers if a is not None]


def _connect(address: str, timeout_s: float, ship: bool) -> str:
    """ray.init in a thread, joined with a deadline; '' when connected, else what happened."""
    import logging

    import ray

    outcome: list[str] = []

    def connect() -> None:
        try:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False,
                     runtime_env=package_runtime_env() if ship else None)
            outcome.append("")
        except Exception as exc:
            outcome.append(f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}")

    thread = threading.Thread(target=connect, daemon=True)
    thread.start()
    thread.join(timeout_s)
    return outcome[0] if outcome else f"ray.init(address={address!r}) did not return within {timeout_s:.0f} s"


def drive(args: argparse.Namespace) -> FanoutResult:
    """The child's work for a GCS or ray:// address: connect (bounded), then fan out (bounded)."""
    start = time.monotonic()
    tried = f"ray.init(address={args.address!r}) with a {args.connect_timeout_s:.0f} s deadline"
    error = _connect(args.address, args.connect_timeout_s, args.ship)
    if error:
        return FanoutResult(address=args.address, connected=False, tried=tried, error=error,
                            elapsed_s=time.monotonic() - start)
    import ray

    dead = sum(1 for n in ray.nodes() if not n["Alive"])
    nodes = alive_nodes()
    print(PLAN + json.dumps({"nodes": len(nodes)}), flush=True)  # the caller's deadline grows with it

    def emit(i: int, answer: NodeAnswer) -> None:
        print(NODE + json.dumps({"index": i, **answer.to_dict()}), flush=True)

    answers = fan_out_connected(args.collector, json.loads(args.kwargs), args.node_timeout_s, nodes=nodes,
                                emit=emit)
    return FanoutResult(address=args.address, connected=True, tried=tried, nodes=tuple(answers), dead_nodes=dead,
                        elapsed_s=time.monotonic() - start)


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="rlcheck per-node fan-out driver (prints one result line)")
    parser.add_argument("--address", required=True)
    parser.add_argument("--collector", default=COLLECTOR)
    parser.add_argument("--kwargs", default="{}", help="JSON keyword arguments for the collector")
    parser.add_argument("--node-timeout-s", type=float, default=60.0)
    parser.add_argument("--connect-timeout-s", type=float, default=30.0)
    parser.add_argument("--job-python", default="python", help="interpreter for the job driver (http addresses)")
    parser.add_argument("--ship", action="store_true", help="ship rlcheck to the workers (runtime_env py_modules)")
    args = parser.parse_args(argv)
    if args.address.startswith(("http://", "https://")):
        from rlcheck.cluster.fanout_job import drive_through_job

        result = drive_through_job(args)
    else:
        result = drive(args)
    # The answers went out one by one (NODE lines); the last line carries them without their observations.
    print(RESULT + json.dumps(result.to_dict()), flush=True)
    return 0


def fan_out(address: str, *, collector: str = COLLECTOR, kwargs: dict[str, Any] | None = None,
            node_timeout_s: float = 60.0, connect_timeout_s: float = 30.0, job_python: str = "python") -> FanoutResult:
    """Run collector on every alive node of the Ray at address; never longer than the two deadlines + MARGIN_S.

    address: host:port (a GCS: the embedded Ray), ray://host:port (Ray Client) or http(s)://host:port (Jobs API).
    job_python: the interpreter on the head that runs the job driver (http addresses only).
    """
    refusal = reach.refused(address)  # a refused port is said at once, not after the connect deadline
    if refusal:
        return FanoutResult(address=address, connected=False, tried=f"a TCP connection to {address}", error=refusal)
    ship = address.startswith(("ray://", "http://", "https://"))
    argv = [sys.executable, "-m", "rlcheck.cluster.fanout", "--address", address, "--collector", collector,
            "--kwargs", json.dumps(kwargs or {}), "--node-timeout-s", str(node_timeout_s),
            "--connect-timeout-s", str(connect_timeout_s), "--job-python", job_python, *(["--ship"] if ship else [])]
    extra_s = connect_timeout_s + JOB_SLACK_S if address.startswith(("http://", "https://")) else 0.0
    env = subproc.child_env() | {"RAY_USAGE_STATS_ENABLED": "0"}
    if address.startswith("127."):  # the embedded Ray's GCS: keep this driver on loopback too (see DESIGN.md)
        env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    start = time.monotonic()
    done, deadline_s = run_planned(argv, env=env, deadline_s=lambda nodes: extra_s + plan_deadline_s(
        connect_timeout_s, node_timeout_s, nodes, margin_s=MARGIN_S))
    result = parse_output(done.stdout)
    if result is not None:
        return result
    return FanoutResult(address=address, connected=False, elapsed_s=time.monotonic() - start,
                        tried=(f"the fan-out driver (python -m rlcheck.cluster.fanout) with a {deadline_s:.0f} s "
                               "deadline"),
                        error=f"the driver gave no result ({done.why()}): {done.tail(3)}")


def run_planned(argv: list[str], *, env: dict[str, str], deadline_s: Callable[[int | None], float]
                ) -> tuple[subproc.Completed, float]:
    """Run the driver with a hard deadline of deadline_s(None) from the start, which becomes deadline_s(nodes) once
    the driver prints its PLAN line; the whole process group is killed at the deadline. (Completed, the deadline.)"""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    start, limit = time.monotonic(), [deadline_s(None)]
    out: list[str] = []
    err: list[str] = []

    def read_out() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.append(line)
            if line.startswith(PLAN):
                limit[0] = deadline_s(int(json.loads(line.removeprefix(PLAN))["nodes"]))

    def read_err() -> None:
        assert proc.stderr is not None
        err.extend(proc.stderr)

    readers = [threading.Thread(target=f, daemon=True) for f in (read_out, read_err)]
    for reader in readers:
        reader.start()
    timed_out = False
    while proc.poll() is None:
        if (left := start + limit[0] - time.monotonic()) <= 0:
            subproc.kill_group(proc)
            timed_out = True
            break
        try:
            proc.wait(timeout=min(left, 1.0))
        except subprocess.TimeoutExpired:
            continue
    for reader in readers:
        reader.join(subproc.DRAIN_S)
    done = subproc.Completed(argv=tuple(argv), returncode=None if timed_out else proc.returncode,
                             stdout="".join(out), stderr="".join(err), timed_out=timed_out)
    return done, limit[0]


def main() -> None:
    code = _main()
    sys.stdout.flush()
    os._exit(code)  # Ray's shutdown can wait on a stopped node: the result is out, so leave without it


if __name__ == "__main__":
    main()
