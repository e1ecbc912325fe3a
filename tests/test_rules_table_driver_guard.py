"""Rule table for the driver guard (rlcheck.fixes.driver_guard): which capability texts are read and which are refused
(the whole error), that a process with a GPU keeps its real probes and one without gets the workers' capability, that
the import hook arms only megatron.training.arguments (once, and after the module ran), and what --install writes.
A stand-in torch and a stand-in target module; test_fix_driver_guard.py runs the real Megatron in children."""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

import pytest

from rlcheck.fixes import driver_guard


@pytest.mark.parametrize(("text", "capability"), [
    ("9.0", (9, 0)), ("10.3", (10, 3)), ("12", (12, 0)), ("9.", (9, 0)), ("8.9", (8, 9)),
])
def test_a_capability_is_major_dot_minor(monkeypatch, text, capability):
    monkeypatch.setenv("RLCHECK_WORKER_CAPABILITY", text)
    assert driver_guard.capability_from_env() == capability


def test_without_the_variable_the_default_is_read(monkeypatch):
    monkeypatch.delenv("RLCHECK_WORKER_CAPABILITY", raising=False)
    assert driver_guard.capability_from_env() == (9, 0)
    assert driver_guard.capability_from_env("10.3") == (10, 3)
    with pytest.raises(ValueError, match=r"^\$RLCHECK_WORKER_CAPABILITY='x': "):
        driver_guard.capability_from_env("x")


@pytest.mark.parametrize("text", ["hopper", "", ".0", "9.x", "x.0", "9.0.1", "-9.0", "9.-1", " 9.0"])
def test_anything_else_is_refused_with_the_whole_reason(monkeypatch, text):
    monkeypatch.setenv("RLCHECK_WORKER_CAPABILITY", text)
    with pytest.raises(ValueError) as err:
        driver_guard.capability_from_env()
    assert str(err.value) == f"$RLCHECK_WORKER_CAPABILITY={text!r}: a compute capability such as '9.0' or '10.3'"


def fake_torch(monkeypatch, available: bool) -> types.SimpleNamespace:
    real = object()
    cuda = types.SimpleNamespace(is_available=lambda: available, get_device_capability=real)
    torch = types.SimpleNamespace(cuda=cuda, real=real)
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


def test_a_process_without_a_gpu_answers_both_probes_with_the_workers_capability(monkeypatch):
    torch = fake_torch(monkeypatch, available=False)
    arguments = types.ModuleType("arguments")
    assert driver_guard.install(arguments, (10, 3)) is True
    assert torch.cuda.get_device_capability() == (10, 3)
    assert torch.cuda.get_device_capability(1) == (10, 3)
    assert torch.cuda.get_device_capability(device=0) == (10, 3)
    assert arguments.get_device_arch_version() == 10


def test_a_process_with_a_gpu_keeps_the_real_probes(monkeypatch):
    torch = fake_torch(monkeypatch, available=True)
    arguments = types.ModuleType("arguments")
    assert driver_guard.install(arguments, (9, 0)) is False
    assert torch.cuda.get_device_capability is torch.real and not hasattr(arguments, "get_device_arch_version")


@pytest.fixture
def target(monkeypatch, tmp_path):
    """A module standing in for megatron.training.arguments (records that its body ran), and a clean meta_path."""
    name = f"rlcheck_guard_target_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text("RAN = True\ndef get_device_arch_version():\n    return 'real'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(driver_guard, "TARGET", name)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setenv("RLCHECK_WORKER_CAPABILITY", "10.3")
    fake_torch(monkeypatch, available=False)
    yield name
    sys.modules.pop(name, None)


def test_arm_guards_the_target_right_after_it_is_imported(target):
    driver_guard.arm()
    driver_guard.arm()  # a second .pth line or call arms nothing more
    arms = [f for f in sys.meta_path if isinstance(f, driver_guard._Arm)]
    assert len(arms) == 1 and sys.meta_path[0] is arms[0]
    module = importlib.import_module(target)
    assert module.RAN is True and module.get_device_arch_version() == 10
    assert sys.modules["torch"].cuda.get_device_capability() == (10, 3)
    assert sys.meta_path[0] is arms[0]  # it stays in place for a later re-import


def test_arm_after_the_target_was_imported_guards_it_at_once(target):
    module = importlib.import_module(target)
    driver_guard.arm()
    assert module.get_device_arch_version() == 10
    assert not any(isinstance(f, driver_guard._Arm) for f in sys.meta_path)


def test_the_hook_passes_every_other_module_by(target):
    arm = driver_guard._Arm()
    sys.meta_path.insert(0, arm)
    assert arm.find_spec("json") is None
    assert arm.find_spec(f"{target}_absent") is None


def test_the_hook_hands_back_a_target_it_cannot_find(target, monkeypatch):
    arm = driver_guard._Arm()
    sys.meta_path.insert(0, arm)
    monkeypatch.setattr(driver_guard, "TARGET", f"{target}_absent")
    assert arm.find_spec(f"{target}_absent") is None
    assert sys.meta_path[0] is arm


def test_the_hook_hands_back_a_spec_without_a_loader_untouched(target, monkeypatch):
    arm = driver_guard._Arm()
    sys.meta_path.insert(0, arm)
    bare = importlib.machinery.ModuleSpec(target, None)
    monkeypatch.setattr(driver_guard.importlib.util, "find_spec", lambda name: bare)
    assert arm.find_spec(target) is bare


def test_install_writes_the_pth_file_that_arms_the_guard(tmp_path, capsys):
    assert driver_guard.main(["--install", "--site-packages", str(tmp_path)]) == 0
    path = tmp_path / "rlcheck-driver-guard.pth"
    assert path.read_text() == "import rlcheck.fixes.driver_guard as _g; _g.arm()\n"
    assert capsys.readouterr().out == f"driver_guard: wrote {path}\n"


def test_without_install_nothing_is_written(tmp_path, capsys):
    assert driver_guard.main(["--site-packages", str(tmp_path)]) == 0
    assert list(tmp_path.iterdir()) == [] and capsys.readouterr().out == ""


def test_the_default_folder_is_this_interpreters_site_packages(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(driver_guard, "sysconfig", types.SimpleNamespace(get_paths=lambda: {"purelib": str(tmp_path)}))
    assert driver_guard.main(["--install"]) == 0
    assert (Path(tmp_path) / driver_guard.PTH_NAME).is_file()


def test_help_is_the_modules_text_as_written_and_each_options_words(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exit_:
        driver_guard.main(["--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and driver_guard.__doc__ is not None
    assert out.startswith("usage: ") and f"\n{driver_guard.__doc__}\n" in out
    assert " write rlcheck-driver-guard.pth into site-packages\n" in out
