"""Re-checks on hostile input: a hanging nvidia-smi ends in UNKNOWN (never GO) however it hangs, and an unreadable
folder given to `rlcheck scan` is named with exit 2, also when rlcheck runs as a user that is not root."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECK_PASS = """
from rlcheck.verdict import Status, Verdict
def test_image_ok(record_verdict):
    record_verdict(Verdict(check_id="x", status=Status.PASS, summary="numpy 1.26.4 as needed"))
"""
HANG_S = 60
"""How long each fake nvidia-smi would hang: far past the 1 s detection timeout and the bound the run must keep."""
RUN_BOUND_S = 45.0


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.mkdir("checks")
    pytester.makepyfile(**{"checks/test_image": CHECK_PASS})
    return pytester


def _fake_nvidia_smi(folder: Path, body: str) -> None:
    folder.mkdir(exist_ok=True)
    smi = folder / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\n{body}\n")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.mark.parametrize("body", [
    f"exec sleep {HANG_S}",
    f"trap '' TERM INT HUP; sleep {HANG_S}; sleep {HANG_S}",  # deaf to SIGTERM: needs the SIGKILL
    f"sleep {HANG_S} & sleep {HANG_S} & wait",  # children of its own holding the output pipe open
    f"yes 'NVIDIA H200, 9.0, 143771, 580.65.06' | head -c 50000000; sleep {HANG_S}",  # a flood, then a hang
], ids=["sleeps", "ignores-sigterm", "children-hold-pipe", "flood-then-hang"])
def test_recheck_hanging_nvidia_smi_is_unknown_never_go(project, monkeypatch, body):
    _fake_nvidia_smi(project.path / "bin", body)
    monkeypatch.setenv("PATH", f"{project.path / 'bin'}:/usr/bin:/bin")
    started = time.monotonic()
    result = project.runpytest_subprocess("--hardware=auto", "--hardware-timeout-s=1", "-p", "no:cacheprovider",
                                          timeout=RUN_BOUND_S + 60)
    elapsed = time.monotonic() - started
    doc = json.loads((project.path / "rlcheck-report" / "report.json").read_text())
    statuses = {v["check_id"]: v["status"] for v in doc["verdicts"]}
    assert doc["go"] is False and result.ret == 2, result.stdout.str()
    assert statuses["hardware_detection"] == "UNKNOWN", statuses
    assert "nvidia-smi" in doc["hardware"]["evidence"], doc["hardware"]
    assert elapsed < RUN_BOUND_S, elapsed


ESCAPED_S = 20
"""How long the descendant that leaves nvidia-smi's process group keeps the output pipe open."""


def test_recheck_nvidia_smi_child_escaping_the_group_is_bounded(tmp_path, monkeypatch):
    from rlcheck.probes.node import gpus

    _fake_nvidia_smi(tmp_path / "bin", f"setsid sleep {ESCAPED_S} &\nexec sleep {HANG_S}")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    started = time.monotonic()
    reading = gpus.read_gpus(1.0)
    assert reading.error and not reading.gpus
    assert time.monotonic() - started < ESCAPED_S - 6  # the deadline, the kill's grace and the drain's bound


NOBODY = 65534
FAILURE = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)  # instant, same inode: never chmod what is linked here
    except OSError:
        shutil.copy2(src, dst)


def _runs_as_nobody(argv: list[str], env: dict[str, str]) -> bool:
    who = subprocess.run([*argv, "-c", "import os, rlcheck.cli; print(os.geteuid())"], env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    return who.stdout.strip() == str(NOBODY)


def _interpreter_for_nobody(base: Path) -> tuple[Path, dict[str, str]]:
    """This interpreter (hard links where it can), rlcheck and `packaging` under base, which nobody can read."""
    if Path(sys.base_prefix) in (Path("/"), Path("/usr")):
        pytest.skip(f"the user nobody cannot run {sys.executable} with rlcheck, and {sys.base_prefix} is too "
                    "large to copy for it")
    home = base / "python"
    shutil.copytree(sys.base_prefix, home, copy_function=_link_or_copy, ignore=shutil.ignore_patterns(
        "test", "site-packages", "idlelib", "tkinter", "turtledemo", "config-*", "include", "share"))
    import packaging

    shutil.copytree(Path(packaging.__file__).parent, base / "site" / "packaging")
    shutil.copytree(ROOT / "rlcheck", base / "site" / "rlcheck", ignore=shutil.ignore_patterns("__pycache__"))
    return home / "bin" / Path(sys.executable).resolve().name, {
        "PATH": "/usr/bin:/bin", "PYTHONHOME": str(home), "LD_LIBRARY_PATH": str(home / "lib"),
        "PYTHONPATH": str(base / "site"), "PYTHONDONTWRITEBYTECODE": "1", "LC_ALL": "C.UTF-8"}


@pytest.fixture(scope="module")
def as_nobody() -> Iterator[tuple[list[str], dict[str, str], Path]]:
    """(argv prefix, environment, a folder nobody can traverse) to run `python -m rlcheck.cli` as the user nobody
    (as this user when the tests do not run as root); the interpreter and rlcheck are copied where nobody can read
    them when it cannot read them where they are (/root, a checkout only root can read)."""
    base = Path(tempfile.mkdtemp(prefix="rlcheck-nobody-"))
    base.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        if os.geteuid() != 0:
            yield [sys.executable], env, base
            return
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv (util-linux): no way to run rlcheck as the user nobody")
        setpriv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        if not _runs_as_nobody([*setpriv, sys.executable], env):
            python, env = _interpreter_for_nobody(base)
            assert _runs_as_nobody([*setpriv, str(python)], env), "the copied interpreter does not run as nobody"
            setpriv.append(str(python))
        else:
            setpriv.append(sys.executable)
        yield setpriv, env, base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _scan(as_nobody: tuple[list[str], dict[str, str], Path], *paths: Path) -> subprocess.CompletedProcess[str]:
    argv, env, _ = as_nobody
    return subprocess.run([*argv, "-m", "rlcheck.cli", "scan", *map(str, paths)], env=env, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.fixture
def locked_tree(as_nobody) -> Iterator[Path]:
    """tree/: ok.log (readable), secret.log (0600, root's), locked/ (0000) and listed/ (r-- for others: its names
    can be listed, nothing in it opened), all holding a known failure line."""
    tree = Path(tempfile.mkdtemp(prefix="tree-", dir=as_nobody[2]))
    tree.chmod(0o755)
    for folder in ("locked", "listed"):
        (tree / folder).mkdir()
        (tree / folder / "job.log").write_bytes(FAILURE)
        (tree / folder / "job.log").chmod(0o644)
    (tree / "secret.log").write_bytes(FAILURE)
    (tree / "ok.log").write_bytes(b"fine\n")
    (tree / "ok.log").chmod(0o644)
    (tree / "secret.log").chmod(0o600)
    (tree / "locked").chmod(0)
    (tree / "listed").chmod(0o704)
    yield tree
    for folder in ("locked", "listed"):
        (tree / folder).chmod(0o755)
    shutil.rmtree(tree, ignore_errors=True)


def test_recheck_scan_as_nobody_names_every_unreadable_input_exit_2(as_nobody, locked_tree):
    done = _scan(as_nobody, locked_tree)
    assert done.returncode == 2, done.stderr
    assert f"{locked_tree / 'locked'}: cannot list the directory: Permission denied" in done.stderr, done.stderr
    assert f"{locked_tree / 'secret.log'}: Permission denied" in done.stderr, done.stderr
    assert f"{locked_tree / 'listed' / 'job.log'}" in done.stderr, done.stderr
    assert "1 file(s), no known failure; 3 input(s) could not be read in full" in done.stdout, done.stdout


@pytest.mark.parametrize("name", ["locked", "secret.log"])
def test_recheck_scan_as_nobody_of_an_unreadable_argument_names_it_exit_2(as_nobody, locked_tree, name):
    done = _scan(as_nobody, locked_tree / name)
    assert done.returncode == 2, done.stderr
    assert str(locked_tree / name) in done.stderr and "Permission denied" in done.stderr, done.stderr
    assert "could not be read" in done.stdout, done.stdout
