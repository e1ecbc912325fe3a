"""Pairwise all-reduce observations for the judge's tests, with bandwidths recorded from a real run.

The figures are those the four-node loopback Ray of tests/probes/cluster/test_pairs_loopback.py measured on
2026-12-01 (gloo, 256 KiB x 5 all-reduces, one node sleeping 0.4 s before each): healthy pairs 0.108 and 0.256 GB/s,
pairs with the slowed node 0.00063 to 0.00065 GB/s.
"""

from __future__ import annotations

import dataclasses

from rlcheck.cluster.fanout_result import NodeFacts
from rlcheck.probes.cluster.nccl_pairs import GroupResult, PairOutcome, PairResult, PairsObservation

HEALTHY_GBPS = (0.108, 0.256)
SLOW_GBPS = 0.00065


def facts(name: str, gpus: float = 0.0, *, head: bool = False) -> NodeFacts:
    return NodeFacts(node_id=name, address="127.0.0.1", hostname=name, is_head=head, ray_gpus=gpus)


def pair(a: str, b: str, gbps: float | None, *, outcome: PairOutcome = PairOutcome.MEASURED, backend: str = "gloo",
         repair: bool = False) -> PairResult:
    detail = "" if outcome is PairOutcome.MEASURED else ("not done within 40 s" if outcome is PairOutcome.TIMEOUT
                                                         else "DistError: connection refused")
    return PairResult(first=a, second=b, backend=backend, outcome=outcome, busbw_gbps=gbps, detail=detail,
                      repair=repair)


def observed(names: list[str], *pairs: PairResult, gpus: float = 0.0) -> PairsObservation:
    return PairsObservation(address="127.0.0.1:6379", connected=True, tried="ray.init", size_bytes=256 << 10,
                            iterations=5, nodes=tuple(facts(n, gpus) for n in names), pairs=pairs)


FOUR = ["n0", "n1", "n2", "n3"]
RING_HEALTHY = observed(FOUR, pair("n0", "n1", 0.108), pair("n2", "n3", 0.256), pair("n1", "n2", 0.2),
                        pair("n3", "n0", 0.15))
RING_N2_SLOW = observed(FOUR, pair("n0", "n1", 0.108), pair("n2", "n3", SLOW_GBPS), pair("n1", "n2", 0.00063),
                        pair("n3", "n0", 0.256), pair("n0", "n2", SLOW_GBPS, repair=True))
RING_N2_HUNG = observed(FOUR, pair("n0", "n1", 0.108), pair("n2", "n3", None, outcome=PairOutcome.TIMEOUT),
                        pair("n1", "n2", None, outcome=PairOutcome.TIMEOUT), pair("n3", "n0", 0.256))



def together(obs: PairsObservation, gbps: float | None,
             outcome: PairOutcome = PairOutcome.MEASURED) -> PairsObservation:
    """obs with its all-nodes round (every node of FOUR) measured at gbps, or not done."""
    detail = "" if outcome is PairOutcome.MEASURED else "not done within 40 s"
    return dataclasses.replace(obs, all_nodes=GroupResult(nodes=tuple(FOUR), backend="gloo", outcome=outcome,
                                                          busbw_gbps=gbps, detail=detail))


ALL_HEALTHY = together(RING_HEALTHY, 0.12)
ALL_HUNG = together(RING_HEALTHY, None, PairOutcome.TIMEOUT)
ALL_SLOW = together(RING_HEALTHY, 0.002)
