"""Whole-verdict rule tables for the recipe judges, and properties over the layout and batch arithmetic.

tests/probes/recipe/test_rules_recipe.py holds the boundary tables by summary fragment; these rows pin the whole verdict
(status, failure id, summary, details, remedy) where a fragment leaves a wording or a lost detail unseen, and
`hypothesis` checks the arithmetic on every small layout, not the few a table lists. Kept mutants of
benchmarks/mutation/run.py recipe_rules are listed in benchmarks/results/mutation_probes.json.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlcheck import catalog, recipes
from rlcheck.hardware import get_profile
from rlcheck.probes.recipe import recipe_rules
from rlcheck.recipes.recipe import Recipe, with_env, with_sglang
from rlcheck.verdict import Status

H200, GB300 = get_profile("h200"), get_profile("gb300")
FEW = settings(max_examples=60, deadline=None)


def _4b() -> Recipe:
    return recipes.get("qwen3-4b-colocated", H200)


def _30b() -> Recipe:
    return recipes.get("qwen3-30b-a3b-disaggregated", H200)


def _swap(recipe: Recipe, part: str, **kw) -> Recipe:
    if part == "parallel" and kw.get("tp", recipe.parallel.tp) == 1:
        kw["sequence_parallel"] = False  # Megatron's sequence parallelism needs TP > 1
    return recipe.replace(**{part: dataclasses.replace(getattr(recipe, part), **kw)})


def _remedy(failure_id: str) -> str:
    return catalog.get(failure_id).remedy


def test_rules_table_batch_every_problem_in_the_details_in_order():
    # 17 x 8 // 1 = 136 != 128; 128 % (3 x 16); 136 >= 128 so the third rule stays quiet
    verdict = recipe_rules.evaluate_batch(_swap(_4b(), "rollout", rollout_batch_size=17, micro_batch_size=3))
    first = ("global_batch_size 128 != rollout_batch_size 17 x n_samples_per_prompt 8 // num_steps_per_rollout 1 "
             "= 136 (SLIME asserts it)")
    assert verdict.status is Status.FAIL and verdict.summary == first
    assert verdict.details == first + "\nglobal_batch_size 128 is not divisible by micro batch 3 x DP 16"
    assert verdict.remedy == _remedy("batch-size-mismatch") and verdict.failure_id == "batch-size-mismatch"


def test_rules_table_batch_fewer_samples_than_one_step():
    verdict = recipe_rules.evaluate_batch(_swap(_4b(), "rollout", rollout_batch_size=8))  # 64 samples, global 128
    assert verdict.details.splitlines()[-1] == "64 samples per rollout < global batch 128: no optimizer step"


@FEW
@given(rollout_batch=st.integers(1, 40), n_samples=st.integers(1, 16), global_batch=st.integers(1, 256),
       steps=st.integers(1, 4), micro=st.integers(1, 4))
def test_rules_table_batch_fails_exactly_when_a_rule_breaks(rollout_batch, n_samples, global_batch, steps, micro):
    # SLIME: global == prompts x samples // steps (integer division), asserted only with the steps stated
    recipe = _swap(_4b(), "rollout", rollout_batch_size=rollout_batch, n_samples_per_prompt=n_samples,
                   global_batch_size=global_batch, num_steps_per_rollout=steps, micro_batch_size=micro)
    samples, dp = rollout_batch * n_samples, recipe.data_parallel
    broken = global_batch != samples // steps or global_batch % (micro * dp) != 0 or samples < global_batch
    left = samples - steps * global_batch
    expected = Status.FAIL if broken else Status.WARN if left else Status.PASS
    assert recipe_rules.evaluate_batch(recipe).status is expected


@FEW
@given(rollout_batch=st.integers(1, 40), n_samples=st.integers(1, 16), global_batch=st.integers(1, 256),
       micro=st.integers(1, 4))
def test_rules_table_batch_unset_steps_asserts_nothing_and_warns_on_what_is_left(rollout_batch, n_samples,
                                                                                 global_batch, micro):
    recipe = _swap(_4b(), "rollout", rollout_batch_size=rollout_batch, n_samples_per_prompt=n_samples,
                   global_batch_size=global_batch, num_steps_per_rollout=max(1, rollout_batch * n_samples //
                                                                             global_batch),
                   micro_batch_size=micro, steps_stated=False)
    samples, dp = rollout_batch * n_samples, recipe.data_parallel
    broken = global_batch % (micro * dp) != 0 or samples < global_batch
    expected = Status.FAIL if broken else Status.WARN if samples % global_batch else Status.PASS
    assert recipe_rules.evaluate_batch(recipe).status is expected


@pytest.mark.parametrize(("rollout_batch", "global_batch", "status", "summary"), [
    # 49 x 1 // 3 = 16: SLIME accepts it and leaves 1 sample a rollout unused
    (49, 16, Status.WARN, "49 samples per rollout are 3 global batch(es) of 16 and 1 left over: SLIME drops them every "
                          "rollout"),
    (48, 16, Status.PASS, "48 x 1 = 48 samples = 3 step(s) of 16, DP 16"),
    (50, 16, Status.WARN, "50 samples per rollout are 3 global batch(es) of 16 and 2 left over"),
    (49, 32, Status.FAIL, "global_batch_size 32 != rollout_batch_size 49 x n_samples_per_prompt 1 // "
                          "num_steps_per_rollout 3 = 16 (SLIME asserts it)"),
])
def test_rules_table_batch_stated_steps_by_integer_division(rollout_batch, global_batch, status, summary):
    verdict = recipe_rules.evaluate_batch(_swap(_4b(), "rollout", rollout_batch_size=rollout_batch,
                                                n_samples_per_prompt=1, global_batch_size=global_batch,
                                                num_steps_per_rollout=3))
    assert verdict.status is status and verdict.summary.startswith(summary), verdict.render()


LAYOUT_WHOLE = [
    # (parallel changes on the 30b, world 12, 128 experts, summary, details)
    ({"tp": 4, "cp": 2}, "world size 12 is not divisible by TP 4 x PP 1 x CP 2", None),
    ({"tp": 1, "cp": 1, "pp": 5, "ep": 5}, "world size 12 is not divisible by TP 1 x PP 5 x CP 1",
     "world size 12 is not divisible by TP 1 x PP 5 x CP 1\n"
     "world size 12 is not divisible by EP 5 x expert-TP 1 x PP 5\n128 experts do not divide over EP 5"),
]


@pytest.mark.parametrize(("change", "summary", "details"), LAYOUT_WHOLE, ids=["tp4-cp2", "three-problems"])
def test_rules_table_layout_whole_verdict(change, summary, details):
    verdict = recipe_rules.evaluate_layout(_swap(_30b(), "parallel", **change))
    assert verdict.status is Status.FAIL and verdict.summary == summary
    assert verdict.details == (details or summary) and verdict.remedy == _remedy("parallel-layout-mismatch")


def test_rules_table_layout_pass_names_every_factor():
    verdict = recipe_rules.evaluate_layout(_30b())
    assert verdict.summary == "12 GPUs = TP 2 x PP 1 x CP 2 x DP 3; EP 2 x expert-TP 1 fits" and not verdict.details


@FEW
@given(tp=st.integers(1, 8), pp=st.integers(1, 8), cp=st.integers(1, 8))
def test_rules_table_layout_any_tp_pp_cp_not_dividing_world_fails(tp, pp, cp):
    """Dense 4b (world 16, EP 1): FAIL exactly when TP x PP x CP does not divide the world (then DP is no integer)."""
    recipe = _swap(_4b(), "parallel", tp=tp, pp=pp, cp=cp)
    verdict = recipe_rules.evaluate_layout(recipe)
    assert verdict.status is (Status.FAIL if 16 % (tp * pp * cp) else Status.PASS), verdict.render()


@FEW
@given(ep=st.integers(1, 8), etp=st.integers(1, 4), pp=st.integers(1, 4))
def test_rules_table_layout_any_ep_etp_pp_not_dividing_world_fails(ep, etp, pp):
    """MoE 30b (world 12, 128 experts, TP 1 CP 1): FAIL exactly when a product or the expert split breaks."""
    recipe = _swap(_30b(), "parallel", tp=1, cp=1, pp=pp, ep=ep, etp=etp)
    broken = 12 % pp or 12 % (ep * etp * pp) or 128 % ep
    assert recipe_rules.evaluate_layout(recipe).status is (Status.FAIL if broken else Status.PASS)


def test_rules_table_engines_node_width_comes_from_the_profile():
    """The 30b recipe tells SLIME nodes of 8; a GB300 profile says 4: SLIME would split an engine of 8 as one node."""
    recipe = _swap(_30b(), "placement", rollout_num_gpus=8, rollout_gpus_per_engine=8)
    verdict = recipe_rules.evaluate_engines(recipe, GB300)
    assert verdict.status is Status.FAIL and verdict.details == ""
    assert verdict.summary == ("a rollout engine of 8 GPUs spans nodes of 4, but SLIME splits it by "
                               "--num-gpus-per-node 8: its ranks never all join the TCPStore")
    assert verdict.remedy == _remedy("engine-larger-than-node")
    assert recipe_rules.evaluate_engines(recipe, H200).status is Status.PASS


def test_rules_table_connections_unset_names_it():
    verdict = recipe_rules.evaluate_connections(with_env(_30b(), {"CUDA_DEVICE_MAX_CONNECTIONS": None}), H200)
    assert verdict.summary == ("TP 2 / CP 2 on h200 (sm_90 < sm_100) needs CUDA_DEVICE_MAX_CONNECTIONS=1 in the "
                               "runtime env: found unset")
    assert verdict.details == "" and verdict.remedy == _remedy("cuda-device-max-connections")


def test_rules_table_log_levels_both_flags_named():
    bad = recipe_rules.evaluate_log_levels(with_sglang(_4b(), {"log-level": "INFO", "log-level-http": "Warning"}))
    assert bad.summary == ("--sglang-log-level INFO, --sglang-log-level-http Warning: uvicorn accepts only critical, "
                           "error, warning, info, debug, trace (lowercase)")
    assert bad.remedy == _remedy("uvicorn-log-level")
    good = recipe_rules.evaluate_log_levels(with_sglang(_4b(), {"log-level": "info", "log-level-http": "debug"}))
    assert good.summary == "--sglang-log-level info, --sglang-log-level-http debug: a level uvicorn accepts"


def test_rules_table_cp_alone_reaches_the_gpu_probes():
    dense_cp2 = _swap(_4b(), "parallel", cp=2)  # dense: no --moe-grouped-gemm, TP 1
    assert "--moe-grouped-gemm" not in dense_cp2.argv() and recipe_rules.reaches_gpu_probes(dense_cp2)


def _glm(first: int | None, last: int | None, recipe_id: str = "glm5.2-gb300") -> Recipe:
    recipe = _swap(recipes.get("glm5.2-gb300", GB300), "parallel", pp_first_layers=first, pp_last_layers=last)
    return recipe.replace(id=recipe_id)


PP_SPLIT = [
    # (recipe, status, summary); remedy is the catalogue's on every FAIL and WARN
    (_glm(18, 20), Status.PASS, "stages of 18/20/20/20 layers start at [1, 19, 39, 59]: each on a computing layer"),
    (_glm(None, 18), Status.FAIL, "stages of 20/20/20/18 layers start at [1, 21, 41, 61]: stage(s) start on DSA skip "
                                  "layer(s) [21, 41, 61]; each must start on a computing layer (1, 2, 3, 7, 11, ...)"),
    (_glm(None, 18, "job:glm"), Status.WARN, "stages of 20/20/20/18 layers start at [1, 21, 41, 61]: [21, 41, 61] are "
     "DSA skip layers if the checkpoint shares indices (config.json index_topk_freq 4, as GLM-5.2; GLM-5 does not): "
     "check it"),
    (_glm(18, 20, "job:glm"), Status.PASS, "stages of 18/20/20/20 layers start at [1, 19, 39, 59]: each on a "
                                           "computing layer"),
    (_glm(20, None), Status.FAIL, "Megatron refuses this split: pp split 20/.../- of 78 layers on PP 4: the 58 "
                                  "layers left do not divide evenly over the 3 stage(s) not given"),
    (_4b(), Status.SKIP, "Qwen3-4B has no DSA index sharing"),
]


@pytest.mark.parametrize(("recipe", "status", "summary"), PP_SPLIT,
                         ids=["shipped", "skip-start", "job-skip-start", "job-fine", "refused", "not-glm"])
def test_rules_table_pp_split_whole_verdict(recipe, status, summary):
    verdict = recipe_rules.evaluate_pp_split(recipe)
    assert verdict.status is status and verdict.failure_id == "pp-split-skip-layer", verdict.render()
    assert verdict.summary == summary
    assert verdict.details == ""
    expected_remedy = _remedy("pp-split-skip-layer") if status in (Status.FAIL, Status.WARN) else ""
    assert verdict.remedy == expected_remedy
