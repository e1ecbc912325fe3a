"""Whole-verdict tables kept as recordings: each row's status, summary, details, node, failure id and remedy.

A rule table by summary fragment shows the rule; this pins every word the user reads, so a changed wording,
a lost detail or a remedy from the wrong catalogue entry turns a row red. The expected verdicts live in
tests/data/golden/<table>.json beside the rows that produce them. After a deliberate change of a judge, rewrite
them with `RLCHECK_GOLDEN_WRITE=1 .venv/bin/python -m pytest tests/test_rules_table_<module>.py` and read the diff.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from rlcheck.verdict import Verdict

GOLDEN = Path(__file__).parent / "data" / "golden"


def as_dict(verdict: Verdict) -> dict[str, object]:
    return {k: (v.value if k == "status" else v) for k, v in dataclasses.asdict(verdict).items()}


def check(table: str, row: str, verdict: Verdict) -> None:
    """Compare one row with tests/data/golden/<table>.json (or record it there under RLCHECK_GOLDEN_WRITE=1)."""
    path = GOLDEN / f"{table}.json"
    recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    if os.environ.get("RLCHECK_GOLDEN_WRITE") == "1":
        recorded[row] = as_dict(verdict)
        path.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n", encoding="utf-8")
        return
    assert row in recorded, f"row {row} has no recorded verdict in {path}: record it with RLCHECK_GOLDEN_WRITE=1"
    assert as_dict(verdict) == recorded[row], f"{table}[{row}]"
