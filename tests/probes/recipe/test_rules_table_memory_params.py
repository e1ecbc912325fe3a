"""Rule table for the memory model's parameter arithmetic (rlcheck.probes.recipe.memory_params): exact counts for small
hand-made models where every term is non-zero and distinct, so a dropped or changed term moves the number; the
KV bytes per token on each side of the one-head-per-rank clamp; every --moe-layer-freq form; per-stage loads.
Every expected figure is worked out in the test from the formula's meaning, never read back from the code."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.probes.recipe import memory_params as mp
from rlcheck.recipes.models import GQA, MLA, DsaIndexer, ModelArch
from rlcheck.recipes.recipe import Parallelism

# h = 64, H = 8 heads, G = 2 KV groups, d = 24 (--kv-channels, not h / H = 8), 3 layers
GQA_MODEL = ModelArch(name="tiny-gqa", num_layers=3, hidden_size=64, ffn_hidden_size=96, num_attention_heads=8,
                      vocab_size=100, rotary_base=10_000, attention=GQA(num_query_groups=2, kv_channels=24))
# h = 64, H = 4; q_rank 16, kv_rank 12, rope 5, qk 10, v 14
MLA_ATTN = MLA(q_lora_rank=16, kv_lora_rank=12, qk_pos_emb_head_dim=5, qk_head_dim=10, v_head_dim=14)
MLA_MODEL = ModelArch(name="tiny-mla", num_layers=3, hidden_size=64, ffn_hidden_size=96, num_attention_heads=4,
                      vocab_size=100, rotary_base=10_000, attention=MLA_ATTN)


def _gqa(**changes) -> ModelArch:
    return dataclasses.replace(GQA_MODEL, attention=dataclasses.replace(GQA_MODEL.attention, **changes))


def _mla(**changes) -> ModelArch:
    return dataclasses.replace(MLA_MODEL, attention=dataclasses.replace(MLA_ATTN, **changes))


# input norm h + QKV h*(H+2G)*d + out H*d*h = 64 + 64*(8+2*2)*24 + 8*24*64 = 64 + 18432 + 12288
GQA_BASE = 64 + 18432 + 12288


@pytest.mark.parametrize(("model", "expected"), [
    (GQA_MODEL, GQA_BASE),
    (_gqa(qk_layernorm=True), GQA_BASE + 2 * 24),  # q and k norms: 2*d
    (_gqa(qkv_bias=True), GQA_BASE + (8 + 2 * 2) * 24),  # QKV bias: (H+2G)*d = 288
    (_gqa(qk_layernorm=True, qkv_bias=True), GQA_BASE + 48 + 288),
    # MHA (no groups): G = H = 8: 64 + 64*(8+16)*24 + 8*24*64 + bias (8+16)*24
    (_gqa(num_query_groups=None, qkv_bias=True), 64 + 64 * 24 * 24 + 8 * 24 * 64 + 24 * 24),
], ids=["gqa", "qk-norm", "qkv-bias", "norm-and-bias", "mha-bias"])
def test_rules_table_gqa_attention_params(model, expected):
    assert mp.attention_params(model) == expected


# q with a q LoRA: down h*q_rank + its norm q_rank + up q_rank*H*(qk+rope) = 64*16 + 16 + 16*4*15 = 2000
# q without: h*H*(qk+rope) = 64*4*15 = 3840
# kv: down h*(kv_rank+rope) + its norm kv_rank + up kv_rank*H*(qk+v) = 64*17 + 12 + 12*4*24 = 2252
# out H*v*h = 4*14*64 = 3584; input norm h = 64
# DSA indexer (n = 3 heads, d = 7): (q_rank or h)*n*d + h*d + 2*d + h*n
@pytest.mark.parametrize(("model", "expected"), [
    (MLA_MODEL, 64 + 2000 + 2252 + 3584),
    (_mla(q_lora_rank=None), 64 + 3840 + 2252 + 3584),
    (_mla(indexer=DsaIndexer(heads=3, head_dim=7)), 64 + 2000 + 2252 + 3584 + 16 * 3 * 7 + 64 * 7 + 14 + 64 * 3),
    (_mla(q_lora_rank=None, indexer=DsaIndexer(heads=3, head_dim=7)),
     64 + 3840 + 2252 + 3584 + 64 * 3 * 7 + 64 * 7 + 14 + 64 * 3),
], ids=["q-lora", "no-q-lora", "q-lora-indexer", "no-q-lora-indexer"])
def test_rules_table_mla_attention_params(model, expected):
    assert mp.attention_params(model) == expected


@pytest.mark.parametrize(("dtype", "tp", "expected"), [
    # max(1, G // tp) heads * K and V * d * element bytes * layers, G = 2, d = 24, 3 layers
    (None, 1, 2 * 2 * 24 * 2 * 3),  # None is 'auto': the model's bf16, 2 bytes
    ("auto", 1, 2 * 2 * 24 * 2 * 3),
    ("bf16", 1, 2 * 2 * 24 * 2 * 3),
    ("fp8_e4m3", 1, 2 * 2 * 24 * 1 * 3),  # fp8: 1 byte
    ("fp8_e5m2", 2, 1 * 2 * 24 * 1 * 3),
    (None, 2, 1 * 2 * 24 * 2 * 3),  # 2 // 2 = 1 head per rank
    (None, 4, 1 * 2 * 24 * 2 * 3),  # 2 // 4 = 0: clamped to one head per rank
])
def test_rules_table_gqa_kv_bytes_per_token(dtype, tp, expected):
    assert mp.kv_bytes_per_token(GQA_MODEL, dtype, tp) == expected


@pytest.mark.parametrize(("dtype", "expected"), [
    (None, (12 + 5) * 2 * 3),  # one latent kv_rank + rope per layer, bf16, on every rank whatever the TP
    ("fp8_e4m3", (12 + 5) * 1 * 3),
])
def test_rules_table_mla_kv_bytes_per_token_ignores_tp(dtype, expected):
    assert mp.kv_bytes_per_token(MLA_MODEL, dtype, 1) == mp.kv_bytes_per_token(MLA_MODEL, dtype, 8) == expected


@pytest.mark.parametrize(("pattern", "layers", "moe"), [
    ("3", 7, "1001001"),  # an int k: layer i is MoE when i % k == 0 (layers 0, 3, 6)
    ("1", 3, "111"),
    ("'2'", 4, "1010"),  # shell quotes kept in the token are dropped
    (" 2 ", 4, "1010"),  # and spaces
    ("[0,1,1]", 3, "011"),  # a plain list, no count
    ("[0, 1, 1]", 3, "011"),
    ("[0,1]*2", 4, "0101"),
    ("[0]*3+[1]*2", 5, "00011"),
    ("[0] * 3 + [1] * 2 ", 5, "00011"),
    ("\"[0]*3+[1]*2\"", 5, "00011"),
    ("([0]*3+[1]*2)", 5, "00011"),  # a parenthesised whole, as Megatron's own examples write it
    ("'([1]*4)'", 4, "1111"),  # slime's qwen3-30B-A3B script form, quoted for the shell
    ("([1]*2+[0])*2", 6, "110110"),  # a group times a count
    ("[1]*3", 3, "111"),  # a count as large as the model's layers
    ("[1]*0+[0,1]", 2, "01"),  # a count of 0 adds nothing
    ("3*[1]", 3, "111"),  # the count first, as Python (and so Megatron) reads it too
    ("2*[0,1]+[1]*1", 5, "01011"),
    ("2*([1]*2+[0])", 6, "110110"),
])
def test_rules_table_moe_layer_freq_forms(pattern, layers, moe):
    assert mp.moe_layer_flags(pattern, layers) == tuple(c == "1" for c in moe)


@pytest.mark.parametrize(("pattern", "layers"), [
    ("0", 3),  # every 0th layer: no such thing
    ("[]", 0), ("[2]*3", 3), ("[True]*3", 3), ("[1]*1.5", 3), ("[1]*-1+[1]*3", 3),
    ("[1]*4", 3),  # a count above the model's layers, refused before it is multiplied out
    ("[1]*99999999999", 3),
    ("[1]*3X", 3), ("X[1]*3", 3),  # a stray character is refused, not dropped
    ("__import__('os').getpid()", 3),  # the pattern is read, never run
    ("[1]*3)", 3),
    ("4*[1]", 3), ("2*3", 6), ("[1]*[1]", 3),  # the count first is bounded the same; a product needs one list
])
def test_rules_table_moe_layer_freq_refuses(pattern, layers):
    with pytest.raises(ValueError, match=r"^moe layer_freq=.*: an int > 0 or a pattern such as '\[0\]\*3\+\[1\]\*75' "
                       r"\(lists of 0/1, \+ and \* a count\)$"):
        mp.moe_layer_flags(pattern, layers)


def test_rules_table_moe_layer_freq_counts_the_layers():
    with pytest.raises(ValueError, match=r"^moe layer_freq='\[0,1,1\]': gives 3 layers, the model has 4$"):
        mp.moe_layer_flags("[0,1,1]", 4)
    with pytest.raises(ValueError, match="gives 4 layers, the model has 3"):
        mp.moe_layer_flags("[1]*2+[1]*2", 3)
    # counted, never built: 78^5 layers named in 30 characters would take gigabytes as a list
    with pytest.raises(ValueError, match=r"gives 2887174368 layers, the model has 78$"):
        mp.moe_layer_flags("((((([1]*78)*78)*78)*78)*78)", 78)


# four layers, every figure distinct; the embedding 1000 (vocab x h), the head 13 (final norm; + 1000 untied)
LAYERS = (mp.LayerParams(expert=800, dense=30), mp.LayerParams(expert=0, dense=50),
          mp.LayerParams(expert=1600, dense=70), mp.LayerParams(expert=2400, dense=110))
TIED = mp.ModelParams(layers=LAYERS, embedding=1000, head=13, tied=True)
UNTIED = mp.ModelParams(layers=LAYERS, embedding=1000, head=13 + 1000, tied=False)
# TP 2, PP 2, EP 2, ETP 2 on 16 GPUs: DP x CP = 16 / (2 x 2) = 4, expert DP = 16 / (2 x 2 x 2) = 2
PAR = Parallelism(tp=2, pp=2, ep=2, etp=2)


def _figures(load) -> tuple[int, int, float, float]:
    return load.stage, load.layers, load.expert_params, load.dense_params


@pytest.mark.parametrize("params", [TIED, UNTIED], ids=["tied", "untied"])
def test_rules_table_stage_loads_pp2(params):
    first, last = mp.stage_loads(params, PAR, 16, offload=False)
    # stage 1, layers 1-2: experts 800 / (EP x ETP = 4); dense (30 + 50 + embedding 1000) / TP 2
    assert _figures(first) == (1, 2, 800 / 4, (30 + 50 + 1000) / 2)
    # stage 2, layers 3-4: experts (1600 + 2400) / 4; dense 70 + 110 + head 13 + the output layer's 1000: the tied
    # copy of the embedding Megatron keeps on the last stage, or the untied output layer itself
    assert _figures(last) == (2, 2, 4000 / 4, (70 + 110 + 13 + 1000) / 2)
    # optimizer: 12 B per parameter, experts over expert DP 2, the rest over DP 4; bf16 weights 2 B, fp32 grads 4 B
    assert first.optimizer_gib == mp.OPTIMIZER_BYTES * (200 / 2 + 540 / 4) / mp.GIB
    assert last.optimizer_gib == mp.OPTIMIZER_BYTES * (1000 / 2 + 596.5 / 4) / mp.GIB
    assert (last.weights_gib, last.grads_gib) == (2 * 1596.5 / mp.GIB, 4 * 1596.5 / mp.GIB)


def test_rules_table_stage_loads_pp1_keeps_no_second_copy():
    """PP 1: the one stage holds the embedding once (tied: the output layer is that same matrix)."""
    (only,) = mp.stage_loads(TIED, dataclasses.replace(PAR, pp=1), 16, offload=False)
    # dense: 30 + 50 + 70 + 110 + embedding 1000 + head 13 = 1273, / TP 2; DP 16 / 2 = 8, expert DP 16 / 4 = 4
    assert _figures(only) == (1, 4, 4800 / 4, 1273 / 2)
    assert only.optimizer_gib == mp.OPTIMIZER_BYTES * (1200 / 4 + 636.5 / 8) / mp.GIB


def test_rules_table_stage_loads_uneven_split_and_offload():
    # --decoder-first-pipeline-num-layers 1: stage 1 is layer 1, stage 2 layers 2-4
    first, last = mp.stage_loads(TIED, dataclasses.replace(PAR, pp_first_layers=1), 16, offload=True)
    assert _figures(first) == (1, 1, 800 / 4, (30 + 1000) / 2)
    assert _figures(last) == (2, 3, 4000 / 4, (50 + 70 + 110 + 13 + 1000) / 2)
    assert first.optimizer_gib == last.optimizer_gib == 0.0  # optimizer states offloaded to the CPU


@pytest.mark.parametrize(("ep", "etp", "expert"), [(4, 1, 1000.0), (1, 4, 1000.0), (2, 1, 2000.0)])
def test_rules_table_stage_loads_experts_shard_over_ep_times_etp(ep, etp, expert):
    """Last stage's experts (1600 + 2400) / (EP x ETP); expert DP = 16 / (EP x ETP x PP 2)."""
    last = mp.stage_loads(TIED, dataclasses.replace(PAR, ep=ep, etp=etp), 16, offload=False)[-1]
    assert last.expert_params == expert
    assert last.optimizer_gib == mp.OPTIMIZER_BYTES * (expert / (16 // (ep * etp * 2)) + 596.5 / 4) / mp.GIB
