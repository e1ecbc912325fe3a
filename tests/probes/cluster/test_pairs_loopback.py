"""The pairwise all-reduce on a real four-node loopback Ray (gloo on CPU): a slowed node is named, a hung one is
UNKNOWN within the pair deadline; then all nodes together, whose hang is UNKNOWN for the cluster.

Nodes: the head and three extra nodes; the second extra node carries DELAY_ENV (tests/pair_throttle.py says why the
slowdown is injected this way). Small tensors and few iterations keep each round to seconds.
"""

from __future__ import annotations

import socket
import sys
import time

import pytest

from rlcheck.cluster.local_ray import EmbeddedRay, NodeSpec
from rlcheck.probes.cluster.nccl_pairs import PairOutcome, evaluate_nccl_pairs
from rlcheck.probes.cluster.pairs_driver import run_pairs
from rlcheck.verdict import Status
from tests.pair_throttle import DELAY_ENV

SIZE_BYTES, ITERATIONS = 4 << 20, 8


def _by_ray_id(verdicts):
    """Per-node verdicts by the Ray node id in their details (their node is the host name); the cluster's under None."""
    return {(v.details.rsplit("ray node id: ", 1)[1] if v.node else None): v for v in verdicts}


@pytest.fixture(scope="module")
def cluster():
    specs = [NodeSpec(), NodeSpec(env={DELAY_ENV: "0.5"}), NodeSpec()]
    with EmbeddedRay(num_cpus=1, node_specs=specs) as endpoints:
        yield endpoints, endpoints.node_ids[2]


def test_pairs_loopback_names_the_slowed_node(cluster):
    endpoints, slowed = cluster
    obs = run_pairs(endpoints.gcs_address, nodes=4, member="tests.pair_throttle:slowed_member",
                    size_bytes=SIZE_BYTES, iterations=ITERATIONS, pair_timeout_s=90, connect_timeout_s=20)
    assert obs.connected, obs.error
    assert len(obs.nodes) == 4 and all(p.outcome is PairOutcome.MEASURED for p in obs.pairs), obs.pairs
    ring = [p for p in obs.pairs if not p.repair]
    assert len(ring) == 4 and any(p.repair and slowed in p.nodes for p in obs.pairs)  # re-paired with a good node
    verdicts = _by_ray_id(evaluate_nccl_pairs(obs, None))
    assert verdicts[slowed].status is Status.FAIL, verdicts[slowed].summary
    assert "every all-reduce with this node is slow" in verdicts[slowed].summary
    assert all(v.status is Status.PASS for n, v in verdicts.items() if n not in (slowed, None)), [
        v.summary for v in verdicts.values()]
    assert obs.all_nodes is not None and len(obs.all_nodes.nodes) == 4  # every node, the slowed one too
    named = f"the pairs name {socket.gethostname()}#{slowed[:8]}"  # loopback nodes share the host's name
    assert verdicts[None].status is Status.FAIL and named in verdicts[None].summary


def test_pairs_loopback_hung_node_is_unknown_within_the_deadline(cluster):
    endpoints, slowed = cluster
    start = time.monotonic()
    obs = run_pairs(endpoints.gcs_address, nodes=4, member="tests.pair_throttle:hung_member",
                    size_bytes=SIZE_BYTES, iterations=ITERATIONS, pair_timeout_s=40, connect_timeout_s=20)
    assert time.monotonic() - start < 20 + 2 * (40 + 30) + 45
    hung = [p for p in obs.pairs if slowed in p.nodes]
    assert len(hung) == 2 and all(p.outcome is PairOutcome.TIMEOUT for p in hung), obs.pairs
    verdicts = _by_ray_id(evaluate_nccl_pairs(obs, None))
    assert verdicts[slowed].status is Status.UNKNOWN and "no all-reduce with this node finished" in verdicts[
        slowed].summary
    partners = {n for p in hung for n in p.nodes} - {slowed}
    assert {verdicts[n].status for n in partners} == {Status.WARN}
    assert obs.all_nodes is not None and slowed not in obs.all_nodes.nodes  # the hung node is left out of it
    assert obs.all_nodes.outcome is PairOutcome.MEASURED and verdicts[None].status is Status.PASS


def test_pairs_loopback_all_nodes_round_hangs_within_its_deadline(cluster):
    """Every pair healthy, the all-nodes round hung by one node: UNKNOWN for the cluster, bounded by the deadline."""
    endpoints, stuck = cluster
    start = time.monotonic()
    obs = run_pairs(endpoints.gcs_address, nodes=4, member="tests.pair_throttle:crowd_hung_member",
                    size_bytes=SIZE_BYTES, iterations=2, pair_timeout_s=30, connect_timeout_s=20)
    assert time.monotonic() - start < 20 + 3 * (30 + 30) + 45
    assert all(p.outcome is PairOutcome.MEASURED for p in obs.pairs), obs.pairs
    assert obs.all_nodes is not None and obs.all_nodes.outcome is PairOutcome.TIMEOUT and stuck in obs.all_nodes.nodes
    verdicts = _by_ray_id(evaluate_nccl_pairs(obs, None))
    assert verdicts[None].status is Status.UNKNOWN and "all 4 nodes together: timeout" in verdicts[None].summary
    assert all(v.status is Status.PASS for n, v in verdicts.items() if n is not None)


def test_pairs_loopback_through_the_jobs_api_with_rlcheck_member(cluster):
    """http:// address: the driver runs as a Ray job on the head (rlcheck shipped); rlcheck's own rank, no slowdown."""
    endpoints, _ = cluster
    obs = run_pairs(endpoints.dashboard_url, nodes=4, size_bytes=SIZE_BYTES, iterations=2, pair_timeout_s=90,
                    connect_timeout_s=20, job_python=sys.executable)
    assert obs.connected, obs.error
    assert obs.address == endpoints.dashboard_url and "Ray job" in obs.tried
    assert len(obs.pairs) >= 4 and all(p.outcome is PairOutcome.MEASURED for p in obs.pairs), obs.pairs
    assert {v.status for v in evaluate_nccl_pairs(obs, None)} <= {Status.PASS, Status.FAIL}
    assert obs.all_nodes is not None and obs.all_nodes.outcome is PairOutcome.MEASURED
