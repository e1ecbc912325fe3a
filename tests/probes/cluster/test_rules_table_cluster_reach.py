"""Is Ray reachable and did every node answer, as a rule table (rlcheck/probes/cluster/cluster_reach.py): Ray not
reached, dead nodes listed or not, each way a node can stay silent, an answer this rlcheck cannot read, the node
selection and what is said when it selects none, and the Ray node id each node verdict carries; whole verdicts."""

from __future__ import annotations

import pytest

from rlcheck.cluster.fanout_result import FanoutResult, NodeAnswer, NodeFacts, Outcome
from rlcheck.hardware import HardwareProfile, get_profile
from rlcheck.probes.cluster.cluster_reach import (
    NODE_REMEDY,
    REACH_REMEDY,
    evaluate_node_answer,
    evaluate_reachable,
    judge_nodes,
    unanswered,
    with_node_id,
)
from rlcheck.probes.node.collect import NodeObservation, TmsReading
from rlcheck.verdict import Status, Verdict

H200 = get_profile("h200")
TRIED = "ray.init(address='ray://10.0.0.4:10001', timeout 30 s)"


def _facts(name: str, gpus: float = 8.0) -> NodeFacts:
    return NodeFacts(node_id=f"{name}-0123456789abcdef", address="10.0.0.4", hostname=name, is_head=name == "head",
                     ray_gpus=gpus)


def _obs(name: str) -> dict[str, object]:
    return NodeObservation(hostname=name, gpus=(), gpu_source="nvidia-smi", gpu_error="", driver_version="580.65.06",
                           torch_version="2.11.0", torch_cuda="13.0", tms=TmsReading(package_dir="", rule="x"),
                           shm_bytes=None).to_dict()


def _answer(name: str, outcome: Outcome = Outcome.ANSWERED, observation: object = "read", *, gpus: float = 8.0,
            elapsed_s: float = 1.25) -> NodeAnswer:
    data = _obs(name) if observation == "read" else observation
    return NodeAnswer(node=_facts(name, gpus), outcome=outcome, elapsed_s=elapsed_s, detail=f"{outcome.value} here",
                      observation=data)  # type: ignore[arg-type]


def _result(*answers: NodeAnswer, dead: int = 0, elapsed_s: float = 3.04) -> FanoutResult:
    return FanoutResult(address="ray://10.0.0.4:10001", connected=True, tried=TRIED, nodes=answers, dead_nodes=dead,
                        elapsed_s=elapsed_s)


UNREACHED = FanoutResult(address="ray://10.0.0.4:10001", connected=False, tried=TRIED, error="connection refused",
                         nodes=(_answer("head"),))
UNREACHED_VERDICT = Verdict(status=Status.UNKNOWN, remedy=REACH_REMEDY, details=f"tried: {TRIED}",
                            summary="Ray at ray://10.0.0.4:10001 not reached: connection refused")


def _where(name: str) -> str:
    return _facts(name).where


def _id(name: str) -> str:
    return f"ray node id: {name}-0123456789abcdef"


@pytest.mark.parametrize(("result", "verdict"), [
    (UNREACHED, UNREACHED_VERDICT),
    (_result(_answer("head"), _answer("w1")),
     Verdict(status=Status.PASS, details=f"tried: {TRIED}",
             summary="Ray at ray://10.0.0.4:10001 reached; 2 alive node(s); fan-out done in 3.0 s")),
    (_result(_answer("head"), dead=1, elapsed_s=0.96),
     Verdict(status=Status.PASS, details=f"tried: {TRIED}",
             summary="Ray at ray://10.0.0.4:10001 reached; 1 alive node(s) (1 dead node(s) listed); fan-out done in "
                     "1.0 s")),
    (_result(dead=3, elapsed_s=0.0),
     Verdict(status=Status.PASS, details=f"tried: {TRIED}",
             summary="Ray at ray://10.0.0.4:10001 reached; 0 alive node(s) (3 dead node(s) listed); fan-out done in "
                     "0.0 s")),
])
def test_rules_table_cluster_reach_reachable(result, verdict):
    assert evaluate_reachable(result) == verdict


@pytest.mark.parametrize(("outcome", "what"), [
    (Outcome.TIMEOUT, "did not answer"), (Outcome.DIED, "died during the check"), (Outcome.ERROR, "probe failed"),
    (Outcome.ANSWERED, "answered"),  # an answer that carried no observation
])
def test_rules_table_cluster_reach_unanswered(outcome, what):
    assert unanswered(_answer("w1", outcome, None)) == Verdict(
        status=Status.UNKNOWN, node="w1", remedy=NODE_REMEDY, summary=f"{_where('w1')}: {what} ({outcome.value} here)")


@pytest.mark.parametrize(("answer", "verdict"), [
    (_answer("w1", elapsed_s=0.04), Verdict(status=Status.PASS, node="w1", details=_id("w1"),
                                            summary=f"{_where('w1')}: answered in 0.0 s (answered here)")),
    (_answer("w1", elapsed_s=12.34, observation=None),
     Verdict(status=Status.PASS, node="w1", details=_id("w1"),
             summary=f"{_where('w1')}: answered in 12.3 s (answered here)")),
    (_answer("w1", Outcome.TIMEOUT, None), Verdict(status=Status.UNKNOWN, node="w1", remedy=NODE_REMEDY,
                                                   details=_id("w1"),
                                                   summary=f"{_where('w1')}: did not answer (timeout here)")),
    (_answer("w1", Outcome.DIED), Verdict(status=Status.UNKNOWN, node="w1", remedy=NODE_REMEDY, details=_id("w1"),
                                          summary=f"{_where('w1')}: died during the check (died here)")),
])
def test_rules_table_cluster_reach_node_answer(answer, verdict):
    assert evaluate_node_answer(answer) == verdict


class Judge:
    """A node judge that records what it was given and says so in its verdict."""

    def __init__(self) -> None:
        self.calls: list[tuple[NodeFacts, str, str | None]] = []

    def __call__(self, node: NodeFacts, obs: NodeObservation, profile: HardwareProfile | None) -> Verdict:
        self.calls.append((node, obs.hostname, profile.name if profile else None))
        return Verdict(status=Status.FAIL, node="judged", details="its own evidence" if node.is_head else "",
                       summary=f"{obs.hostname} judged")


def _judged(name: str, details: str = "") -> Verdict:
    return Verdict(status=Status.FAIL, node=name, details=f"{details}\n{_id(name)}" if details else _id(name),
                   summary=f"{name} judged")


def _silent(name: str, what: str) -> Verdict:
    return Verdict(status=Status.UNKNOWN, node=name, remedy=NODE_REMEDY, details=_id(name),
                   summary=f"{_where(name)}: {what}")


NOT_UNDERSTOOD = "observation not understood"


@pytest.mark.parametrize(("result", "verdicts", "judged"), [
    (UNREACHED, [UNREACHED_VERDICT], []),
    (_result(_answer("head"), _answer("w1")), [_judged("head", "its own evidence"), _judged("w1")], ["head", "w1"]),
    (_result(_answer("head"), _answer("w1", Outcome.TIMEOUT, None), _answer("w2", Outcome.ERROR),
             _answer("w3", observation=None)),
     [_judged("head", "its own evidence"), _silent("w1", "did not answer (timeout here)"),
      _silent("w2", "probe failed (error here)"), _silent("w3", "answered (answered here)")], ["head"]),
    (_result(_answer("w1", observation={}), _answer("w2", observation={**_obs("w2"), "newer_fact": 1}),
             _answer("w3", observation={**_obs("w3"), "tms": {"rule": "x", "from_newer": 1}})),
     [Verdict(status=Status.UNKNOWN, node="w1", details=_id("w1"),
              summary=f"{_where('w1')}: {NOT_UNDERSTOOD}: 'gpus'"),
      Verdict(status=Status.UNKNOWN, node="w2", details=_id("w2"),
              summary=f"{_where('w2')}: {NOT_UNDERSTOOD}: node observation keys ['newer_fact'] are not known to this "
                      "rlcheck"),
      Verdict(status=Status.UNKNOWN, node="w3", details=_id("w3"),
              summary=f"{_where('w3')}: {NOT_UNDERSTOOD}: TmsReading.__init__() got an unexpected keyword argument "
                      "'from_newer'")], []),
    (_result(), [Verdict(status=Status.SKIP, summary="no node to judge")], []),
])
def test_rules_table_cluster_reach_judge_nodes(result, verdicts, judged):
    judge = Judge()
    assert judge_nodes(result, judge, H200) == verdicts
    assert [(node.hostname, seen, profile) for node, seen, profile in judge.calls] == [(n, n, "h200") for n in judged]
    assert all(node is a.node for (node, _, _), a in zip(judge.calls, result.nodes, strict=False))


def test_rules_table_cluster_reach_judge_nodes_selection():
    result = _result(_answer("head", gpus=0.0), _answer("w1"), _answer("w2", Outcome.TIMEOUT, None))
    judge = Judge()
    gpu = judge_nodes(result, judge, None, select=lambda node: node.ray_gpus >= 1)
    assert gpu == [_judged("w1"), _silent("w2", "did not answer (timeout here)")]
    assert [(n.hostname, p) for n, _, p in judge.calls] == [("w1", None)]
    none = judge_nodes(result, judge, None, select=lambda node: False, none_selected="no GPU node: nothing to judge",
                       none_status=Status.FAIL)
    assert none == [Verdict(status=Status.FAIL, summary="no GPU node: nothing to judge")]
    assert judge_nodes(result, judge, None, select=lambda node: False) == [Verdict(status=Status.SKIP,
                                                                                   summary="no node to judge")]
    assert len(judge.calls) == 1


@pytest.mark.parametrize(("details", "expected"), [
    ("", "ray node id: n-1"), ("evidence", "evidence\nray node id: n-1"), ("a\nb", "a\nb\nray node id: n-1")])
def test_rules_table_cluster_reach_with_node_id(details, expected):
    node = NodeFacts(node_id="n-1", address="10.0.0.9", hostname="gpu-7", is_head=False, ray_gpus=8.0, name="gpu-7#n-1")
    verdict = Verdict(status=Status.WARN, summary="s", details=details, node="other", remedy="r", failure_id="f")
    assert with_node_id(verdict, node) == Verdict(status=Status.WARN, summary="s", details=expected, node="gpu-7#n-1",
                                                  remedy="r", failure_id="f")
