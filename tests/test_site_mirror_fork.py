"""rlcheck.repro.site_mirror.python: a child forked from a warm interpreter sees what a cold `python -S` child on the
mirror sees (the same import path, the excluded package absent to Python's own import system, the side directories
first), and one whose interpreter already imported an excluded package runs cold instead. Real interpreters; the
package hidden is `packaging` (in every environment pytest runs in), the warm one imports only `json`."""

from __future__ import annotations

import json
import sys

import pytest

from rlcheck.process import subproc, warm
from rlcheck.repro import site_mirror

WARM = ("json",)
SHOW = "import json, sys\nprint('PATH ' + json.dumps(sys.path))"


@pytest.fixture(autouse=True)
def _fresh_servers():
    warm.stop_all()
    yield
    warm.stop_all()


def printed_path(done: subproc.Completed) -> list[str]:
    line = next(x for x in done.stdout.splitlines() if x.startswith("PATH "))
    return json.loads(line.removeprefix("PATH "))


def cold(site, code: str, pythonpath=()) -> subproc.Completed:
    return subproc.run(site_mirror.argv(site, code), timeout_s=60, env=site_mirror.env(pythonpath))


def test_a_fork_has_the_cold_childs_import_path(tmp_path):
    side = tmp_path / "side"
    side.mkdir()
    forked = site_mirror.python(SHOW, ["packaging"], tmp_path / "m", base=subproc.child_env(), preload=WARM,
                                pythonpath=[str(side)], timeout_s=60)
    assert forked.argv[0] == "rlcheck.process.warm", forked.stderr  # it was forked, not run cold
    expected = printed_path(cold(tmp_path / "m", SHOW, [str(side)]))
    assert printed_path(forked) == expected
    assert expected[:2] == ["", str(side)] and str(tmp_path / "m") in expected
    assert not set(map(str, site_mirror.site_dirs())) & set(expected)


def test_the_excluded_package_is_absent_in_the_fork_as_in_the_cold_child(tmp_path):
    code = "import packaging"
    forked = site_mirror.python(code, ["packaging"], tmp_path / "m", base=subproc.child_env(), preload=WARM,
                                timeout_s=60)
    cold_done = cold(tmp_path / "m", code)
    assert forked.argv[0] == "rlcheck.process.warm" and forked.returncode == cold_done.returncode == 1
    for done in (forked, cold_done):
        assert done.stderr.splitlines()[-1] == "ModuleNotFoundError: No module named 'packaging'"


def test_a_package_not_excluded_imports_from_the_mirror_and_a_side_directory_comes_first(tmp_path):
    side = tmp_path / "side"
    side.mkdir()
    (side / "rlcheck_side_probe.py").write_text("WHERE = 'side'\n")
    code = "import packaging, rlcheck_side_probe\nprint(rlcheck_side_probe.WHERE, packaging.__file__)"
    forked = site_mirror.python(code, ["mbridge"], tmp_path / "m", base=subproc.child_env(), preload=WARM,
                                pythonpath=[str(side)], timeout_s=60)
    assert forked.argv[0] == "rlcheck.process.warm" and forked.returncode == 0, forked.stderr
    where, path = forked.stdout.split()
    assert where == "side" and path.startswith(str(tmp_path / "m" / "packaging"))


def test_a_warm_interpreter_that_imported_the_excluded_package_is_unfit_the_child_runs_cold(tmp_path):
    side = tmp_path / "side"
    side.mkdir()
    (side / "rlcheck_side_probe.py").write_text("")
    code = "import os, rlcheck_side_probe\nprint(os.environ['PYTHONPATH'])\nimport packaging"
    done = site_mirror.python(code, ["packaging"], tmp_path / "m", base=subproc.child_env(), preload=("packaging",),
                              pythonpath=[str(side)], timeout_s=60)
    assert done.argv == tuple(site_mirror.argv(tmp_path / "m", code))
    assert done.stdout == f"{side}\n"  # the cold child got the side directory on its PYTHONPATH
    assert done.stderr.splitlines()[-1] == "ModuleNotFoundError: No module named 'packaging'"
    assert warm.UNFIT not in done.stderr


def test_a_forked_child_has_pythonpath_exactly_the_side_directories_for_its_own_children(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/inherited")
    code = "import os\nprint(os.environ.get('PYTHONPATH'))"
    with_side = site_mirror.python(code, ["mbridge"], tmp_path / "m", base=subproc.child_env(), preload=WARM,
                                   pythonpath=["/s1", "/s2"], timeout_s=60)
    without = site_mirror.python(code, ["mbridge"], tmp_path / "m", base=subproc.child_env(), preload=WARM,
                                 timeout_s=60)
    assert with_side.argv[0] == without.argv[0] == "rlcheck.process.warm"
    assert (with_side.stdout, without.stdout) == ("/s1:/s2\n", "None\n")


def test_a_forked_child_is_killed_at_its_deadline(tmp_path):
    done = site_mirror.python("import time\ntime.sleep(60)", ["mbridge"], tmp_path / "m", base=subproc.child_env(),
                              preload=WARM, timeout_s=1)
    assert done.timed_out and done.argv[0] == "rlcheck.process.warm"


def stdlib() -> list[str]:
    """This interpreter's path entries before its first site directory, '' left out: the standard library."""
    sites = {str(p) for p in site_mirror.site_dirs()}
    first = next(i for i, p in enumerate(sys.path) if p in sites)
    return [p for p in sys.path[:first] if p]


@pytest.mark.parametrize(("imports", "message"), [
    ("", "no site directory on its path"),
    ("import packaging.version", "imported: packaging packaging.version"),
])
def test_the_prelude_refuses_an_interpreter_it_cannot_make_cold(tmp_path, imports, message):
    """The prelude in a plain interpreter: one whose path has no site directory, or that imported the package."""
    path = ["", *stdlib()] if not imports else sys.path
    code = f"import sys\n{imports}\nsys.path[:] = {path!r}\n" \
           f"{site_mirror.fork_path(tmp_path / 'm', ['packaging', 'mbridge'])}\nprint('ran on')"
    done = subproc.run([sys.executable, "-c", code], timeout_s=60)
    assert done.returncode == 3 and "ran on" not in done.stdout
    assert done.stderr.startswith(f"{warm.UNFIT} {message}")


def test_the_prelude_removes_every_site_directory_and_leaves_its_own_names_undefined(tmp_path):
    site = str(site_mirror.site_dirs()[0])
    std = stdlib()
    code = f"import sys\nsys.path[:] = {['', *std, site, '/from-a-pth', site]!r}\n" \
           f"{site_mirror.fork_path(tmp_path / 'm', ['mbridge'], ['/a', '/b'])}\n" \
           f"print(sys.path, sorted(n for n in dir() if n.startswith('_') and not n.startswith('__')))"
    done = subproc.run([sys.executable, "-c", code], timeout_s=60)
    assert done.stdout.strip() == f"{['', '/a', '/b', *std, str(tmp_path / 'm'), '/from-a-pth']} []", done.stderr


def test_the_child_runs_in_the_base_environment_given_not_this_processs(tmp_path):
    code = "import os\nprint(os.environ.get('RLCHECK_M1_BASE_ONLY'))"
    base = subproc.child_env() | {"RLCHECK_M1_BASE_ONLY": "given"}
    forked = site_mirror.python(code, ["mbridge"], tmp_path / "m", base=base, preload=WARM, timeout_s=60)
    unfit = site_mirror.python(code, ["json"], tmp_path / "m2", base=base, preload=WARM, timeout_s=60)
    assert forked.argv[0] == "rlcheck.process.warm" and unfit.argv[0] == sys.executable  # forked, then cold
    assert forked.stdout == unfit.stdout == "given\n"
