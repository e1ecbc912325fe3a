"""Rule table for the model a launch's Megatron flags describe (rlcheck.job.argv_model): Megatron's default for each
flag left out, every flag that leaves the model uncounted, and every flag asking for training or engine memory the
estimates do not count, on both sides of the value that turns it on."""

from __future__ import annotations

import pytest

from rlcheck.job import argv_model
from rlcheck.job.to_recipe import Flags
from rlcheck.recipes.models import GQA, MLA

DIMS = ("--num-layers", "4", "--hidden-size", "1024", "--num-attention-heads", "16", "--vocab-size", "5000",
        "--position-embedding-type", "rope")


def build(*extra: str):
    argv = [*DIMS, *extra]
    return argv_model.from_argv(Flags(argv), [t.partition("=")[0] for t in argv if t.startswith("--")])


# --- Megatron's defaults for what the argv leaves out ----------------------------------------------------------------

@pytest.mark.parametrize(("extra", "ffn", "activation"), [
    ((), 4096, "gelu"),  # 4 x hidden
    (("--swiglu",), 2688, "swiglu"),  # int(4 x 1024 x 2/3 / 64) x 64 = int(42.67) x 64
    (("--ffn-hidden-size", "3000"), 3000, "gelu"),
    (("--swiglu", "--ffn-hidden-size", "3000"), 3000, "swiglu"),
    (("--quick-geglu",), 4096, "swiglu"),  # gated as swiglu is (three matrices); its width rule stays 4h
    (("--squared-relu",), 4096, "gelu"),  # not gated: two matrices
])
def test_ffn_width_and_activation_default_as_megatron(extra, ffn, activation):
    model, why = build(*extra)
    assert why == "" and model is not None
    assert (model.ffn_hidden_size, model.activation, model.ffn_matrices) == (ffn, activation,
                                                                             3 if activation == "swiglu" else 2)


@pytest.mark.parametrize(("extra", "attention"), [
    ((), GQA()),  # plain multi-head attention: as many KV heads as heads
    (("--num-query-groups", "4"), GQA()),  # ignored without --group-query-attention, as Megatron's config does
    (("--group-query-attention",), GQA(num_query_groups=1)),  # Megatron's default group count
    (("--group-query-attention", "--num-query-groups", "4", "--kv-channels", "128", "--qk-layernorm",
      "--add-qkv-bias"), GQA(num_query_groups=4, kv_channels=128, qk_layernorm=True, qkv_bias=True)),
    (("--multi-latent-attention",), MLA(q_lora_rank=None, kv_lora_rank=32, qk_head_dim=128, v_head_dim=128,
                                        qk_pos_emb_head_dim=64)),
    (("--multi-latent-attention", "--q-lora-rank", "1536", "--kv-lora-rank", "512", "--qk-head-dim", "192",
      "--v-head-dim", "256", "--qk-pos-emb-head-dim", "32", "--kv-channels", "192", "--qk-layernorm"),
     MLA(q_lora_rank=1536, kv_lora_rank=512, qk_head_dim=192, v_head_dim=256, qk_pos_emb_head_dim=32,
         kv_channels=192, qk_layernorm=True)),
])
def test_attention_as_megatron_builds_it(extra, attention):
    model, why = build(*extra)
    assert why == "" and model is not None and model.attention == attention


@pytest.mark.parametrize(("extra", "moe"), [
    ((), None),
    (("--num-experts", "0"), None),  # no experts is a dense model
    (("--num-experts", "8"), (8, 2, 4096, "1", 0, False)),  # top-2, the FFN width, every layer
    (("--num-experts", "8", "--moe-router-topk", "4", "--moe-ffn-hidden-size", "512", "--moe-layer-freq",
      "[0]*1+[1]*3", "--moe-shared-expert-intermediate-size", "256", "--moe-router-enable-expert-bias"),
     (8, 4, 512, "[0]*1+[1]*3", 256, True)),
])
def test_experts_as_megatron_places_them(extra, moe):
    model, why = build(*extra)
    assert why == "" and model is not None
    got = model.moe and (model.moe.num_experts, model.moe.router_topk, model.moe.ffn_hidden_size,
                         model.moe.layer_freq, model.moe.shared_expert_ffn, model.moe.expert_bias)
    assert got == moe


def test_the_rest_of_the_model_as_stated():
    model, why = build("--untie-embeddings-and-output-weights", "--disable-bias-linear", "--rotary-base", "1000000")
    assert why == "" and model is not None
    assert (model.name, model.num_layers, model.hidden_size, model.num_attention_heads, model.vocab_size,
            model.untie_embeddings, model.bias_linear, model.rotary_base, model.spec) == (
        "the argv's 4-layer model", 4, 1024, 16, 5000, True, False, 1_000_000, ())
    model, _ = build()
    assert model is not None and (model.untie_embeddings, model.bias_linear, model.rotary_base) == (False, True, 10000)


@pytest.mark.parametrize(("raw", "base"), [("1e6", 1_000_000), ("500000.0", 500_000), ("2.5", 0), ("x", 0),
                                           ("1e400", 0), ("10000", 10000)])
def test_rotary_base_in_any_spelling_never_fails_the_reading(raw, base):
    model, why = build("--rotary-base", raw)
    assert why == "" and model is not None and model.rotary_base == base


# --- what leaves the model uncounted ---------------------------------------------------------------------------------

@pytest.mark.parametrize("absent", ["--num-layers", "--hidden-size", "--num-attention-heads", "--vocab-size"])
def test_a_model_dim_left_out_is_named(absent):
    argv = [t for i, t in enumerate(DIMS) if t != absent and (i == 0 or DIMS[i - 1] != absent)]
    model, why = argv_model.from_argv(Flags(argv), [t for t in argv if t.startswith("--")])
    assert (model, why) == (None, f"the argv does not state {absent}")


@pytest.mark.parametrize(("flag", "why"), [(f, t.why) for f, t in argv_model.MODEL_TERMS.items() if not t.prefix]
                         + [("--dsa-indexer-n-heads", argv_model.MODEL_TERMS["--dsa-"].why),
                            ("--dsv4-hc-mult", argv_model.MODEL_TERMS["--dsv4-"].why)])
def test_every_shape_the_count_does_not_cover_leaves_the_model_unknown(flag, why):
    model, reason = build(flag, "v")
    assert (model, reason) == (None, f"it has a shape rlcheck does not count: {flag} v ({why})")


@pytest.mark.parametrize(("extra", "learned"), [
    (("--position-embedding-type", "learned_absolute"), True),
    (("--position-embedding-type", "rope"), False),
    (("--position-embedding-type", "none"), False),
    (("--position-embedding-type", "learned_absolute", "--use-rotary-position-embeddings"), False),
    (("--position-embedding-type", "learned_absolute", "--no-position-embedding"), False),
])
def test_learned_absolute_positions_are_not_counted(extra, learned):
    argv = [*DIMS[:-2], *extra]
    model, why = argv_model.from_argv(Flags(argv), [t for t in argv if t.startswith("--")])
    assert (model is None) is learned
    assert why == ("it has a shape rlcheck does not count: learned absolute position embeddings (Megatron's default "
                   "--position-embedding-type; give rope or none)" if learned else "")


def test_megatrons_default_position_type_is_learned_absolute():
    argv = list(DIMS[:-2])
    assert argv_model.from_argv(Flags(argv), [t for t in argv if t.startswith("--")])[0] is None


@pytest.mark.parametrize(("extra", "why"), [
    (("--num-experts", "8", "--moe-layer-freq", "[1]*3"),
     "its model flags do not describe a model Megatron builds: moe layer_freq='[1]*3': gives 3 layers, the model "
     "has 4"),
    (("--num-experts", "2", "--moe-router-topk", "4"),
     "its model flags do not describe a model Megatron builds: MoE router_topk=4: at most num_experts=2"),
    (("--group-query-attention", "--num-query-groups", "3"),
     "its model flags do not describe a model Megatron builds: num_query_groups=3: must divide "
     "num_attention_heads=16"),
])
def test_flags_megatron_refuses_leave_the_model_unknown_naming_why(extra, why):
    assert build(*extra) == (None, why)


# --- memory a launch asks for that the estimates do not count --------------------------------------------------------

def asked(table, *argv: str) -> str:
    return argv_model.asked(Flags(list(argv)), [t.partition("=")[0] for t in argv if t.startswith("--")], table)


TRAIN, ROLLOUT = argv_model.TRAIN_TERMS, argv_model.ROLLOUT_TERMS
ADDS, LESS = argv_model.TRAIN_ADDS, argv_model.TRAIN_LESS


@pytest.mark.parametrize(("argv", "table", "flag"), [
    (("--mtp-num-layers", "1"), ADDS, None),  # counted by the stage estimate itself
    (("--lora-rank", "16"), LESS, "--lora-rank"), (("--lora-rank", "0"), LESS, None),
    (("--lora-rank", "16"), TRAIN, None), (("--mtp-num-layers", "1"), TRAIN, None),
    (("--lora-rank", "16"), ROLLOUT, "--lora-rank"), (("--lora-rank", "0"), ROLLOUT, None),
    (("--train-backend", "fsdp"), TRAIN, "--train-backend"), (("--train-backend", "megatron"), TRAIN, None),
    (("--train-backend", "Megatron"), TRAIN, None),
    (("--fp8-format", "e4m3"), ADDS, "--fp8-format"), (("--fp8-format", "none"), ADDS, None),
    (("--fp8-recipe", "mxfp8"), ADDS, "--fp8-recipe"), (("--fp4-format", "e2m1"), ADDS, "--fp4-format"),
    (("--fp4-format", "off"), ADDS, None), (("--fp8-format", "e4m3"), LESS, None),
    (("--num-layers-per-virtual-pipeline-stage", "2"), TRAIN, "--num-layers-per-virtual-pipeline-stage"),
    (("--virtual-pipeline-model-parallel-size", "2"), TRAIN, "--virtual-pipeline-model-parallel-size"),
    (("--virtual-pipeline-model-parallel-size", "1"), TRAIN, None),
    (("--pipeline-model-parallel-layout", "Et|tL"), TRAIN, "--pipeline-model-parallel-layout"),
    (("--account-for-embedding-in-pipeline-split",), TRAIN, "--account-for-embedding-in-pipeline-split"),
    (("--account-for-loss-in-pipeline-split",), TRAIN, "--account-for-loss-in-pipeline-split"),
    (("--sglang-speculative-algorithm", "EAGLE"), ROLLOUT, None),  # the KV pool check counts an MTP draft
    (("--sglang-speculative-draft-model-path", "/d"), ROLLOUT, "--sglang-speculative-draft-model-path"),
    (("--sglang-max-lora-rank", "16"), ROLLOUT, "--sglang-max-lora-rank"),
    (("--sglang-max-lora-rank", "0"), ROLLOUT, None),
    (("--sglang-lora-backend", "triton"), ROLLOUT, "--sglang-lora-backend"),
    (("--sglang-enable-lora",), ROLLOUT, "--sglang-enable-lora"),
    (("--sglang-config", "x.yaml"), ROLLOUT, "--sglang-config"),
    (("--sglang-enable-multimodal",), ROLLOUT, "--sglang-enable-multimodal"),
    (("--sglang-data-parallel-size", "2"), ROLLOUT, "--sglang-data-parallel-size"),
    (("--sglang-data-parallel-size", "1"), ROLLOUT, None),
    (("--sglang-dp-size", "2"), ROLLOUT, "--sglang-dp-size"),
    (("--sglang-dp-size", "2", "--sglang-enable-dp-attention"), ROLLOUT, None),
    (("--sglang-dp-size", "1"), ROLLOUT, None),
    (("--sglang-pp-size", "2"), ROLLOUT, "--sglang-pp-size"), (("--sglang-pp-size", "1"), ROLLOUT, None),
    (("--sglang-pipeline-parallel-size", "2"), ROLLOUT, "--sglang-pipeline-parallel-size"),
    (("--sglang-tp-size", "4", "--rollout-num-gpus-per-engine", "8"), ROLLOUT, "--sglang-tp-size"),
    (("--sglang-tp-size", "8", "--rollout-num-gpus-per-engine", "8"), ROLLOUT, None),
    (("--sglang-tp-size", "1"), ROLLOUT, None),  # one GPU per engine is SLIME's default
    (("--sglang-moe-dense-tp-size", "1", "--rollout-num-gpus-per-engine", "8"), ROLLOUT, None),  # counted
    (("--sglang-disaggregation-mode", "prefill"), ROLLOUT, "--sglang-disaggregation-mode"),
    (("--prefill-num-servers", "1"), ROLLOUT, "--prefill-num-servers"), (("--prefill-num-servers", "0"), ROLLOUT, None),
    (("--window-size", "128,0"), ROLLOUT, "--window-size"),
    (("--mtp-num-layers", "1"), ROLLOUT, None), (("--sglang-speculative-algorithm", "EAGLE"), TRAIN, None),
    (("--sglang-speculative-algorithm", "EAGLE"), ADDS, None),
])
def test_each_uncounted_term_is_asked_for_only_when_on(argv, table, flag):
    got = asked(table, *argv)
    if flag is None:
        assert got == ""
        return
    value = Flags(list(argv)).str(flag, "") or ""
    entry = table.get(flag) or next(t for f, t in table.items() if t.prefix and flag.startswith(f))
    assert got.startswith(f"{flag} {value}".strip() + f" ({entry.why})")


def test_uncounted_terms_are_named_in_argv_order_once_each():
    got = asked(ROLLOUT, "--sglang-lora-paths", "a", "--sglang-config", "c.yaml", "--sglang-lora-backend", "triton",
                "--sglang-config", "d.yaml")
    lora = ROLLOUT["--sglang-lora-"].why
    assert got == (f"--sglang-lora-paths a ({lora}); --sglang-config d.yaml ({ROLLOUT['--sglang-config'].why}); "
                   f"--sglang-lora-backend triton ({lora})")
    assert asked(TRAIN, "--colocate", "--lr", "1e-6") == ""


@pytest.mark.parametrize(("extra", "adds", "less"), [
    ((), "", ""),
    (("--mtp-num-layers", "1"), "", ""),  # counted by the stage estimate itself
    (("--lora-rank", "8"), "", f"--lora-rank 8 ({LESS['--lora-rank'].why})"),
    (("--lora-rank", "8", "--fp8-format", "e4m3", "--recompute-granularity", "full"),
     f"--fp8-format e4m3 ({ADDS['--fp8-format'].why})", f"--lora-rank 8 ({LESS['--lora-rank'].why})"),
    (("--lora-rank", "0", "--mtp-num-layers", "0"), "", ""),
])
def test_train_bounds_read_a_recipes_extra_args(extra, adds, less):
    """A Recipe's extra_args (the flags its fields do not render, `--flag value` pairs) give the stage check its
    bounds."""
    assert argv_model.train_bounds(extra) == (adds, less)



def test_megatrons_swiglu_width_rounds_down_to_64():
    """4 x 4096 x 2/3 = 10922.7, / 64 = 170.7: 170 x 64 = 10880 (a rounding over 65 would give 168 x 64)."""
    argv = ["--num-layers", "2", "--hidden-size", "4096", "--num-attention-heads", "32", "--vocab-size", "10",
            "--position-embedding-type", "rope", "--swiglu"]
    model, why = argv_model.from_argv(Flags(argv), [t for t in argv if t.startswith("--")])
    assert why == "" and model is not None and model.ffn_hidden_size == 10880


@pytest.mark.parametrize(("flag", "field"), [("--num-layers", "num_layers"), ("--hidden-size", "hidden_size"),
                                             ("--num-attention-heads", "num_attention_heads"),
                                             ("--vocab-size", "vocab_size")])
def test_a_zero_dim_is_a_model_megatron_does_not_build(flag, field):
    argv = [*DIMS]
    argv[argv.index(flag) + 1] = "0"
    model, why = argv_model.from_argv(Flags(argv), [t for t in argv if t.startswith("--")])
    assert model is None
    assert why.startswith("its model flags do not describe a model Megatron builds: ")
    assert f"{field}=0: must be > 0" in why


@pytest.mark.parametrize(("flag", "why"), [
    ("--kv-lora-rank", "MLA kv_lora_rank=0: must be > 0"), ("--qk-head-dim", "MLA qk_head_dim=0: must be > 0"),
    ("--v-head-dim", "MLA v_head_dim=0: must be > 0"),
    ("--qk-pos-emb-head-dim", "MLA qk_pos_emb_head_dim=0: must be > 0"),
])
def test_a_zero_mla_rank_is_refused_not_taken_for_the_default(flag, why):
    assert build("--multi-latent-attention", flag, "0") == (
        None, f"its model flags do not describe a model Megatron builds: {why}")


def test_zero_query_groups_and_zero_topk_are_refused():
    assert build("--group-query-attention", "--num-query-groups", "0") == (
        None, "its model flags do not describe a model Megatron builds: GQA num_query_groups=0: must be > 0 or None")
    assert build("--num-experts", "4", "--moe-router-topk", "0") == (
        None, "its model flags do not describe a model Megatron builds: MoE router_topk=0: must be > 0")


def test_every_shape_reason_is_named_together():
    argv = [*DIMS[:-2], "--spec", "m", "f"]
    model, why = argv_model.from_argv(Flags(argv), [t for t in argv if t.startswith("--")])
    assert (model, why) == (None, "it has a shape rlcheck does not count: --spec m (a layer spec of the launch's own "
                                  "builds its layers); learned absolute position embeddings (Megatron's default "
                                  "--position-embedding-type; give rope or none)")


@pytest.mark.parametrize("off", ["0", "none", "false", "False", "OFF", " off "])
def test_a_term_turned_off_in_any_spelling_is_not_asked_for(off):
    assert asked(ADDS, "--fp8-format", off) == ""
    assert asked(LESS, "--lora-rank", off) == ""


def test_train_bounds_read_a_flag_written_with_its_value():
    assert argv_model.train_bounds(["--lora-rank=8"]) == ("", f"--lora-rank 8 ({LESS['--lora-rank'].why})")


@pytest.mark.parametrize(("argv", "applies"), [
    (("--sglang-tp-size", "0", "--rollout-num-gpus-per-engine", "0"), False),
    (("--sglang-tp-size", "1", "--rollout-num-gpus-per-engine", "0"), True),
])
def test_an_engine_of_zero_gpus_is_read_as_stated(argv, applies):
    assert bool(asked(ROLLOUT, *argv)) is applies


def test_no_experts_flag_is_a_dense_model_and_experts_read_as_given():
    model, _ = build()
    assert model is not None and model.moe is None
    model, _ = build("--num-experts", "3", "--moe-router-topk", "1")
    assert model is not None and model.moe is not None and model.moe.num_experts == 3
