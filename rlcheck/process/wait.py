"""Bounded waits: every wait ends, by success or by its deadline, with what was seen."""

from __future__ import annotations

import dataclasses
import socket
import time
import urllib.error
import urllib.request


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class WaitResult:
    ok: bool
    elapsed_s: float
    attempts: int
    last_error: str
    """What the last failed attempt saw ('' when ok)."""


def wait_http_ok(url: str, *, timeout_s: float, interval_s: float = 0.25, request_timeout_s: float = 2.0,
                 alive: object = None) -> WaitResult:
    """Poll url until it answers 200, the deadline passes, or alive() says the server process is gone.

    alive: optional callable returning False once the server process has exited.
    """
    start = time.monotonic()
    attempts, last = 0, "not tried"
    while True:
        attempts += 1
        remaining = timeout_s - (time.monotonic() - start)
        try:
            with urllib.request.urlopen(url, timeout=max(0.1, min(request_timeout_s, remaining))) as resp:
                if resp.status == 200:
                    return WaitResult(ok=True, elapsed_s=time.monotonic() - start, attempts=attempts, last_error="")
                last = f"HTTP {resp.status}"
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            last = str(getattr(exc, "reason", exc))
        if callable(alive) and not alive():
            return WaitResult(ok=False, elapsed_s=time.monotonic() - start, attempts=attempts,
                              last_error=f"{last}; the server process exited")
        if time.monotonic() - start + interval_s >= timeout_s:
            return WaitResult(ok=False, elapsed_s=time.monotonic() - start, attempts=attempts, last_error=last)
        time.sleep(interval_s)


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
