"""One place that calls `tilelang.compile`, so every kernel builds the same way.

`RLCHECK_KERNEL_ARCH=sm_90a` compiles for that architecture without a GPU present (nvcc
only): useful to check that every variant lowers, and to read the generated CUDA source,
on a CPU machine. Unset, TileLang picks the GPU it finds.
"""

from __future__ import annotations

import os
from typing import Any

ARCH_ENV = "RLCHECK_KERNEL_ARCH"


def compile_target() -> Any:
    """TileLang target: the GPU found ("auto"), or the architecture named in RLCHECK_KERNEL_ARCH."""
    arch = os.environ.get(ARCH_ENV, "").strip()
    if not arch:
        return "auto"
    from tvm.target import Target

    return Target({"kind": "cuda", "arch": arch})


def compile_program(program: Any, out_idx: list[int], pass_configs: dict[str, bool] | None = None) -> Any:
    """Compile a prim_func into a callable kernel (TileLang caches it on disk by source and configs)."""
    import tilelang

    return tilelang.compile(program, out_idx=out_idx, target=compile_target(), pass_configs=pass_configs or {})


def tilelang_version() -> str:
    """Installed TileLang version, or `absent`."""
    try:
        import tilelang
    except ImportError:
        return "absent"
    return str(tilelang.__version__)
