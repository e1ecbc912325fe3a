"""Registry rows for the pairwise all-reduce check: recorded healthy, slowed, hung and unreached clusters."""

from __future__ import annotations

from rlcheck.hardware import get_profile
from rlcheck.preflight import gate
from rlcheck.preflight.registry import Inputs
from rlcheck.probes.cluster.nccl_pairs import PairsObservation
from rlcheck.verdict import Status
from tests.pair_observations import ALL_HEALTHY, ALL_HUNG, ALL_SLOW, RING_HEALTHY, RING_N2_HUNG, RING_N2_SLOW

INPUTS = gate.inputs_for("qwen3-4b-colocated", get_profile("h200"))
UNREACHED = PairsObservation(address="127.0.0.1:1", connected=False, tried="ray.init", error="connection refused")

CASES: dict[str, list[tuple[str, Inputs, object, Status]]] = {
    "cluster_pairs_allreduce": [
        ("ring-healthy", INPUTS, RING_HEALTHY, Status.PASS),
        ("ring-and-all-nodes-healthy", INPUTS, ALL_HEALTHY, Status.PASS),
        ("all-nodes-together-hung", INPUTS, ALL_HUNG, Status.UNKNOWN),
        ("all-nodes-together-slow", INPUTS, ALL_SLOW, Status.FAIL),
        ("one-node-slowed", INPUTS, RING_N2_SLOW, Status.FAIL),
        ("one-node-hung", INPUTS, RING_N2_HUNG, Status.UNKNOWN),
        ("ray-unreached", INPUTS, UNREACHED, Status.UNKNOWN)],
}
