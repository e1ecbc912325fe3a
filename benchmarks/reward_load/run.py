"""rlcheck's reward service against the reference design, side by side in one run, under SLIME's client.

Two mixes of 10,000 requests (all normal; 1% pathological including one 9^{9^{9^{9}}}), each against a
fresh server of both kinds, 64 in flight on one aiohttp session, SLIME's timeout and retries; /health
polled throughout; a keep-alive probe; SIGTERM with requests in flight. A phase ends when every request
is answered, at the first request that reaches SLIME's 120 s client timeout (the server stopped
answering), or at --phase-cap-s. Writes benchmarks/results/<name>.json.

Usage: python -m benchmarks.reward_load [--requests 10000] [--only rlcheck] [--name reward_load]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: python benchmarks/reward_load/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import results_file  # noqa: E402
from benchmarks.reward_load import costs, load, report, stats, workload  # noqa: E402
from rlcheck.process.wait import free_loopback_port  # noqa: E402
from rlcheck.reward.config import ServiceConfig  # noqa: E402
from rlcheck.reward.harness import ServerProcess, running_server, service_argv  # noqa: E402
from rlcheck.reward.metrics import parse_text  # noqa: E402
from tests.slime_client import post_like_slime, slime_session  # noqa: E402

WORK = Path(__file__).resolve().parents[1] / ".work" / "reward_load"
MIXES = {"normal": 0.0, "pathological_1pct": 0.01}
KEEPALIVE_GAPS_S = [4.990, 4.993, 4.995, 4.997, 4.999]  # just under uvicorn's default 5 s keep-alive


def server_argv(service: str, port: int, args: argparse.Namespace) -> list[str]:
    if service == "baseline":
        return [sys.executable, "-m", "uvicorn", "benchmarks.reward_load.baseline_app:app", "--host", "127.0.0.1",
                "--port", str(port), "--workers", "1", "--log-level", "warning", "--no-access-log"]
    options = ["--scorer-timeout-s", str(args.scorer_timeout_s), *(["--workers", str(args.workers)] if args.workers
                                                                     else []), *args.rlcheck_arg]
    return service_argv(port, *options)


async def sigterm_in_flight(server: ServerProcess, payloads: list[dict[str, Any]]) -> dict[str, Any]:
    """SIGTERM (to the PID, as Kubernetes does) 0.3 s after sending payloads; did it finish them and stop?"""
    async with slime_session(total_timeout_s=15) as session:
        tasks = [asyncio.ensure_future(post_like_slime(session, server.base_url + "/score", p, attempts=1))
                 for p in payloads]
        await asyncio.sleep(0.3)
        stopped = await asyncio.to_thread(server.stop, 10.0)
        replies = await asyncio.gather(*tasks)
    return {"stopped_within_10s": stopped.by_sigterm, "seconds": round(stopped.seconds, 2),
            "returncode": stopped.returncode, "in_flight": len(payloads),
            "in_flight_answered_200": sum(r.ok for r in replies)}


def scrape_metrics(base_url: str) -> dict[str, float]:
    with urllib.request.urlopen(base_url + "/metrics", timeout=5) as resp:
        series = parse_text(resp.read().decode())
    wanted = ("rlcheck_reward_scorer_", "rlcheck_reward_requests_total", "rlcheck_reward_scores_total")
    return {name: value for name, value in series.items() if name.startswith(wanted)}


def run_one(service: str, mix: str, requests: list[workload.Request], args: argparse.Namespace) -> dict[str, Any]:
    port = free_loopback_port()
    print(f"[{time.strftime('%H:%M:%S')}] {mix}: {service} on port {port}", flush=True)
    with running_server(server_argv(service, port, args), port=port, log_path=WORK / f"{service}_{mix}.log",
                        ready_timeout_s=90) as server:
        load_before = os.getloadavg()[0]
        cpu_before, client_before = stats.tree_cpu_s(server.pid), stats.own_cpu_s()
        busy_before, steal_before = stats.machine_busy_s()
        log = asyncio.run(load.run_phase(server.base_url, requests, cap_s=args.phase_cap_s))
        cpu_s, client_s = stats.tree_cpu_s(server.pid) - cpu_before, stats.own_cpu_s() - client_before
        busy_s, steal_s = (after - before for after, before in zip(stats.machine_busy_s(), (busy_before, steal_before),
                                                                    strict=True))
        result = stats.summarize(log, total=len(requests), cpu_s=cpu_s, deadline_s=args.scorer_timeout_s + 1.0)
        # This machine is shared: how much CPU went to anything but this server and its client during the phase.
        result["interference"] = {"other_processes_cpu_s": round(busy_s - cpu_s - client_s, 1),
                                  "hypervisor_steal_s": round(steal_s, 1), "client_cpu_s": round(client_s, 1),
                                  "load_average_1m_before": round(load_before, 2)}
        normal = [r.payload for r in requests if r.kind == "normal"]
        if mix == "normal":
            result["keepalive_probe"] = asyncio.run(load.keepalive_probe(server.base_url, normal[0], KEEPALIVE_GAPS_S))
        if service == "rlcheck":
            result["server_metrics"] = scrape_metrics(server.base_url)
        in_flight = normal[:15] + ([workload.pathological(0, workload.FREEZER).payload] if mix != "normal" else [])
        result["sigterm"] = asyncio.run(sigterm_in_flight(server, in_flight))
    result["server_log"] = str(server.log_path.relative_to(WORK.parents[2]))
    print(f"    {json.dumps({k: result[k] for k in ('requests_per_s', 'wall_s', 'stop_reason')})}", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--phase-cap-s", type=float, default=300.0)
    parser.add_argument("--scorer-timeout-s", type=float, default=ServiceConfig().scorer_timeout_s)
    parser.add_argument("--workers", type=int, default=None, help="rlcheck scorer processes (default: its own)")
    parser.add_argument("--rlcheck-arg", action="append", default=[], help="extra option for rlcheck's service")
    parser.add_argument("--only", choices=("baseline", "rlcheck"), default=None)
    parser.add_argument("--mix", choices=tuple(MIXES), action="append", default=None)
    parser.add_argument("--name", default="reward_load", help="result file name under benchmarks/results/")
    args = parser.parse_args(argv)
    started, load_avg = time.monotonic(), os.getloadavg()[0]
    doc: dict[str, Any] = {"settings": {k: v for k, v in vars(args).items() if k != "name"},
                           "load_average_1m_before": round(load_avg, 2), "pool_costs": asyncio.run(costs.measure()),
                           "results": {}}
    for mix in args.mix or MIXES:
        requests = workload.mix(args.requests, pathological_share=MIXES[mix], seed=args.seed)
        services = [args.only] if args.only else ["baseline", "rlcheck"]
        doc["results"][mix] = {service: run_one(service, mix, requests, args) for service in services}
    doc["headline"] = report.headline(doc["results"])
    doc["goals"] = report.goals(doc["results"])
    doc["benchmark_wall_s"] = round(time.monotonic() - started, 1)
    doc.update(report.describe(args))
    path = results_file.write(args.name, doc)
    print(report.table(doc["results"]))
    print(doc["headline"])
    print(json.dumps(doc["goals"], indent=2))
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
