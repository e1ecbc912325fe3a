"""DSA sparse MLA backward in TileLang: one block per (query token, batch), all heads at once.

Per block of `block_s` selected KV rows it recomputes P from the saved lse, forms
dS = P * (dO.V^T - Delta) * sm_scale, accumulates dQ in registers, and adds the block's dKV
rows to global fp32 memory with 4-wide atomics (padding rows are never written).

Structure that matters for tilelang #2199: q_shared is filled once before the main loop and
read in every iteration, while the fp32 dKV staging buffer is first written inside the loop.
TileLang 0.1.9's aggressive shared-memory merge ends q_shared's lifetime at that first write
and packs both buffers at the same offset, so iteration 2 reads a Q overwritten by fp32 dKV.
"""

# No `from __future__ import annotations` here: TileLang evaluates the kernel's parameter
# annotations (T.Tensor shapes) at definition time, and string annotations cannot see the
# factory's local shape variables.
import functools
from dataclasses import dataclass
from typing import Any

import torch

from kernels.build import compile_program
from kernels.config import DIM_QK, DIM_ROPE, DIM_V, LOG2_E, SAFE_BWD_CONFIG, PassConfig, padded_heads
from kernels.inputs import live_blocks
from kernels.reference import default_sm_scale
from kernels.sparse_mla_fwd import pad_heads

DELTA_BLOCK_ROWS = 16  # heads are padded to >= 16, so B*S*H rows always divide evenly


@dataclass(frozen=True, kw_only=True, slots=True)
class BwdTile:
    """Block shape of the backward kernel."""

    block_s: int = 32
    """Selected KV rows per step (the dKV fragment is block_s x 576 fp32 in registers)."""
    threads: int = 0
    """Threads per block; 0 picks 256 for 64 padded heads, else 128."""
    split_store: int = 2
    """The dKV block goes out through shared memory in this many slices (bounds the stage)."""
    skip_padding_blocks: bool = True
    """Loop only to each row's last valid index block (data-dependent extent); False loops over all."""

    def resolved_threads(self, heads_padded: int) -> int:
        return self.threads or (256 if heads_padded >= 64 else 128)


def delta_program() -> Any:
    """Delta[r] = sum_d O[r, d] * dO[r, d] over flattened (batch, token, head) rows, fp32."""
    from tilelang import language as T

    rows, block_rows, block_d = T.symbolic("rows"), DELTA_BLOCK_ROWS, 128

    @T.prim_func
    def mla_bwd_delta(
        Out: T.Tensor([rows, DIM_V], "bfloat16"),
        dO: T.Tensor([rows, DIM_V], "bfloat16"),
        Delta: T.Tensor([rows], "float32"),
    ):
        with T.Kernel(T.ceildiv(rows, block_rows), threads=128) as r_i:
            o = T.alloc_fragment([block_rows, block_d], "float32")
            do = T.alloc_fragment([block_rows, block_d], "float32")
            acc = T.alloc_fragment([block_rows, block_d], "float32")
            delta = T.alloc_fragment([block_rows], "float32")
            T.clear(acc)
            for k in T.Pipelined(DIM_V // block_d, num_stages=2):
                T.copy(Out[r_i * block_rows : (r_i + 1) * block_rows, k * block_d : (k + 1) * block_d], o)
                T.copy(dO[r_i * block_rows : (r_i + 1) * block_rows, k * block_d : (k + 1) * block_d], do)
                for i, j in T.Parallel(block_rows, block_d):
                    acc[i, j] += o[i, j] * do[i, j]
            T.reduce_sum(acc, delta, dim=1)
            T.copy(delta, Delta[r_i * block_rows : (r_i + 1) * block_rows])

    return mla_bwd_delta


def bwd_program(heads: int, topk: int, sm_scale: float, config: PassConfig, tile: BwdTile) -> Any:
    """The TileLang prim_func; batch and sequence lengths stay symbolic (one compile per heads/topk)."""
    from tilelang import language as T

    num_heads = padded_heads(heads)
    if num_heads != heads:
        raise ValueError(f"heads={heads}: the kernel takes padded heads; pad q to {num_heads}")
    block_s, split = tile.block_s, tile.split_store
    if topk % block_s or block_s % split:
        raise ValueError(
            f"topk={topk}, block_s={block_s}, split_store={split}: need topk % block_s == block_s % split == 0"
        )
    half, threads, scale_log2 = block_s // split, tile.resolved_threads(num_heads), sm_scale * LOG2_E
    batch, seq_len, seq_len_kv = T.symbolic("batch"), T.symbolic("seq_len"), T.symbolic("seq_len_kv")
    bf16, f32, policy = "bfloat16", "float32", T.GemmWarpPolicy.FullCol

    @T.prim_func
    def sparse_mla_bwd(
        Q: T.Tensor([batch, seq_len, num_heads, DIM_QK], bf16),
        KV: T.Tensor([batch, seq_len_kv, 1, DIM_QK], bf16),
        dO: T.Tensor([batch, seq_len, num_heads, DIM_V], bf16),
        Indices: T.Tensor([batch, seq_len, 1, topk], "int32"),
        LiveBlocks: T.Tensor([batch, seq_len], "int32"),
        Lse: T.Tensor([batch, seq_len, num_heads], f32),
        Delta: T.Tensor([batch, seq_len, num_heads], f32),
        dQ: T.Tensor([batch, seq_len, num_heads, DIM_QK], bf16),
        dKV: T.Tensor([batch, seq_len_kv, 1, DIM_QK], f32),
    ):
        with T.Kernel(seq_len, batch, threads=threads) as (s_i, b_i):
            q_shared = T.alloc_shared([num_heads, DIM_V], bf16)
            q_rope_shared = T.alloc_shared([num_heads, DIM_ROPE], bf16)
            do_shared = T.alloc_shared([num_heads, DIM_V], bf16)
            kv_shared = T.alloc_shared([block_s, DIM_V], bf16)
            k_rope_shared = T.alloc_shared([block_s, DIM_ROPE], bf16)
            p_shared = T.alloc_shared([num_heads, block_s], bf16)
            ds_shared = T.alloc_shared([num_heads, block_s], bf16)
            dq_shared = T.alloc_shared([num_heads, DIM_V], bf16)
            dq_rope_shared = T.alloc_shared([num_heads, DIM_ROPE], bf16)
            dkv_stage = T.alloc_shared([half, DIM_V], f32)
            dkv_rope_stage = T.alloc_shared([half, DIM_ROPE], f32)
            valid = T.alloc_fragment([block_s], "bool")
            acc_p = T.alloc_fragment([num_heads, block_s], f32)
            acc_dp = T.alloc_fragment([num_heads, block_s], f32)
            acc_dq = T.alloc_fragment([num_heads, DIM_V], f32)
            acc_dq_rope = T.alloc_fragment([num_heads, DIM_ROPE], f32)
            acc_dkv = T.alloc_fragment([block_s, DIM_V], f32)
            acc_dkv_rope = T.alloc_fragment([block_s, DIM_ROPE], f32)

            T.copy(Q[b_i, s_i, :, :DIM_V], q_shared)
            T.copy(Q[b_i, s_i, :, DIM_V:], q_rope_shared)
            T.copy(dO[b_i, s_i, :, :], do_shared)
            T.clear(acc_dq)
            T.clear(acc_dq_rope)

            # A static extent is the production structure (miles, upstream example) and lets the
            # pipeliner restage the loop; the data-dependent one skips all-padding tail blocks.
            num_blocks = LiveBlocks[b_i, s_i] if tile.skip_padding_blocks else topk // block_s
            for blk in T.Pipelined(num_blocks, num_stages=config.num_stages):
                for j in T.Parallel(block_s):
                    valid[j] = Indices[b_i, s_i, 0, blk * block_s + j] >= 0
                for j, d in T.Parallel(block_s, DIM_V):
                    kv_shared[j, d] = KV[b_i, T.max(Indices[b_i, s_i, 0, blk * block_s + j], 0), 0, d]
                for j, d in T.Parallel(block_s, DIM_ROPE):
                    k_rope_shared[j, d] = KV[b_i, T.max(Indices[b_i, s_i, 0, blk * block_s + j], 0), 0, DIM_V + d]
                T.gemm(q_shared, kv_shared, acc_p, transpose_B=True, clear_accum=True, policy=policy)
                T.gemm(q_rope_shared, k_rope_shared, acc_p, transpose_B=True, policy=policy)
                # Padding is masked by select, not by -inf arithmetic: lse is -inf on empty rows.
                for h, j in T.Parallel(num_heads, block_s):
                    acc_p[h, j] = T.if_then_else(
                        valid[j], T.exp2(acc_p[h, j] * scale_log2 - Lse[b_i, s_i, h]), T.cast(0, f32)
                    )
                T.copy(acc_p, p_shared)
                T.gemm(do_shared, kv_shared, acc_dp, transpose_B=True, clear_accum=True, policy=policy)
                for h, j in T.Parallel(num_heads, block_s):
                    acc_dp[h, j] = acc_p[h, j] * (acc_dp[h, j] - Delta[b_i, s_i, h]) * sm_scale
                T.copy(acc_dp, ds_shared)
                T.gemm(ds_shared, kv_shared, acc_dq, policy=policy)
                T.gemm(ds_shared, k_rope_shared, acc_dq_rope, policy=policy)
                T.gemm(ds_shared, q_shared, acc_dkv, transpose_A=True, clear_accum=True, policy=policy)
                T.gemm(p_shared, do_shared, acc_dkv, transpose_A=True, policy=policy)
                T.gemm(ds_shared, q_rope_shared, acc_dkv_rope, transpose_A=True, clear_accum=True, policy=policy)

                for part in range(split):
                    # Iterate the full fragment shape and keep one slice: the layout of
                    # acc_dkv is inferred over all block_s rows.
                    for j, d in T.Parallel(block_s, DIM_V):
                        if j < half:
                            dkv_stage[j, d] = acc_dkv[j + part * half, d]
                    for j, d in T.Parallel(block_s, DIM_ROPE):
                        if j < half:
                            dkv_rope_stage[j, d] = acc_dkv_rope[j + part * half, d]
                    for j, d in T.Parallel(half, DIM_V // 4):
                        idx = Indices[b_i, s_i, 0, blk * block_s + part * half + j]
                        if idx >= 0:
                            T.atomic_addx4(dKV[b_i, idx, 0, d * 4], dkv_stage[j, d * 4])
                    for j, d in T.Parallel(half, DIM_ROPE // 4):
                        idx = Indices[b_i, s_i, 0, blk * block_s + part * half + j]
                        if idx >= 0:
                            T.atomic_addx4(dKV[b_i, idx, 0, DIM_V + d * 4], dkv_rope_stage[j, d * 4])

            T.copy(acc_dq, dq_shared)
            T.copy(acc_dq_rope, dq_rope_shared)
            T.copy(dq_shared, dQ[b_i, s_i, :, :DIM_V])
            T.copy(dq_rope_shared, dQ[b_i, s_i, :, DIM_V:])

    return sparse_mla_bwd


@functools.cache
def build_bwd(
    heads: int, topk: int, sm_scale: float, config: PassConfig = SAFE_BWD_CONFIG, tile: BwdTile = BwdTile()
) -> Any:
    """Compiled backward kernel: `kernel(q, kv, do, indices, live, lse, delta, dkv_f32) -> dq`."""
    program = bwd_program(heads, topk, sm_scale, config, tile)
    return compile_program(program, out_idx=[-2], pass_configs=config.tilelang_pass_configs())


@functools.cache
def build_delta() -> Any:
    return compile_program(delta_program(), out_idx=[-1])


def sparse_mla_bwd(
    q: torch.Tensor,
    kv: torch.Tensor,
    out: torch.Tensor,
    grad_out: torch.Tensor,
    indices: torch.Tensor,
    lse_log2: torch.Tensor,
    sm_scale: float | None = None,
    config: PassConfig = SAFE_BWD_CONFIG,
    tile: BwdTile = BwdTile(),
) -> tuple[torch.Tensor, torch.Tensor]:
    """bf16 dq [B,S,H,576] and dkv [B,S_kv,1,576] for the forward's (out, lse_log2)."""
    batch, seq_len, heads, _ = q.shape
    num_heads = padded_heads(heads)
    scale = default_sm_scale(DIM_QK) if sm_scale is None else sm_scale
    out_p, grad_p = pad_heads(out.contiguous()), pad_heads(grad_out.contiguous())
    # Padded heads get lse 0 (not -inf): with q = dO = 0 there, P stays finite and dS = 0.
    lse_p = torch.nn.functional.pad(lse_log2, (0, num_heads - heads)).contiguous()
    delta = build_delta()(out_p.view(-1, DIM_V), grad_p.view(-1, DIM_V)).view(batch, seq_len, num_heads)
    dkv = torch.zeros(kv.shape, dtype=torch.float32, device=kv.device)
    kernel = build_bwd(num_heads, indices.shape[-1], scale, config, tile)
    live = live_blocks(indices, tile.block_s)
    dq = kernel(pad_heads(q.contiguous()), kv.contiguous(), grad_p, indices.contiguous(), live, lse_p, delta, dkv)
    return dq[:, :, :heads], dkv.to(torch.bfloat16)
