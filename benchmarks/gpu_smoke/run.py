"""rlcheck's GPU smoke measure on this machine, repeated: the bf16 GEMM of every GPU and, with two or more GPUs, the
NCCL all-reduce across them, exactly as the gpu_bf16_gemm and gpu_nccl_allreduce checks run them.

Run on a GPU machine: python -m benchmarks.gpu_smoke.run --name h200 (writes benchmarks/results/gpu_smoke_<name>.json;
a machine of one GPU writes gpu_smoke_<name>_1gpu.json, with no all-reduce). The labels come from the module that
runs the measure (rlcheck.probes.gpu.gpu_smoke), so they say what ran.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from benchmarks import results_file
from rlcheck.probes.gpu import gpu_smoke
from rlcheck.probes.node.gpus import detect

FLOOR_FRACTION = 0.8
"""The rule the H200 floors follow: 80% of the lowest figure measured (room for clock and thermal variation)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="h200")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    gpus = detect().gpus
    gemm = [gpu_smoke.collect_bf16_gemm() for _ in range(args.repeats)]
    reduce = [gpu_smoke.collect_allreduce(world_size=len(gpus)) for _ in range(args.repeats)] if len(gpus) >= 2 else []
    rates = sorted(round(t, 1) for g in gemm for _, _, t in g.tflops_by_device)
    busbw = sorted(round(r.busbw_gbps, 1) for r in reduce if not r.error)
    name = f"gpu_smoke_{args.name}" + ("" if len(gpus) >= 2 else "_1gpu")
    path = results_file.write(name, {
        "gpus": [dataclasses.asdict(g) for g in gpus],
        "measure": {"gemm": gpu_smoke.GEMM_LABEL, "allreduce": gpu_smoke.ALLREDUCE_LABEL if reduce else
                    f"not run: {len(gpus)} GPU(s) here, the all-reduce needs two or more"},
        "runs": {"gemm": [dataclasses.asdict(g) for g in gemm], "allreduce": [dataclasses.asdict(r) for r in reduce]},
        "summary": {"gemm_bf16_tflops_per_gpu": rates, "allreduce_busbw_gbps": busbw},
        "floors_at_80pct_of_lowest": {
            gpu_smoke.GEMM_FLOOR: round(FLOOR_FRACTION * rates[0], 1) if rates else None,
            gpu_smoke.BUSBW_FLOOR: round(FLOOR_FRACTION * busbw[0], 1) if busbw else None},
    })
    print(path.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
