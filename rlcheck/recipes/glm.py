"""GLM-5.2 744B-A40B on GB300: Miles' recipe rules as typed options (seed 004, radixark/miles#1571)."""

from __future__ import annotations

import dataclasses
from typing import Literal

from rlcheck.recipes.models import GLM5_2, GLM5_2_5LAYER
from rlcheck.recipes.recipe import Optimizer, Parallelism, Placement, Recipe, Reward, Rollout

SglangConfig = Literal["low-latency", "balanced"]
# SLIME's and Miles' --update-weight-buffer-size is type=int, in bytes: "2GiB" exits the parser (Miles' GLM-5.2
# script passes 2 * 1024 ** 3).
UPDATE_WEIGHT_BUFFER_BYTES = 2 * 1024**3
NO_REFERENCE_GRPO = ("--advantage-estimator", "grpo", "--kl-loss-coef", "0.00", "--kl-loss-type", "low_var_kl",
                     "--kl-coef", "0.00", "--entropy-coef", "0.00", "--eps-clip", "0.2", "--eps-clip-high", "0.28")
INDEX_TOPK_FREQ, INDEX_SKIP_OFFSET = 4, 3  # DSA index sharing: computing layers 1, 2, 3, 7, 11, ..., 75


def is_skip_topk_layer(layer_number: int) -> bool:
    """A DSA layer that reuses the previous layer's top-k indices (layer_number is 1-based)."""
    return max(layer_number - INDEX_SKIP_OFFSET, 0) % INDEX_TOPK_FREQ != 0


def stage_sizes(num_layers: int, pp: int, first: int | None, last: int | None) -> list[int]:
    """Layers per pipeline stage as Megatron computes them (megatron-core 0.19.2, TransformerConfig's uneven PP
    checks and transformer_block's layer count): a given first/last stage keeps its size, and the stages not
    given share what is left evenly. So last=18 alone on 78 layers and PP 4 gives 20/20/20/18."""
    if pp == 1:
        return [num_layers]
    if first is None and last is None:
        if num_layers % pp:
            raise ValueError(f"{num_layers} layers do not divide evenly over PP {pp} (no first/last stage size given)")
        return [num_layers // pp] * pp
    given = [n for n in (first, last) if n is not None]
    left, stages = num_layers - sum(given), pp - len(given)
    if bool(left) != bool(stages) or left < 0:
        raise ValueError(f"pp split {first or '-'}/.../{last or '-'} of {num_layers} layers on PP {pp}: "
                         f"{left} layer(s) left for {stages} stage(s) not given")
    if stages and left % stages:
        raise ValueError(f"pp split {first or '-'}/.../{last or '-'} of {num_layers} layers on PP {pp}: the "
                         f"{left} layers left do not divide evenly over the {stages} stage(s) not given")
    even = left // stages if stages else 0
    return [first if first is not None else even, *[even] * (pp - 2), last if last is not None else even]


def stage_starts(num_layers: int, pp: int, first: int | None, last: int | None) -> list[int]:
    """1-based first layer of each pipeline stage, by Megatron's split (stage_sizes)."""
    sizes = stage_sizes(num_layers, pp, first, last)
    return [1 + sum(sizes[:i]) for i in range(len(sizes))]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GlmOptions:
    num_nodes: int = 16
    gpus_per_node: int = 4
    sglang_config: SglangConfig = "low-latency"
    """low-latency: one TP engine per node, EAGLE 5/1/6; balanced: 4-GPU engines with dp-attention + DeepEP."""
    enable_pd: bool = True
    """Prefill/decode disaggregation with dp-attention engines across nodes (Miles' default). Without it a
    bf16 GLM-5.2 engine is at most a node wide (4 GB300 GPUs), and 744B x 2 B / 4 does not fit a GPU."""
    megatron_use_deepep: bool = False
    enable_mtp: bool = False
    blackwell: bool = True
    """B200/GB300: Miles pins the bf16 rollout's MoE runner to triton there (unless balanced)."""

    def __post_init__(self) -> None:
        if self.sglang_config not in ("low-latency", "balanced"):
            raise ValueError(f"sglang_config={self.sglang_config!r}: 'low-latency' or 'balanced'")
        if self.sglang_config == "balanced" and self.enable_pd:
            raise ValueError("sglang_config='balanced': cannot be combined with enable_pd=True (PD disaggregation)")
        if self.sglang_config == "balanced" and self.gpus_per_node % 4:
            raise ValueError(f"sglang_config='balanced': needs gpus_per_node a multiple of 4, got {self.gpus_per_node}")

    @property
    def engine_gpus(self) -> int:
        if self.enable_pd:
            return 16 if self.num_nodes < 16 else 64
        # Never wider than a node: an 8-rank engine on 4-GPU nodes times out in TCPStore (seed 004).
        return 4 if self.sglang_config == "balanced" else min(8, self.gpus_per_node)

    @property
    def mem_fraction_static(self) -> str:
        # Seed 004: 0.75 left a 26,304-token KV pool (84% truncated); 0.85 gave 553,728 tokens on 64 x GB300.
        # The one-node 5-layer smoke keeps 0.70: its pruned weights leave too little for the weight checker.
        return "0.70" if self.num_nodes == 1 else "0.85"


def _parallelism(opts: GlmOptions) -> tuple[Parallelism, int]:
    """(parallelism, layers) for the topology branch Miles has for this node shape (seed 004 table)."""
    if opts.num_nodes == 1:
        return Parallelism(tp=4, sequence_parallel=True, ep=opts.gpus_per_node), GLM5_2_5LAYER.num_layers
    if opts.num_nodes >= 16 and opts.gpus_per_node == 4:
        # TP8 x PP4 x DP2 x EP16: EP=16 is what fits the fp32 optimizer states on GB300 (seed 004).
        return Parallelism(tp=8, pp=4, ep=16, sequence_parallel=True, pp_first_layers=18, pp_last_layers=20), 78
    if opts.num_nodes >= 16:
        return Parallelism(tp=4, pp=8, cp=8, ep=32, sequence_parallel=True, pp_first_layers=14,
                           pp_last_layers=16), 78
    raise ValueError(f"num_nodes={opts.num_nodes} x gpus_per_node={opts.gpus_per_node}: Miles has GLM-5.2 "
                     f"topologies for 1 node (5 layers), 16+ nodes of 4 GPUs (GB300) and 16+ nodes of 8 GPUs")


def _sglang(opts: GlmOptions) -> tuple[tuple[str, str | None], ...]:
    engine = opts.engine_gpus
    balanced = opts.sglang_config == "balanced"
    flags: dict[str, str | None] = {
        "mem-fraction-static": opts.mem_fraction_static, "ep-size": str(engine),
        "router-policy": "consistent_hashing", "kv-cache-dtype": "fp8_e4m3", "attention-backend": "nsa",
        "nsa-decode-backend": "flashmla_kv", "nsa-prefill-backend": "flashmla_sparse", "page-size": "64",
        "max-running-requests": "256" if balanced else "512",
        "chunked-prefill-size": "32768" if balanced else str(2048 * engine), "watchdog-timeout": "3600",
        "log-level": "warning",
    }
    if opts.enable_pd:  # SLIME's PD setting: dp-attention, dense TP 1, dp lm-head
        flags |= {"enable-dp-attention": None, "dp-size": str(engine), "moe-dense-tp-size": "1",
                  "enable-dp-lm-head": None}
    elif balanced:
        flags |= {"enable-dp-attention": None, "dp-size": str(engine)}
    if balanced:
        flags["moe-a2a-backend"] = "deepep"
    # Miles' GLM-5.2 launcher: decode CUDA graphs capped at 8 with PD (wide dp-attention engines), 32 without;
    # on B200/GB300 a bf16 rollout runs the triton MoE runner (its trtllm path breaks the bf16 weight update).
    flags["cuda-graph-max-bs"] = "8" if opts.enable_pd else "32"
    if opts.blackwell and not balanced:
        flags["moe-runner-backend"] = "triton"
    if opts.enable_mtp:
        steps, draft = (1, 2) if balanced else (5, 6)
        flags |= {"speculative-algorithm": "EAGLE", "speculative-num-steps": str(steps),
                  "speculative-eagle-topk": "1", "speculative-num-draft-tokens": str(draft)}
    return tuple(flags.items())


def glm_recipe(opts: GlmOptions = GlmOptions(), recipe_id: str = "glm5.2-gb300") -> Recipe:
    parallel, layers = _parallelism(opts)
    dispatcher = ("--moe-enable-deepep", "--moe-token-dispatcher-type", "flex") if opts.megatron_use_deepep \
        else ("--moe-token-dispatcher-type", "alltoall")
    prefill = ("--prefill-num-servers", "1") if opts.enable_pd else ()
    return Recipe(
        id=recipe_id, model=GLM5_2 if layers == 78 else GLM5_2_5LAYER, parallel=parallel,
        # Miles: rollout 8 prompts x 8 samples, global batch 64, 32k responses, 8192 tokens per GPU.
        rollout=Rollout(num_rollout=3000, rollout_batch_size=8, n_samples_per_prompt=8, global_batch_size=64,
                        max_response_len=32768 if layers == 78 else 100, max_tokens_per_gpu=8192),
        placement=Placement(actor_num_nodes=opts.num_nodes, actor_gpus_per_node=opts.gpus_per_node, colocate=True,
                            rollout_gpus_per_engine=opts.engine_gpus, num_gpus_per_node=opts.gpus_per_node),
        optimizer=Optimizer(cpu_offload=opts.num_nodes == 1), reward=Reward(rm_type="deepscaler"),
        framework="miles", sglang=_sglang(opts), hf_checkpoint="/root/models/GLM-5.2",
        ref_load="/root/models/GLM-5.2_torch_dist",
        # As Miles' script: KL coefficients 0 and no --use-kl-loss, so SLIME/Miles build no reference model
        # (with_ref = kl_coef != 0 or use_kl_loss): on 744B that is a whole second copy of the weights.
        grpo=NO_REFERENCE_GRPO,
        env=(("SGLANG_NSA_FORCE_MLA", "1"), ("INDEXER_ROPE_NEOX_STYLE", "0"), ("NVSHMEM_DISABLE_NCCL", "1")),
        extra_args=(*dispatcher, *prefill, "--recompute-granularity", "full", "--recompute-method", "uniform",
                    "--recompute-num-layers", "1", "--use-tis", "--tis-clip-low", "0.5", "--tis-clip", "2.0",
                    "--update-weight-buffer-size", str(UPDATE_WEIGHT_BUFFER_BYTES)),
    )
