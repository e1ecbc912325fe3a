"""`rlcheck render`: snapshots of every recipe x hardware that fits, schema-checked manifests, no secrets.

The snapshots freeze the rendered argv and manifests: a change shows up as a reviewed diff. To accept
a deliberate change, run with RLCHECK_UPDATE_SNAPSHOTS=1 and commit tests/snapshots/render/.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from rlcheck import cli, recipes
from rlcheck.cluster.exec_argv import ENV_NAME
from rlcheck.deploy import render
from tests.kuberay_schema import check_manifest
from tests.test_recipes import FITS

SNAPSHOTS = Path(__file__).parent / "snapshots" / "render"
PAIRS = [(r, hw) for r in recipes.RECIPE_IDS for hw in sorted(FITS[r])]


@pytest.mark.parametrize(("recipe_id", "hw"), PAIRS, ids=[f"{r}-{h}" for r, h in PAIRS])
def test_render_snapshot(recipe_id, hw):
    doc = render.document(recipe_id, hw)
    text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
    path = SNAPSHOTS / f"{recipe_id}__{hw}.json"
    if os.environ.get("RLCHECK_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text)
    assert path.exists(), f"no snapshot {path.name}: run with RLCHECK_UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(), f"{path.name} changed: review the diff, then RLCHECK_UPDATE_SNAPSHOTS=1"


@pytest.mark.parametrize(("recipe_id", "hw"), PAIRS, ids=[f"{r}-{h}" for r, h in PAIRS])
def test_render_manifests_match_kubernetes_and_kuberay_fields(recipe_id, hw):
    doc = render.document(recipe_id, hw)
    for name, manifest in doc["manifests"].items():
        assert check_manifest(yaml.safe_load(yaml.safe_dump(manifest))) == [], name
    job = doc["manifests"]["rayjob"]["spec"]
    assert json.loads(json.loads(job["runtimeEnvYAML"])["env_vars"][ENV_NAME]) == doc["argv"]
    head = job["rayClusterSpec"]["headGroupSpec"]
    assert head["rayStartParams"]["num-gpus"] == "0"
    assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"} in head["template"]["spec"]["containers"][0]["env"]


def test_render_schema_check_catches_a_wrong_field():
    manifest = render.document("qwen3-4b-colocated", "h200")["manifests"]["raycluster"]
    manifest["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["gpus"] = "8"
    manifest["spec"]["workerGroupSpecs"][0]["minReplica"] = 2
    errors = check_manifest(manifest)
    assert any("containers[0].gpus: not a field of V1Container" in e for e in errors)
    assert any("minReplica: not a KubeRay field" in e for e in errors)


def test_render_never_contains_a_secret_value(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_rlcheck_canary_3f9a")
    for recipe_id, hw in PAIRS:
        for fmt in render.FORMATS:
            text = render.dump(render.document(recipe_id, hw), fmt)
            assert "hf_rlcheck_canary_3f9a" not in text and "HF_TOKEN" in text


def test_render_shell_is_a_launcher_bash_accepts(tmp_path):
    script = tmp_path / "launch.sh"
    script.write_text(render.dump(render.document("glm5.2-gb300", "gb300"), "shell"))
    bash = shutil.which("bash") or "/bin/bash"
    assert subprocess.run([bash, "-n", str(script)], capture_output=True, timeout=30).returncode == 0
    assert "'[0]*3+[1]*75'" in script.read_text()  # quoted: the shell cannot glob it


@pytest.mark.parametrize(("argv", "message"), [
    (["render", "qwen3-8b", "--hardware", "h200"], "unknown recipe 'qwen3-8b'; valid: qwen3-4b-colocated"),
    (["render", "qwen3-4b-colocated", "--hardware", "h300"], "unknown hardware 'h300'; valid: b200, b300"),
    (["render", "glm5.2-gb300", "--hardware", "h100"], "glm5.2-gb300 does not fit h100: glm5.2-gb300: shaped for"),
])
def test_render_cli_refuses_with_reason(capsys, argv, message):
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_render_cli_yaml(capsys):
    assert cli.main(["render", "qwen3-4b-remote-rm", "--hardware", "gb300", "--format", "yaml"]) == 0
    doc = yaml.safe_load(capsys.readouterr().out)
    assert doc["resources"]["gpu_nodes"] == 4 and "--rm-url" in doc["argv"]
