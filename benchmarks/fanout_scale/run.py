"""How rlcheck's per-node fan-out grows with the node count: 1, 8, 16, 32 and 64 real Ray nodes on this machine.

Each node count in turn (never two clusters at once): a loopback Ray of N nodes (benchmarks.fanout_scale.cluster),
then the fan-out with the per-node probe swapped for a fixed-duration stand-in (benchmarks.fanout_scale.standin:
--hold-s of sleep, then a real node observation taken once on this machine), one cold run and --rounds warm ones:
fan-out wall time, the fan-out driver's peak RSS, the GCS's RSS, bytes of results per node, and the sizes of
report.json, report.md and the JUnit file that rlcheck writes from those answers. The baseline is N=1 in the same
run. A node count the machine cannot hold is recorded with why, and the larger ones are not tried.

Fitted in the result: warm wall = fixed + per_node * N, driver peak RSS = fixed + per_node * N (least squares).

Usage: .venv/bin/python -m benchmarks.fanout_scale.run [--sizes 1 8 16 32 64] [--rounds 3] [--hold-s 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import results_file
from benchmarks.fanout_scale.cluster import RESULT

ROOT = Path(__file__).resolve().parents[2]
GOAL_RATIO = 1.5


def observation(path: Path) -> int:
    """One real node observation of this machine, as the stand-in will return it; its size in bytes."""
    from rlcheck.probes.node.collect import collect_node

    text = json.dumps(collect_node().to_dict())
    path.write_text(text, encoding="utf-8")
    return len(text)


def one_size(nodes: int, args: argparse.Namespace, obs: Path) -> dict[str, Any]:
    argv = [sys.executable, "-m", "benchmarks.fanout_scale.cluster", "--nodes", str(nodes), "--rounds",
            str(args.rounds), "--hold-s", str(args.hold_s), "--observation", str(obs), "--min-available-gib",
            str(args.min_available_gib)]
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=args.size_timeout_s,
                              check=False)
    except subprocess.TimeoutExpired:
        return {"nodes": nodes, "reached": False, "why": f"not done within {args.size_timeout_s:.0f} s"}
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith(RESULT)), None)
    if line is None:
        return {"nodes": nodes, "reached": False,
                "why": f"exit {done.returncode} with no result: {done.stderr.strip()[-800:]}"}
    return {**json.loads(line.removeprefix(RESULT)), "size_wall_s": round(time.perf_counter() - start, 1)}


def fit(points: list[tuple[float, float]]) -> dict[str, float] | None:
    """Least squares y = fixed + per_node * n; None for fewer than two node counts."""
    if len({n for n, _ in points}) < 2:
        return None
    slope, intercept = statistics.linear_regression([n for n, _ in points], [y for _, y in points])
    return {"fixed": round(intercept, 4), "per_node": round(slope, 6)}


def summarize(sizes: dict[int, dict[str, Any]]) -> dict[str, Any]:
    reached = {n: s for n, s in sizes.items() if s.get("reached")}
    if not reached:
        return {}
    base = min(reached)
    wall = {n: statistics.median(s["in_job"]["warm_rounds_s"]) for n, s in reached.items()}
    rss = {n: s["in_job"]["driver_rss_kib_after_rounds"] / 1024 for n, s in reached.items()}
    top = max(reached)
    per_node_rss = {n: round((rss[n] - rss[base]) * 1024 / (n - base), 1) for n in reached if n != base}
    return {
        "baseline_nodes": base, "largest_reached": top,
        "fan_out_call_s": {n: s["fan_out_call_s"] for n, s in reached.items()},
        "fan_out_call_driver_peak_rss_mib": {n: round(s["fan_out_call_driver_peak_rss_kib"] / 1024, 1)
                                             for n, s in reached.items()},
        "in_job_first_round_s": {n: s["in_job"]["first_round_s"] for n, s in reached.items()},
        "warm_wall_median_s": {n: round(w, 3) for n, w in wall.items()},
        "warm_wall_ratio_vs_baseline": {n: round(w / wall[base], 2) for n, w in wall.items()},
        "driver_rss_mib_after_rounds": {n: round(r, 1) for n, r in rss.items()},
        "driver_rss_kib_per_node_over_baseline": per_node_rss,
        "result_bytes_per_node": {n: s["result_bytes_per_node"] for n, s in reached.items()},
        "report_bytes_per_node": {n: {k: round(s[k] / n) for k in ("report_json_bytes", "report_md_bytes",
                                                                   "junit_bytes")} for n, s in reached.items()},
        "gcs_peak_rss_mib": {n: round(s["gcs_peak_rss_kib"] / 1024, 1) for n, s in reached.items()},
        "fit_warm_wall_s": fit([(n, s) for n, r in reached.items() for s in r["in_job"]["warm_rounds_s"]]),
        "fit_fan_out_call_s": fit([(n, r["fan_out_call_s"]) for n, r in reached.items()]),
        "fit_driver_rss_mib": fit(list(rss.items())),
        "fit_result_bytes": fit([(n, r["result_bytes"]) for n, r in reached.items()]),
        **{f"fit_{k}": fit([(n, r[k]) for n, r in reached.items()])
           for k in ("report_json_bytes", "report_md_bytes", "junit_bytes")},
        "fit_gcs_peak_rss_mib": fit([(n, s["gcs_peak_rss_kib"] / 1024) for n, s in reached.items()]),
        "goal": f"the driver's own fan-out (warm rounds in one job) at {top} nodes within {GOAL_RATIO}x of {base} node",
        "goal_met": wall[top] / wall[base] <= GOAL_RATIO,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 16, 32, 64])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hold-s", type=float, default=2.0, help="the stand-in probe's fixed duration")
    parser.add_argument("--min-available-gib", type=float, default=6.0,
                        help="stop adding nodes when this machine has less memory available")
    parser.add_argument("--size-timeout-s", type=float, default=2400.0)
    args = parser.parse_args(argv)
    sizes: dict[int, dict[str, Any]] = {}
    load: dict[int, float] = {}
    path = None
    with tempfile.TemporaryDirectory(prefix="rlcheck-scale-") as tmp:
        obs = Path(tmp) / "observation.json"
        obs_bytes = observation(obs)
        for n in sorted(args.sizes):
            load[n] = round(os.getloadavg()[0], 2)
            got = one_size(n, args, obs)
            sizes[got.get("nodes", n)] = got
            print(json.dumps(got), flush=True)
            last = not got.get("reached") or bool(got.get("fewer_nodes_because")) or n == max(args.sizes)
            # written after every node count: a run stopped part-way still leaves what it measured
            path = results_file.write("fanout_scale", {
                "sizes_asked": sorted(args.sizes), "complete": last, "rounds": args.rounds, "hold_s": args.hold_s,
                "observation_bytes": obs_bytes, "load_average_1m_per_size": load, "summary": summarize(sizes),
                "sizes": sizes, "notes": NOTES})
            if last:
                break
    print(json.dumps(summarize(sizes), indent=2))
    print(f"written: {path}")
    return 0


NOTES = [
    "every node is a real Ray node (raylet, object store, dashboard agent, runtime-env agent) on 127.0.0.1 of this "
    "one machine; the fan-out is rlcheck's own (rlcheck.cluster.fanout.fan_out) straight to the GCS, the path the "
    "embedded Ray and `--ray-address=HOST:PORT` take",
    "the probe is a stand-in: --hold-s of sleep, then a real node observation of this machine (no GPU here), so "
    "what grows with N is the driver's own work: submitting N pinned tasks, waiting, fetching N answers",
    "fan_out_call_s: rlcheck's fan_out() as the cluster checks call it: a driver process that imports Ray, connects "
    "as a new Ray job, and so makes every node start a fresh Python worker; on this 2-core machine those N worker "
    "starts run two at a time (a real cluster starts them in parallel, one per node), so this time grows with N "
    "here and is an upper bound, not the driver's cost",
    "in_job: the driver's own work (fan_out_connected, what the driver process runs) in one connected job: "
    "first_round_s starts the workers (serialised here as above), warm_rounds_s find them started; the warm rounds "
    "are the fan-out's own cost at N (submit N pinned tasks, wait, fetch N answers) and the goal's measure",
    "driver memory: VmRSS of the in-job driver after its rounds (results held) and before any report; "
    "fan_out_call_driver_peak_rss_kib: the driver process of fan_out() (getrusage of its waited-for children)",
    "report sizes: the cluster checks of rlcheck.preflight.cluster judged on the last warm fan-out (hardware none; "
    "the pairwise all-reduce is not run here), written by rlcheck.report.write and the JUnit plugin's rewrite",
    "the machine is shared with other work (see load_average_1m_per_size); sizes run one after another",
]


if __name__ == "__main__":
    sys.exit(main())
