"""Rule tables for the image and node judges: both sides of each comparison, so a seeded bug turns a row red."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from rlcheck.cluster.fanout_result import NodeFacts
from rlcheck.hardware import get_profile
from rlcheck.probes.cluster import node_evaluate as judge
from rlcheck.probes.image import image
from rlcheck.probes.node.collect import NodeObservation
from rlcheck.probes.node.gpus import GpuInfo
from rlcheck.verdict import Status

RECORDINGS = Path(__file__).resolve().parents[2] / "data" / "observations" / "node"
H200 = get_profile("h200")
X86_WHEEL = "Wheel-Version: 1.0\nTag: cp312-cp312-manylinux_2_28_x86_64\n"
ARM_WHEEL = "Wheel-Version: 1.0\nTag: cp312-cp312-manylinux_2_28_aarch64\n"
PURE_WHEEL = "Wheel-Version: 1.0\nTag: py3-none-any\n"


@pytest.mark.parametrize(("machine", "wheels", "foreign"), [
    ("aarch64", [("sglang-router 0.3.2", X86_WHEEL), ("numpy 1.26.4", ARM_WHEEL)], ("sglang-router 0.3.2",)),
    ("x86_64", [("sglang-router 0.3.2", X86_WHEEL), ("numpy 1.26.4", ARM_WHEEL)], ("numpy 1.26.4",)),
    ("aarch64", [("numpy 1.26.4", ARM_WHEEL), ("rlcheck 0.1.0", PURE_WHEEL)], ()),
    ("x86_64", [("torch 2.11.0", X86_WHEEL), ("rlcheck 0.1.0", PURE_WHEEL), ("editable 1", "")], ()),
], ids=["x86-wheel-on-grace", "arm-wheel-on-x86", "arm-on-arm", "x86-on-x86"])
def test_rules_foreign_wheels_both_directions(machine, wheels, foreign):
    obs = image.collect_arch(machine=machine, wheels=wheels)
    assert obs.foreign_wheels == foreign
    assert image.evaluate_arch(obs, None).status is (Status.FAIL if foreign else Status.PASS)


@pytest.mark.parametrize(("has_core", "has_training", "status"), [
    (False, False, Status.SKIP), (True, True, Status.PASS), (False, True, Status.PASS), (True, False, Status.FAIL),
])
def test_rules_megatron_training_every_combination(has_core, has_training, status):
    obs = image.MegatronObservation(megatron_core=None, has_core=has_core, has_training=has_training)
    assert image.evaluate_megatron_training(obs).status is status


def _healthy() -> tuple[NodeFacts, NodeObservation]:
    data = json.loads((RECORDINGS / "h200_node_healthy.json").read_text())
    return NodeFacts(**data["node"]), NodeObservation.from_dict(data["observation"])


def _with(**kw) -> NodeObservation:
    return dataclasses.replace(_healthy()[1], **kw)


def _gpus(cc: str, n: int = 8, name: str = "NVIDIA H200") -> tuple[GpuInfo, ...]:
    return (GpuInfo(name=name, compute_capability=cc, memory_mib=143771),) * n


NODE_GPUS = [
    ("as-h200", _with(), Status.PASS, "as h200 expects"),
    ("sm-80-named-h200", _with(gpus=_gpus("8.0")), Status.FAIL, "compute capability 8.0; expected 9.0"),
    ("cc-unread", _with(gpus=_gpus("")), Status.FAIL, "compute capability ?; expected 9.0"),
    ("9-gpus", _with(gpus=_gpus("9.0", 9)), Status.FAIL, "9 GPUs; expected 8"),
]


@pytest.mark.parametrize(("label", "obs", "status", "fragment"), NODE_GPUS, ids=[r[0] for r in NODE_GPUS])
def test_rules_node_gpus(label, obs, status, fragment):
    facts = dataclasses.replace(_healthy()[0], ray_gpus=float(len(obs.gpus)))
    verdict = judge.evaluate_node_gpus(facts, obs, H200)
    assert verdict.status is status and fragment in verdict.summary, verdict.render()


def _tms(cudart: int | None, found: str = "/usr/local/cuda/lib64/libcudart.so.13"):
    return dataclasses.replace(_healthy()[1].tms, cudart_major=cudart, cudart_found_at=found)


@pytest.mark.parametrize(("tms", "status", "failure_id"), [
    (_tms(13), Status.PASS, None),
    (_tms(12), Status.FAIL, "tms-cu12-preload"),
    (_tms(14), Status.FAIL, "tms-cu12-preload"),  # a newer libcudart than the runtime is as wrong as an older one
    (_tms(13, found=""), Status.FAIL, "tms-loader-unresolved"),
], ids=["cu13-on-13", "cu12-on-13", "cu14-on-13", "cu13-unresolved"])
def test_rules_node_tms_cudart_major_must_equal_runtime(tms, status, failure_id):
    facts, obs = _healthy()
    verdict = judge.evaluate_node_tms(facts, dataclasses.replace(obs, tms=tms), H200)
    assert verdict.status is status and verdict.failure_id == (failure_id if status is Status.FAIL else None)


@pytest.mark.parametrize(("ray_gpus", "seen", "status"), [
    (0.0, (), Status.PASS), (1.0, (), Status.FAIL), (0.5, (), Status.FAIL), (0.0, _gpus("9.0", 1), Status.WARN),
])
def test_rules_head_advertises_no_gpu(ray_gpus, seen, status):
    facts, obs = _healthy()
    verdict = judge.evaluate_head_gpuless(dataclasses.replace(facts, ray_gpus=ray_gpus, is_head=True),
                                          dataclasses.replace(obs, gpus=seen), H200)
    assert verdict.status is status, verdict.render()


@pytest.mark.parametrize(("count", "status"), [(15, Status.FAIL), (16, Status.PASS), (17, Status.WARN)])
def test_rules_efa_count_both_sides(count, status):
    facts, obs = _healthy()
    devices = tuple(f"rdmap{i}s0" for i in range(count))
    assert judge.evaluate_node_efa(facts, dataclasses.replace(obs, efa_devices=devices), H200).status is status


@pytest.mark.parametrize(("driver", "status"), [("580.65.06", Status.PASS), ("575.57.08", Status.FAIL)])
def test_rules_driver_branch_against_cuda_13(driver, status):
    facts, obs = _healthy()
    verdict = judge.evaluate_node_driver(facts, dataclasses.replace(obs, driver_version=driver), H200)
    assert verdict.status is status, verdict.render()


@pytest.mark.parametrize(("shm_bytes", "status"), [(10 * 2**30, Status.PASS), (10 * 2**30 - 1, Status.FAIL)])
def test_rules_shm_floor_is_inclusive(shm_bytes, status):
    facts, obs = _healthy()
    assert judge.evaluate_node_shm(facts, dataclasses.replace(obs, shm_bytes=shm_bytes), H200).status is status
