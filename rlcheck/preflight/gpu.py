"""GPU smoke on this machine: bf16 GEMM rate of every GPU and NCCL all-reduce bus bandwidth, against the profile.

Floors are profile thresholds (bf16_gemm_min_tflops, nccl_allreduce_min_busbw_gbps). The h200 profile sets them
from measurements on H200s (benchmarks/results/gpu_smoke_h200.json); a profile without them reports the figure
and SKIPs.
"""

from __future__ import annotations

from rlcheck.preflight.registry import Check, Need
from rlcheck.probes import gpus
from rlcheck.probes.gpu_smoke import collect_allreduce, collect_bf16_gemm, evaluate_allreduce, evaluate_bf16_gemm

GPU = frozenset({Need.GPU, Need.PROFILE})

CHECKS = (
    Check(id="gpu_bf16_gemm", guards=(), needs=GPU, gpu_count=1,
          judges="(GPU machines) bf16 GEMM rate of the slowest GPU against the profile's floor",
          collect=lambda i: collect_bf16_gemm(), judge=lambda obs, i: evaluate_bf16_gemm(obs, i.profile)),
    Check(id="gpu_nccl_allreduce", guards=(), needs=GPU, gpu_count=2,
          judges="(GPU machines) NCCL all-reduce bus bandwidth across this machine's GPUs against the profile's floor",
          collect=lambda i: collect_allreduce(world_size=len(gpus.detect().gpus)),
          judge=lambda obs, i: evaluate_allreduce(obs, i.profile)),
)
