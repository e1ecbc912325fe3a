"""torch_memory_saver's preload pieces as a rule table (rlcheck/probes/node/tms.py): the rule of each framework
release on both sides of its bounds, the file each rule picks, where the loader finds libcudart (LD_LIBRARY_PATH,
ld.so.cache, the system folders, in that order), what `ldconfig -p` gives, and the two child processes (the
package's own choice, a library loaded with a given LD_LIBRARY_PATH) through a recording runner: argv, deadline,
environment and every answer they can give."""

from __future__ import annotations

import dataclasses
import os
import platform
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rlcheck.probes.node import tms
from rlcheck.probes.node.collect import read_torch
from rlcheck.process import subproc

STEM = tms.STEM
PLAIN, CU12, CU13 = f"{STEM}.abi3.so", f"{STEM}_cu12.abi3.so", f"{STEM}_cu13.abi3.so"


@pytest.mark.parametrize(("framework", "version", "rule"), [
    ("miles", "0.1.0", "miles-main"), ("miles", "0.2.4", "miles-main"), ("miles", None, "miles-main"),
    (None, None, "slime-v0.2.4"), (None, "0.3.2", "slime-v0.2.4"),  # no framework: the reference image's SLIME
    ("slime", "0", "slime-v0.2.4"), ("slime", "0.2", "slime-v0.2.4"), ("slime", "0.2.4", "slime-v0.2.4"),
    ("slime", "0.2.99", "slime-v0.2.4"),
    ("slime", "0.3", "slime-v0.3.1"),  # 0.3 is 0.3.0, not a release before it
    ("slime", "0.3.0", "slime-v0.3.1"), ("slime", "0.3.0rc1", "slime-v0.3.1"), ("slime", "0.3.1", "slime-v0.3.1"),
    ("slime", "0.3.1.post1", "slime-v0.3.1"),
    ("slime", "0.3.1.1", "slime-main"), ("slime", "0.3.2", "slime-main"), ("slime", "0.4", "slime-main"),
    ("slime", "1", "slime-main"), ("slime", "10.0.0", "slime-main"),
    ("slime", None, "slime-main"), ("slime", "", "slime-main"), ("slime", "main", "slime-main"),  # release unknown
])
def test_rules_table_tms_rule_for(framework, version, rule):
    assert tms.rule_for(framework, version) == rule


@pytest.mark.parametrize(("files", "rule", "chosen"), [
    ((PLAIN, CU12, CU13), "slime-v0.2.4", PLAIN), ((CU12, CU13), "slime-v0.2.4", None),
    ((PLAIN, CU12, CU13), "slime-v0.3.1", CU12), ((PLAIN, CU13), "slime-v0.3.1", PLAIN),
    ((CU13,), "slime-v0.3.1", None),
    ((PLAIN, CU12, CU13), "slime-main", CU13), ((PLAIN, CU12), "slime-main", CU12), ((PLAIN,), "slime-main", PLAIN),
    ((), "slime-main", None), ((f"{STEM}_cu14.abi3.so",), "slime-main", None),
])
def test_rules_table_tms_choose(tmp_path, files, rule, chosen):
    for name in files:
        (tmp_path / name).write_bytes(b"")
    assert tms.choose(rule, tmp_path) == (tmp_path / chosen if chosen else None)


def test_rules_table_tms_cudart_major_none_for_a_library_without_libcudart():
    assert tms.cudart_major(Path(sys.executable).resolve()) is None


def _folders(root: Path, *names: str, soname: str = "libcudart.so.13") -> list[str]:
    """Folders under root, each holding soname unless its name ends in '-empty'."""
    made = []
    for name in names:
        (root / name).mkdir()
        if not name.endswith("-empty"):
            (root / name / soname).write_bytes(b"")
        made.append(str(root / name))
    return made


@pytest.mark.parametrize(("ld_path", "cache", "defaults", "found"), [
    ("a:b", ["c"], ["d"], "a"), ("a-empty:b", ["c"], ["d"], "b"),
    ("", ["c", "b"], ["d"], "b"),  # the cache's folders in sorted order
    (":a-empty::", ["c"], ["d"], "c"),  # empty entries are no folder
    ("a-empty", ["c-empty"], ["d-empty", "e"], "e"), ("a-empty", [], ["d-empty"], None), ("", [], [], None),
])
def test_rules_table_tms_loader_search_order(tmp_path, ld_path, cache, defaults, found):
    names = {n for part in (ld_path.split(":"), cache, defaults) for n in part if n}
    made = dict(zip(sorted(names), _folders(tmp_path, *sorted(names)), strict=True))
    where = tms.find_on_loader_path("libcudart.so.13", ":".join(made.get(n, n) for n in ld_path.split(":")),
                                    {made[n] for n in cache}, tuple(made[n] for n in defaults))
    assert where == (f"{made[found]}/libcudart.so.13" if found else None)


def test_rules_table_tms_loader_defaults_cover_this_hosts_system_search_path():
    """Every folder glibc's loader names as its system search path here is searched when nothing else holds the
    library (`ld.so --help`)."""
    loader = Path(f"/lib64/ld-linux-{platform.machine().replace('_', '-')}.so.2")
    if platform.machine() == "aarch64":
        loader = Path("/lib/ld-linux-aarch64.so.1")
    if not loader.exists():
        pytest.skip(f"no glibc loader at {loader}")
    said = subproc.run([str(loader), "--help"], timeout_s=30).stdout
    system = re.findall(r"^\s+(\S+) \(system search path\)$", said, re.M)
    assert system and set(system) <= set(tms.LOADER_DEFAULT_DIRS), said


@dataclasses.dataclass
class Recording:
    """A runner that answers one Completed and records each call: (argv, keyword arguments)."""

    stdout: str = ""
    stderr: str = ""
    returncode: int | None = 0
    timed_out: bool = False
    calls: list[tuple[tuple[str, ...], dict[str, Any]]] = dataclasses.field(default_factory=list)

    def __call__(self, argv: list[str], **kwargs: Any) -> subproc.Completed:
        self.calls.append((tuple(argv), kwargs))
        return subproc.Completed(argv=tuple(argv), returncode=self.returncode, stdout=self.stdout,
                                 stderr=self.stderr, timed_out=self.timed_out)


LDCONFIG_P = ("536 libs found in cache `/etc/ld.so.cache'\n"
              "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n"
              "\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda-12.8/targets/x86_64-linux/lib/libcudart.so.12\n"
              '\tlibm.so.6 (libc6,x86-64, hwcap: "x86-64-v3") => /lib/x86_64-linux-gnu/glibc-hwcaps/libm.so.6\n'
              "\tlibodd.so.1 (libc6,x86-64) => /opt/odd) => dir/libodd.so.1\n"
              "Cache generated by: ldconfig (GNU libc) stable release version 2.41\n")
LDCONFIG_DIRS = {"/lib/x86_64-linux-gnu", "/usr/local/cuda-12.8/targets/x86_64-linux/lib",
                 "/lib/x86_64-linux-gnu/glibc-hwcaps", "/opt/odd) => dir"}


@pytest.mark.parametrize(("returncode", "stdout", "dirs"), [
    (0, LDCONFIG_P, LDCONFIG_DIRS), (0, "0 libs found in cache `/etc/ld.so.cache'\n", set()), (0, "", set()),
    (1, LDCONFIG_P, set()),  # a failed ldconfig: nothing it printed is taken
    (None, LDCONFIG_P, set()),  # killed at its deadline
])
def test_rules_table_tms_ldconfig_dirs(tmp_path, returncode, stdout, dirs):
    ldconfig = tmp_path / "ldconfig"
    ldconfig.write_bytes(b"")
    runner = Recording(stdout=stdout, returncode=returncode, timed_out=returncode is None)
    assert tms.ldconfig_dirs(str(ldconfig), runner=runner) == dirs
    assert runner.calls == [((str(ldconfig), "-p"), {"timeout_s": 30})]


def test_rules_table_tms_ldconfig_dirs_without_ldconfig_asks_nothing(tmp_path):
    runner = Recording(stdout=LDCONFIG_P)
    assert tms.ldconfig_dirs(str(tmp_path / "ldconfig"), runner=runner) == set()
    assert runner.calls == []


def test_rules_table_tms_ldconfig_dirs_runs_the_program_named(tmp_path):
    ldconfig = tmp_path / "ldconfig"
    ldconfig.write_text('#!/bin/sh\n[ "$1" = -p ] || exit 3\n'
                        'printf "\\tlibx.so.1 (libc6,x86-64) => /opt/x/libx.so.1\\n"\n')
    ldconfig.chmod(0o755)
    assert tms.ldconfig_dirs(str(ldconfig)) == {"/opt/x"}


RESOLVED = 'RLCHECK_TMS {"path": "/site/torch_memory_saver_hook_mode_preload_cu13.abi3.so", "cuda": "13.0"}'
TRACEBACK = ("Traceback (most recent call last):\n  File \"<string>\", line 3, in <module>\n"
             "ModuleNotFoundError: No module named 'torch_memory_saver'\n")


@pytest.mark.parametrize(("answer", "resolved"), [
    (dict(stdout=f"loading\n{RESOLVED}\n"),
     tms.Resolved(path=Path(f"/site/{CU13}"), torch_cuda="13.0")),
    (dict(stdout=f'{RESOLVED}\nRLCHECK_TMS {{"path": "/other/{CU12}", "cuda": "12.8"}}\n'),  # the first line
     tms.Resolved(path=Path(f"/site/{CU13}"), torch_cuda="13.0")),
    (dict(stdout=f'RLCHECK_TMS {{"path": "/site/{CU12}", "cuda": null}}'),  # a CPU build of torch
     tms.Resolved(path=Path(f"/site/{CU12}"), torch_cuda=None)),
    (dict(stderr=TRACEBACK, returncode=1),
     tms.Resolved(path=None, torch_cuda=None, error="resolver did not run (exit code 1): ModuleNotFoundError: No "
                  "module named 'torch_memory_saver'")),
    (dict(stdout=f" {RESOLVED}\nrlcheck_tms {{}}\n", stderr="warned\nlast words"),  # no line that starts so
     tms.Resolved(path=None, torch_cuda=None, error="resolver did not run (exit code 0): last words")),
    (dict(stdout="importing torch\n", returncode=None, timed_out=True),
     tms.Resolved(path=None, torch_cuda=None, error="resolver did not run (killed at its deadline): importing torch")),
])
def test_rules_table_tms_resolve_with_package(answer, resolved):
    runner = Recording(**answer)  # a fresh recording per row: a row may run more than once in one process
    assert tms.resolve_with_package(runner=runner) == resolved
    assert runner.calls == [((sys.executable, "-c", tms.RESOLVE), {"timeout_s": 180.0})]


def test_rules_table_tms_resolve_with_package_passes_its_deadline_on():
    runner = Recording(stdout=RESOLVED)
    tms.resolve_with_package(7.5, runner=runner)
    assert runner.calls == [((sys.executable, "-c", tms.RESOLVE), {"timeout_s": 7.5})]


def test_rules_table_tms_resolve_with_package_asks_the_installed_package():
    """The real child here: torch_memory_saver's own choice for this torch (a CUDA 13 build picks _cu13)."""
    _, cuda = read_torch()  # torch.version.cuda, read from its file
    resolved = tms.resolve_with_package()
    assert resolved.error == "" and resolved.torch_cuda == cuda, resolved
    folder = tms.package_dir()
    assert folder is not None and resolved.path is not None and resolved.path.parent == folder
    assert resolved.path.name == f"{STEM}_cu{cuda.split('.')[0]}.abi3.so"


@pytest.mark.parametrize("wrapper", [(), ("unshare", "-m", "sh", "-c", 'exec "$@"', "sh")])
def test_rules_table_tms_load_in_child_call(wrapper):
    runner = Recording(stdout="RLCHECK_LOADED\n")
    done = tms.load_in_child(Path("/opt/lib/it's.so"), "/opt/cuda/lib:/x", wrapper=wrapper, runner=runner)
    assert done == subproc.Completed(argv=runner.calls[0][0], returncode=0, stdout="RLCHECK_LOADED\n", stderr="",
                                     timed_out=False)
    code = "import ctypes; ctypes.CDLL(\"/opt/lib/it's.so\"); print('RLCHECK_LOADED')"
    assert runner.calls == [((*wrapper, sys.executable, "-c", code),
                             {"timeout_s": 60, "env": {**os.environ, "LD_LIBRARY_PATH": "/opt/cuda/lib:/x"}})]


def test_rules_table_tms_load_in_child_loads_and_refuses_for_real(tmp_path):
    """A real child: the wrapper runs first and sees the LD_LIBRARY_PATH given; a library loads, a text file does
    not."""
    show = ("sh", "-c", 'echo "LD=$LD_LIBRARY_PATH"; exec "$@"', "sh")
    import _ctypes  # an extension module: a shared library that loads anywhere Python runs

    loaded = tms.load_in_child(Path(_ctypes.__file__), str(tmp_path), wrapper=show)
    assert loaded.returncode == 0 and loaded.stdout == f"LD={tmp_path}\nRLCHECK_LOADED\n", loaded.tail()
    text = tmp_path / "notes.so"
    text.write_text("not a library")
    refused = tms.load_in_child(text, "")
    assert refused.returncode == 1 and "RLCHECK_LOADED" not in refused.stdout and "OSError" in refused.stderr


def test_rules_table_tms_resolved_once_asks_once_per_process_whoever_asks(monkeypatch):
    asked: list[int] = []
    gate = threading.Barrier(4, timeout=10)

    def ask() -> tms.Resolved:
        asked.append(1)
        time.sleep(0.05)  # a slow child: the other askers arrive meanwhile
        return tms.Resolved(path=Path("/x/hook_cu13.so"), torch_cuda="13.0")

    monkeypatch.setattr(tms, "resolve_with_package", ask)
    monkeypatch.setattr(tms, "_RESOLVED", [])
    got: list[tms.Resolved] = []

    def one() -> None:
        gate.wait()
        got.append(tms.resolved_once())

    threads = [threading.Thread(target=one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert asked == [1] and got == [tms.Resolved(path=Path("/x/hook_cu13.so"), torch_cuda="13.0")] * 4
    assert tms.resolved_once() is got[0]
