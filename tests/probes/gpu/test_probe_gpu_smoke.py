"""GPU smoke probe: the real measuring code on CPU (bf16 matmul, gloo all-reduce), and the judging table."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rlcheck import hardware
from rlcheck.probes.gpu import gpu_smoke
from rlcheck.verdict import Status

H200 = hardware.get_profile("h200")
B300 = hardware.get_profile("b300")
NO_FLOORS = dataclasses.replace(B300, thresholds={"shm_min_gib": 10.0}, provenance={})
FLOORED = dataclasses.replace(H200, thresholds={**H200.thresholds, gpu_smoke.GEMM_FLOOR: 700.0,
                                                gpu_smoke.BUSBW_FLOOR: 300.0},
                              source={**H200.source, gpu_smoke.GEMM_FLOOR: "test", gpu_smoke.BUSBW_FLOOR: "test"})
GEMM = gpu_smoke.GemmObservation(tflops_by_device=(("cuda:0", "NVIDIA H200", 760.0), ("cuda:1", "NVIDIA H200", 512.5)))
ALLREDUCE = gpu_smoke.AllReduceObservation(world_size=8, size_bytes=256 * 2**20, busbw_gbps=355.0)


def test_probe_gpu_smoke_gemm_measures_on_cpu():
    obs = gpu_smoke.collect_bf16_gemm(n=128, iters=2, device="cpu", timeout_s=120)
    assert not obs.error and obs.tflops_by_device[0][0] == "cpu" and obs.tflops_by_device[0][2] > 0


def test_probe_gpu_smoke_allreduce_measures_with_gloo():
    obs = gpu_smoke.collect_allreduce(world_size=2, size_bytes=2**20, iters=2, backend="gloo", timeout_s=180)
    assert not obs.error, obs.error
    assert obs.world_size == 2 and obs.busbw_gbps > 0


@pytest.mark.parametrize(("evaluate", "obs", "profile", "status", "fragment"), [
    (gpu_smoke.evaluate_bf16_gemm, GEMM, NO_FLOORS, Status.SKIP, "b300 has no bf16_gemm_min_tflops yet"),
    (gpu_smoke.evaluate_bf16_gemm, GEMM, None, Status.SKIP, "no hardware profile"),
    (gpu_smoke.evaluate_bf16_gemm, GEMM, FLOORED, Status.FAIL, "cuda:1 (NVIDIA H200) at 512.5 TFLOP/s bf16; expected"),
    (gpu_smoke.evaluate_bf16_gemm, dataclasses.replace(GEMM, tflops_by_device=GEMM.tflops_by_device[:1]), FLOORED,
     Status.PASS, "760.0 TFLOP/s bf16 (>= 700, measured floor)"),
    (gpu_smoke.evaluate_bf16_gemm, gpu_smoke.GemmObservation(error="killed at its deadline"), H200, Status.UNKNOWN,
     "bf16 GEMM did not run: killed at its deadline"),
    (gpu_smoke.evaluate_allreduce, ALLREDUCE, NO_FLOORS, Status.SKIP, "b300 has no nccl_allreduce_min_busbw_gbps yet"),
    (gpu_smoke.evaluate_allreduce, ALLREDUCE, FLOORED, Status.PASS,
     "355.0 GB/s over 8 GPU(s) (>= 300, measured floor)"),
    (gpu_smoke.evaluate_allreduce, dataclasses.replace(ALLREDUCE, busbw_gbps=41.0), FLOORED, Status.FAIL,
     "41.0 GB/s over 8 GPU(s); expected >= 300"),
    (gpu_smoke.evaluate_allreduce, gpu_smoke.AllReduceObservation(error="exit code 1"), H200, Status.UNKNOWN,
     "all-reduce did not run"),
])
def test_probe_gpu_smoke_judged(evaluate, obs, profile, status, fragment):
    verdict = evaluate(obs, profile)
    assert verdict.status is status and fragment in verdict.summary, verdict.summary


B300_GEMM = gpu_smoke.GemmObservation(tflops_by_device=(("cuda:0", "NVIDIA B300", 1395.0),))


def _gemm(name: str, tflops: float) -> gpu_smoke.GemmObservation:
    return gpu_smoke.GemmObservation(tflops_by_device=(("cuda:0", name, tflops),))


@pytest.mark.parametrize(("evaluate", "obs", "profile", "status", "fragment"), [
    (gpu_smoke.evaluate_bf16_gemm, B300_GEMM, B300, Status.PASS, "1395.0 TFLOP/s bf16 (>= 1395, public floor)"),
    (gpu_smoke.evaluate_bf16_gemm, _gemm("NVIDIA B300", 1394.9), B300, Status.WARN,
     "expected >= 1395 (a public figure, not measured on this hardware"),
    (gpu_smoke.evaluate_allreduce, dataclasses.replace(ALLREDUCE, busbw_gbps=415.0), B300, Status.PASS,
     "(>= 415, public floor)"),
    (gpu_smoke.evaluate_allreduce, ALLREDUCE, B300, Status.WARN, "rlcheck baseline record"),
    (gpu_smoke.evaluate_bf16_gemm, _gemm("NVIDIA H200", 615.0), H200, Status.PASS, "(>= 615, measured floor)"),
    (gpu_smoke.evaluate_bf16_gemm, _gemm("NVIDIA H200", 614.9), H200, Status.FAIL, "expected >= 615"),
    (gpu_smoke.evaluate_allreduce, dataclasses.replace(ALLREDUCE, busbw_gbps=239.9), H200, Status.FAIL,
     "expected >= 240"),
])
def test_probe_gpu_smoke_public_floors_warn_measured_floors_fail(evaluate, obs, profile, status, fragment):
    verdict = evaluate(obs, profile)
    assert verdict.status is status and fragment in verdict.summary, verdict.summary


@pytest.mark.parametrize("name", ["h100", "b200", "b300", "gb200", "gb300"])
def test_probe_gpu_smoke_every_profile_has_public_floors_with_sources(name):
    profile = hardware.get_profile(name)
    for floor in (gpu_smoke.GEMM_FLOOR, gpu_smoke.BUSBW_FLOOR):
        assert profile.thresholds[floor] > 0 and profile.provenance[floor] == "public"
        assert "not measured on this hardware" in profile.source[floor]
    assert not profile.floor_measured(gpu_smoke.GEMM_FLOOR) and H200.floor_measured(gpu_smoke.GEMM_FLOOR)


def test_probe_gpu_smoke_h200_gemm_floor_is_80pct_of_the_lowest_measured():
    import json

    single = json.loads((RESULTS / "gpu_smoke_h200_1gpu.json").read_text())
    lowest = single["summary"]["gemm_bf16_tflops_per_gpu"][0]
    assert single["command"] == "python3 -m benchmarks.gpu_smoke.run --name h200"
    assert int(0.8 * lowest) == H200.thresholds[gpu_smoke.GEMM_FLOOR]


RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results"
MEASURED = Path(__file__).resolve().parents[3] / "benchmarks" / "unreproduced" / "gpu_smoke_h200_2gpu.json"
"""Hand-assembled 2 x H200 figures (benchmarks/unreproduced/README.md): measured, not yet written by a command."""


def test_probe_gpu_smoke_h200_floors_against_the_h200_measurements():
    """The recorded H200 runs PASS the h200 floors; the same GPUs throttled to 60% FAIL them."""
    import json

    from rlcheck.probes.gpu.gpu_smoke import (
        AllReduceObservation,
        GemmObservation,
        evaluate_allreduce,
        evaluate_bf16_gemm,
    )

    runs = json.loads(MEASURED.read_text())["runs"]
    h200 = hardware.get_profile("h200")
    for run in runs["gemm"]:
        measured = tuple(tuple(d) for d in run["tflops_by_device"])
        assert evaluate_bf16_gemm(GemmObservation(tflops_by_device=measured, error=""), h200).status is Status.PASS
        throttled = tuple((dev, name, tflops * 0.6) for dev, name, tflops in measured)
        assert evaluate_bf16_gemm(GemmObservation(tflops_by_device=throttled, error=""), h200).status is Status.FAIL
    for run in runs["allreduce_2gpu"]:
        assert evaluate_allreduce(AllReduceObservation(**run), h200).status is Status.PASS
        slow = AllReduceObservation(**{**run, "busbw_gbps": run["busbw_gbps"] * 0.6})
        assert evaluate_allreduce(slow, h200).status is Status.FAIL
