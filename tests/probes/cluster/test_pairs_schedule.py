"""The pairwise all-reduce's schedule at 16 simulated nodes (plan only, no GPU, no Ray): a fixed number of rounds,
every pair of a round at once, and the re-pairing of suspects in one round, not one round per suspect."""

from __future__ import annotations

import pytest

from rlcheck.probes.cluster import nccl_pairs as plan
from rlcheck.probes.cluster import pairs_driver
from rlcheck.probes.cluster.nccl_pairs import evaluate_nccl_pairs
from rlcheck.verdict import Status
from tests.pair_observations import SLOW_GBPS, observed, pair

SIXTEEN = [f"n{i:02d}" for i in range(16)]


def _run(rounds: list[list[tuple[str, str]]], slow: set[str], *, repair: bool = False) -> list:
    """Each round as the driver would measure it: a pair with a slow node is slow, the others healthy."""
    return [pair(a, b, SLOW_GBPS if {a, b} & slow else 0.2, repair=repair) for r in rounds for a, b in r]


def _disjoint(round_: list[tuple[str, str]]) -> bool:
    nodes = [n for p in round_ for n in p]
    return len(nodes) == len(set(nodes))


def test_pairs_schedule_16_nodes_is_two_rounds_of_eight_pairs_at_once():
    rounds = plan.ring_rounds(SIXTEEN)
    assert [len(r) for r in rounds] == [8, 8]  # 16 ring pairs, not 16 one after another
    assert all(_disjoint(r) for r in rounds)
    edges = {frozenset(p) for r in rounds for p in r}
    assert edges == {frozenset((SIXTEEN[i], SIXTEEN[(i + 1) % 16])) for i in range(16)}


@pytest.mark.parametrize("count", [15, 16, 17, 64, 255, 256, 1000])
def test_pairs_schedule_ring_rounds_stay_fixed_as_the_cluster_grows(count):
    ids = [f"n{i}" for i in range(count)]
    rounds = plan.ring_rounds(ids)
    assert len(rounds) == (2 if count % 2 == 0 else 3)
    assert sum(len(r) for r in rounds) == count and all(_disjoint(r) for r in rounds)
    assert pairs_driver.max_rounds(count) == len(rounds) + pairs_driver.MAX_REPAIR_ROUNDS + 1


def test_pairs_schedule_16_nodes_four_suspects_are_repaired_in_one_round_and_the_innocent_one_cleared():
    slow = {"n03", "n05", "n11"}  # n04 sits between two slow nodes: both its ring pairs are slow
    ring = _run(plan.ring_rounds(SIXTEEN), slow)
    suspect, _ = plan.suspects(ring, None)
    assert sorted(suspect) == ["n03", "n04", "n05", "n11"]
    repairs = plan.repair_rounds(ring, None)
    assert len(repairs) == 1 and len(repairs[0]) == 4 and _disjoint(repairs[0])
    assert len(repairs) <= pairs_driver.MAX_REPAIR_ROUNDS
    met = {frozenset(p.nodes) for p in ring}
    assert all(frozenset(p) not in met for p in repairs[0])
    obs = observed(SIXTEEN, *ring, *_run(repairs, slow, repair=True))
    status = {v.node: v.status for v in evaluate_nccl_pairs(obs, None) if v.node}
    assert sorted(n for n, s in status.items() if s is Status.FAIL) == sorted(slow)
    assert status["n04"] is Status.PASS


def test_pairs_schedule_a_suspect_with_no_free_partner_waits_one_more_round():
    four = SIXTEEN[:4]
    ring = _run(plan.ring_rounds(four), {"n00", "n02"})  # every pair touches a slow node: no healthy partner
    assert plan.repair_rounds(ring, None) == []
    six = SIXTEEN[:6]
    ring = _run(plan.ring_rounds(six), {"n01", "n03"})  # suspects n01, n02, n03; partners n05, n00, n04
    repairs = plan.repair_rounds(ring, None)  # n04 has met n03 and the other two are taken: a second round
    assert repairs == [[("n05", "n01"), ("n00", "n02")], [("n05", "n03")]]
    assert len(repairs) <= pairs_driver.MAX_REPAIR_ROUNDS


def test_pairs_schedule_driver_deadline_grows_with_the_nodes_of_each_round():
    small = pairs_driver.deadline_s(_args(16))
    big = pairs_driver.deadline_s(_args(1000))
    rounds = pairs_driver.max_rounds(1000)
    assert big > small
    assert big >= 30.0 + rounds * (120.0 + pairs_driver.PORT_TIMEOUT_S) + pairs_driver.MARGIN_S


def _args(nodes: int):
    import argparse

    return argparse.Namespace(connect_timeout_s=30.0, nodes=nodes, pair_timeout_s=120.0)
