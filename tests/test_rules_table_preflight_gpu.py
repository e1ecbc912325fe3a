"""Rule table for the wiring of this machine's GPU checks (rlcheck.preflight.gpu): the preload rule of the framework
judged (else the recipe's framework as the reference image ships it), this machine read and judged as the fan-out
reads and judges a node, and the inventory named by this host (SKIP with --no-local-gpus)."""

from __future__ import annotations

import socket

import pytest

from rlcheck import recipes
from rlcheck.framework.detect import Installed
from rlcheck.hardware import get_profile
from rlcheck.preflight import gpu
from rlcheck.preflight.registry import Inputs
from rlcheck.probes.gpu import gpu_inventory
from rlcheck.probes.node.collect import NodeObservation, TmsReading
from rlcheck.probes.node.gpus import GpuInfo
from rlcheck.verdict import Status, Verdict

H200 = get_profile("h200")
QWEN = recipes.get("qwen3-4b-colocated")
GLM = recipes.get("glm5.2-gb300")  # a Miles recipe


@pytest.mark.parametrize(("framework", "recipe", "rule"), [
    (Installed(framework="slime", version="0.3.1", source="--framework"), QWEN, "slime-v0.3.1"),
    (Installed(framework="slime", version="0.2.4", source="--framework"), GLM, "slime-v0.2.4"),
    (Installed(framework="slime", main=True, source="--framework"), QWEN, "slime-main"),
    (Installed(framework="miles", version="0.1.0", source="--framework"), QWEN, "miles-main"),
    (Installed(framework=None), QWEN, "slime-v0.2.4"),
    (Installed(framework=None), GLM, "miles-main"),
])
def test_the_preload_rule_of_the_framework_judged_else_the_recipes(monkeypatch, framework, recipe, rule):
    monkeypatch.setattr("rlcheck.preflight.registry.collect_installed", lambda: framework)
    assert gpu.tms_rule(Inputs(recipe=recipe, profile=H200)) == rule


OBS = NodeObservation(hostname="gpu-7", gpus=(GpuInfo(name="NVIDIA H200", compute_capability="9.0",
                                                      memory_mib=143771),) * 3,
                      gpu_source="nvidia-smi", gpu_error="", driver_version="580.65.06", torch_version="2.11.0",
                      torch_cuda="13.0", tms=TmsReading(package_dir="", rule="slime-v0.2.4"), shm_bytes=None)


def test_this_machine_is_read_as_the_fanout_reads_a_node(monkeypatch):
    rules = []
    monkeypatch.setattr(gpu, "collect_node", lambda tms_rule: rules.append(tms_rule) or OBS)
    facts, obs = gpu.collect_this_node("slime-main")
    assert rules == ["slime-main"] and obs is OBS
    assert (facts.node_id, facts.address, facts.hostname, facts.is_head, facts.ray_gpus) == (
        "this-machine", "127.0.0.1", socket.gethostname(), False, 3.0)


def test_this_machine_is_judged_by_every_health_judge_with_the_profile(monkeypatch):
    seen = []

    def judge(name):
        return lambda facts, obs, profile: seen.append((name, facts.node_id, obs, profile)) or Verdict(
            status=Status.PASS, summary=name)
    monkeypatch.setattr(gpu, "HEALTH_JUDGES", (judge("xid"), judge("ecc")))
    read = (gpu.NodeFacts(node_id="n", address="a", hostname="h", is_head=False, ray_gpus=1.0), OBS)
    assert [v.summary for v in gpu.judge_this_node(read, H200)] == ["xid", "ecc"]
    assert seen == [("xid", "n", OBS, H200), ("ecc", "n", OBS, H200)]


def test_the_health_judges_are_the_cluster_nodes():
    assert [j.__name__ for j in gpu.HEALTH_JUDGES] == [
        "evaluate_node_xid", "evaluate_node_ecc", "evaluate_node_throttle", "evaluate_node_clocks",
        "evaluate_node_pcie", "evaluate_node_nvlink", "evaluate_node_bus"]


def test_without_local_gpus_the_inventory_is_skipped():
    assert gpu.judge_inventory(None, Inputs(recipe=QWEN, profile=H200)) == Verdict(
        status=Status.SKIP, summary="--no-local-gpus: this machine is a Ray client or login node; the GPU nodes are "
                                    "judged through the cluster checks")


@pytest.mark.parametrize(("declared", "status"), [(True, Status.FAIL), (False, Status.UNKNOWN)])
def test_the_inventory_is_judged_as_declared_or_detected_and_named_by_this_host(declared, status):
    inv = gpu_inventory.Inventory(gpus=(), source="nvidia-smi", error="NVIDIA-SMI has failed")
    verdict = gpu.judge_inventory(inv, Inputs(recipe=QWEN, profile=H200, declared=declared))
    expected = gpu_inventory.evaluate_inventory(inv, H200, declared=declared)
    assert verdict.status is status and verdict.node == socket.gethostname()
    assert (verdict.summary, verdict.details) == (expected.summary, expected.details)


def test_the_inventory_check_reads_the_gpus_only_with_local_gpus(monkeypatch):
    monkeypatch.setattr(gpu_inventory, "collect_inventory", lambda: "read")
    check = next(c for c in gpu.CHECKS if c.id == "gpu_node_inventory")
    assert check.collect(Inputs(recipe=QWEN, profile=H200)) == "read"
    assert check.collect(Inputs(recipe=QWEN, profile=H200, local_gpus=False)) is None
