"""The pure judges of a job as launched: secrets by name and by shape, argv through Ray's /bin/sh -c."""

from __future__ import annotations

import subprocess

import pytest

from rlcheck.probes.recipe import argv_shell, inline_secrets
from rlcheck.verdict import Status

FAKE = {"hf": "hf_" + "A" * 34, "ghp": "ghp_" + "b" * 36, "akia": "AKIA" + "ABCDEFGHIJKLMNOP"}


@pytest.mark.parametrize(("name", "secret"), [
    ("HF_TOKEN", True), ("GITHUB_PAT", True), ("WANDB_API_KEY", True), ("AWS_SECRET_ACCESS_KEY", True),
    ("DB_PASSWORD", True), ("--hf-token", True), ("--wandb-key", True), ("TOKENIZERS_PARALLELISM", False),
    ("PYTHONPATH", False), ("--moe-token-dispatcher-type", False), ("--max-tokens-per-gpu", False),
    ("--input-key", False), ("--reward-key", False), ("--pass-rate", False), ("WANDB_PROJECT", False),
    ("--wandb-group", False), ("--wandb-key-file", False),
])
def test_probe_secret_name_whole_words_at_the_end(name, secret):
    assert inline_secrets.secret_name(name) is secret


@pytest.mark.parametrize(("value", "shape"), [
    (FAKE["hf"], "hf-token"), ("hf_" + "A" * 29, None), (FAKE["ghp"], "github-token"),
    (FAKE["akia"], "aws-access-key"), ("AKIA" + "ABC", None), ("/fsx/models/hf_cache", None),
])
def test_probe_secret_value_shapes_and_their_near_misses(value, shape):
    assert inline_secrets.value_shape(value) == shape


@pytest.mark.parametrize(("argv", "env", "status", "fragment"), [
    (["python3", "train.py"], {"HF_TOKEN": "${HF_TOKEN}"}, Status.PASS, "no secret"),  # a reference, not a value
    (["python3", "train.py"], {"HF_TOKEN": ""}, Status.PASS, "no secret"),
    # rlcheck's marker is no value (what it hid is judged from Job.inline_secrets: tests/test_job_upstream.py).
    (["python3", "train.py"], {"HF_TOKEN": "<redacted>"}, Status.PASS, "no secret"),
    (["python3", "train.py", "--hf-token", "<redacted>", "--api-key=<redacted>"], {}, Status.PASS, "no secret"),
    (["python3", "train.py", "--hf-token", ""], {}, Status.PASS, "no secret"),
    (["python3", "train.py"], {"NOTE": FAKE["ghp"]}, Status.FAIL, "env NOTE (github-token shape)"),
    (["python3", "train.py", "--hf-token", "abc123"], {}, Status.FAIL, "argv token 3 (--hf-token, by name)"),
    (["python3", "train.py", "--hf-token=abc123"], {}, Status.FAIL, "argv token 2 (--hf-token, by name)"),
    (["python3", "train.py", "--hf-token", "--colocate"], {}, Status.PASS, "no secret"),
    (["python3", "train.py", "--max-tokens-per-gpu", "8192"], {}, Status.PASS, "no secret"),
    (["python3", "train.py", "--x", FAKE["akia"]], {}, Status.FAIL, "argv token 3 (aws-access-key shape)"),
])
def test_probe_inline_secrets(argv, env, status, fragment):
    verdict = inline_secrets.evaluate_inline_secrets(argv, env)
    assert verdict.status is status and fragment in verdict.summary
    for value in ("abc123", *FAKE.values()):
        assert value not in verdict.render()


def test_probe_redact_keeps_the_kind_and_hides_the_value():
    out = inline_secrets.redact(["--hf-token", "abc", "--input-key=prompt", "--api-key=v", FAKE["hf"], "--colocate"])
    assert out == ["--hf-token", "<redacted>", "--input-key=prompt", "--api-key=<redacted>", "<redacted:hf-token>",
                   "--colocate"]
    assert inline_secrets.redact(["--hf-token", "", "--api-key="]) == ["--hf-token", "", "--api-key="]  # none to hide


def test_probe_inline_secrets_judges_what_was_recorded_before_redaction():
    recorded = ["env HF_TOKEN (by name)"]
    verdict = inline_secrets.evaluate_inline_secrets(["python3", "train.py"], {"HF_TOKEN": "<redacted>"}, recorded)
    assert verdict.status is Status.FAIL and "1 secret value(s)" in verdict.summary and recorded[0] in verdict.summary


ARGV = ["python3", "train.py", "--moe-layer-freq", "[1]*48", "--tp", "2"]


@pytest.mark.parametrize(("meant", "got", "entrypoint", "shell_error", "status"), [
    (ARGV, ARGV, "", "", Status.PASS),  # no shell in between
    (["python3", "train.py"], ["python3", "train.py"], "python3 train.py", "", Status.PASS),
    (ARGV, ARGV, subprocess.list2cmdline(ARGV), "", Status.WARN),  # bare bracket list
    (ARGV, ARGV, "python3 train.py --moe-layer-freq '[1]*48' --tp 2", "", Status.PASS),  # hand-quoted
    (ARGV, [*ARGV[:3], "1", *ARGV[4:]], subprocess.list2cmdline(ARGV), "", Status.FAIL),  # globbed
    (ARGV, ARGV[:3], subprocess.list2cmdline(ARGV), "", Status.FAIL),  # lost tokens
    (ARGV, ARGV, "x", "the entrypoint never starts python", Status.FAIL),
])
def test_probe_argv_intact(meant, got, entrypoint, shell_error, status):
    verdict = argv_shell.evaluate_argv_intact(meant, got, entrypoint, shell_error)
    assert verdict.status is status, verdict.render()
    if status is Status.FAIL:
        assert verdict.failure_id == "ray-argv-loss" and verdict.remedy
    if status is Status.WARN:
        assert verdict.failure_id == "model-args-glob"


def test_probe_difference_names_the_first_changed_token():
    assert argv_shell.difference(ARGV, ARGV) == ""
    line = argv_shell.difference(ARGV, ARGV[:3])
    assert "6 token(s) meant, 3 received" in line and "token 3: meant '[1]*48', got '(nothing)'" in line


def test_probe_bare_tokens_only_where_list2cmdline_leaves_them():
    assert argv_shell.bare_tokens(["a b*", "x;y", "plain", "$HOME"]) == [
        "argv token 1 `x;y` reaches /bin/sh unquoted: the shell interprets it",
        "argv token 3 `$HOME` reaches /bin/sh unquoted: the shell interprets it"]


def test_probe_argv_intact_unknown_when_the_trainer_is_in_a_file_not_here():
    verdict = argv_shell.evaluate_argv_intact(["bash", "/shared/run.sh"], ["bash", "/shared/run.sh"],
                                              "bash /shared/run.sh", "", "exit 127: /shared/run.sh not found")
    assert verdict.status is Status.UNKNOWN and "/shared/run.sh" in verdict.summary


ENV_PREFIXES = [
    # meant (tokens after `ray job submit --`), what /bin/sh gives the trainer, status
    (["FOO=1", "python3", "train.py", "--lr", "1e-6"], ["python3", "train.py", "--lr", "1e-6"], Status.PASS),
    (["A=1", "B=x y", "python3", "train.py"], ["python3", "train.py"], Status.PASS),
    (["env", "FOO=1", "python3", "train.py"], ["python3", "train.py"], Status.PASS),
    (["env", "-i", "-u", "BAR", "FOO=1", "python3", "train.py"], ["python3", "train.py"], Status.PASS),
    (["env", "--unset=BAR", "python3", "train.py"], ["python3", "train.py"], Status.PASS),
    # near misses: an assignment after the command is argv; a lost token is still a loss
    (["python3", "train.py", "FOO=1"], ["python3", "train.py"], Status.FAIL),
    (["FOO=1", "python3", "train.py", "--lr", "1e-6"], ["python3", "train.py", "--lr"], Status.FAIL),
    (["1FOO=1", "python3", "train.py"], ["python3", "train.py"], Status.FAIL),  # not a name: a command
]


@pytest.mark.parametrize(("meant", "got", "status"), ENV_PREFIXES, ids=[" ".join(r[0])[:40] for r in ENV_PREFIXES])
def test_argv_intact_reads_environment_prefixes_as_the_shell_does(meant, got, status):
    """`NAME=value` and `env ... NAME=value` before the command set the trainer's environment, not its argv."""
    verdict = argv_shell.evaluate_argv_intact(meant, got, entrypoint=" ".join(meant))
    assert verdict.status is status, verdict.render()
