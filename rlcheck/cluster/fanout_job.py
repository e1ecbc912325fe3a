"""The fan-out through Ray's Jobs API (--ray-address=http://HEAD:8265): the driver runs as a job on the head.

Run inside the fan-out child (rlcheck.cluster.fanout), which the caller kills at a hard deadline; each step here has
its own bound too, so the result says which step did not finish. The job's wait grows with the plan as the direct
path's does: once the job's driver has listed the nodes (its PLAN line, read from the job's log while it runs), the
wait becomes connect + the node deadline for that many nodes + the job's slack, and the PLAN line is passed on so
the caller's own deadline grows with it.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from rlcheck.cluster.fanout_result import (
    JOB_SLACK_S,
    PER_NODE_S,
    PLAN,
    FanoutResult,
    node_deadline_s,
    package_runtime_env,
    parse_output,
)
from rlcheck.process.wait import wait_http_ok


def _job_argv(args: argparse.Namespace) -> list[str]:
    return [args.job_python, "-m", "rlcheck.cluster.fanout", "--address", "auto", "--collector", args.collector,
            "--kwargs", args.kwargs, "--node-timeout-s", str(args.node_timeout_s),
            "--connect-timeout-s", str(args.connect_timeout_s)]


def drive_through_job(args: argparse.Namespace) -> FanoutResult:
    from rlcheck.cluster import launch

    url, start = args.address.rstrip("/"), time.monotonic()
    probe = wait_http_ok(f"{url}/api/version", timeout_s=args.connect_timeout_s)
    tried = f"GET {url}/api/version for up to {args.connect_timeout_s:.0f} s"
    if not probe.ok:
        return FanoutResult(address=args.address, connected=False, tried=tried, elapsed_s=time.monotonic() - start,
                            error=f"{probe.attempts} attempt(s), last: {probe.last_error}")
    job_id = launch.submit_argv(url, _job_argv(args), runtime_env=package_runtime_env(),
                                metadata={"rlcheck": "per-node fan-out"})
    tried += f"; then Ray job {job_id} (python -m rlcheck.cluster.fanout on the head)"
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(url)
    status, logs = wait_planned(client, job_id, lambda n: job_wait_s(args.connect_timeout_s, args.node_timeout_s, n),
                                relay=lambda line: print(line, flush=True))
    inner = parse_output(logs)
    if inner is None:
        tail = " | ".join(logs.strip().splitlines()[-3:])
        return FanoutResult(address=args.address, connected=False, tried=tried, elapsed_s=time.monotonic() - start,
                            error=f"job {job_id} ended {status} with no result: {tail}")
    return FanoutResult(address=args.address, connected=inner.connected, tried=f"{tried}; {inner.tried}",
                        error=inner.error, nodes=inner.nodes, dead_nodes=inner.dead_nodes,
                        elapsed_s=time.monotonic() - start)


def job_wait_s(connect_timeout_s: float, node_timeout_s: float, nodes: int | None) -> float:
    """How long the job may run: its connect, the node deadline for nodes (None: not listed yet, no node counted),
    its own start-up slack, and PER_NODE_S per node for its result lines."""
    count = 0 if nodes is None else nodes
    return connect_timeout_s + node_deadline_s(node_timeout_s, count) + JOB_SLACK_S + PER_NODE_S * count


def plan_nodes(logs: str) -> int | None:
    """The node count of the job driver's PLAN line in its log so far; None before it (or when it is unreadable)."""
    for line in logs.splitlines():
        if line.startswith(PLAN):
            try:
                nodes = json.loads(line.removeprefix(PLAN))["nodes"]
            except (ValueError, KeyError, TypeError):
                return None
            return nodes if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes >= 0 else None
    return None


def wait_planned(client: Any, job_id: str, wait_s: Callable[[int | None], float], *, relay: Callable[[str], None],
                 poll_s: float = 0.5, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> tuple[str, str]:
    """Wait for the job (status, its log): bounded by wait_s(None) from the start until the job's driver prints its
    PLAN line, then by wait_s(nodes); the PLAN line is relayed once (the caller's deadline grows with it). A job
    still running at the deadline is stopped and its status is TIMEOUT."""
    start, nodes = clock(), None
    while True:
        status = client.get_job_status(job_id)
        if status.is_terminal():
            return str(status.value), client.get_job_logs(job_id)
        if nodes is None and (found := plan_nodes(client.get_job_logs(job_id))) is not None:
            nodes = found
            relay(PLAN + json.dumps({"nodes": nodes}))
        if clock() - start >= wait_s(nodes):
            client.stop_job(job_id)
            return "TIMEOUT", client.get_job_logs(job_id)
        sleep(poll_s)
