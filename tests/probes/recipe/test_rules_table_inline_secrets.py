"""Secrets inlined into a launch as a rule table (rlcheck/probes/recipe/inline_secrets.py): what one token carries, how
an entrypoint splits into words as sh splits it, which words of it are prefixes, wrappers and commands, every place
named, the --job-env values found again, the redaction marker, what redact and redact_entrypoint write, and each
verdict whole. Token values are built here at run time (no secret-shaped literal is committed). The 1 MB hostile
inputs (linear time) stay in tests/test_secrets.py."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck.probes.recipe import inline_secrets as secrets
from rlcheck.probes.recipe.inline_secrets import Hit
from rlcheck.verdict import Status

HF = "hf_" + "Ab1" * 12
GHP = "ghp_" + "x1Y" * 12
TRAIN = ["python3", "train.py"]


@pytest.mark.parametrize(("token", "before", "hit"), [
    ("HF_TOKEN=abc123", "", Hit("HF_TOKEN", "by name", "abc123")),
    ("--hf-token=abc123", "", Hit("--hf-token", "by name", "abc123")),
    ("-api-key=abc123", "", Hit("-api-key", "by name", "abc123")),
    ("trainer.logger.api_key=a=b", "", Hit("trainer.logger.api_key", "by name", "a=b")),
    ("HF_TOKEN=multi\nline", "", Hit("HF_TOKEN", "by name", "multi\nline")),
    ("HF_TOKEN=" + HF, "", Hit("HF_TOKEN", "by name", HF)),  # the name first
    ("abc123", "--hf-token", Hit("--hf-token", "by name", "abc123")),
    ("abc123", "-api-key", Hit("-api-key", "by name", "abc123")),
    (HF, "--note", Hit("", "hf-token shape", HF)),
    ("--x=" + GHP, "", Hit("", "github-token shape", "--x=" + GHP)),
    # near misses
    ("HF_TOKEN=${HF_TOKEN}", "", None), ("HF_TOKEN=", "", None), ("HF_TOKEN=<redacted>", "", None),
    ("HF_TOKEN=42", "", None), ("---hf-token=abc123", "", None), ("MASTER_PORT=abc123", "", None),
    ("9HF_TOKEN=abc123", "", None), ("abc123", "HF_TOKEN", None), ("abc123", "--hf-token=x", None),
    ("--colocate", "--hf-token", None), ("-5", "--hf-token", None), ("$HF_TOKEN", "--hf-token", None),
    ("abc123", "--input-key", None), ("abc123", "", None), ("", "", None),
    ("abc123", "--x=hf-token", None),  # --x took its value inline: no secret flag's value follows
])
def test_rules_table_inline_secrets_token(token, before, hit):
    assert secrets.token_secret(token, before) == hit


@pytest.mark.parametrize(("command", "words"), [
    ("", []), ("   ", []), ("a", ["a"]), ("a b\tc\n d ", ["a", "b", "c", "d"]),
    ("'a b'c", ["a bc"]), ("'a' 'b'", ["a", "b"]), ("''", [""]), ("x'' y", ["x", "y"]),
    ("'unbalanced end", ["unbalanced end"]),
    ("a'\"b'", ['a"b']), ("'a\\b'", ["a\\b"]),
    ('"a b"', ["a b"]), ('""', [""]), ('"a\\"b"', ['a"b']), ('"a\\\\b"', ["a\\b"]), ('"\\$x"', ["$x"]),
    ('"\\`x"', ["`x"]), ('"\\n\\a"', ["\\n\\a"]), ('"a\\\nb"', ["ab"]), ('"unbalanced end', ["unbalanced end"]),
    ('"a\\', ["a\\"]), ("\"it's\"", ["it's"]), ('x"y z"w', ["xy zw"]),
    ("a\\ b", ["a b"]), ("\\'x", ["'x"]), ("a\\", ["a"]),
    # a line continuation is removed: it neither ends nor starts a word
    ("a \\\n b", ["a", "b"]), ("a\\\nb", ["ab"]), ("\\\n", []), ("--hf-token \\\n  abc", ["--hf-token", "abc"]),
])
def test_rules_table_inline_secrets_split_as_sh(command, words):
    assert secrets._split(command) == words


ENTRYPOINTS = [
    # prefixes of a command, through env and the wrappers
    ("HF_TOKEN=abc123 python3 train.py", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("NOTE=" + HF + " python3 train.py", ["entrypoint prefix NOTE (hf-token shape)"]),
    ("A=1 HF_TOKEN=abc123 DB_PASSWORD=hunter22 python3 train.py",
     ["entrypoint prefix HF_TOKEN (by name)", "entrypoint prefix DB_PASSWORD (by name)"]),
    ("env -i -u FOO --unset=BAR HF_TOKEN=abc123 python3", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("env -u HF_TOKEN=abc123 python3", []),  # the name -u removes, not an assignment
    ("env --unset HF_TOKEN=abc123 python3", []),
    ("env -C HF_TOKEN=abc123 python3", []),
    ("env --chdir HF_TOKEN=abc123 python3", []),
    ("env -i HF_TOKEN=abc123 python3", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("nohup -u HF_TOKEN=abc123 python3", ["entrypoint token 2 (HF_TOKEN, by name)"]),  # -u: no env option there
    ("-u HF_TOKEN=abc123 python3", ["entrypoint token 1 (HF_TOKEN, by name)"]),
    ("true && -u HF_TOKEN=abc123 python3", ["entrypoint token 3 (HF_TOKEN, by name)"]),
    ("export HF_TOKEN=abc123; python3 train.py", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("exec nice time command HF_TOKEN=abc123 python3", ["entrypoint prefix HF_TOKEN (by name)"]),
    # after the command's name the words are its arguments
    ("python3 train.py HF_TOKEN=abc123", ["entrypoint token 2 (HF_TOKEN, by name)"]),
    ("python3 train.py --hf-token abc123 --api-key=x2", ["entrypoint token 3 (--hf-token, by name)",
                                                         "entrypoint token 4 (--api-key, by name)"]),
    ("--x=1 HF_TOKEN=abc123 python3", ["entrypoint token 1 (HF_TOKEN, by name)"]),
    ("python3 train.py --hf-token \\\n  abc123", ["entrypoint token 3 (--hf-token, by name)"]),
    # a separator starts the next command
    ("cd /w && HF_TOKEN=abc123 python3", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("cd /w || HF_TOKEN=abc123 python3", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("cd /w ; HF_TOKEN=abc123 python3", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("cat f | HF_TOKEN=abc123 python3", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("sleep 1 & HF_TOKEN=abc123 python3", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("( HF_TOKEN=abc123 python3 )", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("{ HF_TOKEN=abc123 python3 ; }", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("if true; then HF_TOKEN=abc123 python3; fi", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("for i in 1; do HF_TOKEN=abc123 python3; done", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("if false; then x; else HF_TOKEN=abc123 python3; fi", ["entrypoint prefix HF_TOKEN (by name)"]),
    ("env -u X true && env HF_TOKEN=abc123 python3", ["entrypoint prefix HF_TOKEN (by name)"]),
    # a word that holds a command is read as one, two levels deep
    ("bash -c 'HF_TOKEN=abc123 python3 train.py'", ["entrypoint token 2: prefix HF_TOKEN (by name)"]),
    ("bash -c 'python3 train.py --hf-token abc123'", ["entrypoint token 2: token 3 (--hf-token, by name)"]),
    ("sh -c \"bash -c 'HF_TOKEN=abc123 python3'\"", ["entrypoint token 2: token 2: prefix HF_TOKEN (by name)"]),
    # three levels: the word is judged whole
    ("sh -c \"bash -c 'sh -c \\\"HF_TOKEN=abc123 python3\\\"'\"",
     ["entrypoint token 2: token 2: token 2 (HF_TOKEN, by name)"]),
    ("sh -c \"bash -c 'sh -c \\\"python3 " + HF + "\\\"'\"",
     ["entrypoint token 2: token 2: token 2 (hf-token shape)"]),
    ("bash -c 'python3 train.py --seed 1'", []),
    ("HF_TOKEN=abc123 bash -c 'API_KEY=x2 python3'",
     ["entrypoint prefix HF_TOKEN (by name)", "entrypoint token 3: prefix API_KEY (by name)"]),
    ("echo 'a  b' " + HF, ["entrypoint token 2 (hf-token shape)"]),
    ("echo '" + HF + " x'", ["entrypoint token 1: token 0 (hf-token shape)"]),
    # near misses
    ("MASTER_PORT=29500 HF_TOKEN=$HF_TOKEN python3 train.py --input-key prompt", []),
    ("abc123 --hf-token", []),  # the first word follows nothing
    ("", []),
]


@pytest.mark.parametrize(("entrypoint", "places"), ENTRYPOINTS)
def test_rules_table_inline_secrets_entrypoint_places(entrypoint, places):
    assert secrets.find_inline_secrets((), {}, entrypoint) == places


def test_rules_table_inline_secrets_every_place_in_order():
    argv = [*TRAIN, "--hf-token", "abc123", HF, "--seed", "1"]
    env = {"PYTHONPATH": "/opt", "WANDB_API_KEY": "k3y-value", "NOTE": GHP, "HF_TOKEN": "${HF_TOKEN}", "EMPTY_KEY": ""}
    entrypoint = "DB_PASSWORD=hunter22 python3 train.py --hf-token abc123 " + HF + " --api-key x2"
    assert secrets.find_inline_secrets(argv, env, entrypoint, ("ignored", "HF_TOKEN=zz")) == [
        "env WANDB_API_KEY (by name)", "env NOTE (github-token shape)", "argv token 3 (--hf-token, by name)",
        "argv token 4 (hf-token shape)", "entrypoint prefix DB_PASSWORD (by name)",
        "entrypoint token 7 (--api-key, by name)"]  # the argv's own tokens are judged once, as argv
    assert secrets.find_inline_secrets(argv[:2], {}, "", ["HF_TOKEN=zz", *TRAIN, "--api-key", "x2"]) == [
        "entrypoint prefix HF_TOKEN (by name)", "entrypoint token 4 (--api-key, by name)"]
    assert secrets.find_inline_secrets(["abc123", "--api-key", "x2"], {}) == ["argv token 2 (--api-key, by name)"]
    assert secrets.find_inline_secrets(["abc123", "--hf-token"], {}) == []  # the first token follows nothing
    assert secrets.find_inline_secrets(TRAIN, {}, intended=["HF_TOKEN=zz", *TRAIN]) == [
        "entrypoint prefix HF_TOKEN (by name)"]  # no entrypoint: the intended argv


def test_rules_table_inline_secrets_known_values_under_any_name():
    known = {"HF_TOKEN": "0123456789abcdef", "WANDB_API_KEY": "wandb-value-42"}
    env = {"NOTE": "x0123456789abcdefx", "OTHER": "none", "W": "wandb-value-42"}
    argv = [*TRAIN, "--wandb-group", "0123456789abcdef", "--x=wandb-value-42"]
    assert secrets.known_places(argv, env, "python3 train.py --wandb-group 0123456789abcdef", known) == [
        "env NOTE (the value of --job-env HF_TOKEN)", "argv token 3 (the value of --job-env HF_TOKEN)",
        "env W (the value of --job-env WANDB_API_KEY)", "argv token 4 (the value of --job-env WANDB_API_KEY)"]
    assert secrets.known_places(TRAIN, {}, "WANDB=wandb-value-42 python3 train.py", known) == [
        "entrypoint (the value of --job-env WANDB_API_KEY)"]
    assert secrets.known_places(TRAIN, {"A": "b"}, "python3 train.py", known) == []


@pytest.mark.parametrize(("found", "unique"), [
    ([], []),
    (["env A (by name)", "env A (the value of --job-env B)", "env AB (by name)", "argv token 1 (x shape)",
      "argv token 1 (y shape)", "argv token 10 (by name)"],
     ["env A (by name)", "env AB (by name)", "argv token 1 (x shape)", "argv token 10 (by name)"]),
    (["entrypoint", "entrypoint (z)"], ["entrypoint"]),
    (["env A (x (by name)", "env A (x (y shape)", "env A (z shape)"], ["env A (x (by name)"]),  # up to the first ' ('
])
def test_rules_table_inline_secrets_unique_places(found, unique):
    assert secrets.unique_places(found) == unique


DETAILS = "values not shown; Ray keeps the entrypoint, argv and runtime env in the job's metadata"


@pytest.mark.parametrize(("argv", "env", "recorded", "entrypoint", "status", "summary"), [
    (TRAIN, {"A": "1", "B": "2"}, (), "", Status.PASS,
     "no secret in 2 argv token(s), 2 runtime env var(s) or the entrypoint's prefixes"),
    ((), {}, (), "", Status.PASS, "no secret in 0 argv token(s), 0 runtime env var(s) or the entrypoint's prefixes"),
    ([*TRAIN, "--hf-token", "abc123"], {"HF_TOKEN": "abc123"}, (), "", Status.FAIL,
     "2 secret value(s) inlined into the launch: env HF_TOKEN (by name); argv token 3 (--hf-token, by name)"),
    # what the rules see now comes first; what was recorded before the redaction follows, once per place
    ([*TRAIN, "--wandb-key", "abc123"], {}, ["argv token 3 (the value of --job-env W)", "env X (by name)"], "",
     Status.FAIL, "2 secret value(s) inlined into the launch: argv token 3 (--wandb-key, by name); env X (by name)"),
    (TRAIN, {}, ["env X (by name)"], "", Status.FAIL,
     "1 secret value(s) inlined into the launch: env X (by name)"),
    (TRAIN, {}, (), "HF_TOKEN=abc123 python3 train.py", Status.FAIL,
     "1 secret value(s) inlined into the launch: entrypoint prefix HF_TOKEN (by name)"),
])
def test_rules_table_inline_secrets_verdicts(argv, env, recorded, entrypoint, status, summary):
    verdict = secrets.evaluate_inline_secrets(argv, env, recorded, entrypoint=entrypoint)
    failed = status is Status.FAIL
    assert (verdict.status, verdict.summary, verdict.details, verdict.remedy) == (
        status, summary, DETAILS if failed else "", secrets.REMEDY if failed else "")
    assert verdict.failure_id is None


def test_rules_table_inline_secrets_verdict_without_an_entrypoint_reads_the_intended_argv():
    verdict = secrets.evaluate_inline_secrets(TRAIN, {}, intended=["HF_TOKEN=zz", *TRAIN])
    assert verdict.summary == "1 secret value(s) inlined into the launch: entrypoint prefix HF_TOKEN (by name)"


@dataclasses.dataclass(frozen=True)
class Captured:
    entrypoint: str = ""
    intended_argv: tuple[str, ...] = ()
    inline_secrets: tuple[str, ...] = ()


@pytest.mark.parametrize(("job", "summary"), [
    (None, "no secret in 2 argv token(s), 0 runtime env var(s) or the entrypoint's prefixes"),
    (Captured(entrypoint="HF_TOKEN=abc123 python3 train.py", intended_argv=("API_KEY=x2", *TRAIN)),
     "1 secret value(s) inlined into the launch: entrypoint prefix HF_TOKEN (by name)"),
    (Captured(intended_argv=("API_KEY=x2", *TRAIN)),
     "1 secret value(s) inlined into the launch: entrypoint prefix API_KEY (by name)"),
    (Captured(inline_secrets=("env HF_TOKEN (by name)",)),
     "1 secret value(s) inlined into the launch: env HF_TOKEN (by name)"),
])
def test_rules_table_inline_secrets_launch(job, summary):
    assert secrets.evaluate_launch(TRAIN, {}, job).summary == summary


@pytest.mark.parametrize(("value", "marker"), [
    ("<redacted>", True), ("<redacted:hf-token>", True), ("--hf-token=<redacted>", True),
    ("--x=<redacted:jwt>", True), ("<redacted", True),
    ("HF_TOKEN=<redacted>", False), ("--hf-token", False), ("--a=b=<redacted>", False), ("x<redacted>", False),
    ("<redact>", False), ("<redacte", False), ("", False), ("-x=<redacted>", False),
])
def test_rules_table_inline_secrets_marker(value, marker):
    assert secrets.is_marker(value) is marker


def test_rules_table_inline_secrets_redacted_places():
    env = {"HF_TOKEN": "<redacted>", "A": "b", "NOTE": "<redacted:hf-token>"}
    argv = [*TRAIN, "--hf-token", "<redacted>", "--api-key=<redacted>", "--x"]
    assert secrets.redacted_places(argv, env, "HF_TOKEN=<redacted> python3 train.py") == [
        "env HF_TOKEN (redacted by rlcheck job capture)", "env NOTE (redacted by rlcheck job capture)",
        "argv token 3 (redacted by rlcheck job capture)", "argv token 4 (redacted by rlcheck job capture)",
        "entrypoint (redacted by rlcheck job capture)"]
    assert secrets.redacted_places(TRAIN, {}, "python3 train.py <redacted:jwt>") == [
        "entrypoint (redacted by rlcheck job capture)"]
    assert secrets.redacted_places(TRAIN, {"A": "b"}, "python3 train.py <redacte") == []
    assert secrets.redacted_places(TRAIN, {}) == []


@pytest.mark.parametrize(("argv", "redacted"), [
    (["--hf-token", "abc123", "--seed", "1"], ["--hf-token", "<redacted>", "--seed", "1"]),
    (["abc123", "--hf-token"], ["abc123", "--hf-token"]),  # the first token follows nothing
    (["--api-key=a=b", "HF_TOKEN=abc123"], ["--api-key=<redacted>", "HF_TOKEN=<redacted>"]),
    (["--note", HF, "--x=" + GHP], ["--note", "<redacted:hf-token>", "--x=<redacted:github-token>"]),
    (["--input-key", "prompt"], ["--input-key", "prompt"]),
    ([], []),
])
def test_rules_table_inline_secrets_redact(argv, redacted):
    assert secrets.redact(argv) == redacted


@pytest.mark.parametrize(("entrypoint", "redacted"), [
    ("python3 train.py --seed 1", "python3 train.py --seed 1"),
    ("HF_TOKEN=abc123 python3 train.py --api-key abc123x --seed 1",
     "HF_TOKEN=<redacted> python3 train.py --api-key <redacted> --seed 1"),
    # whole words only: a one-letter value hides no other 'a'
    ("HF_TOKEN=a python3 a.py --seed a", "HF_TOKEN=<redacted> python3 a.py --seed <redacted>"),
    ("a --hf-token a", "<redacted> --hf-token <redacted>"),
    ("python3 t.py --hf-token 'x1' --api-key \"x2\" && echo", "python3 t.py --hf-token '<redacted>' --api-key "
                                                            "\"<redacted>\" && echo"),
    ("python3 t.py --hf-token x1 && echo x1; echo x1| cat; (echo x1) & echo x1&",
     "python3 t.py --hf-token <redacted> && echo <redacted>; echo <redacted>| cat; (echo <redacted>) & echo "
     "<redacted>&"),
    ("python3 t.py --hf-token x1x --api-key x1", "python3 t.py --hf-token <redacted> --api-key <redacted>"),
    # the longest value first: one value inside another is hidden with it
    ("python3 t.py --api-key 'a en' --hf-token en", "python3 t.py --api-key '<redacted>' --hf-token <redacted>"),
    # a value not written as it reads (a shell escape inside): re-quoted token by token
    ('python3 t.py --api-key "a\\"b" --seed 1', "python3 t.py --api-key '<redacted>' --seed 1"),
    ("HF_TOKEN=abc123 \\\n  python3 t.py --seed 1", "HF_TOKEN=<redacted> \\\n  python3 t.py --seed 1"),
    # shapes, then names
    ("python3 t.py " + HF, "python3 t.py <redacted:hf-token>"),
    ("", ""),
])
def test_rules_table_inline_secrets_redact_entrypoint(entrypoint, redacted):
    assert secrets.redact_entrypoint(entrypoint) == redacted
