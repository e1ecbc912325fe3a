"""Run levels of `rlcheck k8s apply-node-status --level quick|standard|long`, as DCGM users expect them: quick is the
counters tier (exactly what the Slurm prolog and the DaemonSet run), standard adds the bf16 GEMM, long the NCCL
all-reduce; each is held to its stated budget, and a check not judged by then is UNKNOWN."""

from __future__ import annotations

import json

import pytest

from rlcheck.cli import main
from rlcheck.deploy import levels
from rlcheck.preflight import slurm


def _ids(level: str) -> list[str]:
    return [c.id for c in levels.level_checks(level)]


def test_levels_add_gpu_work_to_the_quick_tier_in_order():
    quick = [c.id for c in slurm.quick_checks()]
    assert _ids("quick") == quick and "gpu_node_health" in quick and "gpu_bf16_gemm" not in quick
    assert _ids("standard") == [*quick, "gpu_bf16_gemm"]
    assert _ids("long") == [*quick, "gpu_bf16_gemm", "gpu_nccl_allreduce"]
    assert levels.BUDGET_S == {"quick": 25.0, "standard": 120.0, "long": 420.0}
    with pytest.raises(ValueError, match="level='medium': one of quick, standard, long"):
        levels.level_checks("medium")


def test_a_level_past_its_budget_is_unknown_for_every_check_not_judged():
    verdicts = levels.judge_node("long", None, "qwen3-4b-colocated", budget_s=0.0)
    assert [v.check_id for v in verdicts] == _ids("long")
    assert all(v.status.value == "UNKNOWN" and "0 s budget" in v.summary for v in verdicts)


def test_cli_level_standard_judges_the_gemm_and_never_passes_what_it_did_not_judge(capsys):
    argv = ["k8s", "apply-node-status", "--node", "n1", "--hardware", "none", "--level", "standard",
            "--budget-s", "0", "--dry-run"]
    assert main(argv) == 0
    patch = json.loads(capsys.readouterr().out)
    assert patch["status"] == "unknown" and patch["add_taints"] == []
    summary = patch["annotations"]["rlcheck.io/summary"].splitlines()
    assert summary[0] == f"rlcheck unknown: {len(_ids('standard'))} of {len(_ids('standard'))} blocking verdict(s) " \
                         "not PASS/SKIP"
    assert summary[-1] == "UNKNOWN gpu_bf16_gemm: not judged within the 0 s budget of the Slurm tier"


def test_cli_unknown_level_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["k8s", "apply-node-status", "--node", "n1", "--level", "r3", "--dry-run"])
    assert exited.value.code == 2
    assert "invalid choice: 'r3'" in capsys.readouterr().err
