"""Wall time of the main job, `pytest checks/ reproducers/`, on this machine, against the baseline of a cold import of
the stack (`import torch, ray, megatron.core, sglang.srt.server_args`) in the same run.

Variants (each a fresh interpreter in a loopback-only network namespace, as CI runs, Ray start included):
  cold                     a first run on this image: an empty reproducer cache (RLCHECK_CACHE_DIR a new folder)
  second run, same image   right after `cold`, with the folder it filled: kept reproducer verdicts are reused
  cold, xdist -n auto      a first run spread over the cores
Goals: cold at most 5x the stack import; a second run on the same image at most 1x. Every run also records the
longest silence on its terminal (no output for that long; goal: none over 10 s) and when its first byte came.
Usage: python -m benchmarks.preflight_time.run [--rounds N] [--variant NAME ...]
"""

from __future__ import annotations

import argparse
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import results_file
from rlcheck.process import subproc

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = {"cold": [], "second run, same image": [], "cold, xdist -n auto": ["-n", "auto"]}
REUSES = {"second run, same image": "cold"}
"""A variant that runs on the cache folder another variant of the same round filled."""
GOALS = {"cold": 5.0, "second run, same image": 1.0, "cold, xdist -n auto": 5.0}
SILENCE_GOAL_S = 10.0
STACK_IMPORT = "import torch, ray, megatron.core, sglang.srt.server_args"


def command(extra: list[str], report_dir: str) -> list[str]:
    pytest = [sys.executable, "-m", "pytest", "checks/", "reproducers/", "--hardware=auto", "-q",
              "-p", "no:cacheprovider", f"--report-dir={report_dir}", *extra]
    if shutil.which("unshare") and subproc.run(["unshare", "-n", "true"], timeout_s=10).returncode == 0:
        return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *pytest]
    return pytest


CPUACCT = Path("/sys/fs/cgroup/cpuacct")
"""cgroup v1's CPU accounting: a group's cpuacct.usage counts every process that ever ran in it."""


def cpu_group(root: Path = CPUACCT) -> Path | None:
    """A fresh accounting group for one run, or None where none can be made (no cgroup v1 cpuacct, not root)."""
    try:
        group = Path(tempfile.mkdtemp(prefix="rlcheck-bench-", dir=root))
    except OSError:
        return None
    if not (group / "cgroup.procs").exists():
        group.rmdir()
        return None
    return group


def group_cpu_s(group: Path | None) -> float | None:
    """CPU seconds of every process that ran in the group (then the group is removed); None: not measured."""
    if group is None:
        return None
    try:
        return int((group / "cpuacct.usage").read_text()) / 1e9
    except (OSError, ValueError):
        return None
    finally:
        try:
            group.rmdir()
        except OSError:  # a process of the run still lives in it: left for the machine's own clean-up
            pass


def watched(argv: list[str], env: dict[str, str],
            timeout_s: float) -> tuple[int | None, str, float, float, float, float, float | None]:
    """Run argv, reading its terminal output as it comes: (exit, output, wall s, first output s, longest silence s,
    CPU s: user + system of the run and every descendant it waited for, CPU s of every process it started, Ray's
    daemons included: None where no accounting group could be made)."""
    group = cpu_group()

    def join() -> None:  # in the child, before it runs argv: it and all it starts count in the group
        assert group is not None
        (group / "cgroup.procs").write_text(str(os.getpid()))

    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=str(ROOT),
                            start_new_session=True, preexec_fn=None if group is None else join)
    assert proc.stdout is not None
    chunks, last, first, longest = [], start, None, 0.0
    fd = proc.stdout.fileno()
    while True:
        if time.perf_counter() - start > timeout_s:
            subproc.kill_group(proc)  # type: ignore[arg-type]
            break
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        data = os.read(fd, 65536)
        now = time.perf_counter()
        if not data:
            break
        chunks.append(data)
        longest, last = max(longest, now - last), now
        first = now - start if first is None else first
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    end = time.perf_counter()
    longest = max(longest, end - last)
    cpu_s = usage.ru_utime + usage.ru_stime
    time.sleep(1.0)  # what the run left to end on its own (Ray's daemons after their head) ends in the group
    return (code, b"".join(chunks).decode("utf-8", "replace"), end - start, first or 0.0, longest, cpu_s,
            group_cpu_s(group))


def one_run(extra: list[str], cache_dir: str) -> dict[str, object]:
    env = os.environ | {"RLCHECK_CACHE_DIR": cache_dir}
    with tempfile.TemporaryDirectory() as report_dir:
        code, out, wall_s, first_s, silence_s, cpu_s, cpu_all_s = watched(command(extra, report_dir), env,
                                                                          timeout_s=1800)
    lines = out.splitlines()
    summary = next((x for x in reversed(lines) if re.search(r"\d+ (passed|failed)", x)), "")
    decision = next((x for x in lines if x.startswith(("rlcheck GO", "rlcheck NO-GO"))), "")
    kept = next((x for x in lines if x.startswith("cache: ")), "")
    return {"wall_s": round(wall_s, 1), "cpu_s": round(cpu_s, 1),
            "cpu_all_s": None if cpu_all_s is None else round(cpu_all_s, 1), "exit": code,
            "pytest": summary.strip("= "), "decision": decision, "cache": kept, "first_output_s": round(first_s, 1),
            "longest_silence_s": round(silence_s, 1)}


def stack_import_s() -> float:
    """The baseline: one cold interpreter importing the stack the reproducers exercise."""
    start = time.perf_counter()
    done = subproc.run([sys.executable, "-c", STACK_IMPORT], timeout_s=600, cwd=str(ROOT))
    if done.returncode != 0:
        raise SystemExit(f"the stack import failed ({done.why()}): {done.tail(5)}")
    return round(time.perf_counter() - start, 1)


def one_round(variants: dict[str, list[str]], runs: dict[str, list[dict[str, object]]], imports: list[float]) -> None:
    with tempfile.TemporaryDirectory(prefix="rlcheck-bench-cache-") as folder:
        caches: dict[str, str] = {}
        imports.append(stack_import_s())
        for name, extra in variants.items():
            caches[name] = caches.get(REUSES.get(name, ""), "") or str(Path(folder) / name.replace(" ", "_"))
            runs[name].append(one_run(extra, caches[name]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--variant", choices=sorted(VARIANTS), action="append",
                        help="measure only these variants (default: all; the second run needs cold before it)")
    args = parser.parse_args(argv)
    variants = {name: VARIANTS[name] for name in VARIANTS if name in (args.variant or VARIANTS)}
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in variants}
    imports: list[float] = []
    load = os.getloadavg()[0]
    for _ in range(args.rounds):
        one_round(variants, runs, imports)
    medians = {name: statistics.median(float(str(r["wall_s"])) for r in rs) for name, rs in runs.items()}
    silences = {name: max(float(str(r["longest_silence_s"])) for r in rs) for name, rs in runs.items()}
    baseline = statistics.median(imports)
    cpus = os.cpu_count() or 1
    cpu = {name: statistics.median(float(str(r["cpu_s"])) for r in rs) for name, rs in runs.items()}
    # every process's CPU where the accounting group measured each run, else what wait4 saw
    cpu_all = {name: statistics.median(float(str(r["cpu_all_s"])) for r in rs)
               for name, rs in runs.items() if all(r["cpu_all_s"] is not None for r in rs)}
    floor_cpu = {name: cpu_all.get(name, value) for name, value in cpu.items()}
    doc = {"runs": runs, "median_wall_s": medians, "median_cpu_s": cpu, "median_cpu_all_s": cpu_all,
           # the shortest wall time this much CPU work allows on this machine's cores, against the same baseline
           "cpu_floor_ratio_to_baseline": {name: round(value / cpus / baseline, 2)
                                           for name, value in floor_cpu.items()},
           "baseline": {"what": f"cold `{STACK_IMPORT}` in one interpreter", "runs_s": imports,
                        "median_s": baseline},
           "ratio_to_baseline": {name: round(value / baseline, 2) for name, value in medians.items()},
           "goal": {name: f"at most {GOALS[name]:g}x the cold stack import" for name in medians},
           "goal_met": {name: value <= GOALS[name] * baseline for name, value in medians.items()},
           "longest_silence_s": silences,
           "silence_goal": f"no silence over {SILENCE_GOAL_S:g} s on the terminal",
           "silence_goal_met": {name: value <= SILENCE_GOAL_S for name, value in silences.items()},
           "load_average_1m_before": round(load, 2),
           "load_average_1m_after": round(os.getloadavg()[0], 2),
           "notes": ["cold: an empty reproducer cache; second run: the cache folder the cold run of the same round "
                     "filled (rlcheck.repro.cache: kept verdicts of this image stand in for the reproducers)",
                     "the reproducers run the real SGLang, Megatron and uvicorn in child processes: Megatron and "
                     "SGLang children are forked from one warm interpreter per package set "
                     "(rlcheck.process.warm), and so are the numpy-2 side directory's (one warm numpy 2 + torch); "
                     "children that hide a package or must reach CUDA start cold; independent children of one "
                     "reproducer run concurrently, and every reproducer's runs start together once the warm "
                     "interpreters have imported, cold children at most one per core at a time "
                     "(rlcheck.repro.ahead); with -n auto each xdist worker starts its own Ray and warm "
                     "interpreters on first use",
                     "the progress lines come from a writer process of their own (rlcheck.plugin.heartbeat), which "
                     "needs no GIL of pytest's; longest_silence_s counts up to the process's exit, after the summary",
                     "cpu_s: user + system time of the run and of every process it waited for (the reproducers' "
                     "children, the warm interpreters, the embedded Ray holders), from wait4; cpu_all_s: every "
                     "process the run started, Ray's daemons and job workers included (they are not waited for, so "
                     "wait4 misses them), from a cgroup v1 cpuacct group the run starts in (null where none could be "
                     "made); cpu_floor_ratio_to_baseline = cpu_all_s (else cpu_s) / this machine's cores / the stack "
                     "import: no schedule of the same work on these cores ends sooner",
                     "the machine is shared with other sessions: compare the main job with the stack import of "
                     "the same run (ratio_to_baseline), not across runs"]}
    path = results_file.write("preflight_time", doc)
    print(f"{medians} (stack import {baseline} s; longest silences {silences}) -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
