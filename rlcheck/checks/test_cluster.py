"""Cluster checks: the Ray under check (--ray-address, or the embedded loopback Ray), one probe pinned to every node.

One fan-out per run feeds every check here; a node that does not answer by the deadline is UNKNOWN for that
node in each per-node check, never a hang.
"""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.cluster.fanout import fan_out
from rlcheck.plugin.resources import check_params
from rlcheck.preflight.gpu import tms_rule
from rlcheck.preflight.registry import Inputs

CONNECT_TIMEOUT_S = 30.0
NODE_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def cluster_inputs(ray_cluster, check_inputs) -> Inputs:
    # Each node reads torch_memory_saver by the preload rule of the framework judged (--framework, else detected).
    result = fan_out(ray_cluster.gcs_address, kwargs={"tms_rule": tms_rule(check_inputs)},
                     connect_timeout_s=CONNECT_TIMEOUT_S, node_timeout_s=NODE_TIMEOUT_S)
    return dataclasses.replace(check_inputs, fanout=result)


@pytest.mark.parametrize("check", check_params("cluster"))
def test_cluster(check, cluster_inputs, record_verdict):
    record_verdict(*check.run(cluster_inputs))
