"""Rule table for the GLM-5.2 recipe rules (rlcheck.recipes.glm): which DSA layers compute their own top-k indices,
Megatron's pipeline split (even, given first and/or last stage, every refusal whole), the options refused, the
engine width and memory fraction per topology, the parallel layout per node shape, and the whole SGLang flag set for
each engine setting (PD, balanced, low-latency, MTP, Blackwell)."""

from __future__ import annotations

import pytest

from rlcheck.recipes import glm
from rlcheck.recipes.glm import GlmOptions
from rlcheck.recipes.models import GLM5_2, GLM5_2_5LAYER
from rlcheck.recipes.recipe import Optimizer, Parallelism


def test_the_computing_dsa_layers_are_1_to_3_then_every_fourth():
    assert [n for n in range(1, 80) if not glm.is_skip_topk_layer(n)] == [1, 2, 3, *range(7, 80, 4)]
    assert (glm.INDEX_TOPK_FREQ, glm.INDEX_SKIP_OFFSET) == (4, 3)
    assert glm.is_skip_topk_layer(0) is False  # below the offset counts as computing


@pytest.mark.parametrize(("layers", "pp", "first", "last", "sizes"), [
    (78, 1, None, None, [78]),
    (78, 1, 18, 20, [78]),  # one stage holds every layer whatever is given
    (80, 4, None, None, [20, 20, 20, 20]),
    (78, 4, 18, 20, [18, 20, 20, 20]),
    (78, 4, None, 18, [20, 20, 20, 18]),
    (78, 4, 18, None, [18, 20, 20, 20]),
    (78, 8, 14, 16, [14, 8, 8, 8, 8, 8, 8, 16]),
    (30, 2, 10, 20, [10, 20]),  # both given on PP 2: no stage left to share
    (30, 2, 10, None, [10, 20]),
    (30, 3, 0, None, [0, 15, 15]),  # a stage given 0 layers keeps 0
])
def test_megatrons_pipeline_split(layers, pp, first, last, sizes):
    got = glm.stage_sizes(layers, pp, first, last)
    # whole layers, as the pp-split verdict names each stage's first layer (19, never 19.0)
    assert got == sizes and [type(n) for n in got] == [int] * len(sizes)
    assert [str(n) for n in glm.stage_starts(layers, pp, first, last)] == [
        str(1 + sum(sizes[:i])) for i in range(len(sizes))]
    assert glm.stage_starts(layers, pp, first, last) == [1 + sum(sizes[:i]) for i in range(len(sizes))]


@pytest.mark.parametrize(("layers", "pp", "first", "last", "message"), [
    (78, 4, None, None, "78 layers do not divide evenly over PP 4 (no first/last stage size given)"),
    (30, 2, 10, 10, "pp split 10/.../10 of 30 layers on PP 2: 10 layer(s) left for 0 stage(s) not given"),
    (30, 3, 20, 20, "pp split 20/.../20 of 30 layers on PP 3: -10 layer(s) left for 1 stage(s) not given"),
    (30, 3, 15, 15, "pp split 15/.../15 of 30 layers on PP 3: 0 layer(s) left for 1 stage(s) not given"),
    (30, 2, 30, None, "pp split 30/.../- of 30 layers on PP 2: 0 layer(s) left for 1 stage(s) not given"),
    (30, 2, None, 30, "pp split -/.../30 of 30 layers on PP 2: 0 layer(s) left for 1 stage(s) not given"),
    (30, 4, None, 10, "pp split -/.../10 of 30 layers on PP 4: the 20 layers left do not divide evenly over the 3 "
                      "stage(s) not given"),
    (30, 4, 7, None, "pp split 7/.../- of 30 layers on PP 4: the 23 layers left do not divide evenly over the 3 "
                     "stage(s) not given"),
])
def test_a_split_megatron_refuses_is_refused_whole(layers, pp, first, last, message):
    with pytest.raises(ValueError) as err:
        glm.stage_sizes(layers, pp, first, last)
    assert str(err.value) == message


def test_the_shipped_splits_start_on_computing_layers():
    assert glm.stage_starts(78, 4, 18, 20) == [1, 19, 39, 59]
    assert glm.stage_starts(78, 8, 14, 16) == [1, 15, 23, 31, 39, 47, 55, 63]


@pytest.mark.parametrize(("options", "message"), [
    ({"sglang_config": "fast"}, "sglang_config='fast': 'low-latency' or 'balanced'"),
    ({"sglang_config": "balanced"}, "sglang_config='balanced': cannot be combined with enable_pd=True (PD "
                                    "disaggregation)"),
    ({"sglang_config": "balanced", "enable_pd": False, "gpus_per_node": 6},
     "sglang_config='balanced': needs gpus_per_node a multiple of 4, got 6"),
])
def test_options_that_cannot_go_together_are_refused(options, message):
    with pytest.raises(ValueError) as err:
        GlmOptions(**options)
    assert str(err.value) == message


@pytest.mark.parametrize("options", [{"sglang_config": "balanced", "enable_pd": False, "gpus_per_node": 8},
                                     {"sglang_config": "low-latency", "enable_pd": False, "gpus_per_node": 6}])
def test_options_on_the_edge_are_built(options):
    assert GlmOptions(**options).gpus_per_node == options["gpus_per_node"]


@pytest.mark.parametrize(("options", "engine"), [
    ({}, 64), ({"num_nodes": 15}, 16), ({"num_nodes": 1}, 16), ({"num_nodes": 32}, 64),
    ({"enable_pd": False, "gpus_per_node": 8}, 8), ({"enable_pd": False, "gpus_per_node": 4}, 4),
    ({"enable_pd": False, "gpus_per_node": 16}, 8), ({"enable_pd": False, "gpus_per_node": 2}, 2),
    ({"enable_pd": False, "gpus_per_node": 8, "sglang_config": "balanced"}, 4),
])
def test_the_engine_is_pd_wide_or_at_most_a_node(options, engine):
    assert GlmOptions(**options).engine_gpus == engine


@pytest.mark.parametrize(("nodes", "fraction"), [(1, "0.70"), (2, "0.85"), (16, "0.85")])
def test_the_memory_fraction_is_lower_on_the_one_node_smoke(nodes, fraction):
    assert GlmOptions(num_nodes=nodes).mem_fraction_static == fraction


@pytest.mark.parametrize(("options", "parallel", "layers"), [
    ({"num_nodes": 1}, Parallelism(tp=4, sequence_parallel=True, ep=4), 5),
    ({"num_nodes": 1, "gpus_per_node": 8}, Parallelism(tp=4, sequence_parallel=True, ep=8), 5),
    ({}, Parallelism(tp=8, pp=4, ep=16, sequence_parallel=True, pp_first_layers=18, pp_last_layers=20), 78),
    ({"num_nodes": 32}, Parallelism(tp=8, pp=4, ep=16, sequence_parallel=True, pp_first_layers=18,
                                    pp_last_layers=20), 78),
    ({"gpus_per_node": 8}, Parallelism(tp=4, pp=8, cp=8, ep=32, sequence_parallel=True, pp_first_layers=14,
                                       pp_last_layers=16), 78),
])
def test_the_layout_per_node_shape(options, parallel, layers):
    assert glm._parallelism(GlmOptions(**options)) == (parallel, layers)


@pytest.mark.parametrize(("nodes", "per_node"), [(15, 4), (2, 4), (8, 8)])
def test_a_node_shape_miles_has_no_topology_for_is_refused(nodes, per_node):
    with pytest.raises(ValueError) as err:
        glm._parallelism(GlmOptions(num_nodes=nodes, gpus_per_node=per_node))
    assert str(err.value) == (f"num_nodes={nodes} x gpus_per_node={per_node}: Miles has GLM-5.2 topologies for 1 node "
                              "(5 layers), 16+ nodes of 4 GPUs (GB300) and 16+ nodes of 8 GPUs")


def _common(fraction: str, engine: int, running: str, chunk: str) -> dict[str, str | None]:
    return {"mem-fraction-static": fraction, "ep-size": str(engine), "router-policy": "consistent_hashing",
            "kv-cache-dtype": "fp8_e4m3", "attention-backend": "nsa", "nsa-decode-backend": "flashmla_kv",
            "nsa-prefill-backend": "flashmla_sparse", "page-size": "64", "max-running-requests": running,
            "chunked-prefill-size": chunk, "watchdog-timeout": "3600", "log-level": "warning"}


PD = {"enable-dp-attention": None, "dp-size": "64", "moe-dense-tp-size": "1", "enable-dp-lm-head": None}


@pytest.mark.parametrize(("options", "flags"), [
    ({}, {**_common("0.85", 64, "512", "131072"), **PD, "cuda-graph-max-bs": "8", "moe-runner-backend": "triton"}),
    ({"blackwell": False}, {**_common("0.85", 64, "512", "131072"), **PD, "cuda-graph-max-bs": "8"}),
    ({"enable_pd": False}, {**_common("0.85", 4, "512", "8192"), "cuda-graph-max-bs": "32",
                            "moe-runner-backend": "triton"}),
    ({"enable_pd": False, "sglang_config": "balanced"},
     {**_common("0.85", 4, "256", "32768"), "enable-dp-attention": None, "dp-size": "4", "moe-a2a-backend": "deepep",
      "cuda-graph-max-bs": "32"}),
    ({"num_nodes": 1, "enable_mtp": True},
     {**_common("0.70", 16, "512", "32768"), **PD, "dp-size": "16", "cuda-graph-max-bs": "8",
      "moe-runner-backend": "triton", "speculative-algorithm": "EAGLE", "speculative-num-steps": "5",
      "speculative-eagle-topk": "1", "speculative-num-draft-tokens": "6"}),
    ({"enable_pd": False, "sglang_config": "balanced", "enable_mtp": True},
     {**_common("0.85", 4, "256", "32768"), "enable-dp-attention": None, "dp-size": "4", "moe-a2a-backend": "deepep",
      "cuda-graph-max-bs": "32", "speculative-algorithm": "EAGLE", "speculative-num-steps": "1",
      "speculative-eagle-topk": "1", "speculative-num-draft-tokens": "2"}),
])
def test_the_sglang_flags_of_each_engine_setting(options, flags):
    got = glm._sglang(GlmOptions(**options))
    assert got == tuple(flags.items())


@pytest.mark.parametrize(("options", "dispatcher"), [
    ({}, ("--moe-token-dispatcher-type", "alltoall")),
    ({"megatron_use_deepep": True}, ("--moe-enable-deepep", "--moe-token-dispatcher-type", "flex")),
])
def test_the_recipe_of_16_gb300_nodes(options, dispatcher):
    recipe = glm.glm_recipe(GlmOptions(**options))
    assert (recipe.id, recipe.model, recipe.framework, recipe.hf_checkpoint, recipe.ref_load) == (
        "glm5.2-gb300", GLM5_2, "miles", "/root/models/GLM-5.2", "/root/models/GLM-5.2_torch_dist")
    r, pl = recipe.rollout, recipe.placement
    assert (r.num_rollout, r.rollout_batch_size, r.n_samples_per_prompt, r.global_batch_size, r.max_response_len,
            r.max_tokens_per_gpu) == (3000, 8, 8, 64, 32768, 8192)
    assert (pl.actor_num_nodes, pl.actor_gpus_per_node, pl.colocate, pl.rollout_gpus_per_engine,
            pl.num_gpus_per_node) == (16, 4, True, 64, 4)
    assert recipe.optimizer == Optimizer(cpu_offload=False) and recipe.grpo == glm.NO_REFERENCE_GRPO
    assert recipe.sglang == glm._sglang(GlmOptions(**options))
    assert recipe.env == (("SGLANG_NSA_FORCE_MLA", "1"), ("INDEXER_ROPE_NEOX_STYLE", "0"),
                          ("NVSHMEM_DISABLE_NCCL", "1"))
    assert recipe.extra_args == (*dispatcher, "--prefill-num-servers", "1", "--recompute-granularity", "full",
                                 "--recompute-method", "uniform", "--recompute-num-layers", "1", "--use-tis",
                                 "--tis-clip-low", "0.5", "--tis-clip", "2.0", "--update-weight-buffer-size",
                                 "2147483648")


def test_the_one_node_smoke_recipe():
    recipe = glm.glm_recipe(GlmOptions(num_nodes=1, enable_pd=False), "glm5.2-smoke")
    assert (recipe.id, recipe.model, recipe.rollout.max_response_len, recipe.optimizer.cpu_offload) == (
        "glm5.2-smoke", GLM5_2_5LAYER, 100, True)
    assert "--prefill-num-servers" not in recipe.extra_args
    assert recipe.placement.rollout_gpus_per_engine == 4


def test_no_reference_model_is_built():
    assert glm.NO_REFERENCE_GRPO == ("--advantage-estimator", "grpo", "--kl-loss-coef", "0.00", "--kl-loss-type",
                                     "low_var_kl", "--kl-coef", "0.00", "--entropy-coef", "0.00", "--eps-clip", "0.2",
                                     "--eps-clip-high", "0.28")
    assert glm.UPDATE_WEIGHT_BUFFER_BYTES == 2 * 1024**3
