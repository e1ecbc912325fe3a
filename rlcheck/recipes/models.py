"""Model architectures as typed data (values from the upstream SLIME / Miles model files)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class MoE:
    num_experts: int
    router_topk: int
    ffn_hidden_size: int
    """Per-expert FFN width (--moe-ffn-hidden-size)."""
    layer_freq: str
    """Megatron's --moe-layer-freq pattern, e.g. '[1]*48' or '[0]*3+[1]*75' (a glob if left unquoted)."""
    extra: tuple[str, ...] = ()
    """Router / dispatcher flags, argv tokens."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ModelArch:
    name: str
    num_layers: int
    hidden_size: int
    ffn_hidden_size: int
    num_attention_heads: int
    vocab_size: int
    rotary_base: int
    attention: tuple[str, ...]
    """Attention flags (GQA groups and kv-channels, or MLA ranks), argv tokens."""
    common: tuple[str, ...] = ("--disable-bias-linear", "--swiglu", "--normalization", "RMSNorm",
                               "--position-embedding-type", "rope")
    moe: MoE | None = None
    spec: tuple[str, ...] = ()
    """--spec module function, for models with their own layer spec (GLM-5.2's DSA)."""
    params_b: float = 0.0
    """Total parameters in billions (for memory estimates)."""

    def __post_init__(self) -> None:
        for field in ("num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "vocab_size"):
            if getattr(self, field) <= 0:
                raise ValueError(f"{field}={getattr(self, field)}: must be > 0")
        if self.hidden_size % self.num_attention_heads and "--multi-latent-attention" not in self.attention:
            raise ValueError(f"hidden_size={self.hidden_size}: must divide by num_attention_heads="
                             f"{self.num_attention_heads}")

    def argv(self) -> list[str]:
        """Megatron model args, one token per element (never a shell string)."""
        out = [*self.spec, "--num-layers", str(self.num_layers), "--hidden-size", str(self.hidden_size),
               "--ffn-hidden-size", str(self.ffn_hidden_size), "--num-attention-heads", str(self.num_attention_heads),
               *self.attention, *self.common, "--vocab-size", str(self.vocab_size), "--rotary-base",
               str(self.rotary_base)]
        if self.moe:
            out += ["--num-experts", str(self.moe.num_experts), "--moe-router-topk", str(self.moe.router_topk),
                    "--moe-ffn-hidden-size", str(self.moe.ffn_hidden_size), "--moe-layer-freq", self.moe.layer_freq,
                    *self.moe.extra]
        return out


# SLIME scripts/models/qwen3-4B.sh
QWEN3_4B = ModelArch(
    name="Qwen3-4B", num_layers=36, hidden_size=2560, ffn_hidden_size=9728, num_attention_heads=32,
    vocab_size=151936, rotary_base=1_000_000, params_b=4.0,
    attention=("--group-query-attention", "--num-query-groups", "8", "--kv-channels", "128", "--qk-layernorm",
               "--norm-epsilon", "1e-6"),
)
# SLIME scripts/models/qwen3-30B-A3B.sh (48 MoE layers, 128 experts, top-8)
QWEN3_30B_A3B = ModelArch(
    name="Qwen3-30B-A3B", num_layers=48, hidden_size=2048, ffn_hidden_size=6144, num_attention_heads=32,
    vocab_size=151936, rotary_base=1_000_000, params_b=30.5,
    attention=("--group-query-attention", "--num-query-groups", "4", "--kv-channels", "128", "--qk-layernorm",
               "--norm-epsilon", "1e-6", "--rotary-percent", "1.0", "--untie-embeddings-and-output-weights"),
    moe=MoE(num_experts=128, router_topk=8, ffn_hidden_size=768, layer_freq="[1]*48",
            extra=("--moe-router-score-function", "softmax", "--moe-token-dispatcher-type", "alltoall",
                   "--moe-grouped-gemm", "--moe-token-drop-policy", "probs", "--moe-router-dtype", "fp32",
                   "--moe-permute-fusion", "--moe-aux-loss-coeff", "0")),
)
_GLM_MOE_EXTRA = ("--moe-shared-expert-intermediate-size", "2048", "--moe-grouped-gemm", "--moe-permute-fusion",
                  "--moe-router-score-function", "sigmoid", "--moe-router-pre-softmax",
                  "--moe-router-enable-expert-bias", "--moe-router-bias-update-rate", "0",
                  "--moe-router-load-balancing-type", "seq_aux_loss", "--moe-router-topk-scaling-factor", "2.5",
                  "--moe-aux-loss-coeff", "0", "--moe-router-dtype", "fp32")
_GLM_MLA = ("--multi-latent-attention", "--q-lora-rank", "2048", "--kv-lora-rank", "512", "--qk-head-dim", "192",
            "--v-head-dim", "256", "--kv-channels", "192", "--qk-pos-emb-head-dim", "64", "--qk-layernorm",
            "--untie-embeddings-and-output-weights", "--no-position-embedding", "--make-vocab-size-divisible-by",
            "16", "--enable-experimental")


def glm5_2(num_layers: int = 78) -> ModelArch:
    """GLM-5.2 744B-A40B (Miles glm5 model files; 3 dense + MoE layers, DSA attention, rotary base 8e6).

    num_layers=5 is the 5-layer smoke variant (3 dense + 2 MoE) Miles runs on one 4-GPU node.
    """
    if num_layers < 4:
        raise ValueError(f"num_layers={num_layers}: GLM-5.2 has 3 dense layers, so at least 4")
    name = "GLM-5.2" if num_layers == 78 else f"GLM-5.2_{num_layers}layer"
    return ModelArch(
        name=name, num_layers=num_layers, hidden_size=6144, ffn_hidden_size=12288, num_attention_heads=64,
        vocab_size=154880, rotary_base=8_000_000, attention=_GLM_MLA, params_b=744.0 * num_layers / 78,
        spec=("--spec", "miles_plugins.models.glm5.glm5", "get_glm5_spec"),
        moe=MoE(num_experts=256, router_topk=8, ffn_hidden_size=2048, layer_freq=f"[0]*3+[1]*{num_layers - 3}",
                extra=_GLM_MOE_EXTRA),
    )


GLM5_2 = glm5_2()
GLM5_2_5LAYER = glm5_2(5)
MODELS = {m.name: m for m in (QWEN3_4B, QWEN3_30B_A3B, GLM5_2, GLM5_2_5LAYER)}
