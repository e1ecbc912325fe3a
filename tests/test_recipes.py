"""Typed recipes: validation, the GLM-5.2 rules, hardware deltas and the known-bad variants."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import catalog, recipes
from rlcheck.recipes import glm, models
from rlcheck.recipes.cases import qwen3_4b_colocated
from rlcheck.recipes.deltas import NotForHardware
from rlcheck.recipes.recipe import Parallelism, Placement, Reward, Rollout, with_env
from rlcheck.scan import Matcher
from tests.bad_recipes import BAD_VARIANTS

FITS = {  # recipe -> hardware profiles it is rendered for; the rest are refused with a reason
    "qwen3-4b-colocated": {"h100", "h200", "b200", "b300", "gb200", "gb300"},
    "qwen3-30b-a3b-disaggregated": {"h100", "h200", "b200", "b300", "gb200", "gb300"},
    "qwen3-4b-remote-rm": {"h100", "h200", "b200", "b300", "gb200", "gb300"},
    "glm5.2-gb300": {"gb300"},
}


@pytest.mark.parametrize("recipe_id", recipes.RECIPE_IDS)
@pytest.mark.parametrize("hw", ["h100", "h200", "b200", "b300", "gb200", "gb300"])
def test_recipes_fit_or_refused_with_reason(recipe_id, hw):
    if hw in FITS[recipe_id]:
        r = recipes.get(recipe_id, hw)
        assert r.hardware == hw and r.placement.num_gpus_per_node <= 8 and r.argv()[:2] == ["python3", "train.py"]
    else:
        with pytest.raises(NotForHardware, match=f"shaped for GB300 nodes .*; {hw} nodes have"):
            recipes.get(recipe_id, hw)


def test_recipes_unknown_id_lists_valid():
    with pytest.raises(KeyError, match="unknown recipe 'qwen3-8b': valid are qwen3-4b-colocated"):
        recipes.get("qwen3-8b")


@pytest.mark.parametrize(("build", "message"), [
    (lambda: Rollout(num_rollout=1, rollout_batch_size=0, n_samples_per_prompt=8, global_batch_size=8),
     "rollout_batch_size=0: must be > 0"),
    (lambda: Rollout(num_rollout=1, rollout_batch_size=1, n_samples_per_prompt=8, global_batch_size=8,
                     temperature=0), "temperature=0: must be > 0"),
    (lambda: Parallelism(tp=1, sequence_parallel=True), "sequence_parallel=True: needs tp > 1"),
    (lambda: Placement(actor_num_nodes=2, actor_gpus_per_node=6, colocate=False),
     "rollout_num_gpus=None: a disaggregated recipe needs rollout GPUs"),
    (lambda: Reward(rm_type="remote_rm"), "rm_url=None: rm_type=remote_rm needs the reward service URL"),
    (lambda: Reward(rm_type="llm_judge"), "rm_type='llm_judge': one of remote_rm"),
    (lambda: with_env(qwen3_4b_colocated(), {"HF_TOKEN": "hf_abc"}), "env HF_TOKEN: looks like a secret"),
    (lambda: with_env(qwen3_4b_colocated(), {"WANDB_API_KEY": "k"}), "env WANDB_API_KEY: looks like a secret"),
    (lambda: qwen3_4b_colocated().replace(sglang=(("--sglang-log-level", "warning"),)),
     "sglang: '--sglang-log-level': a flag name without dashes or prefix"),
    (lambda: glm.GlmOptions(sglang_config="balanced", enable_pd=True), "cannot be combined with enable_pd=True"),
    (lambda: glm.GlmOptions(sglang_config="balanced", enable_pd=False, gpus_per_node=6),
     "needs gpus_per_node a multiple of 4"),
    (lambda: glm.glm_recipe(glm.GlmOptions(num_nodes=4)), "num_nodes=4 x gpus_per_node=4: Miles has GLM-5.2"),
])
def test_recipes_refuse_impossible_values_naming_the_field(build, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        build()


def test_recipes_tokenizers_parallelism_is_not_a_secret():
    assert "TOKENIZERS_PARALLELISM" in qwen3_4b_colocated().env_dict()


def test_glm_gb300_topology_from_the_seed():
    r = recipes.get("glm5.2-gb300", "gb300")
    p = r.parallel
    assert (p.tp, p.pp, p.ep, r.data_parallel, p.pp_first_layers, p.pp_last_layers) == (8, 4, 16, 2, 18, 20)
    assert glm.stage_starts(78, p.pp, p.pp_first_layers, p.pp_last_layers) == [1, 19, 39, 59]
    assert not any(glm.is_skip_topk_layer(s) for s in [1, 19, 39, 59])
    assert r.sglang_value("mem-fraction-static") == "0.85" and r.sglang_value("router-policy") == "consistent_hashing"
    # PD engines span nodes with dp-attention (Miles' default): 64 GPUs on 16 nodes.
    assert r.placement.rollout_gpus_per_engine == 64 and r.sglang_value("dp-size") == "64"
    assert "--moe-enable-deepep" not in r.argv() and "--prefill-num-servers" in r.argv()
    no_pd = glm.GlmOptions(enable_pd=False)
    assert no_pd.engine_gpus == 4 and glm.glm_recipe(no_pd).sglang_value("dp-size") is None
    # Miles' launcher on B200/GB300: bf16 rollout on the triton MoE runner (not with balanced); graphs capped 8 / 32.
    assert r.sglang_value("moe-runner-backend") == "triton" and r.sglang_value("cuda-graph-max-bs") == "8"
    assert glm.glm_recipe(no_pd).sglang_value("cuda-graph-max-bs") == "32"
    balanced = glm.glm_recipe(glm.GlmOptions(enable_pd=False, sglang_config="balanced"))
    assert balanced.sglang_value("moe-runner-backend") is None
    assert glm.glm_recipe(glm.GlmOptions(blackwell=False)).sglang_value("moe-runner-backend") is None
    # No reference model (Miles' script): SLIME/Miles build one when --use-kl-loss is given or --kl-coef != 0.
    argv = r.argv()
    assert "--use-kl-loss" not in argv and argv[argv.index("--kl-coef") + 1] == "0.00"
    assert "--use-kl-loss" in recipes.get("qwen3-4b-colocated").argv()  # kept there: see docs/recipes.md


def test_glm_rules_one_node_smoke_and_engines():
    smoke = glm.glm_recipe(glm.GlmOptions(num_nodes=1, gpus_per_node=4))
    assert smoke.model.num_layers == 5 and smoke.sglang_value("mem-fraction-static") == "0.70"
    assert glm.GlmOptions(enable_pd=False, gpus_per_node=8).engine_gpus == 8
    assert glm.GlmOptions(enable_pd=False, gpus_per_node=4).engine_gpus == 4
    assert glm.stage_starts(78, 8, 14, 16) == [1, 15, 23, 31, 39, 47, 55, 63]
    assert [n for n in range(1, 16) if not glm.is_skip_topk_layer(n)] == [1, 2, 3, 7, 11, 15]


def test_glm_megatron_deepep_rejected_on_gb300_with_the_catalogue_text():
    deepep = glm.glm_recipe(glm.GlmOptions(megatron_use_deepep=True))
    with pytest.raises(ValueError) as err:
        recipes.deltas.for_hardware(deepep, recipes.get_profile("gb300"))
    assert "deepep-gb300-megatron" in Matcher().match_line(f"ValueError: {err.value}")


def test_recipes_hopper_delta_sets_cuda_device_max_connections():
    base = recipes.get("qwen3-4b-colocated")
    tp2 = base.replace(parallel=dataclasses.replace(base.parallel, tp=2, sequence_parallel=True))
    hopper = recipes.deltas.for_hardware(tp2, recipes.get_profile("h200"))
    blackwell = recipes.deltas.for_hardware(tp2, recipes.get_profile("b300"))
    assert hopper.env_dict()["CUDA_DEVICE_MAX_CONNECTIONS"] == "1"
    assert "CUDA_DEVICE_MAX_CONNECTIONS" not in blackwell.env_dict()


@pytest.mark.parametrize("variant", BAD_VARIANTS, ids=[v.name for v in BAD_VARIANTS])
def test_recipes_bad_variants_build_and_name_a_known_failure(variant):
    recipe = variant.build()
    assert variant.failure_id in catalog.load_catalog() and recipe.argv()


def _arch(**changes) -> models.ModelArch:
    return dataclasses.replace(models.QWEN3_4B, **changes)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: _arch(attention=models.GQA(num_query_groups=5)), "num_query_groups=5: must divide"),
    (lambda: _arch(attention=models.GQA(num_query_groups=0)), "num_query_groups=0: must be > 0"),
    (lambda: _arch(attention=models.GQA(), hidden_size=2500), "hidden_size=2500: must divide"),
    (lambda: _arch(activation="relu"), "activation='relu': 'swiglu' or 'gelu'"),
    (lambda: models.MLA(kv_lora_rank=0), "kv_lora_rank=0: must be > 0"),
    (lambda: models.MoE(num_experts=4, router_topk=8, ffn_hidden_size=8, layer_freq="1"), "router_topk=8: at most"),
])
def test_models_refuse_impossible_architectures_naming_the_field(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_models_argv_renders_the_typed_fields():
    mha = _arch(attention=models.GQA(), activation="gelu", norm_epsilon=None).argv()
    assert "--group-query-attention" not in mha and "--kv-channels" not in mha and "--swiglu" not in mha
    assert "--norm-epsilon" not in mha and "--untie-embeddings-and-output-weights" not in mha
    glm_argv = models.GLM5_2.argv()
    assert glm_argv[glm_argv.index("--kv-lora-rank") + 1] == "512" and "--moe-router-enable-expert-bias" in glm_argv
    assert glm_argv[glm_argv.index("--moe-shared-expert-intermediate-size") + 1] == "2048"
    assert models.GLM5_2.moe is not None
    no_bias = dataclasses.replace(models.GLM5_2.moe, expert_bias=False, shared_expert_ffn=0).argv()
    assert "--moe-router-enable-expert-bias" not in no_bias and "--moe-shared-expert-intermediate-size" not in no_bias
    assert (models.QWEN3_4B.kv_heads, models.QWEN3_4B.head_dim, _arch(attention=models.GQA()).kv_heads) == (8, 128, 32)
