"""The mutation runner's targets name their self-tests by file name, found anywhere under tests/: a test moved into a
wing's folder stays judged, and a name that is missing or found twice stops the run with the name (never a target
silently judged by nothing, or by the wrong file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.mutation import run

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("target", sorted(run.TARGETS))
def test_every_target_names_a_module_and_tests_that_exist(target: str) -> None:
    module, names = run.TARGETS[target]
    assert (ROOT / module).is_file(), module
    paths = run.test_paths(names)
    assert [Path(p).name for p in paths] == names
    assert all((ROOT / p).is_file() and p.startswith("tests/") for p in paths)


def test_a_test_in_a_subfolder_is_found_by_name(tmp_path: Path) -> None:
    (tmp_path / "tests" / "probes" / "recipe").mkdir(parents=True)
    (tmp_path / "tests" / "probes" / "recipe" / "test_a.py").write_text("", encoding="utf-8")
    (tmp_path / "tests" / "test_b.py").write_text("", encoding="utf-8")
    assert run.test_paths(["test_b.py", "test_a.py"], tmp_path / "tests") == [
        "tests/test_b.py", "tests/probes/recipe/test_a.py"]


def test_a_name_found_nowhere_or_twice_stops_the_run_naming_it(tmp_path: Path) -> None:
    (tmp_path / "tests" / "a").mkdir(parents=True)
    (tmp_path / "tests" / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / "tests" / folder / "test_twice.py").write_text("", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"'test_gone.py'.*found nowhere"):
        run.test_paths(["test_gone.py"], tmp_path / "tests")
    with pytest.raises(SystemExit, match=r"'test_twice.py'.*tests/a/test_twice.py, tests/b/test_twice.py"):
        run.test_paths(["test_twice.py"], tmp_path / "tests")


def test_a_cached_copy_is_not_a_second_file(tmp_path: Path) -> None:
    (tmp_path / "tests" / "__pycache__").mkdir(parents=True)
    (tmp_path / "tests" / "__pycache__" / "test_c.py").write_text("", encoding="utf-8")
    (tmp_path / "tests" / "test_c.py").write_text("", encoding="utf-8")
    assert run.test_paths(["test_c.py"], tmp_path / "tests") == ["tests/test_c.py"]
