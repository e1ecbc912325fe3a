"""Each secret case of issue 26, end to end: `rlcheck job capture` and `pytest checks/ --job` FAIL
recipe_no_inline_secrets naming where the secret sat, and the value is in no file rlcheck writes (job.json,
report.json, report.md, JUnit XML, the history copy), nor in what it prints."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlcheck.job import sandbox

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ("python3 train.py --num-layers 36 --hidden-size 2560 --rollout-batch-size 16 --n-samples-per-prompt 8 "
         "--global-batch-size 128")
SUBMIT = "ray job submit --address=http://127.0.0.1:8265"
# Values built at run time, shaped like the real thing; the wandb and job-env ones have no known shape (by name only).
HF = "hf_" + "Qx7" * 12
WANDB = "0f1e2d3c4b5a6978" * 2 + "89abcdef"
REUSED = "a1b2c3d4" * 5
DB_PASSWORD = "Pw" + "9x" * 6


def _runtime_env(env: dict[str, str]) -> str:
    return f"--runtime-env-json='{json.dumps({'env_vars': env})}'"


# (case, launch file name, its text, --job-env items, the secret, where the FAIL says it sat)
CASES = [
    ("submit-prefix", "submit.txt", f"{SUBMIT} -- HF_TOKEN={HF} {TRAIN}\n", (), HF,
     "entrypoint prefix HF_TOKEN (by name)"),
    ("env-prefix", "submit.txt", f"{SUBMIT} -- env WANDB_API_KEY={WANDB} {TRAIN}\n", (), WANDB,
     "entrypoint prefix WANDB_API_KEY (by name)"),
    ("name-family", "submit.txt", f"{SUBMIT} {_runtime_env({'WANDB_API_KEY_PROD': WANDB})} -- {TRAIN}\n", (), WANDB,
     "env WANDB_API_KEY_PROD (by name)"),
    ("url-password", "submit.txt",
     f"{SUBMIT} {_runtime_env({'DATABASE_URL': f'postgres://rl:{DB_PASSWORD}@db:5432/rl'})} -- {TRAIN}\n", (),
     DB_PASSWORD, "env DATABASE_URL (url-credentials shape)"),
    ("job-env-reused", "launch.sh", f'#!/bin/bash\n{SUBMIT} -- {TRAIN} --wandb-group "$HF_TOKEN"\n',
     (f"HF_TOKEN={REUSED}",), REUSED, "(the value of --job-env HF_TOKEN)"),
]
IDS = [case[0] for case in CASES]


def _launch(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "launch" / name
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return path


def _no_file_holds(folder: Path, secret: str) -> list[Path]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert files, f"nothing written under {folder}"
    return [p for p in files if secret in p.read_text(encoding="utf-8", errors="replace")]


def _needs_sandbox(name: str) -> None:
    if name.endswith(".sh") and sandbox.available():
        pytest.skip(f"needs the sandbox: {sandbox.available()}")


@pytest.mark.parametrize(("case", "name", "text", "job_env", "secret", "place"), CASES, ids=IDS)
def test_secrets_e2e_job_capture_writes_no_secret(tmp_path, case, name, text, job_env, secret, place):
    _needs_sandbox(name)
    launch, out = _launch(tmp_path, name, text), tmp_path / "out"
    out.mkdir()
    env_args = [arg for item in job_env for arg in ("--job-env", item)]
    done = subprocess.run([sys.executable, "-m", "rlcheck.cli", "job", "capture", str(launch), "-o",
                           str(out / "job.json"), *env_args], capture_output=True, text=True, check=False,
                          env={"PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"]})
    assert done.returncode == 0, done.stderr
    assert _no_file_holds(out, secret) == [] and secret not in done.stdout + done.stderr
    assert any(place in found for found in json.loads((out / "job.json").read_text())["inline_secrets"])


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    shutil.copytree(ROOT / "checks", pytester.path / "checks")
    return pytester


@pytest.mark.parametrize(("case", "name", "text", "job_env", "secret", "place"), CASES, ids=IDS)
def test_secrets_e2e_preflight_fails_and_writes_no_secret(project, tmp_path, case, name, text, job_env, secret,
                                                          place):
    _needs_sandbox(name)
    launch = _launch(tmp_path, name, text)
    env_args = [arg for item in job_env for arg in ("--job-env", item)]
    result = project.runpytest("checks/test_recipe.py", "--hardware=h200", f"--job={launch}", *env_args,
                               "--report-dir=out", "--junitxml=out/junit.xml", "--history=hist",
                               "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([f"FAIL    recipe_no_inline_secrets: *{place}*",
                                 "rlcheck NO-GO: *recipe_no_inline_secrets FAIL*"])
    assert secret not in result.stdout.str() + result.stderr.str()
    for folder in (project.path / "out", project.path / "hist"):
        assert _no_file_holds(folder, secret) == []
    assert {p.name for p in (project.path / "out").iterdir()} >= {"report.json", "report.md", "junit.xml"}
    junit = (project.path / "out" / "junit.xml").read_text(encoding="utf-8")
    assert place in junit  # where it sat is said in the JUnit properties


def test_secrets_e2e_captured_job_json_is_judged_as_the_launch_was(project, tmp_path):
    """The written job.json holds no value, yet judging it FAILs the same: capture recorded where the secret sat."""
    launch = _launch(tmp_path, "submit.txt", CASES[0][2])
    written = tmp_path / "job.json"
    done = subprocess.run([sys.executable, "-m", "rlcheck.cli", "job", "capture", str(launch), "-o", str(written)],
                          capture_output=True, text=True, check=False, env={"PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and HF not in written.read_text()
    result = project.runpytest("checks/test_recipe.py", "--hardware=h200", f"--job={written}", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["FAIL    recipe_no_inline_secrets: *entrypoint prefix HF_TOKEN (by name)*"])
