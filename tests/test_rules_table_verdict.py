"""Rule table for the one result type (rlcheck.verdict): what a Verdict refuses (each refusal's whole text), the
block a user reads for each combination of its optional parts, and its JSON form both ways (the report and the
reproducer cache keep verdicts as that form and read them back)."""

from __future__ import annotations

import json

import pytest

from rlcheck.verdict import Status, Verdict

FIELDS = "['check_id', 'details', 'failure_id', 'node', 'remedy', 'status', 'summary']"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"status": "PASS"}, "status='PASS': one of PASS, WARN, FAIL, SKIP, UNKNOWN"),
    ({"status": None}, "status=None: one of PASS, WARN, FAIL, SKIP, UNKNOWN"),
    ({"summary": "two\nlines"}, "summary='two\\nlines': must be one line (put the rest in details)"),
    ({"summary": "ends with a newline\n"}, "summary='ends with a newline\\n': must be one line (put the rest in "
                                           "details)"),
])
def test_a_verdict_refuses_a_bad_status_or_a_summary_of_two_lines_saying_which(kwargs, message):
    with pytest.raises(ValueError) as caught:
        Verdict(**{"status": Status.PASS, "summary": "s", **kwargs})
    assert str(caught.value) == message


@pytest.mark.parametrize("kwargs", [
    {"status": Status.UNKNOWN, "summary": ""},
    {"status": Status.WARN, "summary": "one line with a carriage return\r kept", "details": "two\nlines"},
])
def test_a_verdict_of_one_line_with_a_status_is_kept(kwargs):
    assert Verdict(**kwargs).summary == kwargs["summary"]


@pytest.mark.parametrize(("kwargs", "block"), [
    # the head alone: no node, no catalogue id, no fix, no evidence
    ({"status": Status.PASS, "summary": "numpy 1.26.4", "check_id": "image_numpy_major"},
     ["PASS image_numpy_major: numpy 1.26.4"]),
    # an empty node is this machine, like None
    ({"status": Status.SKIP, "summary": "no GPU", "check_id": "gpu_x", "node": ""}, ["SKIP gpu_x: no GPU"]),
    # a probe's verdict before the registry stamps its id
    ({"status": Status.WARN, "summary": "slow"}, ["WARN : slow"]),
    ({"status": Status.FAIL, "summary": "numpy 2.2.6; expected <2", "check_id": "image_numpy_major",
      "node": "node-3"}, ["FAIL image_numpy_major [node-3]: numpy 2.2.6; expected <2"]),
    ({"status": Status.FAIL, "summary": "s", "check_id": "c", "failure_id": "numpy2-megatron"},
     ["FAIL c: s", "  known failure: numpy2-megatron"]),
    ({"status": Status.UNKNOWN, "summary": "s", "check_id": "c", "remedy": "pin numpy<2"},
     ["UNKNOWN c: s", "  fix: pin numpy<2"]),
    ({"status": Status.FAIL, "summary": "s", "check_id": "c", "details": "numpy 2.2.6\nmegatron-core 0.19.2\n"},
     ["FAIL c: s", "  | numpy 2.2.6", "  | megatron-core 0.19.2"]),
    # every part, in the order a reader needs them
    ({"status": Status.FAIL, "summary": "s", "check_id": "c", "node": "n1", "failure_id": "f", "remedy": "r",
      "details": "d1\n\nd3"},
     ["FAIL c [n1]: s", "  known failure: f", "  fix: r", "  | d1", "  | ", "  | d3"]),
])
def test_render_writes_the_head_then_the_known_failure_the_fix_and_each_line_of_evidence(kwargs, block):
    assert Verdict(**kwargs).render() == "\n".join(block)


def test_with_id_stamps_the_check_id_and_keeps_the_rest():
    v = Verdict(status=Status.FAIL, summary="s", details="d", node="n", failure_id="f", remedy="r")
    stamped = v.with_id("image_numpy_major")
    assert stamped == Verdict(status=Status.FAIL, summary="s", details="d", node="n", failure_id="f", remedy="r",
                              check_id="image_numpy_major")
    assert v.check_id == ""


def test_to_dict_gives_every_field_with_the_status_as_plain_text():
    v = Verdict(status=Status.UNKNOWN, summary="s", details="d", node="n", failure_id="f", remedy="r", check_id="c")
    data = v.to_dict()
    assert data == {"status": "UNKNOWN", "summary": "s", "details": "d", "node": "n", "failure_id": "f",
                    "remedy": "r", "check_id": "c"}
    assert type(data["status"]) is str
    assert json.loads(json.dumps(data)) == data


@pytest.mark.parametrize("status", list(Status))
def test_from_dict_reads_back_what_to_dict_wrote_for_every_status(status):
    v = Verdict(status=status, summary="s", details="d", node=None, failure_id="f", remedy="r", check_id="c")
    back = Verdict.from_dict(json.loads(json.dumps(v.to_dict())))
    assert back == v
    assert type(back.status) is Status


def test_from_dict_takes_the_defaults_of_the_fields_left_out():
    assert Verdict.from_dict({"status": "SKIP", "summary": "s"}) == Verdict(status=Status.SKIP, summary="s")


@pytest.mark.parametrize(("data", "message"), [
    ({"status": "PASS", "summary": "s", "colour": "red"}, f"verdict keys ['colour']: allowed are {FIELDS}"),
    ({"status": "PASS", "summary": "s", "b": 1, "a": 2}, f"verdict keys ['a', 'b']: allowed are {FIELDS}"),
])
def test_from_dict_refuses_keys_a_verdict_does_not_have_naming_them_all(data, message):
    with pytest.raises(ValueError) as caught:
        Verdict.from_dict(data)
    assert str(caught.value) == message


@pytest.mark.parametrize("status", ["pass", "OK", ""])
def test_from_dict_refuses_a_status_that_is_none_of_the_five(status):
    with pytest.raises(ValueError, match=f"^'{status}' is not a valid Status$"):
        Verdict.from_dict({"status": status, "summary": "s"})
