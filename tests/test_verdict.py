"""The Verdict type: validation, rendering and its JSON round trip."""

from __future__ import annotations

import pytest

from rlcheck.verdict import Status, Verdict


def test_verdict_render_names_failure_fix_and_evidence():
    v = Verdict(check_id="image_numpy_major", status=Status.FAIL, summary="numpy 2.2.6; expected <2",
                details="numpy 2.2.6\nmegatron-core 0.19.2", node="node-3", failure_id="numpy2-megatron",
                remedy="pin numpy<2")
    assert v.render().splitlines() == [
        "FAIL image_numpy_major [node-3]: numpy 2.2.6; expected <2", "  known failure: numpy2-megatron",
        "  fix: pin numpy<2", "  | numpy 2.2.6", "  | megatron-core 0.19.2"]


def test_verdict_round_trip():
    v = Verdict(check_id="x", status=Status.UNKNOWN, summary="could not run", node=None)
    assert Verdict.from_dict(v.to_dict()) == v


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"status": "PASS"}, "status='PASS': one of PASS, WARN, FAIL, SKIP, UNKNOWN"),
    ({"summary": "two\nlines"}, "must be one line"),
])
def test_verdict_refuses_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Verdict(**{"check_id": "x", "status": Status.PASS, "summary": "s", **kwargs})


def test_verdict_from_dict_refuses_unknown_keys():
    with pytest.raises(ValueError, match=r"verdict keys \['colour'\]"):
        Verdict.from_dict({"check_id": "x", "status": "PASS", "summary": "s", "colour": "red"})


@pytest.mark.parametrize(("status", "blocks"), [(Status.PASS, False), (Status.WARN, False), (Status.SKIP, False),
                                                  (Status.FAIL, True), (Status.UNKNOWN, True)])
def test_verdict_unknown_never_counts_as_pass(status, blocks):
    assert status.blocks is blocks
