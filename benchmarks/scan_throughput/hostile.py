"""`rlcheck scan` on hostile logs, beside two baselines, in one run: peak RSS and wall time.

Inputs (generated under benchmarks/.work): 400 MB of long lines (2 MiB each, every one a failure),
2 million failure lines (human and --json output), one 1 MB and one 4 MB line made of the failure
signature over and over (linear time: 4x the bytes should take about 4x the time, goal < 1 s).
Baselines: `grep -E -n` with the same patterns, and the scanner before the hardening (a git revision,
run under a time limit: it is quadratic on the long lines). Usage:
python -m benchmarks.scan_throughput.hostile [--baseline-rev REV] [--limit-s 30]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path

from benchmarks import results_file
from benchmarks.scan_throughput.ere import to_ere
from rlcheck import scan
from rlcheck.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "benchmarks" / ".work"
FAILURE = b"KeyError: 'warn'"
GREP_WITH_RSS = (
    "import resource, subprocess, sys\nrc = subprocess.run(sys.argv[1:]).returncode\n"
    "print('VmHWM_KiB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\nsys.exit(rc)\n"
)
WITH_HWM = (
    "import sys\nfrom rlcheck.cli import main\nrc = main(sys.argv[1:])\nsys.stdout.flush()\n"
    "hwm = [x for x in open('/proc/self/status') if x.startswith('VmHWM')][0].split()[1]\n"
    "print('VmHWM_KiB', hwm, file=sys.stderr)\nsys.exit(rc)\n"
)


def generate() -> dict[str, Path]:
    WORK.mkdir(exist_ok=True)
    inputs = {"long_lines_400mb": WORK / "long_lines_400mb.log", "failure_lines_2m": WORK / "failure_lines_2m.log",
              "one_line_1mb": WORK / "one_line_1mb.log", "one_line_4mb": WORK / "one_line_4mb.log"}
    healthy = b"".join(b"[2026-07-01 10:%02d:%02d TP3] Decode batch. #running-req: %d, #token: %d, " % (
        i % 60, i % 60, i, i * 7) for i in range(30000))[: 2 * 2**20 - 64]
    with inputs["long_lines_400mb"].open("wb") as out:
        for _ in range(200):
            out.write(healthy + b" " + FAILURE + b"\n")  # every long line is a finding: the worst case
    inputs["failure_lines_2m"].write_bytes(b"".join(b"%s rank %d\n" % (FAILURE, i % 8) for i in range(2_000_000)))
    for name, size in (("one_line_1mb", 2**20), ("one_line_4mb", 4 * 2**20)):
        inputs[name].write_bytes((FAILURE + b" ") * (size // (len(FAILURE) + 1)) + b"\n")
    return inputs


def baseline_tree(rev: str) -> Path:
    """The rlcheck package as it was at rev, unpacked beside the work files."""
    target = WORK / f"baseline-{rev[:12]}"
    if not target.exists():
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev, "rlcheck"],
                                 capture_output=True, check=True).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(target, filter="data")
    return target


def measure(argv: list[str], limit_s: float, env: dict[str, str] | None = None) -> dict[str, object]:
    """Wall seconds and peak RSS (MiB) of one run, as the run itself reports it on stderr (VmHWM_KiB)."""
    start = time.perf_counter()
    # cwd is the work folder: `python -c` puts the cwd first on sys.path, which would shadow PYTHONPATH
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=WORK)
    try:
        out, err = proc.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        hwm_kib = _vm_hwm_kib(proc.pid)  # the peak so far, read before the kill
        proc.kill()
        proc.communicate()
        return {"seconds": None, "peak_rss_mib": round(hwm_kib / 1024, 1) if hwm_kib else None,
                "note": f"did not finish within {limit_s:.0f} s (killed); peak RSS until then"}
    elapsed = time.perf_counter() - start
    hwm = [int(x.split()[1]) for x in err.decode().splitlines() if x.startswith("VmHWM_KiB")]
    rss = hwm[0] / 1024 if hwm else None
    return {"seconds": round(elapsed, 3), "peak_rss_mib": round(rss, 1) if rss else None, "exit": proc.returncode,
            "stdout_bytes": len(out)}


def _vm_hwm_kib(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM")), 0)


def in_process_s(path: Path, rounds: int = 3) -> float:
    """Median seconds of scan_paths on path inside this process: the matching alone, no start-up."""
    matcher = scan.Matcher()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        scan.scan_paths([str(path)], matcher)
        times.append(time.perf_counter() - start)
    return round(sorted(times)[rounds // 2], 4)


def baseline_argv(argv: list[str]) -> list[str]:
    """argv run by a fresh small Python that reports its child's peak RSS the way rlcheck's run reports its own
    (a child forked straight from this process would count this process's pages in ru_maxrss)."""
    return [sys.executable, "-c", GREP_WITH_RSS, *argv]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline-rev", default="b330fa8", help="git revision of the scanner before the fix")
    parser.add_argument("--limit-s", type=float, default=30.0, help="time limit per run")
    args = parser.parse_args(argv)
    inputs = generate()
    patterns = WORK / "patterns.ere"
    patterns.write_text("\n".join(to_ere(s) for e in load_catalog().values() for s in e.signatures) + "\n")
    old_env = {**os.environ, "PYTHONPATH": str(baseline_tree(args.baseline_rev))}
    new_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    grep = shutil.which("grep") or "grep"
    cases: dict[str, dict[str, object]] = {}
    for name, path in inputs.items():
        variants = [("", [])] + ([("--json", ["--json"])] if name == "failure_lines_2m" else [])
        for suffix, extra in variants:
            scan_argv = [sys.executable, "-c", WITH_HWM, "scan", *extra, str(path)]
            cases[f"{name}{' ' + suffix if suffix else ''}"] = {
                "input_mb": round(path.stat().st_size / 1e6, 1),
                "rlcheck": measure(scan_argv, args.limit_s, new_env),
                "rlcheck before the fix": measure(scan_argv, args.limit_s, old_env),
                "grep -E -n": measure(baseline_argv([grep, "-E", "-n", "-f", str(patterns), str(path)]), args.limit_s),
            }
            print(name, suffix, json.dumps(cases[f"{name}{' ' + suffix if suffix else ''}"]), flush=True)
    one, four = in_process_s(inputs["one_line_1mb"]), in_process_s(inputs["one_line_4mb"])
    empty = WORK / "empty.log"
    empty.write_bytes(b"")
    doc = {"engine": scan.ENGINE, "baseline_rev": args.baseline_rev, "limit_s": args.limit_s, "cases": cases,
           "matching_only_s": {"one_line_1mb": one, "one_line_4mb": four},
           "time_ratio_4mb_over_1mb": round(four / one, 2) if one else None,
           "start_up_s": measure([sys.executable, "-c", WITH_HWM, "scan", str(empty)], args.limit_s, new_env),
           "goal": "peak RSS < 200 MB on long_lines_400mb and failure_lines_2m; one_line_4mb < 1 s and ~4x 1 MB",
           "notes": ["peak RSS of rlcheck is VmHWM after exec; of grep, ru_maxrss of it as the child of a fresh Python",
                     "each rlcheck time includes Python start-up and catalogue load (~0.3 s)"]}
    path = results_file.write("scan_hostile", doc)
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
