"""Optional dependencies missing, as in a training image that lacks them: PyYAML (the `k8s` extra) and Ray. JSON
output needs neither; YAML without PyYAML is one line naming what to install (exit 2, no traceback); the cluster
checks without Ray are UNKNOWN with one line naming what to install, never a traceback. Each command runs in a
fresh interpreter in which `import yaml` / `import ray` fails (sys.modules[name] = None)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlcheck.plugin.resources import RAY_MISSING


def _run_without(module: str, argv: list[str], cwd: Path, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    code = (f"import sys; sys.modules[{module!r}] = None; from rlcheck.cli import main; "
            f"sys.exit(main({argv!r}))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=timeout_s,
                          env=env)


@pytest.mark.parametrize("argv", [
    ["k8s", "render", "--kind", "preflight-daemonset", "--hardware", "h200", "--format", "json"],
    ["k8s", "render", "--kind", "preflight-job", "--hardware", "b300", "--format", "json"],
    ["render", "qwen3-4b-colocated", "--hardware", "h200", "--format", "json"],
], ids=["k8s-daemonset", "k8s-job", "render"])
def test_render_json_needs_no_pyyaml(argv, tmp_path):
    done = _run_without("yaml", argv, tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc.get("kind") == "List" or doc.get("recipe") == "qwen3-4b-colocated"
    assert done.stderr == ""


@pytest.mark.parametrize("argv, prefix", [
    (["k8s", "render", "--kind", "preflight-daemonset", "--hardware", "h200"], "rlcheck k8s render: "),
    (["render", "qwen3-4b-colocated", "--hardware", "h200", "--format", "yaml"], "rlcheck render: "),
], ids=["k8s-default-yaml", "render-yaml"])
def test_render_yaml_without_pyyaml_says_what_to_install_in_one_line(argv, prefix, tmp_path):
    done = _run_without("yaml", argv, tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(prefix + "--format yaml needs PyYAML")
    assert "pip install 'rlcheck[k8s]'" in line and "--format json" in line
    assert "Traceback" not in done.stderr


def test_version_comes_from_the_package_metadata(tmp_path):
    from importlib import metadata

    done = subprocess.run([sys.executable, "-m", "rlcheck.cli", "--version"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"rlcheck {metadata.version('rlcheck')}"


def test_preflight_without_ray_names_what_to_install_once_per_check_and_no_traceback(tmp_path):
    done = _run_without("ray", ["preflight", "-k", "cluster_reachable or cluster_node_xid", "--hardware=none",
                                "-p", "no:xdist"], tmp_path, timeout_s=300)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out[-3000:]  # UNKNOWN: could not judge
    assert "Traceback" not in out and "ModuleNotFoundError" not in out and "launch.py" not in out, out[-3000:]
    line = RAY_MISSING.format(python=sys.executable)
    assert "pip install 'ray[default]'" in line
    assert out.count(f"\n{line}\n") == 2, out[-3000:]  # one line per cluster check that needed Ray, no stack
    assert f"UNKNOWN cluster_reachable: could not run (setup): Failed: {line}" in out
    assert "rlcheck NO-GO" in out
    assert len(out.splitlines()) < 40, out


def test_rayjob_yaml_without_pyyaml_says_what_to_install_in_one_line(tmp_path):
    """A RayJob manifest read where PyYAML is missing: exit 2, one line naming the manifest, the package and the
    way around it (the launch script); the same manifest with PyYAML is read (the other side)."""
    manifest = Path(__file__).parent / "data" / "jobs" / "rayjob.yaml"
    done = _run_without("yaml", ["job", "show", str(manifest)], tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert str(manifest) in line and "needs PyYAML" in line and "pip install" in line and "launch script" in line
    read = _run_without("nothing_named_so", ["job", "show", str(manifest)], tmp_path)
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["source_format"] == "rayjob"
