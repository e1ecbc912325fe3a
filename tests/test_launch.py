"""Argv-safe submission: every recipe's argv arrives token for token through a real Ray job; no secrets sent."""

from __future__ import annotations

import sys

import pytest

from rlcheck import recipes
from rlcheck.cluster import launch
from tests import argv_probe
from tests.test_recipes import FITS

HOSTILE = ["--note", "two words", "[1,1,1]", "[0]*3+[1]*75", "$HOME", "${MODEL_ARGS[@]}", "'single'", '"double"',
           "*", "back\\slash", "semi;colon", "`uname`", "", "tab\there"]


@pytest.mark.slow
@pytest.mark.parametrize("recipe_id", recipes.RECIPE_IDS)
def test_launch_round_trip_through_ray(local_ray, tmp_path, recipe_id):
    recipe = recipes.get(recipe_id, sorted(FITS[recipe_id])[0])
    (tmp_path / "1").write_text("")  # a glob decoy, as in the seed's working directory
    printer = argv_probe.write_printer(tmp_path)
    argv = [sys.executable, str(printer), *recipe.argv()[2:], *HOSTILE]
    job = launch.submit_argv(local_ray.dashboard_url, argv, runtime_env={"env_vars": {"RLCHECK_CASE": recipe_id}})
    outcome = launch.wait_job(local_ray.dashboard_url, job, timeout_s=120)
    assert outcome.status == "SUCCEEDED", outcome.logs[-2000:]
    assert argv_probe.printed_argv(outcome.logs) == argv[2:]


def test_launch_entrypoint_is_what_sh_parses_back():
    import shlex

    argv = ["python3", "train.py", *HOSTILE]
    assert shlex.split(launch.entrypoint(argv)) == argv
    with pytest.raises(ValueError, match=r"argv=\[\]: at least the program to run"):
        launch.entrypoint([])


@pytest.mark.parametrize(("runtime_env", "metadata", "message"), [
    ({"env_vars": {"HF_TOKEN": "x"}}, None, "secret-looking names ['HF_TOKEN']"),
    (None, {"AWS_SECRET_ACCESS_KEY": "x"}, "secret-looking names ['AWS_SECRET_ACCESS_KEY']"),
    ({"env_vars": {"NOTE": "hf_rlcheck_canary_77"}}, None, "the value of ['HF_TOKEN'] appears"),
])
def test_launch_refuses_secrets(monkeypatch, runtime_env, metadata, message):
    monkeypatch.setenv("HF_TOKEN", "hf_rlcheck_canary_77")
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        launch.submit_argv("http://127.0.0.1:1", ["python3", "train.py"], runtime_env=runtime_env, metadata=metadata)


def test_launch_refuses_a_secret_value_in_argv(monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", "wandb_canary_0123456789")
    with pytest.raises(ValueError, match=r"the value of \['WANDB_API_KEY'\] appears"):
        launch.check_no_secrets(["train.py", "--wandb-key", "wandb_canary_0123456789"], None, None)


@pytest.mark.parametrize("token", [
    'hf_"quoted"_canary_77',  # JSON escapes the quote: the escaped text no longer holds the raw value
    "hf_back\\slash_canary",
    "hf_ünïcödé_canary_77",
    "hf_line\nbreak_canary",
])
def test_launch_secret_value_with_json_escaped_characters_refused(monkeypatch, token):
    # Hostile input: a token that JSON encoding escapes, passed through argv and nested in the runtime env.
    monkeypatch.setenv("HF_TOKEN", token)
    with pytest.raises(ValueError, match=r"the value of \['HF_TOKEN'\] appears") as err:
        launch.check_no_secrets(["train.py", f"--hf={token}"], None, None)
    assert token not in str(err.value)
    with pytest.raises(ValueError, match=r"the value of \['HF_TOKEN'\] appears"):
        launch.check_no_secrets(["train.py"], {"pip": {"packages": [f"x @ https://u:{token}@host/x"]}}, None)


@pytest.mark.parametrize("name", ["GH_PAT", "DB_PASS", "OPENAI_KEY", "MYSQL_PASSWORD", "CLIENT_SECRET",
                                  "GITHUB_ACCESSTOKEN", "hf_token", "SSH_PASSPHRASE", "AWS_SECRET_ACCESS_KEY",
                                  "STRIPE_APIKEY"])
def test_launch_secret_like_names_refused(name):
    with pytest.raises(ValueError, match=rf"secret-looking names \['{name}'\]"):
        launch.check_no_secrets(["train.py"], {"env_vars": {name: "x"}}, None)


@pytest.mark.parametrize("name", ["PATH", "PYTHONPATH", "LD_LIBRARY_PATH", "TOKENIZERS_PARALLELISM",
                                  "CUDA_DEVICE_MAX_CONNECTIONS", "NCCL_IB_PKEY", "MONKEY", "FI_PROVIDER"])
def test_launch_ordinary_names_pass(monkeypatch, name):
    monkeypatch.setenv(name, "/usr/local/lib/python3.12/site-packages")  # long enough to be looked for
    launch.check_no_secrets(["train.py", "--path", "/usr/local/lib/python3.12/site-packages"],
                            {"env_vars": {name: "1"}}, None)


def test_launch_short_secret_values_not_looked_for(monkeypatch):
    monkeypatch.setenv("DB_PASS", "1234567")  # 7 chars: would be found in any number
    launch.check_no_secrets(["train.py", "--seed", "12345678"], None, None)
    monkeypatch.setenv("DB_PASS", "12345678")
    with pytest.raises(ValueError, match=r"the value of \['DB_PASS'\] appears"):
        launch.check_no_secrets(["train.py", "--seed", "12345678"], None, None)
