"""Rule table for the training buffers beyond Megatron's formula (rlcheck.probes.recipe.memory_buffers), on a toy
MoE model whose every number is small enough to write out: which NCCL groups a step uses (more than one rank,
floor division as Megatron sizes them), the MoE dispatcher's working set (sequence parallelism shards the tokens,
full recompute drops the stored expert inputs), Megatron's alignment padding (64-element starts, lcm(DP, 128)
bucket ends, a dense buffer and an expert one) and each pipeline stage's share of the MoE layers."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import recipes
from rlcheck.probes.recipe import memory_buffers as mb
from rlcheck.probes.recipe.memory_params import GIB
from rlcheck.recipes.models import GQA, ModelArch, MoE
from rlcheck.recipes.recipe import Parallelism, Recipe

# toy: hidden 64, 8 experts of top-2, 1000 tokens per GPU; the first layer dense, the other three MoE
H, TOPK, EXPERTS, T = 64, 2, 8, 1000


def _toy(*, moe: bool = True, layers: int = 4, freq: str = "[0]*1+[1]*3", gpus: int = 8, colocate: bool = True,
         args: tuple[str, ...] = (), **parallel) -> Recipe:
    base = recipes.get("qwen3-4b-colocated", "h100")
    model = ModelArch(name="toy", num_layers=layers, hidden_size=H, ffn_hidden_size=128, num_attention_heads=4,
                      vocab_size=1000, rotary_base=10000, attention=GQA(num_query_groups=2, kv_channels=16),
                      moe=MoE(num_experts=EXPERTS, router_topk=TOPK, ffn_hidden_size=32, layer_freq=freq)
                      if moe else None)
    return base.replace(model=model, parallel=Parallelism(**parallel), extra_args=args,
                        placement=dataclasses.replace(base.placement, actor_num_nodes=1, actor_gpus_per_node=gpus,
                                                      colocate=colocate, rollout_num_gpus=None if colocate else 2),
                        rollout=dataclasses.replace(base.rollout, max_tokens_per_gpu=T))


FULL = ("--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1")


@pytest.mark.parametrize(("recipe", "collective", "p2p"), [
    # 8 GPUs, TP2 x PP2 x EP2: DP x CP = 8 // 4 = 2, expert DP = 8 // (2 x 1 x 2) = 2; CP 1 is no group
    (_toy(tp=2, pp=2, ep=2), ("TP", "DPxCP", "expert DP", "model parallel", "world"), ("PP", "EP")),
    # 6 GPUs, TP4 x EP4: DP x CP = 6 // 4 = 1 and expert DP = 6 // 4 = 1 are no groups (floor, as Megatron sizes)
    (_toy(gpus=6, tp=4, ep=4), ("TP", "model parallel", "world"), ("EP",)),
    # EP2 x ETP2 on 4 GPUs: expert DP = 4 // (2 x 2) = 1
    (_toy(gpus=4, ep=2, etp=2), ("DPxCP", "world"), ("EP",)),
    (_toy(gpus=4, cp=2), ("CP", "DPxCP", "expert DP", "world"), ()),
    # dense: no expert data-parallel group, whatever EP says
    (_toy(moe=False, gpus=8, tp=8), ("TP", "model parallel", "world"), ()),
    (_toy(gpus=1), (), ()),
])
def test_nccl_groups_are_those_of_more_than_one_rank(recipe, collective, p2p):
    assert mb.nccl_groups(recipe) == (collective, p2p)
    expected = 0.0 if not collective and not p2p else 0.18 + 0.28 * len(collective) + 0.44 * len(p2p)
    assert mb.nccl_gib(recipe) == pytest.approx(expected)


ROUTED_SP = T // 2 * TOPK  # TP2 with sequence parallelism: 500 tokens per rank, 2 copies each
ROUTED = T * TOPK          # without it (or at TP1) each rank routes all 1000


@pytest.mark.parametrize(("recipe", "moe_layers", "in_flight", "expected"), [
    # one layer's working set: 3 bf16 copies of routed x hidden + fp32 routing probabilities; plus, without full
    # recompute, each stored MoE layer's expert input (routed x hidden bf16) per in-flight micro-batch
    (_toy(tp=2, sequence_parallel=True), 3, 2, 3 * ROUTED_SP * H * 2 + ROUTED_SP * 4 + ROUTED_SP * H * 2 * 3 * 2),
    (_toy(tp=2), 3, 2, 3 * ROUTED * H * 2 + ROUTED * 4 + ROUTED * H * 2 * 3 * 2),
    (_toy(), 1, 1, 3 * ROUTED * H * 2 + ROUTED * 4 + ROUTED * H * 2),
    (_toy(args=FULL), 3, 4, 3 * ROUTED * H * 2 + ROUTED * 4),
    (_toy(), 0, 1, 0.0),  # a stage without MoE layers dispatches nothing
    (_toy(moe=False), 4, 1, 0.0),
])
def test_dispatcher_is_one_layers_working_set_plus_the_stored_expert_inputs(recipe, moe_layers, in_flight, expected):
    assert mb.dispatcher_bytes(recipe, moe_layers, in_flight) == expected


@pytest.mark.parametrize(("recipe", "layers", "dp_cp", "expert_dp", "expected"), [
    # 8 experts over EP4 = 2 local: 16 + 2 x 2 tensors a layer, + 2 (embedding, output); lcm(3, 128) = 384
    (_toy(ep=4), 2, 3, 3, ((2 * (16 + 4) + 2) * 63 + 383 + 383) * 6),
    (_toy(ep=4), 2, 128, 1, ((2 * (16 + 4) + 2) * 63 + 127 + 127) * 6),
    # 8 experts over EP3: 2 local experts (floor), never a fraction of a tensor
    (_toy(ep=3), 1, 2, 5, ((16 + 4 + 2) * 63 + 127 + 639) * 6),
    # dense: no expert tensors and no expert buffer
    (_toy(moe=False), 3, 3, 3, ((3 * 16 + 2) * 63 + 383) * 6),
])
def test_padding_is_megatrons_alignment(recipe, layers, dp_cp, expert_dp, expected):
    assert mb.padding_bytes(recipe, layers, dp_cp, expert_dp) == expected


WORKING, COPY = 3 * ROUTED * H * 2 + ROUTED * 4, ROUTED * H * 2
COLOCATED = 0.51 + 0.18 + 0.28


def _fields(b: mb.StageBuffers) -> tuple[float, ...]:
    return (b.dispatcher_gib * GIB, b.padding_gib * GIB, b.context_gib, b.nccl_gib, b.colocated_gib, b.total_gib)


@pytest.mark.parametrize(("recipe", "in_flight", "stages"), [
    # PP2 on 8 GPUs: layers 1-2 (1 MoE layer) and 3-4 (2); DP x CP = 4, expert DP = 4, 8 local experts
    (_toy(pp=2), (2, 1), [(WORKING + COPY * 1 * 2, ((2 * (16 + 16) + 2) * 63 + 127 + 127) * 6),
                          (WORKING + COPY * 2 * 1, ((2 * (16 + 16) + 2) * 63 + 127 + 127) * 6)]),
    # the first stage holds only the dense layer 1: no dispatcher there; layers 2-4 all MoE
    (_toy(pp=2, pp_first_layers=1), (2, 1), [(0.0, ((16 + 16 + 2) * 63 + 127 + 127) * 6),
                                             (WORKING + COPY * 3 * 1, ((3 * (16 + 16) + 2) * 63 + 127 + 127) * 6)]),
    # MoE on every other layer ('2': layers 1 and 3), one stage
    (_toy(freq="2", gpus=2, colocate=False), (3,), [(WORKING + COPY * 2 * 3, ((4 * (16 + 16) + 2) * 63 + 127 + 127)
                                                     * 6)]),
])
def test_stage_buffers_count_each_stages_own_moe_layers_and_layers(recipe, in_flight, stages):
    colocated = COLOCATED if recipe.placement.colocate else 0.0
    nccl = mb.nccl_gib(recipe)
    out = mb.stage_buffers(recipe, in_flight)
    assert [_fields(b) for b in out] == [
        pytest.approx((d, p, 0.51, nccl, colocated, (d + p) / GIB + 0.51 + nccl + colocated)) for d, p in stages]
    assert nccl > 0
