"""Model architectures as typed data (values from the upstream SLIME / Miles model files).

Every quantity the memory model needs is a field; `ModelArch.argv()` renders the Megatron flags
from them (in the order the upstream scripts write them), and nothing reads argv back.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

Activation = Literal["swiglu", "gelu"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GQA:
    """Grouped-query (or multi-head) attention."""

    num_query_groups: int | None = None
    """KV heads (--num-query-groups); None is plain multi-head attention (as many KV heads as heads)."""
    kv_channels: int | None = None
    """Head dim (--kv-channels); None means hidden / heads."""
    qk_layernorm: bool = False
    """RMSNorm on q and k per head (--qk-layernorm): 2 x head dim parameters per layer."""
    qkv_bias: bool = False
    """Bias on the QKV projection (--add-qkv-bias)."""

    def __post_init__(self) -> None:
        for name in ("num_query_groups", "kv_channels"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"GQA {name}={value}: must be > 0 or None")

    def argv(self) -> list[str]:
        out = [] if self.num_query_groups is None else ["--group-query-attention", "--num-query-groups",
                                                         str(self.num_query_groups)]
        out += [] if self.kv_channels is None else ["--kv-channels", str(self.kv_channels)]
        return out + ["--qk-layernorm"] * self.qk_layernorm + ["--add-qkv-bias"] * self.qkv_bias


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class DsaIndexer:
    """DeepSeek sparse attention's lightning indexer (GLM-5.2 config.json index_n_heads / index_head_dim)."""

    heads: int = 32
    head_dim: int = 128
    """SGLang 0.5.12 asserts 128 for its NSA backend."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class MLA:
    """Multi-latent attention (Megatron's flag names; its defaults where a model leaves one out)."""

    q_lora_rank: int | None = None
    """None: q is projected directly from the hidden state."""
    kv_lora_rank: int = 32
    qk_head_dim: int = 128
    v_head_dim: int = 128
    qk_pos_emb_head_dim: int = 64
    """Rotary part of q and k (the decoupled rope key is cached beside the latent)."""
    kv_channels: int | None = None
    qk_layernorm: bool = False
    indexer: DsaIndexer | None = None
    """GLM-5.2's DSA indexer (its layer spec adds it; it renders no flag of its own)."""

    def __post_init__(self) -> None:
        for name in ("kv_lora_rank", "qk_head_dim", "v_head_dim", "qk_pos_emb_head_dim"):
            if getattr(self, name) <= 0:
                raise ValueError(f"MLA {name}={getattr(self, name)}: must be > 0")

    def argv(self) -> list[str]:
        out = ["--multi-latent-attention"]
        out += [] if self.q_lora_rank is None else ["--q-lora-rank", str(self.q_lora_rank)]
        out += ["--kv-lora-rank", str(self.kv_lora_rank), "--qk-head-dim", str(self.qk_head_dim),
                "--v-head-dim", str(self.v_head_dim)]
        out += [] if self.kv_channels is None else ["--kv-channels", str(self.kv_channels)]
        return out + ["--qk-pos-emb-head-dim", str(self.qk_pos_emb_head_dim)] + ["--qk-layernorm"] * self.qk_layernorm


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class MoE:
    num_experts: int
    router_topk: int
    ffn_hidden_size: int
    """Per-expert FFN width (--moe-ffn-hidden-size)."""
    layer_freq: str
    """Megatron's --moe-layer-freq pattern, e.g. '[1]*48' or '[0]*3+[1]*75' (a glob if left unquoted)."""
    shared_expert_ffn: int = 0
    """Shared expert width (--moe-shared-expert-intermediate-size); 0 is none."""
    expert_bias: bool = False
    """Per-expert router bias (--moe-router-enable-expert-bias): num_experts parameters per MoE layer."""
    extra: tuple[str, ...] = ()
    """Router / dispatcher flags that change no memory, argv tokens (rendered before the expert-bias flag)."""
    extra_after_bias: tuple[str, ...] = ()
    """Router flags rendered after the expert-bias flag, keeping the upstream script's order."""

    def __post_init__(self) -> None:
        for name in ("num_experts", "router_topk", "ffn_hidden_size"):
            if getattr(self, name) <= 0:
                raise ValueError(f"MoE {name}={getattr(self, name)}: must be > 0")
        if self.router_topk > self.num_experts:
            raise ValueError(f"MoE router_topk={self.router_topk}: at most num_experts={self.num_experts}")

    def argv(self) -> list[str]:
        out = ["--num-experts", str(self.num_experts), "--moe-router-topk", str(self.router_topk),
               "--moe-ffn-hidden-size", str(self.ffn_hidden_size), "--moe-layer-freq", self.layer_freq]
        out += ["--moe-shared-expert-intermediate-size", str(self.shared_expert_ffn)] if self.shared_expert_ffn else []
        return out + [*self.extra] + ["--moe-router-enable-expert-bias"] * self.expert_bias + [*self.extra_after_bias]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ModelArch:
    name: str
    num_layers: int
    hidden_size: int
    ffn_hidden_size: int
    """Dense FFN width."""
    num_attention_heads: int
    vocab_size: int
    rotary_base: int
    attention: GQA | MLA
    norm_epsilon: str | None = None
    """--norm-epsilon as the script writes it; None leaves Megatron's default."""
    rotary_percent: str | None = None
    untie_embeddings: bool = False
    """A separate output layer (--untie-embeddings-and-output-weights): another vocab x hidden parameters."""
    extra: tuple[str, ...] = ()
    """Flags that change no memory (position embedding off, vocab padding, experimental), argv tokens."""
    activation: Activation = "swiglu"
    """swiglu: gated FFN, 3 matrices of hidden x ffn; gelu: 2."""
    bias_linear: bool = False
    """Biases on the linear layers; the shipped models disable them (--disable-bias-linear)."""
    moe: MoE | None = None
    spec: tuple[str, ...] = ()
    """--spec module function, for models with their own layer spec (GLM-5.2's DSA)."""
    params_b: float = 0.0
    """Total parameters in billions, as the model card states (a cross-check of the memory model's count)."""

    def __post_init__(self) -> None:
        for field in ("num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "vocab_size"):
            if getattr(self, field) <= 0:
                raise ValueError(f"{field}={getattr(self, field)}: must be > 0")
        if self.activation not in ("swiglu", "gelu"):
            raise ValueError(f"activation={self.activation!r}: 'swiglu' or 'gelu'")
        if isinstance(self.attention, GQA):
            groups = self.attention.num_query_groups
            if groups is not None and self.num_attention_heads % groups:
                raise ValueError(f"num_query_groups={groups}: must divide num_attention_heads="
                                 f"{self.num_attention_heads}")
            if self.attention.kv_channels is None and self.hidden_size % self.num_attention_heads:
                raise ValueError(f"hidden_size={self.hidden_size}: must divide by num_attention_heads="
                                 f"{self.num_attention_heads}")

    @property
    def kv_heads(self) -> int:
        """KV heads of GQA / MHA (MLA caches one latent per token instead)."""
        groups = self.attention.num_query_groups if isinstance(self.attention, GQA) else None
        return groups or self.num_attention_heads

    @property
    def head_dim(self) -> int:
        """GQA head dim: --kv-channels, else hidden / heads."""
        return self.attention.kv_channels or self.hidden_size // self.num_attention_heads

    @property
    def ffn_matrices(self) -> int:
        return 3 if self.activation == "swiglu" else 2

    def argv(self) -> list[str]:
        """Megatron model args, one token per element (never a shell string)."""
        out = [*self.spec, "--num-layers", str(self.num_layers), "--hidden-size", str(self.hidden_size),
               "--ffn-hidden-size", str(self.ffn_hidden_size), "--num-attention-heads", str(self.num_attention_heads),
               *self.attention.argv()]
        out += [] if self.norm_epsilon is None else ["--norm-epsilon", self.norm_epsilon]
        out += [] if self.rotary_percent is None else ["--rotary-percent", self.rotary_percent]
        out += ["--untie-embeddings-and-output-weights"] * self.untie_embeddings + [*self.extra]
        out += ["--disable-bias-linear"] * (not self.bias_linear) + ["--swiglu"] * (self.activation == "swiglu")
        out += ["--normalization", "RMSNorm", "--position-embedding-type", "rope", "--vocab-size",
                str(self.vocab_size), "--rotary-base", str(self.rotary_base)]
        return out + (self.moe.argv() if self.moe else [])


# SLIME scripts/models/qwen3-4B.sh
QWEN3_4B = ModelArch(
    name="Qwen3-4B", num_layers=36, hidden_size=2560, ffn_hidden_size=9728, num_attention_heads=32,
    vocab_size=151936, rotary_base=1_000_000, params_b=4.0, norm_epsilon="1e-6",
    attention=GQA(num_query_groups=8, kv_channels=128, qk_layernorm=True),
)
# SLIME scripts/models/qwen3-30B-A3B.sh (48 MoE layers, 128 experts, top-8)
QWEN3_30B_A3B = ModelArch(
    name="Qwen3-30B-A3B", num_layers=48, hidden_size=2048, ffn_hidden_size=6144, num_attention_heads=32,
    vocab_size=151936, rotary_base=1_000_000, params_b=30.5, norm_epsilon="1e-6", rotary_percent="1.0",
    untie_embeddings=True, attention=GQA(num_query_groups=4, kv_channels=128, qk_layernorm=True),
    moe=MoE(num_experts=128, router_topk=8, ffn_hidden_size=768, layer_freq="[1]*48",
            extra=("--moe-router-score-function", "softmax", "--moe-token-dispatcher-type", "alltoall",
                   "--moe-grouped-gemm", "--moe-token-drop-policy", "probs", "--moe-router-dtype", "fp32",
                   "--moe-permute-fusion", "--moe-aux-loss-coeff", "0")),
)
_GLM_MLA = MLA(q_lora_rank=2048, kv_lora_rank=512, qk_head_dim=192, v_head_dim=256, kv_channels=192,
               qk_pos_emb_head_dim=64, qk_layernorm=True, indexer=DsaIndexer(heads=32, head_dim=128))


def glm5_2(num_layers: int = 78) -> ModelArch:
    """GLM-5.2 744B-A40B (Miles glm5 model files; 3 dense + MoE layers, DSA attention, rotary base 8e6).

    num_layers=5 is the 5-layer smoke variant (3 dense + 2 MoE) Miles runs on one 4-GPU node.
    """
    return _glm5("GLM-5.2", 8_000_000, num_layers)


def glm5(num_layers: int = 78) -> ModelArch:
    """GLM-5 744B-A40B (SLIME scripts/models/glm5-744B-A40B.sh, Miles scripts/models/glm5-744B-A40B.py): GLM-5.2's
    architecture with rotary base 1e6, the only flag the two model files differ in (its checkpoint shares no DSA
    indices: config.json has no index_topk_freq)."""
    return _glm5("GLM-5", 1_000_000, num_layers)


def _glm5(family: str, rotary_base: int, num_layers: int) -> ModelArch:
    if num_layers < 4:
        raise ValueError(f"num_layers={num_layers}: {family} has 3 dense layers, so at least 4")
    name = family if num_layers == 78 else f"{family}_{num_layers}layer"
    return ModelArch(
        name=name, num_layers=num_layers, hidden_size=6144, ffn_hidden_size=12288, num_attention_heads=64,
        vocab_size=154880, rotary_base=rotary_base, attention=_GLM_MLA, params_b=744.0 * num_layers / 78,
        untie_embeddings=True,
        extra=("--no-position-embedding", "--make-vocab-size-divisible-by", "16", "--enable-experimental"),
        spec=("--spec", "miles_plugins.models.glm5.glm5", "get_glm5_spec"),
        moe=MoE(num_experts=256, router_topk=8, ffn_hidden_size=2048, layer_freq=f"[0]*3+[1]*{num_layers - 3}",
                shared_expert_ffn=2048, expert_bias=True,
                extra=("--moe-grouped-gemm", "--moe-permute-fusion", "--moe-router-score-function", "sigmoid",
                       "--moe-router-pre-softmax"),
                extra_after_bias=("--moe-router-bias-update-rate", "0", "--moe-router-load-balancing-type",
                                  "seq_aux_loss", "--moe-router-topk-scaling-factor", "2.5",
                                  "--moe-aux-loss-coeff", "0", "--moe-router-dtype", "fp32")),
    )


GLM5_2 = glm5_2()
GLM5_2_5LAYER = glm5_2(5)
GLM5 = glm5()
MODELS = {m.name: m for m in (QWEN3_4B, QWEN3_30B_A3B, GLM5_2, GLM5_2_5LAYER, GLM5)}
