"""Never silent while it works: the progress line after a silence, what it names, and never when output flows."""

from __future__ import annotations

import pytest

from rlcheck.plugin.progress import Heartbeat


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _beat(every_s: float = 8.0) -> tuple[Heartbeat, Clock, list[str]]:
    clock, said = Clock(), []
    return Heartbeat(every_s, said.append, clock), clock, said


def test_progress_silent_until_the_interval_then_names_the_oldest_running_test():
    beat, clock, said = _beat()
    beat.start("reproducers/test_repro_a.py::test_a")
    clock.now += 2
    beat.start("reproducers/test_repro_b.py::test_b")
    clock.now += 5.9  # 7.9 s of silence: not yet
    beat.tick()
    assert said == []
    clock.now += 0.1  # 8 s: speak, naming the oldest and how long it runs
    beat.tick()
    assert said == ["rlcheck: still running reproducers/test_repro_a.py::test_a (8 s); 1 more running"]
    beat.tick()  # the line itself was output: not again at once
    assert len(said) == 1


def test_progress_output_resets_the_silence():
    beat, clock, said = _beat()
    beat.start("t1")
    clock.now += 7
    beat.spoke()  # pytest wrote a test's outcome
    clock.now += 7
    beat.tick()
    assert said == []
    clock.now += 1
    beat.tick()
    assert said == ["rlcheck: still running t1 (15 s)"]


def test_progress_before_the_first_test_and_between_tests():
    beat, clock, said = _beat(every_s=1)
    clock.now += 3
    beat.tick()
    beat.start("t1")
    beat.finish("t1")
    clock.now += 1
    beat.tick()
    assert said == ["rlcheck: collecting and starting (3 s since the run began)",
                    "rlcheck: between tests (4 s since the run began)"]


@pytest.mark.parametrize("args", [[], ["-n", "2"]])
def test_progress_line_in_a_real_run(pytester: pytest.Pytester, args):
    """Also under xdist: the workers report each test's start to the controller, which writes the line."""
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.makepyfile(test_slow="import time\ndef test_slow():\n    time.sleep(4)\n")
    result = pytester.runpytest_subprocess("--progress-s=1", "--hardware=none", "-p", "no:cacheprovider", *args)
    result.stdout.fnmatch_lines(["rlcheck: still running test_slow.py::test_slow (* s)*"])
    assert result.ret == 0


def test_progress_off_and_refused_values(pytester: pytest.Pytester):
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    pytester.makepyfile(test_slow="import time\ndef test_slow():\n    time.sleep(2)\n")
    result = pytester.runpytest_subprocess("--progress-s=0", "--hardware=none", "-p", "no:cacheprovider")
    assert "still running" not in result.stdout.str()
    refused = pytester.runpytest_subprocess("--progress-s=-1", "--hardware=none")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert "--progress-s=-1: seconds >= 0" in refused.stderr.str()


def test_progress_while_conftest_files_load_and_after_the_summary(pytester: pytest.Pytester):
    """The start-up is covered (a conftest.py that takes seconds to import, as one importing the stack does, here
    holding the GIL as a C extension's import does), and so is what stops after the summary (warm interpreters)."""
    pytester.makeconftest("import ctypes\nctypes.PyDLL(None).sleep(3)\npytest_plugins = ['rlcheck.plugin']\n"
                          "def pytest_unconfigure(config):\n    ctypes.PyDLL(None).sleep(2)\n")
    pytester.makepyfile(test_quick="def test_quick():\n    pass\n")
    result = pytester.runpytest_subprocess("--progress-s=1", "--hardware=none", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["rlcheck: starting (* s since the run began)", "*1 passed*",
                                 "rlcheck: finishing: stopping what the run started (* s since the run began)"])
    assert result.ret == 0
