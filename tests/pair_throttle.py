"""Test-only ranks for the pairwise all-reduce: slow or hang on the node whose environment says so.

The loopback nodes all share 127.0.0.1, so traffic shaping (tc) cannot slow one node alone, and needs privileges
the test machine lacks. Instead a node gets DELAY_ENV through its raylet's environment (NodeSpec.env), and the
test passes these functions as the pairs driver's member: rlcheck's own member reads no such variable.
"""

from __future__ import annotations

import os
import time
from typing import Any

from rlcheck.probes.node.pair_member import all_reduce_member

DELAY_ENV = "PAIR_TEST_DELAY_S"


def slowed_member(**kwargs: Any) -> dict[str, Any]:
    """The real rank; on a node with DELAY_ENV, a sleep before every all-reduce (the pair waits for it)."""
    delay_s = float(os.environ.get(DELAY_ENV, "0") or 0)
    return all_reduce_member(**kwargs, between_iterations=(lambda: time.sleep(delay_s)) if delay_s else None)


def hung_member(**kwargs: Any) -> dict[str, Any]:
    """The real rank; on a node with DELAY_ENV, it never joins (its partner waits in the rendezvous)."""
    if os.environ.get(DELAY_ENV):
        time.sleep(3600)
    return all_reduce_member(**kwargs)


def crowd_hung_member(**kwargs: Any) -> dict[str, Any]:
    """The real rank for a pair; in a round of three or more nodes, the node with DELAY_ENV never joins (the all-nodes
    round hangs while every pair is healthy)."""
    if kwargs["world_size"] > 2 and os.environ.get(DELAY_ENV):
        time.sleep(3600)
    return all_reduce_member(**kwargs)
