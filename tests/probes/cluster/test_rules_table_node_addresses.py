"""Each node's Ray address as a rule table (rlcheck/probes/cluster/node_addresses.py): loopback on one host and on
two, a shared address, Docker's bridge, link-local, host names, mixed families, with whole summaries and details."""

from __future__ import annotations

import pytest

from rlcheck import catalog
from rlcheck.cluster.fanout_result import FanoutResult, NodeAnswer, NodeFacts, Outcome
from rlcheck.probes.cluster.cluster_reach import REACH_REMEDY
from rlcheck.probes.cluster.node_addresses import FAILURE_ID, evaluate_node_addresses, parse
from rlcheck.verdict import Status

REMEDY = catalog.get(FAILURE_ID).remedy


def _facts(address: str, hostname: str, head: bool = False) -> NodeFacts:
    return NodeFacts(node_id=f"{hostname}-{address}", address=address, hostname=hostname, is_head=head, ray_gpus=8.0)


def _verdict(*nodes: tuple[str, str]):
    answers = tuple(NodeAnswer(node=_facts(a, h, i == 0), outcome=Outcome.ANSWERED, elapsed_s=1.0, detail="r")
                    for i, (a, h) in enumerate(nodes))
    return evaluate_node_addresses(FanoutResult(address="10.0.0.1:6379", connected=True, tried="t", nodes=answers))


def _where(address: str, hostname: str, head: bool = False) -> str:
    return _facts(address, hostname, head).where


@pytest.mark.parametrize(("nodes", "status", "summary"), [
    ((("10.0.0.1", "a"), ("10.0.0.2", "b")), Status.PASS, "2 node address(es), one family, distinct, routable"),
    ((("gpu-a", "a"),), Status.PASS, "1 node address(es), one family, distinct, routable (one node: nothing else "
                                     "dials it)"),
    ((("127.0.0.1", "a"), ("127.0.0.1", "a")), Status.PASS, "2 node address(es), one family, distinct, routable"),
    ((("127.0.0.1", "a"), ("127.0.0.1", "b")), Status.FAIL,
     f"node addresses the other nodes cannot reach: {_where('127.0.0.1', 'a', True)}: 127.0.0.1 reaches only its own "
     f"host; {_where('127.0.0.1', 'b')}: 127.0.0.1 reaches only its own host"),
    ((("172.17.0.2", "a"), ("172.17.0.2", "b")), Status.FAIL,
     "node addresses the other nodes cannot reach: 172.17.0.2 is claimed by 2 nodes (a, b): traffic for all of them "
     f"goes to one; {_where('172.17.0.2', 'a', True)}: 172.17.0.2 is in Docker's default bridge 172.17.0.0/16 (the "
     f"host's own container network; use host networking); {_where('172.17.0.2', 'b')}: 172.17.0.2 is in Docker's "
     "default bridge 172.17.0.0/16 (the host's own container network; use host networking)"),
    ((("10.0.0.1", "a"), ("fd00::2", "b")), Status.FAIL,
     "node addresses the other nodes cannot reach: nodes mix IPv4 and IPv6 addresses: a 10.0.0.1, b fd00::2"),
    ((("10.0.0.1", "a"), ("gpu-b", "b"), ("169.254.3.4", "c")), Status.WARN,
     f"node addresses rlcheck cannot vouch for: {_where('gpu-b', 'b')}: 'gpu-b' is a host name (every node must "
     f"resolve it alike); {_where('169.254.3.4', 'c')}: 169.254.3.4 is link-local (not routed beyond its segment)"),
])
def test_rules_table_node_addresses(nodes, status, summary):
    verdict = _verdict(*nodes)
    assert (verdict.status, verdict.summary, verdict.failure_id) == (status, summary, FAILURE_ID)
    assert verdict.details == "nodes: " + ", ".join(f"{h} {a}" for a, h in nodes)
    assert verdict.remedy == ("" if status is Status.PASS else REMEDY)


def test_rules_table_node_addresses_nothing_to_judge():
    none = _verdict()
    assert (none.status, none.summary, none.failure_id) == (Status.UNKNOWN, "Ray at 10.0.0.1:6379 listed no alive "
                                                                            "node", FAILURE_ID)
    result = FanoutResult(address="ray://h:10001", connected=False, tried="ray.init, 30 s", error="timed out")
    unreached = evaluate_node_addresses(result)
    assert (unreached.status, unreached.summary, unreached.details, unreached.remedy, unreached.failure_id) == (
        Status.UNKNOWN, "Ray at ray://h:10001 not reached: timed out", "tried: ray.init, 30 s", REACH_REMEDY,
        FAILURE_ID)


@pytest.mark.parametrize(("text", "ip"), [
    ("[::1]", "::1"), (" 10.0.0.1 ", "10.0.0.1"), ("[fd00::2]:6379", "fd00::2"), ("fe80::1%a%b", "fe80::1"),
    ("10.0.0.1:6379:1", None), ("", None),
])
def test_rules_table_node_addresses_parse(text, ip):
    found = parse(text)
    assert (str(found) if found is not None else None) == ip
