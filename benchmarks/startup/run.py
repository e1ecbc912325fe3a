"""What rlcheck adds where users wait at start-up: the pytest plugin in a run that never uses rlcheck, and the
imports of `rlcheck scan`; side by side with the same run without rlcheck, in one run.

Plugin: a project of one trivial test (no conftest.py, no rlcheck option), `python -m pytest -q`, with the plugin
loaded by its entry point as pip installs it, against the same command with `-p no:rlcheck.plugin` (the baseline:
pytest with every other installed plugin). Rounds interleave the two; the cost is the difference of the medians.
Warm: Python's bytecode cache in place (every run after the first). Cold: an empty bytecode cache each run
(PYTHONPYCACHEPREFIX: the first run after an install, for pytest as for rlcheck). Beside the wall times, the
import time Python itself reports (-X importtime) of the entry module, and of the plugin's roles (what every run
loaded before they were deferred), and the rlcheck modules each kind of run imports.

Usage: python -m benchmarks.startup.run [--rounds N] [--cold-rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import results_file

GOAL = "the plugin adds < 50 ms to an unrelated pytest run, cold and warm (difference of medians)"
PROBE = ("import sys\n\ndef test_probe():\n"
         "    print('RLCHECK_MODULES', sorted(m for m in sys.modules if m.startswith('rlcheck')))\n")
ROLES = ("rlcheck.plugin.options", "rlcheck.plugin.gating", "rlcheck.plugin.report", "rlcheck.plugin.junit",
         "rlcheck.plugin.resources", "rlcheck.plugin.progress")


def _env(**extra: str) -> dict[str, str]:
    drop = ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


def _pytest(project: Path, env: dict[str, str], *extra: str) -> tuple[float, str, float]:
    """(wall s, stdout, CPU s: user + system of the run and its children)."""
    argv = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stdout[-800:]}{done.stderr[-800:]}")
    return elapsed, done.stdout, cpu


def _modules(out: str) -> list[str]:
    line = next(x for x in out.splitlines() if "RLCHECK_MODULES " in x)
    return list(eval(line.split("RLCHECK_MODULES ", 1)[1]))  # noqa: S307 - the list our own probe printed


def _importtime_ms(statement: str, env_for: Callable[[int], dict[str, str]], runs: int = 5) -> float:
    """Cumulative import time Python reports for the modules statement imports (pytest imported before, not counted),
    the median of `runs` runs, run i in env_for(i)."""
    code = f"import pytest\nimport sys\nsys.stderr.write('MARK\\n')\n{statement}\n"
    samples = []
    for i in range(runs):
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env_for(i), capture_output=True,
                              text=True, timeout=300, check=True)
        after = done.stderr.split("MARK\n", 1)[1]
        top = [line.split("|") for line in after.splitlines() if line.startswith("import time:")]
        # top-level entries (no indentation in the name column) add up to the statement's cost
        samples.append(sum(int(t[1]) for t in top if not t[2].startswith("  ") and t[2].strip()) / 1000)
    return round(statistics.median(samples), 1)


def _pair(project: Path, rounds: int, env_for: object) -> dict[str, object]:
    with_, without = "with rlcheck", "without (-p no:rlcheck.plugin)"
    runs: dict[str, list[float]] = {with_: [], without: []}
    cpu: dict[str, list[float]] = {with_: [], without: []}
    for i in range(rounds):  # each run its own environment: a cold run never finds the other's bytecode
        for name, tag, extra in ((with_, "with", ()), (without, "without", ("-p", "no:rlcheck.plugin"))):
            wall_s, _, cpu_s = _pytest(project, env_for(f"{i}-{tag}"), *extra)  # type: ignore[operator]
            runs[name].append(wall_s)
            cpu[name].append(cpu_s)
    medians = {k: statistics.median(v) for k, v in runs.items()}
    added_ms = (medians[with_] - medians[without]) * 1000
    # the run with and the run without of one round share the machine's state of that moment: the median of the
    # rounds' differences is the estimate the interleaving is for (drift and bursts on the host cancel in a pair)
    paired_ms = statistics.median(a - b for a, b in zip(runs[with_], runs[without], strict=True)) * 1000
    cpu_ms = (statistics.median(cpu[with_]) - statistics.median(cpu[without])) * 1000
    return {"rounds": rounds, "median_s": {k: round(v, 3) for k, v in medians.items()},
            "all_s": {k: [round(x, 3) for x in v] for k, v in runs.items()}, "added_ms": round(added_ms, 1),
            "added_ms_paired": round(paired_ms, 1), "added_cpu_ms": round(cpu_ms, 1),
            "cpu_median_s": {k: round(statistics.median(v), 3) for k, v in cpu.items()},
            "goal_met": paired_ms < 50}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cold-rounds", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rlcheck-startup-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "test_probe.py").write_text(PROBE)
        warm_env = _env()
        _, out, _ = _pytest(project, warm_env)  # writes the bytecode caches; the entry point must have loaded
        unrelated = _modules(out)
        if "rlcheck.plugin" not in unrelated:
            raise RuntimeError(f"the entry point did not load rlcheck.plugin: {unrelated}")
        _, asked, _ = _pytest(project, warm_env, "--hardware=none", "--progress-s=0")
        warm = _pair(project, args.rounds, lambda i: warm_env)
        cold = _pair(project, args.cold_rounds, lambda i: _env(PYTHONPYCACHEPREFIX=f"{tmp}/pyc-cold-{i}"))
        entry = "import " + ", ".join(m for m in unrelated if m != "rlcheck")
        entry_ms = _importtime_ms(entry, lambda i: warm_env)
        # cold: an empty bytecode cache each run, so rlcheck's modules are compiled as in a cold pytest run
        entry_cold_ms = _importtime_ms(entry, lambda i: _env(PYTHONPYCACHEPREFIX=f"{tmp}/pyc-import-{i}"), runs=9)
        roles_ms = _importtime_ms("import " + ", ".join(ROLES), lambda i: warm_env)
    doc = {"goal": GOAL,
           "warm": warm, "cold": cold,
           "import_ms": {"rlcheck.plugin (what an unrelated run imports)": entry_ms,
                         "the same, cold (empty bytecode cache; median of 9)": entry_cold_ms,
                         "the plugin's roles (what every run imported before they were deferred)": roles_ms},
           "rlcheck_modules": {"unrelated run": unrelated, "unrelated run + --hardware=none": len(_modules(asked))},
           "notes": ["added_ms_paired (the goal's measure) = the median over rounds of (wall time with the plugin - "
                     "wall time without) in the same round, the same command otherwise; added_ms = the difference of "
                     "the two medians (the earlier measure, noisier: a burst on the host in one run moves it); "
                     "added_cpu_ms = the difference of the median CPU time (user + system, the run and its children)",
                     "import_ms: -X importtime, cumulative, median of 5, with pytest imported first (not counted); "
                     "the cold entry compiles rlcheck's modules and pytest's already imported ones do not count: it "
                     "is the part of the cold wall-time difference that rlcheck causes, without the noise of "
                     "pytest's own compilation",
                     "a run that asks for rlcheck (an option of its own, -p rlcheck.plugin, a conftest.py naming "
                     "it, its own tests) loads the roles as before"]}
    path = results_file.write("startup", doc)
    print(json.dumps(doc, indent=2))
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
