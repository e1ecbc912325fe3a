"""The progress lines' writer, a process of its own: no silence over --progress-s, whatever pytest's interpreter does.

A thread of pytest's own interpreter needs its GIL to write; an import of a C extension (a large shared library
loading from a cold disk) or a starved interpreter among many threads on a loaded host held it for up to 12 s
(measured on the cold main job with a 5 s interval). This process holds no lock of pytest's: rlcheck.plugin.progress
starts it as `python -I -S heartbeat.py EVERY_S STARTED`, its stdout the terminal pytest saved before capturing, and
feeds it one JSON array a line on stdin: ["start", t, nodeid], ["finish", nodeid], ["spoke", t], ["phase", text]
(t from time.monotonic(), one clock for every process of the machine). It ends at end of input (pytest closed the
pipe, or died) or once its parent is gone, and leaves Ctrl-C to pytest. The standard library only: it starts in
milliseconds (no site-packages: -S).
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

TICK_S = 0.5


class Heartbeat:
    """What runs and since when; speaks through `say` after `every_s` of silence (clock injectable for tests)."""

    def __init__(self, every_s: float, say: Callable[[str], None], clock: Callable[[], float] = time.monotonic,
                 started: float | None = None):
        self.every_s, self.say, self.clock = every_s, say, clock
        self.lock = threading.Lock()
        self.running: dict[str, float] = {}
        self.started = self.last = clock() if started is None else started
        """When the run began (its interpreter's start, when known): the first silence counts from there."""
        self.phase: str | None = "collecting and starting"
        """What the run does before its first test (None once one started)."""

    def start(self, nodeid: str, at: float | None = None) -> None:
        with self.lock:
            self.phase = None
            self.running[nodeid] = self.clock() if at is None else at

    def finish(self, nodeid: str) -> None:
        with self.lock:
            self.running.pop(nodeid, None)

    def spoke(self, at: float | None = None) -> None:
        """pytest wrote something (a test's outcome): the silence starts again."""
        with self.lock:
            self.last = max(self.last, self.clock() if at is None else at)

    def line(self) -> str | None:
        """The line to write now, or None while the run is not silent for long enough."""
        with self.lock:
            now = self.clock()
            if now - self.last < self.every_s:
                return None
            self.last = now
            if self.running:
                nodeid, since = min(self.running.items(), key=lambda kv: kv[1])
                more = f"; {len(self.running) - 1} more running" if len(self.running) > 1 else ""
                return f"rlcheck: still running {nodeid} ({now - since:.0f} s){more}"
            what = self.phase or "between tests"
            return f"rlcheck: {what} ({now - self.started:.0f} s since the run began)"

    def tick(self) -> None:
        text = self.line()
        if text:
            self.say(text)


def apply(beat: Heartbeat, event: list[Any]) -> None:
    """One event from pytest; an event of another shape is ignored (a newer parent, a torn line)."""
    match event:
        case ["start", float() | int() as at, str() as nodeid]:
            beat.start(nodeid, at)
        case ["finish", str() as nodeid]:
            beat.finish(nodeid)
        case ["spoke", float() | int() as at]:
            beat.spoke(at)
        case ["phase", str() as text]:
            with beat.lock:
                beat.phase = text


def feed(beat: Heartbeat, pending: bytes, data: bytes) -> bytes:
    """Apply the whole lines of pending + data; returns the part of a line still to come."""
    *lines, rest = (pending + data).split(b"\n")
    for raw in lines:
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if isinstance(event, list):
            apply(beat, event)
    return rest


def serve(beat: Heartbeat, events_fd: int, alive: Callable[[], bool], tick_s: float = TICK_S) -> None:
    """Read events and speak on silence until end of input or until `alive` says the parent is gone."""
    pending = b""
    while alive():
        ready, _, _ = select.select([events_fd], [], [], tick_s)
        if ready:
            data = os.read(events_fd, 65536)
            if not data:
                return
            pending = feed(beat, pending, data)
        beat.tick()


def _write_line(text: str) -> None:
    os.write(1, f"\n{text}\n".encode())  # on a line of its own, whatever pytest's last write left on the current one


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()
    beat = Heartbeat(float(argv[0]), _write_line, started=float(argv[1]))
    try:
        serve(beat, sys.stdin.fileno(), lambda: os.getppid() == parent)
    except OSError:  # the terminal or the pipe went away: nothing left to speak to
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
