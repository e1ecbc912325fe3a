"""`pytest checks/` wall time against a local Ray cluster of 1, 3 and 6 nodes, side by side in one run.

All sizes run at once (one embedded loopback Ray per size); each round runs, for every size in turn,
`pytest checks/ --ray-address=http://...` (the Jobs-API path a real cluster is checked through) and the fan-out
alone (through the Jobs API, and straight to the GCS). One warm-up run per size first. The 1-node cluster is
the baseline; goal: 6 nodes within 1.3x of 1 node. Each run is verified: every node answered the pinned probe.

Usage (loopback only, as CI runs): unshare -n bash -c 'ip link set lo up; .venv/bin/python -m benchmarks.fanout.run'
"""

from __future__ import annotations

import argparse
import contextlib
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
from rlcheck.cluster.fanout import fan_out
from rlcheck.cluster.local_ray import EmbeddedRay, RayEndpoints

ROOT = Path(__file__).resolve().parents[2]
GOAL_RATIO = 1.3


def pytest_checks(url: str, report_dir: Path) -> tuple[float, int]:
    """Wall seconds of one `pytest checks/` run, and how many nodes answered (from its report.json)."""
    argv = [sys.executable, "-m", "pytest", "checks/", f"--ray-address={url}", f"--report-dir={report_dir}",
            "-p", "no:cacheprovider", "-q"]
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, capture_output=True, timeout=600, check=False)  # NO-GO here is exit code 1
    elapsed = time.perf_counter() - start
    doc = json.loads((report_dir / "report.json").read_text())
    answered = sum(1 for v in doc["verdicts"] if v["check_id"] == "cluster_nodes_answer" and v["status"] == "PASS")
    return elapsed, answered


def timed_fanout(address: str) -> tuple[float, int]:
    start = time.perf_counter()
    result = fan_out(address, node_timeout_s=60, connect_timeout_s=30, job_python=sys.executable)
    return time.perf_counter() - start, sum(1 for a in result.nodes if a.outcome == "answered")


def one_round(endpoints: RayEndpoints, report_dir: Path) -> dict[str, tuple[float, int]]:
    """pytest checks/, then the fan-out alone both ways: (seconds, nodes that answered) each."""
    return {"pytest_checks_s": pytest_checks(endpoints.dashboard_url, report_dir),
            "fanout_jobs_api_s": timed_fanout(endpoints.dashboard_url),
            "fanout_gcs_s": timed_fanout(endpoints.gcs_address)}


def summarize(endpoints: RayEndpoints, started_s: float, cold: tuple[float, int],
              rounds: list[dict[str, tuple[float, int]]]) -> dict[str, Any]:
    answered = {cold[1]} | {n for r in rounds for _, n in r.values()}
    return {"nodes": endpoints.nodes, "cluster_start_s": round(started_s, 1),
            "every_node_answered_every_run": answered == {endpoints.nodes},
            "first_pytest_checks_s": round(cold[0], 2),
            **{key: {"median": round(statistics.median(r[key][0] for r in rounds), 2),
                     "runs": [round(r[key][0], 2) for r in rounds]} for key in rounds[0]}}


def ratios(by_size: dict[int, dict[str, Any]], base: int) -> dict[str, dict[str, float]]:
    keys = ("pytest_checks_s", "fanout_jobs_api_s", "fanout_gcs_s")
    return {f"{n}_vs_{base}_nodes": {k: round(by_size[n][k]["median"] / by_size[base][k]["median"], 2) for k in keys}
            for n in by_size if n != base}


def headline(found: dict[str, dict[str, float]], top: int, base: int) -> str:
    """What grows with the node count, said apart: the fan-out itself, and the whole pytest run it is a part of
    (start-up, collection and the other checks do not grow with nodes, so that ratio is the smaller one)."""
    r = found.get(f"{top}_vs_{base}_nodes")
    if r is None:
        return "one cluster size only: no ratio"
    return (f"{top} vs {base} node(s): the fan-out itself takes {r['fanout_jobs_api_s']}x as long through the Jobs "
            f"API and {r['fanout_gcs_s']}x straight to the GCS; the whole `pytest checks/` run takes "
            f"{r['pytest_checks_s']}x (wall time, nodes sharing this machine's cores)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 3, 6])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    # The job driver runs `python` on the head: the embedded head's PATH must find this interpreter.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    with tempfile.TemporaryDirectory(prefix="rlcheck-fanout-bench-") as tmp, contextlib.ExitStack() as stack:
        clusters, started, cold = {}, {}, {}
        for size in args.sizes:  # all sizes up at once, so that every round sees the same machine
            start = time.perf_counter()
            clusters[size] = stack.enter_context(EmbeddedRay(num_cpus=1, extra_nodes=size - 1, start_timeout_s=600))
            started[size] = time.perf_counter() - start
        for size in args.sizes:
            cold[size] = pytest_checks(clusters[size].dashboard_url, Path(tmp) / f"{size}-warm-up")
        rounds: dict[int, list[dict[str, tuple[float, int]]]] = {size: [] for size in args.sizes}
        load = []
        for i in range(args.rounds):  # interleaved: a load spike from elsewhere lands on every size alike
            load.append(round(os.getloadavg()[0], 2))
            for size in args.sizes:
                rounds[size].append(one_round(clusters[size], Path(tmp) / f"{size}-{i}"))
        by_size = {size: summarize(clusters[size], started[size], cold[size], rounds[size]) for size in args.sizes}
    base = args.sizes[0]
    found = ratios(by_size, base)
    worst = found.get(f"{max(args.sizes)}_vs_{base}_nodes", {}).get("pytest_checks_s")
    doc = {"headline": headline(found, max(args.sizes), base), "rounds": args.rounds,
           "load_average_1m_per_round": load, "sizes": by_size, "ratios": found,
           "goal": f"the whole `pytest checks/` wall time with {max(args.sizes)} nodes within {GOAL_RATIO}x of {base} "
                   "node (the fan-out alone is in headline and ratios)",
           "goal_met": worst is not None and worst <= GOAL_RATIO, "notes": NOTES}
    path = results_file.write("fanout", doc)
    print(json.dumps(doc, indent=2))
    print(f"written: {path}")
    return 0


NOTES = [
    "every node of these clusters is a set of processes on this one machine (num_cpus=1 each, all on 127.0.0.1)",
    "this machine has 2 CPU cores: the 6 nodes' raylets, agents and probe workers share them, so per-node work "
    "(a Ray worker start, the probe's Python and ldconfig) runs at most 2 at a time; on a real cluster each node "
    "brings its own CPUs and the fan-out is parallel in wall time, so the 6-node ratio here is an upper bound",
    "all three clusters are up for the whole run and the rounds interleave the sizes, so load from elsewhere (other "
    "sessions share this machine) lands on every size alike; load_average_1m_per_round shows it",
    "pytest_checks_s: `pytest checks/ --ray-address=http://127.0.0.1:<dashboard>` (hardware auto: no GPU here), "
    "fan-out through the Jobs API with rlcheck shipped as py_modules; fanout_jobs_api_s: that fan-out alone; "
    "fanout_gcs_s: the fan-out driver connected straight to the GCS (what the embedded Ray uses)",
    "first_pytest_checks_s: the warm-up run on a fresh cluster (runtime env upload, new workers); medians exclude it",
]


if __name__ == "__main__":
    sys.exit(main())
