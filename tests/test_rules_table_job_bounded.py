"""Rule table for reading what a sandboxed script hands back within bounds (rlcheck.job.bounded): a pipe read until
it closes, the deadline passes or the cap is crossed (both sides of each), only its tail kept; the call record read
up to its cap, never through a planted link, a planted directory or FIFO read as nothing."""

from __future__ import annotations

import fcntl
import os
import time

import pytest

from rlcheck.job import bounded
from rlcheck.job.bounded import Output

F_SETPIPE_SZ = 1031  # Linux: a pipe that holds a whole test input, so the writer never blocks


@pytest.fixture
def pipe():
    """(read end as a file, write(data, close=True)): the data sits in the pipe before pump reads it."""
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
    closed = []

    def write(data: bytes, close: bool = True) -> None:
        os.write(w, data)
        if close:
            os.close(w)
            closed.append(w)

    with os.fdopen(r, "rb") as stream:
        yield stream, write
    if not closed:
        os.close(w)


class Clock:
    """time.monotonic for bounded: `now` (a deadline is relative to it)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


@pytest.mark.parametrize(("data", "cap", "tail_bytes", "out"), [
    (b"", 10, 4, Output(tail="", read_bytes=0, eof=True, over_cap=False)),
    (b"abc", 10, 4, Output(tail="abc", read_bytes=3, eof=True, over_cap=False)),
    (b"abcdef", 10, 4, Output(tail="cdef", read_bytes=6, eof=True, over_cap=False)),  # the last tail_bytes only
    (b"abcd", 10, 4, Output(tail="abcd", read_bytes=4, eof=True, over_cap=False)),
    (b"0123456789", 10, 4, Output(tail="6789", read_bytes=10, eof=True, over_cap=False)),  # at the cap: read on
    (b"0123456789A", 10, 4, Output(tail="789A", read_bytes=11, eof=False, over_cap=True)),  # past it: stopped
    (b"ok \xff\xfe end", 100, 100, Output(tail="ok \ufffd\ufffd end", read_bytes=9, eof=True, over_cap=False)),
    (b"x" * 70000, 0, 5, Output(tail="xxxxx", read_bytes=1 << 16, eof=False, over_cap=True)),  # 64 KiB reads
    (b"x" * 70000 + b"yz", 1 << 16, 3, Output(tail="xyz", read_bytes=70002, eof=False, over_cap=True)),
    (b"x" * 70000 + b"yz", 70002, 3, Output(tail="xyz", read_bytes=70002, eof=True, over_cap=False)),
])
def test_pump_reads_to_the_end_or_the_cap_keeping_the_tail(pipe, data, cap, tail_bytes, out):
    stream, write = pipe
    write(data)
    assert bounded.pump(stream, deadline=time.monotonic() + 60, cap_bytes=cap, tail_bytes=tail_bytes) == out


def test_pump_keeps_the_tail_across_many_reads(pipe):
    stream, write = pipe
    write(b"a" * (1 << 16) + b"b" * (1 << 16) + b"c" * 10)
    out = bounded.pump(stream, deadline=time.monotonic() + 60, tail_bytes=1 << 16)
    assert out == Output(tail="b" * ((1 << 16) - 10) + "c" * 10, read_bytes=(2 << 16) + 10, eof=True,
                         over_cap=False)


@pytest.mark.parametrize("left", [0.0, -1.0])
def test_pump_past_its_deadline_reads_nothing_more(monkeypatch, pipe, left):
    stream, write = pipe
    write(b"waiting", close=False)
    monkeypatch.setattr(bounded, "time", Clock(100.0))
    assert bounded.pump(stream, deadline=100.0 + left) == Output(tail="", read_bytes=0, eof=False, over_cap=False)


def test_pump_waits_for_output_until_the_deadline_then_stops_with_what_it_read(monkeypatch, pipe):
    stream, write = pipe
    write(b"started\n", close=False)  # the writer is still there, silent
    monkeypatch.setattr(bounded, "time", Clock(100.0))
    out = bounded.pump(stream, deadline=100.001, tail_bytes=4)
    assert out == Output(tail="ted\n", read_bytes=8, eof=False, over_cap=False)


def test_the_default_bounds():
    assert (bounded.OUTPUT_CAP_BYTES, bounded.TAIL_BYTES, bounded.RECORD_CAP_BYTES) == (32 << 20, 64 << 10, 4 << 20)


@pytest.mark.parametrize(("data", "cap", "read"), [
    (b"", 4, ("", False)),
    (b"abc", 4, ("abc", False)),
    (b"abcd", 4, ("abcd", False)),  # at the cap: all of it
    (b"abcde", 4, ("abcd", True)),  # past it: its start, and that there was more
    (b'{"cmd": "ray"}\n\xff', 100, ('{"cmd": "ray"}\n\ufffd', False)),
])
def test_read_capped_reads_the_start_of_a_file_up_to_the_cap(tmp_path, data, cap, read):
    path = tmp_path / "calls.jsonl"
    path.write_bytes(data)
    assert bounded.read_capped(str(path), cap) == read


def test_read_capped_default_cap_is_the_record_cap(tmp_path):
    path = tmp_path / "calls.jsonl"
    path.write_bytes(b"r" * (bounded.RECORD_CAP_BYTES + 1))
    text, over = bounded.read_capped(str(path))
    assert (len(text), over) == (bounded.RECORD_CAP_BYTES, True)
    path.write_bytes(b"r" * bounded.RECORD_CAP_BYTES)
    assert bounded.read_capped(str(path))[1] is False


def test_read_capped_of_an_endless_file_stops_at_the_cap():
    assert bounded.read_capped("/dev/zero", 5) == ("\0" * 5, True)


@pytest.mark.parametrize("planted", ["missing", "link", "directory", "fifo"])
def test_read_capped_reads_nothing_from_what_a_script_planted_instead_of_its_record(tmp_path, planted):
    secret = tmp_path / "secret"
    secret.write_text("HF_TOKEN=hf_abc\n", encoding="utf-8")
    path = tmp_path / "calls.jsonl"
    if planted == "link":
        path.symlink_to(secret)
    elif planted == "directory":
        path.mkdir()
    elif planted == "fifo":
        os.mkfifo(path)  # no writer: a blocking open would wait for one forever
    assert bounded.read_capped(str(path)) == ("", False)
