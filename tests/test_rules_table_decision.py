"""The GO / NO-GO decision as a rule table: a SKIP is never passed, nothing judged is never GO, and every status on
both sides of each rule (pure: rlcheck.report.decide and exit_status)."""

from __future__ import annotations

import pytest

from rlcheck import report
from rlcheck.verdict import Status, Verdict

P, W, F, S, U = Status.PASS, Status.WARN, Status.FAIL, Status.SKIP, Status.UNKNOWN


def _rows(*statuses: Status, kind: str = "check") -> list[report.Recorded]:
    return [report.Recorded(verdict=Verdict(check_id=f"image_c{i}", status=s, summary="s",
                                            node="gpu-a01" if s is F else None), kind=kind, test_id=f"t{i}")
            for i, s in enumerate(statuses)]


# statuses of the blocking checks, go, exit status, the decision line's start
RULES = [
    ((P,), True, 0, "GO: 1 blocking check(s) judged and passed for recipe r on hardware h200"),
    ((P, W), True, 0, "GO: 2 blocking check(s) judged and passed for"),
    ((P, S), True, 0, "GO: 1 blocking check(s) judged and passed; 1 not applicable (SKIP) for"),
    ((W, S, S), True, 0, "GO: 1 blocking check(s) judged and passed; 2 not applicable (SKIP) for"),
    ((S,), False, 2,
     "NO-GO: nothing judged: all 1 blocking check(s) for recipe r on hardware h200 were not applicable"),
    ((S, S, S), False, 2, "NO-GO: nothing judged: all 3 blocking check(s)"),
    ((F, S), False, 1, "NO-GO: 1 of 1 judged blocking check(s); 1 not applicable (SKIP) for recipe r on hardware "
                       "h200: image_c0 [gpu-a01] FAIL"),
    ((P, F), False, 1, "NO-GO: 1 of 2 judged blocking check(s) for"),
    ((P, U), False, 2, "NO-GO: 1 of 2 judged blocking check(s) for recipe r on hardware h200: image_c1 UNKNOWN"),
    ((F, U, S), False, 2, "NO-GO: 2 of 2 judged blocking check(s); 1 not applicable (SKIP)"),
]


@pytest.mark.parametrize(("statuses", "go", "code", "line"), RULES,
                         ids=["-".join(s.value for s in r[0]) for r in RULES])
def test_decision_rule(statuses, go, code, line):
    rows = _rows(*statuses)
    decision = report.decide(rows, "r", "h200")
    assert (decision.go, decision.judged) == (go, True)
    assert decision.line.startswith(line), decision.line
    assert report.exit_status(rows) == code


@pytest.mark.parametrize("kind", ["reproducer", "case", "test"])
def test_decision_without_blocking_checks_decides_nothing(kind):
    rows = _rows(F, S, kind=kind)
    decision = report.decide(rows, "r", "none")
    assert (decision.go, decision.judged) == (False, False) and decision.line.startswith("no GO / NO-GO")
    assert report.exit_status(rows) == report.EXIT_GO


def test_decision_counts_only_blocking_rows():
    """A reproducer's PASS does not make a run of skipped checks judged."""
    rows = [*_rows(S), *_rows(P, kind="reproducer")]
    assert report.decide(rows, "r", "h200").line.startswith("NO-GO: nothing judged")
    assert report.exit_status(rows) == report.EXIT_UNJUDGED
