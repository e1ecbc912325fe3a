"""Recall and precision of `rlcheck scan`'s matcher per failure family, over the field corpus.

`python -m benchmarks.field_families.run` replays every line of rlcheck/data/field_corpus.toml (real lines users
posted, each with its source) through the scanner's Matcher, exactly as `rlcheck scan` reads a log (a multi-line
row line by line), and writes benchmarks/results/field_families.json:

- per family (the family of the entry a failure line expects, `uncatalogued` for lines no entry knows):
  failure lines, named (any id: never silent), right (the expected entry named), recall = right / lines,
  and the failure lines of other families or healthy lines that named an entry of this family (false claims);
  precision = right / (right + false claims);
- overall: the same over all lines, and healthy lines named (goal 0).
Goal (issue 27): >= 95% of failure lines named with the right family where catalogued, no healthy line named.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Any

from benchmarks import results_file
from rlcheck import catalog, field_corpus
from rlcheck.scan import Matcher


def _ids(matcher: Matcher, text: str) -> set[str]:
    return {i for part in text.splitlines() for i in matcher.match_line(part)}


def measure() -> dict[str, Any]:
    entries = catalog.load_catalog()
    matcher = Matcher(entries)
    lines = field_corpus.load()
    family = {fid: e.family_name for fid, e in entries.items()}
    per: dict[str, dict[str, int]] = defaultdict(lambda: {"lines": 0, "named": 0, "right": 0, "false_claims": 0})
    healthy = claimed = failures = named_any = right_family = 0
    claimed_lines: list[str] = []
    for row in lines:
        ids = _ids(matcher, row.line)
        fams = {family[i] for i in ids}
        if not row.expected:
            healthy += 1
            claimed += bool(ids)
            if ids:
                claimed_lines.append(f"{row.source}: {sorted(ids)}")
            for f in fams:
                per[f]["false_claims"] += 1
            continue
        failures += 1
        want = family[row.expected]
        cell = per[want]
        cell["lines"] += 1
        cell["named"] += bool(ids)
        cell["right"] += want in fams
        named_any += bool(ids)
        right_family += want in fams
        for f in fams - {want}:
            per[f]["false_claims"] += 1
    families = {f: {**c, "recall": round(c["right"] / c["lines"], 4) if c["lines"] else None,
                    "precision": round(c["right"] / (c["right"] + c["false_claims"]), 4)
                    if c["right"] + c["false_claims"] else None} for f, c in sorted(per.items())}
    overall = {"failure_lines": failures, "named": named_any, "right_family": right_family,
               "recall_named": round(named_any / failures, 4), "recall_right_family": round(right_family / failures, 4),
               "healthy_lines": healthy, "healthy_named": claimed,
               "precision": round(right_family / (right_family + claimed + sum(
                   c["false_claims"] for c in per.values()) - claimed), 4) if right_family else None}
    return {"goal": "recall_right_family >= 0.95 and healthy_named == 0 (issue 27)",
            "met": overall["recall_right_family"] >= 0.95 and claimed == 0,
            "corpus": str(field_corpus.CORPUS_FILE.relative_to(field_corpus.CORPUS_FILE.parents[2])),
            "catalogue_entries": len(entries), "overall": overall, "families": families,
            "healthy_lines_named": claimed_lines}


def main() -> int:
    results = measure()
    path = results_file.write("field_families", results)
    o = results["overall"]
    print(f"{path}: {o['failure_lines']} failure lines, {o['right_family']} right family "
          f"({o['recall_right_family']:.1%}), {o['named']} named; "
          f"{o['healthy_lines']} healthy, {o['healthy_named']} named")
    return 0 if results["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
