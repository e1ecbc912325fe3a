"""Rule table for the e2e preflight gate (rlcheck.preflight.gate): which checks the gate runs (those needing neither
the cluster, this machine's GPUs nor the node), what a recipe the hardware cannot hold leaves to judge, a crashing
check turned into UNKNOWN naming it, what a dry run may afford, what is kept per (recipe, hardware), and the whole
NO-GO text a skipped case carries."""

from __future__ import annotations

import pytest

from rlcheck import recipes
from rlcheck.facts import Need
from rlcheck.hardware import get_profile
from rlcheck.preflight import gate, guarded_by
from rlcheck.preflight.registry import Check, Inputs
from rlcheck.verdict import Status, Verdict

H200 = get_profile("h200")
GB300 = get_profile("gb300")
GLM_ON_H200 = ("glm5.2-gb300: shaped for GB300 nodes (4 GPUs per node, NVL72, 16 nodes); h200 nodes have 8 GPUs")


def _judge(status: Status, summary: str):
    return lambda obs, i: Verdict(status=status, summary=summary)


def _check(check_id: str, needs: frozenset[Need] = frozenset({Need.LAUNCH}), **kw) -> Check:
    gpu_count = 1 if Need.GPU in needs else 0
    return Check(id=check_id, guards=(), judges="a rule", judge=kw.pop("judge", _judge(Status.PASS, check_id)),
                 needs=needs, gpu_count=gpu_count, **kw)


def _raise(message: str):
    def judge(obs, inputs):
        raise RuntimeError(message)
    return judge


CHECKS = (
    _check("recipe_fits_hardware"),
    _check("recipe_batch", judge=_judge(Status.FAIL, "96 != 128")),
    _check("image_versions", frozenset()),  # needs nothing: in the gate
    _check("recipe_profiled", frozenset({Need.PROFILE, Need.MODEL})),
    _check("cluster_gpus", frozenset({Need.CLUSTER})),
    _check("gpu_bf16_gemm", frozenset({Need.GPU})),
    _check("gpu_node_inventory", frozenset({Need.NODE, Need.PROFILE})),
    _check("image_reads", collect=lambda i: "read"),  # reads the machine
    _check("image_light", collect=lambda i: "light", light_collect=True),
)


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(gate, "all_checks", lambda: CHECKS)
    monkeypatch.setattr(gate, "_DONE", {})
    return CHECKS


def test_inputs_without_a_profile_judge_the_base_recipe():
    inputs = gate.inputs_for("qwen3-30b-a3b-disaggregated", None)
    assert inputs == Inputs(recipe=recipes.get("qwen3-30b-a3b-disaggregated"), profile=None, guarded_by=guarded_by())
    assert inputs.guarded_by["batch-size-mismatch"] == "recipe_batch"


@pytest.mark.parametrize(("recipe_id", "hw"), [("qwen3-30b-a3b-disaggregated", "h100"),
                                               ("qwen3-4b-colocated", "gb300"), ("glm5.2-gb300", "gb300")])
def test_inputs_on_hardware_the_recipe_fits_carry_its_deltas(recipe_id, hw):
    profile = get_profile(hw)
    inputs = gate.inputs_for(recipe_id, profile)
    assert inputs == Inputs(recipe=recipes.get(recipe_id, profile), profile=profile, guarded_by=guarded_by())
    assert inputs.recipe.hardware == hw and inputs.refusal == ""


def test_inputs_on_hardware_the_recipe_does_not_fit_keep_the_base_recipe_and_say_why():
    inputs = gate.inputs_for("glm5.2-gb300", H200)
    assert inputs == Inputs(recipe=recipes.get("glm5.2-gb300"), profile=H200, refusal=GLM_ON_H200,
                            guarded_by=guarded_by())


def test_inputs_of_an_unknown_recipe_are_refused_listing_the_valid_ones():
    with pytest.raises(KeyError, match="unknown recipe 'qwen9': valid are qwen3-4b-colocated"):
        gate.inputs_for("qwen9", H200)


@pytest.mark.parametrize(("message", "summary"), [
    ("nvidia-smi not found\nsecond line", "could not run: RuntimeError: nvidia-smi not found"),
    ("one line", "could not run: RuntimeError: one line"),
    ("", "could not run: RuntimeError: "),
])
def test_a_crashing_check_is_unknown_naming_the_check_and_the_first_line(message, summary):
    inputs = gate.inputs_for("qwen3-4b-colocated", H200)
    out = gate.run_safely(_check("recipe_crash", judge=_raise(message)), inputs)
    assert out == [Verdict(check_id="recipe_crash", status=Status.UNKNOWN, summary=summary)]


def test_a_check_that_judges_is_returned_as_it_judged():
    inputs = gate.inputs_for("qwen3-4b-colocated", H200)
    out = gate.run_safely(_check("recipe_batch", judge=_judge(Status.WARN, "close")), inputs)
    assert out == [Verdict(check_id="recipe_batch", status=Status.WARN, summary="close")]


def test_the_gate_runs_every_check_needing_no_cluster_gpu_or_node(registry):
    verdicts = gate.gate_verdicts(gate.inputs_for("qwen3-4b-colocated", H200))
    assert [(v.check_id, v.status) for v in verdicts] == [
        ("recipe_fits_hardware", Status.PASS), ("recipe_batch", Status.FAIL), ("image_versions", Status.PASS),
        ("recipe_profiled", Status.PASS), ("image_reads", Status.PASS), ("image_light", Status.PASS)]


def test_a_refused_shape_leaves_only_the_fit_check_to_judge(registry):
    verdicts = gate.gate_verdicts(gate.inputs_for("glm5.2-gb300", H200))
    assert verdicts == [Verdict(check_id="recipe_fits_hardware", status=Status.PASS, summary="recipe_fits_hardware")]


def test_the_gate_never_raises_a_crashing_check_is_unknown(monkeypatch):
    monkeypatch.setattr(gate, "all_checks", lambda: (_check("recipe_crash", judge=_raise("boom")), *CHECKS[:1]))
    verdicts = gate.gate_verdicts(gate.inputs_for("qwen3-4b-colocated", H200))
    assert [(v.check_id, v.status, v.summary) for v in verdicts] == [
        ("recipe_crash", Status.UNKNOWN, "could not run: RuntimeError: boom"),
        ("recipe_fits_hardware", Status.PASS, "recipe_fits_hardware")]


def test_a_dry_run_judges_the_recipe_alone_and_light_collectors(registry):
    recipe = recipes.get("qwen3-4b-colocated", H200)
    verdicts = gate.recipe_verdicts(recipe, None)
    assert [v.check_id for v in verdicts] == ["recipe_fits_hardware", "recipe_batch", "image_versions",
                                              "recipe_profiled", "image_light"]


def test_a_dry_run_gives_the_judges_the_recipe_and_profile(monkeypatch):
    seen: list[Inputs] = []
    monkeypatch.setattr(gate, "all_checks", lambda: (_check("recipe_seen", judge=lambda o, i: seen.append(i) or
                                                            Verdict(status=Status.PASS, summary="")),))
    recipe = recipes.get("qwen3-4b-colocated", GB300)
    gate.recipe_verdicts(recipe, GB300)
    assert seen == [Inputs(recipe=recipe, profile=GB300)]


def test_preflight_is_kept_per_recipe_and_hardware(monkeypatch):
    runs: list[tuple[str, str | None]] = []

    def judge(obs, inputs):
        runs.append((inputs.recipe.id, inputs.profile.name))
        return Verdict(status=Status.PASS, summary=f"{inputs.recipe.id} on {inputs.profile.name}")
    monkeypatch.setattr(gate, "all_checks", lambda: (_check("recipe_fits_hardware", judge=judge),))
    monkeypatch.setattr(gate, "_DONE", {})
    first = gate.preflight("qwen3-4b-colocated", H200)
    assert first == (Verdict(check_id="recipe_fits_hardware", status=Status.PASS,
                             summary="qwen3-4b-colocated on h200"),)
    assert gate.preflight("qwen3-4b-colocated", H200) is first
    gate.preflight("qwen3-4b-colocated", GB300)
    gate.preflight("qwen3-4b-remote-rm", H200)
    assert runs == [("qwen3-4b-colocated", "h200"), ("qwen3-4b-colocated", "gb300"), ("qwen3-4b-remote-rm", "h200")]
    assert set(gate._DONE) == {("qwen3-4b-colocated", "h200"), ("qwen3-4b-colocated", "gb300"),
                               ("qwen3-4b-remote-rm", "h200")}


def test_preflight_of_a_recipe_the_hardware_cannot_hold_is_its_refusal():
    verdicts = gate.preflight("glm5.2-gb300", H200)
    assert [(v.check_id, v.status, v.summary) for v in verdicts] == [
        ("recipe_fits_hardware", Status.FAIL, GLM_ON_H200)]


VERDICTS = (Verdict(check_id="recipe_batch", status=Status.FAIL, summary="96 != 128"),
            Verdict(check_id="image_versions", status=Status.WARN, summary="live"),
            Verdict(check_id="image_mbridge", status=Status.SKIP, summary="not MoE"),
            Verdict(check_id="recipe_layout", status=Status.PASS, summary="ok"),
            Verdict(check_id="cluster_gpus", status=Status.UNKNOWN, summary="ray did not answer"))


@pytest.mark.parametrize(("picked", "reason"), [
    ((0, 1, 2, 3, 4), "preflight NO-GO, no GPU requested: recipe_batch FAIL: 96 != 128; "
                      "cluster_gpus UNKNOWN: ray did not answer"),
    ((4,), "preflight NO-GO, no GPU requested: cluster_gpus UNKNOWN: ray did not answer"),
    ((0,), "preflight NO-GO, no GPU requested: recipe_batch FAIL: 96 != 128"),
    ((1, 2, 3), None),  # WARN, SKIP and PASS never block
    ((), None),
])
def test_only_fail_and_unknown_block_and_the_reason_names_each(picked, reason):
    verdicts = tuple(VERDICTS[i] for i in picked)
    assert gate.blockers(verdicts) == [v for v in verdicts if v.status in (Status.FAIL, Status.UNKNOWN)]
    assert gate.skip_reason(verdicts) == reason
