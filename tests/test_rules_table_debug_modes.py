"""Rule table for SLIME's and Miles' debug modes as rlcheck reads and judges them (both frameworks, v0.2.4 to main):
`--debug-train-only` (an SFT launch; `--load-debug-rollout-data` sets it too) reserves the actor GPUs only and
starts no SGLang engine, colocated or not, with or without rollout GPUs; `--debug-rollout-only` runs the engines on
the rollout GPUs (the actor GPUs where colocated without a count) and builds no Megatron model. Pinned: the mode the
argv gives (and the refusals the frameworks assert), the GPUs each placement asks for, the argv a Recipe renders,
and each recipe check's whole verdict on both sides of each flag: the engine checks PASS saying no engine starts
only in train-only mode, the training checks PASS saying nothing is trained only in rollout-only mode (SLIME's
layout; Miles validates Megatron's arguments in every mode), train-only samples are the data's own length (no cap
of the launch bounds them), and everything else is judged as usual."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.hardware import get_profile
from rlcheck.job import to_recipe
from rlcheck.job.job import Job
from rlcheck.preflight import by_area
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.preflight.registry import Check, Inputs, Need
from rlcheck.probes.recipe import memory_buffers, sample_caps
from rlcheck.probes.recipe.sglang_flags import SglangOptions
from rlcheck.recipes.models import MODELS, QWEN3_4B
from rlcheck.recipes.recipe import Parallelism, Placement, Recipe, Rollout
from rlcheck.verdict import Status, Verdict

QWEN4B = tuple(MODELS["Qwen3-4B"].argv())
BASE = ("python3", "train.py", *QWEN4B, "--rollout-batch-size", "16", "--global-batch-size", "16",
        "--actor-num-nodes", "1", "--actor-num-gpus-per-node", "8", "--sglang-log-level", "INFO")
CHECKS = {check.id: check for check in by_area("recipe")}
TRAIN_ONLY = ("no rollout engine starts: train only (--debug-train-only, also set by --load-debug-rollout-data): "
              "{fw} reserves the {n} actor GPU(s) only and launches no SGLang engine")
NOTHING_TRAINED = ("nothing is trained: rollout only (--debug-rollout-only): {fw} train actors return before "
                   "Megatron builds the model; the {n} rollout GPU(s) run the engines")
ENGINE_CHECKS = ("recipe_engines", "recipe_log_levels", "recipe_kv_pool", "recipe_context_length",
                 "recipe_health_first_wait")
"""recipe_sglang_flags too (its collector asks the installed SGLang: judged below with a given option list)."""


def _job(*argv: str, framework: str = "slime") -> Job:
    return Job(argv=argv, intended_argv=argv, entrypoint="", source="run.sh", source_format="bash",
               framework=framework)


def _verdict(check_id: str, *extra: str, framework: str = "slime") -> tuple[str, str]:
    inputs = inputs_for_job(_job(*BASE, *extra, framework=framework), get_profile("h200"))
    verdict = CHECKS[check_id].run(inputs)[0]
    return verdict.status.name, verdict.summary


# --- the mode and the GPUs the argv gives ---------------------------------------------------------------------------

@pytest.mark.parametrize(("extra", "mode", "rollout", "group"), [
    (("--colocate",), "rl", 16, 16),
    (("--rollout-num-gpus", "4"), "rl", 4, 20),
    (("--debug-train-only",), "train-only", 0, 16),  # SFT as shipped: neither --colocate nor rollout GPUs
    (("--debug-train-only", "--colocate"), "train-only", 0, 16),
    (("--debug-train-only", "--rollout-num-gpus", "4"), "train-only", 0, 16),  # the count is not reserved
    (("--load-debug-rollout-data", "/data/{rollout_id}.pt"), "train-only", 0, 16),
    (("--debug-rollout-only", "--rollout-num-gpus", "4"), "rollout-only", 4, 4),
    (("--debug-rollout-only", "--colocate"), "rollout-only", 16, 16),  # the actor GPUs, as SLIME fills it in
    (("--debug-rollout-only", "--colocate", "--rollout-num-gpus", "4"), "rollout-only", 4, 4),
])
def test_the_mode_and_the_gpus_each_placement_asks_for(extra, mode, rollout, group):
    placement = to_recipe.read(_job("python3", "train.py", "--actor-num-nodes", "2", *extra)).recipe.placement
    assert (placement.mode, placement.actor_gpus, placement.rollout_gpus, placement.placement_group_gpus) == \
        (mode, 16, rollout, group)
    assert (placement.engines, placement.trains) == (mode != "train-only", mode != "rollout-only")


@pytest.mark.parametrize(("extra", "message"), [
    ((), "rollout_num_gpus=None: a disaggregated recipe needs rollout GPUs"),
    (("--rollout-num-gpus", "0"), "rollout_num_gpus=0: a disaggregated recipe needs rollout GPUs"),
    (("--debug-rollout-only",), "rollout_num_gpus=None: --debug-rollout-only without --colocate needs rollout GPUs"),
    (("--debug-rollout-only", "--rollout-num-gpus", "0"),
     "rollout_num_gpus=0: --debug-rollout-only without --colocate needs rollout GPUs"),
    (("--debug-train-only", "--debug-rollout-only", "--colocate"),
     "--debug-train-only with --debug-rollout-only: SLIME and Miles assert that debug_rollout_only and "
     "debug_train_only are not both set"),
    (("--load-debug-rollout-data", "/d", "--debug-rollout-only", "--colocate"),
     "--load-debug-rollout-data with --debug-rollout-only: SLIME and Miles assert that debug_rollout_only and "
     "debug_train_only are not both set"),
])
def test_a_placement_the_frameworks_refuse_is_refused_naming_why(extra, message):
    with pytest.raises(ValueError) as err:
        to_recipe.read(_job("python3", "train.py", *extra))
    assert str(err.value) == message


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError) as err:
        Placement(actor_num_nodes=1, actor_gpus_per_node=8, colocate=True, mode="sft")
    assert str(err.value) == "mode='sft': one of rl, train-only, rollout-only"


# --- the argv a Recipe renders, read back the same ------------------------------------------------------------------

def _placement_argv(placement: Placement) -> list[str]:
    argv = Recipe(id="r", model=QWEN3_4B, parallel=Parallelism(), placement=placement,
                  rollout=Rollout(num_rollout=1, rollout_batch_size=8, n_samples_per_prompt=1,
                                  global_batch_size=8)).argv()
    return argv[argv.index("--rollout-num-gpus-per-engine") + 2:argv.index("--rm-type")]


@pytest.mark.parametrize(("colocate", "gpus", "mode", "rendered"), [
    (True, None, "rl", ["--colocate"]),
    (True, 6, "rl", ["--colocate"]),  # colocated RL takes the actor GPUs for its engines
    (False, 4, "rl", ["--rollout-num-gpus", "4"]),
    (False, None, "train-only", ["--debug-train-only"]),
    (False, 4, "train-only", ["--rollout-num-gpus", "4", "--debug-train-only"]),
    (True, None, "train-only", ["--colocate", "--debug-train-only"]),
    (False, 4, "rollout-only", ["--rollout-num-gpus", "4", "--debug-rollout-only"]),
    (True, None, "rollout-only", ["--colocate", "--debug-rollout-only"]),
    (True, 4, "rollout-only", ["--colocate", "--rollout-num-gpus", "4", "--debug-rollout-only"]),
])
def test_a_recipe_renders_its_mode_and_reads_back_the_same(colocate, gpus, mode, rendered):
    placement = Placement(actor_num_nodes=1, actor_gpus_per_node=8, colocate=colocate, rollout_num_gpus=gpus,
                          mode=mode)
    assert _placement_argv(placement) == rendered
    again = to_recipe.read(_job("python3", "train.py", "--actor-num-nodes", "1", *rendered)).recipe.placement
    assert (again.mode, again.rollout_gpus, again.placement_group_gpus) == \
        (mode, placement.rollout_gpus, placement.placement_group_gpus)


# --- the engine checks ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("framework", ["slime", "miles"])
@pytest.mark.parametrize("check_id", ENGINE_CHECKS)
@pytest.mark.parametrize("extra", [("--debug-train-only",), ("--debug-train-only", "--colocate"),
                                   ("--load-debug-rollout-data", "/d/{rollout_id}.pt", "--rollout-num-gpus", "4")])
def test_train_only_starts_no_engine_so_the_engine_checks_pass_saying_so(check_id, extra, framework):
    fw = {"slime": "SLIME", "miles": "Miles"}[framework]
    assert _verdict(check_id, *extra, "--use-fault-tolerance", framework=framework) == \
        ("PASS", f"job:run.sh: {TRAIN_ONLY.format(fw=fw, n=8)}")


@pytest.mark.parametrize("extra", [("--rollout-num-gpus", "8"), ("--colocate",),
                                   ("--debug-rollout-only", "--rollout-num-gpus", "8")])
def test_with_engines_the_engine_checks_judge_them(extra):
    assert _verdict("recipe_engines", *extra) == ("PASS", "8 engine(s) of 1 GPUs, within nodes of 8")
    assert _verdict("recipe_log_levels", *extra) == \
        ("FAIL", "--sglang-log-level INFO: uvicorn accepts only critical, error, warning, info, debug, trace "
                 "(lowercase)")
    assert _verdict("recipe_kv_pool", *extra) == \
        ("SKIP", "needs --sglang-mem-fraction-static in the recipe: found none (SGLang picks its own)")
    assert _verdict("recipe_context_length", *extra) == \
        ("UNKNOWN", "job:run.sh: no --sglang-context-length and cannot read the checkpoint's config.json (the argv "
                    "has no --hf-checkpoint): the engine's context is unknown")
    assert _verdict("recipe_health_first_wait", *extra) == \
        ("SKIP", "job:run.sh: no --use-fault-tolerance: SLIME's health monitor does not probe engines")


@pytest.mark.parametrize(("extra", "verdict"), [
    # an engine that never starts cannot miss a flag SLIME dropped (SLIME does not even parse them in train only)
    (("--debug-train-only",), ("PASS", f"job:run.sh: {TRAIN_ONLY.format(fw='SLIME', n=8)}")),
    (("--rollout-num-gpus", "8"),
     ("FAIL", "1 flag(s) unknown to sglang 0.5.9, which SLIME would drop silently: --sglang-log-level")),
    (("--debug-rollout-only", "--colocate"),
     ("FAIL", "1 flag(s) unknown to sglang 0.5.9, which SLIME would drop silently: --sglang-log-level")),
])
def test_dead_sglang_flags_matter_only_where_engines_start(extra, verdict):
    inputs = inputs_for_job(_job(*BASE, *extra), get_profile("h200"))
    got = CHECKS["recipe_sglang_flags"].run(inputs, SglangOptions(version="0.5.9", flags=("tp-size",)))[0]
    assert (got.status.name, got.summary) == verdict


PROXY_FAIL = ("FAIL", "job:run.sh: http_proxy set in the runtime env and no_proxy exempts no host (CIDR entries httpx "
                      "ignores: 10.0.0.0/8): engine and router traffic between nodes goes to the proxy")


@pytest.mark.parametrize(("extra", "verdict"), [
    # no engine and no router start: no traffic between nodes for the proxy to swallow
    (("--debug-train-only",), ("PASS", f"job:run.sh: {TRAIN_ONLY.format(fw='SLIME', n=8)}")),
    (("--rollout-num-gpus", "8"), PROXY_FAIL),
    (("--debug-rollout-only", "--colocate"), PROXY_FAIL),
])
def test_a_proxy_matters_only_where_engines_start(extra, verdict):
    argv = (*BASE, *extra)
    job = Job(argv=argv, intended_argv=argv, entrypoint="", source="run.sh", source_format="bash",
              env=(("http_proxy", "http://proxy:3128"), ("no_proxy", "10.0.0.0/8")))
    got = CHECKS["recipe_proxy_env"].run(inputs_for_job(job, get_profile("h200")))[0]
    assert (got.status.name, got.summary) == verdict


def test_rollout_only_judges_the_engines_on_the_rollout_gpus():
    assert _verdict("recipe_engines", "--debug-rollout-only", "--rollout-num-gpus", "4",
                    "--rollout-num-gpus-per-engine", "3") == \
        ("WARN", "4 rollout GPUs do not divide into engines of 3: 1 GPU(s) would sit idle")
    assert _verdict("recipe_engines", "--debug-rollout-only", "--colocate", "--rollout-num-gpus-per-engine", "4") == \
        ("PASS", "2 engine(s) of 4 GPUs, within nodes of 8")


# --- the training checks --------------------------------------------------------------------------------------------

STAGE = ("most loaded stage 1 of 1 (36 layers): 76.2 GiB per GPU = 28.1 static (4.02B params per rank) + 46.9 "
         "activations + 1.3 buffers <= 131.6 GiB torch budget (0.94 x 139.8 GiB h200)")


@pytest.mark.parametrize("extra", [("--debug-train-only",), ("--rollout-num-gpus", "8")])
def test_train_only_judges_training_as_usual(extra):
    assert _verdict("recipe_batch", *extra) == \
        ("PASS", "16 x 1 = 16 samples = 1 step(s) of 16, DP 8 (--num-steps-per-rollout unset: SLIME trains the global "
                 "batches it holds)")
    assert _verdict("recipe_layout", *extra) == ("PASS", "8 GPUs = TP 1 x PP 1 x CP 1 x DP 8; EP 1 x expert-TP 1 fits")
    assert _verdict("recipe_stage_memory", *extra) == ("PASS", STAGE)
    assert _verdict("recipe_layout", *extra, "--tensor-model-parallel-size", "3")[0] == "FAIL"


@pytest.mark.parametrize(("mode", "colocated_gib"), [("rl", 0.97), ("train-only", 0.0)])
def test_only_engines_that_start_hold_memory_beside_colocated_training(mode, colocated_gib):
    placement = Placement(actor_num_nodes=1, actor_gpus_per_node=8, colocate=True, mode=mode)
    recipe = Recipe(id="r", model=QWEN3_4B, parallel=Parallelism(), placement=placement,
                    rollout=Rollout(num_rollout=1, rollout_batch_size=8, n_samples_per_prompt=1, global_batch_size=8))
    buffers = memory_buffers.stage_buffers(recipe, (1,))
    assert round(buffers[0].colocated_gib, 2) == colocated_gib
    rl = memory_buffers.stage_buffers(dataclasses.replace(recipe, placement=dataclasses.replace(placement, mode="rl")),
                                      (1,))
    assert buffers[0].total_gib - rl[0].total_gib == pytest.approx(colocated_gib - rl[0].colocated_gib)


ROLLOUT_ONLY = ("--debug-rollout-only", "--rollout-num-gpus", "4")


@pytest.mark.parametrize("framework", ["slime", "miles"])
def test_rollout_only_trains_nothing_so_the_stage_memory_passes_saying_so(framework):
    fw = {"slime": "SLIME's", "miles": "Miles'"}[framework]
    assert _verdict("recipe_stage_memory", *ROLLOUT_ONLY, framework=framework) == \
        ("PASS", f"job:run.sh: {NOTHING_TRAINED.format(fw=fw, n=4)}")


def test_rollout_only_layout_slime_skips_megatron_miles_validates_it():
    bad = (*ROLLOUT_ONLY, "--tensor-model-parallel-size", "3")
    assert _verdict("recipe_layout", *bad) == ("PASS", f"job:run.sh: {NOTHING_TRAINED.format(fw="SLIME's", n=4)}")
    assert _verdict("recipe_layout", *bad, framework="miles") == \
        ("FAIL", "world size 8 is not divisible by TP 3 x PP 1 x CP 1")
    assert _verdict("recipe_layout", *ROLLOUT_ONLY, framework="miles") == \
        ("PASS", "8 GPUs = TP 1 x PP 1 x CP 1 x DP 8; EP 1 x expert-TP 1 fits")


@pytest.mark.parametrize(("extra", "framework", "verdict"), [
    # the steps rule is the argument check's own assert: it holds in every mode
    (("--num-steps-per-rollout", "2"), "slime",
     ("FAIL", "global_batch_size 16 != rollout_batch_size 16 x n_samples_per_prompt 1 // num_steps_per_rollout 2 = 8 "
              "(SLIME asserts it)")),
    (("--num-steps-per-rollout", "1"), "slime",
     ("PASS", "rollout only (--debug-rollout-only): no optimizer step runs; SLIME's argument asserts (the steps "
              "rule) hold")),
    # Megatron's divisibility (global batch by micro batch x DP): validated by Miles in every mode, not by SLIME
    (("--micro-batch-size", "3"), "slime",
     ("PASS", "rollout only (--debug-rollout-only): no optimizer step runs; SLIME's argument asserts (the steps "
              "rule) hold")),
    (("--micro-batch-size", "3"), "miles",
     ("FAIL", "global_batch_size 16 is not divisible by micro batch 3 x DP 8")),
    ((), "miles",
     ("PASS", "rollout only (--debug-rollout-only): no optimizer step runs; Miles' argument asserts (the steps "
              "rule and Megatron's divisibility) hold")),
    # fewer samples than a global batch: no step would run, but none is meant to
    (("--global-batch-size", "32"), "slime",
     ("PASS", "rollout only (--debug-rollout-only): no optimizer step runs; SLIME's argument asserts (the steps "
              "rule) hold")),
])
def test_rollout_only_batch_keeps_the_asserts_of_the_argument_check(extra, framework, verdict):
    assert _verdict("recipe_batch", *ROLLOUT_ONLY, *extra, framework=framework) == verdict


@pytest.mark.parametrize(("extra", "verdict"), [
    (("--micro-batch-size", "3"), ("FAIL", "global_batch_size 16 is not divisible by micro batch 3 x DP 8")),
    (("--global-batch-size", "32"), ("FAIL", "16 samples per rollout < global batch 32: no optimizer step")),
])
def test_training_modes_keep_every_batch_rule(extra, verdict):
    for mode in (("--debug-train-only",), ("--rollout-num-gpus", "4")):
        assert _verdict("recipe_batch", *mode, *extra) == verdict


TRAIN_ONLY_SAMPLES = ("run.sh: train only (--debug-train-only, also set by --load-debug-rollout-data): no response is "
                      "generated and no flag caps a sample, each is the data's own length; samples over the cap of "
                      "{cap} tokens per micro-batch (--max-tokens-per-gpu {cap} x CP 1) run alone, beyond the memory "
                      "plan")
DYNAMIC = ("--use-dynamic-batch-size", "--max-tokens-per-gpu", "8192")


@pytest.mark.parametrize("framework", ["slime", "miles"])
@pytest.mark.parametrize(("extra", "verdict"), [
    # train only: the samples are the data's (SFT conversations, or rollouts saved by another run): no cap of
    # this launch bounds them, whatever its rollout caps say
    (("--debug-train-only",), ("WARN", TRAIN_ONLY_SAMPLES.format(cap=8192))),
    (("--debug-train-only", "--rollout-max-prompt-len", "1024", "--rollout-max-response-len", "99999",
      "--rollout-max-context-len", "2048"), ("WARN", TRAIN_ONLY_SAMPLES.format(cap=8192))),
    (("--load-debug-rollout-data=/d/{rollout_id}.pt", "--rollout-max-response-len", "bad"),
     ("WARN", TRAIN_ONLY_SAMPLES.format(cap=8192))),
    # with generation: the prompt and response caps bound the sample (the other side)
    (("--rollout-max-prompt-len", "1024", "--rollout-max-response-len", "7168"),
     ("PASS", "run.sh: the longest sample (--rollout-max-prompt-len 1024 + --rollout-max-response-len 7168 = 8192 "
              "tokens) fits the cap of 8192 (--max-tokens-per-gpu 8192 x CP 1)")),
    (("--debug-rollout-only", "--rollout-max-prompt-len", "1024", "--rollout-max-response-len", "7168"),
     ("PASS", "run.sh: the longest sample (--rollout-max-prompt-len 1024 + --rollout-max-response-len 7168 = 8192 "
              "tokens) fits the cap of 8192 (--max-tokens-per-gpu 8192 x CP 1)")),
    (("--rollout-max-prompt-len", "1024", "--rollout-max-response-len", "99999"),
     ("WARN", "run.sh: the longest sample (--rollout-max-prompt-len 1024 + --rollout-max-response-len 99999 = "
              "101023 tokens) exceeds the cap of 8192 (--max-tokens-per-gpu 8192 x CP 1): it runs alone in a "
              "micro-batch 12.33x the size the memory plan assumed")),
    (("--rollout-max-response-len", "bad"),
     ("FAIL", "run.sh: --rollout-max-response-len 'bad': a positive integer of tokens")),
])
def test_train_only_samples_are_the_datas_own_length(extra, verdict, framework):
    got = sample_caps.evaluate_sample_caps(["--rollout-batch-size", "8", *DYNAMIC, *extra], "run.sh", framework)
    assert (got.status.name, got.summary) == verdict


def test_without_generation_a_response_cap_over_the_micro_batch_is_not_named():
    got = sample_caps.evaluate_sample_caps([*DYNAMIC, "--debug-train-only", "--rollout-max-response-len", "20000"],
                                           "run.sh")
    assert got.summary == TRAIN_ONLY_SAMPLES.format(cap=8192)
    got = sample_caps.evaluate_sample_caps([*DYNAMIC, "--rollout-max-response-len", "20000"], "run.sh")
    assert got.summary == ("run.sh: --rollout-max-prompt-len is not set (prompts are not filtered by length): the "
                           "longest sample is an uncapped prompt + up to 20000 response tokens; the response cap alone "
                           "is 2.44x the micro-batch cap; samples over the cap of 8192 tokens per micro-batch "
                           "(--max-tokens-per-gpu 8192 x CP 1) run alone, beyond the memory plan")


# --- a moot check holds however few facts are known -----------------------------------------------------------------

SLIME_NOTHING_TRAINED = NOTHING_TRAINED.format(fw="SLIME's", n=4)
NO_MODEL = ("python3", "train.py", "--rollout-batch-size", "16", "--actor-num-gpus-per-node", "8")
"""An argv that names no model: the checks that need it are UNKNOWN unless the mode makes them moot."""


def _unknown_model_verdict(check_id: str, *extra: str) -> tuple[str, str]:
    inputs = inputs_for_job(_job(*NO_MODEL, *extra), get_profile("h200"))
    verdict = CHECKS[check_id].run(inputs)[0]
    return verdict.status.name, verdict.summary


@pytest.mark.parametrize(("check_id", "extra", "verdict"), [
    ("recipe_kv_pool", ("--debug-train-only",), ("PASS", f"job:run.sh: {TRAIN_ONLY.format(fw='SLIME', n=8)}")),
    ("recipe_stage_memory", ("--debug-rollout-only", "--rollout-num-gpus", "4"),
     ("PASS", f"job:run.sh: {SLIME_NOTHING_TRAINED}")),
])
def test_a_check_the_mode_makes_moot_passes_without_the_model(check_id, extra, verdict):
    assert _unknown_model_verdict(check_id, *extra) == verdict


@pytest.mark.parametrize(("check_id", "extra"), [
    ("recipe_kv_pool", ("--rollout-num-gpus", "8")),
    ("recipe_kv_pool", ("--debug-rollout-only", "--rollout-num-gpus", "4")),
    ("recipe_stage_memory", ("--debug-train-only",)),
    ("recipe_stage_memory", ("--rollout-num-gpus", "8")),
])
def test_a_check_the_mode_leaves_to_judge_still_needs_the_model(check_id, extra):
    status, summary = _unknown_model_verdict(check_id, *extra)
    assert (status, summary.split(": ")[0:2]) == ("UNKNOWN", ["cannot judge the job", "the model is not known"])


def test_an_unreadable_recipe_is_unknown_whatever_its_flags_say():
    inputs = inputs_for_job(_job(*BASE, "--debug-train-only", "--debug-rollout-only", "--colocate"),
                            get_profile("h200"))
    for check_id in ("recipe_engines", "recipe_kv_pool", "recipe_stage_memory"):
        verdict = CHECKS[check_id].run(inputs)[0]
        assert (verdict.status.name, verdict.check_id) == ("UNKNOWN", check_id)
        assert verdict.summary.endswith("the argv does not read as a SLIME recipe: --debug-train-only with "
                                        "--debug-rollout-only: SLIME and Miles assert that debug_rollout_only and "
                                        "debug_train_only are not both set")


MOOT = Verdict(status=Status.PASS, summary="moot")


@pytest.mark.parametrize(("moot", "missing", "verdict"), [
    (lambda i: MOOT, {Need.MODEL: "no dims"}, ("PASS", "moot")),  # asked before the needs
    (lambda i: MOOT, {}, ("PASS", "moot")),  # and before the judge
    (lambda i: None, {Need.MODEL: "no dims"}, ("UNKNOWN", "cannot judge the job: the model is not known: no dims")),
    (lambda i: None, {}, ("FAIL", "judged")),
    # a recipe that could not be read is a stand-in: its mode says nothing about the launch
    (lambda i: MOOT, {Need.RECIPE: "unread"}, ("UNKNOWN", "cannot judge the job: the recipe is not known: unread")),
])
def test_the_registry_asks_a_checks_moot_verdict_first_once_the_recipe_is_read(moot, missing, verdict):
    check = Check(id="recipe_probe", guards=(), judges="x", needs=frozenset({Need.RECIPE, Need.MODEL}), moot=moot,
                  judge=lambda obs, i: Verdict(status=Status.FAIL, summary="judged"))
    recipe = Recipe(id="r", model=QWEN3_4B, parallel=Parallelism(),
                    placement=Placement(actor_num_nodes=1, actor_gpus_per_node=8, colocate=True),
                    rollout=Rollout(num_rollout=1, rollout_batch_size=8, n_samples_per_prompt=1, global_batch_size=8))
    (got,) = check.run(Inputs(recipe=recipe, profile=None, missing=missing))
    assert (got.status.name, got.summary, got.check_id) == (*verdict, "recipe_probe")
