"""An installed rlcheck runs with no checkout: the wheel carries every data file, the pytest11 entry point and the
checks, and `rlcheck preflight` from an empty directory writes the report. Offline: the wheel is built with the
setuptools already installed and installed with --no-index."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _build_wheel(tmp: Path) -> Path:
    """Build from a copy of the sources, so the build leaves no build/ or egg-info in the checkout."""
    src = tmp / "src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    shutil.copy(ROOT / "LICENSE", src)
    shutil.copytree(ROOT / "rlcheck", src / "rlcheck", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp / "dist"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "-q", "-w", str(out), str(src)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = out.glob("rlcheck-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build_wheel(tmp_path_factory.mktemp("wheel"))


def _fresh_venv(where: Path) -> Path:
    """A venv of the base interpreter that sees this environment's packages (the stack, pytest) through a plain path
    line, which, unlike site.addsitedir, does not run the .pth files there: rlcheck's editable finder stays out."""
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "stack.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return python


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    return env


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed, for the tests that only run what it holds (each in a folder of its own,
    outside the venv); the python's path."""
    venv_dir = tmp_path_factory.mktemp("installed") / "venv"
    python = _fresh_venv(venv_dir)
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                           "-q", str(wheel)], capture_output=True, text=True, timeout=300, env=_clean_env())
    assert done.returncode == 0, done.stderr[-3000:]
    return python


def test_wheel_carries_every_data_file_the_checks_and_the_entry_point(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    data = {p.relative_to(ROOT).as_posix() for p in (ROOT / "rlcheck" / "data").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}
    assert data, "no data files found in the checkout"
    assert sorted(data - names) == []
    assert {"rlcheck/checks/test_image.py", "rlcheck/checks/test_cluster.py"} <= names
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[pytest11]\nrlcheck.plugin = rlcheck.plugin" in text


def test_wheel_declares_its_license_and_carries_the_license_text(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    headers = zipfile.ZipFile(wheel).read(meta).decode()
    assert "License-Expression: Apache-2.0" in headers.splitlines()
    assert "License-File: LICENSE" in headers.splitlines()
    (license_file,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    text = zipfile.ZipFile(wheel).read(license_file).decode()
    assert text == (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0" in text


def test_installed_wheel_runs_the_preflight_from_an_empty_directory(installed, tmp_path):
    venv_dir = installed.parents[1]
    empty = tmp_path / "empty"
    empty.mkdir()
    where = subprocess.run([str(installed), "-c", "import rlcheck; print(rlcheck.__file__)"], cwd=empty,
                           capture_output=True, text=True, env=_clean_env(), check=True).stdout
    assert where.startswith(str(venv_dir)), f"rlcheck imported from {where}, not the installed wheel"
    run = subprocess.run([str(venv_dir / "bin" / "rlcheck"), "preflight", "-k", "image or recipe",
                          "--hardware=h200"], cwd=empty, capture_output=True, text=True,
                         timeout=400, env=_clean_env())
    assert "rlcheck GO" in run.stdout or "rlcheck NO-GO" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    report = empty / "rlcheck-report" / "report.json"
    assert report.is_file(), run.stdout[-3000:]
    assert '"kind": "check"' in report.read_text(encoding="utf-8")
    assert sorted(p.name for p in empty.iterdir()) == ["rlcheck-report"]


def test_repository_conftest_and_the_entry_point_do_not_register_the_plugin_twice(installed, tmp_path):
    python = installed
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "conftest.py", project)
    (project / "test_plain.py").write_text("def test_plain():\n    pass\n", encoding="utf-8")
    run = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hardware=none"],
                         cwd=project, capture_output=True, text=True, timeout=300, env=_clean_env())
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "1 passed" in run.stdout


def _hostile_project(root: Path) -> None:
    """A folder above the venv with pytest configuration of its own: an ini whose addopts pytest cannot parse and a
    conftest.py that ends any run that loads it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\naddopts = --no-such-option-from-a-stray-ini\n", encoding="utf-8")
    (root / "conftest.py").write_text("raise SystemExit('a stray conftest.py above the venv was loaded')\n",
                                      encoding="utf-8")


def test_installed_wheel_is_isolated_from_pytest_configuration_above_it_and_renders_without_pyyaml(wheel, tmp_path):
    """A user's project folder holds the venv and the working folder, with its own pytest.ini and conftest.py:
    `rlcheck preflight` judges as it would anywhere; the wheel's version is `rlcheck --version`; the DaemonSet
    renders as JSON where PyYAML is not importable."""
    project = tmp_path / "project"
    _hostile_project(project)
    python = _fresh_venv(project / "venv")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], capture_output=True, text=True, timeout=300, env=_clean_env(), check=True)
    work = project / "work"
    work.mkdir()
    rlcheck = project / "venv" / "bin" / "rlcheck"
    run = subprocess.run([str(rlcheck), "preflight", "-k", "recipe_no_inline_secrets", "--hardware=none"], cwd=work,
                         capture_output=True, text=True, timeout=400, env=_clean_env())
    out = run.stdout + run.stderr
    assert run.returncode == 0 and "rlcheck GO" in run.stdout, out[-3000:]
    assert "stray" not in out, out[-3000:]
    version = subprocess.run([str(rlcheck), "--version"], cwd=work, capture_output=True, text=True, timeout=60,
                             env=_clean_env(), check=True).stdout.strip()
    assert version == f"rlcheck {wheel.name.split('-')[1]}"
    code = ("import sys; sys.modules['yaml'] = None; from rlcheck.cli import main; "
            "sys.exit(main(['k8s', 'render', '--kind', 'preflight-daemonset', '--hardware', 'h200', '--format', "
            "'json']))")
    render = subprocess.run([str(python), "-c", code], cwd=work, capture_output=True, text=True, timeout=120,
                            env=_clean_env())
    assert render.returncode == 0, render.stderr[-3000:]
    assert '"kind": "DaemonSet"' in render.stdout
