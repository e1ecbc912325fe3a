"""Rule tables for the recipe judges: both sides of every comparison and each term of every product, so a
seeded bug in a rule (a dropped term, `>` for `>=`, a lost WARN branch) turns a row red."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.probes.recipe import recipe_rules
from rlcheck.recipes.recipe import Recipe, with_env, with_sglang
from rlcheck.verdict import Status

H200 = get_profile("h200")
B200 = get_profile("b200")


def _4b() -> Recipe:
    return recipes.get("qwen3-4b-colocated", H200)


def _30b() -> Recipe:
    return recipes.get("qwen3-30b-a3b-disaggregated", H200)


def _rollout(recipe: Recipe, **kw) -> Recipe:
    return recipe.replace(rollout=dataclasses.replace(recipe.rollout, **kw))


def _parallel(recipe: Recipe, **kw) -> Recipe:
    if kw.get("tp") == 1:
        kw["sequence_parallel"] = False  # Megatron's sequence parallelism needs TP > 1
    return recipe.replace(parallel=dataclasses.replace(recipe.parallel, **kw))


def _placement(recipe: Recipe, **kw) -> Recipe:
    return recipe.replace(placement=dataclasses.replace(recipe.placement, **kw))


BATCH = [
    # 4b: 16 prompts x 8 = 128 samples, global 128, 1 step, micro 1, DP 16
    ("as-shipped", _4b(), Status.PASS, "16 x 8 = 128 samples = 1 step(s) of 128, DP 16"),
    ("fewer-samples-than-steps", _rollout(_4b(), global_batch_size=64, num_steps_per_rollout=2,
                                          rollout_batch_size=15), Status.FAIL,
     "global_batch_size 64 != rollout_batch_size 15 x n_samples_per_prompt 8 // num_steps_per_rollout 2 = 60"),
    ("more-samples-than-steps", _rollout(_4b(), rollout_batch_size=17), Status.FAIL,
     "global_batch_size 128 != rollout_batch_size 17 x"),
    ("two-steps-exact", _rollout(_4b(), global_batch_size=64, num_steps_per_rollout=2), Status.PASS, "2 step(s)"),
    ("micro-2-divides", _rollout(_4b(), micro_batch_size=2), Status.PASS, "DP 16"),
    ("micro-3-does-not-divide", _rollout(_4b(), micro_batch_size=3), Status.FAIL,
     "global_batch_size 128 is not divisible by micro batch 3 x DP 16"),
    # 30b: DP 3; 25 x 4 = 100 samples, global 100: divisible by micro 1 but not by DP 3
    ("dp-3-does-not-divide", _rollout(_30b(), rollout_batch_size=25, n_samples_per_prompt=4, global_batch_size=100),
     Status.FAIL, "global_batch_size 100 is not divisible by micro batch 1 x DP 3"),
    ("dp-3-divides", _rollout(_30b(), rollout_batch_size=24, n_samples_per_prompt=4, global_batch_size=96),
     Status.PASS, "DP 3"),
]


@pytest.mark.parametrize(("label", "recipe", "status", "fragment"), BATCH, ids=[r[0] for r in BATCH])
def test_rules_batch(label, recipe, status, fragment):
    verdict = recipe_rules.evaluate_batch(recipe)
    assert verdict.status is status and fragment in verdict.summary, verdict.render()
    assert verdict.failure_id == "batch-size-mismatch"


LAYOUT = [
    # 30b: world 12 = TP 2 x CP 2 x DP 3; 128 experts
    ("as-shipped", _30b(), Status.PASS, "12 GPUs = TP 2 x PP 1 x CP 2"),
    ("cp-5-breaks-tp-pp-cp", _parallel(_30b(), cp=5), Status.FAIL, "not divisible by TP 2 x PP 1 x CP 5"),
    ("pp-5-breaks-tp-pp-cp", _parallel(_30b(), cp=1, pp=5), Status.FAIL, "not divisible by TP 2 x PP 5 x CP 1"),
    ("tp-5-breaks-tp-pp-cp", _parallel(_30b(), cp=1, tp=5), Status.FAIL, "not divisible by TP 5 x PP 1 x CP 1"),
    ("pp-2-breaks-ep-etp-pp", _parallel(_30b(), tp=1, cp=1, pp=2, ep=4), Status.FAIL,
     "not divisible by EP 4 x expert-TP 1 x PP 2"),
    ("etp-2-breaks-ep-etp-pp", _parallel(_30b(), tp=1, cp=1, pp=1, ep=4, etp=2), Status.FAIL,
     "not divisible by EP 4 x expert-TP 2 x PP 1"),
    ("ep-8-breaks-ep-etp-pp", _parallel(_30b(), tp=1, cp=1, ep=8), Status.FAIL,
     "not divisible by EP 8 x expert-TP 1 x PP 1"),
    ("ep-4-pp-3-fits", _parallel(_30b(), tp=1, cp=1, pp=3, ep=4), Status.PASS, "EP 4 x expert-TP 1 fits"),
    ("128-experts-over-ep-3", _parallel(_30b(), tp=1, cp=1, ep=3), Status.FAIL, "128 experts do not divide over EP 3"),
    ("ep-2-on-dense", _parallel(_4b(), ep=2), Status.FAIL, "EP 2 on a dense model"),
]


@pytest.mark.parametrize(("label", "recipe", "status", "fragment"), LAYOUT, ids=[r[0] for r in LAYOUT])
def test_rules_layout(label, recipe, status, fragment):
    verdict = recipe_rules.evaluate_layout(recipe)
    assert verdict.status is status and fragment in verdict.summary, verdict.render()
    assert verdict.failure_id == "parallel-layout-mismatch"


ENGINES = [
    # 30b on h200: 4 rollout GPUs in engines of 2, nodes of 8
    ("as-shipped", _30b(), H200, Status.PASS, "2 engine(s) of 2 GPUs, within nodes of 8"),
    ("engine-as-wide-as-node", _placement(_30b(), rollout_num_gpus=8, rollout_gpus_per_engine=8), H200, Status.PASS,
     "1 engine(s) of 8 GPUs, within nodes of 8"),
    # SLIME starts an engine across whole nodes (its docs: 2 nodes x 8 GPUs serving one model is an engine of 16)
    ("engine-across-two-nodes", _placement(_30b(), rollout_num_gpus=16, rollout_gpus_per_engine=16), H200,
     Status.PASS, "1 engine(s) of 16 GPUs, each across 2 nodes of 8"),
    ("engine-of-a-node-and-a-half", _placement(_30b(), rollout_num_gpus=12, rollout_gpus_per_engine=12), H200,
     Status.FAIL, "a rollout engine of 12 GPUs is no whole number of nodes of 8"),
    ("engine-split-by-the-wrong-node-width", _placement(_30b(), rollout_num_gpus=8, rollout_gpus_per_engine=8,
                                                        num_gpus_per_node=8), get_profile("gb300"),
     Status.FAIL, "spans nodes of 4, but SLIME splits it by --num-gpus-per-node 8"),
    ("engine-split-by-the-node-width", _placement(_30b(), rollout_num_gpus=8, rollout_gpus_per_engine=8,
                                                  num_gpus_per_node=4), get_profile("gb300"),
     Status.PASS, "each across 2 nodes of 4"),
    ("rollout-not-a-multiple", _placement(_30b(), rollout_num_gpus=4, rollout_gpus_per_engine=3), H200, Status.WARN,
     "4 rollout GPUs do not divide into engines of 3: 1 GPU(s) would sit idle"),
    ("no-profile-uses-recipe-node", _placement(_30b(), rollout_num_gpus=12, rollout_gpus_per_engine=12), None,
     Status.FAIL, "no whole number of nodes of 8"),
    ("dp-size-without-dp-attention", with_sglang(_placement(_30b(), rollout_num_gpus=8, rollout_gpus_per_engine=8),
                                                 {"dp-size": "2"}), H200, Status.FAIL,
     "--sglang-dp-size 2 without --sglang-enable-dp-attention"),
    ("dp-size-with-dp-attention", with_sglang(_placement(_30b(), rollout_num_gpus=8, rollout_gpus_per_engine=8),
                                              {"dp-size": "2", "enable-dp-attention": None}), H200, Status.PASS,
     "1 engine(s) of 8 GPUs"),
    ("dp-size-one", with_sglang(_placement(_30b(), rollout_num_gpus=8, rollout_gpus_per_engine=8), {"dp-size": "1"}),
     H200, Status.PASS, "within nodes of 8"),
]


@pytest.mark.parametrize(("label", "recipe", "profile", "status", "fragment"), ENGINES, ids=[r[0] for r in ENGINES])
def test_rules_engines(label, recipe, profile, status, fragment):
    verdict = recipe_rules.evaluate_engines(recipe, profile)
    assert verdict.status is status and fragment in verdict.summary, verdict.render()
    assert verdict.failure_id == "engine-larger-than-node"


def test_rules_engines_dp_attention_may_span_nodes():
    glm = recipes.get("glm5.2-gb300", get_profile("gb300"))
    assert recipe_rules.evaluate_engines(glm, get_profile("gb300")).status is Status.PASS
    assert "across 16 nodes of 4" in recipe_rules.evaluate_engines(glm, get_profile("gb300")).summary


UNSET = {"CUDA_DEVICE_MAX_CONNECTIONS": None}
CONNECTIONS = [
    ("tp2-cp2-set-h200", _30b(), H200, Status.PASS, "CUDA_DEVICE_MAX_CONNECTIONS=1 for TP 2 / CP 2 on sm_90"),
    ("tp2-cp2-unset-h200", with_env(_30b(), UNSET), H200, Status.FAIL, "needs CUDA_DEVICE_MAX_CONNECTIONS=1"),
    ("tp2-only-unset-h200", with_env(_parallel(_30b(), cp=1), UNSET), H200, Status.FAIL, "TP 2 / CP 1 on h200"),
    ("cp2-only-unset-h200", with_env(_parallel(_30b(), tp=1), UNSET), H200, Status.FAIL, "TP 1 / CP 2 on h200"),
    ("tp1-cp1-unset-h200", with_env(_parallel(_30b(), tp=1, cp=1), UNSET), H200, Status.PASS, "not required"),
    ("value-2-h200", with_env(_30b(), {"CUDA_DEVICE_MAX_CONNECTIONS": "2"}), H200, Status.FAIL, "found 2"),
    ("tp2-unset-sm100", with_env(recipes.get("qwen3-30b-a3b-disaggregated", B200), UNSET), B200, Status.PASS,
     "not required: TP 2, CP 2, sm_100"),
]


@pytest.mark.parametrize(("label", "recipe", "profile", "status", "fragment"), CONNECTIONS,
                         ids=[r[0] for r in CONNECTIONS])
def test_rules_cuda_device_max_connections(label, recipe, profile, status, fragment):
    verdict = recipe_rules.evaluate_connections(recipe, profile)
    assert verdict.status is status and fragment in verdict.summary, verdict.render()
    assert verdict.failure_id == "cuda-device-max-connections"


def test_rules_connections_without_profile_skip_naming_it():
    verdict = recipe_rules.evaluate_connections(_30b(), None)
    assert verdict.status is Status.SKIP and verdict.failure_id == "cuda-device-max-connections"
    assert verdict.summary == "needs a hardware profile (--hardware): found none"


def test_rules_all_problems_are_in_the_details():
    recipe = _rollout(_4b(), rollout_batch_size=17, micro_batch_size=3)  # 136 != 128, and 128 % (3 x 16)
    verdict = recipe_rules.evaluate_batch(recipe)
    assert verdict.summary in verdict.details and "not divisible by micro batch 3 x DP 16" in verdict.details
    assert verdict.remedy


@pytest.mark.parametrize(("recipe", "reaches"), [
    (_parallel(_30b(), cp=1), True),  # TP 2
    (_parallel(_30b(), tp=1), True),  # CP 2
    (_parallel(_4b(), tp=2), True),
    (_4b(), False),
], ids=["tp2", "cp2", "dense-tp2", "tp1-cp1-dense"])
def test_rules_megatron_gpu_probes_reached_by_tp_or_cp(recipe, reaches):
    assert recipe_rules.reaches_gpu_probes(recipe) is reaches


def test_rules_grouped_gemm_alone_reaches_the_gpu_probes():
    moe_tp1 = _parallel(_30b(), tp=1, cp=1)
    assert "--moe-grouped-gemm" in moe_tp1.argv() and recipe_rules.reaches_gpu_probes(moe_tp1)


@pytest.mark.parametrize(("level", "status"), [("info", Status.PASS), ("trace", Status.PASS), ("critical", Status.PASS),
                                               ("Info", Status.FAIL), ("notset", Status.FAIL)])
def test_rules_log_level_set_is_uvicorns(level, status):
    from rlcheck.recipes.recipe import with_sglang

    verdict = recipe_rules.evaluate_log_levels(with_sglang(_4b(), {"log-level": level}))
    assert verdict.status is status and verdict.failure_id == "uvicorn-log-level"
    assert f"--sglang-log-level {level}" in verdict.summary


def test_rules_log_level_default_is_named():
    from rlcheck.recipes.recipe import with_sglang

    verdict = recipe_rules.evaluate_log_levels(with_sglang(_4b(), {}, remove=("log-level", "log-level-http")))
    assert verdict.status is Status.PASS and verdict.summary == "SGLang's default (info): a level uvicorn accepts"


STEPS = [
    # prompts, samples, global batch, --num-steps-per-rollout (None: unset), status, fragment
    (24, 8, 96, None, Status.PASS, "192 samples = 2 step(s) of 96, DP"),
    (24, 8, 96, 2, Status.PASS, "192 samples = 2 step(s) of 96"),
    (24, 8, 96, 1, Status.FAIL, "global_batch_size 96 != rollout_batch_size 24 x n_samples_per_prompt 8 // "
                                "num_steps_per_rollout 1 = 192"),
    (25, 1, 8, 3, Status.WARN, "25 samples per rollout are 3 global batch(es) of 8 and 1 left over"),  # 25 // 3 = 8
    (25, 8, 96, None, Status.WARN, "200 samples per rollout are 2 global batch(es) of 96 and 8 left over"),
    (8, 8, 96, None, Status.FAIL, "64 samples per rollout < global batch 96: no optimizer step"),
    (12, 8, 96, None, Status.PASS, "96 samples = 1 step(s) of 96"),
]


@pytest.mark.parametrize(("prompts", "samples", "gbs", "steps", "status", "fragment"), STEPS,
                         ids=[f"{r[0]}x{r[1]}-gbs{r[2]}-steps{r[3]}" for r in STEPS])
def test_rules_batch_as_slime_reads_the_steps(prompts, samples, gbs, steps, status, fragment):
    """--num-steps-per-rollout unset is SLIME's None: nothing asserted, as many steps as whole global batches."""
    from rlcheck.job import to_recipe
    from rlcheck.job.job import Job

    argv = ["python3", "train.py", "--colocate", "--rollout-batch-size", str(prompts), "--n-samples-per-prompt",
            str(samples), "--global-batch-size", str(gbs), "--actor-num-gpus-per-node", "8"]
    argv += ["--num-steps-per-rollout", str(steps)] if steps else []
    job = Job(argv=tuple(argv), intended_argv=tuple(argv), entrypoint="", source="run.sh", source_format="bash")
    verdict = recipe_rules.evaluate_batch(to_recipe.read(job).recipe)
    assert verdict.status is status and fragment in verdict.summary, verdict.render()
