"""Never silent while it works: a line naming what runs, and for how long, whenever the run said nothing for a while.

A reproducer that starts Ray, or collection that imports the stack, can take a minute without a dot. The controller
(also under xdist, whose workers report each test's start to it) keeps what is running and when anything was last
written; a daemon thread writes `rlcheck: still running <test> (<s> s)` after --progress-s seconds of silence.
`--progress-s=0` turns it off. The thread starts as soon as pytest has read its arguments (before conftest.py files
load and before the configure hooks detect the hardware), and stops once the session's fixtures are torn down.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

DEFAULT_S = 5.0
"""Below the 10 s a user waits before wondering: a GIL held for seconds by a C extension's import on a busy host (12.8 s
of silence measured with 8 s) still leaves the line on time."""
TICK_S = 0.5


class Heartbeat:
    """What runs and since when; speaks through `say` after `every_s` of silence (clock injectable for tests)."""

    def __init__(self, every_s: float, say: Callable[[str], None], clock: Callable[[], float] = time.monotonic):
        self.every_s, self.say, self.clock = every_s, say, clock
        self.lock = threading.Lock()
        self.running: dict[str, float] = {}
        self.started = self.last = clock()
        self.phase: str | None = "collecting and starting"
        """What the run does before its first test (None once one started)."""

    def start(self, nodeid: str) -> None:
        with self.lock:
            self.phase = None
            self.running[nodeid] = self.clock()

    def finish(self, nodeid: str) -> None:
        with self.lock:
            self.running.pop(nodeid, None)

    def spoke(self) -> None:
        """pytest wrote something (a test's outcome): the silence starts again."""
        with self.lock:
            self.last = self.clock()

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


class ProgressPlugin:
    """The controller's heartbeat thread and the hooks that feed it."""

    def __init__(self, config: pytest.Config, every_s: float) -> None:
        self.config = config
        self.beat = Heartbeat(every_s, self._say)
        self.beat.phase = "starting"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="rlcheck-progress", daemon=True)
        self.thread.start()
        config.add_cleanup(self.stop.set)  # also when the run ends before its session (a usage error)

    def _say(self, text: str) -> None:
        # While a test runs, pytest captures fd 1: write to the terminal it saved (its capture's own writeorg).
        capman: Any = self.config.pluginmanager.get_plugin("capturemanager")
        out = getattr(getattr(capman, "_global_capturing", None), "out", None)
        try:
            if out is not None:
                line = f"\n{text}\n"
                out.writeorg(line.encode() if isinstance(getattr(out, "EMPTY_BUFFER", ""), bytes) else line)
                return
        except (AssertionError, OSError, ValueError, AttributeError):  # capture stopped or closed: the reporter
            pass
        reporter: Any = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(text)
        elif sys.__stdout__ is not None:  # before pytest's terminal exists (loading conftest.py files)
            sys.__stdout__.write(f"{text}\n")
            sys.__stdout__.flush()

    def _loop(self) -> None:
        while not self.stop.wait(TICK_S):
            self.beat.tick()

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        with self.beat.lock:
            self.beat.phase = "collecting and starting"

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.beat.start(nodeid)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.beat.finish(nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.beat.spoke()

    @pytest.hookimpl(trylast=True)  # after the session's fixtures (a Ray head) are torn down
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.stop.set()


PLUGIN_NAME = "rlcheck-progress"


def _start(config: pytest.Config, every_s: float) -> None:
    worker = hasattr(config, "workerinput") or os.environ.get("PYTEST_XDIST_WORKER")
    if every_s > 0 and not worker and not config.pluginmanager.has_plugin(PLUGIN_NAME):
        # xdist workers report each test's start to the controller, which speaks for them
        config.pluginmanager.register(ProgressPlugin(config, every_s), PLUGIN_NAME)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """The earliest moment: the arguments are read, conftest.py files and the configure hooks are still to come.
    (Reached when the plugin comes from its entry point; loaded by a conftest.py, it starts at configure.)"""
    _start(early_config, getattr(early_config.known_args_namespace, "progress_s", DEFAULT_S))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    every_s = config.getoption("progress_s")
    if every_s < 0:
        raise pytest.UsageError(f"--progress-s={every_s:g}: seconds >= 0 (0 turns the progress lines off)")
    _start(config, every_s)
