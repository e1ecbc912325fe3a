"""The slime_validate_args rules rlcheck's recipe checks model, cross-checked against SLIME's source at the pinned
commits (slime/utils/arguments.py; main 624b824, v0.3.1 a6272da: the same rule at both), each held on both sides
through the registry on a SLIME job (scripts/run-qwen3-30B-A3B.sh's argv, tests/data/jobs/).

Each rule: SLIME's words; where it sits at main 624b824 / v0.3.1 a6272da (slime/utils/arguments.py unless named);
the check that models it.

- num_steps_per_rollout set: assert global_batch_size == rollout_batch_size * n_samples_per_prompt //
  num_steps_per_rollout (1971-1979 / 1907-1915); unset: nothing asserted, the global batch as given. recipe_batch
- use_dynamic_batch_size: assert max_tokens_per_gpu is set (1867-1868 / 1808-1809). recipe_sample_caps
- rollout_max_context_len set, no prompt cap: the prompt cap is context - 1 (2027-2029 / 1963-1965).
  recipe_sample_caps
- colocate: offload_train on unless --no-offload-train, or --release-train at main (1939-1948 / 1875-1884).
  recipe_checkpoint_save, recipe_ld_preload_env
- --sglang-dp-size > 1: assert --sglang-enable-dp-attention (slime/backends/sglang_utils/arguments.py 184 / 169).
  recipe_engines
- --rollout-batch-size: add_argument(required=True), the parser exits without it. recipe_framework_args
"""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.framework.detect import parse_declared
from rlcheck.hardware import get_profile
from rlcheck.job import capture
from rlcheck.job.job import Job
from rlcheck.preflight import all_checks
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.verdict import Status
from tests.test_job_upstream import JOBS

BASE = capture.capture(JOBS / "slime_qwen3_30b_a3b.json")
"""--rollout-batch-size 32 --n-samples-per-prompt 8 --global-batch-size 256, TP4 EP8 on 8 GPUs, colocated."""


def _set(job: Job, drop: tuple[str, ...] = (), **flags: str | None) -> Job:
    """The job with the flags in `drop` (and their values) removed and `flags` (--name: value, None = bare) set."""
    argv: list[str] = []
    skip = False
    names = {f"--{k.replace('_', '-')}" for k in flags} | set(drop)
    for token in job.argv:
        if token.startswith("--"):
            skip = token in names
        if not skip:
            argv.append(token)
    for name, value in flags.items():
        argv += [f"--{name.replace('_', '-')}", *([] if value is None else [value])]
    return Job.from_dict({**job.to_dict(), "argv": argv, "intended_argv": argv}, job.source)


def _status(check_id: str, job: Job, framework: str = "slime==main") -> tuple[Status, str]:
    check = next(c for c in all_checks() if c.id == check_id)
    inputs = dataclasses.replace(inputs_for_job(job, get_profile("h200")), framework=parse_declared(framework))
    verdict = check.run(inputs)[0]
    return verdict.status, verdict.summary


@pytest.mark.parametrize("framework", ["slime==main", "slime==0.3.1"])
@pytest.mark.parametrize(("flags", "blocked"), [
    ({"num_steps_per_rollout": "2", "global_batch_size": "128"}, False),   # 32 x 8 // 2 = 128
    ({"num_steps_per_rollout": "2", "global_batch_size": "96"}, True),     # SLIME asserts 96 == 128
    ({"num_steps_per_rollout": "1", "global_batch_size": "256"}, False),
    ({"num_steps_per_rollout": "1", "global_batch_size": "128"}, True),
    # SLIME's // : 34 x 8 = 272 // 3 = 90, so 90 is accepted (2 samples a rollout go unused), 92 is not
    ({"rollout_batch_size": "34", "num_steps_per_rollout": "3", "global_batch_size": "90"}, False),
    ({"rollout_batch_size": "34", "num_steps_per_rollout": "3", "global_batch_size": "92"}, True),
    ({"global_batch_size": "128"}, False),  # steps unset: nothing asserted, two optimizer steps per rollout
    ({"global_batch_size": "96"}, False),   # unset: 256 = 2 x 96 + 64 left over (a WARN, not SLIME's assert)
])
def test_rule_global_batch_against_steps_per_rollout(framework, flags, blocked):
    status, summary = _status("recipe_batch", _set(BASE, **flags), framework)
    assert (status is Status.FAIL) is blocked, summary


@pytest.mark.parametrize(("job", "blocked"), [
    (_set(BASE, drop=("--max-tokens-per-gpu",)), True),                     # SLIME asserts at start-up
    (_set(BASE), False),                                                     # --max-tokens-per-gpu 20480
    (_set(BASE, drop=("--max-tokens-per-gpu", "--use-dynamic-batch-size")), False),  # no dynamic batching
])
def test_rule_dynamic_batch_needs_max_tokens_per_gpu(job, blocked):
    status, summary = _status("recipe_sample_caps", job)
    assert (status is Status.FAIL) is blocked, summary


@pytest.mark.parametrize(("context", "longest"), [("12289", "20480"), ("12290", "20481"), ("32768", "40959")])
def test_rule_context_cap_gives_the_prompt_cap_context_minus_one(context, longest):
    """12289 - 1 + 8192 = 20480 fits --max-tokens-per-gpu 20480 exactly; one token more does not."""
    status, summary = _status("recipe_sample_caps", _set(BASE, rollout_max_context_len=context))
    assert f"--rollout-max-context-len {context} - 1" in summary and f"= {longest} tokens" in summary, summary
    assert (status is Status.PASS) is (int(longest) <= 20480), summary


@pytest.mark.parametrize(("extra", "offloaded"), [
    ({}, "with training offloaded (--colocate (offload_train defaults on))"),
    ({"no_offload_train": None}, "training is not offloaded (--colocate --no-offload-train)"),
    ({"release_train": None}, "training is not offloaded (--colocate --release-train"),
    ({"offload_train": None, "rollout_num_gpus": "8"}, "with training offloaded (--offload-train)"),
    ({"rollout_num_gpus": "8"}, "training is not offloaded (no offload flag)"),  # disaggregated: off by default
])
def test_rule_colocate_turns_offload_train_on_unless_told_otherwise(extra, offloaded):
    drop = ("--colocate",) if "rollout_num_gpus" in extra else ()
    status, summary = _status("recipe_checkpoint_save", _set(BASE, drop=drop, **extra))
    assert offloaded in summary, summary


@pytest.mark.parametrize(("flags", "blocked"), [
    ({"sglang_dp_size": "2"}, True),
    ({"sglang_dp_size": "2", "sglang_enable_dp_attention": None}, False),
    ({"sglang_dp_size": "1"}, False),
    ({"rollout_num_gpus_per_engine": "16", "actor_num_nodes": "2"}, False),  # an engine across 2 nodes, no DP
])
def test_rule_sglang_data_parallelism_needs_dp_attention(flags, blocked):
    status, summary = _status("recipe_engines", _set(BASE, **flags))
    assert (status is Status.FAIL) is blocked, summary


@pytest.mark.parametrize("framework", ["slime==main", "slime==0.3.1", "miles==main"])
def test_rule_rollout_batch_size_is_required(framework):
    status, summary = _status("recipe_framework_args", _set(BASE, drop=("--rollout-batch-size",)), framework)
    assert status is Status.FAIL and "--rollout-batch-size is required" in summary, summary
    status, summary = _status("recipe_framework_args", BASE, framework)
    assert status is not Status.FAIL, summary
