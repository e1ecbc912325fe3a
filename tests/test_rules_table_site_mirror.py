"""Rule table for the site mirror a reproducer makes a package absent with (rlcheck.repro.site_mirror): which entry
names an exclusion covers (the package folder, its module file, its dist-info, not a package that only starts alike),
that the first site directory holding a name wins, the `python -S` argv that takes the mirror as its only site
directory, and the child's PYTHONPATH exactly as given. Stand-in site directories in tmp_path."""

from __future__ import annotations

import os
import sys
import types

import pytest

from rlcheck.repro import site_mirror


@pytest.mark.parametrize(("name", "excluded", "out"), [
    ("mbridge", ("mbridge",), True),
    ("mbridge.py", ("mbridge",), True),
    ("mbridge-0.15.1.dist-info", ("mbridge",), True),
    ("mbridge_extra", ("mbridge",), False),
    ("mbridgex.py", ("mbridge",), False),
    ("xmbridge", ("mbridge",), False),
    ("mbridge.pth", ("mbridge",), False),
    ("megatron_core-0.16.dist-info", ("megatron", "megatron_core"), True),
    ("megatron", ("megatron", "megatron_core"), True),
    ("megatron", (), False),
])
def test_an_exclusion_covers_the_package_its_module_and_its_dist_info(name, excluded, out):
    assert site_mirror._excluded(name, excluded) is out


@pytest.fixture
def sites(monkeypatch, tmp_path):
    first, second = tmp_path / "site1", tmp_path / "site2"
    for folder, names in ((first, ["numpy", "mbridge", "mbridge-0.15.1.dist-info", "six.py"]),
                          (second, ["numpy", "torch", "mbridge.py"])):
        folder.mkdir()
        for name in names:
            if name.endswith(".py"):
                (folder / name).write_text(f"# {folder.name}\n")
            else:
                (folder / name).mkdir()
    monkeypatch.setattr(site_mirror, "site_dirs", lambda: [first, second])
    return first, second


def test_the_mirror_links_every_entry_but_the_excluded_and_the_first_site_wins(sites, tmp_path):
    first, second = sites
    dest = site_mirror.site_without(iter(["mbridge"]), tmp_path / "mirror" / "site")
    assert dest == tmp_path / "mirror" / "site"
    links = {p.name: os.readlink(p) for p in dest.iterdir()}
    assert links == {"numpy": str(first / "numpy"), "six.py": str(first / "six.py"), "torch": str(second / "torch")}


def test_a_mirror_made_again_keeps_its_links(sites, tmp_path):
    first, second = sites
    dest = site_mirror.site_without([], tmp_path / "m")
    assert site_mirror.site_without([], tmp_path / "m") == dest
    assert os.readlink(dest / "numpy") == str(first / "numpy")
    assert os.readlink(dest / "mbridge.py") == str(second / "mbridge.py")
    assert os.readlink(dest / "mbridge") == str(first / "mbridge")


def test_the_site_directories_are_this_interpreters_that_exist_once_each(monkeypatch, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    monkeypatch.setattr(site_mirror, "site",
                        types.SimpleNamespace(getsitepackages=lambda: [str(a), str(tmp_path / "x")]))
    monkeypatch.setattr(site_mirror, "sysconfig", types.SimpleNamespace(
        get_paths=lambda: {"purelib": str(b), "platlib": str(a), "stdlib": str(tmp_path)}))
    assert site_mirror.site_dirs() == [a, b]


def test_the_childs_argv_runs_python_without_its_own_sites_and_adds_the_mirror(tmp_path):
    argv = site_mirror.argv(tmp_path / "m 1", "import numpy")
    assert argv == [sys.executable, "-S", "-c", f"import site\nsite.addsitedir({str(tmp_path / 'm 1')!r})\n"
                                                f"import numpy"]


@pytest.mark.parametrize(("given", "expected"), [((), None), (["/side/a", "/side/b"], "/side/a:/side/b")])
def test_the_childs_pythonpath_is_exactly_the_one_given(monkeypatch, given, expected):
    monkeypatch.setenv("PYTHONPATH", "/inherited")
    monkeypatch.setenv("RLCHECK_M1_KEPT", "1")
    child = site_mirror.env(given)
    assert child.get("PYTHONPATH") == expected and child["RLCHECK_M1_KEPT"] == "1"
    assert site_mirror.env() == site_mirror.env(())


@pytest.mark.parametrize(("given", "expected"), [((), {"A": "1"}), (["/s"], {"A": "1", "PYTHONPATH": "/s"})])
def test_a_given_base_environment_gets_pythonpath_exactly_as_given_and_is_left_as_it_was(monkeypatch, given, expected):
    monkeypatch.setenv("RLCHECK_M1_NOT_IN_BASE", "1")
    base = {"A": "1", "PYTHONPATH": "/inherited"}
    assert site_mirror.env(given, base) == expected
    assert base == {"A": "1", "PYTHONPATH": "/inherited"}


def test_a_child_of_a_process_without_pythonpath_gets_none(monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert "PYTHONPATH" not in site_mirror.env()
