"""Run a launch script where it cannot touch the host: the capture sandbox.

A user namespace (`unshare -rmn`) gives a fresh network namespace with only a down loopback (no network) and a
private mount table in which every mount is remounted read-only except the throwaway working directory. The
commands a launch would use to reach the cluster or the GPUs (FAKES) are shims on PATH that record their argv
and exit 0. A time limit ends it. Where user namespaces are not allowed the sandbox refuses to run the script.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

FAKES = ("ray", "python", "python3", "pkill", "nvidia-smi", "sleep", "aws", "kubectl")
TIMEOUT_S = 30.0
_RECORDER = Path(__file__).with_name("recorder.py")
# Inside the namespaces: keep the work dir writable, make every other mount read-only, then run the command.
_PROLOGUE = r"""
set -e
mount --bind "$RLCHECK_WORK" "$RLCHECK_WORK"
cd "$RLCHECK_WORK"  # onto the writable bind mount, not the directory beneath it
awk '{print $5}' /proc/self/mountinfo | sort -u | while read -r m; do
  case "$m" in
    "$RLCHECK_WORK"|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) ;;
    *) mount -o remount,bind,ro "$m" 2>/dev/null || true ;;
  esac
done
set +e
exec "$@"
"""


class SandboxUnavailable(RuntimeError):
    """User namespaces are not permitted here: capture on another machine."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Run:
    """What a command did in the sandbox."""

    returncode: int
    """Exit status; -1 when the time limit ended it."""
    stderr_tail: tuple[str, ...]
    """The last lines of its output (stdout and stderr together)."""
    calls: tuple[tuple[str, tuple[str, ...]], ...]
    """(fake command, argv) in the order they ran."""
    timed_out: bool = False


def available() -> str:
    """'' when the sandbox can be made here, else why not."""
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(["unshare", "-rmn", "true"], capture_output=True, text=True, timeout=10, check=False)
    if probe.returncode:
        return f"user namespaces are not permitted here (unshare -rmn: {probe.stderr.strip() or probe.returncode})"
    return ""


def _shims(bin_dir: Path) -> None:
    bin_dir.mkdir()
    for name in FAKES:
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{_RECORDER}" {name} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)


def _run_group(argv: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float) -> tuple[int, str, bool]:
    """(exit code, stderr, timed out); on time out the whole process group goes, not only the first child."""
    # stdout joins stderr: launch scripts often `echo` why they stop before `exit 1`.
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        err, _ = proc.communicate(timeout=timeout_s)
        return proc.returncode, err, False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        err, _ = proc.communicate()
        return -1, err or "", True


def run(command: Sequence[str], *, timeout_s: float = TIMEOUT_S) -> Run:
    """Run command (e.g. ['bash', '/abs/launch.sh']) in a fresh sandbox whose working directory is empty."""
    why = available()
    if why:
        raise SandboxUnavailable(f"{why}; capture where it is allowed (`rlcheck job capture SCRIPT -o job.json`) "
                                 f"and pass the JSON with --job")
    with tempfile.TemporaryDirectory(prefix="rlcheck-capture-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        _shims(Path(tmp) / "bin")
        record = work / ".rlcheck-calls.jsonl"
        env = {"PATH": f"{tmp}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "RLCHECK_WORK": str(work),
               "RLCHECK_RECORD": str(record), "LANG": "C.UTF-8"}
        argv = ["unshare", "-rmn", "--propagation", "private", "sh", "-c", _PROLOGUE, "sandbox", *command]
        code, err, timed_out = _run_group(argv, cwd=work, env=env, timeout_s=timeout_s)
        lines = record.read_text(encoding="utf-8").splitlines() if record.is_file() else []
    calls = []
    for line in lines:
        try:
            doc = json.loads(line)
            calls.append((str(doc["cmd"]), tuple(map(str, doc["argv"]))))
        except (ValueError, KeyError, TypeError):  # the script wrote into the record itself: not a call
            continue
    # Lines capped: `set -x` echoes whole arrays, and the reason is usually in the last few.
    return Run(returncode=code, stderr_tail=tuple(line[:300] for line in err.splitlines()[-8:]), calls=tuple(calls),
               timed_out=timed_out)
