"""The four test-case recipes: a base recipe each (values from the reference test case and the seeds)."""

from __future__ import annotations

from rlcheck.recipes.glm import GlmOptions, glm_recipe
from rlcheck.recipes.models import QWEN3_4B, QWEN3_30B_A3B
from rlcheck.recipes.recipe import Parallelism, Placement, Recipe, Reward, Rollout

# Reference test case env (awsome-distributed-training slime, reference/adt-slime.md 2.5).
BASE_ENV = (("PYTHONPATH", "/opt/Megatron-LM"), ("TOKENIZERS_PARALLELISM", "false"), ("NCCL_DEBUG", "WARN"))
# The reference test case's default reward service address (kubernetes/reward-service.yaml).
DEFAULT_RM_URL = "http://slime-reward.default.svc.cluster.local:8000/score"


def qwen3_4b_colocated() -> Recipe:
    """Option A of the reference test case: 2 x 8 GPUs, colocated, in-process reward (seed 000: 3 loops ran)."""
    return Recipe(
        id="qwen3-4b-colocated", model=QWEN3_4B, parallel=Parallelism(),
        # 16 prompts x 8 samples = 128 = global batch 128 x 1 step (the reference env's batch equation).
        rollout=Rollout(num_rollout=100, rollout_batch_size=16, n_samples_per_prompt=8, global_batch_size=128,
                        max_response_len=8192, max_tokens_per_gpu=8192),
        placement=Placement(actor_num_nodes=2, actor_gpus_per_node=8, colocate=True, rollout_gpus_per_engine=1),
        reward=Reward(rm_type="deepscaler"),
        # Lowercase: uvicorn rejects WARN (seed 000 fix #1).
        sglang=(("mem-fraction-static", "0.8"), ("log-level", "warning")),
        hf_checkpoint="/fsx/models/Qwen3-4B", ref_load="/fsx/models/Qwen3-4B_torch_dist",
        save="/fsx/checkpoints/qwen3-4b-grpo", env=BASE_ENV,
    )


def qwen3_30b_a3b_disaggregated() -> Recipe:
    """MoE, disaggregated: 12 training GPUs at TP2/EP2/CP2 + 4 rollout GPUs on 2 x 8 (seed 000's 30B run)."""
    return Recipe(
        id="qwen3-30b-a3b-disaggregated", model=QWEN3_30B_A3B,
        parallel=Parallelism(tp=2, cp=2, ep=2, etp=1, sequence_parallel=True),
        # Seed 000: "Final collected 96 samples from rollout to train": 12 prompts x 8 = 96 = one step of 96,
        # which also divides by DP = 12 / (TP2 x CP2) = 3.
        rollout=Rollout(num_rollout=100, rollout_batch_size=12, n_samples_per_prompt=8, global_batch_size=96,
                        max_response_len=8192, max_tokens_per_gpu=4096),
        placement=Placement(actor_num_nodes=2, actor_gpus_per_node=6, colocate=False, rollout_num_gpus=4,
                            rollout_gpus_per_engine=2),
        reward=Reward(rm_type="deepscaler"),
        # No --sglang-enable-ep-moe: SGLang 0.5.12 removed it and its defaults serve the MoE (seed 000 fix #7).
        sglang=(("mem-fraction-static", "0.85"), ("log-level", "warning")),
        hf_checkpoint="/fsx/models/Qwen3-30B-A3B", ref_load="/fsx/models/Qwen3-30B-A3B_torch_dist",
        save="/fsx/checkpoints/qwen3-30b-a3b-grpo",
        # Megatron asserts it for TP/CP > 1 on Hopper (seed 000 fix #7).
        env=(*BASE_ENV, ("CUDA_DEVICE_MAX_CONNECTIONS", "1")),
        extra_args=("--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1"),
    )


def qwen3_4b_remote_rm(rm_url: str = DEFAULT_RM_URL) -> Recipe:
    """The 4B recipe scored by the remote_rm reward service (seed 000: 250+ POST /score, all 200)."""
    return qwen3_4b_colocated().replace(id="qwen3-4b-remote-rm", reward=Reward(rm_type="remote_rm", rm_url=rm_url))


def glm5_2_gb300() -> Recipe:
    """GLM-5.2 744B-A40B on 16 GB300 nodes x 4 GPUs (seed 004), low-latency sglang config, PD engines."""
    return glm_recipe(GlmOptions())


BASES = {
    "qwen3-4b-colocated": qwen3_4b_colocated,
    "qwen3-30b-a3b-disaggregated": qwen3_30b_a3b_disaggregated,
    "qwen3-4b-remote-rm": qwen3_4b_remote_rm,
    "glm5.2-gb300": glm5_2_gb300,
}
