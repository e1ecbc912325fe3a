"""The plugin's gating rules as a table: which marker skips a test here, and the reason naming what is missing and
what was found, on both sides of each boundary (rlcheck.plugin.gating.gpu_skip_reason and skip_reason)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rlcheck import hardware
from rlcheck.plugin import gating
from rlcheck.plugin.options import RunContext
from rlcheck.probes.node import gpus
from rlcheck.probes.node.gpus import GpuInfo

H200 = GpuInfo(name="NVIDIA H200", compute_capability="9.0", memory_mib=143771)
B200 = GpuInfo(name="NVIDIA B200", compute_capability="10.0", memory_mib=183359)
L40S = GpuInfo(name="NVIDIA L40S", compute_capability="8.9", memory_mib=46068)
A100 = GpuInfo(name="NVIDIA A100-SXM4-80GB", compute_capability="8.0", memory_mib=81920)
T4 = GpuInfo(name="Tesla T4", compute_capability="7.5", memory_mib=15360)
UNREAD = GpuInfo(name="NVIDIA H200", compute_capability="", memory_mib=143771)

GPU_ROWS = [
    # (marker kwargs, GPUs found, read error, reason or None)
    ({}, (H200,), "", None),
    ({}, (B200,), "", None),
    ({}, (L40S,), "", "needs a CUDA GPU (sm_90+): found 1 x NVIDIA L40S (sm_89)"),
    ({}, (), "", "needs a CUDA GPU (sm_90+): found none"),
    ({}, (UNREAD,), "", "needs a CUDA GPU (sm_90+): found 1 x NVIDIA H200 (sm unknown)"),
    ({}, (), "nvidia-smi did not answer within 20 s",
     "needs a CUDA GPU (sm_90+): could not read the GPUs: nvidia-smi did not answer within 20 s"),
    ({"count": 2}, (H200, H200), "", None),
    ({"count": 2}, (H200,), "", "needs 2 CUDA GPUs (sm_90+): found 1 x NVIDIA H200 (sm_90)"),
    ({"count": 2}, (H200, L40S), "",
     "needs 2 CUDA GPUs (sm_90+): found 2 x NVIDIA H200 (sm_90), NVIDIA L40S (sm_89)"),
    ({"count": 3}, (H200, H200, H200), "", None),
    ({"min_sm": 80}, (A100,), "", None),
    ({"min_sm": 80}, (T4,), "", "needs a CUDA GPU (sm_80+): found 1 x Tesla T4 (sm_75)"),
    ({"min_sm": 89}, (L40S,), "", None),
    ({"min_sm": 100}, (H200,), "", "needs a CUDA GPU (sm_100+): found 1 x NVIDIA H200 (sm_90)"),
    ({"min_sm": 100}, (B200,), "", None),
    ({"min_sm": "80", "count": "1"}, (A100,), "", None),
]


@pytest.mark.parametrize(("kwargs", "found", "error", "reason"), GPU_ROWS)
def test_rules_table_gating_gpu_marker(kwargs, found, error, reason):
    assert gating.gpu_skip_reason(pytest.mark.gpu(**kwargs).mark, found, error) == reason


@dataclasses.dataclass
class Item:
    """What skip_reason reads of a pytest item: its markers by name."""

    markers: tuple[pytest.Mark, ...]

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return next((m for m in self.markers if m.name == name), None)


def context(**changes: object) -> RunContext:
    base = RunContext(hardware_requested="h200", profile=hardware.get_profile("h200"), hardware_evidence="--hardware",
                      recipe="qwen3-4b-colocated", ray_address="ray://head:10001", report_dir=Path("report"),
                      quick=False)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


SLOW, GPU, E2E, CLUSTER = pytest.mark.slow.mark, pytest.mark.gpu.mark, pytest.mark.e2e.mark, pytest.mark.cluster.mark
NO_RAY = "a GPU Ray cluster (--ray-address): found none, only the embedded loopback Ray"
NO_PROFILE = "a hardware profile (--hardware): found no GPU seen"
ROWS = [
    # (markers, context changes, GPUs detect() finds, reason or None)
    ((), {}, (), None),
    ((SLOW,), {}, (), None),
    ((SLOW,), {"quick": True}, (), "slow (more than about 30 s): skipped by --quick"),
    ((), {"quick": True}, (), None),
    ((SLOW, GPU), {"quick": True}, (), "slow (more than about 30 s): skipped by --quick"),
    ((GPU,), {}, (H200,), None),
    ((GPU,), {}, (), "needs a CUDA GPU (sm_90+): found none"),
    ((GPU,), {"no_local_gpus": True}, (H200,),
     "--no-local-gpus: this machine's own GPUs are not judged (a Ray client or login node)"),
    ((GPU, CLUSTER), {"ray_address": None}, (H200,),
     "needs a Ray cluster (--ray-address): found none, only the embedded loopback Ray"),
    ((E2E,), {}, (), None),
    ((E2E,), {"ray_address": None}, (), f"needs {NO_RAY}"),
    ((E2E,), {"profile": None, "hardware_evidence": "no GPU seen"}, (), f"needs {NO_PROFILE}"),
    ((E2E,), {"ray_address": None, "profile": None, "hardware_evidence": "no GPU seen"}, (),
     f"needs {NO_RAY}; and {NO_PROFILE}"),
    ((E2E,), {"ray_address": None, "profile": None, "dry_run": True}, (), None),
    ((E2E, CLUSTER), {"ray_address": None, "dry_run": True}, (),
     "needs a Ray cluster (--ray-address): found none, only the embedded loopback Ray"),
    ((), {"ray_address": None}, (), None),  # no cluster marker: the embedded Ray is enough
    ((SLOW,), {"ray_address": None}, (), None),
    ((GPU,), {"ray_address": None}, (H200,), None),
    ((CLUSTER,), {}, (), None),
    ((CLUSTER,), {"ray_address": None}, (),
     "needs a Ray cluster (--ray-address): found none, only the embedded loopback Ray"),
]


@pytest.mark.parametrize(("markers", "changes", "found", "reason"), ROWS)
def test_rules_table_gating_skip_reason(monkeypatch, markers, changes, found, reason):
    detection = gpus.Detection(gpus=found, profile=None, evidence="recorded")
    monkeypatch.setattr(gpus, "detect", lambda timeout_s=None: detection)
    assert gating.skip_reason(Item(markers), context(**changes)) == reason


def test_rules_table_gating_gpu_marker_passes_the_read_error_on(monkeypatch):
    detection = gpus.Detection(gpus=(), profile=None, evidence="nvidia-smi", error="nvidia-smi ended with exit code 9")
    monkeypatch.setattr(gpus, "detect", lambda timeout_s=None: detection)
    assert gating.skip_reason(Item((GPU,)), context()) == (
        "needs a CUDA GPU (sm_90+): could not read the GPUs: nvidia-smi ended with exit code 9")


def test_rules_table_gating_gpu_marker_without_a_read_error_says_what_was_found():
    assert gating.gpu_skip_reason(GPU, ()) == "needs a CUDA GPU (sm_90+): found none"
    assert gating.gpu_skip_reason(GPU, (H200,)) is None


def test_rules_table_gating_a_real_item_without_the_cluster_marker_runs_on_the_embedded_ray(request):
    # pytest's own item, marked only after its setup (a marked test could be skipped by the very gate it judges):
    # markers other than 'cluster' ask for no Ray cluster
    assert gating.skip_reason(request.node, context(ray_address=None)) is None
    request.node.add_marker(pytest.mark.filterwarnings("ignore::DeprecationWarning"))
    request.node.add_marker(pytest.mark.slow)
    assert gating.skip_reason(request.node, context(ray_address=None)) is None
    assert gating.skip_reason(request.node, context(ray_address=None, quick=True)) == (
        "slow (more than about 30 s): skipped by --quick")

