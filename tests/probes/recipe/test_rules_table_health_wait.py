"""SLIME's first health-check wait against DeepGEMM's start-up compile as rule tables
(rlcheck/probes/recipe/health_wait.py): what makes SGLang compile DeepGEMM (each user, the env switch in each of
its spellings, the GPU's compute capability on both sides of sm_90) and the first wait on both sides of 300 s,
with whole summaries."""

from __future__ import annotations

import dataclasses

import pytest

from rlcheck import catalog
from rlcheck.hardware import get_profile
from rlcheck.probes.recipe.health_wait import (
    DEEPGEMM_FIRST_WAIT_S,
    FAILURE_ID,
    deepgemm_users,
    evaluate_health_first_wait,
)
from rlcheck.verdict import Status

REMEDY = catalog.get(FAILURE_ID).remedy
H200 = get_profile("h200")
assert H200.sm == 90
SM89 = dataclasses.replace(H200, compute_capability="8.9")
SM90 = dataclasses.replace(H200, compute_capability="9.0")
FP8_ARGV = ["--sglang-quantization", "fp8"]
FP8_CKPT = {"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}


@pytest.mark.parametrize(("argv", "config", "users"), [
    ([], None, []),
    ([], {}, []),
    (FP8_ARGV, None, ["--sglang-quantization fp8"]),
    (["--sglang-quantization=fp8"], None, ["--sglang-quantization fp8"]),
    (["--sglang-quantization", "fp8", "--sglang-quantization", "awq"], None, []),  # the last one given
    (["--sglang-quantization", "FP8"], None, []),
    (["--sglang-quantization", "w8a8_fp8"], None, []),
    ([], FP8_CKPT, ["an FP8 checkpoint (quantization_config.quant_method fp8)"]),
    ([], {"quantization_config": {"quant_method": "awq"}}, []),
    ([], {"quantization_config": "fp8"}, []),
    ([], {"quantization_config": None}, []),
    (["--sglang-moe-runner-backend", "deep_gemm"], None, ["--sglang-moe-runner-backend deep_gemm"]),
    (["--sglang-moe-runner-backend", "triton"], None, []),
    (["--sglang-attention-backend", "nsa"], None, ["--sglang-attention-backend nsa (its indexer runs DeepGEMM)"]),
    (["--sglang-attention-backend", "fa3"], None, []),
    ([*FP8_ARGV, "--sglang-moe-runner-backend", "deep_gemm", "--sglang-attention-backend", "nsa"], FP8_CKPT,
     ["--sglang-quantization fp8", "an FP8 checkpoint (quantization_config.quant_method fp8)",
      "--sglang-moe-runner-backend deep_gemm", "--sglang-attention-backend nsa (its indexer runs DeepGEMM)"]),
])
def test_rules_table_health_wait_deepgemm_users(argv, config, users):
    assert deepgemm_users(argv, {}, config, H200) == users
    assert deepgemm_users(argv, {}, config, None) == users  # no hardware known: the job's own words decide


@pytest.mark.parametrize(("value", "off"), [
    ("false", True), ("False", True), ("FALSE", True), (" false ", True), ("0", True), ("no", True), ("No", True),
    ("n", True), ("N", True),
    ("true", False), ("1", False), ("", False), ("off", False), ("00", False), ("nope", False), ("f", False),
])
def test_rules_table_health_wait_env_switch_spellings(value, off):
    users = deepgemm_users(FP8_ARGV, {"SGLANG_ENABLE_JIT_DEEPGEMM": value}, FP8_CKPT, H200)
    assert (users == []) is off
    assert users in ([], ["--sglang-quantization fp8", "an FP8 checkpoint (quantization_config.quant_method fp8)"])


@pytest.mark.parametrize(("profile", "compiles"), [(SM89, False), (SM90, True), (get_profile("b200"), True),
                                                   (None, True)])
def test_rules_table_health_wait_compute_capability(profile, compiles):
    assert (deepgemm_users(FP8_ARGV, {}, None, profile) != []) is compiles


def _verdict(*argv: str, config=None, env=None, profile=H200):
    return evaluate_health_first_wait(list(argv), env or {}, config, profile, "job")


FT = "--use-fault-tolerance"
FIRST = "--rollout-health-check-first-wait"
QUANT = "--sglang-quantization fp8"


@pytest.mark.parametrize(("argv", "status", "summary"), [
    ((*FP8_ARGV,), Status.SKIP, "job: no --use-fault-tolerance: SLIME's health monitor does not probe engines"),
    ((FT,), Status.PASS,
     f"job: {FIRST} 0 s (the default); nothing in the job makes SGLang compile DeepGEMM at start-up"),
    ((FT, FIRST, "30"), Status.PASS,
     f"job: {FIRST} 30 s; nothing in the job makes SGLang compile DeepGEMM at start-up"),
    ((FT, *FP8_ARGV), Status.FAIL,
     f"job: --use-fault-tolerance with {FIRST} 0 s (the default) while SGLang compiles DeepGEMM for {QUANT}: the "
     "first probe kills engines still compiling (wait at least 300 s, or pre-compile)"),
    ((FT, *FP8_ARGV, FIRST, "299.5"), Status.FAIL,
     f"job: --use-fault-tolerance with {FIRST} 299.5 s while SGLang compiles DeepGEMM for {QUANT}: the first probe "
     "kills engines still compiling (wait at least 300 s, or pre-compile)"),
    ((FT, *FP8_ARGV, FIRST, "300"), Status.PASS,
     f"job: {FIRST} 300 s covers DeepGEMM's compile for {QUANT} (at least 300 s)"),
    ((FT, *FP8_ARGV, "--sglang-moe-runner-backend", "deep_gemm", FIRST, "300"), Status.PASS,
     f"job: {FIRST} 300 s covers DeepGEMM's compile for {QUANT}; --sglang-moe-runner-backend deep_gemm (at least "
     "300 s)"),
    ((FT, *FP8_ARGV, f"{FIRST}=600.0"), Status.PASS,
     f"job: {FIRST} 600 s covers DeepGEMM's compile for {QUANT} (at least 300 s)"),
    ((FT, *FP8_ARGV, FIRST, "-1"), Status.FAIL,
     f"job: --use-fault-tolerance with {FIRST} -1 s while SGLang compiles DeepGEMM for {QUANT}: the first probe "
     "kills engines still compiling (wait at least 300 s, or pre-compile)"),
    ((FT, *FP8_ARGV, FIRST), Status.FAIL,  # the flag with no value: argparse's default is the wait
     f"job: --use-fault-tolerance with {FIRST} 0 s (the default) while SGLang compiles DeepGEMM for {QUANT}: the "
     "first probe kills engines still compiling (wait at least 300 s, or pre-compile)"),
    ((FT, *FP8_ARGV, FIRST, "soon"), Status.FAIL, f"job: {FIRST} 'soon': seconds, a number"),
    ((FT, FIRST, ""), Status.FAIL, f"job: {FIRST} '': seconds, a number"),
])
def test_rules_table_health_wait_verdicts(argv, status, summary):
    verdict = _verdict(*argv)
    assert (verdict.status, verdict.summary) == (status, summary)
    assert verdict.remedy == (REMEDY if status is Status.FAIL else "")
    assert verdict.failure_id == FAILURE_ID


def test_rules_table_health_wait_every_user_is_named_and_the_switch_or_gpu_clears_them():
    argv = (FT, *FP8_ARGV, "--sglang-attention-backend", "nsa")
    verdict = _verdict(*argv, config=FP8_CKPT)
    assert verdict.status is Status.FAIL
    assert (f"DeepGEMM for {QUANT}; an FP8 checkpoint (quantization_config.quant_method fp8); "
            "--sglang-attention-backend nsa (its indexer runs DeepGEMM): the first probe") in verdict.summary
    assert _verdict(*argv, config=FP8_CKPT, env={"SGLANG_ENABLE_JIT_DEEPGEMM": "0"}).status is Status.PASS
    assert _verdict(*argv, config=FP8_CKPT, profile=SM89).status is Status.PASS
    assert _verdict(*argv, config=FP8_CKPT, profile=SM90).status is Status.FAIL


def test_rules_table_health_wait_threshold():
    assert DEEPGEMM_FIRST_WAIT_S == 300.0
