"""`rlcheck baseline record`: a cluster's first healthy run becomes its floors (rlcheck.preflight.baseline)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlcheck import option_table
from rlcheck.scan_output import safe

EXIT_OK, EXIT_UNJUDGED = 0, 2


def cmd_baseline(args: argparse.Namespace) -> int:
    from rlcheck import hardware
    from rlcheck.preflight import baseline

    try:
        if args.report is not None:
            doc, profile = baseline.read_report(args.report)
            source, name = str(args.report), args.hardware or profile
            named = hardware.get_profile(name) if name else None
            figures = baseline.figures_from_report(doc, source, named)
        else:
            from rlcheck.probes.node import gpus

            found = gpus.detect()
            figures, source = baseline.figures_measured_here(len(found.gpus)), "measured here (rlcheck baseline record)"
            name = args.hardware or (found.profile.name if found.profile else "")
        if not name:
            raise baseline.BaselineError("which hardware profile is this? the report names none: pass --hardware NAME")
        hardware.get_profile(name)  # an unknown name is refused now, not when the baseline is used
        recorded = baseline.make(name, figures, source, args.fraction)
    except (baseline.BaselineError, KeyError, hardware.ProfileError, ValueError) as exc:
        print(safe(f"rlcheck baseline record: {exc.args[0] if isinstance(exc, KeyError) else exc}"), file=sys.stderr)
        return EXIT_UNJUDGED
    out = args.out or Path(f"rlcheck-baseline-{name}.toml")
    try:
        out.write_text(baseline.render(recorded), encoding="utf-8")
    except OSError as exc:
        print(safe(f"rlcheck baseline record: cannot write {out}: {exc.strerror or exc}"), file=sys.stderr)
        return EXIT_UNJUDGED
    floors = ", ".join(f"{k} = {v:g}" for k, v in recorded.thresholds.items())
    print(safe(f"rlcheck baseline record: wrote {out} ({name}: {floors}); judge later runs by it with "
               f"--baseline={out}"), file=sys.stderr)
    return EXIT_OK


def add_baseline(sub: argparse._SubParsersAction) -> None:
    from rlcheck.preflight.baseline import FRACTION

    p = sub.add_parser("baseline", help="record this cluster's own GEMM and all-reduce floors from a healthy run")
    p.add_argument("action", choices=("record",))
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--report", type=Path, metavar="REPORT_JSON",
                        help="a healthy run's report.json (rlcheck-report/report.json of pytest checks/ on a GPU node)")
    source.add_argument("--measure", action="store_true", help="run the bf16 GEMM and all-reduce measure here instead")
    option_table.add(p, option_table.HARDWARE_OF_BASELINE)
    p.add_argument("--fraction", type=float, default=FRACTION,
                   help=f"floor = fraction x the figure (default: {FRACTION:g})")
    p.add_argument("-o", "--out", type=Path, default=None, metavar="FILE",
                   help="where to write it (default: ./rlcheck-baseline-<hardware>.toml)")
    p.set_defaults(func=cmd_baseline)
