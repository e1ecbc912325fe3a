"""Strict --sglang-* flag check against a recording of SGLang 0.5.12.post1's real parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlcheck.probes.recipe.sglang_flags import SglangOptions, evaluate_sglang_flags
from rlcheck.verdict import Status

RECORDED = Path(__file__).resolve().parents[2] / "data" / "observations" / "sglang_flags" / "sglang_0.5.12.post1.json"


def recorded() -> SglangOptions:
    data = json.loads(RECORDED.read_text())
    return SglangOptions(version=data["version"], flags=tuple(data["flags"]), error=data["error"])


TABLE = [
    (["--sglang-mem-fraction-static", "0.85", "--sglang-log-level", "warning", "--sglang-ep-size", "2",
      "--sglang-server-concurrency", "512", "--sglang-router-policy", "consistent_hashing"], Status.PASS,
     "5 --sglang-* flag(s) all known to sglang 0.5.12.post1", ""),
    (["--sglang-enable-ep-moe", "--sglang-mem-fraction-static=0.8"], Status.FAIL,
     "which SLIME would drop silently: --sglang-enable-ep-moe", "--sglang-ep-size N"),
    (["--sglang-enable-deepep-moe"], Status.FAIL, "--sglang-enable-deepep-moe", "--sglang-moe-a2a-backend deepep"),
    (["--sglang-mem-fraction-statc", "0.8"], Status.FAIL, "--sglang-mem-fraction-statc",
     "did you mean --sglang-mem-fraction-static?"),
    (["--sglang-tp-size", "2"], Status.FAIL, "--sglang-tp-size", ""),
]


@pytest.mark.parametrize(("argv", "status", "summary", "detail"), TABLE, ids=["healthy", "ep-moe", "deepep", "typo",
                                                                              "slime-skipped"])
def test_probe_sglang_flags_recorded(argv, status, summary, detail):
    verdict = evaluate_sglang_flags(argv, recorded())
    assert verdict.status is status and summary in verdict.summary and detail in verdict.details


def test_probe_sglang_flags_unknown_without_sglang():
    verdict = evaluate_sglang_flags(["--sglang-log-level", "warning"],
                                    SglangOptions(version=None, flags=(), error="No module named 'sglang'"))
    assert verdict.status is Status.UNKNOWN and "No module named 'sglang'" in verdict.summary
