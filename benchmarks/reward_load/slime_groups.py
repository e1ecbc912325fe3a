"""Right rewards under SLIME's real load: rlcheck's service beside the reference design, in one run.

The client is shaped like SLIME's rollout: each rollout process has one aiohttp session (64
connections, 120 s timeout, SLIME's 10-attempt retry policy) and sends groups of 256 samples with
asyncio.gather; 512 in flight is two such processes. The mix has ground truth, the reward SLIME's
own `--rm-type math` grader gives (recorded kinds: plain answers, symbolic answers, self-correcting
multi-box, unboxed, list labels; a few pathological answers only need a timely reply). Each
service runs once on an idle host and once with every CPU kept busy by a competing load that this
benchmark starts and stops itself (each load process also ends itself after --phase-cap-s + 60 s).

Usage: python -m benchmarks.reward_load.slime_groups [--groups 4] [--name reward_load_slime]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if not __package__:  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import results_file  # noqa: E402
from benchmarks.reward_load import ground_truth, stats  # noqa: E402
from benchmarks.reward_load.run import WORK, scrape_metrics  # noqa: E402
from rlcheck.process.wait import free_loopback_port  # noqa: E402
from rlcheck.reward.harness import running_server, service_argv  # noqa: E402
from tests.slime_client import Reply, post_like_slime, slime_session  # noqa: E402

GROUP = 256  # samples a SLIME rollout process gathers at once
SERVICES = ("baseline", "rlcheck", "rlcheck_math_verify")


def server_argv(service: str, port: int) -> list[str]:
    if service == "baseline":
        return [sys.executable, "-m", "uvicorn", "benchmarks.reward_load.baseline_app:app", "--host", "127.0.0.1",
                "--port", str(port), "--workers", "1", "--log-level", "warning", "--no-access-log"]
    return service_argv(port, *(["--backend", "math_verify"] if service == "rlcheck_math_verify" else []))


@contextmanager
def busy_host(enabled: bool, cap_s: float) -> Iterator[int]:
    """One spinning process per CPU for the duration (each ends itself after cap_s at the latest)."""
    procs: list[subprocess.Popen[bytes]] = []
    if enabled:
        spin = f"import time\nend = time.monotonic() + {cap_s}\nwhile time.monotonic() < end: pass\n"
        procs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(os.cpu_count() or 1)]
    try:
        yield len(procs)
    finally:
        for proc in procs:  # by PID, only what this benchmark started
            proc.kill()
            proc.wait(timeout=10)


async def _rollout_process(url: str, samples: list[ground_truth.Sample], out: list[tuple[Any, Reply]]) -> None:
    async with slime_session() as session:
        for start in range(0, len(samples), GROUP):
            group = samples[start:start + GROUP]
            replies = await asyncio.gather(*(post_like_slime(session, url, s.payload) for s in group))
            out.extend(zip(group, replies, strict=True))


async def run_phase(url: str, samples: list[ground_truth.Sample], in_flight: int) -> tuple[list[Any], float]:
    processes = max(1, in_flight // GROUP)
    shares = [samples[i::processes] for i in range(processes)]
    out: list[tuple[Any, Reply]] = []
    started = time.monotonic()
    await asyncio.gather(*(_rollout_process(url, share, out) for share in shares))
    return out, time.monotonic() - started


def judge(results: list[tuple[ground_truth.Sample, Reply]], wall_s: float, deadline_s: float) -> dict[str, Any]:
    """Wrong rewards by cause: no reward at all, a fallback the service flagged, a grading difference."""
    wrong: dict[str, int] = {"no_reward": 0, "timeout_fallback": 0, "error_fallback": 0, "grading_difference": 0}
    by_kind: dict[str, int] = {}
    late_pathological = 0
    for sample, reply in results:
        if sample.expected is None:  # pathological: any reward, by the deadline
            late_pathological += reply.latency_s > deadline_s or not reply.ok
            continue
        value = reply.value if not isinstance(reply.value, dict) else next(iter(reply.value.values()))
        if reply.ok and value == sample.expected:
            continue
        cause = ("no_reward" if not reply.ok else "timeout_fallback" if reply.reward_status == "timeout"
                 else "error_fallback" if reply.reward_status == "error" else "grading_difference")
        wrong[cause] += 1
        by_kind[sample.kind] = by_kind.get(sample.kind, 0) + 1
    latencies = sorted(r.latency_s for _, r in results)
    return {"requests": len(results), "wall_s": round(wall_s, 2), "requests_per_s": round(len(results) / wall_s, 1),
            "latency_p50_s": round(stats.percentile(latencies, 50) or 0.0, 3),
            "latency_p99_s": round(stats.percentile(latencies, 99) or 0.0, 3),
            "wrong_rewards": sum(wrong.values()), "wrong_by_cause": wrong, "wrong_by_sample_kind": by_kind,
            "pathological": sum(s.expected is None for s, _ in results),
            "pathological_late_or_unanswered": late_pathological,
            "retried_requests": sum(r.attempts > 1 for _, r in results),
            "http_503_attempts": sum(("HTTP 503" in e) for _, r in results for e in r.errors)}


def one(service: str, busy: bool, in_flight: int, samples: list[ground_truth.Sample],
        args: argparse.Namespace) -> dict[str, Any]:
    port = free_loopback_port()
    label = f"{service}_{'busy' if busy else 'idle'}_{in_flight}"
    print(f"[{time.strftime('%H:%M:%S')}] {label}", flush=True)
    with running_server(server_argv(service, port), port=port, log_path=WORK / f"{label}.log",
                        ready_timeout_s=90) as server, busy_host(busy, args.phase_cap_s + 60) as spinners:
        results, wall_s = asyncio.run(asyncio.wait_for(run_phase(server.base_url + "/score", samples, in_flight),
                                                       args.phase_cap_s))
        verdict = judge(results, wall_s, deadline_s=args.deadline_s)
        verdict["competing_cpu_processes"] = spinners
        verdict["load_average_1m_after"] = round(os.getloadavg()[0], 2)  # a shared host: what else was running
        if service != "baseline":
            metrics = scrape_metrics(server.base_url)
            verdict["server_metrics"] = {k: v for k, v in metrics.items() if v and not k.endswith("_bucket")}
    print(f"    {verdict['requests_per_s']} req/s p99 {verdict['latency_p99_s']} s wrong {verdict['wrong_by_cause']}",
          flush=True)
    return verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=4, help="groups of 256 per phase (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--phase-cap-s", type=float, default=120.0)
    parser.add_argument("--deadline-s", type=float, default=8.0, help="a pathological reply later than this is late")
    parser.add_argument("--in-flight", type=int, action="append", default=None)
    parser.add_argument("--name", default="reward_load_slime")
    args = parser.parse_args(argv)
    samples = ground_truth.mix(GROUP * args.groups, seed=args.seed)
    doc: dict[str, Any] = {"results": {}, "mix": ground_truth.describe(samples)}
    started = time.monotonic()
    for busy in (False, True):
        for in_flight in args.in_flight or [256, 512]:
            key = f"{'busy' if busy else 'idle'}_host_{in_flight}_in_flight"
            doc["results"][key] = {s: one(s, busy, in_flight, samples, args) for s in SERVICES}
    doc["benchmark_wall_s"] = round(time.monotonic() - started, 1)
    doc["settings"] = {k: v for k, v in vars(args).items() if k != "name"}
    doc["notes"] = ("baseline: the reference design (benchmarks/reward_load/baseline_app.py, math-verify in a thread "
                    "pool, exceptions answered 0.0, no X-Reward-Status, so its wrong rewards all read as grading "
                    "differences). rlcheck: `rlcheck reward-service` defaults (slime_math); rlcheck_math_verify: "
                    "the same "
                    "with --backend math_verify, whose unboxed and multi-box rewards differ from SLIME's by design. "
                    "Ground truth: the reward SLIME's --rm-type math grader gives; the mix (seed 0) was checked "
                    "against SLIME's own grader (THUDM/slime 624b824a, pylatexenc 2.11): with --groups 2, 509 of 509 "
                    "graded samples agree; with --groups 4, 1019 of 1019. List labels are left out: the reference "
                    "design answers them 422, which SLIME retries for about 2.5 minutes per sample.")
    print(f"written: {results_file.write(args.name, doc)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
