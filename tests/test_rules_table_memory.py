"""Whole-verdict tables for the memory judges (pp-stage-oom, kv-pool-truncation): every row of the stage and KV
tables in tests/test_probe_memory*.py, recorded whole (summary, the per-stage and per-pool arithmetic in the
details, remedy) in tests/data/golden/memory.json, so a changed term that moves a figure by 0.1 GiB, a lost
detail line or another remedy turns a row red; and the rules behind the listed seeded bugs, each side."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import pytest

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.probes import memory, memory_kv
from rlcheck.recipes.recipe import Recipe, with_sglang
from rlcheck.verdict import Status
from tests import golden_verdicts
from tests.test_probe_memory import STAGE_TABLE
from tests.test_probe_memory_kv import KV_TABLE

H100, H200 = get_profile("h100"), get_profile("h200")


@pytest.mark.parametrize(("row", "build", "profile", "status"), [t[:4] for t in STAGE_TABLE],
                         ids=[t[0] for t in STAGE_TABLE])
def test_rules_table_stage_memory_whole_verdict(row, build, profile, status):
    verdict = memory.evaluate_stage_memory(build(), profile)
    assert verdict.status is status
    golden_verdicts.check("memory", f"stage/{row}", verdict)


@pytest.mark.parametrize(("row", "build", "profile", "status"), [t[:4] for t in KV_TABLE], ids=[t[0] for t in KV_TABLE])
def test_rules_table_kv_pool_whole_verdict(row, build, profile, status):
    verdict = memory_kv.evaluate_kv_pool(build(), profile)
    assert verdict.status is status
    golden_verdicts.check("memory", f"kv/{row}", verdict)


def _30b(**parallel) -> Recipe:
    r = recipes.get("qwen3-30b-a3b-disaggregated", H200)
    return r.replace(parallel=dataclasses.replace(r.parallel, tp=1, cp=1, sequence_parallel=False, **parallel))


@pytest.mark.parametrize(("ep", "etp", "pp", "expert_dp"), [
    (2, 1, 1, 6), (2, 1, 2, 3), (4, 1, 1, 3), (2, 2, 1, 3), (3, 1, 2, 2), (1, 1, 3, 4)])
def test_rules_table_expert_dp_divides_by_each_of_ep_etp_pp(ep, etp, pp, expert_dp):
    """World 12: expert DP = 12 / (EP x ETP x PP); each factor alone moves it."""
    est = memory.estimate_stage_memory(_30b(ep=ep, etp=etp, pp=pp), H200)
    assert est.expert_dp == expert_dp and est.dp_cp == 12 // pp


@pytest.mark.parametrize(("ep", "etp", "pp"), [(4, 1, 2), (2, 2, 2), (8, 1, 1), (1, 1, 5)])
def test_rules_table_layout_the_estimate_refuses(ep, etp, pp):
    verdict = memory.evaluate_stage_memory(_30b(ep=ep, etp=etp, pp=pp), H200)
    assert verdict.status is Status.UNKNOWN and "training GPUs do not divide by" in verdict.summary


def _4b_on(hbm_gib: float) -> memory.StageMemory:
    return memory.estimate_stage_memory(recipes.get("qwen3-4b-colocated", H100),
                                        dataclasses.replace(H100, hbm_gib=hbm_gib))


@pytest.mark.parametrize("hbm_gib", [40.0, 63.8, 63.9, 70.0, 75.1, 75.2, 90.0])
def test_rules_table_stage_memory_status_follows_the_two_bounds(hbm_gib):
    est = _4b_on(hbm_gib)
    total, budget = est.total_gib(est.peak_index), est.budget_gib
    verdict = memory.evaluate_stage_memory(recipes.get("qwen3-4b-colocated", H100),
                                           dataclasses.replace(H100, hbm_gib=hbm_gib))
    expected = (Status.FAIL if total > budget else Status.WARN if total * memory.shortfall() > 0.9 * budget
                else Status.PASS)
    assert verdict.status is expected
    assert budget == pytest.approx(242.0 / 257.0 * hbm_gib)


@pytest.mark.parametrize(("running", "status"), [(None, None), ("3", Status.PASS), ("4", Status.WARN)])
def test_rules_table_kv_max_running_requests_decides_the_warn(running, status):
    """128k responses on H100: the pool holds 3 full-length requests and 8 are asked of each engine: WARN,
    unless --sglang-max-running-requests caps the engine at 3 (PASS); 4 is one too many (WARN)."""
    base = recipes.get("qwen3-4b-colocated", "h100")
    base = base.replace(rollout=dataclasses.replace(base.rollout, max_response_len=131_072))
    recipe = base if running is None else with_sglang(base, {"max-running-requests": running})
    pool = memory_kv.estimate_kv_pool(recipe, H100)
    assert pool.full_requests == 3 and pool.concurrency == int(running or 8)
    assert memory_kv.evaluate_kv_pool(recipe, H100).status is (status or Status.WARN)


def _edge(value_at: Callable[[float], bool], start: float) -> float:
    """The HBM size, within 400 ulps of start, where value_at holds exactly (a float equality the judge meets)."""
    for k in range(400):
        for x in (start, -start):
            hbm = abs(x)
            for _ in range(k):
                hbm = math.nextafter(hbm, math.inf if x > 0 else -math.inf)
            if value_at(hbm):
                return hbm
    raise AssertionError(f"no HBM size near {start} meets the bound exactly")


def test_rules_table_stage_memory_bounds_are_strict():
    """At an estimate exactly equal to the budget it is not a FAIL; exactly at the WARN line it is not a WARN."""
    est = _4b_on(80.0)
    total, fraction = est.total_gib(est.peak_index), memory.TORCH_BUDGET_FRACTION
    at_budget = _edge(lambda hbm: fraction * hbm == total, total / fraction)
    at_warn = _edge(lambda hbm: total * memory.shortfall() == memory.WARN_FRACTION * (fraction * hbm),
                    total * memory.shortfall() / memory.WARN_FRACTION / fraction)
    recipe = recipes.get("qwen3-4b-colocated", H100)
    assert memory.evaluate_stage_memory(recipe, dataclasses.replace(H100, hbm_gib=at_budget)).status is Status.WARN
    assert memory.evaluate_stage_memory(recipe, dataclasses.replace(H100, hbm_gib=at_warn)).status is Status.PASS


def test_rules_table_stage_total_without_activations_or_buffers_is_the_static_memory():
    est = _4b_on(80.0)
    bare = dataclasses.replace(est, activations=(), buffers=())
    assert bare.total_gib(0) == est.stages[0].total_gib
    assert dataclasses.replace(est, buffers=()).total_gib(0) == est.stages[0].total_gib + est.activations[0].total_gib
    assert dataclasses.replace(est, activations=()).total_gib(0) == est.stages[0].total_gib + est.buffers[0].total_gib


def test_rules_table_single_gpu_has_no_nccl_group():
    r = recipes.get("qwen3-4b-colocated", H100)
    one = r.replace(placement=dataclasses.replace(r.placement, actor_num_nodes=1, actor_gpus_per_node=1))
    details = memory.evaluate_stage_memory(one, H100).details
    assert "NCCL groups: collectives none; send/recv none (measured" in details and "NCCL 0.00" in details


def test_rules_table_seed_calibration_recomputed():
    """The cached calibration, computed afresh: each relative error is (value - reference) / reference."""
    for cached in (memory.stage_calibration, memory.shortfall, memory.seed_steady_estimate):
        cached.cache_clear()
    assert memory.seed_steady_estimate() == pytest.approx(215.334, abs=0.001)
    assert memory.shortfall() == pytest.approx(228.0 / 215.334, abs=1e-5)
    assert memory.stage_calibration() == (
        "calibration (seed 004, GLM-5.2 on GB300): total 743.9B vs 744B (-0.0%); TP8xPP8xEP8 last stage 19.87B per "
        "rank vs 20.1B (-1.1%), Adam moments 148.1 GiB vs 149.8 (~150 reported; -1.1%), 333 GiB in all vs the 242 GiB "
        "budget (step 1 OOM); TP8xPP4xEP16 215.3 GiB with activations and buffers vs 228 GiB measured steady (-5.6%)")
    assert memory._err(110.0, 100.0) == "+10.0%" and memory._err(90.0, 100.0) == "-10.0%"
