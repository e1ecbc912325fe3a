"""Rule table for the wiring of the image checks (rlcheck.preflight.image): the installed versions with SLIME/Miles
as judged, and the SLIME release the mbridge rule is judged by (a release, main, unknown, none)."""

from __future__ import annotations

import pytest

from rlcheck import recipes
from rlcheck.framework.detect import Installed
from rlcheck.hardware import get_profile
from rlcheck.preflight import image
from rlcheck.preflight.registry import Inputs
from rlcheck.probes.image import image as image_probe

H200 = get_profile("h200")
QWEN = recipes.get("qwen3-4b-colocated")


def _inputs(framework: Installed) -> Inputs:
    return Inputs(recipe=QWEN, profile=H200, framework=framework)


@pytest.mark.parametrize(("framework", "versions"), [
    (Installed(framework="slime", version="0.3.1", source="--framework"), {"slime": "0.3.1", "torch": "2.11.0"}),
    (Installed(framework=None), {"slime": None, "torch": "2.11.0"}),
])
def test_the_installed_versions_carry_the_framework_judged(monkeypatch, framework, versions):
    asked = []
    monkeypatch.setattr(image, "installed_versions", lambda names: asked.append(names) or {"slime": None,
                                                                                         "torch": "2.11.0"})
    assert image._versions(_inputs(framework)) == versions
    assert asked == [image_probe.affected_packages()]


@pytest.mark.parametrize(("framework", "slime"), [
    (Installed(framework="slime", version="0.2.4", source="--framework"), "0.2.4"),
    (Installed(framework="slime", main=True, source="--framework"), "main"),
    (Installed(framework="slime", source="no package metadata"), "unknown"),
    (Installed(framework="miles", version="0.1.0", source="--framework"), None),
    (Installed(framework=None), None),
])
def test_the_slime_the_mbridge_rule_is_judged_by(monkeypatch, framework, slime):
    monkeypatch.setattr(image_probe, "collect_mbridge", lambda: image_probe.MbridgeObservation(has_mbridge=True,
                                                                                               slime="9.9"))
    assert image._mbridge(_inputs(framework)) == image_probe.MbridgeObservation(has_mbridge=True, slime=slime)


def test_mbridge_absent_is_said_as_read(monkeypatch):
    monkeypatch.setattr(image_probe, "collect_mbridge", lambda: image_probe.MbridgeObservation(has_mbridge=False))
    declared = Installed(framework="slime", version="0.2.4", source="--framework")
    assert image._mbridge(_inputs(declared)) == image_probe.MbridgeObservation(has_mbridge=False, slime="0.2.4")
