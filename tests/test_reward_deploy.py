"""The reward service's image and Kubernetes manifest fit the service they deploy."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from rlcheck.reward.cli import add_arguments, config_from_args

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "deploy" / "reward-service" / "Dockerfile"
MANIFEST = ROOT / "deploy" / "reward-service" / "reward-service.yaml"
PIN = re.compile(r"\b([A-Za-z0-9_.-]+)==([0-9][^\s\\]*)")


def _lock() -> dict[str, str]:
    pins = PIN.findall((ROOT / "requirements" / "lock.txt").read_text())
    return {name.lower().replace("_", "-"): version for name, version in pins}


def test_reward_image_pins_the_locked_versions() -> None:
    lock, pinned = _lock(), PIN.findall(DOCKERFILE.read_text())
    assert {n.lower() for n, _ in pinned} >= {"fastapi", "uvicorn", "math-verify", "sympy", "starlette"}
    assert {n: v for n, v in pinned if lock.get(n.lower().replace("_", "-")) != v} == {}


def test_reward_image_runs_the_service_under_an_init() -> None:
    text = DOCKERFILE.read_text()
    assert 'ENTRYPOINT ["tini", "--", "rlcheck", "reward-service"]' in text
    assert re.search(r"^USER \d+$", text, re.MULTILINE)  # not root


def _manifest_args() -> list[str]:
    match = re.search(r"^\s+args: (\[.*\])$", MANIFEST.read_text(), re.MULTILINE)
    assert match, "the container's args are one JSON-style list"
    return list(json.loads(match.group(1)))


def test_reward_manifest_args_are_valid_service_options() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    config = config_from_args(parser.parse_args(_manifest_args()))  # ValueError if the manifest is wrong
    text = MANIFEST.read_text()
    assert f"containerPort: {config.port}" in text and config.host == "0.0.0.0"
    cpu_limit = re.search(r"limits: \{cpu: \"(\d+)\"", text)
    assert cpu_limit and config.workers <= int(cpu_limit.group(1))


def test_reward_manifest_probes_and_shutdown_fit_the_service() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    config = config_from_args(parser.parse_args(_manifest_args()))
    text = MANIFEST.read_text()
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        block = text.split(f"{probe}:", 1)[1].split("Probe:", 1)[0]
        assert "path: /health" in block, probe  # the endpoint that scores a known pair
        assert int(re.search(r"timeoutSeconds: (\d+)", block).group(1)) >= 2, probe  # type: ignore[union-attr]
    grace = int(re.search(r"terminationGracePeriodSeconds: (\d+)", text).group(1))  # type: ignore[union-attr]
    pre_stop = int(re.search(r'command: \["sleep", "(\d+)"\]', text).group(1))  # type: ignore[union-attr]
    assert grace >= pre_stop + config.graceful_shutdown_s + 5
