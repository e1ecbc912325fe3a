"""DSA sparse MLA forward in TileLang: one block per (query token, batch), all heads at once.

Online softmax over the selected KV rows in blocks of `block_i`; rows with index -1 are
loaded as zeros and scored -inf, and index blocks past a row's last valid slot are skipped.
Output is bf16 [B, S, H, 512]; lse is fp32 in the log2 domain ([B, S, H]), -inf on rows
with no valid index (their output is 0).
TileLang is imported inside the factories so this module imports on CPU-only machines.
"""

# No `from __future__ import annotations` here: TileLang evaluates the kernel's parameter
# annotations (T.Tensor shapes) at definition time, and string annotations cannot see the
# factory's local shape variables.
import functools
from dataclasses import dataclass
from typing import Any

import torch

from kernels.build import compile_program
from kernels.config import DEFAULT_FWD_CONFIG, DIM_QK, DIM_ROPE, DIM_V, LOG2_E, PassConfig, padded_heads
from kernels.inputs import live_blocks
from kernels.reference import default_sm_scale

FWD_BLOCK_I = 64


@dataclass(frozen=True, kw_only=True, slots=True)
class FwdTile:
    """Block shape of the forward kernel."""

    block_i: int = FWD_BLOCK_I
    """KV rows per step of the online softmax."""
    threads: int = 0
    """Threads per block; 0 picks 256 for 64 padded heads, else 128."""
    skip_padding_blocks: bool = True
    """Loop only to each row's last valid index block (data-dependent extent); False loops over all."""

    def resolved_threads(self, heads_padded: int) -> int:
        return self.threads or (256 if heads_padded >= 64 else 128)


def fwd_program(heads: int, topk: int, sm_scale: float, config: PassConfig, tile: FwdTile) -> Any:
    """The TileLang prim_func; batch and sequence lengths stay symbolic (one compile per heads/topk)."""
    from tilelang import language as T

    num_heads = padded_heads(heads)
    if num_heads != heads:
        raise ValueError(f"heads={heads}: the kernel takes padded heads; pad q to {num_heads}")
    if topk % tile.block_i:
        raise ValueError(f"topk={topk}: must be a multiple of block_i={tile.block_i}")
    block_i, threads = tile.block_i, tile.resolved_threads(num_heads)
    scale_log2 = sm_scale * LOG2_E
    batch, seq_len, seq_len_kv = T.symbolic("batch"), T.symbolic("seq_len"), T.symbolic("seq_len_kv")
    bf16, f32 = "bfloat16", "float32"

    @T.prim_func
    def sparse_mla_fwd(
        Q: T.Tensor([batch, seq_len, num_heads, DIM_QK], bf16),
        KV: T.Tensor([batch, seq_len_kv, 1, DIM_QK], bf16),
        Indices: T.Tensor([batch, seq_len, 1, topk], "int32"),
        LiveBlocks: T.Tensor([batch, seq_len], "int32"),
        Out: T.Tensor([batch, seq_len, num_heads, DIM_V], bf16),
        Lse: T.Tensor([batch, seq_len, num_heads], f32),
    ):
        with T.Kernel(seq_len, batch, threads=threads) as (s_i, b_i):
            q_shared = T.alloc_shared([num_heads, DIM_V], bf16)
            q_rope_shared = T.alloc_shared([num_heads, DIM_ROPE], bf16)
            kv_shared = T.alloc_shared([block_i, DIM_V], bf16)
            k_rope_shared = T.alloc_shared([block_i, DIM_ROPE], bf16)
            p_shared = T.alloc_shared([num_heads, block_i], bf16)
            valid = T.alloc_fragment([block_i], "bool")
            acc_o = T.alloc_fragment([num_heads, DIM_V], f32)
            acc_s = T.alloc_fragment([num_heads, block_i], f32)
            row_max = T.alloc_fragment([num_heads], f32)
            row_max_prev = T.alloc_fragment([num_heads], f32)
            row_sum = T.alloc_fragment([num_heads], f32)
            block_sum = T.alloc_fragment([num_heads], f32)
            rescale = T.alloc_fragment([num_heads], f32)

            T.fill(acc_o, 0)
            T.fill(row_sum, 0)
            T.fill(row_max, -(2**30))  # finite start: a fully masked block must not give -inf - -inf
            T.copy(Q[b_i, s_i, :, :DIM_V], q_shared)
            T.copy(Q[b_i, s_i, :, DIM_V:], q_rope_shared)

            num_blocks = LiveBlocks[b_i, s_i] if tile.skip_padding_blocks else topk // block_i
            for blk in T.Pipelined(num_blocks, num_stages=config.num_stages):
                for j in T.Parallel(block_i):
                    valid[j] = Indices[b_i, s_i, 0, blk * block_i + j] >= 0
                for j, d in T.Parallel(block_i, DIM_V):
                    kv_shared[j, d] = KV[b_i, T.max(Indices[b_i, s_i, 0, blk * block_i + j], 0), 0, d]
                for j, d in T.Parallel(block_i, DIM_ROPE):
                    k_rope_shared[j, d] = KV[b_i, T.max(Indices[b_i, s_i, 0, blk * block_i + j], 0), 0, DIM_V + d]
                for h, j in T.Parallel(num_heads, block_i):
                    acc_s[h, j] = T.if_then_else(valid[j], 0, -T.infinity(f32))
                T.gemm(q_shared, kv_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.gemm(q_rope_shared, k_rope_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(row_max, row_max_prev)
                T.reduce_max(acc_s, row_max, dim=1, clear=False)
                for h in T.Parallel(num_heads):
                    rescale[h] = T.exp2((row_max_prev[h] - row_max[h]) * scale_log2)
                for h, j in T.Parallel(num_heads, block_i):
                    acc_s[h, j] = T.exp2(acc_s[h, j] * scale_log2 - row_max[h] * scale_log2)
                T.reduce_sum(acc_s, block_sum, dim=1)
                for h in T.Parallel(num_heads):
                    row_sum[h] = row_sum[h] * rescale[h] + block_sum[h]
                for h, d in T.Parallel(num_heads, DIM_V):
                    acc_o[h, d] *= rescale[h]
                T.copy(acc_s, p_shared)
                T.gemm(p_shared, kv_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for h, d in T.Parallel(num_heads, DIM_V):
                acc_o[h, d] = T.if_then_else(row_sum[h] > 0, acc_o[h, d] / row_sum[h], 0)
            for h in T.Parallel(num_heads):
                row_sum[h] = T.if_then_else(
                    row_sum[h] > 0, T.log2(row_sum[h]) + row_max[h] * scale_log2, -T.infinity(f32)
                )
            T.copy(acc_o, Out[b_i, s_i, :, :])
            T.copy(row_sum, Lse[b_i, s_i, :])

    return sparse_mla_fwd


@functools.cache
def build_fwd(
    heads: int, topk: int, sm_scale: float, config: PassConfig = DEFAULT_FWD_CONFIG, tile: FwdTile = FwdTile()
) -> Any:
    """Compiled forward kernel: `kernel(q, kv, indices, live_blocks) -> (out, lse_log2)`."""
    program = fwd_program(heads, topk, sm_scale, config, tile)
    return compile_program(program, out_idx=[-2, -1], pass_configs=config.tilelang_pass_configs())


def pad_heads(q: torch.Tensor) -> torch.Tensor:
    """q with heads zero-padded to the kernel's head count (a no-op for 16, 32 or 64 heads)."""
    extra = padded_heads(q.shape[2]) - q.shape[2]
    return q if extra == 0 else torch.nn.functional.pad(q, (0, 0, 0, extra)).contiguous()


def sparse_mla_fwd(
    q: torch.Tensor,
    kv: torch.Tensor,
    indices: torch.Tensor,
    sm_scale: float | None = None,
    config: PassConfig = DEFAULT_FWD_CONFIG,
    tile: FwdTile = FwdTile(),
) -> tuple[torch.Tensor, torch.Tensor]:
    """bf16 out [B,S,H,512] and fp32 log2-domain lse [B,S,H] of DSA sparse attention."""
    if q.shape[-1] != DIM_QK or kv.shape[-1] != DIM_QK or kv.shape[2] != 1:
        raise ValueError(f"q {tuple(q.shape)}, kv {tuple(kv.shape)}: want [...,576] and kv_group 1")
    heads, topk = q.shape[2], indices.shape[-1]
    scale = default_sm_scale(DIM_QK) if sm_scale is None else sm_scale
    kernel = build_fwd(padded_heads(heads), topk, scale, config, tile)
    out, lse = kernel(
        pad_heads(q.contiguous()), kv.contiguous(), indices.contiguous(), live_blocks(indices, tile.block_i)
    )
    return out[:, :, :heads], lse[:, :, :heads]
