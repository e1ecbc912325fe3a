"""The model a launch's Megatron flags describe, and the memory terms a launch asks for that rlcheck does not model.

A launch of a model that is not one of rlcheck's known architectures still states its whole shape in the argv
Megatron parses (SLIME's and Miles' model files are lists of those flags): layers, hidden size, FFN width, heads,
GQA or MLA, experts and where they sit. `from_argv` builds the ModelArch the memory checks count from them, with
Megatron's own defaults (megatron/training/arguments.py and TransformerConfig) for every flag left out:
  --ffn-hidden-size    4 x hidden, or with --swiglu int(4 x hidden x 2/3 / 64) x 64
  --kv-channels        hidden / heads
  --num-query-groups   heads unless --group-query-attention (then 1 unless given)
  MLA (--multi-latent-attention): --kv-lora-rank 32, --qk-head-dim 128, --v-head-dim 128, --qk-pos-emb-head-dim 64,
                       no --q-lora-rank
  MoE (--num-experts): --moe-ffn-hidden-size the FFN width, --moe-router-topk 2, --moe-layer-freq 1 (every layer)
  activation           --swiglu or --quick-geglu (gated) three FFN matrices, else two
A shape the count does not cover is never estimated from what is left: a layer spec or model provider of the
launch's own, a vision tower, gated attention, latent MoE, learned absolute position embeddings
(Megatron's default type) and the architecture flags of experimental variants make the model unknown, naming them.

Terms smaller than 0.1% of the parameters are not counted: linear biases (Megatron's default without
--disable-bias-linear), extra norms (--post-self-attn-layernorm, --post-mlp-layernorm, LayerNorm's bias), the
shared-expert gate, attention sinks' per-head scalars, vocabulary padding.

Beside the model, a launch can ask for memory neither estimate counts. What only adds to the training estimate
(TRAIN_ADDS: fp8 training) makes it a lower bound, and LoRA (TRAIN_LESS: a frozen base) an upper one:
the stage check judges within those bounds (rlcheck.probes.recipe.memory). What it neither counts nor bounds
(TRAIN_TERMS: another training backend, a virtual or explicit pipeline layout) and what the KV pool estimate leaves
out (ROLLOUT_TERMS: a draft model of its own, LoRA pools, disaggregated prefill, SGLang arguments from a file) make the
estimate they would change UNKNOWN, naming the flag, so no estimate undershoots what the launch really asks for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from rlcheck.job.argv_flags import Flags, is_option
from rlcheck.probes.recipe.memory_params import moe_layer_flags
from rlcheck.recipes.models import GQA, MLA, ModelArch, MoE

Applies = Callable[[str, Flags], bool]
"""(the flag's value, '' for a flag with none; the whole argv) -> the term is asked for."""


def _always(value: str, flags: Flags) -> bool:
    return True


def _not_off(value: str, flags: Flags) -> bool:
    """A size or switch that 0, none or false turns off (`--lora-rank 0` trains no adapter)."""
    return value.strip().lower() not in ("0", "none", "false", "off")


def _not(*defaults: str) -> Applies:
    """Applies unless the value is one of the defaults (the value Megatron or SLIME uses when the flag is absent)."""
    return lambda value, flags: value.strip().lower() not in defaults


def _over_one(value: str, flags: Flags) -> bool:
    return not value.strip().isdigit() or int(value) > 1


def _tp_not_engine(value: str, flags: Flags) -> bool:
    return value.strip() != str(_int(flags, "--rollout-num-gpus-per-engine", 1))


def _dp_without_dp_attention(value: str, flags: Flags) -> bool:
    return _over_one(value, flags) and not flags.has("--sglang-enable-dp-attention")


@dataclasses.dataclass(frozen=True, slots=True)
class Term:
    """A flag asking for memory an estimate does not count, and why."""

    why: str
    applies: Applies = _always
    prefix: bool = False
    """The entry's flag is a prefix: every flag starting with it (an experimental variant's family of flags)."""


MODEL_TERMS: Mapping[str, Term] = {
    "--spec": Term("a layer spec of the launch's own builds its layers"),
    "--custom-model-provider-path": Term("a model provider of the launch's own builds the model"),
    "--heterogeneous-layers-config-path": Term("layers of different shapes, from a config file"),
    "--heterogeneous-layers-config-encoded-json": Term("layers of different shapes"),
    "--multimodal-keys": Term("a vision-language model: the vision tower is not in the argv"),
    "--moe-latent-size": Term("MoE experts in a latent space: their projections are not counted"),
    "--experimental-attention-variant": Term("an experimental attention variant"),
    "--attention-output-gate": Term("a gate on the attention output: its projection is not counted"),
    "--use-gated-attention": Term("gated attention: its gate projection is not counted"),
    "--dsa-": Term("DeepSeek sparse attention's indexer (only GLM-5.2's own spec is counted)", prefix=True),
    "--dsv4-": Term("DeepSeek-V4's attention and hyper-connections", prefix=True),
}
"""Flags that give the model a shape the parameter count does not cover: with any of them the model is unknown."""

TRAIN_ADDS: Mapping[str, Term] = {
    "--fp8-format": Term("fp8 training: fp8 copies and scaling state beside the bf16 weights", _not_off),
    "--fp8-recipe": Term("fp8 training: fp8 copies and scaling state beside the bf16 weights"),
    "--fp4-format": Term("fp4 training: fp4 copies and scaling state beside the bf16 weights", _not_off),
}
"""Flags asking for training memory on top of what the stage estimate counts: the estimate is a lower bound."""

TRAIN_LESS: Mapping[str, Term] = {
    "--lora-rank": Term("LoRA: the base weights are frozen, with no gradients or optimizer state", _not_off),
}
"""Flags that train less than the stage estimate counts (the adapters' own share is far below what the frozen base
saves): the estimate is an upper bound, and the frozen weights with activations and buffers a lower one."""

TRAIN_TERMS: Mapping[str, Term] = {
    "--train-backend": Term("a training backend other than Megatron (the estimate is Megatron's)", _not("megatron")),
    "--num-layers-per-virtual-pipeline-stage": Term("a virtual pipeline: more micro-batches in flight"),
    "--virtual-pipeline-model-parallel-size": Term("a virtual pipeline: more micro-batches in flight", _over_one),
    "--pipeline-model-parallel-layout": Term("an explicit pipeline layout: stages of other sizes"),
    "--account-for-embedding-in-pipeline-split": Term("a pipeline split that counts the embedding as a layer"),
    "--account-for-loss-in-pipeline-split": Term("a pipeline split that counts the loss as a layer"),
}
"""Flags that change training memory in a way the stage estimate neither counts nor bounds."""

ROLLOUT_TERMS: Mapping[str, Term] = {
    "--sglang-speculative-draft-model-path": Term("a draft model of its own: its weights and KV pool"),
    "--sglang-max-lora-rank": Term("SGLang's LoRA adapter pool", _not_off),
    "--sglang-lora-": Term("SGLang's LoRA adapter pool", prefix=True),
    "--sglang-enable-lora": Term("SGLang's LoRA adapter pool"),
    "--lora-rank": Term("LoRA adapters served by SGLang: its adapter pool", _not_off),
    "--sglang-config": Term("SGLang arguments from a file the launch does not show"),
    "--sglang-enable-multimodal": Term("a vision tower in the engine"),
    "--sglang-data-parallel-size": Term("data-parallel replicas inside one engine", _over_one),
    "--sglang-dp-size": Term("data-parallel replicas without dp-attention", _dp_without_dp_attention),
    "--sglang-pp-size": Term("pipeline stages inside one engine", _over_one),
    "--sglang-pipeline-parallel-size": Term("pipeline stages inside one engine", _over_one),
    "--sglang-tp-size": Term("a TP size other than the engine's GPUs", _tp_not_engine),
    "--sglang-disaggregation-mode": Term("disaggregated prefill and decode servers size their pools apart"),
    "--prefill-num-servers": Term("disaggregated prefill and decode servers size their pools apart", _not_off),
    "--window-size": Term("sliding-window layers: SGLang sizes their KV pool apart"),
}
"""Flags asking for rollout-engine memory the KV pool estimate does not count."""


def asked(flags: Flags, names: list[str], terms: Mapping[str, Term]) -> str:
    """'' or the flags of names (the argv's options, in order) that ask for a term of terms, each with why."""
    out: list[str] = []
    for name in names:
        entry = terms.get(name) or next((t for f, t in terms.items() if t.prefix and name.startswith(f)), None)
        value = flags.str(name) or ""
        if entry is not None and entry.applies(value, flags):
            shown = f"{name} {value}".strip()
            out.append(f"{shown} ({entry.why})")
    return "; ".join(dict.fromkeys(out))


def train_bounds(argv: Sequence[str]) -> tuple[str, str]:
    """(the terms of TRAIN_ADDS, of TRAIN_LESS) an argv asks for, each '' or the flags with why (argv: a Recipe's
    extra_args, the flags its typed fields do not render)."""
    flags = Flags(argv)
    names = [token.partition("=")[0] for token in argv if is_option(token)]
    return asked(flags, names, TRAIN_ADDS), asked(flags, names, TRAIN_LESS)


def _positions(flags: Flags) -> str:
    """'' unless the model adds learned absolute position embeddings (Megatron's default type), which are not
    counted."""
    if flags.has("--no-position-embedding") or flags.has("--use-rotary-position-embeddings"):
        return ""
    kind = flags.str("--position-embedding-type", "learned_absolute")
    return ("learned absolute position embeddings (Megatron's default --position-embedding-type; give rope or none)"
            if kind == "learned_absolute" else "")


def _int(flags: Flags, flag: str, default: int) -> int:
    """The flag's integer as argparse gives it (0 included: the model then refuses it), else Megatron's default."""
    value = flags.int(flag)
    return default if value is None else value


def _attention(flags: Flags) -> GQA | MLA:
    if flags.has("--multi-latent-attention"):
        return MLA(q_lora_rank=flags.int("--q-lora-rank"), kv_lora_rank=_int(flags, "--kv-lora-rank", 32),
                   qk_head_dim=_int(flags, "--qk-head-dim", 128), v_head_dim=_int(flags, "--v-head-dim", 128),
                   qk_pos_emb_head_dim=_int(flags, "--qk-pos-emb-head-dim", 64),
                   kv_channels=flags.int("--kv-channels"), qk_layernorm=flags.has("--qk-layernorm"))
    groups = _int(flags, "--num-query-groups", 1) if flags.has("--group-query-attention") else None
    return GQA(num_query_groups=groups, kv_channels=flags.int("--kv-channels"),
               qk_layernorm=flags.has("--qk-layernorm"), qkv_bias=flags.has("--add-qkv-bias"))


def _rotary_base(flags: Flags) -> int:
    """--rotary-base as a whole number (scripts write 1e6 or 1000000.0 too); it changes no memory, so a value that is
    not one reads as 0 rather than failing the reading."""
    raw = flags.str("--rotary-base") or "10000"
    try:
        value = float(raw)
    except ValueError:
        return 0
    return int(value) if value.is_integer() else 0


def from_argv(flags: Flags, names: list[str]) -> tuple[ModelArch | None, str]:
    """The architecture the argv states (names: its options, in order), or None and why it cannot be counted."""
    needed = ("--num-layers", "--hidden-size", "--num-attention-heads", "--vocab-size")
    absent = [f for f in needed if flags.int(f) is None]
    if absent:
        return None, f"the argv does not state {', '.join(absent)}"
    shape = "; ".join(x for x in (asked(flags, names, MODEL_TERMS), _positions(flags)) if x)
    if shape:
        return None, f"it has a shape rlcheck does not count: {shape}"
    layers, hidden = flags.int("--num-layers") or 0, flags.int("--hidden-size") or 0
    swiglu = flags.has("--swiglu")
    ffn = flags.int("--ffn-hidden-size") or (int(4 * hidden * 2 / 3 / 64) * 64 if swiglu else 4 * hidden)
    try:
        moe = None
        experts = flags.int("--num-experts") or 0
        if experts:
            freq = flags.str("--moe-layer-freq") or "1"
            moe_layer_flags(freq, layers)  # Megatron refuses a pattern of another length, or none it can read
            moe = MoE(num_experts=experts, router_topk=_int(flags, "--moe-router-topk", 2),
                      ffn_hidden_size=flags.int("--moe-ffn-hidden-size") or ffn, layer_freq=freq,
                      shared_expert_ffn=flags.int("--moe-shared-expert-intermediate-size") or 0,
                      expert_bias=flags.has("--moe-router-enable-expert-bias"))
        model = ModelArch(name=f"the argv's {layers}-layer model", num_layers=layers, hidden_size=hidden,
                          ffn_hidden_size=ffn, num_attention_heads=flags.int("--num-attention-heads") or 0,
                          vocab_size=flags.int("--vocab-size") or 0, rotary_base=_rotary_base(flags),
                          attention=_attention(flags),
                          untie_embeddings=flags.has("--untie-embeddings-and-output-weights"),
                          # Megatron gates the FFN for --swiglu and --quick-geglu alike: three matrices
                          activation="swiglu" if swiglu or flags.has("--quick-geglu") else "gelu",
                          bias_linear=not flags.has("--disable-bias-linear"),
                          moe=moe)
    except ValueError as exc:
        return None, f"its model flags do not describe a model Megatron builds: {exc}"
    return model, ""
