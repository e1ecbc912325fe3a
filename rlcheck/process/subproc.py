"""Run a child process with a deadline, and say exactly how it ended."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int | None
    """None when it was killed at its deadline."""
    stdout: str
    stderr: str
    timed_out: bool

    def why(self) -> str:
        if self.timed_out:
            return "killed at its deadline"
        if self.returncode is not None and self.returncode < 0:
            return f"killed by signal {signal.Signals(-self.returncode).name}"
        return f"exit code {self.returncode}"

    def tail(self, lines: int = 15) -> str:
        return "\n".join((self.stdout + self.stderr).strip().splitlines()[-lines:])


def run(argv: Sequence[str], *, timeout_s: float, env: Mapping[str, str] | None = None,
        cwd: str | None = None, stdin: str | None = None) -> Completed:
    """Run argv (never through a shell) in its own process group; kill the whole group at the deadline."""
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True)
    try:
        out, err = proc.communicate(stdin, timeout=timeout_s)
        return Completed(argv=tuple(argv), returncode=proc.returncode, stdout=out, stderr=err, timed_out=False)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = _drain(proc)
        return Completed(argv=tuple(argv), returncode=None, stdout=out, stderr=err, timed_out=True)


DRAIN_S = 5.0
"""After the kill: how long to read what the killed group wrote. A process that left the group (setsid) and holds
the pipe open would otherwise keep the caller waiting as long as it lives."""


def _text(data: object) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data if isinstance(data, str) else ""


def _drain(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=DRAIN_S)
    except subprocess.TimeoutExpired as exc:  # a descendant outside the group holds the pipe: stop reading
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        note = (f"\n(rlcheck stopped reading: a process outside the killed group kept the output open past "
                f"{DRAIN_S:g} s)")
        return _text(exc.output), _text(exc.stderr) + note


def kill_group(proc: subprocess.Popen[str], grace_s: float = 3.0) -> None:
    """SIGTERM the process group, then SIGKILL it if it is still there after grace_s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


def python(code: str, *, timeout_s: float, pythonpath: Sequence[str] = (), env: Mapping[str, str] | None = None,
           cwd: str | None = None) -> Completed:
    """Run a Python snippet with this interpreter; pythonpath entries go first (side directories)."""
    merged = {**child_env(pythonpath), **(env or {})}
    return run([sys.executable, "-c", code], timeout_s=timeout_s, env=merged, cwd=cwd)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Served:
    answered: bool
    """The URL answered 200 before the deadline."""
    exited_early: bool
    """The server process ended on its own before answering."""
    elapsed_s: float
    output: Completed


def serve_and_probe(argv: Sequence[str], url: str, *, timeout_s: float, env: Mapping[str, str] | None = None) -> Served:
    """Start a server, wait (bounded) for url to answer 200, then stop it; always stops it."""
    from rlcheck.process.wait import wait_http_ok

    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env=dict(env) if env is not None else None,
                            start_new_session=True)
    try:
        result = wait_http_ok(url, timeout_s=timeout_s, alive=lambda: proc.poll() is None)
    finally:
        exited = proc.poll() is not None
        if not exited:
            kill_group(proc)
        out, err = proc.communicate(timeout=10)
    done = Completed(argv=tuple(argv), returncode=proc.returncode, stdout=out, stderr=err, timed_out=False)
    return Served(answered=result.ok, exited_early=exited and not result.ok, elapsed_s=result.elapsed_s, output=done)


def child_env(pythonpath: Sequence[str] = ()) -> dict[str, str]:
    """This process's environment with side directories first on PYTHONPATH."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([*pythonpath, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def start(argv: Sequence[str], env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """Start a background child in its own process group (stop it with kill_group)."""
    return subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env=dict(env) if env is not None else None,
                            start_new_session=True)


def concurrently(*calls: Callable[[], Any]) -> list[Any]:
    """Run independent calls (each waiting on its own child process) at the same time; their results in order."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(len(calls), 1)) as pool:
        futures = [pool.submit(call) for call in calls]
        return [future.result() for future in futures]
