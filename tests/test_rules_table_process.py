"""Rule tables for the bounded waits and child processes every check leans on (rlcheck.process.reach, .wait, .subproc):
an address read as host and port on both sides of every bound, which TCP answers are a definite no, a poll that ends
by its deadline or the server's exit naming what it saw, and a child's end told exactly (exit code, signal, deadline,
a pipe held open past the kill). The clock and the network are stand-ins where the rule is the point; one real
child per path where the process machinery is."""

from __future__ import annotations

import errno
import io
import os
import signal
import socket
import subprocess
import sys
import types
import urllib.error

import pytest

from rlcheck.process import reach, subproc, wait

# --- reach.host_port ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("address", "expected"), [
    ("ray://10.0.0.1:10001", ("10.0.0.1", 10001)),
    ("ray://DGX", ("DGX", 10001)),  # only the brackets of an IPv6 host are stripped, never a letter of a name
    ("DGX:6379", ("DGX", 6379)),
    ("http://head:8265/api/jobs?next=http://proxy", ("head", 8265)),  # the first :// ends the scheme
    ("ray://head", ("head", 10001)),  # each scheme's default port
    ("http://head", ("head", 80)),
    ("https://head", ("head", 443)),
    ("http://head:8265/api", ("head", 8265)),
    ("10.0.0.1:6379", ("10.0.0.1", 6379)),  # a GCS address: no scheme
    ("[::1]:6379", ("::1", 6379)),
    ("ray://[fe80::1]", ("fe80::1", 10001)),
    ("h:1", ("h", 1)),  # both ends of the port range
    ("h:65535", ("h", 65535)),
    ("node-1.cluster.local:80", ("node-1.cluster.local", 80)),
])
def test_host_port_reads_an_address(address, expected):
    assert reach.host_port(address) == expected


@pytest.mark.parametrize(("address", "error"), [
    ("h:0", "'h:0': port '0' is not a number from 1 to 65535"),
    ("h:65536", "'h:65536': port '65536' is not a number from 1 to 65535"),
    ("h:x", "'h:x': port 'x' is not a number from 1 to 65535"),
    ("h:", "'h:': port '' is not a number from 1 to 65535"),
    ("h:-1", "'h:-1': port '-1' is not a number from 1 to 65535"),
    ("head", "'head': a port is needed (HOST:PORT)"),  # no scheme, so no default port
    ("gcs://head", "'gcs://head': a port is needed (HOST:PORT)"),  # a scheme without a default
    ("", "'': no host in it"),
    ("ray://", "'ray://': no host in it"),
    ("ray://a b:1", "'ray://a b:1': no host in it"),
])
def test_host_port_refuses_naming_what_is_wrong(address, error):
    with pytest.raises(reach.AddressError) as exc:
        reach.host_port(address)
    assert str(exc.value) == error


# --- reach.refused --------------------------------------------------------------------------------------------------


def _connect_raising(exc: BaseException | None, seen: list):
    def connect(where, timeout):
        seen.append((where, timeout))
        if exc is not None:
            raise exc
        return io.BytesIO()  # a context manager, as a socket is

    return connect


@pytest.mark.parametrize(("raised", "said"), [
    (None, ""),  # it connected
    (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), "h:7: connection refused (nothing listens there)"),
    (OSError(errno.EHOSTUNREACH, "x"), "h:7: no route to host"),
    (OSError(errno.ENETUNREACH, "x"), "h:7: network unreachable"),
    (socket.gaierror(-2, "Name or service not known"), "h: host name not found (Name or service not known)"),
    (TimeoutError(), ""),  # slow is no definite no: left to the real client's deadline
    (OSError(errno.ECONNRESET, "reset"), ""),  # another error: not a definite no
    (OSError("no errno"), ""),
])
def test_refused_is_said_only_for_a_definite_no(monkeypatch, raised, said):
    seen: list = []
    monkeypatch.setattr(reach.socket, "create_connection", _connect_raising(raised, seen))
    assert reach.refused("h:7", timeout_s=1.5) == said
    assert seen == [(("h", 7), 1.5)]


def test_refused_of_a_malformed_address_is_its_error_without_connecting(monkeypatch):
    seen: list = []
    monkeypatch.setattr(reach.socket, "create_connection", _connect_raising(None, seen))
    assert reach.refused("head") == "'head': a port is needed (HOST:PORT)" and seen == []


def test_refused_for_real_on_loopback():
    port = wait.free_loopback_port()
    assert reach.refused(f"127.0.0.1:{port}") == f"127.0.0.1:{port}: connection refused (nothing listens there)"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert reach.refused(f"ray://127.0.0.1:{server.getsockname()[1]}") == ""


def test_refused_waits_three_seconds_by_default(monkeypatch):
    seen: list = []
    monkeypatch.setattr(reach.socket, "create_connection", _connect_raising(None, seen))
    reach.refused("h:7")
    assert seen == [(("h", 7), 3.0)]


# --- wait.wait_http_ok ----------------------------------------------------------------------------------------------


class Clock:
    """time.monotonic and time.sleep of the wait module, advanced by sleeps and by each request's cost."""

    def __init__(self, request_cost_s: float = 0.0):
        self.now, self.request_cost_s, self.slept = 100.0, request_cost_s, []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class Response:
    def __init__(self, status: int):
        self.status = status

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def polled(monkeypatch):
    """Each urlopen call answers the next outcome (a status, or an exception raised); its timeout is recorded."""
    clock = Clock()
    state = {"outcomes": [], "timeouts": []}

    def urlopen(url, timeout):
        state["timeouts"].append(round(timeout, 6))
        clock.now += clock.request_cost_s
        outcome = state["outcomes"].pop(0) if state["outcomes"] else ConnectionRefusedError("refused")
        if isinstance(outcome, BaseException):
            raise outcome
        return Response(outcome)

    # the wait module's clock only: the time module itself stays (pytest and its plugins read it meanwhile)
    monkeypatch.setattr(wait, "time", types.SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep))
    monkeypatch.setattr(wait.urllib.request, "urlopen", urlopen)
    state["clock"] = clock
    return state


def test_a_first_answer_of_200_is_ok(polled):
    polled["outcomes"] = [200]
    assert wait.wait_http_ok("http://h/", timeout_s=5) == wait.WaitResult(ok=True, elapsed_s=0.0, attempts=1,
                                                                          last_error="")
    assert polled["timeouts"] == [2.0]  # request_timeout_s: the default 2 s within a 5 s wait


@pytest.mark.parametrize(("outcome", "last"), [
    (204, "HTTP 204"),  # answered, but not 200
    (urllib.error.HTTPError("u", 503, "busy", {}, None), "HTTP 503"),
    (urllib.error.URLError("connection refused"), "connection refused"),
    (ConnectionResetError("reset by peer"), "reset by peer"),
    (TimeoutError("timed out"), "timed out"),
])
def test_each_failed_attempt_is_named_then_the_next_one_answers(polled, outcome, last):
    polled["outcomes"] = [outcome, 200]
    got = wait.wait_http_ok("http://h/", timeout_s=5, interval_s=0.25)
    assert (got.ok, got.attempts, got.last_error, got.elapsed_s) == (True, 2, "", 0.25)
    polled["outcomes"] = [outcome]
    got = wait.wait_http_ok("http://h/", timeout_s=1, interval_s=0.25, alive=lambda: False)
    assert (got.ok, got.attempts, got.last_error) == (False, 1, f"{last}; the server process exited")


@pytest.mark.parametrize(("timeout_s", "interval_s", "attempts", "slept"), [
    (1.0, 0.25, 4, [0.25, 0.25, 0.25]),  # after 0.75 s: 0.75 + 0.25 reaches the deadline, so no fourth sleep
    (1.01, 0.25, 5, [0.25] * 4),  # just past it: one more attempt
    (0.25, 0.25, 1, []),  # the interval alone reaches the deadline: one attempt
    (0.0, 0.25, 1, []),  # a zero deadline still tries once
])
def test_the_deadline_ends_the_wait_with_what_was_seen(polled, timeout_s, interval_s, attempts, slept):
    got = wait.wait_http_ok("http://h/", timeout_s=timeout_s, interval_s=interval_s)
    assert (got.ok, got.attempts, got.last_error) == (False, attempts, "refused")
    assert polled["clock"].slept == slept and got.elapsed_s == sum(slept)


@pytest.mark.parametrize(("cost_s", "timeout_s", "interval_s", "request_timeout_s", "timeouts"), [
    (0.4, 1.0, 0.1, 0.6, [0.6, 0.5]),  # its own bound, then what is left (1.0 - 0.4 - 0.1)
    (0.0, 0.05, 0.1, 2.0, [0.1]),  # never below a tenth of a second
    (0.0, 5.0, 1.0, 9.0, [5.0, 4.0, 3.0, 2.0, 1.0]),  # never past the wait's own deadline
])
def test_each_request_is_bounded_by_what_is_left_and_never_below_a_tenth(polled, cost_s, timeout_s, interval_s,
                                                                        request_timeout_s, timeouts):
    polled["clock"].request_cost_s = cost_s
    got = wait.wait_http_ok("http://h/", timeout_s=timeout_s, interval_s=interval_s,
                            request_timeout_s=request_timeout_s)
    assert polled["timeouts"] == timeouts and (got.ok, got.attempts) == (False, len(timeouts))


def test_the_default_interval_is_a_quarter_second(polled):
    got = wait.wait_http_ok("http://h/", timeout_s=1.0)
    assert (got.attempts, polled["clock"].slept) == (4, [0.25, 0.25, 0.25])


def test_a_server_that_exits_ends_the_wait_with_the_time_it_took(polled):
    polled["clock"].request_cost_s = 0.5
    answers = [True, False]  # alive after the first attempt, gone after the second
    got = wait.wait_http_ok("http://h/", timeout_s=30, interval_s=0.25, alive=lambda: answers.pop(0))
    assert got == wait.WaitResult(ok=False, elapsed_s=1.25, attempts=2,
                                  last_error="refused; the server process exited")


def test_a_living_server_is_polled_until_the_deadline(polled):
    asked = []

    def alive():
        asked.append(1)
        return True

    got = wait.wait_http_ok("http://h/", timeout_s=0.5, interval_s=0.25, alive=alive)
    assert (got.attempts, got.last_error, len(asked)) == (2, "refused", 2)
    got = wait.wait_http_ok("http://h/", timeout_s=0.5, interval_s=0.25, alive="not callable")
    assert (got.attempts, got.last_error) == (2, "refused")  # not a callable: no liveness to ask


def test_free_loopback_port_is_bindable_on_loopback():
    port = wait.free_loopback_port()
    assert 1 <= port <= 65535
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


# --- subproc.Completed ----------------------------------------------------------------------------------------------


def _done(**kw) -> subproc.Completed:
    return subproc.Completed(**{"argv": ("x",), "returncode": 0, "stdout": "", "stderr": "", "timed_out": False,
                                **kw})


@pytest.mark.parametrize(("kw", "why"), [
    ({"timed_out": True, "returncode": None}, "killed at its deadline"),
    ({"timed_out": True, "returncode": -9}, "killed at its deadline"),  # the deadline is why, whatever the code
    ({"returncode": -int(signal.SIGKILL)}, "killed by signal SIGKILL"),
    ({"returncode": -int(signal.SIGTERM)}, "killed by signal SIGTERM"),
    ({"returncode": 0}, "exit code 0"),
    ({"returncode": 3}, "exit code 3"),
    ({"returncode": None}, "exit code None"),
])
def test_why_a_child_ended(kw, why):
    assert _done(**kw).why() == why


@pytest.mark.parametrize(("stdout", "stderr", "lines", "tail"), [
    ("a\nb\n", "c\nd\n", 15, "a\nb\nc\nd"),
    ("a\nb\n", "c\nd\n", 2, "c\nd"),
    ("\n\na\n", "", 15, "a"),  # the ends stripped
    ("", "", 15, ""),
    ("one", "two", 1, "onetwo"),  # stdout then stderr, joined as written
])
def test_tail_is_the_last_lines_of_both_streams(stdout, stderr, lines, tail):
    assert _done(stdout=stdout, stderr=stderr).tail(lines) == tail


def test_tail_keeps_fifteen_lines_by_default():
    text = "".join(f"{i}\n" for i in range(20))
    assert _done(stdout=text).tail() == "\n".join(str(i) for i in range(5, 20))


# --- subproc.run, kill_group, _drain --------------------------------------------------------------------------------


def test_run_passes_stdin_env_and_cwd_and_reads_both_streams(tmp_path):
    code = ("import os, sys; print(sys.stdin.read().upper()); print(os.environ['RLC_X'], os.getcwd(), "
            "file=sys.stderr); raise SystemExit(4)")
    done = subproc.run([sys.executable, "-c", code], timeout_s=30, env={**os.environ, "RLC_X": "seen"},
                       cwd=str(tmp_path), stdin="abc")
    assert (done.returncode, done.stdout, done.stderr, done.timed_out) == (4, "ABC\n", f"seen {tmp_path}\n", False)
    assert done.argv == (sys.executable, "-c", code)
    quiet = subproc.run([sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"], timeout_s=30)
    assert quiet.stdout == "''\n"  # no stdin given: an empty one, never the caller's terminal


def test_run_at_its_deadline_kills_the_group_and_keeps_what_was_written():
    code = "import time; print('started', flush=True); time.sleep(60)"
    done = subproc.run([sys.executable, "-c", code], timeout_s=1)
    assert (done.returncode, done.timed_out, done.stdout) == (None, True, "started\n")


class FakeProc:
    def __init__(self, waits: list, pid: int = 4242):
        self.pid, self.waits, self.waited = pid, waits, []

    def wait(self, timeout):
        self.waited.append(timeout)
        outcome = self.waits.pop(0)
        if outcome == "timeout":
            raise subprocess.TimeoutExpired("x", timeout)
        return 0


@pytest.mark.parametrize(("gone_at", "waits", "sent", "waited"), [
    (None, [0], [signal.SIGTERM], [3.0]),  # ends on SIGTERM
    (None, ["timeout", 0], [signal.SIGTERM, signal.SIGKILL], [3.0, 3.0]),  # SIGKILL after the grace
    (None, ["timeout", "timeout"], [signal.SIGTERM, signal.SIGKILL], [3.0, 3.0]),  # gives up after SIGKILL's wait
    (0, [], [signal.SIGTERM], []),  # already gone: nothing to wait for
    (1, ["timeout"], [signal.SIGTERM, signal.SIGKILL], [3.0]),  # gone by SIGKILL
])
def test_kill_group_terms_then_kills(monkeypatch, gone_at, waits, sent, waited):
    signals = []

    def killpg(pid, sig):
        signals.append(sig)
        assert pid == 4242
        if gone_at is not None and len(signals) > gone_at:
            raise ProcessLookupError(pid)

    monkeypatch.setattr(subproc.os, "killpg", killpg)
    proc = FakeProc(list(waits))
    subproc.kill_group(proc)
    assert signals == sent and proc.waited == waited


def test_kill_group_grace_is_its_argument(monkeypatch):
    monkeypatch.setattr(subproc.os, "killpg", lambda pid, sig: None)
    proc = FakeProc(["timeout", 0])
    subproc.kill_group(proc, grace_s=0.5)
    assert proc.waited == [0.5, 0.5]


class Pipe:
    def __init__(self):
        self.closed = False

    def close(self):
        self.closed = True


class HeldProc:
    """communicate() times out: a process outside the killed group keeps the output open."""

    def __init__(self, output, stderr):
        self.stdout, self.stderr, self.output, self.err, self.asked = Pipe(), Pipe(), output, stderr, []

    def communicate(self, timeout):
        self.asked.append(timeout)
        exc = subprocess.TimeoutExpired("x", timeout, output=self.output, stderr=self.err)
        raise exc


@pytest.mark.parametrize(("output", "stderr", "out", "err_start"), [
    (b"part\xff", b"e", "part\ufffd", "e"),  # bytes as written: decoded with replacement
    ("text", "err", "text", "err"),
    (None, None, "", ""),
])
def test_drain_stops_reading_a_pipe_held_past_the_kill(output, stderr, out, err_start):
    proc = HeldProc(output, stderr)
    got = subproc._drain(proc)
    assert got == (out, err_start + "\n(rlcheck stopped reading: a process outside the killed group kept the output "
                                    "open past 5 s)")
    assert proc.asked == [subproc.DRAIN_S] and proc.stdout.closed and proc.stderr.closed


def test_drain_reads_what_the_killed_group_wrote():
    class Done:
        def communicate(self, timeout):
            return "o", "e"

    assert subproc._drain(Done()) == ("o", "e")


@pytest.mark.parametrize(("data", "text"), [(b"a\xffb", "a\ufffdb"), ("s", "s"), (None, ""), (3, "")])
def test_text_of_what_a_timeout_kept(data, text):
    assert subproc._text(data) == text


# --- subproc.child_env, python, start, concurrently -----------------------------------------------------------------


@pytest.mark.parametrize(("given", "existing", "expected"), [
    ((), "/old", "/old"),  # nothing to add: left alone
    (("/a", "/b"), "/old", f"/a{os.pathsep}/b{os.pathsep}/old"),
    (("/a",), None, "/a"),  # no PYTHONPATH before: no trailing separator
    (("/a",), "", "/a"),
])
def test_child_env_puts_side_directories_first(monkeypatch, given, existing, expected):
    if existing is None:
        monkeypatch.delenv("PYTHONPATH", raising=False)
    else:
        monkeypatch.setenv("PYTHONPATH", existing)
    env = subproc.child_env(given)
    assert env.get("PYTHONPATH") == expected
    assert env["PATH"] == os.environ["PATH"]  # the rest of this environment


def test_python_runs_a_snippet_with_side_directories_and_extra_env(tmp_path):
    (tmp_path / "side_mod_rlc.py").write_text("WHERE = 'side'\n")
    done = subproc.python("import os, side_mod_rlc; print(side_mod_rlc.WHERE, os.environ['RLC_Y'])", timeout_s=30,
                          pythonpath=[str(tmp_path)], env={"RLC_Y": "y"}, cwd=str(tmp_path))
    assert (done.stdout, done.returncode, done.argv[0]) == ("side y\n", 0, sys.executable)


def test_start_runs_a_child_in_its_own_group_with_stdout_discarded():
    proc = subproc.start([sys.executable, "-c", "import sys; print('x'); print('err', file=sys.stderr)"])
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        subproc.kill_group(proc)
    assert err == "err\n" and proc.stdout is None and os.getpgid(0) != proc.pid


def test_concurrently_returns_each_result_in_order():
    assert subproc.concurrently(lambda: 1, lambda: "b", lambda: None) == [1, "b", None]
    assert subproc.concurrently() == []


# --- how each child is started (a recording Popen) -------------------------------------------------------------------


class RecordingPopen:
    """subprocess.Popen recorded: its argv and keyword arguments; it ends at once with code 0 (poll: `alive`)."""

    calls: list = []
    made: list = []

    def __init__(self, argv, **kwargs):
        RecordingPopen.calls.append((argv, kwargs))
        RecordingPopen.made.append(self)
        self.pid, self.returncode, self.communicated, self.alive = 4242, 0, [], True

    def communicate(self, input=None, timeout=None):
        self.communicated.append((input, timeout))
        return "out", "err"

    def poll(self):
        return None if self.alive else 0


@pytest.fixture
def popen(monkeypatch):
    RecordingPopen.calls, RecordingPopen.made = [], []
    monkeypatch.setattr(subproc.subprocess, "Popen", RecordingPopen)
    return RecordingPopen.calls


@pytest.mark.parametrize(("stdin", "env", "cwd"), [(None, None, None), ("in", {"A": "1"}, "/w")])
def test_run_starts_its_child_in_its_own_group_with_pipes(popen, stdin, env, cwd):
    done = subproc.run(("a", "b"), timeout_s=7.5, env=env, cwd=cwd, stdin=stdin)
    assert popen == [(["a", "b"], {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True,
                                   "stdin": subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                   "env": env, "cwd": cwd, "start_new_session": True})]
    assert done == subproc.Completed(argv=("a", "b"), returncode=0, stdout="out", stderr="err", timed_out=False)
    assert RecordingPopen.made[0].communicated == [(stdin, 7.5)]


def test_start_runs_a_background_child_in_its_own_group(popen):
    proc = subproc.start(("a",), env={"B": "2"})
    assert isinstance(proc, RecordingPopen)
    assert popen == [(["a"], {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "text": True,
                              "stdin": subprocess.DEVNULL, "env": {"B": "2"}, "start_new_session": True})]
    subproc.start(["b"])
    assert popen[1][1]["env"] is None


def test_python_runs_this_interpreter_with_the_merged_environment(monkeypatch):
    asked = []
    monkeypatch.setattr(subproc, "run", lambda argv, **kw: asked.append((argv, kw)) or "done")
    monkeypatch.setattr(subproc, "child_env", lambda pythonpath: {"PYTHONPATH": ":".join(pythonpath), "X": "base"})
    assert subproc.python("print(1)", timeout_s=9.0, pythonpath=["/s"], env={"X": "mine"}, cwd="/w") == "done"
    assert asked == [([sys.executable, "-c", "print(1)"], {"timeout_s": 9.0, "env": {"PYTHONPATH": "/s", "X": "mine"},
                                                           "cwd": "/w"})]
    subproc.python("x", timeout_s=1.0)
    assert asked[1][1] == {"timeout_s": 1.0, "env": {"PYTHONPATH": "", "X": "base"}, "cwd": None}


def test_run_at_its_deadline_keeps_its_argv_and_both_streams(popen, monkeypatch):
    class Slow(RecordingPopen):
        def communicate(self, input=None, timeout=None):
            self.communicated.append((input, timeout))
            if len(self.communicated) == 1:
                raise subprocess.TimeoutExpired("srv", timeout)
            return "started\n", "warming up\n"  # what the killed group wrote

    killed: list = []
    monkeypatch.setattr(subproc.subprocess, "Popen", Slow)
    monkeypatch.setattr(subproc, "kill_group", killed.append)
    done = subproc.run(["srv", "--port", "8000"], timeout_s=2.0)
    assert done == subproc.Completed(argv=("srv", "--port", "8000"), returncode=None, stdout="started\n",
                                     stderr="warming up\n", timed_out=True)
    assert killed == RecordingPopen.made and RecordingPopen.made[0].communicated == [(None, 2.0), (None, 5.0)]


@pytest.mark.parametrize(("ok", "alive_after", "exited_early", "killed"), [
    (True, True, False, True),  # answered: the server is stopped
    (False, True, False, True),  # the deadline: stopped all the same
    (False, False, True, False),  # it ended on its own before answering
    (True, False, False, False),  # answered, then ended by itself: not early
])
def test_serve_and_probe_always_stops_the_server(popen, monkeypatch, ok, alive_after, exited_early, killed):
    seen, stopped = [], []

    def wait_http_ok(url, *, timeout_s, alive):
        seen.append((url, timeout_s, alive()))
        proc_of = popen_procs[-1]
        proc_of.alive = alive_after
        return wait.WaitResult(ok=ok, elapsed_s=2.5, attempts=3, last_error="" if ok else "refused")

    popen_procs = []
    real_init = RecordingPopen.__init__

    def init(self, argv, **kwargs):
        real_init(self, argv, **kwargs)
        popen_procs.append(self)

    monkeypatch.setattr(RecordingPopen, "__init__", init)
    monkeypatch.setattr(wait, "wait_http_ok", wait_http_ok)
    monkeypatch.setattr(subproc, "kill_group", lambda proc: stopped.append(proc))
    served = subproc.serve_and_probe(["srv", "-p"], "http://127.0.0.1:1/", timeout_s=12.0, env={"E": "1"})
    assert seen == [("http://127.0.0.1:1/", 12.0, True)]  # alive() is the server's poll
    assert popen[0] == (["srv", "-p"], {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True,
                                        "stdin": subprocess.DEVNULL, "env": {"E": "1"}, "start_new_session": True})
    assert (served.answered, served.exited_early, served.elapsed_s) == (ok, exited_early, 2.5)
    assert (len(stopped) == 1) is killed and popen_procs[0].communicated == [(None, 10)]
    assert served.output == subproc.Completed(argv=("srv", "-p"), returncode=0, stdout="out", stderr="err",
                                              timed_out=False)


def test_concurrently_runs_every_call_at_once():
    import threading

    together = threading.Barrier(3, timeout=10)  # three calls meet only if all three run at the same time
    assert subproc.concurrently(*(lambda i=i: together.wait() * 0 + i for i in range(3))) == [0, 1, 2]
    # more calls than ThreadPoolExecutor's own default of min(32, cores + 4) threads: still one thread each
    many = threading.Barrier(33, timeout=10)
    assert subproc.concurrently(*(lambda i=i: many.wait() * 0 + i for i in range(33))) == list(range(33))
