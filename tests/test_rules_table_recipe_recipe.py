"""Rule table for the typed Recipe (rlcheck.recipes.recipe): every impossible value refused naming the field (both
sides of each bound), the GPU counts the checks read (actor, rollout, placement group, DP), and the whole argv
train.py receives for each branch of the rendering (sequence parallel, uneven PP, dynamic or fixed micro batches,
the CPU optimizer, colocated or not, the reward service, SGLang flags with and without a value)."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.recipes import recipe as rmod
from rlcheck.recipes.models import QWEN3_4B
from rlcheck.recipes.recipe import Optimizer, Parallelism, Placement, Recipe, Reward, Rollout

ROLLOUT = Rollout(num_rollout=3, rollout_batch_size=4, n_samples_per_prompt=2, global_batch_size=8)
PLACEMENT = Placement(actor_num_nodes=1, actor_gpus_per_node=4, colocate=True)
BASE = Recipe(id="r", model=QWEN3_4B, rollout=ROLLOUT, parallel=Parallelism(), placement=PLACEMENT)


def _message(build) -> str:
    with pytest.raises(ValueError) as err:
        build()
    return str(err.value)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: dataclasses.replace(ROLLOUT, num_rollout=0), "num_rollout=0: must be > 0"),
    (lambda: dataclasses.replace(ROLLOUT, rollout_batch_size=-1), "rollout_batch_size=-1: must be > 0"),
    (lambda: dataclasses.replace(ROLLOUT, n_samples_per_prompt=0), "n_samples_per_prompt=0: must be > 0"),
    (lambda: dataclasses.replace(ROLLOUT, global_batch_size=0), "global_batch_size=0: must be > 0"),
    (lambda: dataclasses.replace(ROLLOUT, num_steps_per_rollout=0), "num_steps_per_rollout=0: must be > 0"),
    (lambda: dataclasses.replace(ROLLOUT, max_response_len=0), "max_response_len=0: must be > 0"),
    (lambda: dataclasses.replace(ROLLOUT, temperature=0.0), "temperature=0.0: must be > 0"),
    (lambda: dataclasses.replace(ROLLOUT, max_tokens_per_gpu=0), "max_tokens_per_gpu=0: must be > 0"),
    (lambda: dataclasses.replace(ROLLOUT, micro_batch_size=0), "micro_batch_size=0: must be > 0"),
    (lambda: Parallelism(tp=0), "tp=0: must be > 0"),
    (lambda: Parallelism(pp=0), "pp=0: must be > 0"),
    (lambda: Parallelism(cp=0), "cp=0: must be > 0"),
    (lambda: Parallelism(ep=0), "ep=0: must be > 0"),
    (lambda: Parallelism(etp=0), "etp=0: must be > 0"),
    (lambda: Parallelism(pp=2, pp_first_layers=0), "pp_first_layers=0: must be > 0"),
    (lambda: Parallelism(pp=2, pp_last_layers=0), "pp_last_layers=0: must be > 0"),
    (lambda: Parallelism(sequence_parallel=True), "sequence_parallel=True: needs tp > 1"),
    (lambda: dataclasses.replace(PLACEMENT, actor_num_nodes=0), "actor_num_nodes=0: must be > 0"),
    (lambda: dataclasses.replace(PLACEMENT, actor_gpus_per_node=0), "actor_gpus_per_node=0: must be > 0"),
    (lambda: dataclasses.replace(PLACEMENT, rollout_gpus_per_engine=0), "rollout_gpus_per_engine=0: must be > 0"),
    (lambda: dataclasses.replace(PLACEMENT, num_gpus_per_node=0), "num_gpus_per_node=0: must be > 0"),
    (lambda: dataclasses.replace(PLACEMENT, colocate=False),
     "rollout_num_gpus=None: a disaggregated recipe needs rollout GPUs"),
    (lambda: dataclasses.replace(PLACEMENT, colocate=False, rollout_num_gpus=0),
     "rollout_num_gpus=0: a disaggregated recipe needs rollout GPUs"),
    (lambda: Optimizer(lr=0.0), "lr=0.0: must be > 0"),
    (lambda: Optimizer(adam_beta1=1.0), "adam_beta1=1.0, adam_beta2=0.98: each in [0, 1)"),
    (lambda: Optimizer(adam_beta1=-0.1), "adam_beta1=-0.1, adam_beta2=0.98: each in [0, 1)"),
    (lambda: Optimizer(adam_beta2=1.0), "adam_beta1=0.9, adam_beta2=1.0: each in [0, 1)"),
    (lambda: Optimizer(adam_beta2=-0.01), "adam_beta1=0.9, adam_beta2=-0.01: each in [0, 1)"),
    (lambda: Reward(rm_type="bleu"), "rm_type='bleu': one of remote_rm, deepscaler, dapo, math, f1, gpqa, ifbench, "
                                     "random"),
    (lambda: Reward(rm_type="remote_rm"), "rm_url=None: rm_type=remote_rm needs the reward service URL"),
    (lambda: Reward(rm_type="remote_rm", rm_url=""), "rm_url=None: rm_type=remote_rm needs the reward service URL"),
    (lambda: Reward(rm_url="ftp://rm/score"), "rm_url='ftp://rm/score': an http:// or https:// URL"),
    (lambda: Reward(rm_type="remote_rm", rm_url="rm:8000"), "rm_url='rm:8000': an http:// or https:// URL"),
    (lambda: BASE.replace(id=""), "id='': required"),
    (lambda: BASE.replace(save_interval=0), "save_interval=0: must be > 0"),
    (lambda: BASE.replace(framework="verl"), "framework='verl': 'slime' or 'miles'"),
    (lambda: BASE.replace(sglang=(("--mem-fraction-static", "0.8"),)),
     "sglang: '--mem-fraction-static': a flag name without dashes or prefix, e.g. 'mem-fraction-static'"),
    (lambda: BASE.replace(sglang=(("sglang-log-level", "info"),)),
     "sglang: 'sglang-log-level': a flag name without dashes or prefix, e.g. 'mem-fraction-static'"),
    (lambda: BASE.replace(sglang=(("Log-Level", "info"),)),
     "sglang: 'Log-Level': a flag name without dashes or prefix, e.g. 'mem-fraction-static'"),
    (lambda: BASE.replace(sglang=(("log-level", "info"), ("tp", "2"), ("log-level", "debug"), ("tp", "1"))),
     "sglang: duplicate flags ['log-level', 'tp']"),
    (lambda: BASE.replace(sglang=(("page-size", "64"), ("tp", "2"), ("tp", "1"))), "sglang: duplicate flags ['tp']"),
    (lambda: BASE.replace(env=(("A", "1"), ("HF_TOKEN", "hf_x"))),
     "env HF_TOKEN: looks like a secret; list its name in secret_env so the workers read it from their own "
     "environment (never argv or runtime-env JSON)"),
])
def test_an_impossible_value_is_refused_naming_the_field(build, message):
    assert _message(build) == message


@pytest.mark.parametrize("build", [
    lambda: dataclasses.replace(ROLLOUT, max_tokens_per_gpu=None, temperature=1e-9),
    lambda: Parallelism(tp=2, sequence_parallel=True, pp=2, pp_first_layers=1, pp_last_layers=1),
    lambda: dataclasses.replace(PLACEMENT, colocate=False, rollout_num_gpus=1),
    lambda: Optimizer(adam_beta1=0.0, adam_beta2=0.999),
    lambda: Optimizer(adam_beta1=0.999, adam_beta2=0.0),
    lambda: Reward(rm_type="remote_rm", rm_url="https://rm/score"),
    lambda: Reward(rm_type="random", rm_url="http://rm"),
    lambda: BASE.replace(framework="miles", save_interval=1, sglang=(("log-level", "info"), ("x1", None)),
                         env=(("TOKENIZERS_PARALLELISM", "false"),)),
])
def test_a_value_on_the_edge_of_each_bound_is_kept(build):
    assert build() is not None


@pytest.mark.parametrize(("placement", "actor", "rollout", "group"), [
    (Placement(actor_num_nodes=2, actor_gpus_per_node=8, colocate=True), 16, 16, 16),
    (Placement(actor_num_nodes=2, actor_gpus_per_node=6, colocate=False, rollout_num_gpus=4), 12, 4, 16),
    (Placement(actor_num_nodes=1, actor_gpus_per_node=2, colocate=True, rollout_num_gpus=6), 2, 2, 2),
    (Placement(actor_num_nodes=3, actor_gpus_per_node=1, colocate=False, rollout_num_gpus=5), 3, 5, 8),
])
def test_the_gpus_a_placement_asks_ray_for(placement, actor, rollout, group):
    assert (placement.actor_gpus, placement.rollout_gpus, placement.placement_group_gpus) == (actor, rollout, group)


@pytest.mark.parametrize(("gpus", "tp", "pp", "cp", "dp"), [
    (16, 1, 1, 1, 16), (16, 2, 2, 2, 2), (12, 2, 1, 2, 3), (12, 8, 1, 1, 0), (12, 1, 1, 5, 0), (16, 16, 1, 1, 1),
])
def test_data_parallel_is_the_world_over_tp_pp_cp_or_0_when_it_does_not_divide(gpus, tp, pp, cp, dp):
    recipe = BASE.replace(parallel=Parallelism(tp=tp, pp=pp, cp=cp),
                          placement=Placement(actor_num_nodes=1, actor_gpus_per_node=gpus, colocate=True))
    assert (recipe.world_size, recipe.data_parallel) == (gpus, dp)


def test_sglang_values_and_env_read_back():
    recipe = BASE.replace(sglang=(("log-level", "info"), ("enable-dp-attention", None)), env=(("A", "1"), ("B", "2")))
    assert (recipe.sglang_value("log-level"), recipe.sglang_value("enable-dp-attention"),
            recipe.sglang_value("tp")) == ("info", None, None)
    assert recipe.env_dict() == {"A": "1", "B": "2"} and recipe.runtime_env() == {"env_vars": {"A": "1", "B": "2"}}


def test_env_updates_set_and_remove():
    recipe = rmod.with_env(BASE.replace(env=(("A", "1"), ("B", "2"))), {"A": None, "C": "3", "B": "4", "Z": None})
    assert recipe.env == (("B", "4"), ("C", "3"))


def test_sglang_updates_set_and_remove_in_order():
    recipe = BASE.replace(sglang=(("a", "1"), ("b", None), ("c", "3")))
    assert rmod.with_sglang(recipe, {"b": "2", "d": None}, remove=("c",)).sglang == (("a", "1"), ("b", "2"),
                                                                                      ("d", None))
    assert rmod.with_sglang(recipe, {}).sglang == recipe.sglang


HEAD = ["python3", "train.py", *QWEN3_4B.argv(),
        "--hf-checkpoint", "/fsx/models/model", "--ref-load", "/fsx/models/model_torch_dist",
        "--load", "/fsx/checkpoints/run", "--save", "/fsx/checkpoints/run", "--save-interval", "20",
        "--prompt-data", "/fsx/data/dapo-math-17k.jsonl", "--input-key", "prompt", "--label-key", "label",
        "--apply-chat-template", "--rollout-shuffle", "--num-rollout", "3", "--rollout-batch-size", "4",
        "--n-samples-per-prompt", "2", "--global-batch-size", "8", "--num-steps-per-rollout", "1",
        "--rollout-max-response-len", "8192", "--rollout-temperature", "1.0"]
GRPO = ["--advantage-estimator", "grpo", "--use-kl-loss", "--kl-loss-coef", "0.00", "--kl-loss-type", "low_var_kl",
        "--entropy-coef", "0.00", "--eps-clip", "0.2", "--eps-clip-high", "0.28"]
ADAM = ["--optimizer", "adam", "--lr", "1e-06", "--lr-decay-style", "constant", "--weight-decay", "0.1",
        "--adam-beta1", "0.9", "--adam-beta2", "0.98"]
DROPOUT = ["--attention-dropout", "0.0", "--hidden-dropout", "0.0"]


def _layout(tp=1, pp=1, cp=1, ep=1, etp=1) -> list[str]:
    return ["--tensor-model-parallel-size", str(tp), "--pipeline-model-parallel-size", str(pp),
            "--context-parallel-size", str(cp), "--expert-model-parallel-size", str(ep),
            "--expert-tensor-parallel-size", str(etp)]


def test_the_argv_of_a_plain_colocated_recipe():
    assert BASE.argv() == [*HEAD, *_layout(), "--use-dynamic-batch-size", "--max-tokens-per-gpu", "8192", *GRPO,
                           *ADAM, *DROPOUT, "--actor-num-nodes", "1", "--actor-num-gpus-per-node", "4",
                           "--num-gpus-per-node", "8", "--rollout-num-gpus-per-engine", "1", "--colocate",
                           "--rm-type", "deepscaler"]


def test_the_argv_of_every_other_branch():
    recipe = BASE.replace(
        parallel=Parallelism(tp=2, pp=4, cp=2, ep=2, etp=2, sequence_parallel=True, pp_first_layers=8,
                             pp_last_layers=10),
        rollout=dataclasses.replace(ROLLOUT, max_tokens_per_gpu=None, micro_batch_size=2),
        placement=Placement(actor_num_nodes=2, actor_gpus_per_node=4, colocate=False, rollout_num_gpus=3,
                            rollout_gpus_per_engine=3, num_gpus_per_node=4),
        optimizer=Optimizer(lr=2e-5, lr_decay_style="cosine", weight_decay=0.0, adam_beta1=0.8, adam_beta2=0.95,
                            cpu_offload=True),
        reward=Reward(rm_type="remote_rm", rm_url="http://rm:8000/score", reward_key="score"),
        sglang=(("log-level", "warning"), ("enable-dp-attention", None)), dropout=0.1,
        extra_args=("--use-tis",), train_script="train_async.py", grpo=("--advantage-estimator", "gspo"))
    argv = recipe.argv()
    assert argv[:2] == ["python3", "train_async.py"]
    assert argv[len(HEAD):] == [
        *_layout(2, 4, 2, 2, 2), "--sequence-parallel", "--decoder-first-pipeline-num-layers", "8",
        "--decoder-last-pipeline-num-layers", "10", "--micro-batch-size", "2", "--advantage-estimator", "gspo",
        "--optimizer", "adam", "--lr", "2e-05", "--lr-decay-style", "cosine", "--weight-decay", "0.0",
        "--adam-beta1", "0.8", "--adam-beta2", "0.95",
        "--optimizer-cpu-offload", "--overlap-cpu-optimizer-d2h-h2d", "--use-precision-aware-optimizer",
        "--attention-dropout", "0.1", "--hidden-dropout", "0.1",
        "--actor-num-nodes", "2", "--actor-num-gpus-per-node", "4", "--num-gpus-per-node", "4",
        "--rollout-num-gpus-per-engine", "3", "--rollout-num-gpus", "3",
        "--rm-type", "remote_rm", "--rm-url", "http://rm:8000/score", "--reward-key", "score",
        "--sglang-log-level", "warning", "--sglang-enable-dp-attention", "--use-tis"]


def test_the_argv_paths_and_counts_come_from_the_recipe():
    recipe = BASE.replace(hf_checkpoint="/m/hf", ref_load="/m/ref", save="/ckpt", save_interval=5,
                          prompt_data="/d.jsonl",
                          rollout=Rollout(num_rollout=7, rollout_batch_size=6, n_samples_per_prompt=5,
                                          global_batch_size=30, num_steps_per_rollout=1, max_response_len=100,
                                          temperature=0.7, max_tokens_per_gpu=1000))
    argv = recipe.argv()
    got = argv[len(QWEN3_4B.argv()) + 2:len(HEAD)]
    assert got == ["--hf-checkpoint", "/m/hf", "--ref-load", "/m/ref", "--load", "/ckpt", "--save", "/ckpt",
                   "--save-interval", "5", "--prompt-data", "/d.jsonl", "--input-key", "prompt", "--label-key",
                   "label", "--apply-chat-template", "--rollout-shuffle", "--num-rollout", "7",
                   "--rollout-batch-size", "6", "--n-samples-per-prompt", "5", "--global-batch-size", "30",
                   "--num-steps-per-rollout", "1", "--rollout-max-response-len", "100", "--rollout-temperature", "0.7"]
    assert argv[argv.index("--max-tokens-per-gpu") + 1] == "1000"


def test_a_recipe_is_replaced_field_by_field():
    assert BASE.replace(id="other", save_interval=3) == dataclasses.replace(BASE, id="other", save_interval=3)
    assert rmod.RM_TYPES == ("remote_rm", "deepscaler", "dapo", "math", "f1", "gpqa", "ifbench", "random")
