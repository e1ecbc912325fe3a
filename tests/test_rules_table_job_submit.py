"""Rule table for what `ray job submit` received (rlcheck.job.submit): its options and the entrypoint after `--` (or,
without one, from the first word that is no option), the runtime env's env_vars and working dir, and the whole error
for each launch it cannot read. The entrypoint's replay under /bin/sh is rlcheck.job.replay's (its own table): a
recorded replay stands in for it."""

from __future__ import annotations

import json

import pytest

from rlcheck.job import replay as replay_mod
from rlcheck.job import submit
from rlcheck.job.submit import CaptureFailed, JobFormatError

NO_DASHES = "`ray job submit` has no `--`: the entrypoint starts at the first word that is no option"


@pytest.fixture(autouse=True)
def replayed(monkeypatch):
    asked = []

    def replay(tokens, entrypoint=None, working_dir=None):
        asked.append((tuple(tokens), entrypoint, working_dir))
        return replay_mod.Replayed(entrypoint="E", argv=(*tokens, "+"), findings=("replayed",), shell_error="se",
                                   unseen="un")
    monkeypatch.setattr(replay_mod, "replay", replay)
    return asked


@pytest.mark.parametrize(("runtime_env", "env"), [
    ({}, ()), ({"env_vars": None}, ()), ({"env_vars": {}}, ()),
    ({"env_vars": {"A": "1", "B": 2, 3: True}}, (("A", "1"), ("B", "2"), ("3", "True"))),
])
def test_env_vars_of_a_runtime_env(runtime_env, env):
    assert submit.env_vars(runtime_env, "s") == env


@pytest.mark.parametrize(("runtime_env", "error"), [
    ([], "s: the runtime env is list, expected a mapping"),
    (None, "s: the runtime env is NoneType, expected a mapping"),
    ({"env_vars": ["A=1"]}, "s: runtime env env_vars is list, expected a mapping"),
    ({"env_vars": "A=1"}, "s: runtime env env_vars is str, expected a mapping"),
])
def test_env_vars_of_the_wrong_kind_are_refused(runtime_env, error):
    with pytest.raises(JobFormatError) as exc:
        submit.env_vars(runtime_env, "s")
    assert str(exc.value) == error


def test_a_submit_with_its_options_and_entrypoint(replayed):
    args = ["--address", "http://h:8265", "--no-wait", "--runtime-env-json", json.dumps(
        {"env_vars": {"A": "1"}, "working_dir": "/w"}), "--entrypoint-num-gpus=1", "--", "python3", "/root/slime/t.py",
        "--x"]
    job = submit.from_submit(args, "cmd.txt", "ray-submit", nodes=2, gpus_per_node=4)
    assert (job.argv, job.intended_argv, job.entrypoint, job.env, job.working_dir, job.framework, job.source,
            job.source_format, job.findings, job.shell_error, job.unseen, job.nodes, job.gpus_per_node) == (
        ("python3", "/root/slime/t.py", "--x", "+"), ("python3", "/root/slime/t.py", "--x"), "E", (("A", "1"),), "/w",
        "slime", "cmd.txt", "ray-submit", ("replayed",), "se", "un", 2, 4)
    assert replayed == [(("python3", "/root/slime/t.py", "--x"), None, "/w")]  # the working_dir goes with it


@pytest.mark.parametrize(("args", "tokens", "findings"), [
    (["--", "python3", "t.py"], ("python3", "t.py"), ()),
    (["--no-wait", "python3", "t.py", "--", "x"], ("python3", "t.py", "--", "x"), (NO_DASHES,)),
    (["--address", "--", "--", "python3"], ("python3",), ()),  # a valued option takes the word after it
    (["--address=--", "--", "python3"], ("python3",), ()),
    (["--verbose", "--", "python3"], ("python3",), ()),
    (["--job-id", "j", "--submission-id", "s", "--metadata-json", "{}", "--entrypoint-num-cpus", "1",
      "--entrypoint-memory", "1", "--entrypoint-resources", "{}", "--headers", "{}", "--verify", "x", "--log-style",
      "auto", "--log-color", "auto", "--entrypoint-num-gpus", "1", "--", "python3"], ("python3",), ()),
    (["-v", "python3"], ("python3",), (NO_DASHES,)),
    (["python3", "--", "t.py"], ("python3", "--", "t.py"), (NO_DASHES,)),
])
def test_where_the_entrypoint_starts(args, tokens, findings):
    job = submit.from_submit(args, "s", "ray-submit")
    assert (job.intended_argv, job.findings) == (tokens, (*findings, "replayed"))


@pytest.mark.parametrize(("args", "working_dir", "framework"), [
    (["--working-dir", "/opt/miles", "--", "python3", "t.py"], "/opt/miles", "miles"),
    (["--working-dir=/w", "--runtime-env-json", '{"working_dir": "/x"}', "--", "python3", "t.py"], "/w", "unknown"),
    (["--runtime-env-json", '{"working_dir": "/slime"}', "--", "python3", "t.py"], "/slime", "slime"),
    (["--working-dir", "", "--runtime-env-json", '{"working_dir": "/x"}', "--", "python3"], "/x", "unknown"),
    (["--", "python3", "t.py"], None, "unknown"),
])
def test_the_working_dir_from_the_option_else_the_runtime_env(args, working_dir, framework):
    job = submit.from_submit(args, "s", "ray-submit")
    assert (job.working_dir, job.framework) == (working_dir, framework)


def test_a_runtime_env_file_is_named_not_read():
    job = submit.from_submit(["--runtime-env", "env.yaml", "--", "python3"], "s", "ray-submit")
    assert job.findings == ("runtime env file 'env.yaml' not read: its env vars are not judged", "replayed")
    assert job.env == ()


@pytest.mark.parametrize(("args", "error"), [
    ([], "s: `ray job submit` has no entrypoint"),
    (["--"], "s: `ray job submit` has no entrypoint"),
    (["--no-wait"], "s: `ray job submit` has no entrypoint"),
    (["--address"], "s: `ray job submit` has no entrypoint"),
    (["--runtime-env-json", "{", "--", "python3"],
     "s: --runtime-env-json is not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 "
     "(char 1))"),
])
def test_a_submit_without_a_trainer(args, error):
    with pytest.raises(CaptureFailed) as exc:
        submit.from_submit(args, "s", "ray-submit")
    assert str(exc.value) == error


@pytest.mark.parametrize(("args", "error"), [
    (["--runtime-env-json", "[]", "--", "python3"], "s: --runtime-env-json is list, expected a mapping"),
    (["--runtime-env-json", '{"env_vars": ["A=1"]}', "--", "python3"], "s: runtime env env_vars is list, expected a "
                                                                  "mapping"),
    (["--runtime-env-json", '{"working_dir": 3}', "--", "python3"],
     "s: runtime env working_dir is int, expected a string"),
])
def test_a_runtime_env_of_the_wrong_kind_is_refused(args, error):
    with pytest.raises(JobFormatError) as exc:
        submit.from_submit(args, "s", "ray-submit")
    assert str(exc.value) == error


def test_the_errors_are_what_capture_reports():
    assert issubclass(JobFormatError, ValueError) and issubclass(CaptureFailed, RuntimeError)
