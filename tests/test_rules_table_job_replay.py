"""Rule table for what the trainer receives from `ray job submit -- TOKENS` (rlcheck.job.replay): the string Ray runs
(list2cmdline, or the RayJob's own entrypoint), the trainer call of the sandbox run, a replay with no sandbox, a
trainer that never starts (the shell's fault, or a file this machine lacks), and the difference named. Recorded
sandbox runs stand in for the sandbox, and one real replay shows the shell's own globbing."""

from __future__ import annotations

import pytest

from rlcheck.job import replay, sandbox


def _run(*calls, returncode=0, tail=()) -> sandbox.Run:
    return sandbox.Run(returncode=returncode, stderr_tail=tail, calls=tuple(calls))


@pytest.fixture
def ran(monkeypatch):
    """sandbox.run answering with a recorded run (or raising), recording the command it was given."""
    state: dict = {"asked": []}

    def run(command, **kw):
        state["asked"].append(command)
        answer = state["run"]
        if isinstance(answer, Exception):
            raise answer
        return answer
    monkeypatch.setattr(sandbox, "run", run)
    return state


@pytest.mark.parametrize(("calls", "argv"), [
    ([("ray", ("x",)), ("python3", ("t.py", "--a")), ("python", ("u.py",))], ("python3", "t.py", "--a")),
    ([("python", ())], ("python",)),
    ([("bash", ("-c", "x")), ("python3.11", ("t.py",))], None),
    ([], None),
])
def test_the_trainer_call_is_the_first_python(calls, argv):
    assert replay.trainer_call(_run(*calls)) == argv


def test_a_replay_gives_the_trainers_argv(ran):
    ran["run"] = _run(("python3", ("t.py", "--x", "1")))
    got = replay.replay(["python3", "t.py", "--x", "1"])
    assert got == replay.Replayed(entrypoint="python3 t.py --x 1", argv=("python3", "t.py", "--x", "1"), findings=())
    assert ran["asked"] == [["/bin/sh", "-c", "python3 t.py --x 1"]]


def test_a_replay_that_changed_the_argv_names_the_difference_and_the_bare_tokens(ran):
    ran["run"] = _run(("python3", ("t.py", "--f", "[1]*48", "x")))
    got = replay.replay(["python3", "t.py", "--f", "[1]*48", "a b"])
    assert got.entrypoint == 'python3 t.py --f [1]*48 "a b"'
    assert got.findings == (
        "argv token 3 `[1]*48` reaches /bin/sh unquoted: a glob, replaced by any file of the job's working dir it "
        "matches",
        "argv changed through `/bin/sh -c`: 5 token(s) meant, 5 received; first difference at token 4: meant 'a b', "
        "got 'x'")


def test_a_hand_written_entrypoint_is_judged_by_its_replay_alone(ran):
    ran["run"] = _run(("python3", ("t.py", "[1]*48")))
    got = replay.replay(["python3", "t.py", "[1]*48"], "cd /w && python3 t.py [1]*48")
    assert (got.entrypoint, got.findings) == ("cd /w && python3 t.py [1]*48", ())
    assert ran["asked"] == [["/bin/sh", "-c", "cd /w && python3 t.py [1]*48"]]
    # the same string as Ray would build it: its bare tokens are named
    got = replay.replay(["python3", "t.py", "[1]*48"], "python3 t.py [1]*48")
    assert len(got.findings) == 1 and got.findings[0].startswith("argv token 2 `[1]*48` reaches /bin/sh unquoted")


def test_without_a_sandbox_the_entrypoint_is_split_as_posix_sh_would(ran):
    ran["run"] = sandbox.SandboxUnavailable("no user namespaces")
    got = replay.replay(["python3", "t.py"], "python3 't.py' $X")
    assert got == replay.Replayed(entrypoint="python3 't.py' $X", argv=("python3", "t.py", "$X"), findings=(
        "entrypoint not replayed (no user namespaces); argv split as POSIX sh would, without globbing",
        "argv changed through `/bin/sh -c`: 2 token(s) meant, 3 received; first difference at token 2: meant "
        "'(nothing)', got '$X'"))


@pytest.mark.parametrize(("returncode", "tail", "shell_error", "unseen"), [
    (2, ("sh: 1: Syntax error: \"(\" unexpected",), True, False),
    (127, ("sh: 1: /root/run.sh: not found",), False, True),
    (0, (), True, False),
    (126, ("a", "b"), True, False),
])
def test_a_trainer_that_never_starts(ran, returncode, tail, shell_error, unseen):
    ran["run"] = _run(("bash", ("x",)), returncode=returncode, tail=tail)
    got = replay.replay(["python3", "t.py"], "x")
    why = (f"the entrypoint never starts python under /bin/sh -c (exit {returncode}; output: "
           f"{' | '.join(tail) or '(no output)'})")
    assert (got.argv, got.shell_error, got.unseen) == (("python3", "t.py"), why if shell_error else "",
                                                       f"{why}; capture the job where that file exists" if unseen
                                                       else "")
    assert got.findings == (f"{why}: the trainer argv is the tokens as meant",)


@pytest.mark.parametrize(("tokens", "files", "working_dir", "launcher"), [
    (["bash", "go.sh", "--lr", "1"], ["go.sh"], "{w}", "{w}/go.sh"),
    (["./go.sh"], ["go.sh"], "{w}", "{w}/./go.sh"),
    (["sh", "-e", "go.sh"], ["go.sh"], "{w}", "{w}/go.sh"),  # among the first three words
    (["bash", "-x", "-e", "go.sh"], ["go.sh"], "{w}", None),  # past them: an argument, not the launcher
    (["bash", "go.sh"], [], "{w}", None),  # not in the working_dir
    (["bash", "go.sh"], ["go.sh"], None, None),
    (["bash", "go.sh"], ["go.sh"], "rel", None),  # relative: whose directory is not known
    (["bash", "go.sh"], ["go.sh"], "{w}/missing", None),
    (["bash", "/abs/go.sh"], ["go.sh"], "{w}", None),
    (["bash", "-go.sh"], ["-go.sh"], "{w}", None),
    (["bash", "sub"], ["sub/x"], "{w}", None),  # a directory
])
def test_the_launcher_an_entrypoint_runs_from_the_working_dir(tmp_path, tokens, files, working_dir, launcher):
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    wd = working_dir.replace("{w}", str(tmp_path)) if working_dir else None
    expected = launcher.replace("{w}", str(tmp_path)) if launcher else None
    assert replay.launcher_in(tokens, wd) == expected


@pytest.mark.parametrize("returncode", [127, 1])
def test_a_launcher_of_the_working_dir_is_named_with_how_to_capture_it(ran, tmp_path, returncode):
    (tmp_path / "go.sh").write_text("")
    ran["run"] = _run(("bash", ("x",)), returncode=returncode, tail=("bash: go.sh: No such file or directory",))
    got = replay.replay(["bash", "go.sh", "--lr", "1"], working_dir=str(tmp_path))
    why = ("the entrypoint never starts python under /bin/sh -c (exit " + str(returncode) +
           "; output: bash: go.sh: No such file or directory)")
    assert (got.shell_error, got.unseen) == (("", f"{why}; the entrypoint runs {tmp_path}/go.sh from the job's "
                                              f"working_dir, a launcher whose trainer argv rlcheck does not see from "
                                              f"here: capture it with the job's env and the entrypoint's "
                                              f"arguments (rlcheck job capture {tmp_path}/go.sh --job-env "
                                              f"NAME=VALUE ... -- ARG ...) and pass that Job with --job")
                                             if returncode == 127 else (why, ""))


def test_the_shell_globs_a_bare_token_for_real():
    got = replay.replay(["python3", "t.py", "--moe-layer-freq", "[1]*48"])
    assert got.argv == ("python3", "t.py", "--moe-layer-freq", "[1]*48")  # no file matches in the sandbox's dir
    assert got.findings == ("argv token 3 `[1]*48` reaches /bin/sh unquoted: a glob, replaced by any file of the "
                            "job's working dir it matches",)
