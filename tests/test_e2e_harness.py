"""The e2e harness against a real local Ray running the stand-in trainer (tests/standin/train.py).

Proves, without a GPU cluster: a clean run passes with every milestone of 3 loops; every catalogued
failure injected into the job's log is reported with its catalogue id and the job is stopped; every
hang ends within its phase timeout + 5 s; crashes, dead workers and broken invariants end in verdicts.
A real job runs for each role of entry, kind of hang and kind of end; the other entries, hangs and invariants
are judged by the same watcher fed the stand-in's own lines as run_case feeds them (no job, no wait).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
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
    argv, env_vars, watcher = case(fault, recipe_id, loops, argv_extra, deadlines, version, shape)
    result = e2e.run_case(local_ray.dashboard_url, argv, watcher,
                          log_path=tmp_path / "job.log", runtime_env={"env_vars": env_vars})
    return result, e2e.verdict_for("case", result, loops)


def case(fault: str = "", recipe_id: str = "qwen3-30b-a3b-disaggregated", loops: int = 3,
         argv_extra: tuple[str, ...] = (), deadlines: slime_log.Deadlines = DEADLINES,
         version: str = slime_log.DEFAULT_VERSION, shape: str = "") -> tuple[list[str], dict[str, str], Watcher]:
    """The stand-in's argv and environment for a case, and the watcher that judges its log."""
    recipe = recipes.get(recipe_id)
    recipe = recipe.replace(rollout=dataclasses.replace(recipe.rollout, num_rollout=loops))
    argv = [sys.executable, str(STANDIN), *recipe.argv()[2:], *argv_extra]
    env_vars = {"RLCHECK_STANDIN_FAULT": fault, "RLCHECK_STANDIN_PHASE_S": "0.05",
                "RLCHECK_STANDIN_SLIME": version, "RLCHECK_STANDIN_SHAPE": shape}
    milestones, invariants = slime_log.plan(version, deadlines, [*recipe.argv(), *argv_extra])
    traits = catalog.job_traits([*recipe.argv(), *argv_extra])
    return argv, env_vars, Watcher(milestones, loops, invariants=invariants, traits=traits)


@pytest.mark.slow
@pytest.mark.parametrize("version", slime_log.VERSIONS)
def test_e2e_harness_clean_run_passes_with_all_milestones(local_ray, tmp_path, version):
    result, verdict = run(local_ray, tmp_path, version=version)
    assert verdict.status is Status.PASS, verdict.render()
    assert len(result.phase_times) == 3 and "update_weights" in result.phase_times[2]
    assert result.job_status == "SUCCEEDED" and Path(result.log_path).stat().st_size > 0


RUNTIME_FAILURES = sorted(catalog.load_catalog())
REAL_JOBS = ("cuda-oom", "sparse-mla-bwd-nan", "ray-actor-died", "kv-pool-truncation", "uncatalogued")
"""The entries injected into a real Ray job: one per role (a cause, a consequence, the invariant and the fallback)
and the one tied to a job trait. Every other entry's line goes through the same watcher without a job (below)."""


def test_e2e_harness_real_jobs_cover_every_role_of_the_catalogue():
    assert set(REAL_JOBS) <= set(RUNTIME_FAILURES)
    assert {catalog.get(f).role for f in REAL_JOBS} == {catalog.get(f).role for f in RUNTIME_FAILURES}
    assert {catalog.get(f).only_when for f in RUNTIME_FAILURES} - {""} <= {catalog.get(f).only_when for f in REAL_JOBS}


@pytest.mark.slow
@pytest.mark.parametrize("failure_id", REAL_JOBS)
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


def standin_lines(fault: str, deadlines: slime_log.Deadlines = DEADLINES) -> tuple[list[str], Watcher]:
    """The lines the stand-in prints for a one-loop case, to its end or to the hang its fault ends in (run as a plain
    child with RLCHECK_STANDIN_HANG_EXITS, it exits there), and the watcher run() would judge them with."""
    argv, env_vars, watcher = case(fault=fault, loops=1, deadlines=deadlines)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env_vars, "RLCHECK_STANDIN_HANG_EXITS": "1"})
    assert done.returncode == 0 and not done.stderr, done.stderr[-3000:]
    return done.stdout.split("\n")[:-1], watcher


def feed_as_run_case(watcher: Watcher, lines: list[str]) -> float:
    """Each line as run_case feeds it (the deadline checked before and after it, an empty line skipped), on a clock
    that moves 10 ms a line; the clock at the last line."""
    at_s = 0.0
    for line in lines:
        at_s += 0.01
        if line and not watcher.check(at_s):
            watcher.feed(line, at_s)
        watcher.check(at_s)
    return at_s


def pure_verdict(watcher: Watcher):
    run_ = e2e.CaseRun(job_id="", end=watcher.ended, job_status="", phase_times=watcher.phase_times(),
                       tail=list(watcher.tail)[-30:], log_path="job.log", stopped_s=0.0)
    return e2e.verdict_for("case", run_, 1)


@pytest.fixture(scope="module")
def standin_known_lines() -> list[str]:
    """What the stand-in prints under `known:<id>` before that entry's line: its milestones of loop 0 and the
    signature stamp. They are the same for every entry (its fault_line, printed last, is the only part that depends
    on it), so they are read once."""
    failure_id = next(f for f in RUNTIME_FAILURES if f not in REAL_JOBS)
    lines, _ = standin_lines(f"known:{failure_id}")
    assert lines[-1] == catalog.get(failure_id).examples[0], lines[-3:]
    assert lines[-2].startswith("rlcheck-standin: signature at "), lines[-3:]
    return lines[:-1]


@pytest.mark.parametrize("failure_id", [f for f in RUNTIME_FAILURES if f not in REAL_JOBS])
def test_e2e_harness_watcher_names_each_catalogued_failure_from_the_standins_lines(standin_known_lines, failure_id):
    """The stand-in's lines for `known:<id>`, fed as run_case feeds them (each line after the deadline check, on a
    clock that moves 10 ms a line): a cause ends the watch at its line, a consequence once PENDING_S have passed."""
    _, _, watcher = case(fault=f"known:{failure_id}", loops=1)
    at_s = feed_as_run_case(watcher, [*standin_known_lines, catalog.get(failure_id).examples[0]])
    if catalog.get(failure_id).role == "consequence":
        assert watcher.ended is None and watcher.check(at_s + watch.PENDING_S - 0.01) == []
        watcher.check(at_s + watch.PENDING_S)
    assert watcher.ended is not None and watcher.ended.kind == "failure", watcher.ended
    verdict = pure_verdict(watcher)
    assert verdict.status is Status.FAIL and verdict.failure_id == failure_id, verdict.render()
    assert verdict.summary.startswith(f"{failure_id} at loop 0: "), verdict.summary


HANGS = [("placement-group", "placement-group-oversubscribed"), ("train-actor-ready", "sglang-health-hang"),
         ("weights-synced", None), ("rollout", None), ("ref_log_probs", None), ("actor_train", None), ("train", None),
         ("update_weights", None)]
REAL_HANGS = ("placement-group", "train-actor-ready", "update_weights")
"""Hung in a real Ray job: the first phase (its own deadline), one with a hypothesis, the last of a loop. The others
hang the same stand-in and watcher, without a job (below)."""


@pytest.mark.slow
@pytest.mark.parametrize(("milestone", "failure_id"), [h for h in HANGS if h[0] in REAL_HANGS])
def test_e2e_harness_hang_ends_within_its_phase_timeout(local_ray, tmp_path, milestone, failure_id):
    # The job's own start (Ray starting the driver) is not under test: only the hung phase gets a tight deadline.
    deadlines = TIGHT if milestone == "placement-group" else dataclasses.replace(TIGHT, placement_s=30)
    result, verdict = run(local_ray, tmp_path, fault=f"hang:{milestone}", loops=1, deadlines=deadlines)
    assert verdict.status is Status.FAIL and result.end.kind == "timeout" and result.end.name == milestone
    # Seconds since the last milestone when the watcher gave up: the 600 s hang was cut at its deadline.
    waited = float(result.end.line.split("(waited ")[1].split(" s")[0])
    assert PHASE_TIMEOUT_S <= waited <= PHASE_TIMEOUT_S + 5
    assert verdict.failure_id == failure_id


@pytest.mark.parametrize(("milestone", "failure_id"), [h for h in HANGS if h[0] not in REAL_HANGS])
def test_e2e_harness_watcher_times_out_each_hung_phase_at_its_deadline(milestone, failure_id):
    """The stand-in's lines up to its hang before the milestone, fed as run_case feeds them: nothing is due before the
    phase's deadline; at it, a timeout of that milestone."""
    lines, watcher = standin_lines(f"hang:{milestone}", dataclasses.replace(TIGHT, placement_s=30))
    feed_as_run_case(watcher, lines)
    assert watcher.ended is None and watcher.check(watcher.last_progress_s + PHASE_TIMEOUT_S - 0.01) == []
    watcher.check(watcher.last_progress_s + PHASE_TIMEOUT_S)
    verdict = pure_verdict(watcher)
    assert verdict.status is Status.FAIL and watcher.ended is not None and watcher.ended.kind == "timeout"
    assert watcher.ended.name == milestone, watcher.ended
    assert float(watcher.ended.line.split("(waited ")[1].split(" s")[0]) == PHASE_TIMEOUT_S
    assert verdict.failure_id == failure_id


def test_e2e_harness_real_hangs_and_faults_are_among_the_cases():
    assert set(REAL_HANGS) < {m for m, _ in HANGS} and set(REAL_BROKEN) < {f for f, _, _ in BROKEN}


BROKEN = [
    ("dead-worker", "ray-actor-died", "ActorDiedError"),
    ("zero-reward", "reward-silent-zero", "invariant broken at loop 0: reward-silent-zero"),
    ("truncation", "kv-pool-truncation", "invariant broken at loop 0: kv-pool-truncation"),
    ("kl", None, "step-0 train/ppo_kl = 0.03"),
    ("nan-loss", None, "step 0 train/loss = nan"),
]
REAL_BROKEN = ("dead-worker", "zero-reward")
"""In a real Ray job: the worker that dies (the job ends by itself) and one broken invariant. The other invariants
are broken by the same stand-in and judged by the same watcher without a job (below)."""


@pytest.mark.slow
@pytest.mark.parametrize(("fault", "failure_id", "fragment"), [b for b in BROKEN if b[0] in REAL_BROKEN])
def test_e2e_harness_dead_worker_and_invariants(local_ray, tmp_path, fault, failure_id, fragment):
    _, verdict = run(local_ray, tmp_path, fault=fault, loops=1)
    assert verdict.status is Status.FAIL and verdict.failure_id == failure_id and fragment in verdict.summary, \
        verdict.render()


@pytest.mark.parametrize(("fault", "failure_id", "fragment"), [b for b in BROKEN if b[0] not in REAL_BROKEN])
def test_e2e_harness_watcher_judges_each_broken_invariant_from_the_standins_lines(fault, failure_id, fragment):
    lines, watcher = standin_lines(fault)
    feed_as_run_case(watcher, lines)
    verdict = pure_verdict(watcher)
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
