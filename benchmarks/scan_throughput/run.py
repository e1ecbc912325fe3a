"""rlcheck's scanner against `grep -E` and ripgrep with the same patterns, on the same generated log, in one run.

End to end, as a user waits: each tool is a fresh process (start-up, the catalogue, the scan, printing every
matching line into a pipe read to the end). Two inputs: the generated log (1 GiB by default, the catalogue's
examples planted in it) and a one-line file (start-up alone). rlcheck runs warm (its compiled catalogue in the
cache directory, as every scan after the first) and, for the one-line file, also cold (an empty cache directory:
the first scan after an install or a catalogue change validates and compiles it). Reports the median of rounds
(page cache warm), the ratios, rlcheck's peak RSS, and checks that every tool finds the same lines.

Usage: python -m benchmarks.scan_throughput.run [--size-mb N] [--rounds N]
ripgrep: `rg` on PATH or beside this Python (pip install --only-binary :all: ripgrep); without it the file says so.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import results_file
from benchmarks.scan_throughput.ere import to_ere
from benchmarks.scan_throughput.generate import generate
from rlcheck import scan
from rlcheck.catalog import load_catalog

WORK = Path(__file__).resolve().parents[1] / ".work"
# ru_maxrss of a child counts the forked parent's pages before exec; VmHWM after exec does not.
RLCHECK_WITH_HWM = (
    "import sys\nfrom rlcheck.cli import main\nrc = main(sys.argv[1:])\nsys.stdout.flush()\n"
    "hwm = [x for x in open('/proc/self/status') if x.startswith('VmHWM')][0].split()[1]\n"
    "print('VmHWM_KiB', hwm, file=sys.stderr)\nsys.exit(rc)\n"
)
GOALS = {"log": "rlcheck >= 1.0 x ripgrep end to end on a 1 GiB log with the whole catalogue (and >= 1.0 x grep -E); "
                "rlcheck peak RSS < 200 MB",
         "one_line": "rlcheck scan of a one-line file < 0.3 s (warm: the compiled catalogue in the cache)"}


CPU: dict[str, list[float]] = {}
"""CPU seconds (user + sys) of each run, by argv[0] and input: on a loaded host the wall time waits for a core,
the CPU time much less."""


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS (KiB) and stdout of one run of argv (its CPU seconds go to CPU)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, timeout=900, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(f"{argv[0]} {argv[-1]}", []).append(after.ru_utime + after.ru_stime - before.ru_utime
                                                        - before.ru_stime)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{argv[0]} failed with exit code {done.returncode}: {done.stderr[-500:]!r}")
    hwm = [int(x.split()[1]) for x in done.stderr.decode().splitlines() if x.startswith("VmHWM_KiB")]
    return elapsed, hwm[0] if hwm else 0, done.stdout


def prepare(size_mb: int) -> tuple[Path, Path, Path, list[str]]:
    WORK.mkdir(exist_ok=True)
    log, patterns, one = WORK / f"scan_{size_mb}mb.log", WORK / "patterns.ere", WORK / "one_line.log"
    planted = generate(log, size_mb, seed=0, failures_every_mb=37)
    sigs = [s for e in load_catalog().values() for s in e.signatures]
    patterns.write_text("\n".join(to_ere(s) for s in sigs) + "\n")
    one.write_text("[2026-07-01 10:00:00] INFO rollout.py:12: collected 64 samples\n")
    return log, patterns, one, planted


def ripgrep() -> str | None:
    """rg on PATH, else beside this Python (the pip wheel installs it into the venv's bin)."""
    found = shutil.which("rg")
    beside = Path(sys.executable).parent / "rg"
    return found or (str(beside) if beside.is_file() else None)


def lines_of(name: str, out: bytes) -> set[int]:
    if name.startswith("rlcheck"):
        return {f["line_no"] for f in json.loads(out)["findings"]}
    return {int(line.split(b":", 1)[0]) for line in out.splitlines()}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # a user's Python keeps .pyc
    return {**env, **extra}


def commands(log: Path, patterns: Path, cache: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    grep = shutil.which("grep") or "grep"
    cmds = {
        "rlcheck": ([sys.executable, "-c", RLCHECK_WITH_HWM, "scan", "--json", str(log)],
                    _env(RLCHECK_CACHE_DIR=str(cache))),
        "grep -E": ([grep, "-E", "-n", "-f", str(patterns), str(log)], _env()),
        "grep -E (LC_ALL=C)": ([grep, "-E", "-n", "-f", str(patterns), str(log)], _env(LC_ALL="C")),
    }
    rg = ripgrep()
    if rg is not None:  # --no-config: no RIPGREP_CONFIG_PATH; -n: line numbers, like the others
        cmds["ripgrep"] = ([rg, "--no-config", "-n", "-f", str(patterns), str(log)], _env())
    return cmds


Runs = dict[str, list[tuple[float, int, bytes]]]


def measure(cmds: dict[str, tuple[list[str], dict[str, str]]], rounds: int) -> tuple[Runs, dict[str, list[float]]]:
    runs: Runs = {name: [] for name in cmds}
    cpu: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(rounds):
        for name, (cmd, env) in cmds.items():  # interleaved: a load change hits every tool alike
            runs[name].append(timed(cmd, env))
            cpu[name].append(CPU[f"{cmd[0]} {cmd[-1]}"][-1])
    return runs, cpu


def summary(runs: Runs, size_mb: float | None, cpu: dict[str, list[float]]) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for name, rs in runs.items():
        median = statistics.median(r[0] for r in rs)
        row: dict[str, object] = {"median_s": round(median, 3), "all_s": [round(r[0], 3) for r in rs]}
        if cpu.get(name):
            row["cpu_median_s"] = round(statistics.median(cpu[name]), 3)
        if size_mb is not None:
            row["mb_per_s"] = round(size_mb / median, 1)
        if name.startswith("rlcheck"):
            row["peak_rss_mib"] = round(max(r[1] for r in rs) / 1024, 1)
        out[name] = row
    return out


def ratio(result: dict[str, dict[str, object]], other: str) -> float | None:
    if other not in result:
        return None
    return round(float(result[other]["median_s"]) / float(result["rlcheck"]["median_s"]), 2)  # type: ignore[arg-type]


def cpu_ratio(result: dict[str, dict[str, object]], other: str) -> float | None:
    if other not in result or not result["rlcheck"].get("cpu_median_s"):
        return None
    return round(float(result[other]["cpu_median_s"]) / float(result["rlcheck"]["cpu_median_s"]), 2)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    log, patterns, one, planted = prepare(args.size_mb)
    size_mb = log.stat().st_size / 1e6
    with tempfile.TemporaryDirectory(prefix="rlcheck-bench-cache-") as tmp:
        cache = Path(tmp) / "warm"
        timed(commands(one, patterns, cache)["rlcheck"][0], _env(RLCHECK_CACHE_DIR=str(cache)))  # fills the cache
        timed(["cat", str(log)])  # warm the page cache for everyone
        big, big_cpu = measure(commands(log, patterns, cache), args.rounds)
        small_cmds = commands(one, patterns, cache)
        cold_cmd, _ = small_cmds["rlcheck"]
        small, small_cpu = measure(small_cmds, max(args.rounds, 5))
        small["rlcheck (cold cache)"], small_cpu["rlcheck (cold cache)"] = [], []
        for i in range(3):
            small["rlcheck (cold cache)"].append(timed(cold_cmd, _env(RLCHECK_CACHE_DIR=f"{tmp}/cold{i}")))
            small_cpu["rlcheck (cold cache)"].append(CPU[f"{cold_cmd[0]} {cold_cmd[-1]}"][-1])
    found = {name: lines_of(name, rs[0][2]) for name, rs in big.items()}
    same = all(lines == found["rlcheck"] for lines in found.values())
    result, one_line = summary(big, size_mb, big_cpu), summary(small, None, small_cpu)
    rg_version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.splitlines()[0] \
        if (rg := ripgrep()) else None
    doc = {"log_mb": round(size_mb, 1), "rounds": args.rounds, "engine": scan.ENGINE,
           "patterns": sum(len(e.signatures) for e in load_catalog().values()), "planted": len(planted),
           "same_lines_found": same, "lines_found": {name: len(lines) for name, lines in found.items()},
           "ripgrep": rg_version or "not installed: no rg on PATH or beside this Python (pip install --only-binary "
                                    ":all: ripgrep); the ripgrep ratio is missing, not met",
           "runs": result,
           "speedup_vs_ripgrep": ratio(result, "ripgrep"),
           "speedup_vs_grep": ratio(result, "grep -E"),
           "speedup_vs_grep_lc_all_c": ratio(result, "grep -E (LC_ALL=C)"),
           "cpu_speedup_vs_ripgrep": cpu_ratio(result, "ripgrep"),
           "cpu_speedup_vs_grep": cpu_ratio(result, "grep -E"),
           "one_line_file": one_line,
           "goals": GOALS,
           "goals_met": {"log_vs_ripgrep": (ratio(result, "ripgrep") or 0) >= 1.0,
                         "log_vs_grep": (ratio(result, "grep -E") or 0) >= 1.0,
                         "peak_rss": float(result["rlcheck"]["peak_rss_mib"]) < 200,  # type: ignore[arg-type]
                         "one_line": float(one_line["rlcheck"]["median_s"]) < 0.3},  # type: ignore[arg-type]
           "notes": ["speedup = the other tool's median wall time / rlcheck's (>= 1.0: rlcheck is as fast or faster)",
                     "every tool prints every matching line into a pipe that is read to the end: GNU grep stops at "
                     "the first match when its stdout is /dev/null, which would not be a scan",
                     "grep and ripgrep read the same patterns file (the catalogue's signatures in POSIX ERE, "
                     "benchmarks/scan_throughput/ere.py); rlcheck reads the catalogue itself",
                     "peak RSS is VmHWM of the rlcheck process after exec (ru_maxrss would count the forked parent)",
                     "rlcheck runs with the Python bytecode cache allowed, as an installed package does",
                     "cpu_median_s: user + sys CPU seconds of the process (on a loaded host the wall time also "
                     "waits for a core; the goals are on wall time)"]}
    path = results_file.write("scan_throughput", doc)
    print(json.dumps(doc, indent=2))
    print(f"written: {path}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
