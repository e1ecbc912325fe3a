"""Rule table for the progress lines' writer (rlcheck.plugin.heartbeat), its clock a stand-in: when a silence is long
enough to speak (both sides of --progress-s), the line's words (the longest-running test, how many more, the phase
before the first test, between tests), each event's shape taken or ignored, a line torn across reads, when serve
reads, speaks and ends, and main's wiring (its interval and start, stdin, the parent check, Ctrl-C left to pytest, a
closed pipe). tests/test_plugin_heartbeat.py runs the writer as its own process beside a GIL held for seconds."""

from __future__ import annotations

import os
import select
import signal
import sys
import time
import types

import pytest

from rlcheck.plugin import heartbeat
from rlcheck.plugin.heartbeat import Heartbeat


class Clock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _beat(every_s: float = 5.0, started: float | None = None) -> tuple[Heartbeat, Clock, list[str]]:
    clock, said = Clock(), []
    return Heartbeat(every_s, said.append, clock, started=started), clock, said


def test_the_tick():
    assert heartbeat.TICK_S == 0.5


# --- when it speaks and what it says ---------------------------------------------------------------------------------


def test_a_new_beat_starts_its_silence_now_in_the_starting_phase():
    beat, _, _ = _beat()
    assert (beat.started, beat.last, beat.phase, beat.running, beat.every_s) == (
        100.0, 100.0, "collecting and starting", {}, 5.0)


def test_a_given_start_is_both_the_runs_start_and_its_last_word():
    beat, _, _ = _beat(started=90.0)
    assert (beat.started, beat.last) == (90.0, 90.0)


@pytest.mark.parametrize(("now", "line"), [
    (104.9, None),
    (105.0, "rlcheck: collecting and starting (5 s since the run began)"),
    (112.6, "rlcheck: collecting and starting (13 s since the run began)"),
])
def test_it_speaks_once_the_silence_reaches_every_s(now, line):
    beat, clock, _ = _beat()
    clock.now = now
    assert beat.line() == line
    assert beat.last == (100.0 if line is None else now)


def test_after_speaking_the_silence_starts_again():
    beat, clock, said = _beat()
    clock.now = 105.0
    beat.tick()
    clock.now = 109.9
    beat.tick()
    clock.now = 110.0
    beat.tick()
    assert said == ["rlcheck: collecting and starting (5 s since the run began)",
                    "rlcheck: collecting and starting (10 s since the run began)"]


def test_the_run_began_at_its_given_start():
    beat, clock, _ = _beat(started=80.0)
    clock.now = 100.0
    assert beat.line() == "rlcheck: collecting and starting (20 s since the run began)"


@pytest.mark.parametrize(("running", "line"), [
    ({"a.py::x": 90.0}, "rlcheck: still running a.py::x (20 s)"),
    ({"a.py::x": 104.0, "b.py::y": 95.4}, "rlcheck: still running b.py::y (15 s); 1 more running"),
    ({"a.py::x": 95.0, "b.py::y": 96.0, "c.py::z": 97.0}, "rlcheck: still running a.py::x (15 s); 2 more running"),
])
def test_the_longest_running_test_is_named_with_how_many_more(running, line):
    beat, clock, _ = _beat()
    for nodeid, at in running.items():
        beat.start(nodeid, at)
    clock.now = 110.0
    assert beat.line() == line


def test_between_tests_once_a_test_ran():
    beat, clock, said = _beat()
    beat.start("a.py::x", 101.0)
    beat.finish("a.py::x")
    beat.finish("never.py::started")
    clock.now = 107.0
    beat.tick()
    assert said == ["rlcheck: between tests (7 s since the run began)"]


def test_start_without_a_time_is_now_and_ends_the_phase():
    beat, clock, _ = _beat()
    clock.now = 103.0
    beat.start("a.py::x")
    assert (beat.running, beat.phase) == ({"a.py::x": 103.0}, None)


@pytest.mark.parametrize(("at", "last"), [(None, 107.0), (103.0, 103.0), (99.0, 100.0), (108.0, 108.0)])
def test_spoke_moves_the_silence_forward_only(at, last):
    beat, clock, _ = _beat()
    clock.now = 107.0
    beat.spoke(at)
    assert beat.last == last


def test_tick_says_nothing_while_silent_enough():
    beat, clock, said = _beat()
    clock.now = 101.0
    beat.tick()
    assert said == []


# --- the events ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("event", "running", "last", "phase"), [
    (["start", 98.0, "t::a"], {"t::a": 98.0}, 100.0, None),
    (["start", 98, "t::a"], {"t::a": 98}, 100.0, None),
    (["finish", "t::old"], {}, 100.0, "collecting and starting"),
    (["spoke", 102.5], {"t::old": 90.0}, 102.5, "collecting and starting"),
    (["spoke", 103], {"t::old": 90.0}, 103, "collecting and starting"),
    (["phase", "running the cluster fan-out"], {"t::old": 90.0}, 100.0, "running the cluster fan-out"),
    # another shape: ignored
    (["start", "98", "t::a"], {"t::old": 90.0}, 100.0, "collecting and starting"),
    (["start", 98.0], {"t::old": 90.0}, 100.0, "collecting and starting"),
    (["start", 98.0, "t::a", "x"], {"t::old": 90.0}, 100.0, "collecting and starting"),
    (["finish", 3], {"t::old": 90.0}, 100.0, "collecting and starting"),
    (["spoke", "now"], {"t::old": 90.0}, 100.0, "collecting and starting"),
    (["phase", None], {"t::old": 90.0}, 100.0, "collecting and starting"),
    (["stop"], {"t::old": 90.0}, 100.0, "collecting and starting"),
    ([], {"t::old": 90.0}, 100.0, "collecting and starting"),
])
def test_each_event_as_pytest_sends_it(event, running, last, phase):
    beat, _, _ = _beat()
    beat.running["t::old"] = 90.0
    heartbeat.apply(beat, event)
    if event[:1] == ["start"] and len(running) == 1:
        running = {"t::old": 90.0, **running}
    assert (beat.running, beat.last, beat.phase) == (running, last, phase)


def test_feed_applies_whole_lines_and_keeps_the_torn_one():
    beat, _, _ = _beat()
    rest = heartbeat.feed(beat, b'["phase", "coll', b'ecting"]\n\nnot json\n{"start": 1}\n"text"\n["start", 99.0, "t')
    assert (rest, beat.phase, beat.running) == (b'["start", 99.0, "t', "collecting", {})
    assert heartbeat.feed(beat, rest, b'::a"]\n["spoke", 101.0]\n') == b""
    assert (beat.running, beat.last, beat.phase) == ({"t::a": 99.0}, 101.0, None)


def test_feed_goes_on_after_a_line_it_cannot_read():
    beat, _, _ = _beat()
    assert heartbeat.feed(beat, b"", b'not json\n\n["phase", "after"]\n') == b""
    assert beat.phase == "after"


def test_feed_of_no_newline_keeps_everything():
    beat, _, _ = _beat()
    assert heartbeat.feed(beat, b"", b'["spoke", 101.0]') == b'["spoke", 101.0]'
    assert beat.last == 100.0


# --- serve -----------------------------------------------------------------------------------------------------------


def _pipe(data: bytes, close: bool = True) -> tuple[int, int]:
    read, write = os.pipe()
    os.write(write, data)
    if close:
        os.close(write)
    return read, write


@pytest.fixture
def waits(monkeypatch):
    """select's timeouts as serve asked for them (the real select answers)."""
    asked: list[float] = []

    def recorded(r, w, x, timeout):
        asked.append(timeout)
        return select.select(r, w, x, timeout)
    monkeypatch.setattr(heartbeat, "select", types.SimpleNamespace(select=recorded))
    return asked


def test_serve_reads_then_speaks_on_each_turn_until_end_of_input(waits):
    beat, clock, said = _beat(every_s=1.0)
    read, _ = _pipe(b'["start", 100.0, "t1"]\n["start", 100.5, "t2"]\n')
    turns = []

    def alive() -> bool:
        clock.now += 1
        turns.append(clock.now)
        return True

    try:
        heartbeat.serve(beat, read, alive)
    finally:
        os.close(read)
    assert said == ["rlcheck: still running t1 (1 s); 1 more running"]
    assert waits == [0.5, 0.5]
    assert turns == [101.0, 102.0]  # the second turn reads the end of input and ends before it speaks


def test_serve_speaks_on_silence_when_nothing_comes(waits):
    beat, clock, said = _beat(every_s=1.0)
    read, write = _pipe(b"", close=False)
    turns = iter([True, True, False])

    def alive() -> bool:
        clock.now += 1
        return next(turns)

    try:
        heartbeat.serve(beat, read, alive, tick_s=0.01)
    finally:
        os.close(read)
        os.close(write)
    assert said == ["rlcheck: collecting and starting (1 s since the run began)",
                    "rlcheck: collecting and starting (2 s since the run began)"]
    assert waits == [0.01, 0.01]


def test_serve_ends_at_once_when_the_parent_is_gone():
    beat, clock, said = _beat(every_s=0.0)
    read, _ = _pipe(b'["start", 100.0, "t1"]\n')
    try:
        heartbeat.serve(beat, read, lambda: False)
    finally:
        os.close(read)
    assert (said, beat.running) == ([], {})


# --- main ------------------------------------------------------------------------------------------------------------


def test_write_line_puts_the_text_on_a_line_of_its_own(capfd):
    heartbeat._write_line("rlcheck: still running t1 (5 s)")
    assert capfd.readouterr().out == "\nrlcheck: still running t1 (5 s)\n"


@pytest.fixture
def sigint():
    before = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, before)


def test_main_reads_stdin_speaks_and_leaves_ctrl_c_to_pytest(monkeypatch, capfd, sigint):
    now = time.monotonic()
    read, _ = _pipe(f'["start", {now - 100.2}, "t::a"]\n'.encode())
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(fileno=lambda: read))
    try:
        assert heartbeat.main(["50", str(now - 300.0)]) == 0
    finally:
        os.close(read)
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert capfd.readouterr().out == "\nrlcheck: still running t::a (100 s)\n"


def test_main_counts_its_silence_from_the_given_start(monkeypatch, capfd, sigint):
    now = time.monotonic()
    read, _ = _pipe(b'["spoke", 0.0]\n')
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(fileno=lambda: read))
    try:
        assert heartbeat.main(["30", str(now - 40.2)]) == 0
    finally:
        os.close(read)
    assert capfd.readouterr().out == "\nrlcheck: collecting and starting (40 s since the run began)\n"


def test_main_says_nothing_before_its_interval(monkeypatch, capfd, sigint):
    now = time.monotonic()
    read, _ = _pipe(b'["spoke", 0.0]\n')
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(fileno=lambda: read))
    try:
        assert heartbeat.main(["60", str(now - 40.0)]) == 0
    finally:
        os.close(read)
    assert capfd.readouterr().out == ""


def test_main_ends_quietly_when_its_pipe_is_gone(monkeypatch, capfd, sigint):
    read, _ = _pipe(b"")
    os.close(read)  # select on a closed descriptor: OSError
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(fileno=lambda: read))
    assert heartbeat.main(["5", "0"]) == 0
    assert capfd.readouterr().out == ""
