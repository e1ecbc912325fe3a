"""One warm interpreter per package set: the heavy imports once, then a fresh forked child per run.

`python(code, argv, preload=..., env=...)` runs code as `python -c code argv...` would, in its own child process,
but forked from a server (rlcheck.process.warm_server) that imported `preload` once in `env`. The servers are
keyed by (preload, env minus the `runtime` names): variables that only the code reads at run time (WORLD_SIZE,
MASTER_PORT...) may differ between runs of one server; anything else gets its own server, so whatever a package
reads from the environment at import time is what a cold child would have read. A server that cannot import its
modules is never used: the run falls back to a cold `python -c`, which then shows the real import error.

CUDA cannot start in a forked child once the parent counted devices (torch poisons the fork, and importing
Megatron does count them), so a run that reaches CUDA initialisation would fail with torch's "Cannot
re-initialize CUDA in forked subprocess" instead of what a cold interpreter meets (no driver, or a GPU). Such a
run is repeated in a cold `python -c` and that result is the one returned; callers whose run must reach CUDA
pass cold=True and skip the fork. So is a run whose code finds the server unfit for it (it prints UNFIT on stderr and
exits: the server imported something the run must not see); cold_argv names what the cold run is, where it is not
`python -c code argv...`.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rlcheck.process import subproc

START_TIMEOUT_S = 300.0
FORK_POISONED = "Cannot re-initialize CUDA in forked subprocess"
# Set by pytest for each test and phase: never read at import time, and it must not give every test its own server.
ALWAYS_RUNTIME = ("PYTEST_CURRENT_TEST",)
# Set in this process by a package it imports, to the value an absent one means: keyed as if absent. Importing Ray
# sets RAY_CLIENT_MODE=0 (and Ray reads an absent one as "0"), so without this a server prewarmed before the first
# in-process `import ray` would be started a second time, cold, by the first run after it.
SAME_AS_UNSET = {"RAY_CLIENT_MODE": "0"}
UNFIT = "rlcheck.process.warm: unfit for this run"
"""What a run's code prints on stderr before it exits when the warm interpreter cannot stand in for a cold one."""


class Server:
    """A running warm_server and the reader that hands its answers to the runs waiting for them."""

    def __init__(self, preload: tuple[str, ...], env: Mapping[str, str]) -> None:
        self.preload = preload
        self.folder = Path(tempfile.mkdtemp(prefix="rlcheck-warm-"))
        self._stderr = (self.folder / "server.stderr").open("w")
        self.proc = subprocess.Popen([sys.executable, "-m", "rlcheck.process.warm_server", *preload],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                     text=True, env=dict(env), start_new_session=True)
        self._answers: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._started = threading.Event()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.ready: bool | None = None
        """None until the imports are done; False when they failed or the server ended."""
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if "id" in message:
                with self._lock:
                    answers = self._answers.get(message["id"])
                if answers is not None:
                    answers.put(message)
            elif self.ready is None:
                self.ready = "ready" in message
                self._started.set()
        self.ready = bool(self.ready)  # ended: a server that never answered is not ready
        self._started.set()
        with self._lock:
            for answers in self._answers.values():
                answers.put({"exit": None})

    def wait_ready(self, timeout_s: float) -> bool:
        """Wait (bounded) until the imports are done; False when they failed, the server ended or time ran out."""
        self._started.wait(timeout_s)
        return bool(self.ready)

    def run(self, code: str, argv: Sequence[str], *, env: Mapping[str, str], timeout_s: float,
            cwd: str | None) -> subproc.Completed:
        request_id = next(self._ids)
        out, err = self.folder / f"{request_id}.out", self.folder / f"{request_id}.err"
        answers: queue.Queue[dict[str, Any]] = queue.Queue()
        with self._lock:
            self._answers[request_id] = answers
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"id": request_id, "code": code, "argv": list(argv), "env": dict(env),
                                              "cwd": cwd, "stdout": str(out), "stderr": str(err)}) + "\n")
            self.proc.stdin.flush()
        started = answers.get(timeout=30)  # the server answers at once: it only forks
        ended: dict[str, Any] | None = started if "exit" in started else None
        timed_out = False
        if ended is None:
            try:
                ended = answers.get(timeout=timeout_s)
            except queue.Empty:
                timed_out = True
                ended = _kill(started["pid"], answers)
        with self._lock:
            self._answers.pop(request_id, None)
        text = [p.read_text(errors="replace") if p.exists() else "" for p in (out, err)]
        for p in (out, err):
            p.unlink(missing_ok=True)
        shown = ("rlcheck.process.warm", *self.preload, "--", sys.executable, "-c", code, *argv)
        return subproc.Completed(argv=shown, returncode=None if timed_out else ended.get("exit"),
                                 stdout=text[0], stderr=text[1], timed_out=timed_out)

    def stop(self) -> None:
        if self.proc.poll() is None and self.ready is None:  # still importing: it reads stdin only when done
            subproc.kill_group(self.proc)
        elif self.proc.poll() is None:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                subproc.kill_group(self.proc)
        self._stderr.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _kill(pid: int, answers: queue.Queue[dict[str, Any]]) -> dict[str, Any]:
    """SIGTERM a run's process group (the child made its own session), SIGKILL it if it has not ended in 3 s."""
    for sig, grace_s in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 30.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            pass
        try:
            return answers.get(timeout=grace_s)
        except queue.Empty:
            continue
    return {"exit": None}


_SERVERS: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], Server] = {}
_SERVERS_LOCK = threading.Lock()


def _server(preload: Sequence[str], env: Mapping[str, str], runtime: Iterable[str]) -> Server:
    names = {*runtime, *ALWAYS_RUNTIME}
    base = {k: v for k, v in env.items() if k not in names and SAME_AS_UNSET.get(k) != v}
    key = (tuple(preload), tuple(sorted(base.items())))
    with _SERVERS_LOCK:
        if key not in _SERVERS:  # one that failed to import stays: its runs go cold, it is not tried again
            _SERVERS[key] = Server(tuple(preload), base)
        return _SERVERS[key]


def prewarm(preload: Sequence[str], env: Mapping[str, str], runtime: Iterable[str] = ()) -> Server:
    """Start the server for this package set now (it imports in the background), so a later run finds it warm;
    wait_ready on what it returns waits for those imports."""
    return _server(preload, env, runtime)


def python(code: str, argv: Sequence[str] = (), *, preload: Sequence[str], env: Mapping[str, str],
           runtime: Iterable[str] = (), timeout_s: float, cwd: str | None = None,
           cold: bool = False, cold_argv: Sequence[str] | None = None) -> subproc.Completed:
    """`python -c code argv...` in env, forked from the warm server of (preload, env minus runtime), or cold: then
    cold_argv where given (the same run as a fresh interpreter starts it), else `python -c code argv...`."""
    if not cold:
        server = _server(preload, env, runtime)
        if server.wait_ready(START_TIMEOUT_S):  # the imports a cold child would do, outside its own deadline
            done = server.run(code, argv, env=env, timeout_s=timeout_s, cwd=cwd)
            if FORK_POISONED not in done.stderr and UNFIT not in done.stderr:
                return done
    fresh = list(cold_argv) if cold_argv is not None else [sys.executable, "-c", code, *argv]
    return subproc.run(fresh, timeout_s=timeout_s, env=env, cwd=cwd)


@atexit.register
def stop_all() -> None:
    """Stop every warm server (each also ends by itself when this process goes: its stdin closes)."""
    with _SERVERS_LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for server in servers:
        server.stop()
