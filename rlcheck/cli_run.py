"""rlcheck's commands for the places it runs outside a checkout: `rlcheck preflight` (the packaged checks through
pytest), `rlcheck slurm prolog|epilog` (the quick per-node tier, draining the node on FAIL) and `rlcheck history`
(trends over the reports kept with --history)."""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path

from rlcheck import option_table


def cmd_preflight(args: argparse.Namespace) -> int:
    """The checks shipped in the package, through pytest and rlcheck's plugin: the same run as `pytest checks/`
    in a checkout, from any directory of a machine that only has the wheel installed."""
    import pytest

    import rlcheck.checks

    where = str(Path(rlcheck.checks.__file__).parent)
    return int(pytest.main([where, *isolation_args(where), *args.pytest_args]))


def isolation_args(where: str) -> list[str]:
    """The preflight is the package's run, not the folder's: no pytest.ini, tox.ini, setup.cfg, pyproject.toml or
    conftest.py above the installed checks (a home folder's, a project's the venv sits in) changes what it judges.
    -c os.devnull: no ini file is searched for; --rootdir / --confcutdir: node ids and conftest.py files stop at the
    checks' own folder. -p rlcheck.plugin: also when plugin autoloading is off; no:cacheprovider: nothing is written
    beside the installed package. -ra: every skip says why (the arguments after `preflight` come later and win)."""
    return ["-c", os.devnull, f"--rootdir={where}", f"--confcutdir={where}", "-p", "rlcheck.plugin",
            "-p", "no:cacheprovider", "-ra"]


def add_preflight(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("preflight", help="run the preflight checks shipped in the package (pytest + GO / NO-GO)",
                       description="Every argument after `preflight` goes to pytest: --hardware, --recipe, --job, "
                                   "--ray-address, --report-dir, -k, --junitxml, ... (`rlcheck preflight --help`: "
                                   "pytest's help with rlcheck's options)")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, metavar="PYTEST_ARGS")
    p.set_defaults(func=cmd_preflight)


def cmd_slurm(args: argparse.Namespace) -> int:
    """Slurm prolog / epilog: the quick per-node tier (or a recorded report), drain with the reason on FAIL."""
    from rlcheck.preflight import slurm

    try:
        if args.report is not None:
            names = (os.environ.get("SLURMD_NODENAME", ""), socket.gethostname())
            verdicts = slurm.own_verdicts(args.report.read_text(encoding="utf-8"), str(args.report), names)
        else:
            from rlcheck.deploy import levels

            verdicts = levels.judge_here(args.level, args.hardware, args.recipe, args.budget_s)
    except Exception as exc:  # rlcheck itself broken: said in slurmd's log, but never drains the cluster
        print(f"rlcheck slurm {args.phase}: could not judge this node, node stays up: {exc}", file=sys.stderr)
        return 0
    outcome = slurm.act(verdicts, args.phase, os.environ.get("SLURMD_NODENAME"), scontrol=args.scontrol)
    for line in outcome.lines:
        print(line, file=sys.stderr)
    return outcome.exit_code


def add_slurm(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("slurm", help="Slurm prolog / epilog: the quick per-node tier; drains this node on FAIL")
    p.add_argument("phase", choices=("prolog", "epilog"))
    option_table.add(p, option_table.LEVEL, option_table.BUDGET_S, option_table.HARDWARE, option_table.RECIPE)
    p.add_argument("--report", type=Path, metavar="REPORT_JSON",
                   help="act on a recorded report.json (e.g. this node's last preflight) instead of running checks")
    p.add_argument("--scontrol", default="scontrol", metavar="PATH", help="the scontrol to drain with")
    p.set_defaults(func=cmd_slurm)


def cmd_history(args: argparse.Namespace) -> int:
    """`rlcheck history DIR`: per-check, per-node trends over the reports kept with --history DIR."""
    import json

    from rlcheck import history

    if args.last < 1:
        print(f"rlcheck history: --last {args.last}: a whole number >= 1", file=sys.stderr)
        return 2
    try:
        found = history.load(args.dir, check=args.check, node=args.node, last=args.last)
    except history.HistoryError as exc:
        print(f"rlcheck history: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(history.to_json(found), indent=2))
    else:
        sys.stdout.write(history.render_text(found))
    code = 0
    if not found.series:
        wanted = " ".join(f"--{k} {v}" for k, v in (("check", args.check), ("node", args.node)) if v) or "any verdict"
        print(f"rlcheck history: nothing matches {wanted} in {found.runs} readable run(s) of {args.dir}",
              file=sys.stderr)
        code = 2
    if args.png is not None:
        drawn = history.plot(found, args.png)
        print(f"rlcheck history: wrote {drawn}" if drawn else "rlcheck history: no PNG: no verdict has a measured "
              "figure (TFLOP/s, GB/s), or matplotlib is not installed", file=sys.stderr)
        code = code if drawn else 2
    for error in found.errors:  # named, never skipped in silence: a garbled report makes the trend unjudged
        print(f"rlcheck history: unreadable report {error}", file=sys.stderr)
    return 2 if found.errors else code


def add_history(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("history", help="per-check and per-node trends over the reports kept with --history DIR")
    p.add_argument("dir", type=Path, metavar="DIR", help="the --history folder")
    p.add_argument("--check", metavar="ID", help="only this check id (e.g. gpu_bf16_gemm)")
    p.add_argument("--node", metavar="NODE", help="only this node's verdicts")
    p.add_argument("--last", type=int, default=5, metavar="N",
                   help="compare each figure with the median of the last N good (PASS) runs before it (default: 5)")
    p.add_argument("--png", type=Path, metavar="FILE", help="also draw the measured figures over the runs")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_history)
