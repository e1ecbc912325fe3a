"""Rule table for the GPU smoke verdicts (rlcheck.probes.gpu.gpu_smoke), judged on recorded results: the whole
verdict on both sides of each floor, for a floor measured here, one from this cluster's baseline and a public one,
no profile or no floor, and a child that gave no result; the collectors with the child process replaced (what they
run, with which arguments and deadline, and which line they read).
tests/probes/gpu/test_probe_gpu_smoke.py runs the measuring code itself on CPU."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from rlcheck import hardware
from rlcheck.probes.gpu import gpu_smoke as gs
from rlcheck.process import subproc
from rlcheck.verdict import Status

H200 = hardware.get_profile("h200")
GEMM_REMEDY = ("Look at that GPU's clocks, power and temperature (nvidia-smi -q -d PERFORMANCE; the gpu_node_health "
               "clocks verdict); drain the node if it stays slow")
BUSBW_REMEDY = "Check NVLink (nvidia-smi nvlink -s, nvidia-smi topo -m) and NCCL_DEBUG=INFO's transport"
PUBLIC = ("a public figure, not measured on this hardware: WARN until a measured floor replaces it; record this "
          "cluster's own with `rlcheck baseline record` from a healthy run")


def _profile(provenance: str | None) -> hardware.HardwareProfile:
    """H200's profile with floors of 700 TFLOP/s and 300 GB/s of the given provenance (None: no floors)."""
    if provenance is None:
        return dataclasses.replace(H200, name="toy", thresholds={}, provenance={})
    return dataclasses.replace(H200, name="toy", thresholds={**H200.thresholds, gs.GEMM_FLOOR: 700.0,
                                                             gs.BUSBW_FLOOR: 300.0},
                               provenance={gs.GEMM_FLOOR: provenance, gs.BUSBW_FLOOR: provenance})


# (a profile with a performance floor always says where it comes from: HardwareProfile refuses one that does not)
MEASURED, BASELINE, PUBLIC_FLOOR = _profile("measured"), _profile("baseline"), _profile("public")


def _gemm(*tflops: float) -> gs.GemmObservation:
    return gs.GemmObservation(tflops_by_device=tuple((f"cuda:{i}", "NVIDIA H200", t) for i, t in enumerate(tflops)))


SLOWEST = "slowest of 3 GPU(s): cuda:1 (NVIDIA H200) at"


@pytest.mark.parametrize(("obs", "profile", "status", "summary", "remedy"), [
    (_gemm(760.0, 700.0, 700.0), MEASURED, Status.PASS, f"{SLOWEST} 700.0 TFLOP/s bf16 (>= 700, measured floor)", ""),
    (_gemm(760.0, 699.9, 700.0), MEASURED, Status.FAIL, f"{SLOWEST} 699.9 TFLOP/s bf16; expected >= 700",
     GEMM_REMEDY),
    (_gemm(760.0, 699.9, 700.0), BASELINE, Status.FAIL, f"{SLOWEST} 699.9 TFLOP/s bf16; expected >= 700",
     GEMM_REMEDY),
    (_gemm(760.0, 700.0, 800.0), BASELINE, Status.PASS, f"{SLOWEST} 700.0 TFLOP/s bf16 (>= 700, baseline floor)", ""),
    (_gemm(760.0, 699.9, 700.0), PUBLIC_FLOOR, Status.WARN,
     f"{SLOWEST} 699.9 TFLOP/s bf16; expected >= 700 ({PUBLIC})", GEMM_REMEDY),
    (_gemm(760.0, 700.0, 701.0), PUBLIC_FLOOR, Status.PASS, f"{SLOWEST} 700.0 TFLOP/s bf16 (>= 700, public floor)",
     ""),
    (_gemm(760.0, 10.0, 701.0), None, Status.SKIP,
     f"no floor to judge by (no hardware profile); {SLOWEST} 10.0 TFLOP/s bf16", ""),
    (_gemm(760.0, 10.0, 701.0), _profile(None), Status.SKIP,
     f"no floor to judge by (toy has no bf16_gemm_min_tflops yet); {SLOWEST} 10.0 TFLOP/s bf16", ""),
])
def test_gemm(obs, profile, status, summary, remedy):
    verdict = gs.evaluate_bf16_gemm(obs, profile)
    assert (verdict.status, verdict.summary, verdict.remedy) == (status, summary, remedy)
    assert verdict.details == "\n".join(f"cuda:{i} NVIDIA H200: {t:.1f} TFLOP/s"
                                        for i, (_, _, t) in enumerate(obs.tflops_by_device))


def test_gemm_not_run_is_unknown():
    verdict = gs.evaluate_bf16_gemm(gs.GemmObservation(error="the GEMM child found no device"), MEASURED)
    assert (verdict.status, verdict.summary, verdict.details, verdict.remedy) == (
        Status.UNKNOWN, "bf16 GEMM did not run: the GEMM child found no device", "", "")
    # whatever devices an observation lists are in the details, an error or not
    both = dataclasses.replace(_gemm(5.0), error="cut short")
    assert gs.evaluate_bf16_gemm(both, MEASURED).details == "cuda:0 NVIDIA H200: 5.0 TFLOP/s"


def _allreduce(busbw: float, size: int = 256 * 2**20) -> gs.AllReduceObservation:
    return gs.AllReduceObservation(world_size=8, size_bytes=size, busbw_gbps=busbw)


OVER = "all-reduce bus bandwidth"


@pytest.mark.parametrize(("obs", "profile", "status", "summary", "remedy"), [
    (_allreduce(300.0), MEASURED, Status.PASS, f"{OVER} 300.0 GB/s over 8 GPU(s) (>= 300, measured floor)", ""),
    (_allreduce(299.9), MEASURED, Status.FAIL, f"{OVER} 299.9 GB/s over 8 GPU(s); expected >= 300", BUSBW_REMEDY),
    (_allreduce(299.9), PUBLIC_FLOOR, Status.WARN, f"{OVER} 299.9 GB/s over 8 GPU(s); expected >= 300 ({PUBLIC})",
     BUSBW_REMEDY),
    (_allreduce(300.0), PUBLIC_FLOOR, Status.PASS, f"{OVER} 300.0 GB/s over 8 GPU(s) (>= 300, public floor)", ""),
    (_allreduce(299.9), BASELINE, Status.FAIL, f"{OVER} 299.9 GB/s over 8 GPU(s); expected >= 300", BUSBW_REMEDY),
    (_allreduce(1.0), None, Status.SKIP, f"no floor to judge by (no hardware profile); {OVER} 1.0 GB/s over 8 GPU(s)",
     ""),
    (_allreduce(1.0), _profile(None), Status.SKIP,
     f"no floor to judge by (toy has no nccl_allreduce_min_busbw_gbps yet); {OVER} 1.0 GB/s over 8 GPU(s)", ""),
])
def test_allreduce(obs, profile, status, summary, remedy):
    verdict = gs.evaluate_allreduce(obs, profile)
    assert (verdict.status, verdict.summary, verdict.remedy, verdict.details) == (
        status, summary, remedy, "256 MiB float32 over 8 rank(s)")


def test_allreduce_not_run_is_unknown_naming_what_was_asked():
    obs = gs.AllReduceObservation(world_size=2, size_bytes=3 * 2**19, error="the all-reduce children ended with x")
    verdict = gs.evaluate_allreduce(obs, MEASURED)
    assert (verdict.status, verdict.summary, verdict.details, verdict.remedy) == (
        Status.UNKNOWN, "all-reduce did not run: the all-reduce children ended with x",
        "1.5 MiB float32 over 2 rank(s)", "")


# --- the collectors, with the child replaced --------------------------------------------------------------------


def _child(monkeypatch, stdout: str, *, returncode: int | None = 0, timed_out: bool = False) -> dict:
    seen: dict = {}

    def run(argv, *, timeout_s, env):
        seen.update(argv=list(argv), timeout_s=timeout_s, env=env, code=Path(argv[1]).read_text())
        return subproc.Completed(argv=tuple(argv), returncode=returncode, stdout=stdout, stderr="e1\ne2\n",
                                 timed_out=timed_out)

    monkeypatch.setattr(subproc, "run", run)
    monkeypatch.setattr(gs, "free_loopback_port", lambda: 29123)
    return seen


def test_gemm_collector_reads_the_first_result_line(monkeypatch):
    rows = [{"device": "cuda:0", "name": "NVIDIA H200", "tflops": 701.5}, {"device": "cuda:1", "name": "X",
                                                                          "tflops": 2.0}]
    seen = _child(monkeypatch, f"warm\nRLCHECK_GEMM {json.dumps(rows)}\nRLCHECK_GEMM []\n")
    assert gs.collect_bf16_gemm(n=64, iters=2, device="cpu", timeout_s=9) == gs.GemmObservation(
        tflops_by_device=(("cuda:0", "NVIDIA H200", 701.5), ("cuda:1", "X", 2.0)))
    assert seen["argv"][0] == sys.executable and seen["argv"][2:] == ["64", "2", "cpu"]
    assert (seen["timeout_s"], seen["code"]) == (9, gs.GEMM_CODE) and seen["env"] == subproc.child_env()
    gs.collect_bf16_gemm()
    assert seen["argv"][2:] == ["8192", "20", "cuda"] and seen["timeout_s"] == 300


@pytest.mark.parametrize(("stdout", "returncode", "timed_out", "error"), [
    ("RLCHECK_GEMM []\n", 0, False, "the GEMM child found no device"),
    ("out\n", None, True, "the GEMM child ended with killed at its deadline: e1\ne2"),
    ("RLCHECK_GEMMX []\nout\n", 1, False, "the GEMM child ended with exit code 1: e1\ne2"),
])
def test_gemm_collector_without_rows(monkeypatch, stdout, returncode, timed_out, error):
    _child(monkeypatch, stdout, returncode=returncode, timed_out=timed_out)
    assert gs.collect_bf16_gemm() == gs.GemmObservation(error=error)


def test_allreduce_collector(monkeypatch):
    result = {"world_size": 4, "size_bytes": 1024, "busbw_gbps": 12.5}
    seen = _child(monkeypatch, f"RLCHECK_ALLREDUCE {json.dumps(result)}\n")
    assert gs.collect_allreduce(world_size=4, size_bytes=1024, iters=2, backend="gloo", timeout_s=7) == \
        gs.AllReduceObservation(world_size=4, size_bytes=1024, busbw_gbps=12.5)
    assert seen["argv"][2:] == ["1024", "2", "gloo", "4", "29123"]
    assert (seen["timeout_s"], seen["code"]) == (7, gs.ALLREDUCE_CODE)
    gs.collect_allreduce(world_size=8)
    assert seen["argv"][2:] == [str(256 * 2**20), "20", "nccl", "8", "29123"] and seen["timeout_s"] == 300


def test_allreduce_collector_without_a_result(monkeypatch):
    _child(monkeypatch, "RLCHECK_GEMM {}\n", returncode=-9)
    assert gs.collect_allreduce(world_size=2, size_bytes=4096) == gs.AllReduceObservation(
        world_size=2, size_bytes=4096, error="the all-reduce children ended with killed by signal SIGKILL: e1\ne2")
