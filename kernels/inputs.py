"""Random sparse-MLA inputs with named padding patterns, reproducible from a seed.

Patterns (`-1` is padding):
- `none`: every row selects `topk` distinct KV rows;
- `causal`: query t selects among KV rows [0, t + seq_len_kv - seq_len], padding trails
  (what a DSA indexer gives the first `topk` tokens of a sequence);
- `scattered`: like `none`, with about a quarter of the slots set to -1 anywhere in the row;
- `empty_rows`: `scattered`, plus every 7th row entirely padding;
- `prefix`: query t selects among KV rows [0, max(t, 1)), padding trails: the distribution of
  tile-ai's example benchmark, whose kernel masks any index > t.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernels.config import DIM_QK, DIM_V, MlaShape

PADDING_PATTERNS: tuple[str, ...] = ("none", "causal", "scattered", "empty_rows", "prefix")
_ROWS_BYTES = 256 << 20  # bound on the random-score scratch per chunk of rows


@dataclass(frozen=True, slots=True)
class MlaInputs:
    q: torch.Tensor
    """bf16 [B, S, H, 576]."""
    kv: torch.Tensor
    """bf16 [B, S_kv, 1, 576]."""
    indices: torch.Tensor
    """int32 [B, S, 1, topk], -1 = padding."""
    grad_out: torch.Tensor
    """bf16 [B, S, H, 512], the upstream gradient of the attention output."""


def _select(limits: torch.Tensor, seq_len_kv: int, topk: int, gen: torch.Generator) -> torch.Tensor:
    """Per row, `topk` distinct indices in [0, limit]; slots beyond limit+1 candidates get -1."""
    device = limits.device
    scores = torch.rand((limits.numel(), seq_len_kv), generator=gen, device=device)
    columns = torch.arange(seq_len_kv, device=device)
    scores = scores.masked_fill(columns.view(1, -1) > limits.view(-1, 1), -1.0)
    values, picked = scores.topk(min(topk, seq_len_kv), dim=-1)  # random order among the candidates
    picked = torch.where(values >= 0, picked, torch.full_like(picked, -1)).to(torch.int32)
    return torch.nn.functional.pad(picked, (0, topk - picked.shape[-1]), value=-1)


def make_indices(shape: MlaShape, padding: str, seed: int, device: str = "cuda") -> torch.Tensor:
    """int32 [B, S, 1, topk] top-k indices with the named padding pattern."""
    if padding not in PADDING_PATTERNS:
        raise ValueError(f"padding={padding!r}: allowed {PADDING_PATTERNS}")
    if padding not in ("causal", "prefix") and shape.seq_len_kv < shape.topk:
        raise ValueError(f"seq_len_kv={shape.seq_len_kv} < topk={shape.topk}: only causal or prefix padding allow it")
    gen = torch.Generator(device=device).manual_seed(seed)
    rows = shape.batch * shape.seq_len
    positions = torch.arange(shape.seq_len, device=device).repeat(shape.batch)
    if padding == "causal":
        limits = positions + (shape.seq_len_kv - shape.seq_len)
    elif padding == "prefix":
        limits = (positions - 1).clamp(min=0)
    else:
        limits = torch.full((rows,), shape.seq_len_kv - 1, device=device)
    rows_per_chunk = max(1, _ROWS_BYTES // (4 * shape.seq_len_kv))
    parts = [
        _select(limits[start : start + rows_per_chunk], shape.seq_len_kv, shape.topk, gen)
        for start in range(0, rows, rows_per_chunk)
    ]
    indices = torch.cat(parts)
    if padding in ("scattered", "empty_rows"):
        holes = torch.rand(indices.shape, generator=gen, device=device) < 0.25
        indices = indices.masked_fill(holes, -1)
    if padding == "empty_rows":
        indices[positions % 7 == 3] = -1
    return indices.view(shape.batch, shape.seq_len, 1, shape.topk).contiguous()


def make_inputs(shape: MlaShape, padding: str = "causal", seed: int = 0, device: str = "cuda") -> MlaInputs:
    """bf16 q, kv, grad_out from N(0, 1) and indices with `padding`; same seed, same tensors."""
    gen = torch.Generator(device=device).manual_seed(seed)

    def randn(*dims: int) -> torch.Tensor:
        return torch.randn(dims, generator=gen, device=device, dtype=torch.float32).to(torch.bfloat16)

    q = randn(shape.batch, shape.seq_len, shape.heads, DIM_QK)
    kv = randn(shape.batch, shape.seq_len_kv, 1, DIM_QK)
    grad_out = randn(shape.batch, shape.seq_len, shape.heads, DIM_V)
    indices = make_indices(shape, padding, seed + 1, device)
    return MlaInputs(q=q, kv=kv, indices=indices, grad_out=grad_out)


def live_blocks(indices: torch.Tensor, block: int) -> torch.Tensor:
    """int32 [B, S]: index blocks of size `block` up to the last valid slot of each row.

    Blocks past the last valid index hold only padding; the kernels skip them. Any padding
    before the last valid slot is still masked inside the kernel, so every pattern stays exact.
    """
    topk = indices.shape[-1]
    slots = torch.arange(topk, device=indices.device, dtype=torch.int32)
    last_valid = torch.where(indices[:, :, 0] >= 0, slots, torch.full_like(slots, -1)).amax(dim=-1)
    return torch.div(last_valid + block, block, rounding_mode="floor").to(torch.int32).contiguous()
