"""Test building blocks for argv across shells and Ray: a model file, a stand-in train.py that prints argv."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

MARK = "RLCHECK_ARGV "
PRINTER = f"import json, sys\nprint({MARK!r} + json.dumps(sys.argv[1:]), flush=True)\n"


def system_sh() -> str:
    """What /bin/sh is on this machine: 'dash', 'bash', ... (what Ray's job supervisor runs)."""
    return Path(os.path.realpath("/bin/sh")).name


def write_model_file(folder: Path, model_args: list[str]) -> Path:
    """A SLIME-style model file: MODEL_ARGS as a bash array (each token quoted, as upstream files do)."""
    path = folder / "model.sh"
    path.write_text(f"MODEL_ARGS=({' '.join(shlex.quote(a) for a in model_args)})\n")
    return path


def write_printer(folder: Path) -> Path:
    """A stand-in for train.py that prints the argv it received."""
    path = folder / "print_argv.py"
    path.write_text(PRINTER)
    return path


def write_launcher(folder: Path, model_file: Path, printer: Path) -> Path:
    """The fix: source the model file and expand the array in the same bash, argv after `--`."""
    path = folder / "launch.sh"
    path.write_text(
        "#!/bin/bash\nset -euo pipefail\n"
        f"source {shlex.quote(str(model_file))}\n"
        f'exec {shlex.quote(sys.executable)} {shlex.quote(str(printer))} "${{MODEL_ARGS[@]}}" "$@"\n'
    )
    path.chmod(0o755)
    return path


def printed_argv(output: str) -> list[str] | None:
    """The argv the printer saw, or None when it never ran."""
    for line in output.splitlines():
        if MARK in line:
            return list(json.loads(line.split(MARK, 1)[1]))
    return None


def unsafe_bash_c(model_file: Path, printer: Path, *, quote_expansion: bool = False) -> list[str]:
    """The argv a user hands to `ray job submit --`: bash -c with the array expanded in the string."""
    expansion = '"${MODEL_ARGS[@]}"' if quote_expansion else "${MODEL_ARGS[@]}"
    script = f"source {model_file}; {sys.executable} {printer} {expansion}"
    return ["bash", "-c", script]


def other_shell_wrapper() -> tuple[list[str], str] | None:
    """An `unshare -m` prefix under which /bin/sh is the other shell (bash where it is dash, and back), and that
    shell's name; None where unshare -m (root) or the other shell is missing."""
    other = {"dash": shutil.which("bash"), "bash": shutil.which("dash")}.get(system_sh())
    if not other or not shutil.which("unshare"):
        return None
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        return None
    mount = f'mount --bind {other} "$(readlink -f /bin/sh)" && exec "$@"'
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", mount, "sh"], Path(other).name
