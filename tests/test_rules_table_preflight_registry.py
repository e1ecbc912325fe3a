"""Rule table for the check registry (rlcheck.preflight.registry): what a check must declare (id, GPUs exactly when it
needs one, a reason exactly when advisory, a one-line `judges`), which checks the gate runs, a check whose fact is
missing UNKNOWN naming each fact and why before it judges, a judge that says nothing UNKNOWN, every verdict stamped
with the check's id, and what Inputs give a judge of a job and of a built-in recipe."""

from __future__ import annotations

import pytest

from rlcheck import recipes
from rlcheck.facts import Need
from rlcheck.framework.detect import Installed
from rlcheck.job.job import Job
from rlcheck.preflight import registry
from rlcheck.preflight.registry import Check, Inputs
from rlcheck.verdict import Status, Verdict

RECIPE = recipes.get("qwen3-4b-colocated")
PASS = Verdict(status=Status.PASS, summary="fine")
JOB = Job(argv=("python3", "train.py", "--tp", "2"), intended_argv=("python3", "train.py", "--tp", "2"),
          entrypoint="python3 train.py --tp 2", env=(("A", "1"),), source="job.yaml", source_format="rayjob",
          framework="miles", framework_version="0.1.0")


def _check(**kw) -> Check:
    fields = {"id": "recipe_rule", "guards": (), "judges": "a rule", "judge": lambda obs, i: PASS, **kw}
    return Check(**fields)


@pytest.mark.parametrize(("fields", "message"), [
    ({"id": "network_mtu"},
     "id='network_mtu': <area>_<property> in lowercase, area one of image, recipe, cluster, gpu"),
    ({"id": "recipe_Batch"}, "id='recipe_Batch': <area>_<property> in lowercase"),
    ({"id": "recipe_"}, "id='recipe_': <area>_<property>"),
    ({"id": "recipe_batch "}, "id='recipe_batch ': <area>_<property>"),
    ({"needs": frozenset({Need.GPU})}, "recipe_rule: gpu_count=0 must be > 0 exactly when the check needs a GPU"),
    ({"gpu_count": 1}, "recipe_rule: gpu_count=1 must be > 0 exactly when the check needs a GPU"),
    ({"advisory": True}, "recipe_rule: advisory=True needs a reason exactly when advisory is set"),
    ({"advisory_reason": "why"}, "recipe_rule: advisory=False needs a reason exactly when advisory is set"),
    ({"judges": ""}, "recipe_rule: judges must be one non-empty line"),
    ({"judges": "two\nlines"}, "recipe_rule: judges must be one non-empty line"),
])
def test_a_check_that_declares_itself_wrongly_is_refused_naming_the_field(fields, message):
    with pytest.raises(ValueError) as err:
        _check(**fields)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("fields", [
    {"id": "gpu_bf16_gemm", "needs": frozenset({Need.GPU}), "gpu_count": 2},
    {"id": "image_versions", "advisory": True, "advisory_reason": "a hint"},
    {"id": "cluster_node_x1"},
])
def test_a_check_that_declares_itself_rightly_is_built(fields):
    assert _check(**fields).id == fields["id"]


@pytest.mark.parametrize(("check_id", "area"), [("recipe_batch", "recipe"), ("cluster_node_gpus", "cluster"),
                                                 ("gpu_bf16_gemm", "gpu"), ("image_cpu_arch", "image")])
def test_the_area_is_the_ids_first_word(check_id, area):
    assert _check(id=check_id).area == area


@pytest.mark.parametrize(("needs", "in_gate"), [
    (frozenset(), True), (frozenset({Need.LAUNCH, Need.RECIPE, Need.PROFILE, Need.MODEL, Need.BATCH}), True),
    (frozenset({Need.CLUSTER}), False), (frozenset({Need.NODE, Need.PROFILE}), False),
    (frozenset({Need.GPU, Need.PROFILE}), False),
])
def test_the_gate_runs_checks_needing_no_cluster_gpu_or_node(needs, in_gate):
    check = _check(needs=needs, gpu_count=1 if Need.GPU in needs else 0)
    assert check.in_gate is in_gate


def test_a_check_with_a_collector_reads_the_machine():
    assert _check().reads_machine is False
    assert _check(collect=lambda i: None).reads_machine is True


def test_missing_facts_make_the_check_unknown_naming_each_before_it_collects():
    collected: list[str] = []
    check = _check(needs=frozenset({Need.LAUNCH, Need.RECIPE, Need.MODEL}),
                   collect=lambda i: collected.append("read") or "obs")
    inputs = Inputs(recipe=RECIPE, profile=None,
                    missing={Need.MODEL: "dims match no known model", Need.RECIPE: "argv unreadable",
                             Need.BATCH: "not stated"})
    assert check.run(inputs) == [Verdict(
        check_id="recipe_rule", status=Status.UNKNOWN,
        summary="cannot judge the job: the recipe is not known: argv unreadable; the model is not known: dims match "
                "no known model")]
    assert collected == []


def test_a_missing_fact_the_check_does_not_need_is_no_reason():
    check = _check(needs=frozenset({Need.LAUNCH}))
    inputs = Inputs(recipe=RECIPE, profile=None, missing={Need.RECIPE: "argv unreadable"})
    assert check.run(inputs) == [PASS.with_id("recipe_rule")]


def test_the_collector_feeds_the_judge_unless_an_observation_is_given():
    check = _check(collect=lambda i: "collected", judge=lambda obs, i: Verdict(status=Status.WARN, summary=obs))
    inputs = Inputs(recipe=RECIPE, profile=None)
    assert check.run(inputs) == [Verdict(check_id="recipe_rule", status=Status.WARN, summary="collected")]
    assert check.run(inputs, "given") == [Verdict(check_id="recipe_rule", status=Status.WARN, summary="given")]


def test_a_check_without_a_collector_judges_none():
    assert registry._no_observation(Inputs(recipe=RECIPE, profile=None)) is None
    check = _check(judge=lambda obs, i: Verdict(status=Status.PASS, summary=repr(obs)))
    assert check.run(Inputs(recipe=RECIPE, profile=None)) == [Verdict(check_id="recipe_rule", status=Status.PASS,
                                                                       summary="None")]


def test_every_verdict_of_a_per_node_judge_is_stamped_with_the_checks_id():
    nodes = [Verdict(status=Status.PASS, summary="a", node="n1", check_id="other"),
             Verdict(status=Status.FAIL, summary="b", node="n2")]
    check = _check(id="cluster_node_rule", judge=lambda obs, i: nodes)
    assert check.run(Inputs(recipe=RECIPE, profile=None)) == [v.with_id("cluster_node_rule") for v in nodes]


def test_a_judge_that_says_nothing_is_unknown():
    check = _check(judge=lambda obs, i: [])
    assert check.run(Inputs(recipe=RECIPE, profile=None)) == [Verdict(
        check_id="recipe_rule", status=Status.UNKNOWN, summary="the judge returned no verdict")]


def test_validate_refuses_a_check_registered_twice():
    with pytest.raises(ValueError, match=r"^check 'recipe_rule' is registered twice$"):
        registry.validate([_check(), _check(id="recipe_other"), _check()], set())


def test_validate_refuses_a_guard_outside_the_catalogue():
    with pytest.raises(ValueError, match=r"^check 'recipe_b' guards \['nope'\]: not in the catalogue$"):
        registry.validate([_check(id="recipe_a", guards=("known",)), _check(id="recipe_b", guards=("known", "nope"))],
                          {"known"})
    registry.validate([_check(id="recipe_a", guards=("known",)), _check(id="recipe_b")], {"known"})


def test_inputs_of_a_built_in_recipe_give_its_rendered_argv_and_env():
    inputs = Inputs(recipe=RECIPE, profile=None)
    assert inputs.launch_argv() == RECIPE.argv() and inputs.launch_env() == RECIPE.env_dict()
    assert inputs.launch_env()["TOKENIZERS_PARALLELISM"] == "false"


def test_inputs_of_a_job_give_what_the_trainer_receives():
    inputs = Inputs(recipe=RECIPE, profile=None, job=JOB)
    assert inputs.launch_argv() == ["python3", "train.py", "--tp", "2"] and inputs.launch_env() == {"A": "1"}


@pytest.mark.parametrize(("framework", "job", "judged"), [
    (Installed(framework="slime", version="0.3.1", source="--framework"), JOB,
     Installed(framework="slime", version="0.3.1", source="--framework")),
    (Installed(framework=None), JOB, Installed(framework="miles", version="0.1.0", source="the job: rayjob job.yaml")),
    (Installed(framework="slime", version="0.2.4", source="--framework"), None,
     Installed(framework="slime", version="0.2.4", source="--framework")),
])
def test_the_framework_judged_is_the_declared_one_else_the_jobs(framework, job, judged):
    got = Inputs(recipe=RECIPE, profile=None, job=job, framework=framework).judged_framework()
    assert (got.framework, got.version) == (judged.framework, judged.version)


def test_without_a_declared_framework_the_importable_one_is_judged(monkeypatch):
    here = Installed(framework="slime", version="0.2.4", source="package metadata")
    monkeypatch.setattr(registry, "collect_installed", lambda: here)
    assert Inputs(recipe=RECIPE, profile=None).judged_framework() == here
    declared = Installed(framework="miles", main=True, source="--framework")
    assert Inputs(recipe=RECIPE, profile=None, framework=declared).judged_framework() == declared


def test_the_collector_and_the_judge_both_read_the_inputs():
    check = _check(collect=lambda i: i.recipe.id,
                   judge=lambda obs, i: Verdict(status=Status.PASS, summary=f"{obs} on {i.profile.name}"))
    inputs = Inputs(recipe=RECIPE, profile=recipes.get_profile("gb300"))
    assert check.run(inputs) == [Verdict(check_id="recipe_rule", status=Status.PASS,
                                         summary="qwen3-4b-colocated on gb300")]
