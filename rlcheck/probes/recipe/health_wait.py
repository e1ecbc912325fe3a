"""SLIME's first health-check wait against a slow engine start (catalogue: rollout-health-check-killed-engine).

With --use-fault-tolerance SLIME's RolloutHealthMonitor (slime/utils/health_monitor.py) waits
--rollout-health-check-first-wait seconds (type float, default 0; Miles the same) after each start or resume,
then probes every engine each --rollout-health-check-interval and kills one whose probe outlasts
--rollout-health-check-timeout. SGLang JIT-compiles DeepGEMM kernels on sm_90+ (SGLANG_ENABLE_JIT_DEEPGEMM,
default on) for block-FP8 weights, the deep_gemm MoE runner and the NSA indexer; until that is done a healthy
engine does not answer, so a first wait shorter than the compile kills it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rlcheck import catalog
from rlcheck.framework.argv import option
from rlcheck.hardware import HardwareProfile
from rlcheck.verdict import Status, Verdict

FAILURE_ID = "rollout-health-check-killed-engine"
DEEPGEMM_FIRST_WAIT_S = 300.0
"""The first wait the catalogue's remedy asks for when DeepGEMM compiles at start-up."""
_OFF = ("false", "0", "no", "n")
"""SGLang's EnvBool spellings of false."""


def deepgemm_users(argv: Sequence[str], env: Mapping[str, str], config: Mapping[str, Any] | None,
                   profile: HardwareProfile | None) -> list[str]:
    """What in the job makes SGLang compile DeepGEMM kernels (empty: nothing, or DeepGEMM is off)."""
    if env.get("SGLANG_ENABLE_JIT_DEEPGEMM", "").strip().lower() in _OFF or (profile and profile.sm < 90):
        return []
    users = []
    if (option(argv, "--sglang-quantization") or "") == "fp8":
        users.append("--sglang-quantization fp8")
    quant = (config or {}).get("quantization_config")
    if isinstance(quant, dict) and quant.get("quant_method") == "fp8":
        users.append("an FP8 checkpoint (quantization_config.quant_method fp8)")
    if option(argv, "--sglang-moe-runner-backend") == "deep_gemm":
        users.append("--sglang-moe-runner-backend deep_gemm")
    if option(argv, "--sglang-attention-backend") == "nsa":
        users.append("--sglang-attention-backend nsa (its indexer runs DeepGEMM)")
    return users


def _first_wait(argv: Sequence[str]) -> float:
    raw = option(argv, "--rollout-health-check-first-wait")
    if raw is None:
        return 0.0
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"--rollout-health-check-first-wait {raw!r}: seconds, a number") from None


def evaluate_health_first_wait(argv: Sequence[str], env: Mapping[str, str], config: Mapping[str, Any] | None,
                               profile: HardwareProfile | None, name: str) -> Verdict:
    base = {"failure_id": FAILURE_ID}
    if "--use-fault-tolerance" not in argv:
        return Verdict(**base, status=Status.SKIP,
                       summary=f"{name}: no --use-fault-tolerance: SLIME's health monitor does not probe engines")
    remedy = catalog.get(FAILURE_ID).remedy
    try:
        wait = _first_wait(argv)
    except ValueError as exc:
        return Verdict(**base, status=Status.FAIL, remedy=remedy, summary=f"{name}: {exc}")
    given = f"--rollout-health-check-first-wait {wait:g} s" + (
        "" if option(argv, "--rollout-health-check-first-wait") is not None else " (the default)")
    users = deepgemm_users(argv, env, config, profile)
    if not users:
        return Verdict(**base, status=Status.PASS,
                       summary=f"{name}: {given}; nothing in the job makes SGLang compile DeepGEMM at start-up")
    if wait < DEEPGEMM_FIRST_WAIT_S:
        return Verdict(**base, status=Status.FAIL, remedy=remedy,
                       summary=f"{name}: --use-fault-tolerance with {given} while SGLang compiles DeepGEMM for "
                               f"{'; '.join(users)}: the first probe kills engines still compiling (wait at least "
                               f"{DEEPGEMM_FIRST_WAIT_S:g} s, or pre-compile)")
    return Verdict(**base, status=Status.PASS,
                   summary=f"{name}: {given} covers DeepGEMM's compile for {'; '.join(users)} "
                           f"(at least {DEEPGEMM_FIRST_WAIT_S:g} s)")
