"""Where the collectors read installed packages (rlcheck.probes.node.packages) as a rule table: the folder above a
package found without importing it (a regular package, a namespace package, a plain module, one absent, one whose
parent is absent, one loaded without a spec), the live environment's versions and Requires-Dist through a built
dist-info, and a recording's every shape (a version null, a number, absent; requires absent, not a list)."""

from __future__ import annotations

import json
import sys
import types

import pytest

from rlcheck.probes.node.packages import InstalledPackages, RecordedPackages, package_root


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder on sys.path with a regular package, a namespace package, a module and two built distributions."""
    root = tmp_path / "site"
    (root / "rlk_regular").mkdir(parents=True)
    (root / "rlk_regular" / "__init__.py").write_text("raise SystemExit('imported')\n")
    (root / "rlk_namespace").mkdir()
    (root / "rlk_module.py").write_text("raise SystemExit('imported')\n")
    for name, version, requires in (("rlk-dist", "1.2.3", ["numpy<2", "torch; extra == 'gpu'"]),
                                    ("rlk-bare", "0.1", [])):
        info = root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
                 *(f"Requires-Dist: {r}" for r in requires)]
        (info / "METADATA").write_text("\n".join(lines) + "\n")
    monkeypatch.syspath_prepend(str(root))
    return root


def test_rules_table_packages_root_of_a_package_is_the_folder_above_it(site):
    assert package_root("rlk_regular") == site
    assert package_root("rlk_namespace") == site
    assert "rlk_regular" not in sys.modules  # found, not imported


@pytest.mark.parametrize("top", [
    "rlk_module",  # a module, not a package: no folder of its own
    "rlk_absent", "rlk_absent.sub",  # absent, or its parent absent (ImportError)
    ".relative",  # a relative name (ImportError)
    "rlk_specless",  # loaded without a spec (ValueError)
])
def test_rules_table_packages_root_unknown_is_none(site, monkeypatch, top):
    monkeypatch.setitem(sys.modules, "rlk_specless", types.ModuleType("rlk_specless"))
    sys.modules["rlk_specless"].__spec__ = None
    assert package_root(top) is None


def test_rules_table_packages_installed_versions_and_requires(site):
    packages = InstalledPackages()
    assert packages.version("rlk-dist") == "1.2.3" and packages.version("rlk_bare") == "0.1"
    assert packages.version("rlk-absent") is None
    assert packages.requires("rlk-dist") == ["numpy<2", "torch; extra == 'gpu'"]
    assert packages.requires("rlk-bare") == []  # no Requires-Dist line: metadata says None
    assert packages.requires("rlk-absent") == []


@pytest.mark.parametrize(("data", "versions", "requires"), [
    ({"versions": {"numpy": "1.26.4", "megatron-core": None, "torch": 2}, "requires": {"megatron-core": ["numpy"]}},
     {"numpy": "1.26.4", "megatron-core": None, "torch": "2", "absent": None},
     {"megatron-core": ["numpy"], "numpy": [], "absent": []}),
    ({}, {"numpy": None}, {"numpy": []}),  # an empty recording: nothing installed
    ({"requires": {"a": "numpy", "b": None, "c": [1, "x"]}}, {"a": None},
     {"a": [], "b": [], "c": ["1", "x"]}),  # a list only; its items as text
])
def test_rules_table_packages_recorded(tmp_path, data, versions, requires):
    path = tmp_path / "packages.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for recorded in (RecordedPackages(data), RecordedPackages.from_file(path)):
        assert {n: recorded.version(n) for n in versions} == versions
        assert {n: recorded.requires(n) for n in requires} == requires
