"""The RL stack's versions on one node, read without importing any of it: SGLang, Megatron, SLIME / Miles, NCCL.

Runs inside the per-node Ray task (rlcheck.probes.node.collect), so only the standard library loads: versions come from
package metadata (importlib.metadata) or, for NCCL outside a wheel, from the defines of the nccl.h header an NGC
image installs. '' means not read here, never "same as the others".
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from importlib import metadata, util
from pathlib import Path

FRAMEWORKS = ("slime", "miles")
NCCL_WHEELS = ("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11")
"""The wheels torch's CUDA builds depend on for NCCL, newest CUDA first."""
NCCL_HEADERS = (Path("/usr/include/nccl.h"), Path("/usr/local/include/nccl.h"))
"""Where NGC PyTorch images install the system NCCL's header."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StackVersions:
    sglang: str = ""
    """SGLang's distribution version ('' when not installed)."""
    megatron: str = ""
    """megatron-core's distribution version ('' when not installed or a source checkout without metadata)."""
    framework: str = ""
    """'slime 0.2.4', 'miles 0.1.0', 'slime (source checkout)' for one importable without metadata, or ''."""
    nccl: str = ""
    """NCCL version from its wheel or the system header, e.g. '2.27.7' ('' when neither is found)."""


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return ""


def _importable(name: str) -> bool:
    try:
        return util.find_spec(name) is not None  # finds, does not import (SLIME would pull in SGLang and Megatron)
    except (ImportError, ValueError):
        return False


def read_framework(importable: Callable[[str], bool] = _importable,
                   version: Callable[[str], str] = _version) -> str:
    for name in FRAMEWORKS:
        if importable(name):
            return f"{name} {version(name) or '(source checkout)'}"
    return ""


def read_nccl_header(path: Path) -> str:
    """'MAJOR.MINOR.PATCH' from nccl.h's NCCL_MAJOR / NCCL_MINOR / NCCL_PATCH defines ('' when unreadable)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    parts = [re.search(rf"^#define\s+NCCL_{part}\s+(\d+)", text, re.MULTILINE) for part in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts if m) if all(parts) else ""


def read_nccl(version: Callable[[str], str] = _version, headers: tuple[Path, ...] = NCCL_HEADERS) -> str:
    for wheel in NCCL_WHEELS:
        if found := version(wheel):
            return found
    return next((found for path in headers if (found := read_nccl_header(path))), "")


def read_stack() -> StackVersions:
    return StackVersions(sglang=_version("sglang"), megatron=_version("megatron-core"), framework=read_framework(),
                         nccl=read_nccl())
