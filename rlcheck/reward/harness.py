"""Start a reward server as a child process on loopback, wait for it, and always stop it by its PID.

Used by the tests, the remote-rm test case's CPU layer and benchmarks/reward_load (which also
starts the baseline server through it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rlcheck.process.subproc import child_env
from rlcheck.process.wait import wait_http_ok

REPO_ROOT = Path(__file__).resolve().parents[2]


def service_argv(port: int, *options: str) -> list[str]:
    """`python -m rlcheck.reward` on 127.0.0.1:port with extra options."""
    return [sys.executable, "-m", "rlcheck.reward", "--host", "127.0.0.1", "--port", str(port), *options]


@dataclass(frozen=True, kw_only=True, slots=True)
class Stopped:
    by_sigterm: bool
    """It exited within the grace period after one SIGTERM to its PID (what Kubernetes sends)."""
    seconds: float
    returncode: int | None


@dataclass(kw_only=True, slots=True)
class ServerProcess:
    proc: subprocess.Popen[bytes]
    base_url: str
    log_path: Path
    stopped: Stopped | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError as exc:
            return f"(no log: {exc})"

    def stop(self, grace_s: float = 10.0) -> Stopped:
        """SIGTERM the server's PID; SIGKILL its process group if it is not gone within grace_s."""
        if self.stopped is not None:
            return self.stopped
        started = time.monotonic()
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace_s)
            by_sigterm = True
        except subprocess.TimeoutExpired:
            by_sigterm = False
        seconds = time.monotonic() - started
        try:  # whatever is left of its group (helpers, or the server itself): it started a session of its own
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait(timeout=10)
        self.stopped = Stopped(by_sigterm=by_sigterm, seconds=seconds, returncode=self.proc.returncode)
        return self.stopped


@contextmanager
def running_server(argv: Sequence[str], *, port: int, log_path: Path, ready_path: str = "/health",
                   ready_timeout_s: float = 60.0, env: Mapping[str, str] | None = None,
                   cwd: Path = REPO_ROOT) -> Iterator[ServerProcess]:
    """Run argv (its own session, output to log_path) until ready_path answers 200; stop it on exit."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    environ = {**child_env([str(REPO_ROOT)]), **(env or {})}
    with log_path.open("wb") as log:
        proc = subprocess.Popen(list(argv), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=environ, cwd=cwd, start_new_session=True)
    server = ServerProcess(proc=proc, base_url=f"http://127.0.0.1:{port}", log_path=log_path)
    try:
        waited = wait_http_ok(server.base_url + ready_path, timeout_s=ready_timeout_s,
                              alive=lambda: proc.poll() is None)
        if not waited.ok:
            raise RuntimeError(f"{' '.join(argv)}: {ready_path} did not answer 200 within {ready_timeout_s} s "
                               f"({waited.last_error}); log {log_path}:\n{server.log_tail()}")
        yield server
    finally:
        server.stop()
