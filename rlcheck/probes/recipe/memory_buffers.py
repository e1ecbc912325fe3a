"""Training memory per GPU beyond weights, grads, optimizer state and Megatron's activation formula.

The terms, each from its source:
- MoE token dispatcher (megatron-core 0.19.2, megatron/core/transformer/moe/token_dispatcher.py,
  MoEAlltoAllTokenDispatcher; core_r0.19 on github:NVIDIA/Megatron-LM): each rank permutes its
  T = tokens / TP (sequence parallel) tokens into N = T x top-k routed copies (`permute` in
  dispatch_preprocess), all-to-alls them over EP (`token_dispatch`) and sorts them by local expert
  (`sort_chunks_by_idxs` in dispatch_postprocess); combine runs the same three steps back. Its
  expert-tensor-parallel all-gather is a no-op at ETP 1. rlcheck counts the working set of one MoE
  layer at a time as 3 copies of N x hidden bf16 (an input, an output, and the sorted expert input
  that fc1's weight gradient keeps) plus the routing probabilities N x 4 B, at the average load
  (no capacity factor: the router's bias balances it, a hot expert receives more). Without full
  recompute every stored MoE layer of every in-flight micro-batch also keeps its sorted expert
  input (the activation formula counts the pre-dispatch input once).
- Gradient-buffer padding (megatron/core/optimizer/param_layout.py, `pad_param_start`: every
  parameter starts on a 64-element boundary; `pad_bucket_end`: a bucket ends on a multiple of
  lcm(DP, 128)); one bucket per buffer without --overlap-grad-reduce, a dense and an expert buffer,
  bf16 params + fp32 grads per padded element. Tensors per layer: at most 16 outside the experts
  (attention, its norms and DSA indexer, router, shared expert) plus fc1 and fc2 per local expert
  (TE's grouped GEMM keeps one weight each).
- CUDA context and NCCL communicators, device-wide as Miles' print_memory reads it
  (miles/utils/memory_utils.py: used = total - free from torch.cuda.mem_get_info). Measured by
  scripts/measure_nccl_memory.py on an H200 pair (torch 2.11.0+cu130, NCCL 2.28.9, NVLS off):
  context 0.51 GiB; a communicator's first collective 0.28 GiB, 0.18 GiB once per process more;
  its first all-to-all (send/recv buffers to its one peer) 0.44 GiB. NCCL sizes those buffers by
  NCCL_BUFFSIZE (4 MiB default) per channel and peer, so groups with more peers take more: the NCCL
  figures here are lower bounds. Groups a Megatron step uses: TP, CP, DP x CP, expert DP, model
  parallel (TP x PP, grad norm and loss), the world group (collectives); PP (send/recv to the next
  and previous stage) and EP (all-to-all) take send/recv buffers.
- Colocated rollout: SGLang's engine process on the same GPU releases its weights, KV cache and
  CUDA graphs while training runs (torch_memory_saver pauses only those allocations) but keeps its
  CUDA context and communicators: counted as one context and one communicator (lower bound).
Not counted, and said so: the caching allocator's fragmentation (no documented constant), DeepEP's
own buffers (flex dispatcher), SLIME's --update-weight-buffer-size buckets (Miles empties the cache
around weight updates).
"""

from __future__ import annotations

import dataclasses
import math

from rlcheck.probes.recipe.memory_activations import recompute_of, tokens_per_micro_batch
from rlcheck.probes.recipe.memory_params import GIB, moe_layer_flags
from rlcheck.recipes.glm import stage_starts
from rlcheck.recipes.recipe import Recipe

DISPATCH_COPIES = 3
"""N x hidden bf16 tensors alive at once in one MoE layer's dispatch or combine (see the module docstring)."""
PARAM_ALIGN = 64
"""megatron-core 0.19.2 param_layout.pad_param_start: elements."""
BUCKET_ALIGN = 128
"""megatron-core 0.19.2 param_layout.bucket_end_divisor: lcm(DP, 128) elements."""
TENSORS_PER_LAYER = 16
"""Parameter tensors of one layer outside the routed experts (bound)."""
CUDA_CONTEXT_GIB = 0.51
"""Measured (scripts/measure_nccl_memory.py, H200, torch 2.11.0+cu130): one process's CUDA context."""
NCCL_COLLECTIVE_GIB = 0.28
"""Measured: a 2-rank communicator's first collective (NCCL 2.28.9, NVLS off); more ranks take at least this."""
NCCL_PROCESS_GIB = 0.18
"""Measured: once per process, at the first communicator's first collective, beyond NCCL_COLLECTIVE_GIB."""
NCCL_P2P_GIB = 0.44
"""Measured: a communicator's first all-to-all with one peer (send/recv buffers); more peers take more."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StageBuffers:
    dispatcher_gib: float
    """MoE token dispatcher: one layer's working set, plus stored expert inputs without full recompute."""
    padding_gib: float
    """Gradient and parameter buffer padding (64-element starts, lcm(DP, 128) bucket ends)."""
    context_gib: float
    """The training process's CUDA context."""
    nccl_gib: float
    """NCCL communicators of the groups a training step uses (lower bound)."""
    colocated_gib: float
    """A colocated SGLang engine's context and communicator, kept while it sleeps (0 when not colocated)."""

    @property
    def total_gib(self) -> float:
        return self.dispatcher_gib + self.padding_gib + self.context_gib + self.nccl_gib + self.colocated_gib


def nccl_groups(recipe: Recipe) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(collective groups, send/recv groups) with more than one rank that a Megatron step uses."""
    par, world = recipe.parallel, recipe.world_size
    expert_dp = world // (par.ep * par.etp * par.pp) if recipe.model.moe else 1
    sizes = {"TP": par.tp, "CP": par.cp, "DPxCP": world // (par.tp * par.pp), "expert DP": expert_dp,
             "model parallel": par.tp * par.pp, "world": world}
    collective = tuple(name for name, size in sizes.items() if size > 1)
    p2p = tuple(name for name, size in (("PP", par.pp), ("EP", par.ep)) if size > 1)
    return collective, p2p


def nccl_gib(recipe: Recipe) -> float:
    collective, p2p = nccl_groups(recipe)
    if not collective and not p2p:
        return 0.0
    return NCCL_PROCESS_GIB + NCCL_COLLECTIVE_GIB * len(collective) + NCCL_P2P_GIB * len(p2p)


def dispatcher_bytes(recipe: Recipe, moe_layers: int, in_flight: int) -> float:
    """One MoE layer's dispatch working set, plus each stored layer's expert input without full recompute."""
    model, par = recipe.model, recipe.parallel
    if model.moe is None or moe_layers == 0:
        return 0.0
    local = tokens_per_micro_batch(recipe) / (par.tp if par.sequence_parallel else 1)
    routed = local * model.moe.router_topk
    copy = routed * model.hidden_size * 2
    working = DISPATCH_COPIES * copy + routed * 4
    stored = 0 if recompute_of(recipe).granularity == "full" else copy * moe_layers * in_flight
    return working + stored


def padding_bytes(recipe: Recipe, layers: int, dp_cp: int, expert_dp: int) -> float:
    """Upper bound of the alignment padding in a stage's param (bf16) and grad (fp32) buffers."""
    model, par = recipe.model, recipe.parallel
    local_experts = model.moe.num_experts // par.ep if model.moe else 0
    tensors = layers * (TENSORS_PER_LAYER + 2 * local_experts) + 2
    elements = tensors * (PARAM_ALIGN - 1) + (math.lcm(dp_cp, BUCKET_ALIGN) - 1)
    if local_experts:
        elements += math.lcm(expert_dp, BUCKET_ALIGN) - 1
    return elements * (2 + 4)


def stage_buffers(recipe: Recipe, in_flight: tuple[int, ...]) -> tuple[StageBuffers, ...]:
    """Per pipeline stage (in_flight: micro-batches each stage holds, from the activation estimate)."""
    model, par, world = recipe.model, recipe.parallel, recipe.world_size
    moe = moe_layer_flags(model.moe.layer_freq, model.num_layers) if model.moe else (False,) * model.num_layers
    starts = stage_starts(model.num_layers, par.pp, par.pp_first_layers, par.pp_last_layers)
    ends = [*starts[1:], model.num_layers + 1]
    dp_cp, expert_dp = world // (par.tp * par.pp), world // (par.ep * par.etp * par.pp)
    shared = {"context_gib": CUDA_CONTEXT_GIB, "nccl_gib": nccl_gib(recipe),
              "colocated_gib": CUDA_CONTEXT_GIB + NCCL_PROCESS_GIB + NCCL_COLLECTIVE_GIB
              if recipe.placement.colocate and recipe.placement.engines else 0.0}
    out = []
    for i, (start, end) in enumerate(zip(starts, ends, strict=True)):
        moe_layers = sum(moe[start - 1:end - 1])
        out.append(StageBuffers(dispatcher_gib=dispatcher_bytes(recipe, moe_layers, in_flight[i]) / GIB,
                                padding_gib=padding_bytes(recipe, end - start, dp_cp, expert_dp) / GIB, **shared))
    return tuple(out)
