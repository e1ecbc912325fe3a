"""Rule table for what a per-node fan-out brings back (rlcheck.cluster.fanout_result): the deadlines on both sides of
each count, the driver's output read back (the last RESULT line, each node's observation from its own NODE line and
never another's, a node with no line left without one), the name a report gives a node, and the result's round trip
through the JSON the driver prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rlcheck
from rlcheck.cluster import fanout_result as fr
from rlcheck.cluster.fanout_result import NODE, PLAN, RESULT, FanoutResult, NodeAnswer, NodeFacts, Outcome


def _facts(i: int, **kw) -> NodeFacts:
    return NodeFacts(**{"node_id": f"{i:02d}abcdef" * 7, "address": f"10.0.0.{i}", "hostname": f"n{i}",
                        "is_head": i == 0, "ray_gpus": 8.0, **kw})


def _answer(i: int, observation: dict | None = None, outcome: Outcome = Outcome.ANSWERED) -> NodeAnswer:
    return NodeAnswer(node=_facts(i), outcome=outcome, elapsed_s=1.5, detail=f"d{i}", observation=observation)


def _result(*nodes: NodeAnswer) -> FanoutResult:
    return FanoutResult(address="ray://h:10001", connected=True, tried="ray://h:10001 within 30 s", nodes=nodes,
                        dead_nodes=1, elapsed_s=2.0)


def _node_line(i: int, observation: dict | None) -> str:
    return NODE + json.dumps({"index": i, **_answer(i, observation).to_dict()})


def test_constants_the_driver_and_the_caller_agree_on():
    assert (RESULT, NODE, PLAN) == ("RLCHECK_FANOUT ", "RLCHECK_FANOUT_NODE ", "RLCHECK_FANOUT_PLAN ")
    assert (fr.JOB_SLACK_S, fr.PER_NODE_S, fr.PLAN_NODES_UNKNOWN) == (60.0, 0.1, 0)
    assert [o.value for o in Outcome] == ["answered", "timeout", "died", "error"]


@pytest.mark.parametrize(("timeout_s", "nodes", "deadline_s"), [
    (60.0, 0, 60.0), (60.0, 1, 60.1), (60.0, 10, 61.0), (0.0, 1000, 100.0), (5.0, 3, 5.3),
])
def test_node_deadline_is_the_timeout_plus_per_node_time(timeout_s, nodes, deadline_s):
    assert fr.node_deadline_s(timeout_s, nodes) == pytest.approx(deadline_s)


@pytest.mark.parametrize("nodes", [-1, -1000])
def test_node_deadline_refuses_a_negative_count(nodes):
    with pytest.raises(ValueError) as raised:
        fr.node_deadline_s(60.0, nodes)
    assert str(raised.value) == f"nodes={nodes}: a node count is 0 or more"


@pytest.mark.parametrize(("nodes", "deadline_s"), [
    (None, 30.0 + 60.0 + 45.0), (0, 30.0 + 60.0 + 45.0), (1, 135.2), (10, 137.0), (1000, 335.0),
])
def test_plan_deadline_adds_connect_node_wait_margin_and_result_lines(nodes, deadline_s):
    assert fr.plan_deadline_s(30.0, 60.0, nodes, margin_s=45.0) == pytest.approx(deadline_s)


@pytest.mark.parametrize(("kw", "label", "where"), [
    ({}, "n3", "worker n3 10.0.0.3 (03abcdef)"),
    ({"name": "n3 (03abcdef)"}, "n3 (03abcdef)", "worker n3 10.0.0.3 (03abcdef)"),
    ({"hostname": ""}, "03abcdef" * 7, "worker  10.0.0.3 (03abcdef)"),
    ({"hostname": "", "name": "named"}, "named", "worker  10.0.0.3 (03abcdef)"),
    ({"is_head": True}, "n3", "head n3 10.0.0.3 (03abcdef)"),
])
def test_node_label_and_where(kw, label, where):
    facts = _facts(3, **kw)
    assert (facts.label, facts.where) == (label, where)


@pytest.mark.parametrize("outcome", list(Outcome))
def test_answer_round_trips_through_its_dict(outcome):
    answer = _answer(2, {"gpus": [1, 2]} if outcome is Outcome.ANSWERED else None, outcome)
    data = answer.to_dict()
    assert data == {"node": {"node_id": "02abcdef" * 7, "address": "10.0.0.2", "hostname": "n2", "is_head": False,
                             "ray_gpus": 8.0, "name": ""},
                    "outcome": outcome.value, "elapsed_s": 1.5, "detail": "d2",
                    "observation": {"gpus": [1, 2]} if outcome is Outcome.ANSWERED else None}
    assert json.loads(json.dumps(data)) == data  # what the driver prints is plain JSON
    assert NodeAnswer.from_dict(data) == answer


def test_result_round_trips_through_its_dict():
    result = _result(_answer(0, {"a": 1}), _answer(1, None, Outcome.TIMEOUT))
    data = result.to_dict()
    assert data["nodes"] == [result.nodes[0].to_dict(), result.nodes[1].to_dict()]
    assert {k: v for k, v in data.items() if k != "nodes"} == {
        "address": "ray://h:10001", "connected": True, "tried": "ray://h:10001 within 30 s", "error": "",
        "dead_nodes": 1, "elapsed_s": 2.0}
    assert FanoutResult.from_dict(json.loads(json.dumps(data))) == result


def test_result_not_connected_has_no_nodes_and_reads_back_without_them():
    data = {"address": "a:1", "connected": False, "tried": "a:1 within 5 s", "error": "refused"}
    got = FanoutResult.from_dict(data)
    assert got == FanoutResult(address="a:1", connected=False, tried="a:1 within 5 s", error="refused")
    assert got.nodes == () and got.dead_nodes == 0 and got.elapsed_s == 0.0


def test_parse_output_without_a_result_line_is_none():
    assert fr.parse_output("") is None
    assert fr.parse_output(_node_line(0, {"a": 1}) + "\n" + PLAN + '{"nodes": 1}\n') is None
    assert fr.parse_output("  " + RESULT + json.dumps(_result().to_dict())) is None  # not at the start of a line


def test_parse_output_takes_the_last_result_line():
    first, last = _result(_answer(0)), _result(_answer(0), _answer(1))
    text = "\n".join(["noise", RESULT + json.dumps(first.to_dict()), "more", RESULT + json.dumps(last.to_dict())])
    got = fr.parse_output(text)
    assert got is not None and [a.node.hostname for a in got.nodes] == ["n0", "n1"]


def test_parse_output_each_observation_from_its_own_nodes_line():
    stripped = _result(_answer(0), _answer(1), _answer(2, outcome=Outcome.TIMEOUT))
    lines = [_node_line(1, {"h": "n1"}), "ray noise", _node_line(0, {"h": "n0"}),
             RESULT + json.dumps(stripped.to_dict())]
    got = fr.parse_output("\n".join(lines) + "\n")
    assert got is not None
    assert [a.observation for a in got.nodes] == [{"h": "n0"}, {"h": "n1"}, None]  # the timed-out node has none
    assert [a.outcome for a in got.nodes] == [Outcome.ANSWERED, Outcome.ANSWERED, Outcome.TIMEOUT]
    assert {k: v for k, v in got.to_dict().items() if k != "nodes"} == {
        k: v for k, v in stripped.to_dict().items() if k != "nodes"}


def test_parse_output_a_nodes_line_without_an_observation_leaves_none():
    stripped = _result(_answer(0))
    no_key = NODE + json.dumps({"index": 0, "outcome": "error"})
    for line in (_node_line(0, None), no_key):
        got = fr.parse_output(line + "\n" + RESULT + json.dumps(stripped.to_dict()))
        assert got is not None and got.nodes[0].observation is None


def test_parse_output_an_observation_in_the_result_line_is_kept_over_a_nodes_line():
    whole = _result(_answer(0, {"from": "result"}), _answer(1))
    lines = [_node_line(0, {"from": "node line"}), _node_line(1, {"from": "node line"}),
             RESULT + json.dumps(whole.to_dict())]
    got = fr.parse_output("\n".join(lines))
    assert got is not None and [a.observation for a in got.nodes] == [{"from": "result"}, {"from": "node line"}]


def test_parse_output_the_later_line_of_one_index_wins_and_a_stray_index_is_ignored():
    stripped = _result(_answer(0))
    lines = [_node_line(0, {"n": 1}), _node_line(0, {"n": 2}), _node_line(7, {"n": 7}),
             RESULT + json.dumps(stripped.to_dict())]
    got = fr.parse_output("\n".join(lines))
    assert got is not None and len(got.nodes) == 1 and got.nodes[0].observation == {"n": 2}


def test_parse_output_index_given_as_text_is_read_as_a_number():
    stripped = _result(_answer(0), _answer(1))
    line = NODE + json.dumps({"index": "1", "observation": {"n": 1}})
    got = fr.parse_output(line + "\n" + RESULT + json.dumps(stripped.to_dict()))
    assert got is not None and [a.observation for a in got.nodes] == [None, {"n": 1}]


def test_package_runtime_env_ships_this_package():
    assert fr.package_runtime_env() == {"py_modules": [str(Path(rlcheck.__file__).parent)],
                                        "excludes": ["__pycache__"]}
