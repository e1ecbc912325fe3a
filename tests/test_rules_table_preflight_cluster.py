"""Rule table for the cluster checks' wiring (rlcheck.preflight.cluster): a cluster check without the fan-out is a
bug named as such, which nodes each per-node check judges (workers, the head, every node) and what it says when none
is selected, every node's answer (or Ray's reach when none answered), the recipe's GPUs against Ray's, and when the
pairwise all-reduce runs (Ray reached, two or more nodes answered) with the profile's measured floor."""

from __future__ import annotations

import pytest

from rlcheck import recipes
from rlcheck.cluster.fanout_result import FanoutResult, NodeAnswer, NodeFacts, Outcome
from rlcheck.hardware import get_profile
from rlcheck.preflight import cluster
from rlcheck.preflight.registry import Inputs
from rlcheck.probes.cluster.cluster_reach import evaluate_node_answer, evaluate_reachable
from rlcheck.probes.cluster.nccl_pairs import PairsObservation
from rlcheck.probes.node.collect import NodeObservation, TmsReading
from rlcheck.verdict import Status, Verdict

H200, GB300 = get_profile("h200"), get_profile("gb300")
RECIPE = recipes.get("qwen3-4b-colocated", "h200")  # 16 GPUs


def _node(name: str, head: bool = False, gpus: float = 8.0) -> NodeFacts:
    return NodeFacts(node_id=name * 8, address=f"10.0.0.{len(name)}", hostname=name, is_head=head, ray_gpus=gpus)


def _answer(node: NodeFacts, outcome: Outcome = Outcome.ANSWERED) -> NodeAnswer:
    obs = NodeObservation(hostname=node.hostname, gpus=(), gpu_source="nvidia-smi", gpu_error="",
                          driver_version="580.65.06", torch_version="2.11.0", torch_cuda="13.0",
                          tms=TmsReading(package_dir="", rule="x"), shm_bytes=None).to_dict()
    return NodeAnswer(node=node, outcome=outcome, elapsed_s=1.0, detail="1.0 s", observation=obs)


HEAD, W1, W2 = _node("h", head=True, gpus=0.0), _node("w1"), _node("w22")
FANOUT = FanoutResult(address="10.0.0.1:6379", connected=True, tried="ray at 10.0.0.1:6379 (30 s)",
                      nodes=(_answer(HEAD), _answer(W1), _answer(W2)))


def _inputs(fanout: FanoutResult | None = FANOUT, profile=H200) -> Inputs:
    return Inputs(recipe=RECIPE, profile=profile, fanout=fanout)


def test_a_cluster_check_without_the_fanout_is_a_bug_named_as_such():
    with pytest.raises(ValueError) as err:
        cluster.fanout_of(_inputs(None))
    assert str(err.value) == "a cluster check ran without the cluster fan-out (Inputs.fanout is None)"
    assert cluster.fanout_of(_inputs()) is FANOUT


def test_workers_are_the_nodes_without_the_head_resource():
    assert [cluster._workers(n) for n in (HEAD, W1)] == [False, True]


def _by_id() -> dict[str, object]:
    return {c.id: c for c in cluster.CHECKS}


def _nodes_judged(check_id: str, fanout: FanoutResult = FANOUT) -> list[Verdict]:
    check = _by_id()[check_id]
    return check.judge(fanout, _inputs(fanout))


def test_per_node_judges_every_selected_node_with_the_profile():
    seen = []

    def evaluate(facts, obs, profile):
        seen.append((facts.hostname, profile.name))
        return Verdict(status=Status.PASS, summary=facts.hostname)
    judge = cluster.per_node(evaluate, select=cluster._workers, none_selected="none here")
    verdicts = judge(FANOUT, _inputs(profile=GB300))
    assert seen == [("w1", "gb300"), ("w22", "gb300")] and [v.summary for v in verdicts] == ["w1", "w22"]


@pytest.mark.parametrize(("none_status", "select"), [(Status.UNKNOWN, lambda n: False), (Status.SKIP, None)])
def test_per_node_says_why_when_no_node_is_selected(none_status, select):
    kwargs = {"none_status": none_status} if select is None else {"none_status": none_status, "select": select}
    judge = cluster.per_node(lambda f, o, p: Verdict(status=Status.PASS, summary=""), none_selected="no node here",
                             **kwargs)
    only_head = FanoutResult(address="a", connected=True, tried="t", nodes=())
    verdicts = judge(only_head if select is None else FANOUT, _inputs())
    assert [(v.status, v.summary) for v in verdicts] == [(none_status, "no node here")]


def test_the_worker_checks_say_the_cluster_has_only_its_head():
    only_head = FanoutResult(address="a", connected=True, tried="t", nodes=(_answer(HEAD),))
    for check_id in ("cluster_node_gpus", "cluster_node_efa"):
        verdicts = _nodes_judged(check_id, only_head)
        assert [(v.status, v.summary) for v in verdicts] == [(Status.SKIP, cluster.ONLY_HEAD)]
    assert cluster.ONLY_HEAD == "the cluster has no worker node, only its head: no GPU node to judge"


def test_the_head_check_judges_the_head_and_without_one_is_unknown():
    verdicts = _nodes_judged("cluster_head_gpuless")
    assert len(verdicts) == 1 and verdicts[0].status is Status.PASS
    headless = FanoutResult(address="a", connected=True, tried="t", nodes=(_answer(W1),))
    assert [(v.status, v.summary) for v in _nodes_judged("cluster_head_gpuless", headless)] == [
        (Status.UNKNOWN, "no alive node carries Ray's head resource (node:__internal_head__)")]


def test_every_node_check_judges_every_node():
    assert len(_nodes_judged("cluster_node_driver")) == 3


def test_each_node_says_whether_it_answered_or_ray_was_not_reached():
    assert cluster._nodes_answer(FANOUT, _inputs()) == [evaluate_node_answer(a) for a in FANOUT.nodes]
    unreached = FanoutResult(address="10.0.0.9:6379", connected=False, tried="t", error="refused")
    assert cluster._nodes_answer(unreached, _inputs(unreached)) == [evaluate_reachable(unreached)]


@pytest.mark.parametrize(("gpus", "status", "summary"), [
    (8.0, Status.PASS, "16 GPU(s) on 3 alive node(s); recipe qwen3-4b-colocated asks for 16"),
    (4.0, Status.FAIL, "8 GPU(s) on 3 alive node(s); recipe qwen3-4b-colocated asks for 16: its placement group "
                       "would wait forever"),
])
def test_the_recipes_gpus_against_the_ones_ray_advertises(gpus, status, summary):
    fanout = FanoutResult(address="a", connected=True, tried="t",
                          nodes=(_answer(HEAD), _answer(_node("w1", gpus=gpus)), _answer(_node("w22", gpus=gpus))))
    verdict = cluster._cluster_gpus(fanout, _inputs(fanout))
    assert (verdict.status, verdict.summary) == (status, summary)


def test_a_per_node_check_that_names_no_reason_says_there_is_no_node():
    judge = cluster.per_node(lambda f, o, p: Verdict(status=Status.PASS, summary=""), select=lambda n: False)
    assert [(v.status, v.summary) for v in judge(FANOUT, _inputs())] == [(Status.SKIP, "no node to judge")]


@pytest.fixture
def pairs(monkeypatch):
    calls = []
    monkeypatch.setattr(cluster, "run_pairs", lambda address, **kw: calls.append((address, kw)) or PairsObservation(
        address=address, connected=True, tried="ran"))
    return calls


@pytest.mark.parametrize(("profile", "floor"), [(H200, None), (GB300, None)])
def test_the_pairs_run_on_two_answering_nodes_with_the_measured_floor(pairs, profile, floor):
    obs = cluster._pairs(_inputs(profile=profile))
    assert obs == PairsObservation(address="10.0.0.1:6379", connected=True, tried="ran")
    assert pairs == [("10.0.0.1:6379", {"nodes": 3, "floor_gbps": floor})]


def test_the_pairs_floor_is_the_profiles_measured_inter_node_floor(pairs):
    import dataclasses
    measured = dataclasses.replace(H200, thresholds={**H200.thresholds, "nccl_pair_min_busbw_gbps": 20.0},
                                   source={**H200.source, "nccl_pair_min_busbw_gbps": "measured"},
                                   provenance={**H200.provenance, "nccl_pair_min_busbw_gbps": "measured"})
    cluster._pairs(_inputs(profile=measured))
    assert pairs == [("10.0.0.1:6379", {"nodes": 3, "floor_gbps": 20.0})]


@pytest.mark.parametrize("fanout", [
    FanoutResult(address="a:1", connected=False, tried="t", error="refused"),
    FanoutResult(address="a:1", connected=True, tried="t", nodes=(_answer(HEAD), _answer(W1, Outcome.TIMEOUT))),
    FanoutResult(address="a:1", connected=True, tried="t", nodes=(_answer(W1), _answer(W2, Outcome.DIED))),
])
def test_the_pairs_do_not_run_without_ray_or_two_answering_nodes(pairs, fanout):
    obs = cluster._pairs(_inputs(fanout))
    answered = tuple(a.node for a in fanout.nodes if a.outcome is Outcome.ANSWERED)
    assert obs == PairsObservation(address="a:1", connected=fanout.connected, tried="t", error=fanout.error,
                                   nodes=answered)
    assert pairs == []


def test_two_answering_nodes_are_enough_to_pair(pairs):
    fanout = FanoutResult(address="a:1", connected=True, tried="t",
                          nodes=(_answer(W1), _answer(W2), _answer(HEAD, Outcome.ERROR)))
    cluster._pairs(_inputs(fanout))
    assert pairs == [("a:1", {"nodes": 3, "floor_gbps": None})]
