"""Untrusted launch documents and where rlcheck lives: wrong types and YAML bombs are usage errors naming the
field (exit 2); a script that stops for a variable names it; rlcheck installed under /tmp still captures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlcheck.job import capture, sandbox

ROOT = Path(__file__).resolve().parents[1]
needs_sandbox = pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))


@pytest.mark.parametrize(("name", "text", "fragment"), [
    ("argv_string.json", json.dumps({"source_format": "bash", "argv": "python3 train.py"}),
     "job.argv: expected a list"),
    ("env_list.json", json.dumps({"source_format": "bash", "argv": ["python3"], "env": [1]}), "job.env: expected a"),
    ("nodes_text.json", json.dumps({"source_format": "bash", "argv": ["python3"], "nodes": "two"}), "job.nodes='two'"),
    ("render_res.json", json.dumps({"argv": ["python3"], "resources": []}), "argv-json.resources: expected a mapping"),
    ("spec_list.yaml", "kind: RayJob\nspec: [1]\n", "RayJob.spec: expected a mapping"),
    ("replicas.yaml", "kind: RayJob\nspec:\n  entrypoint: python3 train.py\n  rayClusterSpec:\n"
                      "    workerGroupSpecs:\n    - replicas: abc\n", "workerGroupSpecs[0].replicas='abc'"),
    ("bomb.yaml", "kind: RayJob\nspec:\n  entrypoint: python3 train.py\n  runtimeEnvYAML: |\n"
                  + "".join("    " + line + "\n" for line in _LAUGHS.splitlines()), "uses a YAML alias"),
    ("bomb_top.yaml", _LAUGHS + "kind: RayJob\n", "uses a YAML alias"),
])
def test_job_hostile_document_is_a_usage_error_naming_the_field(tmp_path, name, text, fragment):
    path = tmp_path / name
    path.write_text(text)
    started = time.monotonic()
    with pytest.raises(capture.JobFormatError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        capture.capture(path)
    assert time.monotonic() - started < 20
    done = subprocess.run([sys.executable, "-m", "rlcheck.cli", "job", "show", str(path)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]


@needs_sandbox
@pytest.mark.parametrize(("body", "name"), [
    (': "${MASTER_ADDR:?}"\n', "MASTER_ADDR"),
    ('if [ -z "$BASE_DIR" ]; then echo "set BASE_DIR first"; exit 1; fi\n', "BASE_DIR"),
    ('set -u\necho "$HF_HOME_DIR"\n', "HF_HOME_DIR"),
    ('cd "$REPO_ROOT/slime" || exit 1\n', "REPO_ROOT"),
])
def test_job_script_stopping_for_a_variable_names_it_and_the_job_env(tmp_path, body, name):
    script = tmp_path / "needs.sh"
    script.write_text("#!/bin/bash\nLOCAL_THING=1\n" + body + "ray job submit -- python3 train.py\n")
    with pytest.raises(capture.CaptureFailed) as info:
        capture.capture(script)
    assert f"--job-env {name}=..." in str(info.value) and "LOCAL_THING" not in str(info.value)


@needs_sandbox
def test_job_stand_in_answering_a_substitution_is_a_finding(tmp_path):
    script = tmp_path / "subst.sh"
    # torch: outside the standard library, so the stand-in answers (a stdlib-only program runs for real)
    script.write_text('#!/bin/bash\nMODEL_ARGS=$(python3 -c "import torch; print(1)")\n'
                      'ray job submit -- python3 train.py $MODEL_ARGS\n')
    job = capture.capture(script)
    assert any("`python3 -c 'import torch; print(1)'` ran where the script reads its output" in f for f in job.findings)
    assert job.argv == ("python3", "train.py")
    assert not any("train.py" in f for f in job.findings)


@needs_sandbox
def test_job_relative_source_resolves_from_the_repo_root(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "scripts" / "models").mkdir(parents=True)
    (tmp_path / "scripts" / "models" / "m.sh").write_text("MODEL_ARGS=(--num-layers 7)\n")
    script = tmp_path / "scripts" / "run.sh"
    script.write_text('#!/bin/bash\nset -e\nsource ./scripts/models/m.sh\nmkdir -p logs\n'
                      'ray job submit -- python3 train.py "${MODEL_ARGS[@]}"\n')
    job = capture.capture(script)
    assert job.argv == ("python3", "train.py", "--num-layers", "7") and not (tmp_path / "logs").exists()


@needs_sandbox
def test_job_capture_works_with_rlcheck_and_its_interpreter_under_tmp(tmp_path):
    """A clone or an install under /tmp: the private /tmp still shows rlcheck's interpreter and package."""
    assert str(tmp_path).startswith("/tmp/")
    shutil.copytree(ROOT / "rlcheck", tmp_path / "src" / "rlcheck", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True, timeout=120)
    site = next(Path(sys.prefix).glob("lib/python*/site-packages"))
    code = ("import sys; from rlcheck.job import capture; assert capture.__file__.startswith('/tmp/'), "
            "capture.__file__; job = capture.capture(sys.argv[1]); print(job.argv[:2], job.nodes)")
    python = str(tmp_path / "venv" / "bin" / "python")
    done = subprocess.run([python, "-c", code, str(ROOT / "tests/data/jobs/launch.sh")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False,
                          env={"PATH": os.environ["PATH"], "PYTHONPATH": f"{tmp_path / 'src'}:{site}"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "('python3', 'train.py') 1"
