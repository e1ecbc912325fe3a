"""The framework judged: --framework, package metadata, a git checkout's tag or commit; what reads its version."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from rlcheck import preflight, recipes
from rlcheck.framework import detect
from rlcheck.framework.detect import Installed
from rlcheck.hardware import get_profile
from rlcheck.job import capture
from rlcheck.preflight.gpu import tms_rule
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.preflight.registry import Inputs
from rlcheck.repro.reproduce import Reproduction, judge, versions_for
from rlcheck.verdict import Status

GB300 = get_profile("gb300")
GLM = recipes.get("glm5.2-gb300", GB300)
QWEN = recipes.get("qwen3-4b-colocated")
JOBS = Path(__file__).parent / "data" / "jobs"


@pytest.mark.parametrize(("text", "framework", "version", "main"), [
    ("slime==0.2.4", "slime", "0.2.4", False), ("slime==v0.3.1", "slime", "0.3.1", False),
    ("miles==main", "miles", None, True), ("slime==main", "slime", None, True),
    ("slime==0.3.1.post1", "slime", "0.3.1.post1", False)])
def test_framework_declared(text, framework, version, main):
    assert detect.parse_declared(text) == Installed(framework=framework, version=version, main=main,
                                                    source="--framework")


def test_framework_main_has_no_release_version():
    with pytest.raises(ValueError, match=r"main=True with version='0.3.1': main has no release version"):
        Installed(framework="slime", version="0.3.1", main=True)
    assert Installed(framework="slime", main=True).release == "main"
    assert Installed(framework="slime").release == "of unknown release"  # no metadata, no git: not main


@pytest.mark.parametrize("text", ["slime", "slime=0.2.4", "verl==0.5", "slime==", "slime==latest", "SLIME==0.2.4"])
def test_framework_declared_bad_names_the_forms(text):
    with pytest.raises(ValueError, match=r"expected slime==VERSION or miles==VERSION \(e\.g\. slime==0\.2\.4"):
        detect.parse_declared(text)


def _checkout(root, monkeypatch, tag: str | None) -> Installed:
    """A SLIME source checkout on sys.path (no package metadata), tagged or not."""
    (root / "slime").mkdir()
    (root / "slime" / "__init__.py").write_text("")
    git = ["git", "-C", str(root), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    if tag:
        subprocess.run([*git, "tag", tag], check=True)
    monkeypatch.syspath_prepend(str(root))
    return detect.collect_installed()


def test_framework_checkout_at_a_release_tag(tmp_path, monkeypatch):
    found = _checkout(tmp_path, monkeypatch, "v0.3.1")
    assert (found.framework, found.version, found.source) == ("slime", "0.3.1", "git tag v0.3.1")
    assert detect.choose(found, "slime")[0].name == "slime-v0.3.1"
    assert tms_rule(Inputs(recipe=QWEN, profile=None)) == "slime-v0.3.1"


def test_framework_checkout_between_tags_is_main(tmp_path, monkeypatch):
    found = _checkout(tmp_path, monkeypatch, None)
    assert found.framework == "slime" and found.version is None and found.source.startswith("git commit ")
    assert found.main and found.describe().startswith("slime main (git commit ")
    assert "judged as main" in found.describe()
    schema, how = detect.choose(found, "slime")
    assert schema.name == "slime-main" and how == "installed slime main"
    mbridge = preflight.get("image_mbridge").collect(Inputs(recipe=GLM, profile=GB300))
    assert mbridge.slime == "main"  # image_mbridge SKIPs on it (SLIME ships the conversion from 0.3.1)


def test_framework_nothing_installed_here():
    assert detect.collect_installed() == Installed(framework=None)
    assert "neither SLIME nor Miles" in Installed(framework=None).describe()


@pytest.mark.parametrize(("framework", "recipe", "rule"), [
    (Installed(framework="slime", version="0.2.4"), QWEN, "slime-v0.2.4"),
    (Installed(framework="slime", version="0.3.0"), QWEN, "slime-v0.3.1"),
    (Installed(framework="slime", version=None), QWEN, "slime-main"),
    (Installed(framework="miles", version=None), QWEN, "miles-main"),
    (None, QWEN, "slime-v0.2.4"),  # nothing here (CI): the reference image's SLIME
    (None, GLM, "miles-main"),  # the GLM recipe runs under Miles
])
def test_framework_chooses_the_preload_rule(framework, recipe, rule):
    assert tms_rule(Inputs(recipe=recipe, profile=None, framework=framework)) == rule


def test_framework_version_reaches_image_versions_and_mbridge():
    versions, mbridge = preflight.get("image_versions"), preflight.get("image_mbridge")
    old, new = Installed(framework="slime", version="0.2.4"), Installed(framework="slime", version="0.3.1")
    [live] = versions.run(Inputs(recipe=GLM, profile=GB300, framework=old))
    [gone] = versions.run(Inputs(recipe=GLM, profile=GB300, framework=new))
    assert "mbridge-missing" in live.summary and "slime 0.2.4 in <0.3.1" in live.details
    assert "mbridge-missing" not in gone.summary
    assert mbridge.run(Inputs(recipe=GLM, profile=GB300, framework=new))[0].status is Status.SKIP
    main = Installed(framework="slime", main=True, source="--framework")
    assert mbridge.run(Inputs(recipe=GLM, profile=GB300, framework=main))[0].summary.startswith("SLIME main converts")
    assert mbridge.collect(Inputs(recipe=GLM, profile=GB300, framework=Installed(framework="slime"))).slime == \
        "unknown"
    [before] = mbridge.run(Inputs(recipe=GLM, profile=GB300, framework=old))
    assert before.status is Status.PASS and "mbridge importable" in before.summary  # judged (mbridge is installed here)


def test_framework_version_reaches_the_reproducer_range_judge():
    assert versions_for("mbridge-missing", Installed(framework="slime", version="0.3.1")) == {"slime": "0.3.1"}
    assert versions_for("mbridge-missing") == {"slime": None}  # not installed here, none declared
    inside = Reproduction(failure_id="mbridge-missing", versions=versions_for(
        "mbridge-missing", Installed(framework="slime", version="0.2.4")), reproduced=False, fix_verified=False,
        evidence="imported")
    verdict, state = judge(inside)
    assert verdict.status is Status.FAIL and "slime 0.2.4 vs <0.3.1" in verdict.summary


def test_framework_overlay_touches_only_the_framework_judged():
    versions = {"slime": None, "miles": "0.1.0", "torch": "2.11.0"}
    assert detect.overlay_versions(versions, Installed(framework="slime", version="0.2.4")) == {
        "slime": "0.2.4", "miles": "0.1.0", "torch": "2.11.0"}
    assert detect.overlay_versions(versions, Installed(framework="slime", version=None)) == versions
    assert detect.overlay_versions(versions, None) == versions


NOTHING_HERE = Installed(framework=None)


def _job_judged(framework: str, version: str | None, here: Installed = NOTHING_HERE):
    """recipe_framework_args on the recorded argv-json job, as if it stated framework and version."""
    job = dataclasses.replace(capture.capture(JOBS / "render.json"), framework=framework, framework_version=version)
    inputs = dataclasses.replace(inputs_for_job(job, get_profile("h200")), framework=here)
    return inputs, preflight.get("recipe_framework_args").run(inputs)[0]


@pytest.mark.parametrize(("framework", "version", "schema", "fragment"), [
    ("miles", None, "miles-main", "the committed schema for the job's framework, miles (argv-json, no version stated)"),
    ("slime", "0.3.1", "slime-v0.3.1", "the job's own slime 0.3.1 (stated by the job: argv-json "),
    ("slime", "v0.2.4", "slime-v0.2.4", "the job's own slime 0.2.4 (stated by the job: argv-json "),
    ("slime", "main", "slime-main", "the job's own slime main (stated by the job"),
    ("slime", None, "slime-v0.2.4", "the committed schema for the job's framework, slime (argv-json, no version"),
    ("unknown", None, "slime-v0.2.4", "slime, the default (the job names neither SLIME nor Miles)"),
], ids=["miles-launcher", "slime-0.3.1-image", "slime-v0.2.4-image", "slime-main", "slime-no-version", "neither"])
def test_framework_judged_from_the_job_when_nothing_is_declared_or_importable(framework, version, schema, fragment):
    inputs, verdict = _job_judged(framework, version)
    assert f"(schema {schema}, " in verdict.summary and fragment in verdict.summary
    assert inputs.recipe.framework == (framework if framework != "unknown" else "slime")


@pytest.mark.parametrize("here", [Installed(framework="slime", version="0.2.4", source="--framework"),
                                  Installed(framework="slime", version="0.2.4", source="package metadata")],
                         ids=["declared", "importable"])
def test_framework_declared_or_importable_wins_over_the_job(here):
    inputs, verdict = _job_judged("miles", "main", here)
    assert inputs.judged_framework() is here
    assert "(schema slime-v0.2.4, " in verdict.summary and "stated by the job" not in verdict.summary


def test_framework_with_job_needs_a_framework_and_a_version():
    assert detect.with_job(NOTHING_HERE, "slime", None, "rayjob x.yaml") is NOTHING_HERE
    assert detect.with_job(NOTHING_HERE, "unknown", "0.3.1", "rayjob x.yaml") is NOTHING_HERE
    judged = detect.with_job(NOTHING_HERE, "slime", "0.3.1", "rayjob x.yaml")
    assert judged == Installed(framework="slime", version="0.3.1", source="stated by the job: rayjob x.yaml")
    assert judged.from_job and judged.describe() == "slime 0.3.1 (stated by the job: rayjob x.yaml)"
