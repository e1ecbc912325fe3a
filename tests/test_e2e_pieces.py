"""E2E pieces without Ray: baseline bands, the phase plot, the preflight gate, the dry run of every case."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rlcheck.e2e import baselines
from rlcheck.e2e.plot import plot_phase_times
from rlcheck.hardware import get_profile
from rlcheck.preflight import gate
from rlcheck.process import subproc
from rlcheck.verdict import Status, Verdict

ROOT = Path(__file__).resolve().parents[1]


def test_baselines_seed_band_and_slow_phase():
    band = baselines.load("h200")["qwen3-30b-a3b-disaggregated"]
    assert band["train"] == (46.6, 139.8)
    slow = baselines.outside("qwen3-30b-a3b-disaggregated", "h200", [{"train": 93.2}, {"train": 150.0}])
    assert slow == ["loop 1 train 150.0 s > 139.8 s (band (46.6, 139.8))"]
    assert baselines.load("h100") == {}


def test_baselines_bad_band_refused(tmp_path, monkeypatch):
    (tmp_path / "h200.toml").write_text('[case]\nsource = "s"\ntrain = [9.0, 3.0]\n')
    monkeypatch.setattr(baselines, "DATA_DIR", tmp_path)
    baselines.load.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"h200.toml \[case\] train=\[9.0, 3.0\]: \[low_s, high_s\]"):
            baselines.load("h200")
    finally:
        baselines.load.cache_clear()


def test_plot_writes_a_png(tmp_path):
    path = plot_phase_times([{"rollout-collected": 120.0, "train": 93.2}, {"rollout-collected": 110.0, "train": 90.0}],
                            tmp_path / "case.png", title="qwen3-30b-a3b-disaggregated")
    assert path is not None and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot_phase_times([], tmp_path / "none.png", title="x") is None


def test_gate_skip_reason_lists_blocking_checks():
    verdicts = (Verdict(check_id="recipe_batch", status=Status.FAIL, summary="96 != 128"),
                Verdict(check_id="image_versions", status=Status.WARN, summary="live"),
                Verdict(check_id="cluster_gpus", status=Status.UNKNOWN, summary="ray did not answer"))
    assert gate.skip_reason(verdicts) == ("preflight NO-GO, no GPU requested: recipe_batch FAIL: 96 != 128; "
                                          "cluster_gpus UNKNOWN: ray did not answer")
    assert gate.skip_reason(verdicts[1:2]) is None


def test_gate_recipe_that_does_not_fit_is_blocking():
    verdicts = gate.preflight("glm5.2-gb300", get_profile("h200"))
    assert verdicts[0].status is Status.FAIL and "shaped for GB300 nodes" in verdicts[0].summary


def test_testcases_dry_run_renders_every_case(tmp_path):
    done = subproc.run([sys.executable, "-m", "pytest", "testcases/test_e2e.py", "--dry-run", "--hardware=gb300",
                        "-p", "no:cacheprovider", f"--report-dir={tmp_path}", "-q"], timeout_s=300, cwd=str(ROOT))
    # nothing ran: no GO from a dry run, and no blocking check to decide one (the cases are SKIP, exit 0)
    assert done.returncode == 0 and "rlcheck no GO / NO-GO: no blocking check ran" in done.stdout, done.tail(30)
    assert "rlcheck GO" not in done.stdout, done.tail(30)
    for case in ("qwen3-4b-colocated", "qwen3-30b-a3b-disaggregated", "qwen3-4b-remote-rm", "glm5.2-gb300"):
        assert f"SKIP    e2e[{case}]: dry run, nothing ran: renders for gb300" in done.stdout, done.tail(30)
    assert "PASS    e2e[" not in done.stdout, done.tail(30)


def test_testcases_without_a_cluster_skip_naming_it():
    done = subproc.run([sys.executable, "-m", "pytest", "testcases/test_e2e.py", "--hardware=b300", "-rs",
                        "-p", "no:cacheprovider", "-q"], timeout_s=300, cwd=str(ROOT))
    assert done.stdout.count("needs a GPU Ray cluster (--ray-address): found none") >= 1, done.tail(20)
