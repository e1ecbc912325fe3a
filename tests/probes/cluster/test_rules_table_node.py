"""Whole-verdict rule table for the node judges (rlcheck.probes.cluster.node_evaluate): every branch of each judge, both
sides of each comparison, each WARN branch, with the verdict the user reads recorded in tests/data/golden/node.json.
The boundaries themselves are asserted here too, so a recording can not quietly bless a wrong status."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from rlcheck.cluster.fanout_result import NodeFacts
from rlcheck.hardware import HardwareProfile, get_profile
from rlcheck.probes.cluster import node_evaluate as judge
from rlcheck.probes.node.collect import NodeObservation
from rlcheck.probes.node.gpus import GpuInfo
from rlcheck.verdict import Status
from tests import golden_verdicts

RECORDINGS = Path(__file__).resolve().parents[2] / "data" / "observations" / "node"
H200 = get_profile("h200")
NO_SHM_FLOOR = dataclasses.replace(H200, thresholds={}, provenance={})
_DATA = json.loads((RECORDINGS / "h200_node_healthy.json").read_text())
FACTS, OBS = NodeFacts(**_DATA["node"]), NodeObservation.from_dict(_DATA["observation"])


def _gpus(cc: str = "9.0", n: int = 8, name: str = "NVIDIA H200") -> tuple[GpuInfo, ...]:
    return (GpuInfo(name=name, compute_capability=cc, memory_mib=143771),) * n


def _obs(**kw) -> NodeObservation:
    return dataclasses.replace(OBS, **kw)


def _tms(**kw) -> NodeObservation:
    return _obs(tms=dataclasses.replace(OBS.tms, **kw))


def _facts(**kw) -> NodeFacts:
    return dataclasses.replace(FACTS, **kw)


def _efa(n: int) -> NodeObservation:
    return _obs(efa_devices=tuple(f"rdmap{i}s0" for i in range(n)))


GPU_ERROR = _obs(gpu_error="nvidia-smi timed out after 30 s", gpus=())
MIXED = _gpus("9.0", 4) + _gpus("8.0", 2, "NVIDIA A100-SXM4-80GB") + _gpus("", 2)
# (row, judge, facts, observation, profile, expected status)
ROWS: list[tuple[str, str, NodeFacts, NodeObservation, HardwareProfile | None, Status]] = [
    ("gpus-healthy", "gpus", FACTS, OBS, H200, Status.PASS),
    ("gpus-unread", "gpus", FACTS, GPU_ERROR, H200, Status.UNKNOWN),
    ("gpus-cpu-only", "gpus", _facts(ray_gpus=0.0), _obs(gpus=()), H200, Status.SKIP),
    ("gpus-advertised-but-none-seen", "gpus", FACTS, _obs(gpus=()), H200, Status.FAIL),
    ("gpus-seen-but-none-advertised", "gpus", _facts(ray_gpus=0.0), OBS, H200, Status.FAIL),
    ("gpus-no-profile", "gpus", FACTS, OBS, None, Status.SKIP),
    ("gpus-7-of-8", "gpus", _facts(ray_gpus=7.0), _obs(gpus=_gpus(n=7)), H200, Status.FAIL),
    ("gpus-9-of-8", "gpus", _facts(ray_gpus=9.0), _obs(gpus=_gpus(n=9)), H200, Status.FAIL),
    ("gpus-h100-named", "gpus", FACTS, _obs(gpus=_gpus(name="NVIDIA H100 80GB HBM3")), H200, Status.FAIL),
    ("gpus-cc-8.0", "gpus", FACTS, _obs(gpus=_gpus("8.0")), H200, Status.FAIL),
    ("gpus-cc-10.0", "gpus", FACTS, _obs(gpus=_gpus("10.0")), H200, Status.FAIL),
    ("gpus-cc-unread", "gpus", FACTS, _obs(gpus=_gpus("")), H200, Status.FAIL),
    ("gpus-mixed", "gpus", FACTS, _obs(gpus=MIXED), H200, Status.FAIL),
    ("gpus-two-foreign-names", "gpus", FACTS,
     _obs(gpus=_gpus(n=4, name="NVIDIA H100 80GB HBM3") + _gpus(n=4, name="NVIDIA A100-SXM4-80GB")), H200, Status.FAIL),
    ("gpus-ray-4-of-8", "gpus", _facts(ray_gpus=4.0), OBS, H200, Status.FAIL),
    ("gpus-ray-fraction", "gpus", _facts(ray_gpus=7.5), OBS, H200, Status.FAIL),
    ("driver-healthy", "driver", FACTS, OBS, H200, Status.PASS),
    ("driver-unread-gpus", "driver", FACTS, GPU_ERROR, H200, Status.UNKNOWN),
    ("driver-no-gpu", "driver", FACTS, _obs(gpus=()), H200, Status.SKIP),
    ("driver-torch-cpu", "driver", FACTS, _obs(torch_cuda=""), H200, Status.SKIP),
    ("driver-no-torch", "driver", FACTS, _obs(torch_cuda="", torch_version=""), H200, Status.SKIP),
    ("driver-version-unread", "driver", FACTS, _obs(driver_version=""), H200, Status.UNKNOWN),
    ("driver-version-garbage", "driver", FACTS, _obs(driver_version="N/A"), H200, Status.UNKNOWN),
    ("driver-575-cuda-13", "driver", FACTS, _obs(driver_version="575.57.08"), H200, Status.FAIL),
    ("driver-580-cuda-13", "driver", FACTS, _obs(driver_version="580.65.06"), H200, Status.PASS),
    ("driver-525-cuda-12", "driver", FACTS, _obs(driver_version="525.60.13", torch_cuda="12.8"), H200, Status.PASS),
    ("driver-524-cuda-12", "driver", FACTS, _obs(driver_version="524.1", torch_cuda="12.8"), H200, Status.FAIL),
    ("driver-449-cuda-11", "driver", FACTS, _obs(driver_version="449.1", torch_cuda="11.8"), H200, Status.FAIL),
    ("driver-580-cuda-14", "driver", FACTS, _obs(torch_cuda="14.0"), H200, Status.FAIL),
    ("driver-per-gpu-list", "driver", FACTS, _obs(driver_version="580.65.06, 580.65.06"), H200, Status.PASS),
    ("tms-healthy", "tms", FACTS, OBS, H200, Status.PASS),
    ("tms-unread-gpus", "tms", FACTS, GPU_ERROR, H200, Status.UNKNOWN),
    ("tms-no-gpu", "tms", FACTS, _obs(gpus=()), H200, Status.SKIP),
    ("tms-not-installed", "tms", FACTS, _tms(package_dir=""), H200, Status.SKIP),
    ("tms-unreadable", "tms", FACTS, _tms(error="not an ELF file"), H200, Status.UNKNOWN),
    ("tms-no-library", "tms", FACTS, _tms(library=""), H200, Status.FAIL),
    ("tms-torch-cpu", "tms", FACTS, _obs(torch_cuda=""), H200, Status.SKIP),
    ("tms-cudart-unread", "tms", FACTS, _tms(cudart_major=None), H200, Status.PASS),
    ("tms-cu12-on-13", "tms", FACTS, _tms(cudart_major=12), H200, Status.FAIL),
    ("tms-cu14-on-13", "tms", FACTS, _tms(cudart_major=14), H200, Status.FAIL),
    ("tms-cu13-unresolved", "tms", FACTS, _tms(cudart_found_at=""), H200, Status.FAIL),
    ("tms-v024-rule", "tms", FACTS, _tms(rule="slime-v0.2.4"), H200, Status.PASS),
    ("tms-package-rule", "tms", FACTS, _tms(rule="miles-main"), H200, Status.PASS),
    ("shm-missing", "shm", FACTS, _obs(shm_bytes=None), H200, Status.FAIL),
    ("shm-no-profile", "shm", FACTS, OBS, None, Status.SKIP),
    ("shm-profile-without-floor", "shm", FACTS, OBS, NO_SHM_FLOOR, Status.SKIP),
    ("shm-below-floor", "shm", FACTS, _obs(shm_bytes=10 * 2**30 - 1), H200, Status.FAIL),
    ("shm-at-floor", "shm", FACTS, _obs(shm_bytes=10 * 2**30), H200, Status.PASS),
    ("shm-64mib", "shm", FACTS, _obs(shm_bytes=64 * 2**20), H200, Status.FAIL),
    ("efa-unread-no-ray-gpus", "efa", _facts(ray_gpus=0.0), GPU_ERROR, H200, Status.UNKNOWN),
    ("efa-unread-ray-gpus", "efa", FACTS, GPU_ERROR, H200, Status.PASS),
    ("efa-cpu-only", "efa", _facts(ray_gpus=0.0), _obs(gpus=()), H200, Status.SKIP),
    ("efa-no-profile", "efa", FACTS, OBS, None, Status.SKIP),
    ("efa-none", "efa", FACTS, _efa(0), H200, Status.FAIL),
    ("efa-15", "efa", FACTS, _efa(15), H200, Status.FAIL),
    ("efa-16", "efa", FACTS, _efa(16), H200, Status.PASS),
    ("efa-17", "efa", FACTS, _efa(17), H200, Status.WARN),
    ("head-gpuless", "head", _facts(is_head=True, ray_gpus=0.0), _obs(gpus=()), H200, Status.PASS),
    ("head-advertises-1", "head", _facts(is_head=True, ray_gpus=1.0), _obs(gpus=()), H200, Status.FAIL),
    ("head-advertises-half", "head", _facts(is_head=True, ray_gpus=0.5), _obs(gpus=()), H200, Status.FAIL),
    ("head-advertises-8", "head", _facts(is_head=True), OBS, H200, Status.FAIL),
    ("head-sees-1-advertises-0", "head", _facts(is_head=True, ray_gpus=0.0), _obs(gpus=_gpus(n=1)), H200,
     Status.WARN),
    ("head-unread", "head", _facts(is_head=True, ray_gpus=0.0), GPU_ERROR, H200, Status.PASS),
]
JUDGES = {"gpus": judge.evaluate_node_gpus, "driver": judge.evaluate_node_driver, "tms": judge.evaluate_node_tms,
          "shm": judge.evaluate_node_shm, "efa": judge.evaluate_node_efa, "head": judge.evaluate_head_gpuless}


@pytest.mark.parametrize(("row", "name", "facts", "obs", "profile", "status"), ROWS, ids=[r[0] for r in ROWS])
def test_rules_table_node_whole_verdict(row, name, facts, obs, profile, status):
    verdict = JUDGES[name](facts, obs, profile)
    assert verdict.status is status, verdict.render()
    golden_verdicts.check("node", row, verdict)


@pytest.mark.parametrize(("driver", "cuda"), [
    ("580.65.06", 13), ("579.99", 12), ("525.60.13", 12), ("524.9", 11), ("450.51.06", 11), ("449.9", 0),
    ("580.65.06, 575.1", 13), ("580, 575", 13), (" 580.1 ", 13), ("", None), ("N/A", None), ("v580", None),
], ids=lambda v: repr(v))
def test_rules_table_driver_cuda_major_each_branch_start(driver, cuda):
    assert judge.driver_cuda_major(driver) == cuda


def test_rules_table_gpus_text_sorts_kinds_and_marks_unread_cc():
    assert judge.gpus_text(()) == "no GPU"
    assert judge.gpus_text(MIXED) == "8 x NVIDIA A100-SXM4-80GB (sm_80), NVIDIA H200 (sm_?), NVIDIA H200 (sm_90)"


def test_rules_table_node_gpu_or_not():
    assert judge.is_gpu_node(_facts(ray_gpus=0.0), OBS) and judge.is_gpu_node(FACTS, _obs(gpus=()))
    assert judge.is_gpu_node(_facts(ray_gpus=0.5), _obs(gpus=()))
    assert not judge.is_gpu_node(_facts(ray_gpus=0.0), _obs(gpus=()))


def test_rules_table_loader_cache_read_without_sbin_on_path(monkeypatch):
    """A Ray worker's PATH may leave out /sbin: ldconfig is run by its path, so the reading answers, never raises."""
    from rlcheck.probes.node import tms

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    dirs = tms.ldconfig_dirs()
    assert isinstance(dirs, set) and (dirs or not Path(tms.LDCONFIG).exists())
