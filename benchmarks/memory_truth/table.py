"""The markdown table of docs/memory-checks.md's H200 section, from benchmarks/results/memory_truth_h200.json.

    python -m benchmarks.memory_truth.table [--recorded] [RESULT.json]

The measurements are the recorded ones; the estimate is recomputed from each run's argv by today's arithmetic
(configs.estimate), unless --recorded asks for the estimate the benchmark wrote beside them when it ran.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parents[1] / "results" / "memory_truth_h200.json"
HEADER = ("| run | rlcheck GiB: static + activations = allocated | measured peak allocated | error | measured "
          "static + activations | rlcheck total (+ context) | device used (total - free) | max reserved |")


def rows(doc: dict[str, Any], *, recorded: bool = False) -> list[str]:
    from benchmarks.memory_truth import configs
    from benchmarks.memory_truth.run import compare

    out = [HEADER, "| " + " | ".join(["---"] * 8) + " |"]
    for run in doc["runs"]:
        c = run.get("comparison")
        if c and not recorded:
            c = compare(run["measured"], configs.estimate(configs.by_name(run["name"])))
        if not c:
            out.append(f"| {run['name']} | not run: {run.get('not_run') or run['measured'].get('error')} |"
                       + " |" * 6)
            continue
        e, m = c["estimate"], c["measured"]
        out.append(f"| {run['name']} | {e['static_gib']:.2f} + {e['activations_gib']:.2f} = {e['allocated_gib']:.2f} "
                   f"| {m['peak_allocated_gib']:.2f} | {c['error_pct']['allocated']:+.1f}% "
                   f"| {m['static_gib']:.2f} + {m['activations_gib']:.2f} | {e['total_gib']:.2f} "
                   f"| {m['device_used_gib']:.2f} | {m['max_reserved_gib']:.2f} |")
    return out


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--recorded"]
    path = Path(args[0]) if args else DEFAULT
    print("\n".join(rows(json.loads(path.read_text(encoding="utf-8")), recorded="--recorded" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
