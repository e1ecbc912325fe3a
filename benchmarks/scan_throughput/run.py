"""rlcheck's scanner against `grep -E` with the same patterns, on the same generated log, in one run.

Reports MB/s of both (median of rounds, page cache warm), the ratio, rlcheck's peak RSS, and
checks that both find the same lines. Usage: python -m benchmarks.scan_throughput.run [--size-mb N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
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
    "import sys\nfrom rlcheck.cli import main\nrc = main(sys.argv[1:])\n"
    "hwm = [x for x in open('/proc/self/status') if x.startswith('VmHWM')][0].split()[1]\n"
    "print('VmHWM_KiB', hwm, file=sys.stderr)\nsys.exit(rc)\n"
)


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS (KiB) and stdout of one run of argv."""
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, timeout=600, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{argv[0]} failed with exit code {done.returncode}: {done.stderr[-500:]!r}")
    hwm = [int(x.split()[1]) for x in done.stderr.decode().splitlines() if x.startswith("VmHWM_KiB")]
    return elapsed, hwm[0] if hwm else 0, done.stdout


def prepare(size_mb: int) -> tuple[Path, Path, list[str]]:
    WORK.mkdir(exist_ok=True)
    log, patterns = WORK / f"scan_{size_mb}mb.log", WORK / "patterns.ere"
    planted = generate(log, size_mb, seed=0, failures_every_mb=37)
    sigs = [s for e in load_catalog().values() for s in e.signatures]
    patterns.write_text("\n".join(to_ere(s) for s in sigs) + "\n")
    return log, patterns, planted


def same_lines(rlcheck_json: bytes, grep_n: bytes) -> tuple[bool, int, int]:
    ours = {f["line_no"] for f in json.loads(rlcheck_json)["findings"]}
    theirs = {int(line.split(b":", 1)[0]) for line in grep_n.splitlines()}
    return ours == theirs, len(ours), len(theirs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    log, patterns, planted = prepare(args.size_mb)
    size_mb = log.stat().st_size / 1e6
    grep = shutil.which("grep") or "grep"
    commands = {
        "rlcheck": ([sys.executable, "-c", RLCHECK_WITH_HWM, "scan", "--json", str(log)], None),
        "grep -E": ([grep, "-E", "-n", "-f", str(patterns), str(log)], None),
        "grep -E (LC_ALL=C)": ([grep, "-E", "-n", "-f", str(patterns), str(log)], {**os.environ, "LC_ALL": "C"}),
    }
    timed(["cat", str(log)])  # warm the page cache for everyone
    runs: dict[str, list[tuple[float, int, bytes]]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, (cmd, env) in commands.items():
            runs[name].append(timed(cmd, env))
    ok, ours, theirs = same_lines(runs["rlcheck"][0][2], runs["grep -E"][0][2])
    result = {name: {"median_s": round(statistics.median(r[0] for r in rs), 3),
                     "mb_per_s": round(size_mb / statistics.median(r[0] for r in rs), 1),
                     "peak_rss_mib": round(max(r[1] for r in rs) / 1024, 1) if name == "rlcheck" else None}
              for name, rs in runs.items()}
    doc = {"log_mb": round(size_mb, 1), "rounds": args.rounds, "engine": scan.ENGINE,
           "patterns": sum(len(e.signatures) for e in load_catalog().values()), "planted": len(planted),
           "same_lines_found": ok, "lines_found": {"rlcheck": ours, "grep -E": theirs}, "runs": result,
           "ratio_vs_grep": round(result["rlcheck"]["mb_per_s"] / result["grep -E"]["mb_per_s"], 2),
           "ratio_vs_grep_lc_all_c": round(result["rlcheck"]["mb_per_s"] / result["grep -E (LC_ALL=C)"]["mb_per_s"], 2),
           "goal": "rlcheck >= 0.5 x grep -E MB/s; rlcheck peak RSS < 200 MB",
           "notes": ["both print every matching line into a pipe that is read to the end: GNU grep stops at the "
                     "first match when its stdout is /dev/null, which would not be a scan",
                     "peak RSS is VmHWM of the rlcheck process after exec (ru_maxrss would count the forked parent)"]}
    path = results_file.write("scan_throughput", doc)
    print(json.dumps(doc, indent=2))
    print(f"written: {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
