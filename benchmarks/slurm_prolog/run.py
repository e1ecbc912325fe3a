"""Wall time of the Slurm prolog tier, `rlcheck slurm prolog`, on this machine: the quick per-node tier (image
checks and gpu_node_health) that runs before every job on a node, against its goal of 30 s on a healthy node.

Each round runs the real command in a fresh interpreter, as slurmd would (`--scontrol` names a path that does
not exist: a FAIL would be reported as a drain that could not be made, never drain this machine). The result
records each round's wall time, exit code and closing line, and how loaded the machine was.
Usage: python -m benchmarks.slurm_prolog.run [--rounds N] [--hardware NAME]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from benchmarks import results_file
from rlcheck.process import subproc

ROOT = Path(__file__).resolve().parents[2]
GOAL_S = 30.0
NO_SCONTROL = "/nonexistent/scontrol"
CLI = "import sys; from rlcheck.cli import main; sys.exit(main(sys.argv[1:]))"
"""The `rlcheck` command of this checkout (the installed script may belong to another copy)."""


def one_round(hardware: str) -> dict[str, object]:
    argv = [sys.executable, "-c", CLI, "slurm", "prolog", f"--hardware={hardware}", f"--scontrol={NO_SCONTROL}"]
    start = time.perf_counter()
    done = subproc.run(argv, timeout_s=300, cwd=str(ROOT))
    wall_s = time.perf_counter() - start
    closing = next((x for x in reversed((done.stderr + done.stdout).splitlines())
                    if x.startswith("rlcheck slurm prolog")), "")
    return {"wall_s": round(wall_s, 1), "exit": done.returncode, "closing": closing,
            "load_average_1m": round(os.getloadavg()[0], 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hardware", default="none", help="profile for the tier (default none: a CPU machine)")
    args = parser.parse_args(argv)
    rounds = [one_round(args.hardware) for _ in range(args.rounds)]
    median = statistics.median(float(str(r["wall_s"])) for r in rounds)
    doc = {"hardware": args.hardware, "rounds": rounds, "median_wall_s": median, "goal_s": GOAL_S,
           "goal_met": median <= GOAL_S,
           "notes": ["a cold interpreter per round, as a Slurm prolog starts one; the tier's own --budget-s (25 s) "
                     "bounds the checks, not the interpreter start and imports before them"]}
    path = results_file.write("slurm_prolog", doc)
    print(f"median {median} s over {len(rounds)} round(s) (goal {GOAL_S} s) -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
