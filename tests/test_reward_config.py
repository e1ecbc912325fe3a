"""ServiceConfig validation, CPU sizing from the cgroup limit, and the CLI's usage errors."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from rlcheck.reward.cli import add_arguments, config_from_args, run
from rlcheck.reward.config import ServiceConfig, cpu_quota, usable_cpus
from tests.slime_client import SLIME_TOTAL_TIMEOUT_S

AIOHTTP_IDLE_CONNECTION_S = 15  # aiohttp's default keepalive_timeout, which SLIME's connector uses


def test_reward_config_defaults_are_valid_and_outlive_slime_idle_connections() -> None:
    config = ServiceConfig()
    assert config.keep_alive_s > AIOHTTP_IDLE_CONNECTION_S
    assert config.scorer_timeout_s < SLIME_TOTAL_TIMEOUT_S
    assert config.graceful_shutdown_s < 10  # a pod's 30 s grace, and the 10 s this suite allows
    assert config.graceful_shutdown_s > config.scorer_wall_timeout_s  # a running scoring ends before uvicorn gives up
    assert config.backend == "slime_math"  # what a SLIME user's --rm-type math gave them


INVALID = [
    ({"backend": "reward_model"}, "backend='reward_model': one of slime_math, math_verify, boxed"),
    ({"port": 0}, "port=0: 1..65535"),
    ({"scorer_wall_timeout_s": 1.0}, "scorer_wall_timeout_s=1.0: scorer_timeout_s..600 seconds"),
    ({"max_queued": 0}, "max_queued=0: 1..1000000"),
    ({"read_timeout_s": 0.0}, "read_timeout_s=0.0: 0.1..600 seconds"),
    ({"max_connections": 1}, "max_connections=1: 8..1000000"),
    ({"workers": 0}, "workers=0: 1..256"),
    ({"max_body_bytes": 10}, "max_body_bytes=10: 1 KiB..1 GiB"),
    ({"scorer_timeout_s": 0.0}, "scorer_timeout_s=0.0: 0.01..600 seconds"),
    ({"demote_after_cpu_s": 5.0}, "demote_after_cpu_s=5.0: 0 <= value < scorer_timeout_s"),
    ({"fallback_reward": float("nan")}, "fallback_reward=nan: a finite number"),
    ({"keep_alive_s": 0}, "keep_alive_s=0: 1..3600 seconds"),
    ({"reward_key": " "}, "reward_key=' ': unset or a non-empty key"),
]


@pytest.mark.parametrize(("fields", "message"), INVALID, ids=[m.split("=")[0] for _, m in INVALID])
def test_reward_config_rejects(fields: dict, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        ServiceConfig(**fields)
    assert str(caught.value) == message


@pytest.mark.parametrize(("line", "cpus"), [("400000 100000\n", 4.0), ("150000 100000", 1.5), ("max 100000", None),
                                             ("garbage", None)])
def test_reward_cpu_quota_reads_cgroup_cpu_max(line: str, cpus: float | None) -> None:
    assert cpu_quota(line) == cpus


def test_reward_usable_cpus_is_capped_by_the_container_limit(tmp_path: Path) -> None:
    v2, v1, unlimited_v1 = tmp_path / "v2", tmp_path / "v1", tmp_path / "v1-unlimited"
    v2.mkdir()
    (v2 / "cpu.max").write_text("100000 100000\n")
    for root, quota in ((v1, "50000"), (unlimited_v1, "-1")):
        (root / "cpu").mkdir(parents=True)
        (root / "cpu" / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        (root / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert usable_cpus(v2) == 1
    assert usable_cpus(v1) == 1  # half a CPU still gets one scorer process
    assert usable_cpus(unlimited_v1) == usable_cpus(tmp_path / "absent") == len(os.sched_getaffinity(0))


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_reward_cli_options_fill_the_config() -> None:
    config = config_from_args(_args("--backend", "boxed", "--workers", "3", "--scorer-timeout-s", "1.5",
                                    "--fallback-reward", "-1", "--reward-key", "score", "--max-body-bytes", "2048"))
    assert (config.backend, config.workers, config.scorer_timeout_s, config.fallback_reward, config.reward_key,
            config.max_body_bytes) == ("boxed", 3, 1.5, -1.0, "score", 2048)


def test_reward_cli_bad_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(_args("--scorer-timeout-s", "0")) == 2
    assert "scorer_timeout_s=0.0: 0.01..600 seconds" in capsys.readouterr().err
