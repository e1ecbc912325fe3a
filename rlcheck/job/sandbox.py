"""Run a launch script where it cannot touch the host: the capture sandbox.

`unshare` gives the script fresh user, mount, PID, network, IPC and UTS namespaces: a network with only a down
loopback (no host socket, no abstract unix socket), its own process tree (it cannot see or signal a host process;
when the script exits or the time limit ends it, PID 1 of the namespace dies and the kernel ends every process
in it, `setsid` children included), and the mount table rlcheck.job.confine sets up (secrets hidden, private /tmp,
/dev/shm and HOME, everything else read-only, no capability left). The script starts in the directory it was
launched from when that holds it (SLIME users run `bash scripts/run-x.sh` from the repo root), else its repo's
root (the nearest parent with .git), else its own directory: relative `source ./scripts/models/x.sh` resolves.
The commands a launch would use to reach the cluster, the GPUs or the network (FAKES: a script waiting `until curl
-sf http://teacher/health_generate` goes on at once, as does one waiting `until nc -z HEAD 6379`: the port is
"open"; an `hf download` downloads nothing, a `pip install` installs nothing) are shims on PATH that
record their argv and exit 0. The user's variables (--job-env) join the sandbox's own environment, which is
otherwise empty.
Output is read up to a cap (its tail kept), the call record up to a cap, both decoded with replacement.

Where the namespaces (or setpriv, which drops the capabilities) are not available, nothing runs: available() says
why, scripts are not captured (capture elsewhere and pass the JSON) and an entrypoint is split as POSIX sh would.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from rlcheck.job import bounded, confine, shown

FAKES = ("ray", "python", "python3", "pkill", "nvidia-smi", "sleep", "aws", "kubectl", "curl", "wget", "hf",
         "huggingface-cli", "nc", "pip", "pip3")
TIMEOUT_S = 30.0
REAP_TIMEOUT_S = 10.0
"""How long a command whose output closed may take to exit before it is killed (it closed its output and lives on)."""
FILE_SIZE_CAP_BYTES = 256 << 20
"""RLIMIT_FSIZE of every process in the sandbox: no file it writes grows past this (a sparse record included)."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OWN = ("PATH", "HOME", "LANG", "BASH_ENV")  # what the sandbox sets for itself: a user value would unseat the fakes
_RECORDER = Path(__file__).resolve().with_name("recorder.py")
_UNSHARE = ("unshare", "--user", "--map-root-user", "--mount", "--pid", "--net", "--ipc", "--uts", "--fork",
            "--kill-child", "--mount-proc", "--propagation", "private")
# Sourced by bash before the script (BASH_ENV): the top shell (PID 1) records at exit which variables were set and
# not empty (`MASTER_ADDR=${MASTER_ADDR:-}` sets it empty), so capture can name the ones the script read but nobody
# gave it.
_BASH_ENV = ('[ "$$" = 1 ] && trap \'__rc=$?; { set +x; } 2>/dev/null; "$RLCHECK_PY" "$RLCHECK_RECORDER" rlcheck-set'
             ' $(for __v in $(compgen -v); do [ -n "${!__v:-}" ] && echo "$__v"; done); exit $__rc\' EXIT\n')


class SandboxUnavailable(RuntimeError):
    """The namespaces or the capability drop are not permitted here: capture on another machine."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Run:
    """What a command did in the sandbox."""

    returncode: int
    """Exit status; -1 when the time limit or the output cap ended it."""
    stderr_tail: tuple[str, ...]
    """The last lines of its output (stdout and stderr together)."""
    calls: tuple[tuple[str, tuple[str, ...]], ...]
    """(fake command, argv) in the order they ran."""
    timed_out: bool = False
    substituted: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Calls whose output the script read (`$(python3 ...)`, a pipe): the stand-in printed nothing there. A pure
    helper run for real (cmd `helper`, see rlcheck.job.recorder) is not among them."""
    set_at_exit: tuple[str, ...] | None = None
    """Variables set in the script's shell when it exited (bash scripts only); None when not seen."""
    limits: tuple[str, ...] = ()
    """Bounds the run hit: output over its cap, a call record over its cap."""


@functools.cache
def available() -> str:
    """'' when the sandbox can be made here, else why not (probed once per process)."""
    for tool in ("unshare", "setpriv", "mount"):
        if shutil.which(tool) is None:
            return f"{tool} (util-linux) is not installed"
    if confine.pivot_root() is None:
        return "pivot_root (util-linux) is not installed"
    probe = subprocess.run([*_UNSHARE, *confine.SETPRIV, "true"], capture_output=True, text=True, timeout=10,
                           check=False)
    if probe.returncode:
        return (f"user, mount, PID, network and IPC namespaces are not permitted here "
                f"({' '.join(_UNSHARE[:-2])}: {probe.stderr.strip() or probe.returncode})")
    return ""


def interpreter() -> str:
    """rlcheck's interpreter by a path the sandbox shows: its directory's links resolved (a venv reached through a
    linked folder under the hidden /tmp would not be there), its own name kept (a venv's python is a link to the base
    interpreter, and only its venv path finds the venv's packages)."""
    return os.path.join(os.path.realpath(os.path.dirname(sys.executable)), os.path.basename(sys.executable))


def _shims(bin_dir: Path) -> None:
    bin_dir.mkdir()
    for name in FAKES:
        shim = bin_dir / name
        # -I -S: the recorder needs the standard library only, and starts once per call (a wait loop: hundreds)
        shim.write_text(f'#!/bin/sh\nexec "{interpreter()}" -I -S "{_RECORDER}" {name} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    (bin_dir / "bash_env").write_text(_BASH_ENV, encoding="utf-8")


def check_env(env: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The user's variables for the script (--job-env); ValueError names a bad name or one rlcheck needs itself."""
    for name, _ in env:
        if not _NAME.fullmatch(name):
            raise ValueError(f"--job-env {name!r}: a variable name is letters, digits and _, not starting with a digit")
        if name in _OWN or name.startswith("RLCHECK_"):
            raise ValueError(f"--job-env {name}: the sandbox sets it itself ({', '.join(_OWN)}, RLCHECK_*)")
    return tuple(env)


def check_args(args: Sequence[str]) -> tuple[str, ...]:
    """The script's own arguments; ValueError names one a command line cannot carry (a NUL byte)."""
    for arg in args:
        if not isinstance(arg, str) or "\0" in arg:
            raise ValueError(f"script argument {arg!r}: a command-line argument is a string without NUL bytes")
    return tuple(args)


def _own_files() -> tuple[str, ...]:
    """What the fakes need: rlcheck's interpreter (and its prefixes) and its package."""
    exe = os.path.realpath(sys.executable)
    return (os.path.dirname(sys.executable), os.path.dirname(exe), sys.prefix, sys.base_prefix, sys.exec_prefix,
            str(Path(__file__).resolve().parents[1]))


def _limit_files() -> None:  # runs in the child before unshare: every process of the sandbox inherits it
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_CAP_BYTES, FILE_SIZE_CAP_BYTES))


def _run(argv: list[str], env: dict[str, str], timeout_s: float) -> tuple[int, bounded.Output, bool]:
    """(exit code, output, ended by rlcheck). On the deadline or the output cap unshare is killed, and with it
    (--kill-child) PID 1 of the namespace, so every process in it."""
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, preexec_fn=_limit_files)
    assert proc.stdout is not None
    with proc.stdout:
        out = bounded.pump(proc.stdout, deadline=time.monotonic() + timeout_s)
        ended = not out.eof
        if ended:
            _kill(proc)
    try:
        code = proc.wait(timeout=REAP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _kill(proc)
        code = proc.wait()
    return (-1 if ended else code), out, ended


def _kill(proc: subprocess.Popen[bytes]) -> None:
    for kill in (lambda: os.killpg(proc.pid, signal.SIGKILL), proc.kill):
        try:
            kill()
        except ProcessLookupError:
            pass


def _named_files(args: Sequence[str]) -> list[str]:
    """The files a command names by absolute path, and their directories: kept in view (read-only)."""
    files = [str(Path(a).resolve()) for a in args if a.startswith("/") and Path(a).is_file()]
    return [*files, *(str(Path(f).parent) for f in files)]


def start_dir(script: str | None, cwd: str) -> str:
    """Where a script starts: the caller's directory when the script lies in it, else the nearest parent of the
    script holding .git (its repo's root), else the script's own directory."""
    if script is None:
        return cwd
    here = Path(script).resolve().parent
    if Path(cwd) in (here, *here.parents):
        return cwd
    return str(next((p for p in (here, *here.parents) if (p / ".git").exists() and p != Path("/")), here))


def run(command: Sequence[str], *, timeout_s: float = TIMEOUT_S, env: Sequence[tuple[str, str]] = (),
        script: str | None = None, checkout: tuple[str, str] | None = None, args: Sequence[str] = (),
        show: Sequence[str] = ()) -> Run:
    """Run command (e.g. ['bash', '/abs/launch.sh']) in a fresh sandbox; script: the launch file, whose directory
    (and the start directory, see start_dir) the script sees read-only; without one it starts in its empty HOME.
    env: the user's variables (--job-env) on top of the sandbox's own. checkout: (the framework tree the script lives
    in, the path the framework's image keeps it at), shown there read-only (rlcheck.job.confine). args: the script's
    own arguments (`rlcheck job capture SCRIPT -- ARG...`), appended to command; a file they name is not brought
    into view (only the command's and the script's are). show: host folders shown at their own paths, writable
    through a private overlay, credential places in them hidden (rlcheck.job.shown; ValueError names one refused)."""
    why = available()
    if why:
        raise SandboxUnavailable(f"{why}; capture where it is allowed (`rlcheck job capture SCRIPT -o job.json`) "
                                 f"and pass the JSON with --job")
    with tempfile.TemporaryDirectory(prefix="rlcheck-capture-") as tmp:
        base = Path(tmp)
        for sub in ("home", "rec", "dev", "ovl", "root"):
            (base / sub).mkdir()
        (base / "empty").write_text("", encoding="utf-8")
        _shims(base / "bin")
        record = base / "rec" / "calls.jsonl"
        cwd = start_dir(script, os.getcwd()) if script else str(base / "home")
        keep = (*_own_files(), *_named_files([*command, *([script] if script else [])]),
                *([checkout[0]] if checkout else []))
        homes = confine.caller_homes()
        folders = sorted(shown.check(show))  # outermost first: one inside another is mounted on top of it
        if any(confine._under(os.path.realpath(tmp), f) for f in folders):
            raise ValueError(f"--job-show {next(f for f in folders if confine._under(os.path.realpath(tmp), f))}: "
                             f"holds rlcheck's own folder for the run ({tmp}); {shown.ALLOWED}")
        layout = confine.Layout(base=tmp, home=str(base / "home"), record_dir=str(base / "rec"), cwd=cwd, keep=keep,
                                homes=homes, checkout=checkout,
                                shown=tuple((f, shown.secrets_inside(f, homes)) for f in folders))
        own = {"PATH": f"{tmp}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": str(base / "home"), "LANG": "C.UTF-8",
               "RLCHECK_RECORD": str(record), "RLCHECK_RECORD_CAP": str(bounded.RECORD_CAP_BYTES),
               "RLCHECK_BASH_ENV": f"{tmp}/bin/bash_env", "RLCHECK_PY": interpreter(),
               "RLCHECK_RECORDER": str(_RECORDER),
               # where the caller's shell finds its programs: the image's own pip answers read-only package queries
               "RLCHECK_HOST_PATH": os.environ.get("PATH", "")}
        prologue = confine.prologue(layout)
        argv = [*_UNSHARE, "bash", "--norc", "--noprofile", "-c", prologue, "sandbox", *command, *check_args(args)]
        code, out, ended = _run(argv, {**dict(check_env(env)), **own}, timeout_s)
        text, over = bounded.read_capped(str(record))
    return _result(code, out, ended, text, over)


def _result(code: int, out: bounded.Output, ended: bool, text: str, record_over: bool) -> Run:
    calls, substituted = [], []
    set_at_exit: tuple[str, ...] | None = None
    for line in text.splitlines():
        try:
            doc = json.loads(line)
            call = (str(doc["cmd"]), tuple(map(str, doc["argv"])))
        except (ValueError, KeyError, TypeError):  # the script wrote into the record itself: not a call
            continue
        if call[0] == "rlcheck-set":
            set_at_exit = call[1]
            continue
        calls.append(call)
        if isinstance(doc, dict) and doc.get("stdout") == "substitution" and call[0] != "helper":
            substituted.append(call)
    limits = [f"output over {bounded.OUTPUT_CAP_BYTES >> 20} MiB: the sandbox was ended"] if out.over_cap else []
    if record_over:
        limits.append(f"call record over {bounded.RECORD_CAP_BYTES >> 20} MiB: read its start only")
    # Lines capped: `set -x` echoes whole arrays, and the reason is usually in the last few.
    return Run(returncode=code, stderr_tail=tuple(line[:300] for line in out.tail.splitlines()[-8:]),
               calls=tuple(calls), timed_out=ended and not out.over_cap, substituted=tuple(substituted),
               set_at_exit=set_at_exit, limits=tuple(limits))
