"""A user's job judged as the upstream SLIME/Miles launch scripts write it (docs/upstream-launch-trials.md): what the
trainer gets reaches the judges, and the real bad case next to each former false positive is still caught."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlcheck.facts import Need
from rlcheck.hardware import get_profile
from rlcheck.job import capture, to_recipe
from rlcheck.job.job import Job
from rlcheck.preflight import all_checks
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.probes.recipe.memory_activations import recompute_of
from rlcheck.verdict import Status

JOBS = Path(__file__).parent / "data" / "jobs"
QWEN3_30B = capture.capture(JOBS / "slime_qwen3_30b_a3b.json")
"""SLIME scripts/run-qwen3-30B-A3B.sh's argv: Adam on the CPU, full uniform recompute, TP4 x EP8 on 8 GPUs."""
OFFLOAD = ("--optimizer-cpu-offload", "--overlap-cpu-optimizer-d2h-h2d", "--use-precision-aware-optimizer")
RECOMPUTE = ("--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1")


def _without(job: Job, *spans: tuple[str, ...]) -> Job:
    argv = list(job.argv)
    for span in spans:
        at = next(i for i in range(len(argv)) if tuple(argv[i:i + len(span)]) == span)
        del argv[at:at + len(span)]
    return Job.from_dict({**job.to_dict(), "argv": argv, "intended_argv": argv}, job.source)


def _verdict(check_id: str, job: Job, hw: str):
    check = next(c for c in all_checks() if c.id == check_id)
    return check.run(inputs_for_job(job, get_profile(hw)))[0]


def test_job_reads_optimizer_offload_recompute_and_other_train_flags():
    recipe = to_recipe.read(QWEN3_30B).recipe
    assert recipe.optimizer.cpu_offload
    assert (recompute_of(recipe).granularity, recompute_of(recipe).method, recompute_of(recipe).num_layers) == \
        ("full", "uniform", 1)
    assert "--balance-data" in recipe.extra_args
    bare = to_recipe.read(_without(QWEN3_30B, OFFLOAD, RECOMPUTE)).recipe
    assert not bare.optimizer.cpu_offload and recompute_of(bare).granularity == "none"


@pytest.mark.parametrize(("argv_tail", "expected"), [
    (("--rollout-max-prompt-len", "2048"), ("--rollout-max-prompt-len", "2048")),
    (("--rollout-max-prompt-len=2048",), ("--rollout-max-prompt-len", "2048")),
    (("--eval-prompt-data", "aime", "/root/aime.jsonl"), ("--eval-prompt-data", "aime", "/root/aime.jsonl")),
    (("--recompute-num-layers", "2"), ("--recompute-num-layers", "2")),  # given twice: argparse keeps the last
])
def test_job_train_flags_reach_extra_args_as_the_parser_reads_them(argv_tail, expected):
    job = Job.from_dict({**QWEN3_30B.to_dict(), "argv": [*QWEN3_30B.argv, *argv_tail]}, "job.json")
    recipe = to_recipe.read(job).recipe
    assert recipe.extra_args[-len(expected):] == expected
    assert recompute_of(recipe).num_layers == (2 if "--recompute-num-layers" in expected else 1)


def test_job_train_flags_the_recipe_renders_are_not_carried_twice():
    extra = to_recipe.read(QWEN3_30B).recipe.extra_args
    assert not {"--num-layers", "--tensor-model-parallel-size", "--optimizer-cpu-offload", "--colocate"} & set(extra)


@pytest.mark.parametrize("bad", [("--recompute-granularity", "everything"), ("--rollout-max-prompt-len", "long")])
def test_job_train_flag_value_the_parser_refuses_is_named(bad):
    job = Job.from_dict({**QWEN3_30B.to_dict(), "argv": [*QWEN3_30B.argv, *bad]}, "job.json")
    with pytest.raises(ValueError, match=bad[0]):
        to_recipe.read(job)


@pytest.mark.parametrize(("job", "hw", "status", "fragment"), [
    # Formerly FAIL 102.5 GiB > 75.0 on h100: Adam priced on the GPU, recompute 'none'.
    (QWEN3_30B, "h100", Status.PASS, "33.3 GiB per GPU"),
    (QWEN3_30B, "h200", Status.PASS, "33.3 GiB per GPU"),
    # The same job without the offload and the recompute really does not fit an H100.
    (_without(QWEN3_30B, OFFLOAD, RECOMPUTE), "h100", Status.FAIL, "102.5 GiB per GPU"),
    (_without(QWEN3_30B, OFFLOAD), "h100", Status.FAIL, "> 75.0 GiB"),
])
def test_job_stage_memory_prices_what_the_argv_asks(job, hw, status, fragment):
    verdict = _verdict("recipe_stage_memory", job, hw)
    assert verdict.status is status, verdict.summary
    assert fragment in verdict.summary


GLM5 = capture.capture(JOBS / "slime_glm5_744b_a40b.json")
"""SLIME scripts/run-glm5-744B-A40B.sh's argv: GLM-5 (--rotary-base 1000000), PP4 with stages at 1/21/41/61."""


def _rotary(job: Job, base: str) -> Job:
    argv = [base if i and job.argv[i - 1] == "--rotary-base" else t for i, t in enumerate(job.argv)]
    return Job.from_dict({**job.to_dict(), "argv": argv, "intended_argv": argv}, job.source)


@pytest.mark.parametrize(("base", "model", "pp_split", "fragment"), [
    # Formerly WARN: GLM-5 was taken for GLM-5.2 and judged by its index-sharing skip layers.
    ("1000000", "GLM-5", Status.SKIP, "GLM-5 has no DSA index sharing"),
    ("8000000", "GLM-5.2", Status.WARN, "[21, 41, 61] are DSA skip layers"),
    ("500000", "unknown", Status.UNKNOWN, "--rotary-base 500000 (GLM-5.2: 8000000); --rotary-base 500000 (GLM-5: "),
])
def test_job_glm5_and_glm5_2_told_apart_by_rotary_base(base, model, pp_split, fragment):
    job = _rotary(GLM5, base)
    assert to_recipe.read(job).recipe.model.name == model
    verdict = _verdict("recipe_pp_split", job, "b200")
    assert verdict.status is pp_split and fragment in verdict.summary, verdict.summary


def test_job_glm5_stage_memory_priced_with_its_offload_and_recompute():
    # Formerly WARN 152.5 GiB within 10% of 157.8 on b200 (Adam on the GPU, no recompute, as GLM-5.2).
    verdict = _verdict("recipe_stage_memory", GLM5, "b200")
    assert verdict.status is Status.PASS and "48.7 GiB per GPU" in verdict.summary, verdict.summary


def test_job_model_without_rotary_base_is_unknown_naming_it():
    argv = [t for i, t in enumerate(GLM5.argv) if "--rotary-base" not in (t, GLM5.argv[i - 1] if i else "")]
    reading = to_recipe.read(Job.from_dict({**GLM5.to_dict(), "argv": argv}, "job.json"))
    assert reading.recipe.model.name == "unknown"
    assert "--rotary-base (not given) (GLM-5: 1000000)" in reading.missing[Need.MODEL]


FAKE_HF = "hf_" + "rlcheckMadeUpTokenShape" + "0" * 10


def _round_trip(job: Job, doc_edit=None) -> Job:
    doc = json.loads(json.dumps(job.to_dict()))  # what `rlcheck job capture -o job.json` writes
    if doc_edit:
        doc_edit(doc)
    return Job.from_dict(doc, "job.json")


def _with_env(job: Job, **env: str) -> Job:
    return Job.from_dict({**job.to_dict(redact=False), "env": {**job.env_dict(), **env}}, job.source)


@pytest.mark.parametrize(("env", "status", "fragment"), [
    # awsome-distributed-ai's env_vars: HF_TOKEN="" to fill in later. Formerly redacted, then FAIL as inlined.
    ({"HF_TOKEN": ""}, Status.PASS, "no secret"),
    ({"HF_TOKEN": "${HF_TOKEN}"}, Status.PASS, "no secret"),
    ({"HF_TOKEN": FAKE_HF}, Status.FAIL, "env HF_TOKEN (by name)"),
    ({"NOTE": FAKE_HF}, Status.FAIL, "env NOTE (hf-token shape)"),
])
def test_job_secrets_judged_the_same_after_capture_json_and_job(env, status, fragment):
    job = _with_env(QWEN3_30B, **env)
    written = _round_trip(job)
    assert FAKE_HF not in json.dumps(written.to_dict(redact=False))
    assert written.env_dict().get("HF_TOKEN", "") in ("", "${HF_TOKEN}", "<redacted>")
    for judged in (job, written, _round_trip(written)):  # captured, written, written again
        verdict = _verdict("recipe_no_inline_secrets", judged, "h200")
        assert verdict.status is status and fragment in verdict.summary, verdict.summary
        assert verdict.summary.count(fragment) == 1


def test_job_secrets_in_argv_judged_after_the_round_trip():
    job = Job.from_dict({**QWEN3_30B.to_dict(), "argv": [*QWEN3_30B.argv, "--wandb-key", FAKE_HF]}, "job.json")
    verdict = _verdict("recipe_no_inline_secrets", _round_trip(job), "h200")
    assert verdict.status is Status.FAIL and "(--wandb-key, by name)" in verdict.summary


def test_job_written_before_secrets_were_recorded_still_fails_on_its_marker():
    legacy = _round_trip(_with_env(QWEN3_30B, HF_TOKEN=FAKE_HF), lambda doc: doc.pop("inline_secrets"))
    verdict = _verdict("recipe_no_inline_secrets", legacy, "h200")
    assert verdict.status is Status.FAIL and "env HF_TOKEN (redacted by rlcheck job capture)" in verdict.summary


@pytest.mark.parametrize(("argv_tail", "temperature"), [
    ((), 1.0),  # SLIME's default
    (("--rollout-temperature", "0.8"), 0.8),
    (("--rollout-temperature=1.2",), 1.2),
    (("--rollout-temperature", "0.8", "--rollout-temperature", "1"), 1.0),  # argparse keeps the last
])
def test_job_reads_the_rollout_temperature_that_prices_a_logits_copy(argv_tail, temperature):
    job = Job.from_dict({**QWEN3_30B.to_dict(), "argv": [*QWEN3_30B.argv, *argv_tail]}, "job.json")
    assert to_recipe.read(job).recipe.rollout.temperature == temperature


def test_job_rollout_temperature_that_is_no_number_is_named():
    job = Job.from_dict({**QWEN3_30B.to_dict(), "argv": [*QWEN3_30B.argv, "--rollout-temperature", "hot"]},
                        "job.json")
    with pytest.raises(ValueError, match="--rollout-temperature 'hot': expected a number"):
        to_recipe.read(job)
