"""The kernel log's GPU lines: NVRM Xid events and GPUs that fell off the bus (dmesg, then journalctl -k).

dmesg is not permitted in most containers (kernel.dmesg_restrict=1): journalctl -k -b is asked next, and when
neither answers the caller gets both errors, so the Xid verdict is UNKNOWN naming them, never a pass.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import time
from collections.abc import Callable

from rlcheck.process import subproc

MIN_CALL_S = 2.0
MAX_XID_EVENTS = 64
"""Keep the newest events only: a GPU in an Xid storm would otherwise fill the node's answer."""
XID_LINE = re.compile(r"NVRM: Xid \(PCI:(?P<bus>[0-9A-Fa-f:.]+)[^)]*\): (?P<code>\d+),?\s*(?P<rest>.*)")
OFF_BUS = re.compile(r"fallen off the bus", re.IGNORECASE)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class XidEvent:
    bus_id: str
    """PCI address in the kernel line, e.g. 0000:18:00."""
    code: int
    line: str
    """The kernel log line, for the report."""


def budget(total_s: float) -> Callable[[], float]:
    """Seconds left of total_s for the next child process (at least MIN_CALL_S, so a late call still answers)."""
    end = time.monotonic() + total_s
    return lambda: max(MIN_CALL_S, end - time.monotonic())


def _joined(text: str) -> list[str]:
    """dmesg lines with their indented continuation lines joined: the driver wraps some messages (the
    fallen-off-the-bus one names the GPU on the first line and says it fell off on the third)."""
    lines: list[str] = []
    for line in text.splitlines():
        if line[:1].isspace() and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


def parse_kernel_log(text: str) -> tuple[tuple[XidEvent, ...], tuple[str, ...]]:
    """Xid events (newest MAX_XID_EVENTS) and fallen-off-the-bus lines in dmesg / journalctl -k text."""
    events, off_bus = [], []
    for line in _joined(text):
        if m := XID_LINE.search(line):
            events.append(XidEvent(bus_id=m.group("bus"), code=int(m.group("code")), line=line.strip()))
        if OFF_BUS.search(line):
            off_bus.append(line.strip())
    return tuple(events[-MAX_XID_EVENTS:]), tuple(off_bus[-MAX_XID_EVENTS:])


def read_kernel_log(timeout_s: float) -> tuple[str, str, str]:
    """(text, tool that answered, error): dmesg first, then journalctl -k for this boot; both within timeout_s."""
    left = budget(timeout_s)
    errors = []
    for argv in (["dmesg"], ["journalctl", "-k", "-b", "--no-pager", "-q"]):
        if shutil.which(argv[0]) is None:
            errors.append(f"{argv[0]}: not on PATH")
            continue
        done = subproc.run(argv, timeout_s=left())
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout, " ".join(argv), ""
        errors.append(f"{argv[0]}: {done.why()} {done.tail(1)}".strip())
    return "", "", "; ".join(errors)
