"""One rank of a two-node all-reduce: the body of the Ray task pinned to each node of a pair.

Imported by the Ray worker of every node, so only the standard library loads with it; torch is imported inside
the task. The pair's first node holds the rendezvous (rank 0): pick_port() runs there first and picks a free port.
"""

from __future__ import annotations

import datetime
import socket
import time
from collections.abc import Callable
from typing import Any


def pick_port(address: str) -> int:
    """A free TCP port on this node's Ray address for the pair's rendezvous (closed again before use: a small race
    with another process taking it, which shows as an error of that pair, never a hang)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def bus_bandwidth_gbps(size_bytes: int, seconds_per_iteration: float, world_size: int) -> float:
    """nccl-tests' all-reduce bus bandwidth: algorithm bandwidth x 2(n-1)/n, in GB/s (1e9 bytes)."""
    return size_bytes / seconds_per_iteration * 2 * (world_size - 1) / world_size / 1e9


def all_reduce_member(*, rank: int, world_size: int, master_addr: str, master_port: int, backend: str,
                      size_bytes: int, iterations: int, timeout_s: float,
                      between_iterations: Callable[[], None] | None = None) -> dict[str, Any]:
    """Join the pair's process group, all-reduce size_bytes iterations times (after one warm-up), and time it.

    timeout_s bounds the rendezvous and each collective (torch.distributed's own timeout); the driver's deadline
    bounds the whole task. between_iterations: a seam for tests that slow one node down; rlcheck never sets it.
    """
    import torch
    import torch.distributed as dist

    device = torch.device("cuda", 0) if backend == "nccl" else torch.device("cpu")
    dist.init_process_group(backend=backend, init_method=f"tcp://{master_addr}:{master_port}", rank=rank,
                            world_size=world_size, timeout=datetime.timedelta(seconds=timeout_s))
    try:
        dtype = torch.bfloat16 if backend == "nccl" else torch.float32
        tensor = torch.ones(size_bytes // torch.finfo(dtype).bits * 8, dtype=dtype, device=device)
        dist.all_reduce(tensor)  # warm-up: connection set-up is not bandwidth
        if device.type == "cuda":
            torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iterations):
            if between_iterations is not None:
                between_iterations()
            dist.all_reduce(tensor)
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
    finally:
        dist.destroy_process_group()
    size = tensor.numel() * tensor.element_size()
    return {"rank": rank, "seconds": seconds, "size_bytes": size,
            "busbw_gbps": bus_bandwidth_gbps(size, seconds / iterations, world_size)}
