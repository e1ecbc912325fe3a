"""Training buffers beyond Megatron's formula (probes.recipe.memory_buffers): every term by hand from its source.

Each test pins one term on a real recipe, so dropping that term from the sum or the estimate fails it.
The seed's measurement (228 GiB steady, GLM-5.2 TP8 x PP4 x EP16 on GB300) is recorded with the error.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.probes.recipe import memory_buffers as mb
from rlcheck.probes.recipe.memory import (
    SEED_STEADY_GIB,
    TORCH_BUDGET_FRACTION,
    WARN_FRACTION,
    estimate_stage_memory,
    evaluate_stage_memory,
    seed_steady_estimate,
    shortfall,
)
from rlcheck.probes.recipe.memory_params import GIB
from rlcheck.recipes.glm import GlmOptions, glm_recipe
from rlcheck.recipes.recipe import Recipe
from rlcheck.verdict import Status


def _glm() -> Recipe:
    return recipes.get("glm5.2-gb300", "gb300")


def _stage4() -> mb.StageBuffers:
    return estimate_stage_memory(_glm(), get_profile("gb300")).buffers[3]


def test_buffers_dispatcher_is_one_moe_layers_alltoall_working_set():
    """TP8 + sequence parallel: 8192 / 8 = 1024 tokens per rank, x top-8 = 8192 routed copies of 6144 x bf16."""
    routed = 8192 // 8 * 8
    assert _stage4().dispatcher_gib * GIB == 3 * routed * 6144 * 2 + routed * 4


def test_buffers_dispatcher_stores_every_moe_layers_input_without_full_recompute():
    glm = _glm()
    selective = glm.replace(extra_args=tuple(a if a != "full" else "selective" for a in glm.extra_args))
    routed_copy = 8192 // 8 * 8 * 6144 * 2
    full, stored = mb.dispatcher_bytes(glm, 20, 1), mb.dispatcher_bytes(selective, 20, 2)
    assert stored - full == 20 * 2 * routed_copy
    assert mb.dispatcher_bytes(recipes.get("qwen3-4b-colocated", "h100"), 36, 1) == 0  # dense: no dispatcher


def test_buffers_padding_is_megatrons_alignment():
    """64-element param starts, lcm(DP, 128) bucket ends, 2 + 4 bytes per padded element."""
    tensors = 20 * (16 + 2 * 256 // 16) + 2
    expected = (tensors * 63 + (math.lcm(2, 128) - 1) + (math.lcm(1, 128) - 1)) * 6
    assert mb.padding_bytes(_glm(), 20, 2, 1) == expected
    assert _stage4().padding_gib * GIB == expected


def test_buffers_cuda_context_is_the_measured_one():
    assert _stage4().context_gib == mb.CUDA_CONTEXT_GIB == 0.51


@pytest.mark.parametrize(("rid", "hw", "collective", "p2p"), [
    ("glm5.2-gb300", "gb300", ("TP", "DPxCP", "model parallel", "world"), ("PP", "EP")),
    ("qwen3-4b-colocated", "h100", ("DPxCP", "world"), ()),
    ("qwen3-30b-a3b-disaggregated", "h100", ("TP", "CP", "DPxCP", "expert DP", "model parallel", "world"), ("EP",)),
])
def test_buffers_nccl_counts_the_groups_a_step_uses(rid, hw, collective, p2p):
    recipe = recipes.get(rid, hw)
    assert mb.nccl_groups(recipe) == (collective, p2p)
    assert mb.nccl_gib(recipe) == pytest.approx(0.18 + 0.28 * len(collective) + 0.44 * len(p2p))


def test_buffers_nccl_is_zero_on_one_gpu():
    single = recipes.get("qwen3-4b-colocated", "h100")
    single = single.replace(placement=dataclasses.replace(single.placement, actor_num_nodes=1, actor_gpus_per_node=1))
    assert single.world_size == 1 and mb.nccl_gib(single) == 0.0


def test_buffers_colocated_engine_keeps_its_context_and_communicator():
    assert _stage4().colocated_gib == pytest.approx(0.51 + 0.18 + 0.28)
    disaggregated = estimate_stage_memory(recipes.get("qwen3-30b-a3b-disaggregated", "h100"), get_profile("h100"))
    assert disaggregated.buffers[0].colocated_gib == 0.0


def test_buffers_are_in_the_stage_total():
    memory = estimate_stage_memory(_glm(), get_profile("gb300"))
    for i, (s, a, b) in enumerate(zip(memory.stages, memory.activations, memory.buffers, strict=True)):
        assert memory.total_gib(i) == pytest.approx(s.total_gib + a.total_gib + b.total_gib)
        assert b.total_gib == pytest.approx(b.dispatcher_gib + b.padding_gib + b.context_gib + b.nccl_gib
                                            + b.colocated_gib)
    assert memory.buffers[3].total_gib == pytest.approx(3.9, abs=0.05)


def test_buffers_seed_steady_error_is_recorded_and_the_recipe_warns_by_the_measured_shortfall():
    """228 GiB measured; 209.8 static + 1.6 activations + 3.9 buffers = 215.3 GiB (-5.6%), under 217.8.

    The sum of the sourced terms does not reach the WARN line; 12.7 GiB stay unexplained (see
    docs/memory-checks.md). This test fails if a term is fitted to cross it: the WARN comes from the band,
    which judges the estimate raised by the measured shortfall (228 / 215.3), never from the estimate.
    """
    assert seed_steady_estimate() == pytest.approx(215.3, abs=0.05)
    assert seed_steady_estimate() / SEED_STEADY_GIB - 1 == pytest.approx(-0.056, abs=0.001)
    warn_line = WARN_FRACTION * TORCH_BUDGET_FRACTION * get_profile("gb300").hbm_gib
    assert warn_line == pytest.approx(217.8, abs=0.05) and seed_steady_estimate() < warn_line < SEED_STEADY_GIB
    assert shortfall() == pytest.approx(SEED_STEADY_GIB / 215.3, abs=0.001)
    verdict = evaluate_stage_memory(glm_recipe(GlmOptions()), get_profile("gb300"))
    assert verdict.status is Status.WARN and "vs 228 GiB measured steady (-5.6%)" in verdict.details
    assert "215.3 GiB per GPU" in verdict.summary and "~228.0 GiB with the 5.9%" in verdict.summary
    assert "MoE dispatch 0.28, padding 0.000, CUDA context 0.51, NCCL 2.18, colocated engine 0.97" in verdict.details
    assert "send/recv PP, EP" in verdict.details and "not counted: the caching allocator" in verdict.details
