"""fp32 PyTorch reference for DSA sparse MLA: dense gather of the selected KV rows, then autograd.

Conventions shared with the TileLang kernels:
- q [B, S, H, D_qk], kv [B, S_kv, 1, D_qk], indices [B, S, 1, topk] int32 with -1 as padding;
- values are the first `dim_v` columns of each KV row (MLA shares K and V storage);
- a row whose indices are all padding attends to nothing: output 0, lse -inf, gradients 0.
Queries are processed in chunks so the gathered keys stay near `chunk_bytes` at any size.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from kernels.config import DIM_V

DEFAULT_CHUNK_BYTES = 2 << 30


@dataclass(frozen=True, slots=True)
class ReferenceGrads:
    dq: torch.Tensor
    """fp32, shape of q."""
    dkv: torch.Tensor
    """fp32, shape of kv."""


@contextlib.contextmanager
def exact_fp32_matmul() -> Iterator[None]:
    """Keep einsum in true fp32: a TF32 reference would carry ~1e-3 error of its own."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def default_sm_scale(dim_qk: int) -> float:
    return 1.0 / math.sqrt(dim_qk)


def _query_chunk(topk: int, dim_qk: int, chunk_bytes: int) -> int:
    """Queries per chunk so that the gathered fp32 keys take about `chunk_bytes`."""
    return max(1, chunk_bytes // (topk * dim_qk * 4))


def _attend(
    q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor, sm_scale: float, dim_v: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Differentiable fp32 attention of q [B,s,H,D] over the gathered rows of kv [B,S_kv,D]."""
    valid = indices >= 0  # [B, s, K]
    safe = indices.clamp(min=0).long()
    batch_ids = torch.arange(kv.shape[0], device=kv.device).view(-1, 1, 1)
    keys = kv[batch_ids, safe]  # [B, s, K, D]
    scores = torch.einsum("bshd,bskd->bshk", q, keys) * sm_scale
    scores = scores.masked_fill(~valid.unsqueeze(2), float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)  # -inf on all-padding rows
    # Subtracting -inf would make NaN (and NaN gradients through where); use 0 there instead.
    shift = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))
    probs = torch.exp(scores - shift.unsqueeze(-1))
    out = torch.einsum("bshk,bskd->bshd", probs, keys[..., :dim_v])
    return out, lse


def reference_forward(
    q: torch.Tensor,
    kv: torch.Tensor,
    indices: torch.Tensor,
    sm_scale: float | None = None,
    dim_v: int = DIM_V,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
) -> tuple[torch.Tensor, torch.Tensor]:
    """fp32 output [B,S,H,dim_v] and natural-log lse [B,S,H] of sparse attention."""
    scale = default_sm_scale(q.shape[-1]) if sm_scale is None else sm_scale
    kv32 = kv[:, :, 0].float()
    chunk = _query_chunk(indices.shape[-1], q.shape[-1], chunk_bytes)
    outs, lses = [], []
    with torch.no_grad(), exact_fp32_matmul():
        for start in range(0, q.shape[1], chunk):
            stop = start + chunk
            out, lse = _attend(q[:, start:stop].float(), kv32, indices[:, start:stop, 0], scale, dim_v)
            outs.append(out)
            lses.append(lse)
    return torch.cat(outs, dim=1), torch.cat(lses, dim=1)


def reference_backward(
    q: torch.Tensor,
    kv: torch.Tensor,
    indices: torch.Tensor,
    grad_out: torch.Tensor,
    sm_scale: float | None = None,
    dim_v: int = DIM_V,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
) -> ReferenceGrads:
    """fp32 dq, dkv of sum(out * grad_out), by autograd through `_attend`, chunk by chunk."""
    scale = default_sm_scale(q.shape[-1]) if sm_scale is None else sm_scale
    kv32 = kv[:, :, 0].detach().float().requires_grad_(True)
    chunk = _query_chunk(indices.shape[-1], q.shape[-1], chunk_bytes)
    dq_parts = []
    with exact_fp32_matmul():
        for start in range(0, q.shape[1], chunk):
            stop = start + chunk
            q_part = q[:, start:stop].detach().float().requires_grad_(True)
            out, _ = _attend(q_part, kv32, indices[:, start:stop, 0], scale, dim_v)
            out.backward(grad_out[:, start:stop].float())  # kv32.grad accumulates over chunks
            assert q_part.grad is not None
            dq_parts.append(q_part.grad)
    assert kv32.grad is not None
    return ReferenceGrads(dq=torch.cat(dq_parts, dim=1), dkv=kv32.grad.unsqueeze(2))
