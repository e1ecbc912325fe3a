"""The e2e harness against a real local Ray running the stand-in trainer (tests/standin/train.py).

Proves, without a GPU cluster: a clean run passes with every milestone of 3 loops; every catalogued
failure injected into the job's log is reported with its catalogue id and the job is stopped; every
hang ends within its phase timeout + 5 s; crashes, dead workers and broken invariants end in verdicts.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from rlcheck import catalog, recipes
from rlcheck.e2e import runner as e2e
from rlcheck.e2e import slime_log, watch
from rlcheck.e2e.watch import Watcher
from rlcheck.verdict import Status

STANDIN = Path(__file__).parent / "standin" / "train.py"
PHASE_TIMEOUT_S = 6.0
DEADLINES = slime_log.Deadlines(placement_s=30, startup_s=30, rollout_s=PHASE_TIMEOUT_S, phase_s=PHASE_TIMEOUT_S)
TIGHT = slime_log.Deadlines(placement_s=PHASE_TIMEOUT_S, startup_s=PHASE_TIMEOUT_S, rollout_s=PHASE_TIMEOUT_S,
                            phase_s=PHASE_TIMEOUT_S)


def run(local_ray, tmp_path, fault: str = "", recipe_id: str = "qwen3-30b-a3b-disaggregated", loops: int = 3,
        argv_extra: tuple[str, ...] = (), deadlines: slime_log.Deadlines = DEADLINES,
        version: str = slime_log.DEFAULT_VERSION, shape: str = "") -> tuple[e2e.CaseRun, object]:
    recipe = recipes.get(recipe_id)
    recipe = recipe.replace(rollout=dataclasses.replace(recipe.rollout, num_rollout=loops))
    argv = [sys.executable, str(STANDIN), *recipe.argv()[2:], *argv_extra]
    env = {"env_vars": {"RLCHECK_STANDIN_FAULT": fault, "RLCHECK_STANDIN_PHASE_S": "0.05",
                        "RLCHECK_STANDIN_SLIME": version, "RLCHECK_STANDIN_SHAPE": shape}}
    milestones, invariants = slime_log.plan(version, deadlines, [*recipe.argv(), *argv_extra])
    traits = catalog.job_traits([*recipe.argv(), *argv_extra])
    watcher = Watcher(milestones, loops, invariants=invariants, traits=traits)
    result = e2e.run_case(local_ray.dashboard_url, argv, watcher,
                          log_path=tmp_path / "job.log", runtime_env=env)
    return result, e2e.verdict_for("case", result, loops)


@pytest.mark.slow
@pytest.mark.parametrize("version", slime_log.VERSIONS)
def test_e2e_harness_clean_run_passes_with_all_milestones(local_ray, tmp_path, version):
    result, verdict = run(local_ray, tmp_path, version=version)
    assert verdict.status is Status.PASS, verdict.render()
    assert len(result.phase_times) == 3 and "update_weights" in result.phase_times[2]
    assert result.job_status == "SUCCEEDED" and Path(result.log_path).stat().st_size > 0


RUNTIME_FAILURES = sorted(catalog.load_catalog())


@pytest.mark.slow
@pytest.mark.parametrize("failure_id", RUNTIME_FAILURES)
def test_e2e_harness_reports_each_catalogued_failure(local_ray, tmp_path, failure_id):
    # An entry tied to a job trait is reported on a job that has it (sparse attention: SGLang's nsa backend).
    trait = catalog.get(failure_id).only_when
    extra = ("--sglang-attention-backend", "nsa") if trait == "dsa" else ()
    result, verdict = run(local_ray, tmp_path, fault=f"known:{failure_id}", loops=1, argv_extra=extra)
    role = catalog.get(failure_id).role
    if role in ("invariant", "fallback"):  # a routine line, or one no entry knows, never ends a run alone
        assert verdict.status is Status.FAIL and result.end.kind == "timeout", verdict.render()
        assert verdict.failure_id != failure_id, verdict.render()
        return
    assert verdict.status is Status.FAIL and verdict.failure_id == failure_id, verdict.render()
    # a consequence waits up to PENDING_S for the cause it follows; none comes here, so it is named itself
    bound_s = 30 + (watch.PENDING_S if role == "consequence" else 0)
    assert result.job_status == "STOPPED" and result.stopped_s < bound_s


@pytest.mark.slow
@pytest.mark.parametrize(("milestone", "failure_id"), [
    ("placement-group", "placement-group-oversubscribed"), ("train-actor-ready", "sglang-health-hang"),
    ("weights-synced", None), ("rollout", None), ("ref_log_probs", None), ("actor_train", None), ("train", None),
    ("update_weights", None)])
def test_e2e_harness_hang_ends_within_its_phase_timeout(local_ray, tmp_path, milestone, failure_id):
    # The job's own start (Ray starting the driver) is not under test: only the hung phase gets a tight deadline.
    deadlines = TIGHT if milestone == "placement-group" else dataclasses.replace(TIGHT, placement_s=30)
    result, verdict = run(local_ray, tmp_path, fault=f"hang:{milestone}", loops=1, deadlines=deadlines)
    assert verdict.status is Status.FAIL and result.end.kind == "timeout" and result.end.name == milestone
    # Seconds since the last milestone when the watcher gave up: the 600 s hang was cut at its deadline.
    waited = float(result.end.line.split("(waited ")[1].split(" s")[0])
    assert PHASE_TIMEOUT_S <= waited <= PHASE_TIMEOUT_S + 5
    assert verdict.failure_id == failure_id


@pytest.mark.slow
@pytest.mark.parametrize(("fault", "failure_id", "fragment"), [
    ("dead-worker", "ray-actor-died", "ActorDiedError"),
    ("zero-reward", "reward-silent-zero", "invariant broken at loop 0: reward-silent-zero"),
    ("truncation", "kv-pool-truncation", "invariant broken at loop 0: kv-pool-truncation"),
    ("kl", None, "step-0 train/ppo_kl = 0.03"),
    ("nan-loss", None, "step 0 train/loss = nan"),
])
def test_e2e_harness_dead_worker_and_invariants(local_ray, tmp_path, fault, failure_id, fragment):
    _, verdict = run(local_ray, tmp_path, fault=fault, loops=1)
    assert verdict.status is Status.FAIL and verdict.failure_id == failure_id and fragment in verdict.summary, \
        verdict.render()


@pytest.mark.slow
def test_e2e_harness_crash_says_how_the_job_ended(local_ray, tmp_path):
    result, verdict = run(local_ray, tmp_path, fault="crash", loops=1)
    assert verdict.status is Status.FAIL and result.job_status == "FAILED"
    assert "before any verdict" in verdict.summary and "stand-in trainer crashed on purpose" in verdict.details


@pytest.mark.slow
def test_e2e_harness_strict_argv_rejects_an_unknown_flag(local_ray, tmp_path):
    _, verdict = run(local_ray, tmp_path, loops=1, argv_extra=("--sglang-enable-ep-moe",))
    assert verdict.status is Status.FAIL and verdict.failure_id == "sglang-dead-flag", verdict.render()
