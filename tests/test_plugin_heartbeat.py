"""The progress lines' writer process: the events it reads, the lines it writes, when it ends, and that it speaks
while pytest's interpreter holds its GIL."""

from __future__ import annotations

import ctypes
import os
import time
from pathlib import Path

import pytest

from rlcheck.plugin import heartbeat, progress
from rlcheck.plugin.heartbeat import Heartbeat


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _beat(every_s: float = 5.0) -> tuple[Heartbeat, Clock, list[str]]:
    clock, said = Clock(), []
    return Heartbeat(every_s, said.append, clock), clock, said


def test_events_as_pytest_sends_them():
    beat, clock, said = _beat()
    rest = heartbeat.feed(beat, b"", b'["phase", "collecting and starting"]\n["start", 98.0, "t a.py::x"]\n["spo')
    assert rest == b'["spo'
    assert beat.phase is None and beat.running == {"t a.py::x": 98.0}  # the time pytest gave, not the reading's
    rest = heartbeat.feed(beat, rest, b'ke", 101.0]\n')
    assert (rest, beat.last) == (b"", 101.0)
    clock.now = 105.9
    beat.tick()
    assert said == []
    clock.now = 106.0
    beat.tick()
    assert said == ["rlcheck: still running t a.py::x (8 s)"]
    heartbeat.feed(beat, b"", b'["finish", "t a.py::x"]\n')
    assert beat.running == {}


def test_an_older_spoke_never_moves_the_silence_back():
    """A late event (pytest's interpreter held up) reports output from before the writer's own last line."""
    beat, clock, said = _beat()
    clock.now = 110.0
    beat.tick()
    assert said == ["rlcheck: collecting and starting (10 s since the run began)"]
    beat.spoke(104.0)
    assert beat.last == 110.0
    beat.spoke(111.0)
    assert beat.last == 111.0


@pytest.mark.parametrize("line", [b"not json", b'{"start": 1}', b'["start", "t1"]', b'["start", 1.0, 2]',
                                  b'["finish"]', b'["spoke", "now"]', b'["phase", 3]', b'["stop"]', b"[]"])
def test_events_of_another_shape_are_ignored(line):
    beat, _, _ = _beat()
    heartbeat.feed(beat, b"", line + b"\n")
    assert (beat.running, beat.last, beat.phase) == ({}, 100.0, "collecting and starting")


def test_the_first_silence_counts_from_the_given_start():
    clock, said = Clock(), []
    beat = Heartbeat(5.0, said.append, clock, started=96.0)
    clock.now = 100.9
    beat.tick()
    assert said == []
    clock.now = 101.0
    beat.tick()
    assert said == ["rlcheck: collecting and starting (5 s since the run began)"]


def test_serve_speaks_on_silence_and_ends_at_end_of_input():
    beat, clock, said = _beat(every_s=1.0)
    read, write = os.pipe()
    os.write(write, b'["start", 100.0, "t1"]\n')

    def alive() -> bool:
        clock.now += 1
        return True

    try:
        os.close(write)
        heartbeat.serve(beat, read, alive, tick_s=0.0)
    finally:
        os.close(read)
    assert said == ["rlcheck: still running t1 (1 s)"]  # one tick after the event, then end of input


def test_serve_ends_once_the_parent_is_gone():
    beat, _, said = _beat()
    read, write = os.pipe()
    try:
        heartbeat.serve(beat, read, lambda: False)  # returns without reading: the write end still open
    finally:
        os.close(read)
        os.close(write)
    assert said == []


def _stat(tmp_path: Path, age_s: float) -> Path:
    ticks = int((time.clock_gettime(time.CLOCK_BOOTTIME) - age_s) * os.sysconf("SC_CLK_TCK"))
    fields = ["S", *["0"] * 18, str(ticks), "0"]  # field 3 (state) ... field 22 (starttime)
    path = tmp_path / "stat"
    path.write_text(f"1234 (py thon) {' '.join(fields)}\n")  # a name with a space and a ')' before the last one
    return path


@pytest.mark.parametrize(("age_s", "expected"), [(10.0, 990.0), (59.0, 941.0), (61.0, 1000.0), (-5.0, 1000.0)])
def test_process_started_from_proc_stat(tmp_path, age_s, expected):
    """Counted from the interpreter's start while that is under a minute ago; now otherwise (or in the future)."""
    assert progress.process_started(_stat(tmp_path, age_s), clock=lambda: 1000.0) == pytest.approx(expected, abs=0.1)


@pytest.mark.parametrize("text", [None, "", "1234 (py)", "1234 (py) S 0 x"])
def test_process_started_unreadable_is_now(tmp_path, text):
    path = tmp_path / "stat"
    if text is not None:
        path.write_text(text)
    assert progress.process_started(path, clock=lambda: 1000.0) == 1000.0


def test_process_started_of_this_interpreter():
    assert progress.process_started() <= time.monotonic()


def test_terminal_fd_is_the_descriptor_pytest_saved(pytestconfig):
    capman = pytestconfig.pluginmanager.get_plugin("capturemanager")
    saved = getattr(capman._global_capturing.out, "targetfd_save", 1) if capman._global_capturing else 1
    assert progress.terminal_fd(pytestconfig) == saved


def test_writer_speaks_while_this_interpreter_holds_the_gil(tmp_path):
    """The 12 s of silence on a cold run: a thread of pytest's needs the GIL to write, the writer process does not.
    libc's sleep through ctypes.PyDLL keeps the GIL, as a C extension's import does."""
    path = tmp_path / "terminal"
    with path.open("wb") as terminal:
        writer = progress.Writer(0.5, terminal.fileno(), time.monotonic())
        try:
            writer.send("start", time.monotonic(), "t1")
            ctypes.PyDLL(None).sleep(3)
            during = path.read_text()
        finally:
            writer.stop()
    # a thread gets the GIL back as the hold ends and writes one line then: more than one was written during it
    assert during.count("\nrlcheck: still running t1 (") >= 2, during
    assert writer.proc.returncode == 0
    after = path.read_text()
    writer.send("spoke", 1.0)  # after stop: nothing, no error
    assert path.read_text() == after
