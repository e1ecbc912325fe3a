"""The end-to-end GRPO test cases on a real cluster: gated by preflight, submitted argv-safe, watched live.

    pytest testcases/ --hardware=b300 --ray-address=http://HEAD:8265
    pytest testcases/ --dry-run --hardware=h200      # render and validate every case, no cluster
    pytest testcases/ --dry-run --hardware=none      # each case on every hardware it fits

Without --ray-address each case is skipped with the reason; no test here runs SLIME anywhere else.
"""

from __future__ import annotations

import dataclasses
import urllib.request

import pytest

from rlcheck import catalog, hardware, recipes
from rlcheck.deploy import render
from rlcheck.e2e import runner as e2e
from rlcheck.e2e import slime_log
from rlcheck.e2e.baselines import outside
from rlcheck.e2e.plot import plot_phase_times
from rlcheck.e2e.watch import Watcher
from rlcheck.preflight import gate
from rlcheck.verdict import Status, Verdict
from testcases.cases import CASES


def smoke(recipe, loops: int):
    """The recipe cut to a smoke run: `loops` GRPO loops."""
    return recipe.replace(rollout=dataclasses.replace(recipe.rollout, num_rollout=loops))


def slime_version(rlcheck_context) -> tuple[str, str]:
    """The milestone table for this run: --framework, else the SLIME/Miles importable here, else v0.2.4."""
    fw = rlcheck_context.framework
    return slime_log.version_for(fw.framework if fw else None, fw.version if fw else None)


def dry_run(case, profile, version: str = slime_log.DEFAULT_VERSION) -> Verdict:
    recipe = smoke(recipes.get(case.recipe_id, profile), case.loops)
    doc = render.document(case.recipe_id, profile.name)
    bad = [v for v in gate.recipe_verdicts(recipe, profile) if v.status.blocks]
    milestones = case.plan(recipe.argv(), version)[0]
    summary = (f"renders for {profile.name}: {len(doc['argv'])} argv tokens, "
               f"{doc['resources']['gpu_nodes']} GPU node(s), {len(milestones)} milestones x {case.loops} loops "
               f"(SLIME {version} log lines)")
    if bad:
        return Verdict(check_id="x", status=Status.FAIL, summary=f"{summary}; recipe checks fail: "
                                                                 f"{', '.join(v.check_id for v in bad)}")
    # SKIP, not PASS: a dry run renders and judges the recipe but runs nothing, so it proves no e2e property
    return Verdict(check_id="x", status=Status.SKIP, summary=f"dry run, nothing ran: {summary}")


@pytest.mark.e2e
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_e2e(case, record_verdict, rlcheck_context, request):
    profile = rlcheck_context.profile
    version, _why = slime_version(rlcheck_context)
    if rlcheck_context.dry_run and profile is None:  # no --hardware: render the case on every hardware it fits
        profiles = hardware.load_profiles()
        record_verdict(*(dry_run(case, profiles[name], version) for name in case.hardware))
        return
    if profile.name not in case.hardware:
        pytest.skip(f"{case.name} fits {', '.join(case.hardware)}: found --hardware={profile.name}")
    if rlcheck_context.dry_run:
        record_verdict(dry_run(case, profile, version))
        return
    reason = gate.skip_reason(gate.preflight(case.recipe_id, profile))
    if reason:
        pytest.skip(reason)
    if case.needs_reward_service and not rlcheck_context.rm_url:
        pytest.skip(f"{case.name} needs the reward service the cluster reaches (--rm-url): found none")
    cluster = request.getfixturevalue("ray_cluster")
    recipe = smoke(recipes.get(case.recipe_id, profile), case.loops)
    if case.needs_reward_service:
        recipe = recipe.replace(reward=dataclasses.replace(recipe.reward, rm_url=rlcheck_context.rm_url))
    log_path = rlcheck_context.report_dir / "e2e" / f"{case.name}.log"
    milestones, invariants = case.plan(recipe.argv(), version)
    watcher = Watcher(milestones, case.loops, invariants=invariants, traits=catalog.job_traits(recipe.argv()))
    run = e2e.run_case(cluster.dashboard_url, recipe.argv(), watcher,
                       log_path=log_path, runtime_env=recipe.runtime_env())
    verdict = e2e.verdict_for(case.name, run, case.loops)
    plot_phase_times(run.phase_times, rlcheck_context.report_dir / "e2e" / f"{case.name}.png", title=case.name)
    slow = outside(case.name, profile.name, run.phase_times)
    if verdict.status is Status.PASS and slow:
        verdict = dataclasses.replace(verdict, status=Status.WARN, summary=verdict.summary + "; slower than baseline: "
                                      + "; ".join(slow))
    if case.needs_reward_service:
        with urllib.request.urlopen(rlcheck_context.rm_url.rsplit("/", 1)[0] + "/metrics", timeout=30) as resp:
            counts = e2e.reward_counts(resp.read().decode())
        record_verdict(verdict, e2e.reward_verdict(case.name, counts, case.min_scored_requests))
        return
    record_verdict(verdict)
