"""A warm interpreter: `python -m rlcheck.process.warm_server MODULE...` imports the modules once, then forks one
fresh child per request (rlcheck.process.warm is its client).

Each child is its own process, as `python -c CODE ARGV...` would be: a new session (so a deadline kills its whole
group), the environment, working directory, argv and stdin (/dev/null) of the request, its stdout and stderr in
the request's files, a fresh __main__, and its own exit status. What it shares with the server is only what the
server did before forking: importing the named modules in the server's environment. Nothing of the stack runs
in the server itself beyond those imports, so a child starts as a cold interpreter would after the same imports.

Protocol, one JSON object a line. Server -> client: {"ready": pid} once the imports are done, or {"error": text}
(then it exits); {"id": n, "pid": p} when a child started; {"id": n, "exit": status} when it ended (status < 0:
killed by that signal). Client -> server: {"id": n, "code": str, "argv": [...], "env": {...}, "cwd": str | null,
"stdout": path, "stderr": path}. The server exits when its stdin closes or its parent dies (a process that inherited
the pipe must not keep it alive), killing any child still running.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import sys
import threading
import traceback
import types
from typing import Any, NoReturn


def _send(fd: int, message: dict[str, Any]) -> None:
    os.write(fd, (json.dumps(message) + "\n").encode())


def _exit_status(code: object) -> int:
    """What `python -c` exits with for SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _run_child(request: dict[str, Any], proto_fd: int) -> NoReturn:
    status = 1
    try:
        os.setsid()
        os.close(proto_fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(request["env"])
        if request.get("cwd"):
            os.chdir(request["cwd"])
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], os.O_WRONLY | os.O_CREAT),
                                (2, request["stderr"], os.O_WRONLY | os.O_CREAT)):
            opened = os.open(path, flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the child's own stdio for its lifetime
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.argv = ["-c", *request["argv"]]
        sys.path[0] = ""  # as for `python -c`: the working directory first
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        try:
            exec(compile(request["code"], "<string>", "exec"), main.__dict__)  # noqa: S102 - the request's code
            status = 0
        except SystemExit as exc:
            status = _exit_status(exc.code)
        except BaseException:  # noqa: BLE001 - reported as python reports an uncaught exception
            traceback.print_exc()
            status = 1
        for thread in threading.enumerate():  # the interpreter waits for non-daemon threads before it exits
            if thread is not threading.main_thread() and not thread.daemon:
                thread.join()
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


def _reap(children: dict[int, int], proto_fd: int) -> None:
    while children:
        pid, raw = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        request_id = children.pop(pid, None)
        if request_id is not None:
            status = -os.WTERMSIG(raw) if os.WIFSIGNALED(raw) else os.WEXITSTATUS(raw)
            _send(proto_fd, {"id": request_id, "exit": status})


def _serve(proto_fd: int) -> None:
    children: dict[int, int] = {}
    pending = b""
    parent = os.getppid()
    try:
        while True:
            readable, _, _ = select.select([0], [], [], 0.05)
            _reap(children, proto_fd)
            if os.getppid() != parent:  # the client died while another process still holds our stdin open
                return
            if not readable:
                continue
            chunk = os.read(0, 65536)
            if not chunk:
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in filter(None, lines):
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _run_child(request, proto_fd)
                children[pid] = request["id"]
                _send(proto_fd, {"id": request["id"], "pid": pid})
    finally:
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def main(modules: list[str]) -> int:
    proto_fd = os.dup(1)
    os.dup2(2, 1)  # whatever the imports print goes to stderr, never into the protocol
    try:
        for name in modules:
            importlib.import_module(name)
    except BaseException as exc:  # noqa: BLE001 - any failure to import is reported, then the client goes cold
        _send(proto_fd, {"error": f"import of {name} failed: {type(exc).__name__}: {exc}"})
        return 3
    _send(proto_fd, {"ready": os.getpid()})
    _serve(proto_fd)
    # Nothing is left to finish (every message went out with os.write, the children are gone): the interpreter's own
    # teardown of torch, Megatron or SGLang took 7-10 s a server at the end of a preflight, after its summary.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
