"""Rule table for how the ray-argv-loss reproducer (reproducers/test_repro_ray_argv_loss.py) runs the other shell's case
on the session's own head: the runtime env whose `py_executable` is the `unshare -m` wrapper, sent by both the CLI
(`--runtime-env-json`, before `--`) and the SDK; none for this machine's shell; each shell's signature of the loss
judged with that shell's name; and whether any of the four jobs ran a program at all (none: the test says UNKNOWN, a
worker that never started is not a verdict). No Ray here: the submissions stand in."""

from __future__ import annotations

import json
import shlex
import sys
import types

import pytest

from rlcheck.process.subproc import Completed
from tests import reproducer_file

ARGS = ["--num-layers", "36", "--hidden-size", "2560", "--ffn-hidden-size", "9728", "--num-attention-heads", "32",
        "--swiglu", "--qk-layernorm"]


@pytest.fixture(scope="module")
def loss() -> types.ModuleType:
    return reproducer_file.load('test_repro_ray_argv_loss.py', 'rlcheck_repro_ray_argv_loss')


@pytest.mark.parametrize(("wrapper", "expected"), [
    (None, None),
    ((["unshare", "-m", "sh", "-c", "mount --bind /b \"$(readlink -f /bin/sh)\" && exec \"$@\"", "sh"], "bash"),
     "bash"),
])
def test_the_other_shells_runtime_env_runs_the_worker_under_the_wrapper(loss, monkeypatch, wrapper, expected):
    monkeypatch.setattr(loss.argv_probe, "other_shell_wrapper", lambda: wrapper)
    got = loss.other_shell()
    if expected is None:
        assert got is None
        return
    env, name = got
    assert name == expected and env == {"py_executable": shlex.join([*wrapper[0], sys.executable])}
    assert shlex.split(env["py_executable"]) == [*wrapper[0], sys.executable]  # bash -c "exec ..." reads it back


@pytest.mark.parametrize("runtime_env", [None, {"py_executable": "unshare -m python"}])
def test_the_cli_submits_with_its_id_and_the_runtime_env_then_the_jobs_api_waits(loss, monkeypatch, runtime_env):
    ran, waited = [], []
    monkeypatch.setattr(loss.launch, "ray_cli", lambda argv, **kw: ran.append((list(argv), kw)) or Completed(
        argv=tuple(argv), returncode=0, stdout="submitted\n", stderr="", timed_out=False))
    monkeypatch.setattr(loss.launch, "wait_job", lambda url, job, timeout_s: waited.append((url, job, timeout_s)) or
                        types.SimpleNamespace(status="FAILED", logs="x: Bad substitution\nRLCHECK_ARGV [\"a\"]\n"))
    got, out = loss.cli_submit("http://127.0.0.1:8265", ["bash", "-c", "x"], runtime_env)
    (argv, kw), = ran
    job = argv[argv.index("--submission-id") + 1]
    env = ["--runtime-env-json", json.dumps(runtime_env)] if runtime_env else []
    assert argv == ["job", "submit", "--address", "http://127.0.0.1:8265", "--submission-id", job,
                    "--no-wait", *env, "--", "bash", "-c", "x"] and kw == {"timeout_s": 180}
    assert job.startswith("rlcheck-argv-loss-") and waited == [("http://127.0.0.1:8265", job, 120)]
    assert got == ["a"] and out == "FAILED: submitted\nx: Bad substitution\nRLCHECK_ARGV [\"a\"]\n"


def test_every_cli_submission_has_its_own_id(loss, monkeypatch):
    ran = []
    monkeypatch.setattr(loss.launch, "ray_cli", lambda argv, **kw: ran.append(list(argv)) or Completed(
        argv=tuple(argv), returncode=0, stdout="", stderr="", timed_out=False))
    monkeypatch.setattr(loss.launch, "wait_job", lambda url, job, timeout_s: types.SimpleNamespace(status="S", logs=""))
    for _ in range(2):
        loss.cli_submit("http://h", ["a"], None)
    assert len({argv[argv.index("--submission-id") + 1] for argv in ran}) == 2


@pytest.mark.parametrize("done", [
    Completed(argv=("ray",), returncode=1, stdout="out\n", stderr="Error: no agent\n", timed_out=False),
    Completed(argv=("ray",), returncode=None, stdout="", stderr="", timed_out=True),
])
def test_a_submission_the_cli_refused_ran_nothing_and_is_not_waited_for(loss, monkeypatch, done):
    monkeypatch.setattr(loss.launch, "ray_cli", lambda argv, **kw: done)
    monkeypatch.setattr(loss.launch, "wait_job", lambda *a, **kw: pytest.fail("nothing was submitted"))
    got, out = loss.cli_submit("http://h", ["a"], None)
    assert got is None and out == f"`ray job submit` {done.why()}: {done.stdout}{done.stderr}"


def test_the_sdk_sends_the_runtime_env(loss, monkeypatch):
    sent = []
    monkeypatch.setattr(loss.launch, "submit_entrypoint", lambda url, text, runtime_env=None: sent.append(
        (url, text, runtime_env)) or "job-1")
    monkeypatch.setattr(loss.launch, "wait_job", lambda url, job, timeout_s: types.SimpleNamespace(
        status="SUCCEEDED", logs="RLCHECK_ARGV [\"b\"]\n"))
    got, out = loss.sdk_submit("http://h", "echo", {"py_executable": "p"})
    assert sent == [("http://h", "echo", {"py_executable": "p"})] and got == ["b"] and out.startswith("SUCCEEDED: ")


@pytest.fixture
def submits(loss, monkeypatch):
    """What each of the four jobs printed (set by the test), and the runtime envs they were sent with."""
    state: dict = {"cli": [], "sdk": [], "envs": []}

    def cli(url, argv, runtime_env):
        state["envs"].append(runtime_env)
        return state["cli"].pop(0)

    def sdk(url, entrypoint, runtime_env):
        state["envs"].append(runtime_env)
        return state["sdk"].pop(0)

    monkeypatch.setattr(loss, "cli_submit", cli)
    monkeypatch.setattr(loss, "sdk_submit", sdk)
    monkeypatch.setattr(loss.subproc, "concurrently", lambda *calls: [c() for c in calls])
    return state


FIXED = [*ARGS, "--extra", "1"]


@pytest.mark.parametrize(("shell", "unsafe", "fixes", "lost", "intact", "ran"), [
    # dash: the unsafe job never runs (Bad substitution), the fixes deliver every token
    ("dash", [(None, "Bad substitution"), (None, "x: Bad substitution")], [FIXED, FIXED], True, True, True),
    # bash: the unsafe job runs with the array gone
    ("bash", [([""], ""), ([], "")], [FIXED, FIXED], True, True, True),
    # bash judged as dash would be: running is not dash's signature
    ("dash", [([""], ""), ([], "")], [FIXED, FIXED], False, True, True),
    # the array survived: nothing lost
    ("bash", [(ARGS, ""), (ARGS, "")], [FIXED, FIXED], False, True, True),
    # one fix lost a token
    ("bash", [([""], ""), ([""], "")], [FIXED, FIXED[:-1]], True, False, True),
    # no job ran a program at all: nothing to judge
    ("bash", [(None, "worker died"), (None, "worker died")], [None, None], False, False, False),
    # only a fix ran: something ran
    ("dash", [(None, "Bad substitution"), (None, "Bad substitution")], [None, FIXED], True, False, True),
])
def test_through_ray_judges_by_the_jobs_shell_and_says_whether_any_program_ran(loss, submits, tmp_path, shell,
                                                                             unsafe, fixes, lost, intact, ran):
    (cli_got, cli_out), (sdk_got, sdk_out) = unsafe
    submits["cli"] = [(cli_got, cli_out), (fixes[0], "")]
    submits["sdk"] = [(sdk_got, sdk_out), (fixes[1], "")]
    env = {"py_executable": "w"}
    got = loss.through_ray("http://h", tmp_path, (env, shell))
    assert got[0] is lost and got[1] is intact and got[3] is ran
    assert submits["envs"] == [env] * 4


def test_through_ray_without_another_shell_sends_no_runtime_env_and_judges_this_machines_sh(loss, submits,
                                                                                          monkeypatch, tmp_path):
    monkeypatch.setattr(loss.argv_probe, "system_sh", lambda: "dash")
    submits["cli"] = [(None, "Bad substitution"), (FIXED, "")]
    submits["sdk"] = [(None, "Bad substitution"), (FIXED, "")]
    lost, intact, evidence, ran = loss.through_ray("http://h", tmp_path)
    assert (lost, intact, ran) == (True, True, True) and submits["envs"] == [None] * 4
    assert evidence.startswith("CLI bash -c: program never ran (Bad substitution); SDK: program never ran")
