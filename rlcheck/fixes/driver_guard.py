"""Answer Megatron's two GPU probes in a process that has no GPU: SLIME's Ray driver (driver-gpu-probe).

Megatron's validate_args calls torch.cuda.get_device_capability() (--moe-grouped-gemm) and
get_device_arch_version() (TP or CP > 1); on the GPU-less head both raise `Found no NVIDIA driver`.
Where CUDA is unavailable, this answers them with the workers' compute capability (from
$RLCHECK_WORKER_CAPABILITY, e.g. "9.0", which rlcheck's recipes set per hardware), so the driver
validates what the workers will run. GPU processes keep the real probes. Upstream: NVIDIA/Megatron-LM#5764.

In an image, `python3 -m rlcheck.fixes.driver_guard --install` writes a .pth file that arms the guard
in every Python process; it only acts when megatron.training.arguments is imported there.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

ENV_NAME = "RLCHECK_WORKER_CAPABILITY"
TARGET = "megatron.training.arguments"
PTH_NAME = "rlcheck-driver-guard.pth"


def capability_from_env(default: str = "9.0") -> tuple[int, int]:
    text = os.environ.get(ENV_NAME, default)
    major, _, minor = text.partition(".")
    if not major.isdigit() or not (minor or "0").isdigit():
        raise ValueError(f"${ENV_NAME}={text!r}: a compute capability such as '9.0' or '10.3'")
    return int(major), int(minor or 0)


def install(arguments: ModuleType, capability: tuple[int, int]) -> bool:
    """Guard the probes in this process if it has no usable GPU; True when it did."""
    import torch

    if torch.cuda.is_available():
        return False
    torch.cuda.get_device_capability = lambda device=None: capability
    arguments.get_device_arch_version = lambda: capability[0]  # type: ignore[attr-defined]
    return True


class _Arm(importlib.abc.MetaPathFinder):
    """Installs the guard right after megatron.training.arguments is imported, and only then."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if name != TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        real_exec = spec.loader.exec_module

        def exec_then_guard(module: ModuleType) -> None:
            real_exec(module)
            install(module, capability_from_env())

        spec.loader.exec_module = exec_then_guard  # type: ignore[method-assign]
        return spec


def arm() -> None:
    """Called from the .pth file at interpreter start: cheap, imports nothing heavy."""
    if TARGET in sys.modules:
        install(sys.modules[TARGET], capability_from_env())
    elif not any(isinstance(f, _Arm) for f in sys.meta_path):
        sys.meta_path.insert(0, _Arm())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--install", action="store_true", help=f"write {PTH_NAME} into site-packages")
    parser.add_argument("--site-packages", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    args = parser.parse_args(argv)
    if args.install:
        path = args.site_packages / PTH_NAME
        path.write_text("import rlcheck.fixes.driver_guard as _g; _g.arm()\n")
        print(f"driver_guard: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
