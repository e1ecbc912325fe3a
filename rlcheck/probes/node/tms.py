"""torch_memory_saver: which preload library gets chosen, what libcudart it needs, whether it resolves.

Catalogue: tms-cu12-preload (a cu12 build on a CUDA 13 runtime), tms-loader-unresolved (right build,
its libcudart not on the loader path).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from rlcheck.probes.node import elf
from rlcheck.probes.node.packages import package_root
from rlcheck.process import subproc

STEM = "torch_memory_saver_hook_mode_preload"
# How SLIME picks the LD_PRELOAD library, by file name (slime/ray/actor_group.py, checked at each tag): the first
# candidate that exists. Miles main asks torch_memory_saver's own get_binary_path_from_package instead.
SELECTION_RULES = {
    "slime-v0.2.4": (f"{STEM}.abi3.so",),  # v0.2.x: hard-coded name, the cu12 build in 0.0.10 (THUDM/slime#2186)
    "slime-v0.3.1": (f"{STEM}_cu12.abi3.so", f"{STEM}.abi3.so"),  # v0.3.0 and v0.3.1
    "slime-main": (f"{STEM}_cu13.abi3.so", f"{STEM}_cu12.abi3.so", f"{STEM}.abi3.so"),  # after v0.3.1 (#2262)
}
PACKAGE_RULE = "miles-main"
"""Miles (miles/ray/train/actor_factory.py): torch_memory_saver's CUDA-aware choice, asked in a child process."""
MAIN_AFTER = (0, 3, 1)
"""The last SLIME release before main's cu13-first rule; a later release is taken to carry it."""
Runner = Callable[..., subproc.Completed]
"""subproc.run, or a stand-in that records the call (the tests')."""


def rule_for(framework: str | None, version: str | None) -> str:
    """The preload rule of a framework version: Miles asks the package; SLIME by release; a SLIME of unknown
    release (a checkout of main) is main; no framework known is the reference image's v0.2.4."""
    if framework == "miles":
        return PACKAGE_RULE
    if framework is None:
        return "slime-v0.2.4"
    head = re.match(r"(\d+(?:\.\d+)*)", version or "")
    parts = tuple(int(x) for x in head.group(1).split(".")) if head else None
    # '0.3' is 0.3.0: padded, since (0, 3) sorts before (0, 3, 0)
    key = None if parts is None else parts + (0,) * (len(MAIN_AFTER) - len(parts))
    if key is None or key > MAIN_AFTER:
        return "slime-main"
    return "slime-v0.3.1" if key >= (0, 3, 0) else "slime-v0.2.4"


RESOLVE = f"""
import json, torch
from torch_memory_saver.utils import get_binary_path_from_package
path = get_binary_path_from_package({STEM!r})
print("RLCHECK_TMS " + json.dumps({{"path": str(path), "cuda": torch.version.cuda}}))
"""
LIBCUDART = re.compile(r"libcudart\.so\.(\d+)$")


def package_dir() -> Path | None:
    """Where the hook libraries lie: beside the torch_memory_saver package (site-packages)."""
    return package_root("torch_memory_saver")


def choose(rule: str, folder: Path) -> Path | None:
    """The file SLIME's rule picks: the first candidate that exists (not for PACKAGE_RULE: resolve_with_package)."""
    return next((folder / name for name in SELECTION_RULES[rule] if (folder / name).exists()), None)


def cudart_major(library: Path) -> int | None:
    """The libcudart major the library names as NEEDED, None when it names none."""
    for name in elf.needed(library):
        if match := LIBCUDART.match(name):
            return int(match.group(1))
    return None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Resolved:
    path: Path | None
    torch_cuda: str | None
    """torch.version.cuda, as the resolver saw it."""
    error: str = ""


def resolve_with_package(timeout_s: float = 180.0, *, runner: Runner = subproc.run) -> Resolved:
    """torch_memory_saver's own CUDA-aware choice (get_binary_path_from_package), asked in a child."""
    done = runner([sys.executable, "-c", RESOLVE], timeout_s=timeout_s)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RLCHECK_TMS ")), None)
    if line is None:
        return Resolved(path=None, torch_cuda=None, error=f"resolver did not run ({done.why()}): {done.tail(1)}")
    data = json.loads(line.removeprefix("RLCHECK_TMS "))
    return Resolved(path=Path(data["path"]), torch_cuda=data["cuda"])


_RESOLVED: list[Resolved] = []
_RESOLVING = threading.Lock()


def resolved_once() -> Resolved:
    """resolve_with_package() asked once per process, whoever asks first (the installed package does not change
    under a run; each ask is a child importing torch): what the two tms reproducers share."""
    with _RESOLVING:
        if not _RESOLVED:
            _RESOLVED.append(resolve_with_package())
        return _RESOLVED[0]


LDCONFIG = "/sbin/ldconfig"
LOADER_DEFAULT_DIRS = ("/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                       "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib", "/usr/lib")
"""Where the dynamic loader looks after LD_LIBRARY_PATH and ld.so.cache (glibc's system search path, x86-64 and
aarch64)."""


def ldconfig_dirs(ldconfig: str = LDCONFIG, *, runner: Runner = subproc.run) -> set[str]:
    """The folders of every library in ld.so.cache (`ldconfig -p`); none when ldconfig is absent or fails."""
    # The path itself, not the name: a Ray worker's PATH may leave out /sbin (the name then raised, not answered).
    done = runner([ldconfig, "-p"], timeout_s=30) if os.path.exists(ldconfig) else None
    if done is None or done.returncode != 0:
        return set()
    # a line is `\tNAME (FLAGS) => PATH`: the path is all that follows the flags, whatever it holds
    return {str(Path(x.partition(") => ")[2]).parent) for x in done.stdout.splitlines() if ") => " in x}


def find_on_loader_path(soname: str, ld_library_path: str, cache_dirs: set[str],
                        defaults: tuple[str, ...] = LOADER_DEFAULT_DIRS) -> str | None:
    """Where the dynamic loader would find soname: LD_LIBRARY_PATH, then ld.so.cache, then default dirs."""
    for folder in (*filter(None, ld_library_path.split(":")), *sorted(cache_dirs), *defaults):
        candidate = Path(folder) / soname
        if candidate.exists():
            return str(candidate)
    return None


def load_in_child(library: Path, ld_library_path: str, *, wrapper: tuple[str, ...] = (),
                  runner: Runner = subproc.run) -> subproc.Completed:
    """ctypes.CDLL(library) in a fresh process, with this LD_LIBRARY_PATH (and an optional argv prefix)."""
    code = f"import ctypes; ctypes.CDLL({str(library)!r}); print('RLCHECK_LOADED')"
    env = subproc.child_env() | {"LD_LIBRARY_PATH": ld_library_path}
    return runner([*wrapper, sys.executable, "-c", code], timeout_s=60, env=env)
