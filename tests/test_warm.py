"""rlcheck.process.warm: each run is its own child forked from a warm interpreter, told apart from a cold one only
by what the server imported; every wait is bounded, and a run that cannot be forked honestly goes cold."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest

from rlcheck.process import subproc, warm

PRELOAD = ("json",)  # cheap: these tests are about the process, not the package


@pytest.fixture(autouse=True)
def _fresh_servers():
    warm.stop_all()
    yield
    warm.stop_all()


def env(**extra: str) -> dict[str, str]:
    return subproc.child_env() | extra


def test_warm_run_has_its_own_argv_env_exit_status_and_output():
    code = "import json, os, sys; print(json.dumps([sys.argv, os.environ['X'], os.getpid()])); " \
           "sys.stderr.write('to stderr\\n'); sys.exit(3)"
    done = warm.python(code, ["a", "b c"], preload=PRELOAD, env=env(X="1"), runtime=["X"], timeout_s=30)
    argv, x, pid = json.loads(done.stdout)
    assert (argv, x, done.returncode, done.stderr) == (["-c", "a", "b c"], "1", 3, "to stderr\n")
    assert pid != os.getpid() and done.argv[0] == "rlcheck.process.warm" and not done.timed_out


def test_warm_runtime_names_share_one_server_other_names_do_not():
    for value in ("1", "2"):
        warm.python("pass", preload=PRELOAD, env=env(X=value), runtime=["X"], timeout_s=30)
    assert len(warm._SERVERS) == 1
    warm.python("pass", preload=PRELOAD, env=env(Y="import-time"), runtime=["X"], timeout_s=30)
    assert len(warm._SERVERS) == 2  # a variable read at import time gets its own server


def test_warm_pytest_current_test_never_splits_servers():
    for phase in ("a (setup)", "a (call)"):
        warm.python("pass", preload=PRELOAD, env=env(PYTEST_CURRENT_TEST=phase), timeout_s=30)
    assert len(warm._SERVERS) == 1


def test_warm_uncaught_exception_prints_traceback_and_exits_1():
    done = warm.python("raise ValueError('boom')", preload=PRELOAD, env=env(), timeout_s=30)
    assert done.returncode == 1 and "ValueError: boom" in done.stderr


def test_warm_deadline_kills_the_run():
    started = time.monotonic()
    done = warm.python("import time; time.sleep(60)", preload=PRELOAD, env=env(), timeout_s=1)
    assert done.timed_out and done.returncode is None and done.why() == "killed at its deadline"
    assert time.monotonic() - started < 10


def test_warm_concurrent_runs_overlap():
    started = time.monotonic()
    outs = subproc.concurrently(*(lambda i=i: warm.python(f"import time; time.sleep(1); print({i})",
                                                          preload=PRELOAD, env=env(), timeout_s=30)
                                  for i in range(3)))
    assert [o.stdout for o in outs] == ["0\n", "1\n", "2\n"] and time.monotonic() - started < 2.9


def test_warm_server_that_cannot_import_is_not_used_the_run_goes_cold():
    done = warm.python("print('ran')", preload=("rlcheck_no_such_module",), env=env(), timeout_s=30)
    assert done.stdout == "ran\n" and done.argv[0] == sys.executable


def test_warm_run_that_meets_torch_fork_poisoning_is_repeated_cold():
    code = f"import sys; sys.stderr.write({warm.FORK_POISONED!r}); sys.exit(1)"
    done = warm.python(code, preload=PRELOAD, env=env(), timeout_s=30)
    assert done.argv[0] == sys.executable  # the cold repeat is what the caller sees


def test_warm_cold_skips_the_server():
    done = warm.python("print(1)", preload=PRELOAD, env=env(), timeout_s=30, cold=True)
    assert done.stdout == "1\n" and done.argv[0] == sys.executable and not warm._SERVERS


def test_warm_server_ends_without_the_interpreter_teardown_of_its_imports(tmp_path):
    """What the server imported is never torn down (torch's, Megatron's and SGLang's took 7-10 s each after the
    summary): an exit handler of a preloaded module does not run when the server stops."""
    marker = tmp_path / "teardown ran"
    (tmp_path / "slow_teardown.py").write_text(f"import atexit, pathlib\n"
                                               f"atexit.register(pathlib.Path({str(marker)!r}).touch)\n")
    server = warm.Server(("slow_teardown",), env(PYTHONPATH=str(tmp_path)))
    assert server.wait_ready(30)
    server.stop()
    assert (server.proc.returncode, marker.exists()) == (0, False)
