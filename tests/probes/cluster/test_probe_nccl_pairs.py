"""The pairwise all-reduce's planning and judging (pure), and one rank run for real with gloo on this machine."""

from __future__ import annotations

import dataclasses
import json

import pytest

from rlcheck.hardware import get_profile
from rlcheck.probes.cluster import nccl_pairs as np_
from rlcheck.probes.cluster.nccl_pairs import PairOutcome, PairsObservation, evaluate_nccl_pairs
from rlcheck.probes.node.pair_member import all_reduce_member, bus_bandwidth_gbps, pick_port
from rlcheck.process import subproc
from rlcheck.verdict import Status
from tests.pair_observations import (
    RING_HEALTHY,
    RING_N2_HUNG,
    RING_N2_SLOW,
    SLOW_GBPS,
    facts,
    observed,
    pair,
)

H200 = get_profile("h200")


def _by_node(obs, profile=None):
    return {v.node: v for v in evaluate_nccl_pairs(obs, profile)}


@pytest.mark.parametrize("count", [2, 3, 4, 5, 6])
def test_probe_nccl_pairs_ring_rounds_share_no_node_and_pair_every_neighbour(count):
    ids = [f"n{i}" for i in range(count)]
    rounds = np_.ring_rounds(ids)
    for round_ in rounds:
        nodes = [n for p in round_ for n in p]
        assert len(nodes) == len(set(nodes))
    edges = {frozenset(p) for r in rounds for p in r}
    assert len(edges) == (1 if count == 2 else count)
    assert all(sum(n in e for e in edges) == (1 if count == 2 else 2) for n in ids)
    assert len(rounds) <= (2 if count % 2 == 0 else 3)
    assert np_.ring_rounds(["n0"]) == [] and np_.ring_rounds([]) == []


def test_probe_nccl_pairs_slow_boundaries_reference_and_floor():
    pairs = [pair("a", "b", 1.0), pair("c", "d", 4.0), pair("b", "c", 3.0), pair("d", "a", 0.1)]
    assert np_.reference_gbps(pairs) == 3.5  # the median of the faster half: 3.0 and 4.0
    assert not np_.is_slow(pair("a", "b", 0.875), 3.5, None) and np_.is_slow(pair("a", "b", 0.8749), 3.5, None)
    nccl = pair("a", "b", 39.9, backend="nccl")
    assert np_.is_slow(nccl, 40.0, 40.0) and not np_.is_slow(pair("a", "b", 40.0, backend="nccl"), 40.0, 40.0)
    assert not np_.is_slow(pair("a", "b", 39.9), 40.0, 40.0)  # the NCCL floor does not judge a gloo pair
    assert not np_.is_slow(pair("a", "b", None, outcome=PairOutcome.TIMEOUT), 40.0, 40.0)
    assert np_.reference_gbps([pair("a", "b", None, outcome=PairOutcome.ERROR)]) is None


def test_probe_nccl_pairs_repair_pairs_each_suspect_with_a_healthy_node_it_has_not_met():
    ring = [p for p in RING_N2_SLOW.pairs if not p.repair]
    assert np_.suspects(ring, None) == (["n2"], ["n0"])
    assert np_.repair_rounds(ring, None) == [[("n0", "n2")]]
    assert np_.repair_rounds(list(RING_HEALTHY.pairs), None) == []


def test_probe_nccl_pairs_a_node_between_two_slow_ones_is_cleared_by_its_repair():
    """Six nodes, n1 and n3 slow: n2 sits between them and all its ring pairs are slow; its re-pair is not."""
    names = [f"n{i}" for i in range(6)]
    slow = {"n1", "n3"}
    ring = [pair(a, b, SLOW_GBPS if {a, b} & slow else 0.2) for r in np_.ring_rounds(names) for a, b in r]
    suspect, _ = np_.suspects(ring, None)
    assert sorted(suspect) == ["n1", "n2", "n3"]
    repairs = [p for r in np_.repair_rounds(ring, None) for p in r]
    assert {frozenset(p) for p in repairs} and all({"n0", "n4", "n5"} & set(p) for p in repairs)
    done = ring + [pair(a, b, SLOW_GBPS if {a, b} & slow else 0.2, repair=True) for a, b in repairs]
    verdicts = _by_node(observed(names, *done))
    assert {n: v.status for n, v in verdicts.items()} == {"n0": Status.PASS, "n1": Status.FAIL, "n2": Status.PASS,
                                                         "n3": Status.FAIL, "n4": Status.PASS, "n5": Status.PASS}


def test_probe_nccl_pairs_verdicts_slow_hung_and_healthy():
    slow = _by_node(RING_N2_SLOW)
    assert slow["n2"].status is Status.FAIL and slow["n2"].remedy
    assert "every all-reduce with this node is slow: with n3 127.0.0.1" not in slow["n2"].summary  # where, not id
    assert "0.00065 GB/s (gloo)" in slow["n2"].summary and "no inter-node floor" in slow["n2"].details
    assert {slow[n].status for n in ("n0", "n1", "n3")} == {Status.PASS}
    hung = _by_node(RING_N2_HUNG)
    assert hung["n2"].status is Status.UNKNOWN and "timeout (not done within 40 s)" in hung["n2"].summary
    assert hung["n1"].status is Status.WARN and hung["n3"].status is Status.WARN and hung["n0"].status is Status.PASS
    assert all(v.status is Status.PASS for v in _by_node(RING_HEALTHY).values())


def test_probe_nccl_pairs_two_nodes_only_a_floor_can_fail_and_then_both():
    profile = H200.__class__(**{**{f: getattr(H200, f) for f in H200.__slots__},  # type: ignore[attr-defined]
                                "thresholds": {**H200.thresholds, np_.FLOOR_KEY: 40.0},
                                "source": {**H200.source, np_.FLOOR_KEY: "test"},
                                "provenance": {**H200.provenance, np_.FLOOR_KEY: "measured"}})
    below = observed(["a", "b"], pair("a", "b", 12.0, backend="nccl"), gpus=8)
    assert {v.status for v in evaluate_nccl_pairs(below, H200)} == {Status.PASS}  # no floor in the profile
    verdicts = evaluate_nccl_pairs(below, profile)
    assert [v.status for v in verdicts] == [Status.FAIL, Status.FAIL]
    assert "(two nodes: either one)" in verdicts[0].summary and "floor 40 GB/s" in verdicts[0].details
    above = observed(["a", "b"], pair("a", "b", 40.0, backend="nccl"), gpus=8)
    assert {v.status for v in evaluate_nccl_pairs(above, profile)} == {Status.PASS}


def test_probe_nccl_pairs_unreached_lone_and_failed():
    unreached = PairsObservation(address="x:1", connected=False, tried="ray.init", error="refused")
    (verdict,) = evaluate_nccl_pairs(unreached, None)
    assert verdict.status is Status.UNKNOWN and "refused" in verdict.summary
    (lone,) = evaluate_nccl_pairs(observed(["a"]), None)
    assert lone.status is Status.SKIP and "1 node(s)" in lone.summary
    failed = observed(["a", "b"], pair("a", "b", None, outcome=PairOutcome.ERROR))
    assert {v.status for v in evaluate_nccl_pairs(failed, None)} == {Status.UNKNOWN}


def test_probe_nccl_pairs_gpu_nodes_pair_with_nccl_else_every_node_with_gloo():
    head, g1, g2 = facts("head", head=True), facts("g1", 8), facts("g2", 8)
    assert np_.paired_nodes([head, g1, g2]) == [g1, g2] and np_.backend_for(g1, g2) == "nccl"
    assert np_.paired_nodes([head, g1]) == [head, g1] and np_.backend_for(head, g1) == "gloo"


def test_probe_nccl_pairs_observation_round_trips_and_bus_bandwidth():
    assert PairsObservation.from_dict(json.loads(json.dumps(RING_N2_SLOW.to_dict()))) == RING_N2_SLOW
    assert bus_bandwidth_gbps(1_000_000_000, 1.0, 2) == 1.0 and bus_bandwidth_gbps(10**9, 1.0, 8) == 1.75


def test_probe_nccl_pairs_member_runs_a_gloo_rank_and_imports_nothing_heavy():
    got = all_reduce_member(rank=0, world_size=1, master_addr="127.0.0.1", master_port=pick_port("127.0.0.1"),
                            backend="gloo", size_bytes=4096, iterations=2, timeout_s=30)
    assert got["size_bytes"] == 4096 and got["seconds"] > 0
    code = ("import sys, rlcheck.probes.node.pair_member; "
            "print(sorted(m for m in ('ray', 'torch', 'numpy') if m in sys.modules))")
    done = subproc.python(code, timeout_s=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.tail()


def test_probe_nccl_pairs_check_runs_no_driver_without_two_answering_nodes():
    """The registry's collector: an unreached Ray or a lone answering node needs no pairs driver."""
    import dataclasses

    from rlcheck import preflight
    from rlcheck.cluster.fanout_result import FanoutResult
    from rlcheck.preflight import gate
    from tests.gpu_health_recordings import fanout, node, reading

    check = preflight.get("cluster_pairs_allreduce")
    inputs = gate.inputs_for("qwen3-4b-colocated", H200)
    lone = check.run(dataclasses.replace(inputs, fanout=fanout(node(reading()))))
    assert [v.status for v in lone] == [Status.SKIP] and "1 node(s)" in lone[0].summary
    unreached = FanoutResult(address="127.0.0.1:1", connected=False, tried="ray.init", error="connection refused")
    (verdict,) = check.run(dataclasses.replace(inputs, fanout=unreached))
    assert verdict.status is Status.UNKNOWN and "connection refused" in verdict.summary


def test_probe_nccl_pairs_all_nodes_round_judged_against_the_pairs():
    from tests.pair_observations import ALL_HEALTHY, ALL_HUNG, ALL_SLOW, FOUR, RING_N2_SLOW, together

    def group(obs):
        return _by_node(obs)[None]

    assert group(ALL_HEALTHY).status is Status.PASS and "all 4 nodes together: 0.12 GB/s" in group(ALL_HEALTHY).summary
    assert group(ALL_HUNG).status is Status.UNKNOWN and "timeout (not done within 40 s)" in group(ALL_HUNG).summary
    slow = group(ALL_SLOW)
    assert slow.status is Status.FAIL and "every pair is healthy: look at the fabric" in slow.summary
    named = group(together(RING_N2_SLOW, 0.0006))
    assert named.status is Status.FAIL and "the pairs name n2" in named.summary
    # boundary: SLOW_FRACTION x the reference (the median of the faster half of the ring: 0.2, 0.256 -> 0.228)
    reference = np_.reference_gbps(list(ALL_HEALTHY.pairs))
    assert group(together(ALL_HEALTHY, np_.SLOW_FRACTION * reference)).status is Status.PASS
    assert group(together(ALL_HEALTHY, np_.SLOW_FRACTION * reference * 0.99)).status is Status.FAIL
    skipped = dataclasses.replace(ALL_HEALTHY, all_nodes=None,
                                  all_nodes_skipped="2 node(s) finished a pair; it needs 3")
    assert group(skipped).status is Status.SKIP
    assert np_.group_nodes(list(RING_N2_HUNG.pairs), FOUR) == ["n0", "n1", "n3"]
    assert PairsObservation.from_dict(ALL_HUNG.to_dict()) == ALL_HUNG
