"""Rule table for the four shipped test-case recipes (rlcheck.recipes.cases): each one's batch equation, layout,
placement, reward and engine flags as the reference test case and the seeds ran them; the whole argv of each is
frozen by tests/test_render.py's snapshots."""

from __future__ import annotations

import pytest

from rlcheck.recipes import cases
from rlcheck.recipes.models import QWEN3_4B, QWEN3_30B_A3B
from rlcheck.recipes.recipe import Parallelism, Placement, Reward, Rollout

BASE_ENV = (("PYTHONPATH", "/opt/Megatron-LM"), ("TOKENIZERS_PARALLELISM", "false"), ("NCCL_DEBUG", "WARN"))


def test_the_reference_env_and_reward_service():
    assert cases.BASE_ENV == BASE_ENV
    assert cases.DEFAULT_RM_URL == "http://slime-reward.default.svc.cluster.local:8000/score"
    assert list(cases.BASES) == ["qwen3-4b-colocated", "qwen3-30b-a3b-disaggregated", "qwen3-4b-remote-rm",
                                 "glm5.2-gb300"]
    assert all(build().id == recipe_id for recipe_id, build in cases.BASES.items())


def test_option_a_qwen3_4b_colocated():
    r = cases.qwen3_4b_colocated()
    assert (r.model, r.parallel, r.reward, r.env) == (QWEN3_4B, Parallelism(), Reward(rm_type="deepscaler"), BASE_ENV)
    assert r.rollout == Rollout(num_rollout=100, rollout_batch_size=16, n_samples_per_prompt=8, global_batch_size=128,
                                max_response_len=8192, max_tokens_per_gpu=8192)
    assert r.placement == Placement(actor_num_nodes=2, actor_gpus_per_node=8, colocate=True,
                                    rollout_gpus_per_engine=1)
    assert r.sglang == (("mem-fraction-static", "0.8"), ("log-level", "warning"))
    assert (r.hf_checkpoint, r.ref_load, r.save, r.extra_args) == (
        "/fsx/models/Qwen3-4B", "/fsx/models/Qwen3-4B_torch_dist", "/fsx/checkpoints/qwen3-4b-grpo", ())


def test_the_30b_moe_disaggregated():
    r = cases.qwen3_30b_a3b_disaggregated()
    assert (r.model, r.reward) == (QWEN3_30B_A3B, Reward(rm_type="deepscaler"))
    assert r.parallel == Parallelism(tp=2, cp=2, ep=2, etp=1, sequence_parallel=True)
    assert r.rollout == Rollout(num_rollout=100, rollout_batch_size=12, n_samples_per_prompt=8, global_batch_size=96,
                                max_response_len=8192, max_tokens_per_gpu=4096)
    assert r.placement == Placement(actor_num_nodes=2, actor_gpus_per_node=6, colocate=False, rollout_num_gpus=4,
                                    rollout_gpus_per_engine=2)
    assert r.sglang == (("mem-fraction-static", "0.85"), ("log-level", "warning"))
    assert r.env == (*BASE_ENV, ("CUDA_DEVICE_MAX_CONNECTIONS", "1"))
    assert (r.hf_checkpoint, r.ref_load, r.save) == (
        "/fsx/models/Qwen3-30B-A3B", "/fsx/models/Qwen3-30B-A3B_torch_dist", "/fsx/checkpoints/qwen3-30b-a3b-grpo")
    assert r.extra_args == ("--recompute-granularity", "full", "--recompute-method", "uniform",
                            "--recompute-num-layers", "1")


@pytest.mark.parametrize(("url", "expected"), [((), cases.DEFAULT_RM_URL), (("http://rm:1/s",), "http://rm:1/s")])
def test_the_remote_rm_recipe_is_option_a_scored_by_the_service(url, expected):
    r = cases.qwen3_4b_remote_rm(*url)
    assert r == cases.qwen3_4b_colocated().replace(id="qwen3-4b-remote-rm",
                                                   reward=Reward(rm_type="remote_rm", rm_url=expected))


def test_the_glm_recipe_is_the_default_glm_options():
    from rlcheck.recipes.glm import GlmOptions, glm_recipe
    assert cases.glm5_2_gb300() == glm_recipe(GlmOptions())


@pytest.mark.parametrize("recipe_id", list(cases.BASES))
def test_each_shipped_recipe_keeps_its_batch_equation_and_layout(recipe_id):
    r = cases.BASES[recipe_id]()
    assert r.rollout.rollout_batch_size * r.rollout.n_samples_per_prompt == \
        r.rollout.global_batch_size * r.rollout.num_steps_per_rollout
    assert r.data_parallel > 0 and r.rollout.global_batch_size % r.data_parallel == 0
