"""Rule table for the warm interpreters' client (rlcheck.process.warm), its server a stand-in process that speaks
warm_server's protocol on in-memory pipes and records every request (tests/test_warm.py runs the real one): how a
server is started, when it is ready (its first message, or its end), a run's request and the Completed it becomes
(exit status, output, a deadline that kills the run's group, TERM then KILL), which runs share a server (runtime
names and PYTEST_CURRENT_TEST left out), when a run goes cold (cold=True, a server that is not ready, torch's fork
poisoning) and how each server is stopped (still importing: killed; ready: its stdin closed, killed if it lingers)."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest

from rlcheck.process import subproc, warm


class Pipe:
    """The server's stdout as the client iterates it: lines put by the test, None ends it."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()

    def __iter__(self):
        while (line := self.lines.get(timeout=10)) is not None:
            yield line


class Stdin:
    def __init__(self, proc: FakeProc) -> None:
        self.proc, self.closed = proc, False

    def write(self, text: str) -> None:
        self.proc.requests.append(json.loads(text))
        assert text.endswith("\n") and text.count("\n") == 1
        self.proc.answer(self.proc.requests[-1])

    def flush(self) -> None:
        self.proc.flushed += 1

    def close(self) -> None:
        self.closed = True
        if self.proc.on_close is not None:
            self.proc.on_close()


class FakeProc:
    """A warm_server: answers each request by the test's `script` (what to print, what status, or nothing)."""

    made: list[FakeProc] = []

    def __init__(self, argv, **kwargs) -> None:
        self.argv, self.kwargs = argv, kwargs
        self.stdout, self.stdin = Pipe(), Stdin(self)
        self.requests: list[dict] = []
        self.flushed = 0
        self.returncode: int | None = None
        self.waited: list[float] = []
        self.on_close = None
        self.linger = False
        self.script = {"out": "", "err": "", "exit": 0, "pid": 900}
        self.pid = 77
        FakeProc.made.append(self)

    def say(self, message: dict | None) -> None:
        self.stdout.lines.put(None if message is None else json.dumps(message) + "\n")

    def answer(self, request: dict) -> None:
        s = self.script
        if s.get("silent"):
            return
        Path(request["stdout"]).write_text(s["out"])
        if s["err"] is not None:
            Path(request["stderr"]).write_text(s["err"])
        if s.get("exit_at_once"):
            self.say({"id": request["id"], "exit": s["exit"]})
            return
        self.say({"id": request["id"], "pid": s["pid"]})
        if s["exit"] != "never":
            self.say({"id": request["id"], "exit": s["exit"]})

    def poll(self):
        return self.returncode

    def wait(self, timeout=None):
        self.waited.append(timeout)
        if self.linger:
            raise subprocess.TimeoutExpired(self.argv, timeout)
        self.returncode = 0
        self.say(None)
        return 0


@pytest.fixture
def world(monkeypatch, tmp_path):
    """Servers are FakeProcs; killpg, the cold run and kill_group recorded; every queue's waits recorded."""
    w = types.SimpleNamespace(killed=[], cold=[], groups=[], gets=[], answer_kill=None)
    FakeProc.made = []
    monkeypatch.setattr(warm, "subprocess", types.SimpleNamespace(Popen=FakeProc, PIPE=subprocess.PIPE,
                                                                  TimeoutExpired=subprocess.TimeoutExpired))

    def killpg(pid, sig):
        w.killed.append((pid, sig))
        if w.answer_kill is not None:
            w.answer_kill(pid, sig)
    monkeypatch.setattr(warm, "os", types.SimpleNamespace(killpg=killpg))

    class Recorded(queue.Queue):
        def get(self, block=True, timeout=None):
            w.gets.append(timeout)
            return super().get(block, timeout=min(timeout, 5) if timeout is not None else None)
    monkeypatch.setattr(warm, "queue", types.SimpleNamespace(Queue=Recorded, Empty=queue.Empty))

    def cold(argv, **kwargs):
        w.cold.append((argv, kwargs))
        return subproc.Completed(argv=tuple(argv), returncode=0, stdout="cold\n", stderr="", timed_out=False)
    monkeypatch.setattr(subproc, "run", cold)
    monkeypatch.setattr(subproc, "kill_group", lambda proc: w.groups.append(proc))
    made = iter(range(1, 100))

    def mkdtemp(prefix):
        folder = tmp_path / f"{prefix}{next(made)}"
        folder.mkdir()
        return str(folder)
    monkeypatch.setattr(warm, "tempfile", types.SimpleNamespace(mkdtemp=mkdtemp))
    saved = dict(warm._SERVERS)  # real servers of other tests are kept, not stopped
    warm._SERVERS.clear()
    yield w
    for proc in FakeProc.made:
        proc.say(None)
    warm._SERVERS.clear()
    warm._SERVERS.update(saved)


def _pumped(server: warm.Server) -> None:
    """Wait until the server's reader has read its last line."""
    for thread in threading.enumerate():
        if getattr(thread, "_target", None) == server._pump:
            thread.join(5)


def _ready(preload=("json",), env=None) -> tuple[warm.Server, FakeProc]:
    server = warm.Server(preload, env or {"A": "1"})
    proc = FakeProc.made[-1]
    proc.say({"ready": 77})
    assert server.wait_ready(5)
    return server, proc


# --- the server ------------------------------------------------------------------------------------------------------


def test_a_server_is_the_warm_server_module_with_its_imports_in_its_own_session(world, tmp_path):
    server = warm.Server(("torch", "megatron"), {"A": "1"})
    proc = FakeProc.made[-1]
    assert proc.argv == [sys.executable, "-m", "rlcheck.process.warm_server", "torch", "megatron"]
    kwargs = dict(proc.kwargs)
    stderr = kwargs.pop("stderr")
    assert kwargs == {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True, "env": {"A": "1"},
                      "start_new_session": True}
    assert server.folder == tmp_path / "rlcheck-warm-1" and stderr.name == str(server.folder / "server.stderr")
    assert (server.preload, server.ready) == (("torch", "megatron"), None)
    proc.say(None)


def test_the_reader_is_a_daemon_thread(world):
    server = warm.Server(("json",), {})
    (reader,) = [t for t in threading.enumerate() if getattr(t, "_target", None) == server._pump]
    assert reader.daemon is True  # it never holds the interpreter's exit
    FakeProc.made[-1].say(None)


@pytest.mark.parametrize(("first", "ready"), [({"ready": 77}, True), ({"error": "import of x failed"}, False),
                                              (None, False)])
def test_ready_is_the_first_message_or_the_end(world, first, ready):
    server = warm.Server(("json",), {})
    proc = FakeProc.made[-1]
    proc.say(first)
    assert server.wait_ready(5) is ready
    proc.say(None)
    _pumped(server)
    assert server.ready is ready


def test_a_later_message_without_an_id_changes_nothing(world):
    server, proc = _ready()
    proc.say({"error": "late"})
    proc.say({"id": 99, "exit": 0})  # nobody waits for 99
    proc.say(None)
    _pumped(server)
    assert server.ready is True


def test_a_server_not_ready_in_time_is_not_used(world):
    server = warm.Server(("json",), {})
    assert server.wait_ready(0.01) is False and server.ready is None
    FakeProc.made[-1].say(None)


def test_a_server_that_ends_answers_every_waiting_run_with_no_status(world):
    server, proc = _ready()
    proc.script = {"out": "", "err": "", "exit": "never", "pid": 900}
    done = []
    t = threading.Thread(target=lambda: done.append(server.run("pass", [], env={}, timeout_s=60, cwd=None)))
    t.start()
    for _ in range(500):
        if proc.requests:
            break
        threading.Event().wait(0.01)
    proc.say(None)
    t.join(10)
    assert done[0].returncode is None and done[0].timed_out is False
    assert server.ready is True


# --- a run -----------------------------------------------------------------------------------------------------------


def test_a_run_sends_its_request_and_becomes_a_completed(world):
    server, proc = _ready(preload=("json", "os"))
    proc.script = {"out": "out\n", "err": "err\n", "exit": 3, "pid": 900}
    done = server.run("print(1)", ("a", "b c"), env={"X": "1"}, timeout_s=20, cwd="/w")
    (request,) = proc.requests
    assert request == {"id": 1, "code": "print(1)", "argv": ["a", "b c"], "env": {"X": "1"}, "cwd": "/w",
                       "stdout": str(server.folder / "1.out"), "stderr": str(server.folder / "1.err")}
    assert proc.flushed == 1
    assert done == subproc.Completed(argv=("rlcheck.process.warm", "json", "os", "--", sys.executable, "-c",
                                           "print(1)", "a", "b c"), returncode=3, stdout="out\n", stderr="err\n",
                                     timed_out=False)
    assert world.gets == [30, 20]  # the start at once, then the run's own deadline
    assert not (server.folder / "1.out").exists() and not (server.folder / "1.err").exists()
    assert server._answers == {}


def test_each_run_has_its_own_id(world):
    server, proc = _ready()
    server.run("pass", [], env={}, timeout_s=5, cwd=None)
    server.run("pass", [], env={}, timeout_s=5, cwd=None)
    assert [r["id"] for r in proc.requests] == [1, 2]


def test_a_run_that_ends_at_once_is_not_waited_for_again(world):
    server, proc = _ready()
    proc.script = {"out": "", "err": "", "exit": -9, "exit_at_once": True}
    done = server.run("pass", [], env={}, timeout_s=5, cwd=None)
    assert (done.returncode, world.gets) == (-9, [30])


def test_missing_output_files_are_empty(world):
    server, proc = _ready()
    proc.script = {"out": "x", "err": None, "exit": 0, "pid": 900}
    done = server.run("pass", [], env={}, timeout_s=5, cwd=None)
    assert (done.stdout, done.stderr) == ("x", "")


def test_output_that_is_not_utf8_is_replaced(world):
    server, proc = _ready()
    proc.script = {"out": "", "err": "", "exit": 0, "pid": 900}
    original = proc.answer

    def answer(request):
        original(request)
        Path(request["stdout"]).write_bytes(b"a\xffb")
    proc.answer = answer
    assert server.run("pass", [], env={}, timeout_s=5, cwd=None).stdout == "a\ufffdb"


def test_a_run_past_its_deadline_is_terminated_and_has_no_status(world):
    server, proc = _ready()
    proc.script = {"out": "partial", "err": "", "exit": "never", "pid": 900}
    world.answer_kill = lambda pid, sig: proc.say({"id": 1, "exit": -sig})
    done = server.run("pass", [], env={}, timeout_s=0.01, cwd=None)
    assert world.killed == [(900, signal.SIGTERM)]
    assert (done.returncode, done.timed_out, done.stdout) == (None, True, "partial")
    assert world.gets == [30, 0.01, 3.0]


# --- killing a run's group -------------------------------------------------------------------------------------------


class Answers:
    """A run's answers as _kill waits on them: each get answers from the script or raises Empty."""

    def __init__(self, *script) -> None:
        self.script, self.waits = list(script), []

    def get(self, timeout):
        self.waits.append(timeout)
        got = self.script.pop(0)
        if got is None:
            raise queue.Empty
        return got


@pytest.mark.parametrize(("script", "killed", "waits", "ended"), [
    (({"exit": -15},), [signal.SIGTERM], [3.0], {"exit": -15}),
    ((None, {"exit": -9}), [signal.SIGTERM, signal.SIGKILL], [3.0, 30.0], {"exit": -9}),
    ((None, None), [signal.SIGTERM, signal.SIGKILL], [3.0, 30.0], {"exit": None}),
])
def test_kill_terms_then_kills_the_group(world, script, killed, waits, ended):
    answers = Answers(*script)
    assert warm._kill(900, answers) == ended
    assert world.killed == [(900, s) for s in killed] and answers.waits == waits


def test_kill_of_a_group_already_gone_still_waits_for_its_status(world, monkeypatch):
    def gone(pid, sig):
        raise ProcessLookupError(pid)
    monkeypatch.setattr(warm, "os", types.SimpleNamespace(killpg=gone))
    answers = Answers(None, {"exit": 0})
    assert warm._kill(900, answers) == {"exit": 0} and answers.waits == [3.0, 30.0]


# --- which server, and when a run goes cold --------------------------------------------------------------------------


def test_runtime_names_and_pytests_current_test_share_a_server(world):
    a = warm._server(["json"], {"A": "1", "RANK": "0", "PYTEST_CURRENT_TEST": "t (setup)"}, ["RANK"])
    b = warm._server(["json"], {"A": "1", "RANK": "1", "PYTEST_CURRENT_TEST": "t (call)"}, ["RANK"])
    c = warm._server(["json"], {"A": "2", "RANK": "1"}, ["RANK"])
    d = warm._server(["json", "os"], {"A": "1"}, [])
    e = warm._server(["json"], {"A": "1", "RANK": "1"}, [])
    assert a is b and len({id(x) for x in (a, c, d, e)}) == 4
    assert FakeProc.made[0].kwargs["env"] == {"A": "1"} and a.preload == ("json",)
    assert list(warm._SERVERS) == [(("json",), (("A", "1"),)), (("json",), (("A", "2"),)),
                                   (("json", "os"), (("A", "1"),)), (("json",), (("A", "1"), ("RANK", "1")))]


def test_a_name_set_to_what_unset_means_shares_the_unset_server(world):
    unset = warm._server(["json"], {"A": "1"}, [])
    zero = warm._server(["json"], {"A": "1", "RAY_CLIENT_MODE": "0"}, [])
    one = warm._server(["json"], {"A": "1", "RAY_CLIENT_MODE": "1"}, [])
    other = warm._server(["json"], {"A": "1", "RAY_CLIENT_MODEX": "0"}, [])
    assert zero is unset and len({id(x) for x in (unset, one, other)}) == 3
    assert [p.kwargs["env"] for p in FakeProc.made] == [{"A": "1"}, {"A": "1", "RAY_CLIENT_MODE": "1"},
                                                        {"A": "1", "RAY_CLIENT_MODEX": "0"}]


def test_the_always_runtime_names():
    assert warm.ALWAYS_RUNTIME == ("PYTEST_CURRENT_TEST",) and warm.START_TIMEOUT_S == 300.0
    assert warm.SAME_AS_UNSET == {"RAY_CLIENT_MODE": "0"}
    assert warm.FORK_POISONED == "Cannot re-initialize CUDA in forked subprocess"


def test_prewarm_starts_the_server_a_run_then_finds(world):
    warm.prewarm(["json"], {"A": "1", "R": "0"}, ["R"])
    assert len(FakeProc.made) == 1 and FakeProc.made[0].argv[-1] == "json"
    FakeProc.made[0].say({"ready": 77})
    done = warm.python("pass", preload=["json"], env={"A": "1", "R": "5"}, runtime=["R"], timeout_s=5)
    assert len(FakeProc.made) == 1 and done.argv[0] == "rlcheck.process.warm"
    request = FakeProc.made[0].requests[0]
    assert request["env"] == {"A": "1", "R": "5"}  # the run's own env, runtime names and all
    assert (request["code"], request["argv"], request["cwd"]) == ("pass", [], None)
    assert world.gets == [30, 5]  # the run's own deadline


def test_a_warm_run_waits_for_the_imports_outside_its_deadline(world, monkeypatch):
    waited = []
    monkeypatch.setattr(warm.Server, "wait_ready", lambda self, timeout_s: waited.append(timeout_s) or True)
    warm.prewarm(["json"], {})
    FakeProc.made[0].script["exit_at_once"] = True
    done = warm.python("pass", preload=["json"], env={}, timeout_s=5, cwd="/w")
    assert waited == [300.0] and done.returncode == 0 and FakeProc.made[0].requests[0]["cwd"] == "/w"
    assert world.cold == []


def test_a_server_that_is_not_ready_sends_the_run_cold(world):
    warm.prewarm(["json"], {"A": "1"})
    FakeProc.made[0].say({"error": "import of json failed"})
    done = warm.python("print(1)", ["x"], preload=["json"], env={"A": "1"}, timeout_s=7, cwd="/w")
    assert world.cold == [([sys.executable, "-c", "print(1)", "x"], {"timeout_s": 7, "env": {"A": "1"}, "cwd": "/w"})]
    assert done.stdout == "cold\n" and FakeProc.made[0].requests == []


def test_a_forked_run_that_meets_cuda_is_repeated_cold(world):
    warm.prewarm(["json"], {})
    proc = FakeProc.made[0]
    proc.say({"ready": 77})
    proc.script = {"out": "", "err": f"RuntimeError: {warm.FORK_POISONED}. To use CUDA ...", "exit": 1, "pid": 900}
    done = warm.python("x", preload=["json"], env={}, timeout_s=7)
    assert len(proc.requests) == 1 and done.stdout == "cold\n"
    assert world.cold == [([sys.executable, "-c", "x"], {"timeout_s": 7, "env": {}, "cwd": None})]


@pytest.mark.parametrize("err", [f"{warm.UNFIT} imported: mbridge\n", f"x\n{warm.FORK_POISONED}\n"])
def test_an_unfit_or_poisoned_fork_is_repeated_as_cold_argv_says(world, err):
    warm.prewarm(["json"], {"B": "2"})
    proc = FakeProc.made[0]
    proc.say({"ready": 77})
    proc.script = {"out": "", "err": err, "exit": 3, "pid": 900}
    done = warm.python("x", ["a"], preload=["json"], env={"B": "2"}, timeout_s=7, cold_argv=["python", "-S", "-c", "y"])
    assert len(proc.requests) == 1 and done.stdout == "cold\n"
    assert world.cold == [(["python", "-S", "-c", "y"], {"timeout_s": 7, "env": {"B": "2"}, "cwd": None})]


def test_a_fork_whose_output_only_resembles_the_marker_is_kept(world):
    warm.prewarm(["json"], {})
    proc = FakeProc.made[0]
    proc.say({"ready": 77})
    proc.script = {"out": warm.UNFIT, "err": "rlcheck.process.warm: unfit\n", "exit": 0, "pid": 900}
    done = warm.python("x", preload=["json"], env={}, timeout_s=7, cold_argv=["python", "-c", "y"])
    assert world.cold == [] and done.returncode == 0  # the marker counts on stderr, whole


def test_cold_argv_is_what_a_cold_run_starts(world):
    done = warm.python("x", preload=["json"], env={}, timeout_s=7, cold=True, cold_argv=["python", "-S", "-c", "y"])
    assert FakeProc.made == [] and world.cold == [(["python", "-S", "-c", "y"], {"timeout_s": 7, "env": {},
                                                                                  "cwd": None})]
    assert done.stdout == "cold\n"


def test_cold_skips_the_server(world):
    done = warm.python("x", preload=["json"], env={}, timeout_s=7, cold=True)
    assert FakeProc.made == [] and warm._SERVERS == {} and done.stdout == "cold\n"


# --- stopping --------------------------------------------------------------------------------------------------------


def test_a_server_still_importing_is_killed(world):
    server = warm.Server(("json",), {})
    proc = FakeProc.made[0]
    folder = server.folder
    server.stop()
    assert world.groups == [proc] and proc.stdin.closed is False and not folder.exists()
    assert server._stderr.closed


def test_a_ready_server_has_its_stdin_closed_and_is_waited_for(world):
    server, proc = _ready()
    server.stop()
    assert proc.stdin.closed and proc.waited == [10] and world.groups == [] and not server.folder.exists()


def test_stopping_twice_is_harmless(world):
    server, proc = _ready()
    server.stop()
    server.stop()
    assert proc.waited == [10] and not server.folder.exists()


def test_a_ready_server_that_lingers_is_killed(world):
    server, proc = _ready()
    proc.linger = True
    server.stop()
    assert proc.stdin.closed and proc.waited == [10] and world.groups == [proc]


def test_a_ready_server_whose_pipe_is_gone_is_killed(world):
    server, proc = _ready()

    def broken():
        raise BrokenPipeError
    proc.on_close = broken
    server.stop()
    assert world.groups == [proc] and proc.waited == []


def test_a_server_that_ended_is_only_cleaned_up(world):
    server, proc = _ready()
    proc.returncode = 0
    server.stop()
    assert world.groups == [] and proc.stdin.closed is False and not server.folder.exists()


def test_stop_all_stops_every_server_and_forgets_them(world):
    a = warm._server(["json"], {}, [])
    b = warm._server(["os"], {}, [])
    FakeProc.made[0].say({"ready": 77})
    a.wait_ready(5)
    warm.stop_all()
    assert warm._SERVERS == {}
    assert FakeProc.made[0].stdin.closed and world.groups == [FakeProc.made[1]] and b.ready is None
