"""The verdict contract of record_verdict, status by status: a blocking status fails the test, SKIP skips it,
PASS and WARN pass it. A reproducer whose side directory is missing records UNKNOWN, so it must fail."""

from __future__ import annotations

import pytest

RECORD = """
from rlcheck.verdict import Status, Verdict
def test_repro_x(record_verdict):
    record_verdict({verdicts})
"""


def _verdict(status: str, summary: str = "s") -> str:
    return f"Verdict(status=Status.{status}, summary={summary!r})"


@pytest.mark.parametrize(("statuses", "outcome"), [
    (["UNKNOWN"], "failed"), (["FAIL"], "failed"), (["PASS"], "passed"), (["WARN"], "passed"),
    (["SKIP"], "skipped"), (["SKIP", "PASS"], "passed"), (["PASS", "UNKNOWN"], "failed"), (["SKIP", "FAIL"], "failed"),
], ids=["unknown", "fail", "pass", "warn", "skip", "skip+pass", "pass+unknown", "skip+fail"])
def test_plugin_contract_status_decides_outcome(pytester: pytest.Pytester, statuses, outcome):
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.mkdir("reproducers")
    body = RECORD.format(verdicts=", ".join(_verdict(s, f"{s.lower()} said") for s in statuses))
    pytester.makepyfile(**{"reproducers/test_repro_x": body})
    result = pytester.runpytest("--hardware=none", "-rs")
    result.assert_outcomes(**{outcome: 1})
    if outcome == "failed":
        bad = next(s for s in statuses if s in ("UNKNOWN", "FAIL"))
        result.stdout.fnmatch_lines([f"*{bad} repro_x: {bad.lower()} said*"])
