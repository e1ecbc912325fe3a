"""Never silent while it works: a line naming what runs, and for how long, whenever the run said nothing for a while.

A reproducer that starts Ray, or collection that imports the stack, can take a minute without a dot. The controller
(also under xdist, whose workers report each test's start to it) tells a small process of its own
(rlcheck.plugin.heartbeat) what is running and when pytest last wrote; that process writes `rlcheck: still running
<test> (<s> s)` to the terminal after --progress-s seconds of silence. It needs nothing of pytest's interpreter to
speak, so neither an import holding the GIL nor a starved interpreter on a loaded host keeps it quiet (a thread of
pytest's did: 12 s of silence with a 5 s interval). `--progress-s=0` turns it off. It starts as soon as pytest has
read its arguments (before conftest.py files load and before the configure hooks detect the hardware), counts the
first silence from the interpreter's start, and stops after the last unconfigure hook (the summary is written by then;
what stops after it, warm interpreters, is still covered).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rlcheck.plugin import heartbeat
from rlcheck.plugin.heartbeat import Heartbeat

__all__ = ["DEFAULT_S", "Heartbeat", "ProgressPlugin", "Writer", "process_started", "terminal_fd"]

DEFAULT_S = 5.0
"""Below the 10 s a user waits before wondering."""
FINISHING = "finishing: stopping what the run started"
STOP_S = 2.0
"""How long the session's end waits for the writer to go (it ends at once on end of input)."""


def process_started(stat: Path = Path("/proc/self/stat"), clock: Any = time.monotonic) -> float:
    """When this interpreter started, on the monotonic clock (Linux: /proc's start time against the boot clock);
    now where that cannot be read. The interpreter's start and pytest's own import are silent seconds too."""
    try:
        ticks = int(stat.read_text().rsplit(")", 1)[1].split()[19])  # field 22, starttime; 3 (state) follows ")"
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return clock()
    # An interpreter older than a minute ran other things before this pytest run (pytest.main in a long-lived one)
    return clock() - age if 0.0 <= age <= 60.0 else clock()


def terminal_fd(config: pytest.Config) -> int:
    """The terminal pytest writes to: the descriptor its fd capture saved, else 1 (capture off, or sys capture)."""
    capman: Any = config.pluginmanager.get_plugin("capturemanager")
    saved = getattr(getattr(getattr(capman, "_global_capturing", None), "out", None), "targetfd_save", None)
    return saved if isinstance(saved, int) else 1


class Writer:
    """The writer process (rlcheck.plugin.heartbeat) and the pipe that tells it what runs."""

    def __init__(self, every_s: float, out_fd: int, started: float) -> None:
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", heartbeat.__file__, f"{every_s!r}", f"{started!r}"],
                                     stdin=subprocess.PIPE, stdout=out_fd, stderr=subprocess.DEVNULL)
        assert self.proc.stdin is not None
        self.fd = self.proc.stdin.fileno()
        os.set_blocking(self.fd, False)  # a writer that stopped reading must never stall a test

    def send(self, *event: object) -> None:
        try:
            os.write(self.fd, json.dumps(event).encode() + b"\n")
        except (OSError, ValueError):  # gone, or a full pipe: a line late or lost, never a stalled run
            pass

    def stop(self) -> None:
        """End of input, then wait (bounded) until it is gone: no line after this."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(STOP_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class ProgressPlugin:
    """The hooks that tell the writer what runs."""

    def __init__(self, config: pytest.Config, every_s: float) -> None:
        self.writer = Writer(every_s, terminal_fd(config), process_started())
        self.send = self.writer.send
        self.send("phase", "starting")
        config.add_cleanup(self.writer.stop)  # also when the run ends before its session (a usage error)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.send("phase", "collecting and starting")

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.send("start", time.monotonic(), nodeid)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.send("finish", nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.send("spoke", time.monotonic())

    @pytest.hookimpl(trylast=True)  # after the session's fixtures and its Ray head are torn down
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # What still comes after the summary (stopping warm interpreters) is covered too; the writer stops with the
        # configuration's cleanup, after every unconfigure hook.
        self.send("spoke", time.monotonic())
        self.send("phase", FINISHING)


PLUGIN_NAME = "rlcheck-progress"


def _start(config: pytest.Config, every_s: float) -> None:
    worker = hasattr(config, "workerinput") or os.environ.get("PYTEST_XDIST_WORKER")
    if every_s > 0 and not worker and not config.pluginmanager.has_plugin(PLUGIN_NAME):
        # xdist workers report each test's start to the controller, which speaks for them
        try:
            plugin = ProgressPlugin(config, every_s)
        except OSError as exc:  # no writer process (no descriptors left, a closed terminal): the run goes on
            sys.stderr.write(f"rlcheck: no progress lines in this run ({exc})\n")
            return
        config.pluginmanager.register(plugin, PLUGIN_NAME)


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
