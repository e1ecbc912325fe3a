"""The fan-out through Ray's Jobs API (--ray-address=http://HEAD:8265): the driver runs as a job on the head.

Run inside the fan-out child (rlcheck.cluster.fanout), which the caller kills at a hard deadline; each step here has
its own bound too, so the result says which step did not finish.
"""

from __future__ import annotations

import argparse
import time

from rlcheck.cluster.fanout_result import JOB_SLACK_S, FanoutResult, package_runtime_env, parse_output
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
    wait_s = args.connect_timeout_s + args.node_timeout_s + JOB_SLACK_S
    outcome = launch.wait_job(url, job_id, timeout_s=wait_s)
    inner = parse_output(outcome.logs)
    if inner is None:
        tail = " | ".join(outcome.logs.strip().splitlines()[-3:])
        return FanoutResult(address=args.address, connected=False, tried=tried, elapsed_s=time.monotonic() - start,
                            error=f"job {job_id} ended {outcome.status} with no result: {tail}")
    return FanoutResult(address=args.address, connected=inner.connected, tried=f"{tried}; {inner.tried}",
                        error=inner.error, nodes=inner.nodes, dead_nodes=inner.dead_nodes,
                        elapsed_s=time.monotonic() - start)
