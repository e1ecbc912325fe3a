"""Parameter counts, per-stage loads and KV-cache bytes per token, from a ModelArch's typed fields.

Per decoder layer (h = hidden, H = heads, norms of size h or the LoRA rank counted):
- GQA: h x (H + 2G) x d (QKV) + H x d x h (out), G = KV heads, d = head dim.
- MLA (Megatron names): q down h x q_rank, q up q_rank x H x (qk + rope), kv down h x (kv_rank + rope),
  kv up kv_rank x H x (qk + v), out H x v x h.
- DSA indexer (GLM-5.2's spec): q_rank x 32 x 128 + h x 128 + h x 32 (+ a LayerNorm of 128).
- FFN: (3 for swiglu else 2) x h x ffn; an MoE layer has E such experts of width moe_ffn (the expert
  part), a shared expert, a router E x h (+ E expert biases).
Outside the layers: the embedding vocab x h, the output layer vocab x h when untied, the final norm.
Vocab padding (--make-vocab-size-divisible-by) and MTP layers are not counted.
"""

from __future__ import annotations

import ast
import dataclasses

from rlcheck.recipes.glm import stage_starts
from rlcheck.recipes.models import MLA, ModelArch
from rlcheck.recipes.recipe import Parallelism

# SGLang 0.5.12 NSA pool: fp8 index keys plus one fp32 scale (4 B) per 128 values.
NSA_QUANT_BLOCK = 128
GIB = 2**30
OPTIMIZER_BYTES = 12
"""fp32 master weight + Adam m + v, per parameter (Megatron's distributed optimizer shards them)."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LayerParams:
    expert: int
    """Routed-expert parameters: Megatron shards them over EP x ETP."""
    dense: int
    """Everything else in the layer (attention, dense FFN or shared expert, router, norms): sharded over TP."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ModelParams:
    layers: tuple[LayerParams, ...]
    embedding: int
    """Input embedding, vocab x hidden (first pipeline stage)."""
    head: int
    """Final norm plus the untied output layer (last pipeline stage)."""
    tied: bool
    """Output layer shares the embedding; with PP > 1 Megatron keeps a copy on the last stage."""

    @property
    def total(self) -> int:
        return sum(la.expert + la.dense for la in self.layers) + self.embedding + self.head

    @property
    def expert(self) -> int:
        return sum(la.expert for la in self.layers)


def flag_value(tokens: list[str], flag: str) -> str | None:
    """The token after the last `flag` in an argv list (argparse keeps the last), or None (for recipe extra args,
    never the model)."""
    at = [i for i, token in enumerate(tokens[:-1]) if token == flag]
    return tokens[at[-1] + 1] if at else None


def is_dsa(model: ModelArch) -> bool:
    """GLM-5.2's DeepSeek sparse attention adds an indexer and its cached keys."""
    return isinstance(model.attention, MLA) and model.attention.indexer is not None


def moe_layer_flags(pattern: str, num_layers: int) -> tuple[bool, ...]:
    """Megatron --moe-layer-freq (moe_freq_type): an int k > 0 (layer i is MoE when i % k == 0) or the Python list
    expression Megatron evaluates: lists of 0 (dense) / 1 (MoE) joined by +, each list or parenthesised group
    optionally times a count (either side), e.g. '[0]*3+[1]*75', '([1]*3+[0])*2', '3*[1]',
    '[0,1,1]' (spaces and shell quotes dropped)."""
    text = pattern.replace(" ", "").strip("'\"")
    if text.isdigit() and int(text) > 0:
        flags = [i % int(text) == 0 for i in range(num_layers)]
    else:
        try:
            node = ast.parse(text, mode="eval").body
            length = _freq_length(node, num_layers)
        except (SyntaxError, ValueError):
            raise ValueError(f"moe layer_freq={pattern!r}: an int > 0 or a pattern such as '[0]*3+[1]*75' "
                             "(lists of 0/1, + and * a count)") from None
        # measured before it is built: a nested product of small counts names millions of layers in a few bytes
        if length != num_layers:
            raise ValueError(f"moe layer_freq={pattern!r}: gives {length} layers, the model has {num_layers}")
        flags = _freq_list(node)
    return tuple(flags)


def _int(node: ast.expr) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _count_and_group(node: ast.BinOp) -> tuple[int | None, ast.expr]:
    """A product's count and the group it repeats: list * count, or count * list."""
    return (_int(node.right), node.left) if _int(node.left) is None else (_int(node.left), node.right)


def _freq_length(node: ast.expr, num_layers: int) -> int:
    """The layers a list pattern names, without building it; ValueError for anything but lists of 0/1, + and a
    count from 0 to the model's layers."""
    if isinstance(node, ast.List):
        bits = [_int(e) for e in node.elts]
        if bits and all(b in (0, 1) for b in bits):
            return len(bits)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _freq_length(node.left, num_layers) + _freq_length(node.right, num_layers)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        count, group = _count_and_group(node)
        if count is not None and 0 <= count <= num_layers:
            return _freq_length(group, num_layers) * count
    raise ValueError("not a list pattern")


def _freq_list(node: ast.expr) -> list[bool]:
    """The flags of a pattern _freq_length accepted (so every list here is at most the model's layers long)."""
    if isinstance(node, ast.List):
        return [_int(e) == 1 for e in node.elts]
    assert isinstance(node, ast.BinOp)
    if isinstance(node.op, ast.Add):
        return _freq_list(node.left) + _freq_list(node.right)
    count, group = _count_and_group(node)
    return _freq_list(group) * (count or 0)


def _mla_params(model: ModelArch, mla: MLA) -> int:
    h, heads = model.hidden_size, model.num_attention_heads
    q_rank, kv_rank, rope = mla.q_lora_rank or 0, mla.kv_lora_rank, mla.qk_pos_emb_head_dim
    qk, v = mla.qk_head_dim, mla.v_head_dim
    q = h * q_rank + q_rank + q_rank * heads * (qk + rope) if q_rank else h * heads * (qk + rope)
    kv = h * (kv_rank + rope) + kv_rank + kv_rank * heads * (qk + v)
    indexer = 0
    if mla.indexer is not None:
        n, d = mla.indexer.heads, mla.indexer.head_dim
        indexer = (q_rank or h) * n * d + h * d + 2 * d + h * n
    return h + q + kv + heads * v * h + indexer


def attention_params(model: ModelArch) -> int:
    """One layer's attention, its input norm and (DSA) indexer."""
    if isinstance(model.attention, MLA):
        return _mla_params(model, model.attention)
    h, heads, groups, d = model.hidden_size, model.num_attention_heads, model.kv_heads, model.head_dim
    qk_norm = 2 * d if model.attention.qk_layernorm else 0
    bias = (heads + 2 * groups) * d if model.attention.qkv_bias else 0
    return h + h * (heads + 2 * groups) * d + heads * d * h + qk_norm + bias


def count_params(model: ModelArch) -> ModelParams:
    """Per-layer expert and dense parameter counts, embedding and head (see the module docstring)."""
    h, gate = model.hidden_size, model.ffn_matrices
    attention = attention_params(model)
    dense_layer = LayerParams(expert=0, dense=attention + gate * h * model.ffn_hidden_size + h)
    layers = [dense_layer] * model.num_layers
    if model.moe:
        moe = model.moe
        router = moe.num_experts * h + (moe.num_experts if moe.expert_bias else 0)
        moe_layer = LayerParams(expert=moe.num_experts * gate * h * moe.ffn_hidden_size,
                                dense=attention + gate * h * moe.shared_expert_ffn + router + h)
        flags = moe_layer_flags(moe.layer_freq, model.num_layers)
        layers = [moe_layer if is_moe else dense_layer for is_moe in flags]
    tied = not model.untie_embeddings
    vocab = model.vocab_size * h
    return ModelParams(layers=tuple(layers), embedding=vocab, head=h + (0 if tied else vocab), tied=tied)


def mtp_layer(params: ModelParams, hidden: int, expert_ranks: int, dense_ranks: int) -> tuple[float, float]:
    """(expert, other) parameters per rank of one MTP layer as rlcheck bounds it: the model's largest layer on that
    split (experts over expert_ranks, the rest over dense_ranks) plus its projection of [embedding; hidden]
    (2h x h) and two norms. Megatron's MTP layers in training and SGLang's MTP draft both take this shape."""
    largest = max(params.layers, key=lambda la: la.expert / expert_ranks + la.dense / dense_ranks)
    return largest.expert / expert_ranks, (largest.dense + 2 * hidden * hidden + 2 * hidden) / dense_ranks


def kv_bytes_per_token(model: ModelArch, kv_cache_dtype: str | None, attention_tp: int) -> int:
    """KV-cache bytes one token costs on one GPU, all layers, as SGLang 0.5.12 sizes its pool.

    MLA keeps one latent (kv_rank + rope) per layer on every attention-TP rank (not split by TP);
    DSA adds fp8 index keys with their scales. GQA splits its K and V heads over the attention TP
    (at least one head per rank). 'auto' means the model dtype, bf16 here.
    """
    element = 1 if (kv_cache_dtype or "auto").startswith("fp8") else 2
    if isinstance(model.attention, MLA):
        mla = model.attention
        per_layer = (mla.kv_lora_rank + mla.qk_pos_emb_head_dim) * element
        if mla.indexer is not None:
            d = mla.indexer.head_dim
            per_layer += d + d // NSA_QUANT_BLOCK * 4
        return per_layer * model.num_layers
    return max(1, model.kv_heads // attention_tp) * 2 * model.head_dim * element * model.num_layers


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StageLoad:
    stage: int
    """1-based pipeline stage."""
    layers: int
    expert_params: float
    """Routed-expert parameters per rank."""
    dense_params: float
    """All other parameters per rank (attention, shared experts, router, norms, embedding, output)."""
    weights_gib: float
    grads_gib: float
    optimizer_gib: float
    """fp32 master weights and Adam moments on the GPU (0 with optimizer CPU offload)."""

    @property
    def params(self) -> float:
        return self.expert_params + self.dense_params

    @property
    def total_gib(self) -> float:
        return self.weights_gib + self.grads_gib + self.optimizer_gib


def stage_loads(params: ModelParams, par: Parallelism, world: int, offload: bool) -> tuple[StageLoad, ...]:
    """Per-rank parameters and static bytes of each pipeline stage (formula: rlcheck.probes.recipe.memory)."""
    starts = stage_starts(len(params.layers), par.pp, par.pp_first_layers, par.pp_last_layers)
    ends = [*starts[1:], len(params.layers) + 1]
    dp_cp, expert_dp = world // (par.tp * par.pp), world // (par.ep * par.etp * par.pp)
    loads = []
    for i, (start, end) in enumerate(zip(starts, ends, strict=True)):
        layers = params.layers[start - 1:end - 1]
        expert = sum(la.expert for la in layers) / (par.ep * par.etp)
        own = sum(la.dense for la in layers) + (params.embedding if i == 0 else 0)
        if i == par.pp - 1:  # a tied output layer is a second copy of the embedding when PP > 1
            own += params.head + (params.embedding if params.tied and par.pp > 1 else 0)
        dense = own / par.tp
        optimizer = 0.0 if offload else OPTIMIZER_BYTES * (expert / expert_dp + dense / dp_cp)
        loads.append(StageLoad(stage=i + 1, layers=len(layers), expert_params=expert, dense_params=dense,
                               weights_gib=2 * (expert + dense) / GIB, grads_gib=4 * (expert + dense) / GIB,
                               optimizer_gib=optimizer / GIB))
    return tuple(loads)
