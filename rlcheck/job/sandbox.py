"""Run a launch script where it cannot touch the host: the capture sandbox.

A user namespace (`unshare -rmn`) gives a fresh network namespace with only a down loopback (no network) and a
private mount table in which every mount is remounted read-only except the throwaway working directory and a
private /tmp (a tmpfs that vanishes with the namespace, so `mktemp /tmp/...` works). The
commands a launch would use to reach the cluster or the GPUs (FAKES) are shims on PATH that record their argv
and exit 0. The user's variables (--job-env) join the sandbox's own environment, which is otherwise
empty. A time limit ends it. Where user namespaces are not allowed the sandbox refuses to run the script.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

FAKES = ("ray", "python", "python3", "pkill", "nvidia-smi", "sleep", "aws", "kubectl")
TIMEOUT_S = 30.0
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OWN = ("PATH", "HOME", "LANG")  # what the sandbox sets for itself: a user value would unseat the fakes
_RECORDER = Path(__file__).with_name("recorder.py")
# Inside the namespaces: keep the work dir writable, make every other mount read-only, then run the command.
_PROLOGUE = r"""
set -e
# A private /tmp (tmpfs) so `mktemp` works. The capture's own directory and the script's tree may sit under /tmp:
# hold them open and bind them back over the tmpfs (-c: mount must not resolve the fd link to the now hidden path).
private_tmp=
exec 3<"$RLCHECK_BASE" 4<"${RLCHECK_KEEP:-/}"
if mount -t tmpfs -o mode=1777 tmpfs /tmp 2>/dev/null; then
  private_tmp=1
  mkdir -p "$RLCHECK_BASE"
  mount -c --bind /proc/self/fd/3 "$RLCHECK_BASE"
  if [ -n "$RLCHECK_KEEP" ]; then mkdir -p "$RLCHECK_KEEP" && mount -c --bind /proc/self/fd/4 "$RLCHECK_KEEP"; fi
else
  echo "rlcheck: no private /tmp here (tmpfs mount refused): /tmp is read-only for the script" >&2
fi
exec 3<&- 4<&-
mount --bind "$RLCHECK_WORK" "$RLCHECK_WORK"
cd "$RLCHECK_WORK"  # onto the writable bind mount, not the directory beneath it
awk '{print $5}' /proc/self/mountinfo | sort -u | while read -r m; do
  case "$m" in
    "$RLCHECK_WORK"|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) ;;
    /tmp) [ -n "$private_tmp" ] || mount -o remount,bind,ro "$m" 2>/dev/null || true ;;
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


def check_env(env: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The user's variables for the script (--job-env); ValueError names a bad name or one rlcheck needs itself."""
    for name, _ in env:
        if not _NAME.fullmatch(name):
            raise ValueError(f"--job-env {name!r}: a variable name is letters, digits and _, not starting with a digit")
        if name in _OWN or name.startswith("RLCHECK_"):
            raise ValueError(f"--job-env {name}: the sandbox sets it itself ({', '.join(_OWN)}, RLCHECK_*)")
    return tuple(env)


def _keep(command: Sequence[str]) -> str:
    """The top directory under /tmp of the last file the command names ('' when none is there): it stays in view,
    read-only, over the private /tmp, so the script and what it sources beside it are found."""
    for arg in reversed(command):
        parts = Path(arg).resolve().parts if arg.startswith("/") else ()
        if len(parts) > 3 and parts[1] == "tmp" and Path(arg).is_file():
            return str(Path(*parts[:3]))
    return ""


def run(command: Sequence[str], *, timeout_s: float = TIMEOUT_S, env: Sequence[tuple[str, str]] = ()) -> Run:
    """Run command (e.g. ['bash', '/abs/launch.sh']) in a fresh sandbox whose working directory is empty;
    env: the user's variables (--job-env) on top of the sandbox's own."""
    why = available()
    if why:
        raise SandboxUnavailable(f"{why}; capture where it is allowed (`rlcheck job capture SCRIPT -o job.json`) "
                                 f"and pass the JSON with --job")
    with tempfile.TemporaryDirectory(prefix="rlcheck-capture-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        _shims(Path(tmp) / "bin")
        record = work / ".rlcheck-calls.jsonl"
        own = {"PATH": f"{tmp}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "RLCHECK_WORK": str(work),
               "RLCHECK_BASE": tmp, "RLCHECK_KEEP": _keep(command), "RLCHECK_RECORD": str(record), "LANG": "C.UTF-8"}
        argv = ["unshare", "-rmn", "--propagation", "private", "sh", "-c", _PROLOGUE, "sandbox", *command]
        code, err, timed_out = _run_group(argv, cwd=work, env={**dict(check_env(env)), **own}, timeout_s=timeout_s)
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
