"""The reward server's start-and-stop harness as tables (issue 33): the command it runs, the log tail it shows, how a
server is stopped (one SIGTERM to its PID, then its whole group killed) and what it says when a server never gets
ready.

The remote-rm test case and the reward benchmarks start the service through it: a stop that leaves a server behind
holds its port for the next run, and a start failure must say the command, the wait, why and the log's last lines.
The children here are the smallest that show each rule (a `sleep`, a Python that ignores SIGTERM, a tiny HTTP server).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from rlcheck.process.wait import free_loopback_port
from rlcheck.reward.harness import REPO_ROOT, ServerProcess, Stopped, running_server, service_argv


def test_rules_reward_harness_service_argv() -> None:
    assert service_argv(8123) == [sys.executable, "-m", "rlcheck.reward", "--host", "127.0.0.1", "--port", "8123"]
    assert service_argv(9, "--backend", "boxed") == [sys.executable, "-m", "rlcheck.reward", "--host", "127.0.0.1",
                                                     "--port", "9", "--backend", "boxed"]
    assert REPO_ROOT == Path(__file__).resolve().parents[1]


def _server(tmp_path: Path, argv: list[str]) -> ServerProcess:
    proc = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return ServerProcess(proc=proc, base_url="http://127.0.0.1:1", log_path=tmp_path / "server.log")


LOG_TAILS = [
    # log text, lines asked for (None: the default), the tail
    ("".join(f"line {i}\n" for i in range(30)), None, "\n".join(f"line {i}" for i in range(10, 30))),
    ("".join(f"line {i}\n" for i in range(30)), 3, "line 27\nline 28\nline 29"),
    ("a\nb", 5, "a\nb"),
    ("", None, ""),
    (b"ok \xff\n".decode("latin-1"), None, "ok \u00ff"),
]


@pytest.mark.parametrize(("text", "lines", "tail"), LOG_TAILS)
def test_rules_reward_harness_log_tail(tmp_path: Path, text: str, lines: int | None, tail: str) -> None:
    server = ServerProcess(proc=None, base_url="", log_path=tmp_path / "server.log")  # type: ignore[arg-type]
    server.log_path.write_text(text, encoding="utf-8")
    assert (server.log_tail() if lines is None else server.log_tail(lines)) == tail


def test_rules_reward_harness_log_tail_of_bytes_that_are_no_text(tmp_path: Path) -> None:
    server = ServerProcess(proc=None, base_url="", log_path=tmp_path / "server.log")  # type: ignore[arg-type]
    server.log_path.write_bytes(b"bad \xff\xfe\n")
    assert server.log_tail() == "bad \ufffd\ufffd"


def test_rules_reward_harness_log_tail_without_a_log(tmp_path: Path) -> None:
    server = ServerProcess(proc=None, base_url="", log_path=tmp_path / "none.log")  # type: ignore[arg-type]
    assert server.log_tail() == f"(no log: [Errno 2] No such file or directory: '{tmp_path / 'none.log'}')"


def test_rules_reward_harness_stop_by_sigterm(tmp_path: Path) -> None:
    server = _server(tmp_path, ["sleep", "30"])
    assert server.pid == server.proc.pid
    before = time.monotonic()
    stopped = server.stop()
    assert (stopped.by_sigterm, stopped.returncode) == (True, -signal.SIGTERM)
    assert 0.0 <= stopped.seconds <= time.monotonic() - before  # from the SIGTERM to its end, within stop()
    assert server.stop() is stopped  # stopped once: the same answer, nothing sent again


def _gone(pid: int) -> bool:
    """The process has exited (no longer listed, or a zombie waiting for init), within 5 s."""
    for _ in range(500):
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.01)
    return False


def test_rules_reward_harness_stop_kills_what_ignores_sigterm(tmp_path: Path) -> None:
    # the child ignores SIGTERM and leaves a grandchild in its group: both must be gone after stop()
    code = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "p = subprocess.Popen(['sleep', '30']); print(p.pid, flush=True); time.sleep(30)")
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    grandchild = int(proc.stdout.readline())
    server = ServerProcess(proc=proc, base_url="", log_path=tmp_path / "server.log")
    before = time.monotonic()
    stopped = server.stop(grace_s=0.3)
    assert (stopped.by_sigterm, stopped.returncode) == (False, -signal.SIGKILL)
    assert 0.3 <= stopped.seconds <= time.monotonic() - before  # the whole grace, not the kill after it
    assert _gone(grandchild)  # killed with its group
    proc.stdout.close()


def test_rules_reward_harness_stop_after_the_server_exited(tmp_path: Path) -> None:
    server = _server(tmp_path, ["true"])
    server.proc.wait()
    stopped = server.stop()
    assert stopped == Stopped(by_sigterm=True, seconds=stopped.seconds, returncode=0)


def test_rules_reward_harness_server_that_never_gets_ready(tmp_path: Path) -> None:
    port = free_loopback_port()
    log_path = tmp_path / "logs" / "server.log"
    argv = [sys.executable, "-c", "import os, sys; print('starting in', os.getcwd()); sys.exit(3)"]
    with pytest.raises(RuntimeError) as raised, running_server(argv, port=port, log_path=log_path):
        pytest.fail("never ready: no body runs")
    assert str(raised.value) == (
        f"{' '.join(argv)}: /health did not answer 200 within 60.0 s ([Errno 111] Connection refused; the server "
        f"process exited); log {log_path}:\nstarting in {REPO_ROOT}")


_HTTP = ("import os, sys, http.server as h; open('seen', 'w').write(os.environ['MARK'] + '|' + "
         "os.environ['PYTHONPATH'].split(os.pathsep)[0]); "
         "h.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), h.SimpleHTTPRequestHandler).serve_forever()")


def test_rules_reward_harness_running_server(tmp_path: Path) -> None:
    port = free_loopback_port()
    log_path = tmp_path / "logs" / "server.log"
    with running_server([sys.executable, "-c", _HTTP, str(port)], port=port, log_path=log_path, ready_path="/seen",
                        ready_timeout_s=30.0, env={"MARK": "m"}, cwd=tmp_path) as server:
        assert server.base_url == f"http://127.0.0.1:{port}"
        assert server.proc.poll() is None and server.stopped is None
        with urllib.request.urlopen(server.base_url + "/seen", timeout=10) as reply:
            assert reply.read().decode() == f"m|{REPO_ROOT}"  # its env, the checkout first on its path, its cwd
    assert server.stopped is not None
    assert (server.stopped.by_sigterm, server.stopped.returncode) == (True, -signal.SIGTERM)
    assert log_path.is_file()


class _Waits:
    """A child process that records how long each wait() was allowed."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc, self.waits = proc, []  # type: ignore[var-annotated]

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait(self, timeout: float | None = None) -> int:
        self.waits.append(timeout)
        return self.proc.wait(timeout)


def test_rules_reward_harness_stop_waits() -> None:
    child = _Waits(subprocess.Popen(["sleep", "30"], start_new_session=True))
    server = ServerProcess(proc=child, base_url="", log_path=Path("unused.log"))  # type: ignore[arg-type]
    assert server.stop().by_sigterm
    assert child.waits == [10.0, 10]  # the grace for SIGTERM, then 10 s after the group's SIGKILL
