"""Measure what a CUDA context and NCCL communicators take from a GPU, device-wide as mem_get_info sees it.

    torchrun --nproc-per-node 2 scripts/measure_nccl_memory.py

NCCL builds a communicator's buffers lazily, at its first collective and at its first send/recv
(all-to-all). Recorded 2026-12-01 on 2 x H200 (torch 2.11.0+cu130, NCCL 2.28.9, NCCL_NVLS_ENABLE=0),
rank 0, GiB: context 0.515 (nvidia-smi read 0 MiB before); default group first all_reduce 0.463;
its first all_to_all of 96 MiB 0.529 (0.094 of it the output tensor); a new group's first
broadcast 0.281 and its all_reduce after that 0.0. With one rank NCCL takes nothing at the
collectives. rlcheck.probes.recipe.memory_buffers reads: context 0.51, per communicator 0.28, once per
process 0.463 - 0.281 = 0.18, send/recv buffers 0.529 - 0.094 = 0.44 (one peer).
"""

from __future__ import annotations

import json
import os

import torch
import torch.distributed as dist

GIB = 2**30


def used() -> float:
    free, total = torch.cuda.mem_get_info()
    return (total - free) / GIB


def step(results: dict[str, float], name: str, action) -> None:
    mark = used()
    action()
    torch.cuda.synchronize()
    results[name] = used() - mark


def main() -> None:
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    results = {"context (mem_get_info creates it)": used()}
    a = torch.randn(4096, 4096, device="cuda")
    (a @ a).sum().item()
    results["after a first matmul"] = used()
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    x = torch.ones(48 << 20, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    step(results, "default group: first all_reduce", lambda: dist.all_reduce(x))
    step(results, "default group: first all_to_all (incl. its 96 MiB output)", lambda: dist.all_to_all_single(out, x))
    step(results, "default group: second all_to_all", lambda: dist.all_to_all_single(out, x))
    group = dist.new_group(list(range(dist.get_world_size())))
    step(results, "new group: first broadcast", lambda: dist.broadcast(x, 0, group=group))
    step(results, "new group: all_reduce after it", lambda: dist.all_reduce(x, group=group))
    results["torch reserved"] = torch.cuda.memory_reserved() / GIB
    if dist.get_rank() == 0:
        print(json.dumps({"world": dist.get_world_size(), "nccl": torch.cuda.nccl.version(), "torch": torch.__version__,
                          "NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE"),
                          "gib": {k: round(v, 3) for k, v in results.items()}}, indent=1))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
