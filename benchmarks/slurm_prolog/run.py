"""Wall time of the Slurm prolog tier, `rlcheck slurm prolog`, on this machine: the quick per-node tier (image
checks, gpu_node_inventory and gpu_node_health) that runs before every job on a node, against its goal of 5 s on a
healthy node, and side by side with an earlier rlcheck (--baseline-rev: that revision's rlcheck/ from git, run by the
same interpreter with the same packages), rounds interleaved.

Each round runs the real command in a fresh interpreter, as slurmd would (`--scontrol` names a path that does
not exist: a FAIL would be reported as a drain that could not be made, never drain this machine). The result
records each round's wall time, exit code and closing line, and how loaded the machine was.
Usage: python -m benchmarks.slurm_prolog.run [--rounds N] [--hardware NAME] [--baseline-rev REV]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from benchmarks import results_file
from rlcheck.process import subproc

ROOT = Path(__file__).resolve().parents[2]
GOAL_S = 5.0
NO_SCONTROL = "/nonexistent/scontrol"
CLI = ("import sys, rlcheck; print('rlcheck from', rlcheck.__file__, file=sys.stderr); "
       "from rlcheck.cli import main; sys.exit(main(sys.argv[1:]))")
"""The `rlcheck` command of this checkout, or of the baseline's copy (the installed script may belong to another)."""


def one_round(hardware: str, pythonpath: str | None = None) -> dict[str, object]:
    argv = [sys.executable, "-c", CLI, "slurm", "prolog", f"--hardware={hardware}", f"--scontrol={NO_SCONTROL}"]
    env = {**os.environ, "PYTHONPATH": pythonpath} if pythonpath else None
    start = time.perf_counter()  # `python -c` puts its folder first on sys.path: the baseline runs in its own
    done = subproc.run(argv, timeout_s=300, cwd=pythonpath or str(ROOT), env=env)
    wall_s = time.perf_counter() - start
    lines = (done.stderr + done.stdout).splitlines()
    closing = next((x for x in reversed(lines) if x.startswith("rlcheck slurm prolog")), "")
    ran = next((x.removeprefix("rlcheck from ") for x in lines if x.startswith("rlcheck from ")), "")
    return {"wall_s": round(wall_s, 1), "exit": done.returncode, "closing": closing, "rlcheck": ran,
            "not_judged": [x for x in lines if x.startswith("UNKNOWN ")],
            "load_average_1m": round(os.getloadavg()[0], 2)}


def unpack(rev: str, dest: Path) -> str:
    """rlcheck/ as it was at rev, under dest: a PYTHONPATH entry that wins over this checkout's editable install."""
    archive = dest / "rlcheck.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", rev, "rlcheck"], stdout=out, check=True, timeout=120)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return str(dest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hardware", default="none", help="profile for the tier (default none: a CPU machine)")
    parser.add_argument("--baseline-rev", default=None, metavar="REV",
                        help="also time the tier of this git revision, rounds interleaved with this checkout's")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rlcheck-prolog-base-") as folder:
        base = unpack(args.baseline_rev, Path(folder)) if args.baseline_rev else None
        rounds: list[dict[str, object]] = []
        baseline: list[dict[str, object]] = []
        for _ in range(args.rounds):
            if base:
                baseline.append(one_round(args.hardware, base))
            rounds.append(one_round(args.hardware))
    median = statistics.median(float(str(r["wall_s"])) for r in rounds)
    doc: dict[str, object] = {"hardware": args.hardware, "rounds": rounds, "median_wall_s": median,
                              "goal_s": GOAL_S, "goal_met": median <= GOAL_S}
    base_median = None
    if baseline:
        base_median = statistics.median(float(str(r["wall_s"])) for r in baseline)
        doc["baseline"] = {"rev": args.baseline_rev, "rounds": baseline, "median_wall_s": base_median}
        doc["speedup"] = round(base_median / median, 2)
    doc["notes"] = ["a cold interpreter per round, as a Slurm prolog starts one; the tier's own --budget-s (25 s) "
                    "bounds the checks, not the interpreter start and imports before them",
                    "the machine is shared with other sessions: compare this checkout with the baseline of the same "
                    "run (rounds interleaved), not across runs"]
    path = results_file.write("slurm_prolog", doc)
    print(f"median {median} s over {len(rounds)} round(s) (goal {GOAL_S} s)"
          + (f", baseline {args.baseline_rev}: {base_median} s" if baseline else "") + f" -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
