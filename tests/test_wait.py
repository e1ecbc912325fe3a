"""Bounded waits and child processes: each ends with a reason, never hangs."""

from __future__ import annotations

import sys
import time

from rlcheck.process import subproc
from rlcheck.process.wait import free_loopback_port, wait_http_ok

SERVER = ("import http.server, sys\n"
          "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), http.server.SimpleHTTPRequestHandler)"
          ".serve_forever()\n")


def test_wait_closed_port_ends_at_deadline_with_what_it_saw():
    port = free_loopback_port()
    started = time.monotonic()
    result = wait_http_ok(f"http://127.0.0.1:{port}/health", timeout_s=1.0, interval_s=0.1)
    assert not result.ok and result.attempts >= 2 and "refused" in result.last_error
    assert time.monotonic() - started < 1.0 + 5


def test_wait_stops_early_when_server_process_is_gone():
    port = free_loopback_port()
    result = wait_http_ok(f"http://127.0.0.1:{port}/", timeout_s=30, alive=lambda: False)
    assert not result.ok and result.attempts == 1 and "exited" in result.last_error


def test_subproc_deadline_kills_the_whole_group():
    done = subproc.run([sys.executable, "-c", "import subprocess,sys,time; "
                        "subprocess.Popen([sys.executable,'-c','import time; time.sleep(60)']); time.sleep(60)"],
                       timeout_s=1)
    assert done.timed_out and done.returncode is None and done.why() == "killed at its deadline"


def test_subproc_says_exit_code_and_signal():
    assert subproc.run([sys.executable, "-c", "raise SystemExit(3)"], timeout_s=30).why() == "exit code 3"
    killed = subproc.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"],
                         timeout_s=30)
    assert killed.why() == "killed by signal SIGKILL"


def test_serve_and_probe_answers_then_stops_server():
    port = free_loopback_port()
    served = subproc.serve_and_probe([sys.executable, "-c", SERVER, str(port)], f"http://127.0.0.1:{port}/",
                                     timeout_s=20)
    assert served.answered and not served.exited_early
    assert served.output.returncode is not None  # stopped, not left running


def test_serve_and_probe_reports_early_exit():
    port = free_loopback_port()
    served = subproc.serve_and_probe([sys.executable, "-c", "raise KeyError('warn')"],
                                     f"http://127.0.0.1:{port}/", timeout_s=20)
    assert served.exited_early and "KeyError: 'warn'" in served.output.stderr
