"""Rule table for the pytest side of the progress lines (rlcheck.plugin.progress): when this interpreter started
(the first silence counts from there), which terminal the writer speaks to, the writer process as it is started,
fed and stopped (a gone or full pipe never stalls a test), the events each hook sends, and when a run gets a writer
at all (--progress-s=0, an xdist worker, a second registration, no process to be had). What the writer says is
tests/test_plugin_heartbeat.py's; the pytester runs of tests/test_plugin_progress.py show both in a real run."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import types

import pytest

from rlcheck.plugin import heartbeat, progress
from rlcheck.plugin.progress import ProgressPlugin, Writer

TCK = os.sysconf("SC_CLK_TCK")
BOOT = 5000.0
"""The boot clock's reading in these rows (seconds since boot)."""


def _stat(tmp_path, starttime: str, comm: str = "python3") -> object:
    """A /proc/self/stat line: pid (comm) state, then fields 4 on; field 22 is starttime (ticks after boot)."""
    fields = ["S", *(str(n) for n in range(4, 22)), starttime, *(str(n) for n in range(23, 53))]
    path = tmp_path / "stat"
    path.write_text(f"4242 ({comm}) {' '.join(fields)}\n")
    return path


@pytest.fixture
def boot_clock(monkeypatch):
    real = time.clock_gettime
    monkeypatch.setattr(progress.time, "clock_gettime",
                        lambda clock: BOOT if clock == time.CLOCK_BOOTTIME else real(clock))


@pytest.mark.parametrize(("age_s", "started"), [
    (10.0, 990.0),
    (0.5, 999.5),
    (0.0, 1000.0),
    (60.0, 940.0),  # a minute: still this run's own start-up
    (61.0, 1000.0),  # older: it ran other things before this pytest run
    (-5.0, 1000.0),  # a start after now cannot be: now
])
def test_the_interpreters_start_is_its_stat_start_time_unless_older_than_a_minute(tmp_path, boot_clock, age_s,
                                                                                   started):
    ticks = round((BOOT - age_s) * TCK)
    assert progress.process_started(_stat(tmp_path, str(ticks)), lambda: 1000.0) == started


def test_a_command_name_holding_a_parenthesis_is_read_past(tmp_path, boot_clock):
    stat = _stat(tmp_path, str(round((BOOT - 10.0) * TCK)), comm="a) 1 2 (b")
    assert progress.process_started(stat, lambda: 1000.0) == 990.0


@pytest.mark.parametrize("text", ["", "4242 (python3 S 1 2", "4242 (python3) S 1 2 3\n", "4242 (py) " + "x " * 30])
def test_a_stat_that_cannot_be_read_means_now(tmp_path, boot_clock, text):
    path = tmp_path / "stat"
    path.write_text(text)
    assert progress.process_started(path, lambda: 1000.0) == 1000.0
    assert progress.process_started(tmp_path / "absent", lambda: 7.0) == 7.0


def test_the_interpreters_start_on_this_machine_is_at_most_now():
    before = time.monotonic()
    assert progress.process_started() <= time.monotonic()
    assert progress.process_started(clock=lambda: before) <= before


# --- the terminal ---------------------------------------------------------------------------------------------------
def _config_with_capture(capman: object):
    plugins = {"capturemanager": capman}
    return types.SimpleNamespace(pluginmanager=types.SimpleNamespace(get_plugin=plugins.get))


def _capman(saved: object):
    return types.SimpleNamespace(_global_capturing=types.SimpleNamespace(out=types.SimpleNamespace(
        targetfd_save=saved)))


@pytest.mark.parametrize(("capman", "fd"), [
    (_capman(7), 7),
    (_capman(0), 0),
    (_capman("7"), 1),
    (_capman(None), 1),
    (types.SimpleNamespace(_global_capturing=types.SimpleNamespace(out=None)), 1),  # -s: no capture of stdout
    (types.SimpleNamespace(_global_capturing=None), 1),
    (types.SimpleNamespace(), 1),
    (None, 1),
])
def test_the_writer_speaks_to_the_descriptor_fd_capture_saved_else_to_stdout(capman, fd):
    assert progress.terminal_fd(_config_with_capture(capman)) == fd  # type: ignore[arg-type]


# --- the writer -----------------------------------------------------------------------------------------------------
class _Proc:
    """subprocess.Popen as the Writer uses it: stdin a real pipe (whose other end the test reads)."""

    made: list[_Proc] = []

    def __init__(self, args, **kwargs) -> None:
        self.args, self.kwargs = args, kwargs
        read_fd, write_fd = os.pipe()
        self.read = os.fdopen(read_fd, "rb")
        self.stdin = os.fdopen(write_fd, "wb")
        self.waits: list[float | None] = []
        self.killed = False
        self.hangs = False
        _Proc.made.append(self)

    def wait(self, timeout: float | None = None) -> int:
        self.waits.append(timeout)
        if self.hangs and not self.killed:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return 0

    def kill(self) -> None:
        self.killed = True

    def events(self) -> list[list[object]]:
        return [json.loads(line) for line in self.read.read().splitlines()]


@pytest.fixture
def procs(monkeypatch):
    _Proc.made = []
    monkeypatch.setattr(progress.subprocess, "Popen", _Proc)
    yield _Proc.made
    for proc in _Proc.made:
        proc.read.close()
        if proc.stdin is not None and not proc.stdin.closed:
            proc.stdin.close()


def test_the_writer_is_the_heartbeat_script_isolated_fed_on_a_pipe_that_never_blocks(procs):
    writer = Writer(2.5, 9, 123.25)
    (proc,) = procs
    assert proc.args == [sys.executable, "-I", "-S", heartbeat.__file__, "2.5", "123.25"]
    assert proc.kwargs == {"stdin": subprocess.PIPE, "stdout": 9, "stderr": subprocess.DEVNULL}
    assert writer.fd == proc.stdin.fileno()
    assert os.get_blocking(writer.fd) is False


def test_each_event_is_one_json_array_a_line(procs):
    writer = Writer(5.0, 1, 0.0)
    writer.send("start", 1.5, "checks/test_x.py::test_x")
    writer.send("phase", "starting")
    writer.stop()
    assert procs[0].events() == [["start", 1.5, "checks/test_x.py::test_x"], ["phase", "starting"]]


def test_a_full_or_gone_pipe_loses_a_line_and_never_stalls_or_raises(procs):
    writer = Writer(5.0, 1, 0.0)
    for _ in range(100):  # 100 kB, more than a pipe holds: the writer is not reading
        writer.send("phase", "x" * 1000)
    circular: list[object] = []
    circular.append(circular)
    writer.send("phase", circular)  # not JSON: lost as well
    procs[0].stdin.close()
    writer.send("spoke", 2.0)


def test_stop_closes_the_input_and_waits_the_bounded_time(procs):
    writer = Writer(5.0, 1, 0.0)
    writer.stop()
    proc = procs[0]
    assert (proc.stdin.closed, proc.waits, proc.killed) == (True, [progress.STOP_S], False)
    assert progress.STOP_S == 2.0
    writer.stop()  # the session's end, then the config's cleanup: the input is closed once
    assert proc.waits == [2.0, 2.0]


def test_a_writer_that_does_not_go_in_time_is_killed_and_reaped(procs):
    writer = Writer(5.0, 1, 0.0)
    procs[0].hangs = True
    writer.stop()
    assert (procs[0].killed, procs[0].waits) == (True, [2.0, None])


def test_stop_without_an_input_pipe_still_waits(procs):
    writer = Writer(5.0, 1, 0.0)
    procs[0].stdin.close()
    procs[0].stdin = None
    writer.stop()
    assert procs[0].waits == [2.0]


def test_a_real_writer_process_ends_at_end_of_input():
    read_fd, write_fd = os.pipe()
    try:
        writer = Writer(600.0, write_fd, time.monotonic())
        writer.stop()
        assert writer.proc.returncode == 0
    finally:
        os.close(read_fd)
        os.close(write_fd)


# --- the hooks ------------------------------------------------------------------------------------------------------
def _config(**attrs: object):
    cleanups: list[object] = []
    plugins: dict[str, object] = {}
    manager = types.SimpleNamespace(get_plugin=lambda name: None, has_plugin=plugins.__contains__,
                                    register=lambda plugin, name: plugins.__setitem__(name, plugin), plugins=plugins)
    return types.SimpleNamespace(pluginmanager=manager, add_cleanup=cleanups.append, cleanups=cleanups, **attrs)


def test_the_plugin_tells_the_writer_each_phase_start_finish_and_output(procs, monkeypatch):
    monkeypatch.setattr(progress, "process_started", lambda: 42.5)
    config = _config()
    plugin = ProgressPlugin(config, 3.0)  # type: ignore[arg-type]
    (proc,) = procs
    assert proc.args[-2:] == ["3.0", "42.5"] and proc.kwargs["stdout"] == 1
    assert config.cleanups == [plugin.writer.stop]
    before = time.monotonic()
    plugin.pytest_sessionstart(None)  # type: ignore[arg-type]
    plugin.pytest_runtest_logstart("checks/test_x.py::test_x", None)
    plugin.pytest_runtest_logreport(None)  # type: ignore[arg-type]
    plugin.pytest_runtest_logfinish("checks/test_x.py::test_x", None)
    plugin.pytest_sessionfinish(None)  # type: ignore[arg-type]
    after = time.monotonic()
    assert not proc.stdin.closed  # the writer stays through the unconfigure hooks: the config's cleanup stops it
    plugin.writer.stop()
    events = proc.events()
    assert [e[:1] + e[2:] for e in events] == [["phase"], ["phase"], ["start", "checks/test_x.py::test_x"], ["spoke"],
                                               ["finish"], ["spoke"], ["phase"]]
    assert events[0] == ["phase", "starting"] and events[1] == ["phase", "collecting and starting"]
    assert events[4] == ["finish", "checks/test_x.py::test_x"]
    assert events[6] == ["phase", "finishing: stopping what the run started"]
    assert before <= events[2][1] <= events[3][1] <= events[5][1] <= after


# --- when a run gets a writer ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("every_s", "attrs", "env", "registered"), [
    (5.0, {}, None, True),
    (0.01, {}, "", True),  # an empty PYTEST_XDIST_WORKER is no worker
    (0.0, {}, None, False),  # --progress-s=0: off
    (-1.0, {}, None, False),
    (5.0, {"workerinput": {}}, None, False),  # xdist's worker: the controller speaks for it
    (5.0, {}, "gw1", False),
])
def test_a_run_gets_one_writer_unless_off_or_an_xdist_worker(procs, monkeypatch, every_s, attrs, env, registered):
    if env is None:
        monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    else:
        monkeypatch.setenv("PYTEST_XDIST_WORKER", env)
    config = _config(**attrs)
    progress._start(config, every_s)  # type: ignore[arg-type]
    assert list(config.pluginmanager.plugins) == (["rlcheck-progress"] if registered else [])
    assert len(procs) == int(registered)
    if registered:
        assert isinstance(config.pluginmanager.plugins["rlcheck-progress"], ProgressPlugin)
        assert procs[0].args[-2] == repr(every_s)
    progress._start(config, every_s)  # type: ignore[arg-type]  # configure after the early hook: not a second one
    assert len(procs) == int(registered)


def test_a_run_without_a_writer_process_says_so_once_and_goes_on(monkeypatch):
    def no_process(*args, **kwargs):
        raise OSError(24, "Too many open files")
    monkeypatch.setattr(progress.subprocess, "Popen", no_process)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.setattr(sys, "stderr", err := io.StringIO())
    config = _config()
    progress._start(config, 5.0)  # type: ignore[arg-type]
    assert err.getvalue() == "rlcheck: no progress lines in this run ([Errno 24] Too many open files)\n"
    assert config.pluginmanager.plugins == {}
