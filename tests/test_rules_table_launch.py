"""Rule table for argv-safe job submission (rlcheck.cluster.launch): the entrypoint /bin/sh parses back token for
token, which submissions are refused for a secret (a secret-looking name in the env or metadata, a secret's value
anywhere; the error names the variable, never the value), what is sent to the Jobs API, the submission retried only
while a fresh head's job agent is starting and only until its bound, and the wait's terminal status or TIMEOUT (both
sides of the deadline). A stand-in Jobs client and clock; no Ray (test_launch.py's round trip runs a real one)."""

from __future__ import annotations

import shlex
import sys
import types
from pathlib import Path

import pytest

from rlcheck.cluster import launch
from rlcheck.cluster.launch import JobOutcome

CANARY = "hf_rlcheck_canary_0123456789"


@pytest.mark.parametrize("argv", [["python3"], ["python3", "train.py", "$HOME", "a b", "[0]*3", "", "'q'", "`x`"]])
def test_the_entrypoint_is_what_sh_parses_back(argv):
    assert shlex.split(launch.entrypoint(argv)) == argv
    assert launch.entrypoint(argv) == shlex.join(argv)


def test_no_argv_no_entrypoint():
    with pytest.raises(ValueError, match=r"^argv=\[\]: at least the program to run$"):
        launch.entrypoint([])


@pytest.mark.parametrize(("runtime_env", "metadata", "message"), [
    ({"env_vars": {"HF_TOKEN": "x", "PATH": "/bin"}}, None, "secret-looking names ['HF_TOKEN'] in runtime env / "
                                                            "metadata: the workers read secrets from their own "
                                                            "environment"),
    (None, {"note": "n", "DB_PASS": "x"}, "secret-looking names ['DB_PASS'] in runtime env / metadata: the workers "
                                          "read secrets from their own environment"),
    ({"env_vars": {"GH_PAT": "x"}}, {"OPENAI_KEY": "y"}, "secret-looking names ['GH_PAT', 'OPENAI_KEY'] in runtime "
                                                         "env / metadata: the workers read secrets from their own "
                                                         "environment"),
    ({"env_vars": {"NOTE": f"a{CANARY}b"}}, None, "the value of ['HF_TOKEN'] appears in the argv, runtime env or "
                                                  "metadata; never send secrets"),
    ({"working_dir": CANARY}, None, "the value of ['HF_TOKEN'] appears in the argv, runtime env or metadata; never "
                                    "send secrets"),
    (None, {"note": CANARY}, "the value of ['HF_TOKEN'] appears in the argv, runtime env or metadata; never send "
                             "secrets"),
])
def test_a_secret_name_or_value_is_refused_naming_the_variable(monkeypatch, runtime_env, metadata, message):
    monkeypatch.setenv("HF_TOKEN", CANARY)
    with pytest.raises(ValueError) as err:
        launch.check_no_secrets(["train.py"], runtime_env, metadata)
    assert str(err.value) == message
    assert CANARY not in str(err.value)


def test_a_secret_value_in_the_argv_is_refused(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", CANARY)
    with pytest.raises(ValueError, match=r"^the value of \['HF_TOKEN'\] appears"):
        launch.check_no_secrets(["train.py", f"--hf={CANARY}"], None, None)


def test_what_carries_no_secret_passes(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", CANARY)
    assert launch.check_no_secrets(["train.py", "--x", "1"], {"env_vars": {"PATH": "/bin"}}, {"rlcheck": "x"}) is None
    assert launch.check_no_secrets(["train.py"], None, None) is None


class Status:
    def __init__(self, value: str, terminal: bool) -> None:
        self.value, self.terminal = value, terminal

    def is_terminal(self) -> bool:
        return self.terminal


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now, self.slept = now, []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


class Client:
    """JobSubmissionClient as launch sees it: submit_job raises the queued errors first; status RUNNING until
    done_at on the clock."""

    def __init__(self, url: str, clock: Clock, errors=(), done_at=None, final="SUCCEEDED") -> None:
        self.url, self.clock, self.errors, self.done_at, self.final = url, clock, list(errors), done_at, final
        self.submitted: list[dict] = []
        self.calls: list[tuple] = []

    def submit_job(self, **job):
        self.submitted.append(job)
        if self.errors:
            raise self.errors.pop(0)
        return "raysubmit_7"

    def get_job_status(self, job_id):
        self.calls.append(("status", job_id))
        done = self.done_at is not None and self.clock.now >= self.done_at
        return Status(self.final, True) if done else Status("RUNNING", False)

    def stop_job(self, job_id):
        self.calls.append(("stop", job_id))

    def get_job_logs(self, job_id):
        self.calls.append(("logs", job_id))
        return "the log"


@pytest.fixture
def head(monkeypatch):
    """A stand-in Jobs API and clock; returns a function that sets what the next client does."""
    clock = Clock()
    monkeypatch.setattr(launch, "time", types.SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep))
    made: list[Client] = []
    plan: dict = {}

    def factory(url):
        made.append(Client(url, clock, **plan))
        return made[-1]

    monkeypatch.setitem(sys.modules, "ray.job_submission", types.SimpleNamespace(JobSubmissionClient=factory))

    def set_plan(**kw):
        plan.clear()
        plan.update(kw)
        return made, clock

    return set_plan


def test_submit_argv_sends_the_entrypoint_and_what_was_given(head):
    made, _ = head()
    job = launch.submit_argv("http://h:8265", ["python3", "a b"], runtime_env={"env_vars": {"A": "1"}},
                             metadata={"rlcheck": "x"})
    assert job == "raysubmit_7" and made[0].url == "http://h:8265"
    assert made[0].submitted == [{"entrypoint": "python3 'a b'", "runtime_env": {"env_vars": {"A": "1"}},
                                  "metadata": {"rlcheck": "x"}}]


def test_submit_argv_sends_none_for_an_empty_env_or_metadata(head):
    made, _ = head()
    launch.submit_argv("http://h:8265", ["python3"], runtime_env={}, metadata={})
    launch.submit_argv("http://h:8265", ["python3"])
    assert [c.submitted for c in made] == [[{"entrypoint": "python3", "runtime_env": None, "metadata": None}]] * 2


def test_submit_argv_refuses_a_secret_before_sending(head, monkeypatch):
    made, _ = head()
    monkeypatch.setenv("HF_TOKEN", CANARY)
    with pytest.raises(ValueError, match="secret-looking names"):
        launch.submit_argv("http://h:8265", ["python3"], runtime_env={"env_vars": {"HF_TOKEN": "x"}})
    assert made == []


def test_submit_entrypoint_sends_the_text_as_it_is(head):
    made, _ = head()
    assert launch.submit_entrypoint("http://h:8265", "bash -c 'echo $X'") == "raysubmit_7"
    assert made[0].submitted == [{"entrypoint": "bash -c 'echo $X'", "runtime_env": None}]
    assert made[0].url == "http://h:8265"


def test_submit_entrypoint_sends_a_runtime_env_and_none_for_an_empty_one(head):
    made, _ = head()
    launch.submit_entrypoint("http://h:8265", "echo", runtime_env={"py_executable": "unshare -m python"})
    launch.submit_entrypoint("http://h:8265", "echo", runtime_env={})
    assert [c.submitted for c in made] == [
        [{"entrypoint": "echo", "runtime_env": {"py_executable": "unshare -m python"}}],
        [{"entrypoint": "echo", "runtime_env": None}]]


@pytest.mark.parametrize(("entrypoint", "runtime_env", "message"), [
    ("echo ok", {"env_vars": {"HF_TOKEN": "x"}}, "secret-looking names"),
    (f"train.py --hf={CANARY}", None, r"^the value of \['HF_TOKEN'\] appears"),
    ("echo ok", {"py_executable": f"env T={CANARY} python"}, r"^the value of \['HF_TOKEN'\] appears"),
])
def test_submit_entrypoint_refuses_a_secret_before_sending(head, monkeypatch, entrypoint, runtime_env, message):
    made, _ = head()
    monkeypatch.setenv("HF_TOKEN", CANARY)
    with pytest.raises(ValueError, match=message):
        launch.submit_entrypoint("http://h:8265", entrypoint, runtime_env=runtime_env)
    assert made == []


def test_submit_argv_refuses_a_secret_in_the_metadata(head, monkeypatch):
    made, _ = head()
    monkeypatch.setenv("HF_TOKEN", CANARY)
    with pytest.raises(ValueError, match=r"^the value of \['HF_TOKEN'\] appears"):
        launch.submit_argv("http://h:8265", ["python3"], metadata={"note": CANARY})
    assert made == []


def test_a_starting_job_agent_is_waited_for_a_second_at_a_time(head):
    made, clock = head(errors=[RuntimeError("No available agent to submit job"), RuntimeError("x No available agent")])
    assert launch.submit_entrypoint("http://h", "true") == "raysubmit_7"
    assert (len(made[0].submitted), clock.slept) == (3, [1.0, 1.0])


def test_another_error_is_raised_at_once(head):
    made, clock = head(errors=[RuntimeError("job already exists")])
    with pytest.raises(RuntimeError, match="^job already exists$"):
        launch.submit_entrypoint("http://h", "true")
    assert (len(made[0].submitted), clock.slept) == (1, [])


@pytest.mark.parametrize(("tries", "raised"), [(91, False), (92, True)])
def test_the_agent_wait_is_bounded(head, tries, raised):
    """Retried at 0, 1, ..., 90 s (90 is not past the 90 s bound); the try at 91 s is past it and raises."""
    made, clock = head(errors=[RuntimeError("No available agent")] * tries)
    if raised:
        with pytest.raises(RuntimeError, match="^No available agent$"):
            launch.submit_entrypoint("http://h", "true")
        assert len(made[0].submitted) == 92 and clock.now == 91.0
    else:
        assert launch.submit_entrypoint("http://h", "true") == "raysubmit_7"
        assert len(made[0].submitted) == 92 and clock.now == 91.0


@pytest.mark.parametrize(("done_at", "timeout_s", "expected", "polls"), [
    (0.0, 1.0, "SUCCEEDED", 1),
    (0.4, 1.0, "SUCCEEDED", 3),
    (1.0, 1.0, "SUCCEEDED", 6),  # terminal at the deadline's poll: its status, not None
    (1.2, 1.0, None, 6),  # still running at the deadline (1.0 >= 1.0): none
    (None, 0.0, None, 1),
])
def test_await_terminal_polls_until_terminal_or_the_deadline(head, done_at, timeout_s, expected, polls):
    _, clock = head()
    client = Client("u", clock, done_at=done_at)
    assert launch.await_terminal(client, "j", timeout_s, poll_s=0.2) == expected
    assert client.calls == [("status", "j")] * polls
    assert clock.slept == [0.2] * (polls - 1)


def test_await_terminal_polls_every_fifth_of_a_second_by_default(head):
    _, clock = head()
    assert launch.await_terminal(Client("u", clock, done_at=0.3), "j", 5.0) == "SUCCEEDED"
    assert clock.slept == [0.2, 0.2]


def test_wait_job_says_the_terminal_status_and_the_log(head):
    made, clock = head(done_at=101.0, final="FAILED")
    clock.now = 100.0
    got = launch.wait_job("http://h", "j", timeout_s=5.0)
    assert got == JobOutcome(job_id="j", status="FAILED", logs="the log", elapsed_s=1.0)
    assert {job_id for _, job_id in made[0].calls} == {"j"}
    assert made[0].url == "http://h" and ("stop", "j") not in made[0].calls
    assert clock.slept == [0.5, 0.5]


def test_wait_job_stops_a_job_still_running_and_says_timeout(head):
    made, clock = head(done_at=None)
    got = launch.wait_job("http://h", "j", timeout_s=2.0, poll_s=1.0)
    assert got == JobOutcome(job_id="j", status="TIMEOUT", logs="the log", elapsed_s=2.0)
    assert made[0].calls[-2:] == [("stop", "j"), ("logs", "j")]


def test_ray_cli_forks_rays_own_cli_with_the_console_script_as_argv0(monkeypatch):
    calls = []
    monkeypatch.setattr(launch.warm, "python", lambda code, argv, **kw: calls.append((code, list(argv), kw)) or "done")
    assert launch.ray_cli(["job", "list"], timeout_s=9) == "done"
    (code, argv, kw), = calls
    script = launch.ray_script()
    assert script == str(Path(sys.executable).with_name("ray")) and argv == ["job", "list"]
    assert code == f"import sys\nfrom ray.scripts.scripts import main\nsys.argv[0] = {script!r}\nsys.exit(main())"
    assert kw == {"preload": ("ray.scripts.scripts",), "env": launch.subproc.child_env(), "timeout_s": 9,
                  "cold_argv": [script, "job", "list"]}


def test_ray_cli_says_what_the_console_script_says():
    """The forked CLI against the console script itself: the same usage text (its program name from argv[0]), the
    same exit status."""
    launch.warm.stop_all()
    try:
        forked = launch.ray_cli(["job", "submit", "--help"], timeout_s=120)
        wrong = launch.ray_cli(["job", "no-such-command"], timeout_s=120)
    finally:
        launch.warm.stop_all()
    script = launch.ray_script()
    cold = launch.subproc.run([script, "job", "submit", "--help"], timeout_s=120)
    cold_wrong = launch.subproc.run([script, "job", "no-such-command"], timeout_s=120)
    assert forked.argv[0] == wrong.argv[0] == "rlcheck.process.warm"  # forked, not the console script
    assert (forked.returncode, forked.stdout) == (cold.returncode, cold.stdout) == (0, cold.stdout)
    assert forked.stdout.startswith("Usage: ray job submit")
    assert (wrong.returncode, wrong.stderr) == (cold_wrong.returncode, cold_wrong.stderr) and wrong.returncode == 2
