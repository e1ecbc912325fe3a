"""The pairwise all-reduce as a rule table (rlcheck/probes/cluster/nccl_pairs.py): the plan (ring rounds, the
re-pairing of suspects, the all-nodes round's members), the slow rule on both sides of the reference and of the
profile's floor, and every verdict whole (status, node, summary, details, remedy): healthy, slow, hung, two nodes,
no pair run, the all-nodes round healthy, slow, hung and skipped."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.cluster.fanout_result import NodeFacts
from rlcheck.hardware import HardwareProfile, get_profile
from rlcheck.probes.cluster import nccl_pairs as np_
from rlcheck.probes.cluster.nccl_pairs import (
    FLOOR_KEY,
    REMEDY,
    GroupResult,
    PairOutcome,
    PairResult,
    PairsObservation,
    evaluate_nccl_pairs,
)
from rlcheck.verdict import Status, Verdict

H200 = get_profile("h200")
MEASURED, TIMEOUT, ERROR = PairOutcome.MEASURED, PairOutcome.TIMEOUT, PairOutcome.ERROR


def _floor(kind: str, gbps: float = 40.0) -> HardwareProfile:
    return dataclasses.replace(H200, thresholds=H200.thresholds.replace({FLOOR_KEY: gbps}),
                               source={**H200.source, FLOOR_KEY: "a test's figure"},
                               provenance={**H200.provenance, FLOOR_KEY: kind})


def _node(x: str, gpus: float = 8.0) -> NodeFacts:
    return NodeFacts(node_id=f"id-{x}-0000", address=f"10.0.0.{'abcdefg'.index(x) + 1}", hostname=f"gpu-{x}",
                     is_head=x == "a", ray_gpus=gpus)


def _id(x: str) -> str:
    return f"id-{x}-0000"


def _p(a: str, b: str, gbps: float | None, outcome: PairOutcome = MEASURED, *, backend: str = "nccl",
       repair: bool = False) -> PairResult:
    detail = {MEASURED: "", TIMEOUT: "not done within 40 s", ERROR: "DistError: connection refused"}[outcome]
    return PairResult(first=_id(a), second=_id(b), backend=backend, outcome=outcome, busbw_gbps=gbps, detail=detail,
                      repair=repair)


def _obs(names: str, *pairs: PairResult, group: GroupResult | None = None, skipped: str = "") -> PairsObservation:
    return PairsObservation(address="10.0.0.1:6379", connected=True, tried="ray.init", size_bytes=1 << 20,
                            iterations=20, nodes=tuple(_node(x) for x in names), pairs=pairs, all_nodes=group,
                            all_nodes_skipped=skipped)


def _group(names: str, gbps: float | None, outcome: PairOutcome = MEASURED) -> GroupResult:
    return GroupResult(nodes=tuple(_id(x) for x in names), backend="nccl", outcome=outcome, busbw_gbps=gbps,
                       detail="" if outcome is MEASURED else "not done within 60 s")


def _where(x: str) -> str:
    return _node(x).where


def _basis(ref: str, floor: str = "") -> str:
    return (f"1048576 bytes x 20 all-reduces per pair; slow: below 0.25 x the median of the faster half of the pairs "
            f"({ref})" + (floor or "; no inter-node floor (nccl_pair_min_busbw_gbps) in the profile"))


def _with(x: str, gbps: float) -> str:
    return f"with {_where(x)}: {gbps:.3g} GB/s (nccl)"


def _v(x: str, status: Status, summary: str, basis: str) -> Verdict:
    return Verdict(status=status, node=f"gpu-{x}", summary=f"{_where(x)}: {summary}", details=f"{basis}\nray node id: "
                   f"{_id(x)}", remedy="" if status is Status.PASS else REMEDY)


HEALTHY = _obs("abcd", _p("a", "b", 40.0), _p("c", "d", 50.0), _p("b", "c", 45.0), _p("d", "a", 42.0))
B_HEALTHY = _basis("47.5 GB/s")  # the faster half: 45 and 50
C_SLOW = _obs("abcd", _p("a", "b", 40.0), _p("c", "d", 2.0), _p("b", "c", 3.0), _p("d", "a", 42.0),
              _p("c", "a", 2.5, repair=True), group=_group("abcd", 1.5))
B_C_SLOW = _basis("40 GB/s")  # five pairs: the faster half is 3, 40, 42
C_HUNG = _obs("abcd", _p("a", "b", 40.0), _p("c", "d", None, TIMEOUT), _p("b", "c", None, ERROR), _p("d", "a", 42.0),
              group=_group("abd", None, TIMEOUT))
B_C_HUNG = _basis("42 GB/s")  # two pairs: the faster half is the faster one
HUNG_C = "timeout (not done within 40 s)"
ERROR_C = "error (DistError: connection refused)"
FLOOR_40 = " or below the h200 floor 40 GB/s (NCCL pairs)"

ROWS = {
    "healthy-ring": (HEALTHY, None, [
        _v("a", Status.PASS, f"all-reduce {_with('b', 40)}; {_with('d', 42)}", B_HEALTHY),
        _v("b", Status.PASS, f"all-reduce {_with('a', 40)}; {_with('c', 45)}", B_HEALTHY),
        _v("c", Status.PASS, f"all-reduce {_with('d', 50)}; {_with('b', 45)}", B_HEALTHY),
        _v("d", Status.PASS, f"all-reduce {_with('c', 50)}; {_with('a', 42)}", B_HEALTHY)]),
    "one-slow-node-and-a-slow-all-nodes-round": (C_SLOW, None, [
        _v("a", Status.PASS, f"all-reduce {_with('b', 40)}; {_with('d', 42)}; {_with('c', 2.5)}", B_C_SLOW),
        _v("b", Status.PASS, f"all-reduce {_with('a', 40)}; {_with('c', 3)}", B_C_SLOW),
        _v("c", Status.FAIL, f"every all-reduce with this node is slow: {_with('d', 2)}; {_with('b', 3)}; "
                             f"{_with('a', 2.5)}", B_C_SLOW),
        _v("d", Status.PASS, f"all-reduce {_with('c', 2)}; {_with('a', 42)}", B_C_SLOW),
        Verdict(status=Status.FAIL, remedy=REMEDY, summary="all 4 nodes together: 1.5 GB/s (nccl; pairs' reference "
                                                           "40 GB/s): slow; the pairs name gpu-c")]),
    "one-hung-node-and-a-hung-all-nodes-round": (C_HUNG, None, [
        _v("a", Status.PASS, f"all-reduce {_with('b', 40)}; {_with('d', 42)}", B_C_HUNG),
        _v("b", Status.WARN, f"an all-reduce with this node did not finish: {_with('a', 40)}; with {_where('c')}: "
                             f"{ERROR_C}", B_C_HUNG),
        _v("c", Status.UNKNOWN, f"no all-reduce with this node finished: with {_where('d')}: {HUNG_C}; with "
                                f"{_where('b')}: {ERROR_C}", B_C_HUNG),
        _v("d", Status.WARN, f"an all-reduce with this node did not finish: with {_where('c')}: {HUNG_C}; "
                             f"{_with('a', 42)}", B_C_HUNG),
        Verdict(status=Status.UNKNOWN, remedy=REMEDY, details="nodes: id-a-0000, id-b-0000, id-d-0000",
                summary="all 3 nodes together: timeout (not done within 60 s): the job's first all-reduce would hang "
                        "or fail the same way")]),
    "two-nodes-below-a-measured-floor": (_obs("ab", _p("a", "b", 12.0)), _floor("measured"), [
        _v("a", Status.FAIL, f"every all-reduce with this node is slow (two nodes: either one): {_with('b', 12)}",
           _basis("12 GB/s", FLOOR_40)),
        _v("b", Status.FAIL, f"every all-reduce with this node is slow (two nodes: either one): {_with('a', 12)}",
           _basis("12 GB/s", FLOOR_40))]),
    "two-nodes-at-the-floor": (_obs("ab", _p("a", "b", 40.0)), _floor("baseline"), [
        _v("a", Status.PASS, f"all-reduce {_with('b', 40)}", _basis("40 GB/s", FLOOR_40)),
        _v("b", Status.PASS, f"all-reduce {_with('a', 40)}", _basis("40 GB/s", FLOOR_40))]),
    "a-public-floor-names-no-node": (_obs("ab", _p("a", "b", 12.0)), _floor("public"), [
        _v("a", Status.PASS, f"all-reduce {_with('b', 12)}", _basis("12 GB/s")),
        _v("b", Status.PASS, f"all-reduce {_with('a', 12)}", _basis("12 GB/s"))]),
    "three-slow-nodes-in-a-ring-of-three": (
        _obs("abc", _p("a", "b", 40.0), _p("b", "c", 1.0), _p("c", "a", 1.0), skipped="2 node(s) finished a pair"),
        None, [
            _v("a", Status.PASS, f"all-reduce {_with('b', 40)}; {_with('c', 1)}", _basis("20.5 GB/s")),
            _v("b", Status.PASS, f"all-reduce {_with('a', 40)}; {_with('c', 1)}", _basis("20.5 GB/s")),
            _v("c", Status.FAIL, f"every all-reduce with this node is slow: {_with('b', 1)}; {_with('a', 1)}",
               _basis("20.5 GB/s")),
            Verdict(status=Status.SKIP, summary="all nodes together: not run (2 node(s) finished a pair)")]),
    "no-pair-ran": (_obs("ab"), None, [
        _v("a", Status.UNKNOWN, "no all-reduce with this node finished: none ran", _basis("none (no pair measured)")),
        _v("b", Status.UNKNOWN, "no all-reduce with this node finished: none ran", _basis("none (no pair measured)"))]),
    "a-pair-with-a-node-not-listed": (_obs("ab", _p("a", "b", 40.0), _p("a", "x", 41.0)), None, [
        _v("a", Status.PASS, f"all-reduce {_with('b', 40)}; with ?: 41 GB/s (nccl)", _basis("41 GB/s")),
        _v("b", Status.PASS, f"all-reduce {_with('a', 40)}", _basis("41 GB/s"))]),
    "two-nodes-skipped-round-is-not-said": (_obs("ab", _p("a", "b", 40.0), skipped="two nodes"), None, [
        _v("a", Status.PASS, f"all-reduce {_with('b', 40)}", _basis("40 GB/s")),
        _v("b", Status.PASS, f"all-reduce {_with('a', 40)}", _basis("40 GB/s"))]),
}


@pytest.mark.parametrize("row", ROWS)
def test_rules_table_nccl_pairs_verdicts(row):
    obs, profile, verdicts = ROWS[row]
    assert evaluate_nccl_pairs(obs, profile) == verdicts


def _round(obs: PairsObservation, gbps: float | None, outcome: PairOutcome = MEASURED,
           profile: HardwareProfile | None = None) -> Verdict:
    group = dataclasses.replace(obs, all_nodes=_group("abcd", gbps, outcome))
    return evaluate_nccl_pairs(group, profile)[-1]


@pytest.mark.parametrize(("obs", "gbps", "profile", "verdict"), [
    (HEALTHY, 11.875, None, Verdict(status=Status.PASS, summary="all 4 nodes together: 11.9 GB/s (nccl; pairs' "
                                                                "reference 47.5 GB/s)")),  # 0.25 x 47.5
    (HEALTHY, 11.87, None, Verdict(status=Status.FAIL, remedy=REMEDY, summary="all 4 nodes together: 11.9 GB/s (nccl; "
                                   "pairs' reference 47.5 GB/s): slow; every pair is healthy: look at the fabric")),
    (HEALTHY, 39.9, _floor("measured"), Verdict(status=Status.FAIL, remedy=REMEDY, summary="all 4 nodes together: "
                                                "39.9 GB/s (nccl; pairs' reference 47.5 GB/s): slow; every pair is "
                                                "healthy: look at the fabric")),
    (HEALTHY, 40.0, _floor("measured"), Verdict(status=Status.PASS, summary="all 4 nodes together: 40 GB/s (nccl; "
                                                                            "pairs' reference 47.5 GB/s)")),
    (dataclasses.replace(HEALTHY, pairs=(*HEALTHY.pairs, _p("a", "x", 1.0), _p("a", "y", 1.0))), 1.0, None,
     Verdict(status=Status.FAIL, remedy=REMEDY, summary="all 4 nodes together: 1 GB/s (nccl; pairs' reference 45 "
             "GB/s): slow; the pairs name id-x-0000, id-y-0000")),  # nodes no longer listed: by their ids
    (_obs("abcd"), 0.5, None, Verdict(status=Status.PASS, summary="all 4 nodes together: 0.5 GB/s (nccl; pairs' "
                                                                  "reference 0 GB/s)")),  # no pair to hold it to
    (HEALTHY, None, None, Verdict(status=Status.UNKNOWN, remedy=REMEDY,
                                  details="nodes: id-a-0000, id-b-0000, id-c-0000, id-d-0000",
                                  summary="all 4 nodes together: timeout (not done within 60 s): the job's first "
                                          "all-reduce would hang or fail the same way")),
])
def test_rules_table_nccl_pairs_all_nodes_round(obs, gbps, profile, verdict):
    outcome = MEASURED if gbps is not None else TIMEOUT
    assert _round(obs, gbps, outcome, profile) == verdict


def test_rules_table_nccl_pairs_round_skipped_only_said_for_three_nodes_or_more():
    three = _obs("abc", _p("a", "b", 40.0), skipped="1 node(s) finished a pair; it needs 3")
    assert evaluate_nccl_pairs(three, None)[-1] == Verdict(
        status=Status.SKIP, summary="all nodes together: not run (1 node(s) finished a pair; it needs 3)")
    assert len(evaluate_nccl_pairs(dataclasses.replace(three, all_nodes_skipped=""), None)) == 3


@pytest.mark.parametrize(("obs", "verdict"), [
    (PairsObservation(address="10.0.0.1:6379", connected=False, tried="ray.init (30 s)", error="connection refused"),
     Verdict(status=Status.UNKNOWN, details="tried: ray.init (30 s)",
             summary="pairwise all-reduce on Ray at 10.0.0.1:6379 not run: connection refused")),
    (_obs(""), Verdict(status=Status.SKIP, summary="0 node(s): no pair of nodes to all-reduce between")),
    (_obs("a"), Verdict(status=Status.SKIP, summary="1 node(s): no pair of nodes to all-reduce between")),
])
def test_rules_table_nccl_pairs_nothing_to_pair(obs, verdict):
    assert evaluate_nccl_pairs(obs, None) == [verdict]


@pytest.mark.parametrize(("profile", "floor"), [
    (None, None), (H200, None), (_floor("measured"), 40.0), (_floor("baseline", 12.5), 12.5), (_floor("public"), None),
])
def test_rules_table_nccl_pairs_floor(profile, floor):
    assert np_.pair_floor(profile) == floor


@pytest.mark.parametrize(("gbps", "backend", "reference", "floor", "slow"), [
    (1.0, "gloo", 4.0, None, False), (0.999, "gloo", 4.0, None, True),  # 0.25 x the reference
    (40.0, "nccl", None, 40.0, False), (39.99, "nccl", None, 40.0, True),  # the floor
    (39.99, "gloo", None, 40.0, False),  # the floor is for NCCL pairs
    (39.99, "nccl", 100.0, 40.0, True), (24.99, "gloo", 100.0, 40.0, True), (25.0, "gloo", 100.0, 40.0, False),
    (0.0, "nccl", None, None, False), (None, "nccl", 4.0, 40.0, False),  # not measured: never slow
])
def test_rules_table_nccl_pairs_is_slow(gbps, backend, reference, floor, slow):
    pair = PairResult(first="a", second="b", backend=backend, outcome=MEASURED if gbps is not None else TIMEOUT,
                      busbw_gbps=gbps)
    assert np_.is_slow(pair, reference, floor) is slow


@pytest.mark.parametrize(("figures", "reference"), [
    ((), None), ((None, None), None), ((4.0,), 4.0), ((1.0, 4.0), 4.0), ((4.0, 1.0, 2.0), 3.0),
    ((1.0, 2.0, 3.0, 4.0), 3.5), ((5.0, None, 1.0, 2.0, 3.0, 4.0), 4.0),
])
def test_rules_table_nccl_pairs_reference(figures, reference):
    pairs = [PairResult(first="a", second="b", backend="gloo", outcome=MEASURED if g is not None else ERROR,
                        busbw_gbps=g) for g in figures]
    assert np_.reference_gbps(pairs) == reference


SLOW, FAST = 1.0, 40.0
PLANS = {  # pairs -> (suspects, cleared), the re-pairing
    "c-slow-in-a-ring-of-four": ([_p("a", "b", FAST), _p("c", "d", SLOW), _p("b", "c", SLOW), _p("d", "a", FAST)],
                                 ([_id("c")], [_id("a")]), [[(_id("a"), _id("c"))]]),
    "two-suspects-in-one-round": ([_p("a", "b", SLOW), _p("c", "d", FAST), _p("e", "f", SLOW), _p("b", "c", SLOW),
                                   _p("d", "e", SLOW), _p("f", "a", FAST)],
                                  ([_id("b"), _id("e")], []), [[(_id("d"), _id("b")), (_id("a"), _id("e"))]]),
    "a-partner-busy-opens-a-round": ([_p("a", "b", FAST), _p("c", "d", SLOW), _p("d", "e", SLOW),
                                      _p("c", "e", SLOW)],
                                     ([_id("c"), _id("d"), _id("e")], [_id("a"), _id("b")]),
                                     [[(_id("a"), _id("c")), (_id("b"), _id("d"))], [(_id("a"), _id("e"))]]),
    "a-cleared-partner-before-a-mixed-one": ([_p("a", "b", SLOW), _p("c", "d", SLOW), _p("c", "e", FAST)],
                                             ([_id("a"), _id("b"), _id("d")], [_id("e")]),
                                             [[(_id("e"), _id("a")), (_id("c"), _id("b"))], [(_id("e"), _id("d"))]]),
    "met-everyone-already": ([_p("a", "b", FAST), _p("b", "c", SLOW), _p("c", "a", SLOW)],
                             ([_id("c")], []), []),
    "two-nodes-both-slow-by-the-floor": ([_p("a", "b", 12.0)], ([_id("a"), _id("b")], []), []),
    "hung-pairs-judge-nothing": ([_p("a", "b", FAST), _p("b", "c", None, TIMEOUT), _p("c", "d", None, ERROR)],
                                 ([], [_id("a"), _id("b")]), []),
    "a-suspect-without-a-partner-stops-no-other": ([_p("a", "b", FAST), _p("b", "c", SLOW), _p("c", "a", SLOW),
                                                    _p("d", "e", SLOW)],
                                                   ([_id("c"), _id("d"), _id("e")], []),
                                                   [[(_id("a"), _id("d")), (_id("b"), _id("e"))]]),
    "a-suspect-by-the-floor-alone": ([_p("a", "b", FAST), _p("c", "d", 12.0), _p("b", "c", 12.0), _p("d", "a", FAST)],
                                     ([_id("c")], [_id("a")]), [[(_id("a"), _id("c"))]]),  # 12 < floor 20 only
}
FLOORS = {"two-nodes-both-slow-by-the-floor": 40.0, "a-suspect-by-the-floor-alone": 20.0}


@pytest.mark.parametrize("row", PLANS)
def test_rules_table_nccl_pairs_suspects_and_repair(row):
    pairs, found, rounds = PLANS[row]
    floor = FLOORS.get(row)
    assert np_.suspects(pairs, floor) == found
    assert np_.repair_rounds(pairs, floor) == rounds


@pytest.mark.parametrize(("ids", "rounds"), [
    ([], []), (["a"], []), (["a", "b"], [[("a", "b")]]),
    (["a", "b", "c"], [[("a", "b")], [("b", "c")], [("c", "a")]]),
    (["a", "b", "c", "d"], [[("a", "b"), ("c", "d")], [("b", "c"), ("d", "a")]]),
    (["a", "b", "c", "d", "e"], [[("a", "b"), ("c", "d")], [("b", "c"), ("d", "e")], [("e", "a")]]),
])
def test_rules_table_nccl_pairs_ring_rounds(ids, rounds):
    assert np_.ring_rounds(ids) == rounds


def test_rules_table_nccl_pairs_group_members_and_backends():
    pairs = [_p("b", "a", FAST), _p("c", "d", None, TIMEOUT), _p("d", "e", SLOW), _p("e", "f", None, ERROR)]
    order = [_id(x) for x in "fedcba"]
    assert np_.group_nodes(pairs, order) == [_id("e"), _id("d"), _id("b"), _id("a")]
    one, cpu, half = _node("a", 1.0), _node("b", 0.0), _node("c", 0.5)
    assert np_.backend_for(one, one) == "nccl" and np_.backend_for(one, half) == "gloo"
    assert np_.backend_for(cpu, one) == "gloo" and np_.backend_for(cpu, half) == "gloo"
    assert np_.paired_nodes([cpu, one, _node("d", 8.0), half]) == [one, _node("d", 8.0)]
    assert np_.paired_nodes([cpu, one, half]) == [cpu, one, half]  # one GPU node: every node, over gloo
    assert np_.paired_nodes([]) == []


def test_rules_table_nccl_pairs_observation_from_dict_of_an_older_driver():
    """An observation from before the all-nodes round (and one with no pairs or nodes) reads with their defaults."""
    bare = {"address": "a:1", "connected": True, "tried": "ray.init"}
    assert PairsObservation.from_dict(bare) == PairsObservation(address="a:1", connected=True, tried="ray.init")
    whole = PairsObservation.from_dict(C_SLOW.to_dict())
    assert whole == C_SLOW and isinstance(whole.all_nodes, GroupResult) and whole.all_nodes.outcome is MEASURED
    assert PairsObservation.from_dict({**C_HUNG.to_dict(), "all_nodes": None}) == dataclasses.replace(C_HUNG,
                                                                                                    all_nodes=None)
