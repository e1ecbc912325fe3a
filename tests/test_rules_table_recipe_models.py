"""Rule table for the model architectures (rlcheck.recipes.models): every impossible architecture refused naming the
field (both sides of each bound), the KV heads and head dim the KV and memory checks read (GQA, MHA, MLA), the FFN
matrices per activation, the whole Megatron argv of each attention kind and MoE shape, and the GLM-5 / GLM-5.2
variants (rotary base, layer count, the smoke model's name and MoE layer pattern)."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.recipes import models
from rlcheck.recipes.models import GQA, MLA, DsaIndexer, ModelArch, MoE

SMALL = ModelArch(name="small", num_layers=2, hidden_size=64, ffn_hidden_size=128, num_attention_heads=8,
                  vocab_size=1000, rotary_base=10000, attention=GQA())


def _message(build) -> str:
    with pytest.raises(ValueError) as err:
        build()
    return str(err.value)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: GQA(num_query_groups=0), "GQA num_query_groups=0: must be > 0 or None"),
    (lambda: GQA(kv_channels=-1), "GQA kv_channels=-1: must be > 0 or None"),
    (lambda: MLA(kv_lora_rank=0), "MLA kv_lora_rank=0: must be > 0"),
    (lambda: MLA(qk_head_dim=0), "MLA qk_head_dim=0: must be > 0"),
    (lambda: MLA(v_head_dim=0), "MLA v_head_dim=0: must be > 0"),
    (lambda: MLA(qk_pos_emb_head_dim=0), "MLA qk_pos_emb_head_dim=0: must be > 0"),
    (lambda: MoE(num_experts=0, router_topk=1, ffn_hidden_size=8, layer_freq="1"), "MoE num_experts=0: must be > 0"),
    (lambda: MoE(num_experts=4, router_topk=0, ffn_hidden_size=8, layer_freq="1"), "MoE router_topk=0: must be > 0"),
    (lambda: MoE(num_experts=4, router_topk=1, ffn_hidden_size=0, layer_freq="1"),
     "MoE ffn_hidden_size=0: must be > 0"),
    (lambda: MoE(num_experts=4, router_topk=5, ffn_hidden_size=8, layer_freq="1"),
     "MoE router_topk=5: at most num_experts=4"),
    (lambda: dataclasses.replace(SMALL, num_layers=0), "num_layers=0: must be > 0"),
    (lambda: dataclasses.replace(SMALL, hidden_size=0), "hidden_size=0: must be > 0"),
    (lambda: dataclasses.replace(SMALL, ffn_hidden_size=0), "ffn_hidden_size=0: must be > 0"),
    (lambda: dataclasses.replace(SMALL, num_attention_heads=0), "num_attention_heads=0: must be > 0"),
    (lambda: dataclasses.replace(SMALL, vocab_size=0), "vocab_size=0: must be > 0"),
    (lambda: dataclasses.replace(SMALL, activation="relu"), "activation='relu': 'swiglu' or 'gelu'"),
    (lambda: dataclasses.replace(SMALL, attention=GQA(num_query_groups=3)),
     "num_query_groups=3: must divide num_attention_heads=8"),
    (lambda: dataclasses.replace(SMALL, hidden_size=60), "hidden_size=60: must divide by num_attention_heads=8"),
    (lambda: models.glm5_2(3), "num_layers=3: GLM-5.2 has 3 dense layers, so at least 4"),
    (lambda: models.glm5(2), "num_layers=2: GLM-5 has 3 dense layers, so at least 4"),
])
def test_an_impossible_architecture_is_refused_naming_the_field(build, message):
    assert _message(build) == message


@pytest.mark.parametrize("build", [
    lambda: GQA(num_query_groups=1, kv_channels=1),
    lambda: MLA(kv_lora_rank=1, qk_head_dim=1, v_head_dim=1, qk_pos_emb_head_dim=1),
    lambda: MoE(num_experts=4, router_topk=4, ffn_hidden_size=1, layer_freq="1"),
    lambda: dataclasses.replace(SMALL, num_layers=1, attention=GQA(num_query_groups=8), activation="gelu"),
    # with --kv-channels the hidden size need not divide by the heads; MLA has no such rule either
    lambda: dataclasses.replace(SMALL, hidden_size=60, attention=GQA(kv_channels=16)),
    lambda: dataclasses.replace(SMALL, hidden_size=60, attention=MLA()),
    lambda: models.glm5_2(4),
])
def test_an_architecture_on_the_edge_of_each_bound_is_built(build):
    assert build() is not None


@pytest.mark.parametrize(("model", "kv_heads", "head_dim", "matrices"), [
    (SMALL, 8, 8, 3),
    (dataclasses.replace(SMALL, attention=GQA(num_query_groups=2)), 2, 8, 3),
    (dataclasses.replace(SMALL, attention=GQA(num_query_groups=2, kv_channels=32), activation="gelu"), 2, 32, 2),
    (models.QWEN3_4B, 8, 128, 3),
    (models.QWEN3_30B_A3B, 4, 128, 3),
    (models.GLM5_2, 64, 192, 3),  # MLA: no KV groups; its head dim is --kv-channels
])
def test_the_kv_heads_head_dim_and_ffn_matrices_the_checks_read(model, kv_heads, head_dim, matrices):
    assert (model.kv_heads, model.head_dim, model.ffn_matrices) == (kv_heads, head_dim, matrices)


def test_the_head_dim_of_mla_without_kv_channels_is_hidden_over_heads():
    assert dataclasses.replace(SMALL, attention=MLA()).head_dim == 8


@pytest.mark.parametrize(("attention", "argv"), [
    (GQA(), []),
    (GQA(num_query_groups=2, kv_channels=16, qk_layernorm=True, qkv_bias=True),
     ["--group-query-attention", "--num-query-groups", "2", "--kv-channels", "16", "--qk-layernorm",
      "--add-qkv-bias"]),
    (GQA(kv_channels=16), ["--kv-channels", "16"]),
    (MLA(), ["--multi-latent-attention", "--kv-lora-rank", "32", "--qk-head-dim", "128", "--v-head-dim", "128",
             "--qk-pos-emb-head-dim", "64"]),
    (MLA(q_lora_rank=16, kv_lora_rank=8, qk_head_dim=24, v_head_dim=32, qk_pos_emb_head_dim=4, kv_channels=24,
         qk_layernorm=True, indexer=DsaIndexer()),
     ["--multi-latent-attention", "--q-lora-rank", "16", "--kv-lora-rank", "8", "--qk-head-dim", "24",
      "--v-head-dim", "32", "--kv-channels", "24", "--qk-pos-emb-head-dim", "4", "--qk-layernorm"]),
])
def test_the_attention_argv(attention, argv):
    assert attention.argv() == argv


@pytest.mark.parametrize(("moe", "argv"), [
    (MoE(num_experts=4, router_topk=2, ffn_hidden_size=8, layer_freq="[1]*2"),
     ["--num-experts", "4", "--moe-router-topk", "2", "--moe-ffn-hidden-size", "8", "--moe-layer-freq", "[1]*2"]),
    (MoE(num_experts=4, router_topk=2, ffn_hidden_size=8, layer_freq="[0]+[1]", shared_expert_ffn=16,
         expert_bias=True, extra=("--a",), extra_after_bias=("--b", "1")),
     ["--num-experts", "4", "--moe-router-topk", "2", "--moe-ffn-hidden-size", "8", "--moe-layer-freq", "[0]+[1]",
      "--moe-shared-expert-intermediate-size", "16", "--a", "--moe-router-enable-expert-bias", "--b", "1"]),
])
def test_the_moe_argv(moe, argv):
    assert moe.argv() == argv


TAIL = ["--normalization", "RMSNorm", "--position-embedding-type", "rope", "--vocab-size", "1000", "--rotary-base",
        "10000"]


def test_the_model_argv_of_a_plain_mha():
    assert SMALL.argv() == ["--num-layers", "2", "--hidden-size", "64", "--ffn-hidden-size", "128",
                            "--num-attention-heads", "8", "--disable-bias-linear", "--swiglu", *TAIL]


def test_the_model_argv_of_every_optional_field():
    model = dataclasses.replace(SMALL, attention=GQA(num_query_groups=2), norm_epsilon="1e-5", rotary_percent="0.5",
                                untie_embeddings=True, extra=("--x",), activation="gelu", bias_linear=True,
                                spec=("--spec", "m", "f"),
                                moe=MoE(num_experts=2, router_topk=1, ffn_hidden_size=4, layer_freq="1"))
    assert model.argv() == ["--spec", "m", "f", "--num-layers", "2", "--hidden-size", "64", "--ffn-hidden-size",
                            "128", "--num-attention-heads", "8", "--group-query-attention", "--num-query-groups", "2",
                            "--norm-epsilon", "1e-5", "--rotary-percent", "0.5",
                            "--untie-embeddings-and-output-weights", "--x", *TAIL, "--num-experts", "2",
                            "--moe-router-topk", "1", "--moe-ffn-hidden-size", "4", "--moe-layer-freq", "1"]


@pytest.mark.parametrize(("build", "name", "layers", "rotary", "freq", "params_b"), [
    (models.glm5_2, "GLM-5.2", 78, 8_000_000, "[0]*3+[1]*75", 744.0),
    (lambda: models.glm5_2(5), "GLM-5.2_5layer", 5, 8_000_000, "[0]*3+[1]*2", 744.0 * 5 / 78),
    (models.glm5, "GLM-5", 78, 1_000_000, "[0]*3+[1]*75", 744.0),
    (lambda: models.glm5(6), "GLM-5_6layer", 6, 1_000_000, "[0]*3+[1]*3", 744.0 * 6 / 78),
])
def test_the_glm5_variants(build, name, layers, rotary, freq, params_b):
    model = build()  # built here: the module's constants were built once, at import
    assert (model.name, model.num_layers, model.rotary_base, model.moe.layer_freq, model.params_b) == (
        name, layers, rotary, freq, params_b)
    assert (model.hidden_size, model.ffn_hidden_size, model.num_attention_heads, model.vocab_size) == (
        6144, 12288, 64, 154880)
    assert model.attention == MLA(q_lora_rank=2048, kv_lora_rank=512, qk_head_dim=192, v_head_dim=256,
                                  kv_channels=192, qk_pos_emb_head_dim=64, qk_layernorm=True,
                                  indexer=DsaIndexer(heads=32, head_dim=128))
    assert model.untie_embeddings and model.spec == ("--spec", "miles_plugins.models.glm5.glm5", "get_glm5_spec")
    assert model.extra == ("--no-position-embedding", "--make-vocab-size-divisible-by", "16", "--enable-experimental")
    assert model.moe == MoE(
        num_experts=256, router_topk=8, ffn_hidden_size=2048, layer_freq=freq, shared_expert_ffn=2048,
        expert_bias=True, extra=("--moe-grouped-gemm", "--moe-permute-fusion", "--moe-router-score-function",
                                 "sigmoid", "--moe-router-pre-softmax"),
        extra_after_bias=("--moe-router-bias-update-rate", "0", "--moe-router-load-balancing-type", "seq_aux_loss",
                          "--moe-router-topk-scaling-factor", "2.5", "--moe-aux-loss-coeff", "0", "--moe-router-dtype",
                          "fp32"))


def test_the_shipped_glm_models_are_the_builders_defaults():
    assert (models.GLM5_2, models.GLM5_2_5LAYER, models.GLM5) == (models.glm5_2(), models.glm5_2(5), models.glm5())


def test_the_shipped_models_by_name():
    assert list(models.MODELS) == ["Qwen3-4B", "Qwen3-30B-A3B", "GLM-5.2", "GLM-5.2_5layer", "GLM-5"]
    assert DsaIndexer() == DsaIndexer(heads=32, head_dim=128)
