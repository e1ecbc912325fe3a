"""report.md's per-node sections as a rule table (rlcheck/report_nodes.py): the scale bound on both sides, the
failing-nodes table and its order, the grouped 'Every verdict' rows (NAMED nodes then '+N more', one summary or
the node list, a verdict of the whole run beside per-node ones of the same check), and the 'What to fix' sections
(DETAILED on both sides, the fix once, the first node's details), each as the whole lines written."""

from __future__ import annotations

from typing import Any

import pytest

from rlcheck import report_nodes as rn


def _v(status: str, check: str, node: str = "", summary: str = "", *, remedy: str = "", details: str = "",
       failure_id: str | None = None) -> dict[str, Any]:
    return {"status": status, "check_id": check, "node": node, "summary": summary or f"{check} {status} {node}".strip(),
            "failure_id": failure_id, "remedy": remedy, "details": details}


def cell(text: str) -> str:
    """A stand-in for report.md's cell escaping: marks where the module asks for a cell."""
    return f"<{text}>"


def where(v: dict[str, Any]) -> str:
    return f"{v['check_id']}@{v['node']}" if v.get("node") else v["check_id"]


@pytest.mark.parametrize(("verdicts", "named", "scale"), [
    ([], [], False),
    ([_v("PASS", "c", ""), _v("PASS", "c", "n1"), _v("FAIL", "d", "n1"), {**_v("PASS", "e"), "node": None}],
     ["n1"], False),
    ([_v("PASS", "c", f"n{i}") for i in range(rn.SCALE_NODES - 1)] * 2, [f"n{i}" for i in range(rn.SCALE_NODES - 1)],
     False),
    ([_v("PASS", "c", f"n{i}") for i in range(rn.SCALE_NODES)], [f"n{i}" for i in range(rn.SCALE_NODES)], True),
])
def test_rules_table_report_nodes_named_and_scale(verdicts, named, scale):
    assert rn.nodes_named(verdicts) == named
    assert rn.at_scale(verdicts) is scale


@pytest.mark.parametrize(("verdicts", "lines"), [
    ([_v("PASS", "c", "n1"), _v("WARN", "c", "n2"), _v("FAIL", "run")], []),  # nothing blocks on a node
    ([_v("PASS", "x", "n0"), _v("UNKNOWN", "x", "n1"), _v("FAIL", "x", "n2"), _v("UNKNOWN", "y", "n1"),
      _v("UNKNOWN", "y", "n3"), _v("FAIL", "y", "n4"), _v("FAIL", "z", "n4"), _v("WARN", "z", "n5"),
      _v("FAIL", "run")],
     ["## Failing nodes", "", "4 of 6 nodes block GO:", "", "| node | FAIL | UNKNOWN | checks |", "|---|---|---|---|",
      "| <n4> | 2 | 0 | <y (FAIL), z (FAIL)> |", "| <n2> | 1 | 0 | <x (FAIL)> |",
      "| <n1> | 0 | 2 | <x (UNKNOWN), y (UNKNOWN)> |", "| <n3> | 0 | 1 | <y (UNKNOWN)> |", ""]),
    ([_v("UNKNOWN", "x", "n1"), _v("UNKNOWN", "x", "n2"), _v("UNKNOWN", "y", "n2")],  # a tie keeps the first seen
     ["## Failing nodes", "", "2 of 2 nodes block GO:", "", "| node | FAIL | UNKNOWN | checks |", "|---|---|---|---|",
      "| <n2> | 0 | 2 | <x (UNKNOWN), y (UNKNOWN)> |", "| <n1> | 0 | 1 | <x (UNKNOWN)> |", ""]),
    ([_v("FAIL", "x", "n1"), _v("FAIL", "x", "n2")],
     ["## Failing nodes", "", "2 of 2 nodes block GO:", "", "| node | FAIL | UNKNOWN | checks |", "|---|---|---|---|",
      "| <n1> | 1 | 0 | <x (FAIL)> |", "| <n2> | 1 | 0 | <x (FAIL)> |", ""]),
])
def test_rules_table_report_nodes_failing_nodes(verdicts, lines):
    assert rn.failing_nodes(verdicts, cell) == lines


def _nodes(count: int, status: str = "PASS", check: str = "c", summary: str = "fine") -> list[dict[str, Any]]:
    return [_v(status, check, f"n{i}", summary) for i in range(count)]


@pytest.mark.parametrize(("verdicts", "rows"), [
    (_nodes(rn.NAMED), ["| PASS | <c> @ 5 nodes: <n0, n1, n2, n3, n4> | <fine> |  |"]),
    (_nodes(rn.NAMED + 1), ["| PASS | <c> @ 6 nodes: <n0, n1, n2, n3, n4 (+1 more)> | <fine> |  |"]),
    ([_v("SKIP", "c", "n0", "no EFA"), _v("SKIP", "c", "n1", "no GPU"), _v("SKIP", "c", "n2", "no EFA")],
     ["| SKIP | <c> @ 3 nodes: <n0, n1, n2> | <3 nodes: n0, n1, n2> |  |"]),
    ([*_nodes(rn.NAMED + 2, summary="a"), _v("PASS", "c", "n9", "b")],
     ["| PASS | <c> @ 8 nodes: <n0, n1, n2, n3, n4 (+3 more)> | <8 nodes: n0, n1, n2, n3, n4 (+3 more)> |  |"]),
    ([_v("PASS", "run", "", "fits", failure_id="f-1"), _v("PASS", "c", "n0"), _v("FAIL", "c", "n1", "bad",
                                                                                 failure_id="xid-79"),
      _v("PASS", "c", "n2"), _v("SKIP", "d", "n1", "alone"), _v("WARN", "c", "n3", "slow"), _v("PASS", "c", "n4")],
     ["| PASS | <run> | <fits> | f-1 |", "| PASS | <c> @ 3 nodes: <n0, n2, n4> | <3 nodes: n0, n2, n4> |  |",
      "| FAIL | <c@n1> | <bad> | xid-79 |", "| SKIP | <d@n1> | <alone> |  |", "| WARN | <c@n3> | <slow> |  |"]),
    # a verdict of the whole run keeps its row beside grouped per-node verdicts of the same check and status
    ([_v("PASS", "pairs", "", "all 8 nodes together"), *_nodes(3, check="pairs", summary="all-reduce ok")],
     ["| PASS | <pairs> | <all 8 nodes together> |  |",
      "| PASS | <pairs> @ 3 nodes: <n0, n1, n2> | <all-reduce ok> |  |"]),
    ([*_nodes(2, check="pairs", summary="all-reduce ok"), _v("PASS", "pairs", "", "all 8 nodes together")],
     ["| PASS | <pairs> @ 2 nodes: <n0, n1> | <all-reduce ok> |  |", "| PASS | <pairs> | <all 8 nodes together> |  |"]),
    ([_v("SKIP", "pairs", "n0", "one"), _v("SKIP", "pairs", "", "not run")],
     ["| SKIP | <pairs@n0> | <one> |  |", "| SKIP | <pairs> | <not run> |  |"]),
])
def test_rules_table_report_nodes_grouped_rows(verdicts, rows):
    assert rn.grouped_rows(verdicts, cell, where) == rows


def _bad(count: int, summary: str = "Xid 79", **kw: str) -> list[dict[str, Any]]:
    return [_v("FAIL", "xid", f"n{i}", summary if summary else f"Xid on {i}", **kw) for i in range(count)]


@pytest.mark.parametrize(("bad", "group", "lines"), [
    (_bad(2, remedy="drain", details="dmesg"), True,
     ["### FAIL xid on 2 nodes", "", "Nodes: n0, n1", "", "Xid 79", "", "Fix: drain", "",
      "(details of n0; every node's are in report.json)", "", "```", "dmesg", "```", ""]),
    (_bad(2, remedy="drain", details="dmesg"), False,
     ["### FAIL xid@n0", "", "Xid 79", "", "Fix: drain", "", "```", "dmesg", "```", "",
      "### FAIL xid@n1", "", "Xid 79", "", "Fix: drain", "", "```", "dmesg", "```", ""]),
    (_bad(rn.DETAILED, summary=""), True,
     ["### FAIL xid on 10 nodes", "", f"Nodes: {', '.join(f'n{i}' for i in range(10))}", "",
      *(f"- n{i}: Xid on {i}" for i in range(10)), ""]),
    (_bad(rn.DETAILED + 1, summary=""), True,
     ["### FAIL xid on 11 nodes", "", f"Nodes: {', '.join(f'n{i}' for i in range(11))}", "",
      *(f"- n{i}: Xid on {i}" for i in range(10)), "- 1 more node(s): each one's summary is in report.json", ""]),
    ([_v("FAIL", "xid", "n0", "a", remedy="drain"), _v("FAIL", "xid", "n1", "b", remedy="replace"),
      _v("UNKNOWN", "xid", "n2", "c", remedy="drain"), _v("FAIL", "run", "", "d", remedy="drain"),
      _v("FAIL", "run", "", "e", remedy="drain"), _v("WARN", "xid", "n3", "f", details="clocks")], True,
     ["### FAIL xid@n0", "", "a", "", "Fix: drain", "", "### FAIL xid@n1", "", "b", "", "Fix: replace", "",
      "### UNKNOWN xid@n2", "", "c", "", "Fix: drain", "", "### FAIL run", "", "d", "", "Fix: drain", "",
      "### FAIL run", "", "e", "", "Fix: drain", "", "### WARN xid@n3", "", "f", "", "```", "clocks", "```", ""]),
    ([{**_v("FAIL", "xid", "n0", "a"), "remedy": None}, {**_v("FAIL", "xid", "n1", "a"), "remedy": ""}], True,
     ["### FAIL xid on 2 nodes", "", "Nodes: n0, n1", "", "a", ""]),  # no fix: None and '' are one
    # a verdict of the whole run with the check, status and fix of a node group keeps its own section
    ([_v("FAIL", "pairs", "n0", "slow", remedy="R"), _v("FAIL", "pairs", "", "all slow", remedy="R"),
      _v("FAIL", "pairs", "n1", "slow", remedy="R")], True,
     ["### FAIL pairs on 2 nodes", "", "Nodes: n0, n1", "", "slow", "", "Fix: R", "",
      "### FAIL pairs", "", "all slow", "", "Fix: R", ""]),
    ([], True, []),
])
def test_rules_table_report_nodes_fix_sections(bad, group, lines):
    assert rn.fix_sections(bad, where, group) == lines


def test_rules_table_report_nodes_fix_sections_group_by_default():
    assert rn.fix_sections(_bad(2), where)[0] == "### FAIL xid on 2 nodes"
