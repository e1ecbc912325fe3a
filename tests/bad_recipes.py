"""Known-bad recipe variants, as data: each one the preflight checks must FAIL with its catalogue id."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from rlcheck.recipes.cases import qwen3_4b_colocated, qwen3_30b_a3b_disaggregated
from rlcheck.recipes.glm import GlmOptions, glm_recipe
from rlcheck.recipes.recipe import Recipe, with_env, with_sglang


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class BadVariant:
    name: str
    failure_id: str
    """The catalogue id a check must report for it."""
    hardware: str
    cluster_gpus: int
    """GPUs of the cluster it is judged against."""
    build: Callable[[], Recipe]
    why: str


def _thirty_b_as_shipped() -> Recipe:
    # The reference test case's Option C keeps ACTOR 2 x 8 and adds 4 rollout GPUs: 20 on a 16-GPU cluster.
    base = qwen3_30b_a3b_disaggregated()
    return base.replace(placement=dataclasses.replace(base.placement, actor_gpus_per_node=8))


def _uppercase_warn() -> Recipe:
    return with_sglang(qwen3_4b_colocated(), {"log-level": "WARN"})  # the reference test case before seed 000 fix #1


def _dead_ep_moe() -> Recipe:
    return with_sglang(qwen3_30b_a3b_disaggregated(), {"enable-ep-moe": None})  # #1129's 30B recipe


def _tp2_no_connections() -> Recipe:
    return with_env(qwen3_30b_a3b_disaggregated(), {"CUDA_DEVICE_MAX_CONNECTIONS": None})


def _split_on_skip_layer() -> Recipe:
    # 20/../18: the second stage starts at layer 21, a DSA layer that reuses indices it does not have.
    base = glm_recipe(GlmOptions())
    return base.replace(parallel=dataclasses.replace(base.parallel, pp_first_layers=20, pp_last_layers=18))


def _batch_mismatch() -> Recipe:
    base = qwen3_4b_colocated()
    return base.replace(rollout=dataclasses.replace(base.rollout, rollout_batch_size=12))  # 96 != 128 x 1


def _engine_wider_than_node() -> Recipe:
    """An 8-GPU engine on 4-GPU GB300 nodes while SLIME is told nodes of 8 (its --num-gpus-per-node default): it
    places the engine as if on one node and the ranks on the second never join."""
    base = glm_recipe(GlmOptions(enable_pd=False))
    return base.replace(placement=dataclasses.replace(base.placement, rollout_gpus_per_engine=8, num_gpus_per_node=8))


BAD_VARIANTS = (
    BadVariant(name="qwen3-30b-a3b-20-gpus-on-16", failure_id="placement-group-oversubscribed", hardware="h200",
               cluster_gpus=16, build=_thirty_b_as_shipped, why="16 actor + 4 rollout GPUs on a 16-GPU cluster"),
    BadVariant(name="sglang-log-level-WARN", failure_id="uvicorn-log-level", hardware="h200", cluster_gpus=16,
               build=_uppercase_warn, why="uppercase WARN reaches uvicorn"),
    BadVariant(name="sglang-enable-ep-moe", failure_id="sglang-dead-flag", hardware="h200", cluster_gpus=16,
               build=_dead_ep_moe, why="--sglang-enable-ep-moe was removed from SGLang"),
    BadVariant(name="tp2-h200-no-cuda-device-max-connections", failure_id="cuda-device-max-connections",
               hardware="h200", cluster_gpus=16, build=_tp2_no_connections, why="TP2/CP2 on Hopper without it"),
    BadVariant(name="glm5.2-split-20-20-20-18", failure_id="pp-split-skip-layer", hardware="gb300", cluster_gpus=64,
               build=_split_on_skip_layer, why="stage 2 starts on skip layer 21"),
    BadVariant(name="qwen3-4b-96-samples-for-128", failure_id="batch-size-mismatch", hardware="h200",
               cluster_gpus=16, build=_batch_mismatch, why="12 x 8 = 96 samples for a global batch of 128"),
    BadVariant(name="glm5.2-engine-8-on-4-gpu-nodes", failure_id="engine-larger-than-node", hardware="gb300",
               cluster_gpus=64, build=_engine_wider_than_node,
               why="an 8-GPU engine on 4-GPU nodes split as nodes of 8"),
)
