"""Rule table for the warm interpreter's server (rlcheck.process.warm_server), in this process with its os, select,
signal and threading replaced by stand-ins that record each call (tests/test_warm.py runs the real server): the exit
status a run's SystemExit gives (as `python -c` would), each step that makes a forked child a fresh `python -c` (its
session, environment, working directory, stdio, argv, sys.path[0], __main__, the threads and exit handlers it waits
for), the statuses reaped and sent, the serve loop (a request per line across reads, a child per request, the end at
end of input or when the client dies, every child still running killed) and main's import report."""

from __future__ import annotations

import io
import json
import os
import sys
import types

import pytest

from rlcheck.process import warm_server


class Exited(BaseException):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class FakeOS:
    """The os calls warm_server makes, recorded; constants and status decoders are the real ones."""

    O_RDONLY, O_WRONLY, O_CREAT, WNOHANG, devnull = os.O_RDONLY, os.O_WRONLY, os.O_CREAT, os.WNOHANG, os.devnull
    WIFSIGNALED, WTERMSIG, WEXITSTATUS = staticmethod(os.WIFSIGNALED), staticmethod(os.WTERMSIG), \
        staticmethod(os.WEXITSTATUS)

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.environ = {"OLD": "1", "PATH": "/old"}
        self.sent: list[tuple[int, dict]] = []
        self.waits: list[tuple[int, int]] = []
        self.chunks: list[bytes] = []
        self.pids = iter(range(501, 600))
        self.ppid = [7]
        self.gone: set[int] = set()
        self._fd = 40

    def setsid(self):
        self.calls.append(("setsid",))

    def close(self, fd):
        self.calls.append(("close", fd))

    def chdir(self, path):
        self.calls.append(("chdir", path))

    def open(self, path, flags, mode):
        self._fd += 1
        self.calls.append(("open", path, flags, mode, self._fd))
        return self._fd

    def dup(self, fd):
        self.calls.append(("dup", fd))
        return 9

    def dup2(self, fd, to):
        self.calls.append(("dup2", fd, to))

    def _exit(self, status):
        raise Exited(status)

    def write(self, fd, data):
        self.sent.append((fd, json.loads(data)))
        assert data.endswith(b"\n") and data.count(b"\n") == 1
        return len(data)

    def waitpid(self, pid, options):
        self.calls.append(("waitpid", pid, options))
        return self.waits.pop(0) if self.waits else (0, 0)

    def getppid(self):
        return self.ppid.pop(0) if len(self.ppid) > 1 else self.ppid[0]

    def getpid(self):
        return 4242

    def read(self, fd, size):
        self.calls.append(("read", fd, size))
        return self.chunks.pop(0)

    def fork(self):
        pid = next(self.pids)
        self.calls.append(("fork", pid))
        return pid

    def killpg(self, pid, sig):
        self.calls.append(("killpg", pid, sig))
        if pid in self.gone:
            raise ProcessLookupError(pid)


@pytest.fixture
def fake(monkeypatch):
    fos = FakeOS()
    monkeypatch.setattr(warm_server, "os", fos)
    return fos


# --- the exit status -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("code", "status", "printed"), [
    (None, 0, ""), (0, 0, ""), (3, 3, ""), (255, 255, ""), (256, 0, ""), (257, 1, ""), (-1, 255, ""), (True, 1, ""),
    ("bad input", 1, "bad input\n"), (["x"], 1, "['x']\n"),
])
def test_the_exit_status_of_system_exit_is_pythons(capsys, code, status, printed):
    assert warm_server._exit_status(code) == status
    assert capsys.readouterr() == ("", printed)


def test_send_writes_one_json_line():
    read, write = os.pipe()
    try:
        warm_server._send(write, {"id": 3, "exit": -9})
        assert os.read(read, 100) == b'{"id": 3, "exit": -9}\n'
    finally:
        os.close(read)
        os.close(write)


# --- one child -------------------------------------------------------------------------------------------------------


class Thread:
    def __init__(self, name: str, daemon: bool, joined: list[str]) -> None:
        self.name, self.daemon, self._joined = name, daemon, joined

    def join(self) -> None:
        self._joined.append(self.name)


@pytest.fixture
def child(fake, monkeypatch, tmp_path):
    """_run_child's world: its os, signal, threading, sys, open and atexit are stand-ins."""
    world = types.SimpleNamespace(os=fake, signals=[], joined=[], opened=[], exitfuncs=[], tmp=tmp_path)
    main = Thread("main", False, world.joined)
    threads = [main, Thread("worker", False, world.joined), Thread("daemon", True, world.joined)]
    monkeypatch.setattr(warm_server, "signal", types.SimpleNamespace(
        SIGINT=2, default_int_handler="default", signal=lambda s, h: world.signals.append((s, h))))
    monkeypatch.setattr(warm_server, "threading", types.SimpleNamespace(
        enumerate=lambda: threads, main_thread=lambda: main))
    world.sys = types.SimpleNamespace(path=["/site", "/lib"], modules={"__main__": "old"}, argv=["pytest"])
    monkeypatch.setattr(warm_server, "sys", world.sys)

    def fake_open(fd, mode="r", buffering=-1, closefd=True):
        stream = io.StringIO()
        world.opened.append((fd, mode, buffering, closefd))
        return stream
    monkeypatch.setattr(warm_server, "open", fake_open, raising=False)
    monkeypatch.setitem(sys.modules, "atexit", types.SimpleNamespace(_run_exitfuncs=lambda: world.exitfuncs.append(1)))
    return world


def _request(code: str, **extra) -> dict:
    return {"id": 1, "code": code, "argv": ["a", "b c"], "env": {"X": "1"}, "cwd": "/work/dir", "stdout": "/o/1.out",
            "stderr": "/o/1.err", **extra}


def test_a_child_becomes_a_fresh_python_c_then_exits_with_its_status(child):
    code = "import sys as _s\nran = (__name__, _s.argv if False else None)\n"
    with pytest.raises(Exited) as exc:
        warm_server._run_child(_request(code), proto_fd=7)
    assert exc.value.status == 0
    w = os.O_WRONLY | os.O_CREAT
    assert child.os.calls == [
        ("setsid",), ("close", 7), ("chdir", "/work/dir"),
        ("open", os.devnull, os.O_RDONLY, 0o600, 41), ("dup2", 41, 0), ("close", 41),
        ("open", "/o/1.out", w, 0o600, 42), ("dup2", 42, 1), ("close", 42),
        ("open", "/o/1.err", w, 0o600, 43), ("dup2", 43, 2), ("close", 43),
    ]
    assert child.signals == [(2, "default")]
    assert child.os.environ == {"X": "1"}
    assert child.opened == [(0, "r", -1, False), (1, "w", 1, False), (2, "w", 1, False)]
    assert child.sys.argv == ["-c", "a", "b c"] and child.sys.path == ["", "/lib"]
    main = child.sys.modules["__main__"]
    assert isinstance(main, types.ModuleType) and main.__name__ == "__main__" and main.ran == ("__main__", None)
    assert child.joined == ["worker"] and child.exitfuncs == [1]


@pytest.mark.parametrize("cwd", [None, ""])
def test_a_child_without_a_working_directory_stays_where_it_is(child, cwd):
    with pytest.raises(Exited) as exc:
        warm_server._run_child(_request("pass", cwd=cwd), proto_fd=7)
    assert exc.value.status == 0 and not [c for c in child.os.calls if c[0] == "chdir"]


def test_a_request_without_cwd_stays_where_it_is(child):
    request = _request("pass")
    del request["cwd"]
    with pytest.raises(Exited) as exc:
        warm_server._run_child(request, proto_fd=7)
    assert exc.value.status == 0 and not [c for c in child.os.calls if c[0] == "chdir"]


@pytest.mark.parametrize(("code", "status", "err"), [
    ("import sys\nsys.exit(3)", 3, ""),
    ("raise SystemExit", 0, ""),
    ("raise SystemExit('went wrong')", 1, ""),  # its text goes to the child's own stderr (below)
    ("raise SystemExit(256 + 7)", 7, ""),
    ("raise ValueError('boom')", 1, "ValueError: boom"),
    ("raise KeyboardInterrupt", 1, "KeyboardInterrupt"),
    ("x = (", 1, "SyntaxError"),
])
def test_a_childs_status_and_what_it_prints(child, capsys, code, status, err):
    with pytest.raises(Exited) as exc:
        warm_server._run_child(_request(code), proto_fd=7)
    assert exc.value.status == status
    got = capsys.readouterr().err
    assert (got == err) if not err or err.endswith("\n") else (err in got and "Traceback" in got)
    if "boom" in code:  # as `python -c` names the code in a traceback
        assert got.endswith('  File "<string>", line 1, in <module>\nValueError: boom\n')
    assert child.joined == ["worker"] and child.exitfuncs == [1]  # after an error too
    assert child.sys.stderr.getvalue() == ("went wrong\n" if "went wrong" in code else "")


def test_a_child_whose_setup_fails_exits_1(child, capsys):
    def refuse(path):
        raise FileNotFoundError(path)
    child.os.chdir = refuse
    with pytest.raises(Exited) as exc:
        warm_server._run_child(_request("print('never')"), proto_fd=7)
    assert exc.value.status == 1 and child.exitfuncs == [] and capsys.readouterr().out == ""


# --- reaping ---------------------------------------------------------------------------------------------------------


def test_reap_sends_each_ended_childs_status_until_none_has_ended(fake):
    children = {501: 1, 502: 2, 503: 3}
    fake.waits = [(502, 3 << 8), (501, 9), (999, 0), (0, 0)]
    warm_server._reap(children, 5)
    assert fake.sent == [(5, {"id": 2, "exit": 3}), (5, {"id": 1, "exit": -9})]
    assert children == {503: 3}
    assert fake.calls == [("waitpid", -1, os.WNOHANG)] * 4


def test_reap_with_no_children_waits_for_none(fake):
    warm_server._reap({}, 5)
    assert fake.calls == [] and fake.sent == []


def test_reap_stops_once_the_last_child_is_reaped(fake):
    children = {501: 1}
    fake.waits = [(501, 0)]
    warm_server._reap(children, 5)
    assert fake.sent == [(5, {"id": 1, "exit": 0})] and len(fake.calls) == 1


# --- serving ---------------------------------------------------------------------------------------------------------


@pytest.fixture
def serving(fake, monkeypatch):
    """select answers from a script of readable / not; _run_child replaced (a fork here returns a pid)."""
    world = types.SimpleNamespace(readable=[], selects=[], ran=[])

    def select(r, w, x, timeout):
        world.selects.append((r, w, x, timeout))
        return (r if world.readable.pop(0) else []), [], []
    monkeypatch.setattr(warm_server, "select", types.SimpleNamespace(select=select))
    monkeypatch.setattr(warm_server, "_run_child", lambda request, fd: world.ran.append((request, fd)))
    return world


def _line(i: int) -> bytes:
    return json.dumps({"id": i, "code": "pass"}).encode() + b"\n"


def test_serve_forks_a_child_per_request_line_across_reads_and_ends_at_end_of_input(fake, serving):
    first, second = _line(1), _line(2)
    fake.chunks = [first + second[:5], second[5:] + b"\n\n", b""]
    serving.readable = [False, True, True, True]
    fake.gone = {501}
    warm_server._serve(3)
    assert serving.selects == [([0], [], [], 0.05)] * 4
    assert [c for c in fake.calls if c[0] in ("read", "fork", "killpg")] == [
        ("read", 0, 65536), ("fork", 501), ("read", 0, 65536), ("fork", 502), ("read", 0, 65536),
        ("killpg", 501, 9), ("killpg", 502, 9)]
    assert fake.sent == [(3, {"id": 1, "pid": 501}), (3, {"id": 2, "pid": 502})]
    assert serving.ran == []


def test_serve_reaps_before_it_reads(fake, serving):
    fake.chunks = [_line(1), b""]
    serving.readable = [True, True]
    fake.waits = [(501, 4 << 8)]
    warm_server._serve(3)
    assert fake.sent == [(3, {"id": 1, "pid": 501}), (3, {"id": 1, "exit": 4})]
    assert [c for c in fake.calls if c[0] == "killpg"] == []


def test_serve_ends_when_the_client_dies(fake, serving):
    fake.ppid = [7, 7, 1]
    fake.chunks = [_line(1)]
    serving.readable = [True, True]
    warm_server._serve(3)
    assert [c for c in fake.calls if c[0] in ("read", "fork", "killpg")] == [
        ("read", 0, 65536), ("fork", 501), ("killpg", 501, 9)]


def test_the_forked_child_runs_the_request(fake, serving):
    fake.fork = lambda: 0
    fake.chunks = [_line(5), b""]
    serving.readable = [True, True]
    warm_server._serve(3)
    assert serving.ran == [({"id": 5, "code": "pass"}, 3)]


# --- main ------------------------------------------------------------------------------------------------------------


@pytest.fixture
def served(fake, monkeypatch):
    calls = []
    monkeypatch.setattr(warm_server, "_serve", lambda fd: calls.append(fd))
    monkeypatch.setattr(warm_server, "sys", types.SimpleNamespace(stderr=io.StringIO()))
    return calls


def test_main_imports_then_says_ready_and_serves(fake, served):
    with pytest.raises(Exited) as exc:
        warm_server.main(["json", "os.path"])
    assert exc.value.status == 0
    assert fake.calls[:2] == [("dup", 1), ("dup2", 2, 1)]
    assert fake.sent == [(9, {"ready": 4242})] and served == [9]


def test_main_with_nothing_to_import_is_ready(fake, served):
    with pytest.raises(Exited):
        warm_server.main([])
    assert fake.sent == [(9, {"ready": 4242})]


@pytest.mark.parametrize(("modules", "error"), [
    (["json", "rlcheck_no_such_module"],
     "import of rlcheck_no_such_module failed: ModuleNotFoundError: No module named 'rlcheck_no_such_module'"),
    (["rlcheck_no_such_module", "json"],
     "import of rlcheck_no_such_module failed: ModuleNotFoundError: No module named 'rlcheck_no_such_module'"),
])
def test_main_reports_a_failed_import_and_exits_3(fake, served, modules, error):
    assert warm_server.main(modules) == 3
    assert fake.sent == [(9, {"error": error})] and served == []


def test_main_reports_an_import_that_exits(fake, served, monkeypatch, tmp_path):
    (tmp_path / "rlcheck_exits_at_import.py").write_text("raise SystemExit(4)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert warm_server.main(["rlcheck_exits_at_import"]) == 3
    assert fake.sent == [(9, {"error": "import of rlcheck_exits_at_import failed: SystemExit: 4"})]
