"""Reproducer semantics against the catalogue's affected range: both surprises FAIL and say which."""

from __future__ import annotations

import pytest

from rlcheck.repro.reproduce import Reproduction, judge
from rlcheck.verdict import Status

CASES = [
    ({"uvicorn": "0.54.0"}, True, True, Status.PASS, "present in this environment; fix verified"),
    ({"uvicorn": "0.54.0"}, False, True, Status.FAIL, "catalogue says affected but it did not reproduce"),
    ({"uvicorn": "0.10.0"}, True, True, Status.FAIL, "reproduces outside the affected range"),
    ({"uvicorn": "0.10.0"}, False, True, Status.PASS, "fixed upstream; fix verified"),
    ({"uvicorn": "0.54.0"}, True, False, Status.FAIL, "the recommended fix did not work"),
]


@pytest.mark.parametrize(("versions", "reproduced", "fixed", "status", "fragment"), CASES)
def test_reproduce_judged_against_affected_range(versions, reproduced, fixed, status, fragment):
    verdict, state = judge(Reproduction(failure_id="uvicorn-log-level", versions=versions, reproduced=reproduced,
                                        fix_verified=fixed, evidence="e"))
    assert verdict.status is status and fragment in verdict.summary
    assert state["state"]


def test_reproduce_unversioned_failure_must_reproduce():
    verdict, _ = judge(Reproduction(failure_id="sglang-health-hang", versions={}, reproduced=False,
                                    fix_verified=True, evidence="e"))
    assert verdict.status is Status.FAIL and "did not reproduce" in verdict.summary
