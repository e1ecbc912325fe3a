"""Runs the pairwise all-reduce over Ray (rlcheck.probes.cluster.nccl_pairs decides the pairs and the blame).

run_pairs() starts `python -m rlcheck.probes.cluster.pairs_driver` and kills it at a hard deadline, as the fan-out does.
In the child: ray.init bounded by the connect timeout, then round after round of pairs that share no node: for
each pair a task on its first node picks the rendezvous port, then one task per node (pinned with
NodeAffinitySchedulingStrategy, soft=False; one GPU each for NCCL) runs a rank. Every round is waited on until
the pair deadline; a pair still running then is cancelled (its worker killed) and is a TIMEOUT, never a hang.
Last, one round of every node that finished a pair, together (one rank each, world size = nodes), bounded alike.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import Any

from rlcheck.cluster.fanout import _connect, alive_nodes
from rlcheck.cluster.fanout_result import JOB_SLACK_S, PER_NODE_S, NodeFacts, package_runtime_env
from rlcheck.probes.cluster import nccl_pairs as plan
from rlcheck.probes.cluster.nccl_pairs import GroupResult, PairOutcome, PairResult, PairsObservation
from rlcheck.process import subproc

RESULT = "RLCHECK_PAIRS "
MEMBER = "rlcheck.probes.node.pair_member:all_reduce_member"
PORT_TIMEOUT_S = 30.0
MAX_REPAIR_ROUNDS = 2
MARGIN_S = 45.0
"""Child start-up (Python, Ray import), result transfer and shutdown."""


def _task(node: NodeFacts, backend: str, name: str) -> Any:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from rlcheck.cluster.fanout import run_collector

    resources = {"num_gpus": 1} if backend == "nccl" else {"num_cpus": 0}
    return ray.remote(max_retries=0, **resources)(run_collector).options(  # type: ignore[call-overload]
        scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False), name=name)


def _wait(refs: list[Any], timeout_s: float) -> set[Any]:
    """Refs done by the deadline; the rest are cancelled (force: their workers are killed)."""
    import ray

    start, pending, done = time.monotonic(), list(refs), set()
    while pending and (left := start + timeout_s - time.monotonic()) > 0:
        ready, pending = ray.wait(pending, num_returns=1, timeout=left)
        done.update(ready)
    for ref in pending:
        try:
            ray.cancel(ref, force=True)
        except Exception:  # a task on a dead node may not be cancellable; it is abandoned
            pass
    return done


def _get(ref: Any) -> tuple[dict[str, Any] | None, str]:
    import ray

    try:
        return ray.get(ref, timeout=10)["observation"], ""
    except Exception as exc:  # a rank's error is this pair's answer, not the driver's crash
        lines = str(exc).strip().splitlines()
        return None, f"{type(exc).__name__}: {lines[-1] if lines else ''}"[:500]


def _ranks(groups: list[tuple[str, ...]], backends: list[str], facts: dict[str, NodeFacts],
           args: argparse.Namespace) -> list[list[Any]]:
    """One rank task per node of every group (rank 0 on its first node, which picks the rendezvous port); [] for a
    group whose port did not come."""
    ports = [_task(facts[g[0]], "gloo", "rlcheck-pair-port").remote("rlcheck.probes.node.pair_member:pick_port",
                                                                    {"address": facts[g[0]].address}) for g in groups]
    ported = _wait(ports, PORT_TIMEOUT_S + PER_NODE_S * len(groups))
    ranks: list[list[Any]] = []
    for group, backend, port in zip(groups, backends, ports, strict=True):
        value = _get(port)[0] if port in ported else None
        common = {"world_size": len(group), "master_addr": facts[group[0]].address, "master_port": value,
                  "backend": backend, "size_bytes": args.size_bytes, "iterations": args.iterations,
                  "timeout_s": args.pair_timeout_s}
        ranks.append([] if value is None else [_task(facts[n], backend, f"rlcheck-pair-rank{r}").remote(
            args.member, {**common, **json.loads(args.member_kwargs), "rank": r}) for r, n in enumerate(group)])
    return ranks


def run_round(pairs: list[tuple[str, str]], facts: dict[str, NodeFacts], args: argparse.Namespace,
              repair: bool) -> list[PairResult]:
    backends = [plan.backend_for(facts[a], facts[b]) for a, b in pairs]
    ranks = _ranks(list(pairs), backends, facts, args)
    done = _wait([ref for refs in ranks for ref in refs], args.pair_timeout_s + round_allowance_s(len(pairs) * 2))
    return [_result(PairResult(first=a, second=b, backend=backend, outcome=PairOutcome.ERROR, repair=repair), refs,
                    done, args.pair_timeout_s) for (a, b), backend, refs in zip(pairs, backends, ranks, strict=True)]


def run_group(nodes: list[str], facts: dict[str, NodeFacts], args: argparse.Namespace) -> GroupResult:
    """Every node in nodes together, one all-reduce of world size len(nodes), bounded by the pair deadline."""
    gpu = all(facts[n].ray_gpus >= 1 for n in nodes)
    backend = "nccl" if gpu else "gloo"
    (refs,) = _ranks([tuple(nodes)], [backend], facts, args)
    done = _wait(refs, args.pair_timeout_s + round_allowance_s(len(nodes)))
    as_pair = _result(PairResult(first=nodes[0], second=nodes[-1], backend=backend, outcome=PairOutcome.ERROR),
                      refs, done, args.pair_timeout_s)
    return GroupResult(nodes=tuple(nodes), backend=backend, outcome=as_pair.outcome, busbw_gbps=as_pair.busbw_gbps,
                       detail=as_pair.detail)


def _result(pair: PairResult, refs: list[Any], done: set[Any], timeout_s: float) -> PairResult:
    """The pair's outcome from its two ranks (pair: the pair as an ERROR, to be filled in)."""
    if not refs:
        return dataclasses.replace(pair, detail="no rendezvous port from rank 0")
    if not all(ref in done for ref in refs):
        return dataclasses.replace(pair, outcome=PairOutcome.TIMEOUT, detail=f"not done within {timeout_s:g} s")
    got = [_get(ref) for ref in refs]
    errors = [e for _, e in got if e]
    if errors:
        return dataclasses.replace(pair, detail="; ".join(errors))
    return dataclasses.replace(pair, outcome=PairOutcome.MEASURED,  # the slower rank's view: the pair's bandwidth
                               busbw_gbps=min(float(o["busbw_gbps"]) for o, _ in got if o))


def drive(args: argparse.Namespace) -> PairsObservation:
    tried = f"ray.init(address={args.address!r}) with a {args.connect_timeout_s:g} s deadline"
    base = {"address": args.address, "tried": tried, "size_bytes": args.size_bytes, "iterations": args.iterations}
    error = _connect(args.address, args.connect_timeout_s, args.address.startswith("ray://"))
    if error:
        return PairsObservation(**base, connected=False, error=error)
    nodes = plan.paired_nodes(alive_nodes())
    facts = {n.node_id: n for n in nodes}
    results: list[PairResult] = []
    for pairs in plan.ring_rounds(list(facts)):
        results += run_round(pairs, facts, args, repair=False)
    for pairs in plan.repair_rounds(results, floor=args.floor_gbps)[:MAX_REPAIR_ROUNDS]:
        results += run_round(pairs, facts, args, repair=True)
    group = plan.group_nodes(results, list(facts))
    if len(group) < plan.MIN_GROUP:
        return PairsObservation(**base, connected=True, nodes=tuple(nodes), pairs=tuple(results),
                                all_nodes_skipped=f"{len(group)} node(s) finished a pair; it needs {plan.MIN_GROUP}")
    return PairsObservation(**base, connected=True, nodes=tuple(nodes), pairs=tuple(results),
                            all_nodes=run_group(group, facts, args))


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="rlcheck pairwise all-reduce driver (prints one result line)")
    parser.add_argument("--address", required=True)
    parser.add_argument("--member", default=MEMBER)
    parser.add_argument("--member-kwargs", default="{}", help="JSON keyword arguments added for the member")
    parser.add_argument("--size-bytes", type=int, default=64 << 20)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--pair-timeout-s", type=float, default=120.0)
    parser.add_argument("--connect-timeout-s", type=float, default=30.0)
    parser.add_argument("--floor-gbps", type=float, default=None)
    parser.add_argument("--job-python", default="python", help="interpreter for the job driver (http addresses)")
    parser.add_argument("--nodes", type=int, default=2, help="alive nodes the fan-out saw (sizes the deadline)")
    args = parser.parse_args(argv)
    http = args.address.startswith(("http://", "https://"))
    print(RESULT + json.dumps((through_job(args, argv or sys.argv[1:]) if http else drive(args)).to_dict()),
          flush=True)
    return 0


def through_job(args: argparse.Namespace, argv: list[str]) -> PairsObservation:
    """The same driver as a Ray job on the head (--ray-address=http://HEAD:8265), rlcheck shipped with it."""
    from rlcheck.cluster import launch

    url = args.address.rstrip("/")
    tried = f"a Ray job at {url} running python -m rlcheck.probes.cluster.pairs_driver on the head"
    base = {"address": args.address, "tried": tried, "size_bytes": args.size_bytes, "iterations": args.iterations}
    job_argv = [args.job_python, "-m", "rlcheck.probes.cluster.pairs_driver", *argv]
    job_argv[job_argv.index(args.address)] = "auto"
    try:
        job_id = launch.submit_argv(url, job_argv, runtime_env=package_runtime_env(),
                                    metadata={"rlcheck": "pairwise all-reduce"})
        outcome = launch.wait_job(url, job_id, timeout_s=deadline_s(args) - MARGIN_S + JOB_SLACK_S)
    except Exception as exc:  # the Jobs API refused or was not reached: said, not raised
        return PairsObservation(**base, connected=False, error=f"{type(exc).__name__}: {exc}"[:500])
    line = next((x for x in reversed(outcome.logs.splitlines()) if x.startswith(RESULT)), None)
    if line is None:
        tail = " | ".join(outcome.logs.strip().splitlines()[-3:])
        return PairsObservation(**base, connected=False,
                                error=f"job {job_id} ended {outcome.status} with no result: {tail}"[:1000])
    inner = PairsObservation.from_dict(json.loads(line.removeprefix(RESULT)))
    return dataclasses.replace(inner, address=args.address, tried=f"{tried}; {inner.tried}")


def deadline_s(args: argparse.Namespace) -> float:
    """The plan's bound: every round (a fixed number, whatever the node count) waits for its rendezvous ports and
    its ranks, plus PER_NODE_S per node for the tasks the round submits and the answers it fetches."""
    per_round = args.pair_timeout_s + PORT_TIMEOUT_S + PER_NODE_S * args.nodes + round_allowance_s(args.nodes)
    return args.connect_timeout_s + max_rounds(args.nodes) * per_round + MARGIN_S


def round_allowance_s(nodes: int) -> float:
    """On top of a round's fixed waits: one port task and one rank task per node to submit and fetch."""
    return 2 * PER_NODE_S * nodes


def max_rounds(nodes: int) -> int:
    """Ring rounds, re-pair rounds, and the all-nodes round."""
    return (3 if nodes % 2 else 2) + MAX_REPAIR_ROUNDS + 1


def run_pairs(address: str, *, nodes: int, member: str = MEMBER, member_kwargs: dict[str, Any] | None = None,
              size_bytes: int = 64 << 20, iterations: int = 10, pair_timeout_s: float = 120.0,
              connect_timeout_s: float = 30.0, floor_gbps: float | None = None,
              job_python: str = "python") -> PairsObservation:
    """The pairwise all-reduce on the Ray at address (host:port or ray://), bounded by a hard deadline.

    nodes: how many alive nodes the fan-out saw (sizes the deadline); member: module:function of one rank;
    job_python: the interpreter on the head that runs the job driver (http addresses only).
    """
    tried = f"the pairs driver (python -m rlcheck.probes.cluster.pairs_driver) at {address}"
    argv = ["--address", address, "--member", member, "--member-kwargs", json.dumps(member_kwargs or {}),
            "--size-bytes", str(size_bytes), "--iterations", str(iterations), "--pair-timeout-s", str(pair_timeout_s),
            "--connect-timeout-s", str(connect_timeout_s), "--nodes", str(nodes), "--job-python", job_python,
            *(["--floor-gbps", str(floor_gbps)] if floor_gbps else [])]
    deadline = deadline_s(argparse.Namespace(connect_timeout_s=connect_timeout_s, nodes=nodes,
                                             pair_timeout_s=pair_timeout_s))
    if address.startswith(("http://", "https://")):  # the job's own start-up on top
        deadline += JOB_SLACK_S
    argv = [sys.executable, "-m", "rlcheck.probes.cluster.pairs_driver", *argv]
    env = subproc.child_env() | {"RAY_USAGE_STATS_ENABLED": "0"}
    if address.startswith("127."):  # the embedded Ray: keep this driver on loopback too (see DESIGN.md)
        env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    done = subproc.run(argv, timeout_s=deadline, env=env)
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith(RESULT)), None)
    if line is not None:
        return PairsObservation.from_dict(json.loads(line.removeprefix(RESULT)))
    return PairsObservation(address=address, connected=False, tried=f"{tried} with a {deadline:.0f} s deadline",
                            error=f"the driver gave no result ({done.why()}): {done.tail(3)}")


if __name__ == "__main__":
    import os

    code = _main()
    sys.stdout.flush()
    os._exit(code)  # Ray's shutdown can wait on a stopped node: the result is out, so leave without it
