"""Wall time of the main job, `pytest checks/ reproducers/`, on this machine: serial and with -n auto, against
the baseline of a cold import of the stack (`import torch, ray, megatron.core, sglang.srt.server_args`) in the
same run.

Each variant runs in a loopback-only network namespace (as CI does), Ray start included, and the
result file records the times, the goal (the main job at most 5x the stack import) and how loaded the machine was.
Usage: python -m benchmarks.preflight_time.run [--rounds N] [--variant serial ...]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import results_file
from rlcheck.process import subproc

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = {"serial": [], "xdist -n auto": ["-n", "auto"]}


def command(extra: list[str], report_dir: str) -> list[str]:
    pytest = [sys.executable, "-m", "pytest", "checks/", "reproducers/", "--hardware=auto", "-q",
              "-p", "no:cacheprovider", f"--report-dir={report_dir}", *extra]
    if shutil.which("unshare") and subproc.run(["unshare", "-n", "true"], timeout_s=10).returncode == 0:
        return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *pytest]
    return pytest


def one_run(extra: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as report_dir:
        start = time.perf_counter()
        done = subproc.run(command(extra, report_dir), timeout_s=1800, cwd=str(ROOT))
        wall_s = time.perf_counter() - start
    summary = next((x for x in reversed(done.stdout.splitlines()) if re.search(r"\d+ (passed|failed)", x)), "")
    decision = next((x for x in done.stdout.splitlines() if x.startswith("rlcheck GO") or
                     x.startswith("rlcheck NO-GO")), "")
    return {"wall_s": round(wall_s, 1), "exit": done.returncode, "pytest": summary.strip("= "), "decision": decision}


STACK_IMPORT = "import torch, ray, megatron.core, sglang.srt.server_args"


def stack_import_s() -> float:
    """The baseline: one cold interpreter importing the stack the reproducers exercise."""
    start = time.perf_counter()
    done = subproc.run([sys.executable, "-c", STACK_IMPORT], timeout_s=600, cwd=str(ROOT))
    if done.returncode != 0:
        raise SystemExit(f"the stack import failed ({done.why()}): {done.tail(5)}")
    return round(time.perf_counter() - start, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--variant", choices=sorted(VARIANTS), action="append",
                        help="measure only these variants (default: all)")
    args = parser.parse_args(argv)
    variants = {name: VARIANTS[name] for name in (args.variant or VARIANTS)}
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in variants}
    imports: list[float] = []
    load = os.getloadavg()[0]
    for _ in range(args.rounds):
        imports.append(stack_import_s())
        for name, extra in variants.items():
            runs[name].append(one_run(extra))
    medians = {name: statistics.median(float(str(r["wall_s"])) for r in rs) for name, rs in runs.items()}
    baseline = statistics.median(imports)
    doc = {"runs": runs, "median_wall_s": medians,
           "baseline": {"what": f"cold `{STACK_IMPORT}` in one interpreter", "runs_s": imports,
                        "median_s": baseline},
           "ratio_to_baseline": {name: round(value / baseline, 2) for name, value in medians.items()},
           "goal": "the main job (pytest checks/ reproducers/) at most 5x the cold stack import",
           "goal_met": {name: value <= 5 * baseline for name, value in medians.items()},
           "load_average_1m_before": round(load, 2),
           "load_average_1m_after": round(os.getloadavg()[0], 2),
           "notes": ["the reproducers run the real SGLang, Megatron and uvicorn in child processes: Megatron and "
                     "SGLang children are forked from one warm interpreter per package set "
                     "(rlcheck.process.warm), side-directory children start cold; independent children of one "
                     "reproducer run concurrently; two Ray heads (one with /bin/sh swapped, started in the "
                     "background when its test starts); with -n auto each xdist worker starts its own Ray and warm "
                     "interpreters on first use",
                     "the machine is shared with other sessions: compare the main job with the stack import of "
                     "the same run (ratio_to_baseline), not across runs"]}
    path = results_file.write("preflight_time", doc)
    print(f"{medians} -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
