"""Training activation memory per GPU of each pipeline stage (added to the static stage memory).

Sources:
- megatron-core core_v0.19.0, megatron/training/theoretical_memory_usage.py:
  `compute_activation_memory` (sequence parallel + selective recompute): per layer
  s x b x h x (18 + 4 x ffn / h) bytes / TP; embedding input 8 x s x b x PP and its dropout
  s x b x h x PP; the first stage holds PP micro-batches in flight (1F1B), fewer when there are
  fewer micro-batches. `compute_activation_memory_without_sp`: per layer s x b x h x (10 + 24 / TP),
  the same terms with the 10 that sequence parallelism shards left whole (for ffn = 4h).
  Neither covers full recompute; the paper both cite (arXiv 2205.05198, Table 2) keeps only each
  recomputed layer's input, 2 x s x b x h bytes (/ TP under sequence parallelism).
- SLIME (THUDM/slime 624b824), slime/backends/megatron_utils/data.py and slime/utils/dp_schedule.py:
  with --use-dynamic-batch-size a micro-batch holds at most max_tokens_per_gpu x CP tokens and each
  CP rank keeps its 1 / CP chunk, so s x b per GPU = max_tokens_per_gpu; loss.py asserts fp32 logits
  and slime/utils/ppo_utils.py casts the vocab-parallel logits to fp32 and subtracts their max into a
  new tensor: 2 x 4 bytes x tokens x vocab / TP on the last stage.

- GQA layers (Qwen3), measured: benchmarks/memory_truth on one H200 (megatron-core 0.19.2, torch 2.11,
  benchmarks/results/memory_truth_h200.json) found Megatron's formula 20-39% short per layer for
  Qwen3-0.6B, 1.7B and 4B without recompute: it assumes heads x head dim = h and a two-matrix MLP.
  What a layer keeps for backward, per token, read from megatron-core 0.19.2 (transformer_layer.py,
  attention.py get_query_key_value_tensors, mlp.py, fused_bias_swiglu.py) and measured to within 2.2%
  on the three shapes (q = heads x head dim, kv = KV heads x head dim, f = ffn width, bf16):
  8 h (the two norms' inputs, the QKV and fc1 inputs; sharded by sequence parallelism) + 2 (q + 2 kv)
  (the fused QKV output, kept through the K and V views) + 2 q (queries reshaped to heads, a copy the
  q norm keeps; only with --qk-layernorm) + 2 q + 2 kv (q and k after RoPE, kept by flash attention)
  + 2 q (the attention output) + 4 x heads (fp32 log-sum-exp) + 6 f (SwiGLU: fc1's 2 f output kept by
  the activation, its f output kept by fc2; 4 f for a two-matrix MLP). MLA layers (GLM) keep
  Megatron's formula: not measured.
- Temperature (SLIME get_log_probs_and_entropy: logits / rollout_temperature when it is not 1): one more
  fp32 tokens x vocab copy on the last stage, measured on the H200 (12 B x tokens x vocab at 0.8).

rlcheck's choices where the sources are silent: an MoE layer's ffn term uses top-k x expert width +
the shared expert width (the tokens each GPU's experts process on average); 'no recompute' uses the
selective formula (flash attention stores no s x s scores, which is what selective recompute drops);
full recompute keeps each chunk's input for every in-flight micro-batch plus one chunk's activations
while it is recomputed in backward (measured on the H200, the peak comes at the loss, where no layer is
recomputed: that chunk is an overcount of 0.5-1%).
"""

from __future__ import annotations

import dataclasses
import math

from rlcheck.probes.recipe.memory_params import GIB, flag_value, moe_layer_flags
from rlcheck.recipes.glm import stage_starts
from rlcheck.recipes.models import GQA
from rlcheck.recipes.recipe import Recipe

ASSUMED_PROMPT_TOKENS = 1024
"""Prompt budget when the recipe sets no --rollout-max-prompt-len (as the KV pool check assumes)."""
LOGIT_BYTES = 8
"""fp32 logits (SLIME's loss asserts fp32) plus the fp32 max-shifted copy ppo_utils makes for log-probs
(measured on the H200: the loss's peak is 8 B x tokens x vocab above the layers' activations)."""
TEMPERATURE_LOGIT_BYTES = 4
"""The fp32 logits divided by a rollout temperature other than 1 (a copy; measured on the H200)."""
NORM_LINEAR_INPUT_BYTES = 8
"""Per token and hidden unit of a GQA layer: input norm, QKV, pre-MLP norm and fc1 inputs, bf16 each."""
LSE_BYTES = 4
"""Flash attention's fp32 log-sum-exp per token and head."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StageActivations:
    stage: int
    """1-based pipeline stage."""
    in_flight: int
    """Micro-batches whose activations the stage holds at once (1F1B: PP - stage + 1, capped by micro-batches)."""
    layers_gib: float
    """Transformer layers: stored activations (or recompute checkpoints) for every in-flight micro-batch."""
    recompute_gib: float
    """One recompute chunk's full activations while backward recomputes it (0 without full recompute)."""
    embedding_gib: float
    logits_gib: float

    @property
    def total_gib(self) -> float:
        return self.layers_gib + self.recompute_gib + self.embedding_gib + self.logits_gib


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Recompute:
    granularity: str
    """'full', 'selective' or 'none' (--recompute-granularity)."""
    method: str
    """'uniform' or 'block' (--recompute-method)."""
    num_layers: int
    """--recompute-num-layers: layers per chunk (uniform) or layers recomputed per stage (block)."""


def recompute_of(recipe: Recipe) -> Recompute:
    args = list(recipe.extra_args)
    granularity = flag_value(args, "--recompute-granularity") or "none"
    method = flag_value(args, "--recompute-method") or "uniform"
    if granularity not in ("full", "selective", "none") or method not in ("uniform", "block"):
        raise ValueError(f"--recompute-granularity {granularity} --recompute-method {method}: granularity is full "
                         f"or selective, method uniform or block")
    return Recompute(granularity=granularity, method=method,
                     num_layers=int(flag_value(args, "--recompute-num-layers") or 1))


def tokens_per_micro_batch(recipe: Recipe) -> int:
    """s x b on one GPU: the dynamic-batch budget, else micro_batch_size full requests split over CP."""
    ro = recipe.rollout
    if ro.max_tokens_per_gpu is not None:
        return ro.max_tokens_per_gpu
    prompt = int(flag_value(list(recipe.extra_args), "--rollout-max-prompt-len") or ASSUMED_PROMPT_TOKENS)
    return math.ceil(ro.micro_batch_size * (prompt + ro.max_response_len) / recipe.parallel.cp)


def micro_batches(recipe: Recipe, tokens: int) -> int:
    """Micro-batches per step on one data-parallel rank, at full-length samples (the most there can be)."""
    ro, par = recipe.rollout, recipe.parallel
    dp = max(1, recipe.world_size // (par.tp * par.pp * par.cp))
    prompt = int(flag_value(list(recipe.extra_args), "--rollout-max-prompt-len") or ASSUMED_PROMPT_TOKENS)
    samples = math.ceil(ro.global_batch_size / dp)
    return max(1, math.ceil(samples * (prompt + ro.max_response_len) / par.cp / tokens))


def layer_token_bytes(recipe: Recipe, is_moe: bool) -> tuple[float, float]:
    """(bytes per token a layer keeps that only sequence parallelism shards, bytes that TP shards)."""
    model = recipe.model
    h = model.hidden_size
    ffn = model.ffn_hidden_size
    if is_moe and model.moe is not None:
        ffn = model.moe.router_topk * model.moe.ffn_hidden_size + model.moe.shared_expert_ffn
    if not isinstance(model.attention, GQA):  # MLA: Megatron's theoretical formula (not measured)
        return 10 * h, (8 + 4 * ffn / h) * h
    heads = model.num_attention_heads
    q, kv = heads * model.head_dim, model.kv_heads * model.head_dim
    attention = 2 * (q + 2 * kv) + 2 * q + 2 * kv + 2 * q + LSE_BYTES * heads
    attention += 2 * q if model.attention.qk_layernorm else 0
    mlp = (6 if model.activation == "swiglu" else 4) * ffn
    return NORM_LINEAR_INPUT_BYTES * h, attention + mlp


def _layer_bytes(recipe: Recipe, tokens: int, is_moe: bool) -> float:
    par = recipe.parallel
    unsharded, sharded = layer_token_bytes(recipe, is_moe)
    if par.sequence_parallel:
        return tokens * (unsharded + sharded) / par.tp
    return tokens * (unsharded + sharded / par.tp)


def largest_layer_bytes(recipe: Recipe) -> float:
    """The full stored activations of the model's largest layer for one micro-batch per GPU (no recompute)."""
    model, tokens = recipe.model, tokens_per_micro_batch(recipe)
    moe = moe_layer_flags(model.moe.layer_freq, model.num_layers) if model.moe else (False,)
    return max(_layer_bytes(recipe, tokens, is_moe) for is_moe in set(moe))


def stage_activations(recipe: Recipe) -> tuple[StageActivations, ...]:
    """Activation bytes per GPU of each pipeline stage for the recipe's recompute and parallel settings."""
    model, par, recompute = recipe.model, recipe.parallel, recompute_of(recipe)
    tokens = tokens_per_micro_batch(recipe)
    moe = moe_layer_flags(model.moe.layer_freq, model.num_layers) if model.moe else (False,) * model.num_layers
    starts = stage_starts(model.num_layers, par.pp, par.pp_first_layers, par.pp_last_layers)
    ends, count = [*starts[1:], model.num_layers + 1], micro_batches(recipe, tokens)
    checkpoint = 2 * tokens * model.hidden_size / (par.tp if par.sequence_parallel else 1)
    out = []
    for i, (start, end) in enumerate(zip(starts, ends, strict=True)):
        full = [_layer_bytes(recipe, tokens, moe[j]) for j in range(start - 1, end - 1)]
        in_flight = min(par.pp - i, count)
        n = min(recompute.num_layers, len(full))
        if recompute.granularity != "full":
            stored, working = sum(full), 0.0
        elif recompute.method == "uniform":
            stored, working = math.ceil(len(full) / n) * checkpoint, max(full) * n
        else:  # block: the first n layers of the stage are recomputed, the rest store everything
            stored, working = n * checkpoint + sum(full[n:]), max(full) * n if n else 0.0
        embedding = (8 * tokens + tokens * model.hidden_size) / par.tp if i == 0 else 0.0
        logit_bytes = LOGIT_BYTES + (TEMPERATURE_LOGIT_BYTES if recipe.rollout.temperature != 1.0 else 0)
        logits = tokens * model.vocab_size / par.tp * logit_bytes if i == par.pp - 1 else 0.0
        out.append(StageActivations(stage=i + 1, in_flight=in_flight, layers_gib=stored * in_flight / GIB,
                                    recompute_gib=working / GIB, embedding_gib=embedding * in_flight / GIB,
                                    logits_gib=logits / GIB))
    return tuple(out)
