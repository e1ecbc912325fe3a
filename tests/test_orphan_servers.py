"""A helper server outlives no client: when the process that started it dies, it stops, even while some other
process (one that inherited the pipe) keeps its stdin open. A killed preflight leaves no warm server or Ray behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

from rlcheck.cluster import embedded_ray

CLIENT = textwrap.dedent("""
    import os, signal, time
    from rlcheck.process import warm
    server = warm.Server(("json",), dict(os.environ))
    deadline = time.monotonic() + 60
    while server.ready is None and time.monotonic() < deadline:
        time.sleep(0.05)
    # a forked process (no exec) keeps every descriptor, the server's stdin pipe included, and outlives this client
    holder = os.fork()
    if holder == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)  # the test reads this client's output to its end: only the server's pipe stays held
        os.dup2(null, 2)
        time.sleep(60)
        os._exit(0)
    print(server.proc.pid, holder, server.ready, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def test_warm_server_stops_when_its_client_is_killed_while_another_process_holds_its_stdin():
    done = subprocess.run([sys.executable, "-c", CLIENT], capture_output=True, text=True, timeout=120)
    server, holder, ready = done.stdout.split()
    try:
        assert ready == "True", done.stderr
        deadline = time.monotonic() + 30
        while _alive(int(server)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(int(server)), "the warm server outlived its client"
        assert _alive(int(holder)), "the pipe holder must still be there, or this test proves nothing"
    finally:
        for pid in (int(server), int(holder)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_embedded_ray_stops_when_its_parent_changes_and_not_before():
    stop = threading.Event()
    watcher = threading.Thread(target=embedded_ray._stop_when_orphaned, args=(stop, os.getppid(), 0.01), daemon=True)
    watcher.start()
    assert not stop.wait(0.3), "stopped although its parent is alive"
    stop.set()
    watcher.join(5)

    orphaned = threading.Event()
    threading.Thread(target=embedded_ray._stop_when_orphaned, args=(orphaned, os.getppid() + 1_000_000, 0.01),
                     daemon=True).start()
    assert orphaned.wait(10), "did not stop when its parent was no longer the one that started it"
