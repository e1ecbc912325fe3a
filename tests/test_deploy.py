"""The deploy Dockerfiles, checked by parsing them (no Docker engine here): each step refers to real things.

For every Dockerfile under deploy/: COPY sources exist in the build context (the repository root),
every `python3 -m MODULE` it runs is a module rlcheck ships, and the training image keeps the seed's
order: numpy<2 as the last install, the image checks as the last step.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from dockerfile_parse import DockerfileParser

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILES = sorted((ROOT / "deploy").rglob("Dockerfile*"))


def instructions(path: Path) -> list[dict[str, str]]:
    parser = DockerfileParser(path=str(path))
    return [i for i in parser.structure if i["instruction"] not in ("COMMENT",)]


@pytest.mark.parametrize("path", DOCKERFILES, ids=[str(p.relative_to(ROOT)) for p in DOCKERFILES])
def test_deploy_dockerfile_copies_and_modules_exist(path):
    steps = instructions(path)
    assert steps and steps[0]["instruction"] in ("FROM", "ARG")
    for step in steps:
        if step["instruction"] == "COPY" and "--from=" not in step["value"]:
            for source in step["value"].split()[:-1]:
                assert (ROOT / source).exists(), f"{path.name}: COPY {source}: not in the build context"
        if step["instruction"] == "RUN":
            for module in re.findall(r"python3? -m ([\w.]+)", step["value"]):
                if module.startswith("rlcheck"):
                    assert importlib.util.find_spec(module), f"{path.name}: python3 -m {module}: no such module"


def test_deploy_training_image_carries_the_seed_fixes_in_order():
    steps = instructions(ROOT / "deploy" / "training" / "Dockerfile")
    runs = [s["value"] for s in steps if s["instruction"] == "RUN"]
    assert steps[0]["value"].startswith("nvcr.io/nvidia/pytorch:26.02-py3") or \
        any(s["instruction"] == "FROM" and "26.02-py3" in s["value"] for s in steps)
    installs = [r for r in runs if "pip install" in r]
    assert '"numpy<2"' in installs[-1], "numpy<2 must be the last install (seed 000 fix 3)"
    assert any("rlcheck.fixes.tms_preload --cuda-major 13" in r for r in runs)
    assert any("rlcheck.fixes.driver_guard --install" in r for r in runs)
    assert any("--no-deps" in r and "mbridge" in r for r in runs)
    assert "pytest checks/" in runs[-1]
