"""The one secret rule (rlcheck.secret_guard) on both sides: names by family, values by shape, every place a launch
carries them, and the scrub every writer applies. Token values are built here at run time (no secret-shaped literal
is committed)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from rlcheck import secret_guard
from rlcheck.probes.recipe import inline_secrets
from rlcheck.secret_guard import is_secret_name, scrub, scrub_text, secret_shape
from rlcheck.verdict import Status

ROOT = Path(__file__).resolve().parents[1]
FAKE = {
    "hf-token": "hf_" + "Ab1" * 12, "ghp": "ghp_" + "x1Y" * 12, "gho": "gho_" + "Q7r" * 12, "ghs": "ghs_" + "m2N" * 12,
    "ghu": "ghu_" + "p3K" * 12, "ghr": "ghr_" + "z8T" * 12, "github-pat": "github_pat_" + "11AB" + "_c9D" * 15,
    "openai-key": "sk-" + "T3Blbk" * 8, "openai-proj": "sk-proj-" + "aB3_-" * 10,
    "anthropic-key": "sk-ant-api03-" + "Zx9-" * 20, "aws-access-key": "AKIA" + "ABCDEFGH23456789",
    "aws-session-key": "ASIA" + "QRSTUVWX23456789", "jwt": "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0In0" +
    "." + "s1G" * 8, "slack-token": "xoxb-" + "1234567890-" + "aZ" * 12, "gitlab-token": "glpat-" + "x7Y" * 7,
    "google-api-key": "AIza" + "S9x" * 11 + "Q0", "url-password": "Pw" + "9x" * 6,
}
URL = "postgres://rl:" + FAKE["url-password"] + "@db.internal:5432/rl"

# Every decision, both sides. Near misses would stop good jobs: SLIME's dict-key flags, token counts and text tokens.
NAMES = [
    ("HF_TOKEN", True), ("HF_TOKEN_RO", True), ("HUGGING_FACE_HUB_TOKEN", True), ("GITHUB_TOKEN", True),
    ("RAY_AUTH_TOKEN", True), ("TOKEN", True), ("hf_token", True), ("GITHUB_ACCESSTOKEN", True),
    ("API_KEY", True), ("WANDB_API_KEY", True), ("WANDB_API_KEY_PROD", True), ("AWS_SECRET_ACCESS_KEY", True),
    ("OPENAI_API_KEY", True), ("OPENAI_KEY", True), ("STRIPE_APIKEY", True), ("SSH_KEY", True), ("RM_KEY", True),
    ("CLIENT_SECRET", True), ("SECRET_KEY_BASE", True), ("DB_PASSWORD", True), ("MYSQL_PASSWD", True),
    ("DB_PASS", True), ("DB_PWD", True), ("SSH_PASSPHRASE", True), ("GITHUB_PAT", True), ("GH_PAT_2", True),
    ("CREDENTIALS", True), ("AZURE_CREDENTIALS", True), ("trainer.logger.api_key", True),
    ("--wandb-key", True), ("--hf-token", True), ("--api-key", True), ("--admin-api-key", True),
    ("--ssl-keyfile-password", True), ("--openai-api-key", True), ("--db-password", True),
    # near misses: not secrets
    ("TOKENIZERS_PARALLELISM", False), ("PYTHONPATH", False), ("PATH", False), ("PWD", False), ("OLDPWD", False),
    ("MASTER_PORT", False), ("MASTER_ADDR", False), ("SSH_AUTH_SOCK", False), ("KEY_PREFIX", False),
    ("CACHE_KEY", False), ("REWARD_KEY", False), ("NCCL_IB_PKEY", False), ("MONKEY", False), ("WANDB_PROJECT", False),
    ("SECRET_NAME", False), ("HF_TOKEN_PATH", False), ("PASSWORD_FILE", False), ("AWS_ACCESS_KEY_ID", False),
    ("GOOGLE_APPLICATION_CREDENTIALS", False), ("MAX_TOKENS", False), ("--max-tokens-per-gpu", False),
    ("--moe-token-dispatcher-type", False), ("--input-key", False), ("--label-key", False), ("--reward-key", False),
    ("--rm-key", False), ("--tool-key", False), ("--metadata-key", False), ("--use-tokenizer", False),
    ("--tokenizer-type", False), ("--fim-pad-token", False), ("--bucket-time-to-first-token", False),
    ("--rollout-stop-token-ids", False), ("--ssl-keyfile", False), ("--wandb-key-file", False), ("--pass-rate", False),
    ("--log-passrate", False), ("--wandb-group", False), ("--rm-url", False), ("", False),
]


@pytest.mark.parametrize(("name", "secret"), NAMES)
def test_secret_name_families_and_near_misses(name, secret):
    assert is_secret_name(name) is secret


def _schema_flags() -> set[str]:
    flags: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            flags.update(f for f in node.get("flags") or () if isinstance(f, str))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)
    for path in (ROOT / "rlcheck" / "data" / "frameworks").rglob("*.json"):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return flags


def test_secret_names_of_every_committed_slime_miles_and_sglang_flag():
    """Of the flags SLIME, Miles, Megatron and SGLang accept that mention a key, token, secret or pass, exactly these
    take a secret; none of the others (--input-key, --max-tokens-per-gpu, --fim-pad-token, ...) is flagged."""
    secret = {"--wandb-key", "--api-key", "--admin-api-key", "--ssl-keyfile-password"}
    named = {f for f in _schema_flags() if re.search(r"key|token|secret|pass|cred|pwd|pat", f, re.IGNORECASE)}
    assert len(named) > 50 and secret <= named
    assert {f for f in named if is_secret_name(f)} == secret


SHAPES = [
    *[(value, kind) for kind, value in FAKE.items() if kind not in ("ghp", "gho", "ghs", "ghu", "ghr", "github-pat",
                                                                   "openai-proj", "aws-session-key", "url-password")],
    *[(FAKE[k], "github-token") for k in ("ghp", "gho", "ghs", "ghu", "ghr", "github-pat")],
    (FAKE["openai-proj"], "openai-key"), (FAKE["aws-session-key"], "aws-access-key"), (URL, "url-credentials"),
    ("redis://:" + FAKE["url-password"] + "@cache:6379", "url-credentials"),
    ("--db=" + URL, "url-credentials"), ("HF_TOKEN=" + FAKE["hf-token"], "hf-token"),
    # near misses
    ("hf_" + "A" * 29, None), ("/fsx/models/hf_cache", None), ("/root/Qwen3-4B", None), ("ghp_" + "b" * 29, None),
    ("3f7a9c" * 6 + "beef", None), ("123e4567-e89b-12d3-a456-426614174000", None), ("risk-" + "a" * 40, None),
    ("task-queue-" + "A1" * 20, None), ("sk-learn-regression-model-v2-final-checkpoint", None),
    ("AKIA" + "ABC", None), ("AKIA" + "A" * 20, None), ("eyJhbGciOiJIUzI1NiJ9", None), ("eyJabcdef.eyJabcdef", None),
    ("http://127.0.0.1:8265", None), ("postgres://rl@db:5432/rl", None), ("ssh://git@github.com/org/repo", None),
    ("postgres://rl:${DB_PASS}@db/rl", None), ("xoxb-short", None), ("glpat-short", None), ("AIza" + "S" * 20, None),
    ("--max-tokens-per-gpu", None), ("", None),
]


@pytest.mark.parametrize(("value", "kind"), SHAPES)
def test_secret_value_shapes_and_near_misses(value, kind):
    assert secret_shape(value) == kind


# Where a launch carries a secret: (argv, env, entrypoint, intended, the place named, or None for PASS).
TRAIN = ["python3", "train.py"]
PLACES = [
    ([*TRAIN, "--hf-token", "abc123"], {}, "", (), "argv token 3 (--hf-token, by name)"),
    ([*TRAIN, "--wandb-key=abc123"], {}, "", (), "argv token 2 (--wandb-key, by name)"),
    ([*TRAIN, FAKE["openai-key"]], {}, "", (), "argv token 2 (openai-key shape)"),
    ([*TRAIN, "trainer.api_key=abc123"], {}, "", (), "argv token 2 (trainer.api_key, by name)"),
    ([*TRAIN, "--rm-url", URL], {}, "", (), "argv token 3 (url-credentials shape)"),
    (TRAIN, {}, "HF_TOKEN=" + FAKE["hf-token"] + " python3 train.py", (), "entrypoint prefix HF_TOKEN (by name)"),
    (TRAIN, {}, "env WANDB_API_KEY=0123abcd9 python3 train.py", (), "entrypoint prefix WANDB_API_KEY (by name)"),
    (TRAIN, {}, "env -i PATH=/usr/bin DB_PASSWORD=hunter22 python3 train.py", (),
     "entrypoint prefix DB_PASSWORD (by name)"),
    (TRAIN, {}, "env -u FOO NOTE=" + FAKE["ghp"] + " python3 train.py", (), "entrypoint prefix NOTE (github-token"),
    (TRAIN, {}, "cd /work && export HF_TOKEN_RO=abc123; python3 train.py", (),
     "entrypoint prefix HF_TOKEN_RO (by name)"),
    (TRAIN, {}, "bash -c 'GH_PAT=abc123 python3 train.py'", (), "entrypoint token 2: prefix GH_PAT (by name)"),
    (TRAIN, {}, "", ("HF_TOKEN=abc123", *TRAIN), "entrypoint prefix HF_TOKEN (by name)"),
    (TRAIN, {"WANDB_API_KEY_PROD": "abc123"}, "", (), "env WANDB_API_KEY_PROD (by name)"),
    (TRAIN, {"DATABASE_URL": URL}, "", (), "env DATABASE_URL (url-credentials shape)"),
    (TRAIN, {"NOTE": FAKE["jwt"]}, "", (), "env NOTE (jwt shape)"),
    # not secrets
    ([*TRAIN, "--input-key", "prompt", "--label-key", "label", "--reward-key", "score", "--max-tokens-per-gpu", "8192",
      "--moe-token-dispatcher-type", "alltoall", "--tokenizer-type", "HuggingFaceTokenizer", "--rm-url",
      "http://rm:8000/reward", "--hf-checkpoint", "/root/Qwen3-4B", "--wandb-key-file", "/secrets/wandb"], {}, "", (),
     None),
    (TRAIN, {}, "MASTER_PORT=29500 TOKENIZERS_PARALLELISM=false PYTHONPATH=/opt/Megatron-LM python3 train.py", (),
     None),
    (TRAIN, {}, "HF_TOKEN=$HF_TOKEN WANDB_API_KEY=${WANDB_API_KEY} python3 train.py", (), None),
    (TRAIN, {}, "env -u HF_TOKEN python3 train.py", (), None),
    (TRAIN, {"HF_TOKEN": "", "RAY_ADDRESS": "http://head:8265", "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock"}, "", (), None),
]


@pytest.mark.parametrize(("argv", "env", "entrypoint", "intended", "place"), PLACES)
def test_secret_found_in_every_place_a_launch_carries_it(argv, env, entrypoint, intended, place):
    verdict = inline_secrets.evaluate_inline_secrets(argv, env, entrypoint=entrypoint, intended=intended)
    assert verdict.status is (Status.FAIL if place else Status.PASS), verdict.summary
    assert place is None or place in verdict.summary
    for value in ("abc123", "hunter22", "0123abcd9", *FAKE.values()):
        assert value not in verdict.render()


def test_secret_job_env_value_found_under_any_name():
    known = {"HF_TOKEN": "0123456789abcdef0123"}
    places = inline_secrets.known_places([*TRAIN, "--wandb-group", known["HF_TOKEN"]], {"NOTE": known["HF_TOKEN"]},
                                         "python3 train.py", known)
    assert places == ["env NOTE (the value of --job-env HF_TOKEN)", "argv token 3 (the value of --job-env HF_TOKEN)"]
    verdict = inline_secrets.evaluate_inline_secrets(TRAIN, {}, places)
    assert verdict.status is Status.FAIL and "2 secret value(s)" in verdict.summary


SCRUBS = [
    ("python3 train.py --hf-token abc123 --seed 1", "python3 train.py --hf-token <redacted> --seed 1"),
    ("HF_TOKEN=abc123 python3 train.py", "HF_TOKEN=<redacted> python3 train.py"),
    ('{"WANDB_API_KEY": "abc123", "PYTHONPATH": "/opt"}', '{"WANDB_API_KEY": "<redacted>", "PYTHONPATH": "/opt"}'),
    ("DB_PASSWORD: hunter22", "DB_PASSWORD: <redacted>"),
    (f"db {URL}", "db postgres://rl:<redacted>@db.internal:5432/rl"),
    (f"token {FAKE['hf-token']}.", "token <redacted:hf-token>."),
    # left as written
    ("--input-key prompt --max-tokens-per-gpu 8192", "--input-key prompt --max-tokens-per-gpu 8192"),
    ("HF_TOKEN=${HF_TOKEN} env HF_TOKEN (by name); argv token 3 (--hf-token, by name)",
     "HF_TOKEN=${HF_TOKEN} env HF_TOKEN (by name); argv token 3 (--hf-token, by name)"),
    ("ray at http://127.0.0.1:8265, git@github.com:org/repo", "ray at http://127.0.0.1:8265, git@github.com:org/repo"),
]


@pytest.mark.parametrize(("text", "scrubbed"), SCRUBS)
def test_secret_scrub_text_hides_values_by_name_and_shape(text, scrubbed):
    assert scrub_text(text, known=()) == scrubbed


def test_secret_scrub_document_hides_secret_keys_known_values_and_keeps_the_rest():
    secret_guard.remember(["rememberedValue0042", "short"])  # too short to look for as text: not remembered
    doc = {"env": {"HF_TOKEN": "abc123", "EMPTY_TOKEN": "", "N": 3}, "argv": ("--x", "rememberedValue0042"),
           "summary": "short and sweet", "counts": {"PASS": 2}}
    assert scrub(doc) == {"env": {"HF_TOKEN": "<redacted>", "EMPTY_TOKEN": "", "N": 3}, "argv": ["--x", "<redacted>"],
                          "summary": "short and sweet", "counts": {"PASS": 2}}


def test_secret_redact_entrypoint_hides_values_where_they_stand():
    entry = f"HF_TOKEN={FAKE['hf-token']} python3 train.py --api-key x --exp-name x1 --rm-url {URL}"
    assert inline_secrets.redact_entrypoint(entry) == (
        "HF_TOKEN=<redacted> python3 train.py --api-key <redacted> --exp-name x1 "
        "--rm-url postgres://rl:<redacted>@db.internal:5432/rl")
    assert inline_secrets.redact_entrypoint("python3 train.py --seed 1") == "python3 train.py --seed 1"


HOSTILE = ["hf_", "A", "eyJ", "eyJaaaaa.", "xoxb-", "sk-", "sk-proj-", "a://b:", "b:", "A=", "--hf-token ", "AKIA",
           "github_pat_", "-----BEGIN ", '"', "'", "x ", "HF_TOKEN=\"", "glpat-", "AIza", "a.b"]


@pytest.mark.parametrize("unit", HOSTILE)
def test_secret_rules_are_linear_on_a_1_mb_hostile_token(unit):
    token = unit * (1_000_000 // len(unit))
    started = time.monotonic()
    inline_secrets.evaluate_inline_secrets([*TRAIN, token], {"NOTE": token}, entrypoint=f"python3 train.py '{token}'")
    inline_secrets.redact([*TRAIN, token])
    inline_secrets.redact_entrypoint(token)
    scrub_text(token)
    is_secret_name(token)
    assert time.monotonic() - started < 30  # seconds; a quadratic pattern would take hours
