"""Are all nodes on the same software, as a rule table (rlcheck/probes/cluster/node_versions.py): the majority and its
ties (the head first, then the lowest value), values a node could not read, nodes that did not answer or sent what
this rlcheck cannot read, and every verdict whole: status, node, summary, details, remedy."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.cluster.fanout_result import FanoutResult, NodeAnswer, NodeFacts, Outcome
from rlcheck.probes.cluster.cluster_reach import NODE_REMEDY
from rlcheck.probes.cluster.node_versions import FIELDS, REMEDY, evaluate_versions_uniform, reference
from rlcheck.probes.node.collect import NodeObservation, TmsReading
from rlcheck.verdict import Status, Verdict

STACK = {"driver_version": "580.65.06", "torch_cuda": "13.0", "torch_version": "2.11.0+cu130",
         "nccl_version": "2.29.3", "sglang_version": "0.5.12.post1", "megatron_version": "0.17.0",
         "framework": "slime 0.2.4"}
SAME = ("driver 580.65.06, CUDA runtime 13.0, torch 2.11.0+cu130, NCCL 2.29.3, SGLang 0.5.12.post1, megatron-core "
        "0.17.0, framework slime 0.2.4")
"""The PASS summary's list when every field is read everywhere."""


def _obs(name: str, **changes: str) -> NodeObservation:
    return NodeObservation(hostname=name, gpus=(), gpu_source="nvidia-smi", gpu_error="",
                           tms=TmsReading(package_dir="", rule="slime-v0.2.4"), shm_bytes=None,
                           **{**STACK, **changes})


def _facts(name: str) -> NodeFacts:
    return NodeFacts(node_id=f"{name}00000000ff", address=f"10.0.0.{len(name)}", hostname=name,
                     is_head=name == "head", ray_gpus=8.0)


def _answer(name: str, outcome: Outcome = Outcome.ANSWERED, observation: object = None, **changes: str):
    data = _obs(name, **changes).to_dict() if observation is None and outcome is Outcome.ANSWERED else observation
    return NodeAnswer(node=_facts(name), outcome=outcome, elapsed_s=2.0, detail=f"{outcome.value} detail",
                      observation=data)


def _judge(*answers: NodeAnswer) -> list[Verdict]:
    return evaluate_versions_uniform(FanoutResult(address="10.0.0.4:6379", connected=True, tried="ray.init",
                                                  nodes=answers))


def _where(name: str) -> str:
    return _facts(name).where


def _pass(name: str, same: str = SAME, details: str = "") -> Verdict:
    return Verdict(status=Status.PASS, node=name, details=details,
                   summary=f"{_where(name)}: same as the cluster: {same}")


def _fail(name: str, odd: str, details: str = "") -> Verdict:
    return Verdict(status=Status.FAIL, node=name, remedy=REMEDY, details=details, summary=f"{_where(name)}: {odd}")


def _unknown(name: str, what: str, outcome: Outcome) -> Verdict:
    return Verdict(status=Status.UNKNOWN, node=name, remedy=NODE_REMEDY,
                   summary=f"{_where(name)}: {what} ({outcome.value} detail)")


def _not_understood(name: str) -> Verdict:
    return Verdict(status=Status.UNKNOWN, node=name, summary=f"{_where(name)}: observation not understood")


EVERY_FIELD = ", ".join(label for label, _ in FIELDS)

ROWS = {
    "all-same": ((_answer("head"), _answer("w1"), _answer("w2")), [_pass("head"), _pass("w1"), _pass("w2")]),
    "two-nodes-compare": ((_answer("head"), _answer("w1")), [_pass("head"), _pass("w1")]),
    "odd-driver": ((_answer("head"), _answer("w1"), _answer("w2", driver_version="570.124.06")),
                   [_pass("head"), _pass("w1"),
                    _fail("w2", "driver 570.124.06 (most nodes run 580.65.06)")]),
    "odd-in-two-fields": ((_answer("head"), _answer("w1"), _answer("w2", torch_cuda="12.8",
                                                                   torch_version="2.9.1+cu128")),
                          [_pass("head"), _pass("w1"),
                           _fail("w2", "CUDA runtime 12.8 (most nodes run 13.0); torch 2.9.1+cu128 (most nodes run "
                                       "2.11.0+cu130)")]),
    "odd-head": ((_answer("head", framework="miles 0.1.0"), _answer("w1"), _answer("w2")),
                 [_fail("head", "framework miles 0.1.0 (most nodes run slime 0.2.4)"), _pass("w1"), _pass("w2")]),
    "tie-goes-to-the-head": ((_answer("w1", nccl_version="2.27.7"), _answer("head")),
                             [_fail("w1", "NCCL 2.27.7 (most nodes run 2.29.3)"), _pass("head")]),
    "tie-goes-to-the-head-whatever-its-value": (
        (_answer("w1"), _answer("head", nccl_version="2.27.7")),
        [_fail("w1", "NCCL 2.29.3 (most nodes run 2.27.7)"), _pass("head", SAME.replace("2.29.3", "2.27.7"))]),
    "tie-without-the-head-goes-to-the-lowest": (  # lowest as text: '0.5.12.post1' sorts before '0.5.9'
        (_answer("w1", sglang_version="0.5.9"), _answer("w2")),
        [_fail("w1", "SGLang 0.5.9 (most nodes run 0.5.12.post1)"), _pass("w2")]),
    "tie-without-the-head-whatever-the-order": (
        (_answer("w1"), _answer("w2", sglang_version="0.5.9")),
        [_pass("w1"), _fail("w2", "SGLang 0.5.9 (most nodes run 0.5.12.post1)")]),
    "unread-is-not-a-difference": (
        (_answer("head"), _answer("w1", megatron_version="", framework=""), _answer("w2")),
        [_pass("head"), _pass("w1", SAME.removesuffix(", megatron-core 0.17.0, framework slime 0.2.4"),
                              "not read here: megatron-core, framework"), _pass("w2")]),
    "unread-beside-an-odd-value": (
        (_answer("head"), _answer("w1"), _answer("w2", driver_version="", sglang_version="0.5.9")),
        [_pass("head"), _pass("w1"),
         _fail("w2", "SGLang 0.5.9 (most nodes run 0.5.12.post1)", "not read here: driver")]),
    "nothing-read-on-one-node": (
        (_answer("head"), _answer("w1", **dict.fromkeys(STACK, ""))),
        [_pass("head"), _pass("w1", "nothing read", f"not read here: {EVERY_FIELD}")]),
    "a-field-no-node-read-is-left-out": (
        (_answer("head", nccl_version=""), _answer("w1", nccl_version="")),
        [_pass("head", SAME.replace(", NCCL 2.29.3", "")), _pass("w1", SAME.replace(", NCCL 2.29.3", ""))]),
    "nothing-read-anywhere": (
        (_answer("head", **dict.fromkeys(STACK, "")), _answer("w1", **dict.fromkeys(STACK, ""))),
        [_pass("head", "nothing read"), _pass("w1", "nothing read")]),
    "silent-nodes-in-place": (
        (_answer("head"), _answer("w1", Outcome.TIMEOUT), _answer("w2"), _answer("w3", Outcome.DIED),
         _answer("w4", Outcome.ERROR)),
        [_pass("head"), _unknown("w1", "did not answer", Outcome.TIMEOUT), _pass("w2"),
         _unknown("w3", "died during the check", Outcome.DIED), _unknown("w4", "probe failed", Outcome.ERROR)]),
    "a-silent-node-that-sent-something-is-not-read": (
        (_answer("head"), _answer("w1"), _answer("w2", Outcome.TIMEOUT,
                                                 _obs("w2", driver_version="1.0").to_dict())),
        [_pass("head"), _pass("w1"), _unknown("w2", "did not answer", Outcome.TIMEOUT)]),
    "answers-not-understood": (
        (_answer("head"), _answer("w1"), _answer("w2", Outcome.ANSWERED, {}),
         _answer("w3", Outcome.ANSWERED, {**_obs("w3").to_dict(), "from_a_newer_rlcheck": 1}),
         _answer("w4", Outcome.ANSWERED, {**_obs("w4").to_dict(), "gpus": [{"index": 0}]}),
         _answer("w5", Outcome.ANSWERED, {**_obs("w5").to_dict(), "health": {"schema": "unknown"}})),
        [_pass("head"), _pass("w1"), *(_not_understood(n) for n in ("w2", "w3", "w4", "w5"))]),
}


@pytest.mark.parametrize("row", ROWS)
def test_rules_table_node_versions_verdicts(row):
    answers, verdicts = ROWS[row]
    assert _judge(*answers) == verdicts


@pytest.mark.parametrize(("answers", "summary"), [
    ((), "0 node(s) reported versions: nothing to compare"),
    ((_answer("head"),), "1 node(s) reported versions: nothing to compare"),
    ((_answer("head"), _answer("w1", Outcome.TIMEOUT), _answer("w2", Outcome.ANSWERED, {})),
     "1 node(s) reported versions: nothing to compare"),
])
def test_rules_table_node_versions_fewer_than_two_read_skip(answers, summary):
    assert _judge(*answers) == [Verdict(status=Status.SKIP, summary=summary)]


@pytest.mark.parametrize(("values", "expected"), [
    ([("b", False), ("b", False), ("a", True)], "b"),  # a majority beats the head
    ([("b", False), ("a", False)], "a"), ([("a", False), ("b", False)], "a"),  # a tie without the head: the lowest
    ([("a", False), ("b", True)], "b"), ([("b", True), ("a", False)], "b"),  # a tie with the head: the head's
    ([("b", False), ("b", False), ("a", False), ("a", False), ("c", True)], "a"),  # the head outside the tie
    ([("c", False), ("c", False), ("b", False), ("b", False), ("a", False)], "b"),
    ([("x", False)], "x"), ([("x", True)], "x"),
])
def test_rules_table_node_versions_reference(values, expected):
    assert reference(values) == expected


def test_rules_table_node_versions_an_observation_missing_a_field_is_not_understood():
    data = _obs("w2").to_dict()
    del data["tms"]
    verdicts = _judge(_answer("head"), _answer("w1"), dataclasses.replace(_answer("w2"), observation=data))
    assert verdicts[2] == _not_understood("w2")
