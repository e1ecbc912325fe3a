"""GPU smoke on this machine: bf16 GEMM rate of every GPU and NCCL all-reduce bus bandwidth, against the profile.

Floors are profile thresholds (bf16_gemm_min_tflops, nccl_allreduce_min_busbw_gbps). The h200 profile sets them
from measurements on H200s (benchmarks/results/gpu_smoke_h200.json); a profile without them reports the figure
and SKIPs.
"""

from __future__ import annotations

import pytest

from rlcheck import hardware
from rlcheck.probes.gpu_smoke import collect_allreduce, collect_bf16_gemm, evaluate_allreduce, evaluate_bf16_gemm


@pytest.mark.gpu
def test_gpu_bf16_gemm(record_verdict, rlcheck_context):
    """bf16 GEMM TFLOP/s of the slowest GPU here against the profile's floor."""
    record_verdict(evaluate_bf16_gemm(collect_bf16_gemm(), rlcheck_context.profile))


@pytest.mark.gpu(count=2)
def test_gpu_nccl_allreduce(record_verdict, rlcheck_context):
    """NCCL all-reduce bus bandwidth across this machine's GPUs against the profile's floor."""
    world = len(hardware.detect().gpus)
    record_verdict(evaluate_allreduce(collect_allreduce(world_size=world), rlcheck_context.profile))
