"""Activation memory per pipeline stage: one test per term (each fails if its term is dropped or changed).

Formulas: GQA layers keep what megatron-core 0.19.2 saves for backward, measured on one H200 for Qwen3-0.6B, 1.7B
and 4B (benchmarks/results/memory_truth_h200.json; tests/probes/recipe/test_memory_truth_h200.py holds the fit):
per token 8 h (sharded by sequence parallelism only) + 2 (q + 2 kv) + 2 q (qk norm) + 2 q + 2 kv + 2 q + 4 heads
+ 6 ffn (/ TP). MLA layers keep megatron-core core_v0.19.0 megatron/training/theoretical_memory_usage.py (per layer
s x b x h x (18 + 4 ffn / h) / TP with sequence parallelism). SLIME's dynamic batches (max_tokens_per_gpu per GPU
after the CP split) and fp32 logits.
"""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.probes.recipe.memory import estimate_stage_memory, evaluate_stage_memory, seed_steady_estimate
from rlcheck.probes.recipe.memory_activations import (
    LOGIT_BYTES,
    micro_batches,
    recompute_of,
    stage_activations,
    tokens_per_micro_batch,
)
from rlcheck.probes.recipe.memory_params import GIB
from rlcheck.recipes.glm import GlmOptions, glm_recipe
from rlcheck.recipes.recipe import Parallelism, Recipe
from rlcheck.verdict import Status


def _qwen(**parallel) -> Recipe:
    recipe = recipes.get("qwen3-4b-colocated", "h100")
    return recipe.replace(parallel=dataclasses.replace(recipe.parallel, **parallel)) if parallel else recipe


def _with(recipe: Recipe, *args: str, **rollout) -> Recipe:
    recipe = recipe.replace(extra_args=(*recipe.extra_args, *args))
    return recipe.replace(rollout=dataclasses.replace(recipe.rollout, **rollout)) if rollout else recipe


H, FFN, LAYERS, VOCAB, T = 2560, 9728, 36, 151936, 8192  # Qwen3-4B, 8192 tokens per GPU
HEADS, Q, KV = 32, 32 * 128, 8 * 128  # heads; heads x head dim; KV heads x head dim
UNSHARDED = 8 * H  # input norm, QKV, pre-MLP norm and fc1 inputs
QKV_OUT, Q_COPY, ROPE_QK, ATTN_OUT, LSE = 2 * (Q + 2 * KV), 2 * Q, 2 * Q + 2 * KV, 2 * Q, 4 * HEADS
SHARDED = QKV_OUT + Q_COPY + ROPE_QK + ATTN_OUT + LSE + 6 * FFN  # SwiGLU: fc1 output 4 ffn + its output 2 ffn


def test_activations_layers_without_sequence_parallel_tp1():
    act = stage_activations(_qwen())[0]
    assert act.layers_gib * GIB == pytest.approx(LAYERS * T * (UNSHARDED + SHARDED))
    assert (act.in_flight, act.recompute_gib) == (1, 0.0)


def test_activations_layers_with_and_without_sequence_parallel_at_tp4():
    sp = stage_activations(_qwen(tp=4, sequence_parallel=True))[0].layers_gib * GIB
    no_sp = stage_activations(_qwen(tp=4))[0].layers_gib * GIB
    assert sp == pytest.approx(LAYERS * T * (UNSHARDED + SHARDED) / 4)
    assert no_sp == pytest.approx(LAYERS * T * (UNSHARDED + SHARDED / 4))


def test_activations_gqa_terms_follow_the_qk_norm_and_the_mlp_matrices():
    qwen = _qwen()
    no_qk_norm = dataclasses.replace(qwen.model, attention=dataclasses.replace(qwen.model.attention,
                                                                               qk_layernorm=False))
    gelu = dataclasses.replace(qwen.model, activation="gelu")
    full = stage_activations(qwen)[0].layers_gib * GIB
    assert stage_activations(qwen.replace(model=no_qk_norm))[0].layers_gib * GIB == pytest.approx(
        full - LAYERS * T * Q_COPY)
    assert stage_activations(qwen.replace(model=gelu))[0].layers_gib * GIB == pytest.approx(
        full - LAYERS * T * 2 * FFN)


def test_activations_full_recompute_uniform_keeps_chunk_inputs_and_one_chunk():
    act = stage_activations(_with(_qwen(), "--recompute-granularity", "full", "--recompute-method", "uniform",
                                  "--recompute-num-layers", "4"))[0]
    assert act.layers_gib * GIB == pytest.approx(9 * 2 * T * H)  # 36 / 4 chunk inputs, bf16
    assert act.recompute_gib * GIB == pytest.approx(4 * T * (UNSHARDED + SHARDED))


def test_activations_full_recompute_block_stores_the_rest_whole():
    act = stage_activations(_with(_qwen(), "--recompute-granularity", "full", "--recompute-method", "block",
                                  "--recompute-num-layers", "6"))[0]
    assert act.layers_gib * GIB == pytest.approx(6 * 2 * T * H + 30 * T * (UNSHARDED + SHARDED))


def test_activations_selective_is_the_megatron_formula():
    selective = stage_activations(_with(_qwen(), "--recompute-granularity", "selective"))[0]
    assert selective.layers_gib == stage_activations(_qwen())[0].layers_gib


def test_activations_embedding_on_first_stage_and_logits_on_last():
    one = stage_activations(_qwen())[0]
    assert one.embedding_gib * GIB == pytest.approx(8 * T + T * H)
    assert one.logits_gib * GIB == pytest.approx(T * VOCAB * LOGIT_BYTES)
    hot = stage_activations(_with(_qwen(), temperature=0.8))[0]  # logits / temperature: one more fp32 copy
    assert hot.logits_gib * GIB == pytest.approx(T * VOCAB * (LOGIT_BYTES + 4))
    staged = stage_activations(_qwen(pp=4))
    assert staged[0].logits_gib == 0 and staged[-1].embedding_gib == 0 and staged[-1].logits_gib > 0


def test_activations_in_flight_micro_batches_follow_1f1b_and_cap_at_the_count():
    assert [a.in_flight for a in stage_activations(_qwen(pp=4))] == [4, 3, 2, 1]
    # 128 samples / 4 DP ranks x 9,216 tokens / 8,192 = 36 micro-batches; with 2 samples only 3.
    assert micro_batches(_qwen(pp=4), T) == 36
    few = _with(_qwen(pp=4), global_batch_size=8, rollout_batch_size=1)
    assert micro_batches(few, T) == 3 and [a.in_flight for a in stage_activations(few)] == [3, 3, 2, 1]


def test_activations_tokens_dynamic_budget_or_fixed_micro_batches_over_cp():
    assert tokens_per_micro_batch(_qwen()) == 8192
    fixed = _with(_qwen(cp=2), "--rollout-max-prompt-len", "2048", max_tokens_per_gpu=None, micro_batch_size=2)
    assert tokens_per_micro_batch(fixed) == 2 * (2048 + 8192) // 2


def test_activations_moe_layers_use_top_k_expert_width_plus_shared():
    glm = glm_recipe(GlmOptions())
    glm = glm.replace(extra_args=tuple(a for a in glm.extra_args if "recompute" not in a and a not in ("full",
                                       "uniform", "1")), parallel=Parallelism(tp=8, pp=1, ep=64,
                                                                              sequence_parallel=True))
    act = stage_activations(glm)[0]
    h, moe_ffn = 6144, 8 * 2048 + 2048
    expected = 3 * T * h * (18 + 4 * 12288 / h) / 8 + 75 * T * h * (18 + 4 * moe_ffn / h) / 8
    assert act.layers_gib * GIB == pytest.approx(expected)


@pytest.mark.parametrize("args", [("--recompute-granularity", "some"), ("--recompute-granularity", "full",
                                                                         "--recompute-method", "random")])
def test_activations_unknown_recompute_is_unknown_naming_the_flag(args):
    recipe = _with(_qwen(), *args)
    with pytest.raises(ValueError, match="granularity is full or selective"):
        recompute_of(recipe)
    verdict = evaluate_stage_memory(recipe, get_profile("h100"))
    assert verdict.status is Status.UNKNOWN and "--recompute-granularity" in verdict.summary


def test_activations_seed_steady_memory_error_is_recorded():
    """Seed 004 measured 228 GiB steady on GB300; static + activations are 211.4 GiB (-7.3%) before buffers."""
    memory = estimate_stage_memory(glm_recipe(GlmOptions()), get_profile("gb300"))
    i = memory.peak_index
    assert memory.stages[i].total_gib + memory.activations[i].total_gib == pytest.approx(211.4, abs=0.05)
    assert seed_steady_estimate() == pytest.approx(memory.total_gib(i))
    verdict = evaluate_stage_memory(glm_recipe(GlmOptions()), get_profile("gb300"))
    assert "logits 1.18" in verdict.details and "x4 in flight" in verdict.details
