"""Device timing and the roofline numbers of the sparse-MLA benchmark.

Timing: CUDA events around each call, the L2 flushed before each repetition (the problem's
KV and dKV fit in the H200's 60 MB L2 at small S, and a warm L2 would flatter every kernel
the same way but not like a training step), median of the repetitions.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch

from kernels.config import DIM_QK, DIM_V, MlaShape

L2_FLUSH_BYTES = 256 << 20


@dataclass(frozen=True, kw_only=True, slots=True)
class Timing:
    median_ms: float
    min_ms: float
    max_ms: float
    reps: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def time_cuda(fn: Callable[[], object], warmup: int = 3, reps: int = 10) -> Timing:
    """Median device time of `fn()` in ms; L2 flushed before every timed call."""
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        fn()
    pairs = []
    for _ in range(reps):
        flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        pairs.append((start, stop))
    torch.cuda.synchronize()
    times = [start.elapsed_time(stop) for start, stop in pairs]
    return Timing(median_ms=statistics.median(times), min_ms=min(times), max_ms=max(times), reps=reps)


def copy_bandwidth_bytes_per_s(size_bytes: int = 4 << 30) -> float:
    """Device-to-device copy rate, counting bytes read plus bytes written (the roofline's ceiling)."""
    src = torch.empty(size_bytes // 2, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    timing = time_cuda(lambda: dst.copy_(src), warmup=3, reps=10)
    return size_bytes / (timing.median_ms * 1e-3)


@dataclass(frozen=True, kw_only=True, slots=True)
class WorkModel:
    """Bytes and FLOPs of one call, counted from the shapes (B=1 counts per batch element)."""

    unique_bytes: float
    """Each input read once, each output written once: the HBM floor."""
    gathered_bytes: float
    """Plus every gathered KV row and every fp32 dKV read-modify-write, as if none hit in L2."""
    flops: float
    """Dense over all top-k slots (padding included), as upstream counts."""


def bwd_work(shape: MlaShape) -> WorkModel:
    tokens = shape.batch * shape.seq_len
    rows_kv = shape.batch * shape.seq_len_kv
    per_query = shape.heads * (DIM_QK * 2 * 2 + DIM_V * 2 * 2 + 4 * 2)  # q, dq, o, do, lse, delta
    unique = tokens * (per_query + shape.topk * 4) + rows_kv * DIM_QK * (2 + 4 * 2 + 2)  # kv, dkv rmw, cast
    gathered = unique + tokens * shape.topk * DIM_QK * (2 + 4 * 2)
    flops = 2.0 * tokens * shape.heads * shape.topk * (3 * DIM_QK + 2 * DIM_V)
    return WorkModel(unique_bytes=unique, gathered_bytes=gathered, flops=flops)


def fwd_work(shape: MlaShape) -> WorkModel:
    tokens = shape.batch * shape.seq_len
    unique = tokens * (shape.heads * (DIM_QK * 2 + DIM_V * 2 + 4) + shape.topk * 4)
    unique += shape.batch * shape.seq_len_kv * DIM_QK * 2
    gathered = unique + tokens * shape.topk * DIM_QK * 2
    flops = 2.0 * tokens * shape.heads * shape.topk * (DIM_QK + DIM_V)
    return WorkModel(unique_bytes=unique, gathered_bytes=gathered, flops=flops)
