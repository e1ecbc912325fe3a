"""Whole-verdict rule table for the image judges (rlcheck.probes.image.image): each branch, both directions of the
architecture rule, every Megatron combination and SLIME release side of the mbridge rule, recorded in
tests/data/golden/image.json; and the collectors' own small rules on injected inputs."""

from __future__ import annotations

import sys

import pytest

from rlcheck.hardware import get_profile
from rlcheck.probes.image import image
from rlcheck.verdict import Status
from tests import golden_verdicts

H200, GB300 = get_profile("h200"), get_profile("gb300")
X86 = "Wheel-Version: 1.0\nGenerator: bdist_wheel\nRoot-Is-Purelib: false\nTag: cp312-cp312-manylinux_2_28_x86_64\n"
ARM = "Wheel-Version: 1.0\nTag: cp312-cp312-manylinux_2_28_aarch64\n"
PURE = "Wheel-Version: 1.0\nTag: py3-none-any\n"
MOE = "qwen3-30b-a3b-disaggregated"


def _megatron(core: str | None, has_core: bool, has_training: bool) -> image.MegatronObservation:
    return image.MegatronObservation(megatron_core=core, has_core=has_core, has_training=has_training)


def _arch(machine: str, *foreign: str) -> image.ArchObservation:
    return image.ArchObservation(machine=machine, foreign_wheels=foreign)


def _training(obs: image.MegatronObservation):
    return image.evaluate_megatron_training(obs)


def _arch_verdict(obs: image.ArchObservation, profile):
    return image.evaluate_arch(obs, profile)


ROWS = [
    ("megatron-none", lambda: _training(_megatron(None, False, False)), Status.SKIP),
    ("megatron-0.19-training", lambda: _training(_megatron("0.19.2", True, True)), Status.PASS),
    ("megatron-0.16-no-training", lambda: _training(_megatron("0.16.1", True, False)), Status.FAIL),
    ("megatron-git-no-training", lambda: _training(_megatron(None, True, False)), Status.FAIL),
    ("megatron-git-training", lambda: _training(_megatron(None, True, True)), Status.PASS),
    ("megatron-training-only", lambda: _training(_megatron(None, False, True)), Status.PASS),
    ("mbridge-dense", lambda: image.evaluate_mbridge(False, "qwen3-4b-colocated", False), Status.SKIP),
    ("mbridge-moe-0.3.1", lambda: image.evaluate_mbridge(True, MOE, False, "0.3.1"), Status.SKIP),
    ("mbridge-moe-main", lambda: image.evaluate_mbridge(True, MOE, False, "main"), Status.SKIP),
    ("mbridge-moe-installed", lambda: image.evaluate_mbridge(True, MOE, True, "0.2.4"), Status.PASS),
    ("mbridge-moe-unknown", lambda: image.evaluate_mbridge(True, MOE, False, "unknown"), Status.UNKNOWN),
    ("mbridge-moe-not-a-version", lambda: image.evaluate_mbridge(True, MOE, False, "weird"), Status.UNKNOWN),
    ("mbridge-moe-0.3.0", lambda: image.evaluate_mbridge(True, MOE, False, "0.3.0"), Status.FAIL),
    ("mbridge-moe-no-slime", lambda: image.evaluate_mbridge(True, MOE, False), Status.FAIL),
    ("versions-healthy", lambda: image.evaluate_versions({"tilelang": "0.1.15", "numpy": "1.26.4", "ray": None}),
     Status.PASS),
    ("versions-several-live",
     lambda: image.evaluate_versions({"tilelang": "0.1.9", "numpy": "2.2.6", "megatron-core": "0.15.3"}), Status.WARN),
    ("versions-guarded-by-check",
     lambda: image.evaluate_versions({"tilelang": "0.1.9"}, {"sparse-mla-bwd-nan": "kernel_x"}), Status.WARN),
    ("arch-x86-on-h200", lambda: _arch_verdict(_arch("x86_64"), H200), Status.PASS),
    ("arch-arm-on-gb300", lambda: _arch_verdict(_arch("aarch64"), GB300), Status.PASS),
    ("arch-no-profile", lambda: _arch_verdict(_arch("aarch64"), None), Status.PASS),
    ("arch-x86-image-for-gb300", lambda: _arch_verdict(_arch("x86_64"), GB300), Status.FAIL),
    ("arch-arm-image-for-h200", lambda: _arch_verdict(_arch("aarch64"), H200), Status.FAIL),
    ("arch-four-foreign", lambda: _arch_verdict(_arch("aarch64", "a 1", "b 2", "c 3", "d 4"), GB300), Status.FAIL),
    ("arch-one-foreign-no-profile", lambda: _arch_verdict(_arch("aarch64", "sglang-router 0.3.2"), None), Status.FAIL),
]


@pytest.mark.parametrize(("row", "judge", "status"), ROWS, ids=[r[0] for r in ROWS])
def test_rules_table_image_whole_verdict(row, judge, status):
    verdict = judge()
    assert verdict.status is status, verdict.render()
    golden_verdicts.check("image", row, verdict)


@pytest.mark.parametrize(("machine", "wheels", "foreign"), [
    ("aarch64", [("z-router 1", X86), ("numpy 1", ARM), ("a-router 2", X86)], ("a-router 2", "z-router 1")),
    ("x86_64", [("z-router 1", X86), ("numpy 1", ARM)], ("numpy 1",)),
    ("aarch64", [("rlcheck 0.1", PURE), ("editable 1", ""), ("numpy 1", ARM)], ()),
    ("x86_64", [("rlcheck 0.1", PURE), ("torch 2", X86)], ()),
    ("aarch64", [("spaced 1", "Tag: cp312-cp312-manylinux_2_28_x86_64  \n")], ("spaced 1",)),
    ("aarch64", [("named 1", "Generator: x86_64\n")], ()),  # only Tag: lines name the CPU
    ("aarch64", [("tagless 1", "Tag: x86_64-but-not-at-the-end\n")], ()),
], ids=["x86-on-grace-sorted", "arm-on-x86", "pure-and-editable", "x86-on-x86", "trailing-space", "not-a-tag",
        "not-at-end"])
def test_rules_table_foreign_wheels_each_way(machine, wheels, foreign):
    assert image.foreign_wheels(machine, wheels) == foreign
    assert image.collect_arch(machine=machine, wheels=wheels) == image.ArchObservation(machine=machine,
                                                                                       foreign_wheels=foreign)


def test_rules_table_collect_arch_reads_this_host_and_its_wheels():
    import platform

    obs = image.collect_arch()
    assert obs.machine == platform.machine() and obs.foreign_wheels == ()
    wheels = dict(image._installed_wheels())
    assert any(name.startswith("pytest ") for name in wheels)
    assert "Tag: py3-none-any" in next(text for name, text in wheels.items() if name.startswith("pytest "))


@pytest.mark.parametrize(("name", "found"), [("json", True), ("importlib.util", True), ("no_such_module_rl", False),
                                             ("json.no_such_sub", False), ("no_such_parent_rl.child", False)])
def test_rules_table_has_module_never_raises(name, found):
    assert image._has_module(name) is found


class _Packages:
    def __init__(self, versions: dict[str, str]) -> None:
        self.versions = versions

    def version(self, name: str) -> str | None:
        return self.versions.get(name)

    def requires(self, name: str) -> list[str]:
        return []


def test_rules_table_collect_megatron_reads_the_wheel_and_the_modules(monkeypatch):
    """The module lookups are replaced: finding megatron.training imports its package (a minute on this machine)."""
    monkeypatch.setattr(image, "_has_module", {"megatron.core": True, "megatron.training.arguments": False}.get)
    assert image.collect_megatron(_Packages({"megatron-core": "0.16.1"})) == _megatron("0.16.1", True, False)
    monkeypatch.setattr(image, "_has_module", {"megatron.core": False, "megatron.training.arguments": True}.get)
    assert image.collect_megatron(_Packages({})) == _megatron(None, False, True)


@pytest.mark.parametrize(("slime", "internal"), [(None, False), ("main", True), ("0.3.1", True), ("0.3.0", False),
                                                 ("0.2.4", False), ("1.0", True), ("unknown", None), ("x.y", None)])
def test_rules_table_mbridge_internal_from_0_3_1(slime, internal):
    assert image.mbridge_internal(slime) is internal


def test_rules_table_collect_mbridge_here():
    obs = image.collect_mbridge()
    assert obs == image.MbridgeObservation(has_mbridge=image._has_module("mbridge"), slime=None)


def test_rules_table_affected_packages_sorted_and_unique():
    names = image.affected_packages()
    assert list(names) == sorted(set(names)) and "numpy" in names and "tilelang" in names
    assert {e.id for e in image.live_failures({"tilelang": "0.1.9"})} >= {"sparse-mla-bwd-nan"}


@pytest.mark.parametrize(("installed", "version", "slime"), [
    (False, "0.3.1", None), (True, "0.3.1", "0.3.1"), (True, None, "unknown")],
    ids=["no-slime", "slime-wheel", "slime-source-checkout"])
def test_rules_table_collect_mbridge_reads_slimes_release(monkeypatch, installed, version, slime):
    from importlib import metadata

    def fake_version(name: str) -> str:
        if name != "slime" or version is None:
            raise metadata.PackageNotFoundError(name)
        return version

    monkeypatch.setattr(image, "_has_module", {"slime": installed, "mbridge": True}.get)
    monkeypatch.setattr(metadata, "version", fake_version)
    assert image.collect_mbridge() == image.MbridgeObservation(has_mbridge=True, slime=slime)


def test_has_module_finds_a_submodule_without_running_its_parents(tmp_path, monkeypatch):
    """megatron.training's __init__ imports torch and the training loop: the lookup must not run it."""
    package = tmp_path / "rl_parent_pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('the parent ran')\n")
    (package / "sub" / "__init__.py").write_text("raise RuntimeError('the child ran')\n")
    (package / "sub" / "leaf.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert image._has_module("rl_parent_pkg.sub.leaf") is True
    assert image._has_module("rl_parent_pkg.sub.missing") is False
    assert image._has_module("rl_parent_pkg.leaf") is False
    assert "rl_parent_pkg" not in sys.modules and "rl_parent_pkg.sub" not in sys.modules


def test_installed_wheel_names_read_from_the_header_as_importlib_reads_them():
    from importlib import metadata

    dists = list(metadata.distributions())
    assert [image._name_version(d) for d in dists] == [f"{d.metadata['Name']} {d.version}" for d in dists]
