"""Whole-verdict rule table for the sample-cap judge (probes.recipe.sample_caps, cuda-oom): both sides of
the cap (x CP), each missing cap, each malformed value, argparse's last-one-wins and `--flag=value` spellings;
verdicts recorded in tests/data/golden/sample_caps.json."""

from __future__ import annotations

import pytest

from rlcheck.probes.recipe import sample_caps
from rlcheck.verdict import Status
from tests import golden_verdicts

DYN = ("--use-dynamic-batch-size", "--max-tokens-per-gpu", "8192")
ROWS = [
    ("no-dynamic-batching", ("--max-tokens-per-gpu", "8192"), Status.SKIP),
    ("no-cap", ("--use-dynamic-batch-size", "--rollout-max-context-len", "100"), Status.FAIL),
    ("context-at-cap", (*DYN, "--rollout-max-context-len", "8192"), Status.PASS),
    ("context-over-cap", (*DYN, "--rollout-max-context-len", "8193"), Status.WARN),
    ("context-over-cap-fits-cp2", (*DYN, "--rollout-max-context-len", "8193", "--context-parallel-size", "2"),
     Status.PASS),
    ("context-over-cp2", (*DYN, "--rollout-max-context-len", "16385", "--context-parallel-size", "2"), Status.WARN),
    ("context-wins-over-prompt-response", (*DYN, "--rollout-max-context-len", "8000", "--rollout-max-prompt-len",
                                           "8000", "--rollout-max-response-len", "8000"), Status.PASS),
    ("prompt-response-at-cap", (*DYN, "--rollout-max-prompt-len", "1024", "--rollout-max-response-len", "7168"),
     Status.PASS),
    ("prompt-response-over-cap", (*DYN, "--rollout-max-prompt-len", "1025", "--rollout-max-response-len", "7168"),
     Status.WARN),
    ("no-response-cap", (*DYN, "--rollout-max-prompt-len", "1024"), Status.WARN),
    ("no-prompt-cap", (*DYN, "--rollout-max-response-len", "4096"), Status.WARN),
    ("no-prompt-cap-response-at-cap", (*DYN, "--rollout-max-response-len", "8192"), Status.WARN),
    ("no-prompt-cap-response-over-cap", (*DYN, "--rollout-max-response-len", "8193"), Status.WARN),
    ("no-prompt-cap-response-over-cp2", (*DYN, "--rollout-max-response-len", "20000", "--context-parallel-size",
                                         "2"), Status.WARN),
    ("cap-zero", ("--use-dynamic-batch-size", "--max-tokens-per-gpu", "0"), Status.FAIL),
    ("cap-negative", ("--use-dynamic-batch-size", "--max-tokens-per-gpu", "-5"), Status.FAIL),
    ("cap-text", ("--use-dynamic-batch-size", "--max-tokens-per-gpu", "8k"), Status.FAIL),
    ("cp-zero", (*DYN, "--context-parallel-size", "0"), Status.FAIL),
    ("response-text", (*DYN, "--rollout-max-response-len", "lots"), Status.FAIL),
    ("prompt-text", (*DYN, "--rollout-max-response-len", "10", "--rollout-max-prompt-len", "x"), Status.FAIL),
    ("context-text", (*DYN, "--rollout-max-context-len", "1e4"), Status.FAIL),
    ("equals-spelling", ("--use-dynamic-batch-size", "--max-tokens-per-gpu=4096", "--rollout-max-context-len=4097"),
     Status.WARN),
    ("last-one-wins", (*DYN, "--max-tokens-per-gpu", "100", "--rollout-max-context-len", "200"), Status.WARN),
    ("flag-without-value", (*DYN, "--rollout-max-context-len"), Status.WARN),
]


@pytest.mark.parametrize(("row", "argv", "status"), ROWS, ids=[r[0] for r in ROWS])
def test_rules_table_sample_caps_whole_verdict(row, argv, status):
    # --rollout-max-context-len bounds a sample only on Miles (its rollout trims the response to fit); on SLIME it
    # is the prompt filter's default (tests/probes/recipe/test_probe_field_caps.py judges that side)
    framework = "miles" if "--rollout-max-context-len" in " ".join(argv) else "slime"
    verdict = sample_caps.evaluate_sample_caps(list(argv), "job", framework)
    assert verdict.status is status, verdict.render()
    assert verdict.failure_id == "cuda-oom"
    golden_verdicts.check("sample_caps", row, verdict)


@pytest.mark.parametrize(("argv", "value"), [
    (["--a", "1"], "1"), (["--a=1"], "1"), (["--a", "1", "--a=2"], "2"), (["--a=1", "--a", "2"], "2"),
    (["--a"], None), (["--ab", "1"], None), (["--ab=1"], None), (["x", "--a", "--b"], "--b"), ([], None),
    (["--a="], ""),
], ids=repr)
def test_rules_table_option_reads_as_argparse_keeps_it(argv, value):
    assert sample_caps.option(argv, "--a") == value


@pytest.mark.parametrize(("raw", "value"), [("1", 1), ("8192", 8192), (None, None)])
def test_rules_table_int_option_positive(raw, value):
    assert sample_caps.int_option([] if raw is None else ["--n", raw], "--n") == value


@pytest.mark.parametrize("raw", ["0", "-1", "1.5", "", " 3"])
def test_rules_table_int_option_rejects_naming_the_flag(raw):
    with pytest.raises(ValueError, match=f"^--n {raw!r}: a positive integer of tokens$"):
        sample_caps.int_option(["--n", raw], "--n")


def test_rules_table_sample_caps_default_framework_is_slime():
    """Left out, the framework is SLIME: the context cap is then only the prompt filter's default (context - 1), so
    8192 - 1 + 4096 = 12287 tokens overflow the 8192 cap, where Miles would cut the sample to the 8192 context."""
    argv = [*DYN, "--rollout-max-context-len", "8192", "--rollout-max-response-len", "4096"]
    default = sample_caps.evaluate_sample_caps(argv, "job")
    assert default == sample_caps.evaluate_sample_caps(argv, "job", "slime")
    assert default.status is Status.WARN and "= 12287 tokens" in default.summary
    assert sample_caps.evaluate_sample_caps(argv, "job", "miles").status is Status.PASS


def test_rules_table_sample_caps_disabled_global_dataset_says_why_prompts_are_uncapped():
    # no prompt cap and a 4096 response cap under the 8192 budget: WARN, no "response cap alone" clause
    argv = [*DYN, "--disable-rollout-global-dataset", "--rollout-max-prompt-len", "100",
            "--rollout-max-response-len", "4096"]
    verdict = sample_caps.evaluate_sample_caps(argv, "job", "slime")
    assert verdict.status is Status.WARN
    assert verdict.summary == (
        "job: --disable-rollout-global-dataset (SLIME filters no prompt by length): the longest sample is an "
        "uncapped prompt + up to 4096 response tokens; samples over the cap of 8192 tokens per micro-batch "
        "(--max-tokens-per-gpu 8192 x CP 1) run alone, beyond the memory plan")


@pytest.mark.parametrize(("response", "how", "longest"), [
    # prompt + response below and at the context: Miles leaves the sample whole (prompt cap + response cap)
    ("4095", "--rollout-max-prompt-len 4096 + --rollout-max-response-len 4095", 4096 + 4095),
    ("4096", "--rollout-max-prompt-len 4096 + --rollout-max-response-len 4096", 4096 + 4096),
    # one over the context: Miles cuts the response, the sample is the context
    ("4097", "--rollout-max-context-len 8192 (Miles cuts each response to the context)", 8192),
])
def test_rules_table_sample_caps_miles_cuts_only_past_the_context(response, how, longest):
    argv = [*DYN, "--rollout-max-context-len", "8192", "--rollout-max-prompt-len", "4096",
            "--rollout-max-response-len", response]
    verdict = sample_caps.evaluate_sample_caps(argv, "job", "miles")
    assert verdict.status is Status.PASS
    assert verdict.summary == (f"job: the longest sample ({how} = {longest} tokens) fits the cap of 8192 "
                               "(--max-tokens-per-gpu 8192 x CP 1)")
