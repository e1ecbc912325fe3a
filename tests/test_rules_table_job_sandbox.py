"""Rule table for the capture sandbox (rlcheck.job.sandbox): why it cannot be made (each tool missing, the namespaces
refused), the user's variables and arguments it refuses and the whole reason, where a script starts, what a command
keeps in view, how the call record and the output become a Run (odd lines, the variables set at exit, the bounds
hit), and the runner's exit, deadline and file-size limit; one real run where the sandbox can be made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import rlcheck
from rlcheck.job import confine, sandbox, shown
from rlcheck.job.bounded import Output
from rlcheck.job.sandbox import Run

UNSHARE = "unshare --user --map-root-user --mount --pid --net --ipc --uts --fork --kill-child --mount-proc"


@pytest.fixture
def fresh_available(monkeypatch):
    """available() probed again in this test (it is cached per process), and again after it."""
    sandbox.available.cache_clear()
    yield
    sandbox.available.cache_clear()


@pytest.mark.parametrize("missing", ["unshare", "setpriv", "mount", "pivot_root"])
def test_available_names_the_missing_tool(monkeypatch, fresh_available, missing):
    monkeypatch.setattr(sandbox.shutil, "which",
                        lambda tool, path=None: None if tool == missing else f"/usr/bin/{tool}")
    assert sandbox.available() == f"{missing} (util-linux) is not installed"


@pytest.mark.parametrize(("on_path", "in_sbin", "found"), [
    (True, True, "/usr/bin/pivot_root"),
    (False, True, "/usr/sbin/pivot_root"),  # sbin is often not on a user's PATH
    (False, False, None),
])
def test_pivot_root_is_looked_for_on_path_then_in_sbin(monkeypatch, on_path, in_sbin, found):
    def which(tool, path=None):
        assert tool == "pivot_root"
        if path is None:
            return "/usr/bin/pivot_root" if on_path else None
        assert path == "/usr/local/sbin:/usr/sbin:/sbin"
        return "/usr/sbin/pivot_root" if in_sbin else None

    monkeypatch.setattr(confine.shutil, "which", which)
    assert confine.pivot_root() == found


@pytest.mark.parametrize(("returncode", "stderr", "why"), [
    (1, "unshare: unshare failed: Operation not permitted\n", "unshare: unshare failed: Operation not permitted"),
    (2, "  \n", "2"),
    (0, "warning\n", ""),
])
def test_available_probes_the_namespaces_and_the_capability_drop(monkeypatch, fresh_available, returncode, stderr,
                                                                  why):
    calls = []

    def run(argv, **kwargs):
        calls.append((argv, kwargs))
        return subprocess.CompletedProcess(argv, returncode, "", stderr)

    monkeypatch.setattr(sandbox.shutil, "which", lambda tool, path=None: f"/usr/bin/{tool}")
    monkeypatch.setattr(sandbox.subprocess, "run", run)
    assert sandbox.available() == (f"user, mount, PID, network and IPC namespaces are not permitted here "
                                   f"({UNSHARE}: {why})" if why else "")
    assert sandbox.available() == sandbox.available() and len(calls) == 1  # probed once
    assert calls == [([*UNSHARE.split(), "--propagation", "private", "setpriv", "--inh-caps=-all",
                       "--ambient-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", "true"],
                      {"capture_output": True, "text": True, "timeout": 10, "check": False})]


def test_run_where_the_sandbox_cannot_be_made_says_where_to_capture(monkeypatch):
    monkeypatch.setattr(sandbox, "available", lambda: "setpriv (util-linux) is not installed")
    with pytest.raises(sandbox.SandboxUnavailable) as exc:
        sandbox.run(["bash", "launch.sh"])
    assert str(exc.value) == ("setpriv (util-linux) is not installed; capture where it is allowed (`rlcheck job "
                              "capture SCRIPT -o job.json`) and pass the JSON with --job")


@pytest.mark.parametrize("env", [[], [("MASTER_ADDR", "10.0.0.1")], [("_x1", ""), ("RLCHECKX", "1"), ("a", "b=c")]])
def test_check_env_takes_variables_by_name(env):
    assert sandbox.check_env(env) == tuple(env)


@pytest.mark.parametrize(("name", "text"), [
    ("1GPU", "--job-env '1GPU': a variable name is letters, digits and _, not starting with a digit"),
    ("MY-VAR", "--job-env 'MY-VAR': a variable name is letters, digits and _, not starting with a digit"),
    ("", "--job-env '': a variable name is letters, digits and _, not starting with a digit"),
    ("A B", "--job-env 'A B': a variable name is letters, digits and _, not starting with a digit"),
    ("X\n", "--job-env 'X\\n': a variable name is letters, digits and _, not starting with a digit"),
    ("PATH", "--job-env PATH: the sandbox sets it itself (PATH, HOME, LANG, BASH_ENV, RLCHECK_*)"),
    ("HOME", "--job-env HOME: the sandbox sets it itself (PATH, HOME, LANG, BASH_ENV, RLCHECK_*)"),
    ("LANG", "--job-env LANG: the sandbox sets it itself (PATH, HOME, LANG, BASH_ENV, RLCHECK_*)"),
    ("BASH_ENV", "--job-env BASH_ENV: the sandbox sets it itself (PATH, HOME, LANG, BASH_ENV, RLCHECK_*)"),
    ("RLCHECK_RECORD", "--job-env RLCHECK_RECORD: the sandbox sets it itself (PATH, HOME, LANG, BASH_ENV, RLCHECK_*)"),
])
def test_check_env_refuses_a_bad_name_or_one_the_sandbox_sets(name, text):
    with pytest.raises(ValueError) as exc:
        sandbox.check_env([("OK", "1"), (name, "v")])
    assert str(exc.value) == text


@pytest.mark.parametrize("args", [[], ["--model", "qwen3-4B"], ["", " spaced arg ", "é"]])
def test_check_args_takes_strings(args):
    assert sandbox.check_args(args) == tuple(args)


@pytest.mark.parametrize(("arg", "shown"), [("a\0b", "'a\\x00b'"), (3, "3"), (None, "None"), (b"x", "b'x'")])
def test_check_args_refuses_what_a_command_line_cannot_carry(arg, shown):
    with pytest.raises(ValueError) as exc:
        sandbox.check_args(["ok", arg])
    assert str(exc.value) == f"script argument {shown}: a command-line argument is a string without NUL bytes"


@pytest.fixture
def repo(tmp_path):
    """tmp/repo (a git checkout) with scripts/run.sh, and tmp/loose/run.sh outside any checkout."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "scripts" / "deep").mkdir(parents=True)
    (tmp_path / "loose").mkdir()
    for script in ("repo/scripts/run.sh", "repo/scripts/deep/run.sh", "loose/run.sh"):
        (tmp_path / script).write_text("true\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("script", "cwd", "start"), [
    (None, "anywhere", "anywhere"),
    ("repo/scripts/run.sh", "repo", "repo"),  # launched from the repo root: stays there
    ("repo/scripts/run.sh", "repo/scripts", "repo/scripts"),  # launched from its own directory
    ("repo/scripts/deep/run.sh", "repo/scripts", "repo/scripts"),
    ("repo/scripts/deep/run.sh", "loose", "repo"),  # from elsewhere: its repo's root
    ("repo/scripts/run.sh", "repo/scripts/deep", "repo"),  # below the script is not holding it
    ("loose/run.sh", "repo", "loose"),  # no checkout: its own directory
    ("loose/run.sh", ".", "."),  # the caller's directory holds it
])
def test_start_dir(repo, script, cwd, start):
    at = {"anywhere": "/anywhere", ".": str(repo)}
    got = sandbox.start_dir(str(repo / script) if script else None, at.get(cwd, str(repo / cwd)))
    assert got == at.get(start, str(repo / start))


class _RootIsACheckout(type(Path())):
    """A path of a machine whose / holds .git (an image built with `git init /` to track its own files)."""

    def exists(self, *, follow_symlinks: bool = True) -> bool:
        return str(self) == "/.git" or super().exists(follow_symlinks=follow_symlinks)


def test_start_dir_never_takes_the_filesystems_root_for_a_checkout(repo, monkeypatch):
    """/ holding .git is no launch's repo: a loose script starts in its own directory, one in a checkout still at its
    root."""
    monkeypatch.setattr(sandbox, "Path", _RootIsACheckout)
    assert sandbox.Path("/.git").exists() and sandbox.Path("/etc").exists()
    assert sandbox.start_dir(str(repo / "loose/run.sh"), str(repo / "repo")) == str(repo / "loose")
    assert sandbox.start_dir(str(repo / "repo/scripts/deep/run.sh"), str(repo / "loose")) == str(repo / "repo")


def test_start_dir_of_a_checkout_that_is_a_git_file(repo):
    (repo / "repo" / ".git").rmdir()
    (repo / "repo" / ".git").write_text("gitdir: /elsewhere\n", encoding="utf-8")  # a worktree or submodule
    assert sandbox.start_dir(str(repo / "repo/scripts/run.sh"), str(repo / "loose")) == str(repo / "repo")


def test_named_files_keeps_absolute_files_and_their_directories(repo):
    (repo / "link.sh").symlink_to(repo / "loose" / "run.sh")
    args = ["bash", str(repo / "repo/scripts/run.sh"), "loose/run.sh", str(repo / "loose"), str(repo / "missing"),
            str(repo / "link.sh"), "--flag"]
    assert sandbox._named_files(args) == [str(repo / "repo/scripts/run.sh"), str(repo / "loose/run.sh"),
                                          str(repo / "repo/scripts"), str(repo / "loose")]


def test_own_files_are_the_interpreter_its_prefixes_and_rlcheck():
    own = sandbox._own_files()
    assert own == (os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable)), sys.prefix,
                   sys.base_prefix, sys.exec_prefix, str(Path(rlcheck.__file__).resolve().parent))


def test_the_interpreter_is_named_by_its_folders_real_path_and_its_own_name(tmp_path, monkeypatch):
    """A venv reached through a linked folder is named by the folder's real path; the python link itself is kept
    (only its venv path finds the venv's packages)."""
    (tmp_path / "real" / "bin").mkdir(parents=True)
    (tmp_path / "real" / "bin" / "python3").symlink_to(sys.executable)
    (tmp_path / "venv").symlink_to(tmp_path / "real")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python3"))
    assert sandbox.interpreter() == str(tmp_path / "real" / "bin" / "python3")


def test_shims_are_written_as_utf_8_whatever_the_locales_codec(tmp_path, monkeypatch):
    """A shim names rlcheck's interpreter and recorder by path, which may hold a name beyond ASCII (a venv under
    /home/josé): written as UTF-8 in an ASCII locale too (LC_ALL=C without Python's UTF-8 mode), where the locale's
    codec could not write it."""
    recorder = "/opt/rlcheck-é/recorder.py"
    want = f'#!/bin/sh\nexec "{sandbox.interpreter()}" -I -S "{recorder}" ray "$@"\n'.encode()
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    code = ("import locale, sys; from pathlib import Path; from rlcheck.job import sandbox; "
            f"sandbox._RECORDER = Path({ascii(recorder)}); sandbox._shims(Path(sys.argv[1])); "
            "print(locale.getpreferredencoding(False)); print(sandbox.__file__)")
    # run from the test's own folder: `python -c` puts its working folder first on the path (the path is given in
    # the code: an argument beyond ASCII would reach it undecoded)
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "child")], env=env,
                          capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ANSI_X3.4-1968", sandbox.__file__]  # an ASCII codec there, this rlcheck
    assert (tmp_path / "child" / "ray").read_bytes() == want
    monkeypatch.setattr(sandbox, "_RECORDER", Path(recorder))  # and in-process
    sandbox._shims(tmp_path / "here")
    assert (tmp_path / "here" / "ray").read_bytes() == want


def test_shims_put_a_recording_stand_in_for_every_fake_and_the_exit_hook(tmp_path):
    sandbox._shims(tmp_path / "bin")
    assert sorted(p.name for p in (tmp_path / "bin").iterdir()) == sorted([*sandbox.FAKES, "bash_env"])
    recorder = Path(sandbox.__file__).with_name("recorder.py")
    for name in sandbox.FAKES:
        shim = tmp_path / "bin" / name
        assert shim.read_text(encoding="utf-8") == (f'#!/bin/sh\nexec "{sandbox.interpreter()}" -I -S "{recorder}" '
                                                    f'{name} "$@"\n')
        assert shim.stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "bin" / "bash_env").read_text(encoding="utf-8") == sandbox._BASH_ENV
    assert sandbox.FAKES == ("ray", "python", "python3", "pkill", "nvidia-smi", "sleep", "aws", "kubectl", "curl",
                             "wget", "hf", "huggingface-cli", "nc", "pip", "pip3")


def _record(*docs) -> str:
    return "".join((d if isinstance(d, str) else json.dumps(d)) + "\n" for d in docs)


EOF_OUT = Output(tail="", read_bytes=0, eof=True, over_cap=False)


@pytest.mark.parametrize(("record", "calls", "substituted", "set_at_exit"), [
    ("", (), (), None),
    (_record({"cmd": "ray", "argv": ["job", "submit"], "stdout": "capture"}),
     (("ray", ("job", "submit")),), (), None),
    (_record({"cmd": "python3", "argv": ["-c", "x"], "stdout": "substitution"},
             {"cmd": "helper", "argv": ["m.py", "q"], "stdout": "substitution"},
             {"cmd": "curl", "argv": ["-sf", "u"], "stdout": "file"},
             {"cmd": "nc", "argv": [1, 2]}),
     (("python3", ("-c", "x")), ("helper", ("m.py", "q")), ("curl", ("-sf", "u")), ("nc", ("1", "2"))),
     (("python3", ("-c", "x")),), None),
    # what a script wrote into the record itself is no call
    (_record("not json", "[1, 2]", '"text"', {"cmd": "ray"}, {"argv": ["x"]}, {"cmd": "ray", "argv": 5}, "",
             {"cmd": "ray", "argv": ["stop"]}),
     (("ray", ("stop",)),), (), None),
    (_record({"cmd": "rlcheck-set", "argv": ["A", "B"]}, {"cmd": "ray", "argv": ["start"]},
             {"cmd": "rlcheck-set", "argv": ["C"]}),
     (("ray", ("start",)),), (), ("C",)),  # the last one (the top shell's exit) counts
    (_record({"cmd": "rlcheck-set", "argv": []}), (), (), ()),
])
def test_result_reads_the_call_record(record, calls, substituted, set_at_exit):
    assert sandbox._result(0, EOF_OUT, False, record, False) == Run(
        returncode=0, stderr_tail=(), calls=calls, timed_out=False, substituted=substituted, set_at_exit=set_at_exit)


@pytest.mark.parametrize(("code", "out", "ended", "record_over", "timed_out", "limits"), [
    (3, EOF_OUT, False, False, False, ()),
    (-1, Output(tail="", read_bytes=10, eof=False, over_cap=False), True, False, True, ()),
    (-1, Output(tail="", read_bytes=1 << 25, eof=False, over_cap=True), True, False, False,
     ("output over 32 MiB: the sandbox was ended",)),
    (0, EOF_OUT, False, True, False, ("call record over 4 MiB: read its start only",)),
    (-1, Output(tail="", read_bytes=1 << 25, eof=False, over_cap=True), True, True, False,
     ("output over 32 MiB: the sandbox was ended", "call record over 4 MiB: read its start only")),
])
def test_result_says_how_the_run_ended_and_the_bounds_it_hit(code, out, ended, record_over, timed_out, limits):
    assert sandbox._result(code, out, ended, "", record_over) == Run(
        returncode=code, stderr_tail=(), calls=(), timed_out=timed_out, limits=limits)


@pytest.mark.parametrize(("tail", "kept"), [
    ("one\ntwo\n", ("one", "two")),
    ("".join(f"line {i}\n" for i in range(12)), tuple(f"line {i}" for i in range(4, 12))),  # the last 8
    ("x" * 301 + "\n" + "y" * 300, ("x" * 300, "y" * 300)),  # each cut at 300 characters
    ("a\r\nb", ("a", "b")),
])
def test_result_keeps_the_last_lines_of_output(tail, kept):
    out = Output(tail=tail, read_bytes=len(tail), eof=True, over_cap=False)
    assert sandbox._result(1, out, False, "", False).stderr_tail == kept


ENV = {"PATH": "/usr/bin:/bin"}


@pytest.mark.parametrize(("script", "env", "result"), [
    ("echo hi; exit 3", ENV, (3, Output(tail="hi\n", read_bytes=3, eof=True, over_cap=False), False)),
    ("echo err >&2; cat; echo $FOO", {**ENV, "FOO": "bar"},  # stderr joins stdout; stdin is empty
     (0, Output(tail="err\nbar\n", read_bytes=8, eof=True, over_cap=False), False)),
])
def test_run_returns_the_exit_and_the_output(script, env, result):
    assert sandbox._run(["sh", "-c", script], env, 20) == result


def test_run_gives_the_command_no_stdin_of_rlchecks():
    r, w = os.pipe()
    os.write(w, b"rlcheck's own input\n")
    os.close(w)
    saved = os.dup(0)
    try:
        os.dup2(r, 0)
        ran = sandbox._run(["sh", "-c", "cat; echo end"], ENV, 20)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(r)
    assert ran == (0, Output(tail="end\n", read_bytes=4, eof=True, over_cap=False), False)


def test_run_kills_a_command_that_closed_its_output_and_lives_on(monkeypatch):
    monkeypatch.setattr(sandbox, "REAP_TIMEOUT_S", 0.2)
    assert sandbox._run(["sh", "-c", "echo bye; exec >&- 2>&-; exec sleep 30"], ENV, 20) == (
        -9, Output(tail="bye\n", read_bytes=4, eof=True, over_cap=False), False)


def test_run_past_its_deadline_ends_the_whole_group(tmp_path):
    marker = tmp_path / "child-survived"
    script = f"(sleep 1 && touch {marker}) & echo started; exec sleep 30"
    code, out, ended = sandbox._run(["sh", "-c", script], ENV, 0.5)
    assert (code, out, ended) == (-1, Output(tail="started\n", read_bytes=8, eof=False, over_cap=False), True)
    subprocess.run(["sleep", "0.9"], check=True)  # past the moment the child would have touched it
    assert not marker.exists()


def test_limit_files_caps_the_size_of_a_file_written(monkeypatch):
    calls = []
    monkeypatch.setattr(sandbox.resource, "setrlimit", lambda *a: calls.append(a))  # in the child, before unshare
    sandbox._limit_files()
    assert calls == [(sandbox.resource.RLIMIT_FSIZE, (256 << 20, 256 << 20))]


def test_run_limits_the_size_of_every_file_written():
    code, out, _ = sandbox._run([sys.executable, "-c", "import resource; print(resource.getrlimit("
                                 "resource.RLIMIT_FSIZE))"], ENV, 20)
    assert (code, out.tail) == (0, f"({256 << 20}, {256 << 20})\n")
    assert sandbox.FILE_SIZE_CAP_BYTES == 256 << 20


def test_kill_of_a_process_already_gone_is_no_error():
    proc = subprocess.Popen(["true"], start_new_session=True)
    proc.wait()
    sandbox._kill(proc)
    assert proc.returncode == 0


@pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
def test_run_in_the_sandbox_records_the_calls_the_variables_and_where_it_ran(repo):
    script = repo / "repo" / "scripts" / "run.sh"
    script.write_text('echo "home=$HOME lang=$LANG user=$MY_VAR path=${PATH%%:*}"\n'
                      '[ -f /etc/shadow ] && wc -c < /etc/shadow || echo 0\npwd\n'
                      'MASTER_ADDR=${MASTER_ADDR:-}\nMY_SET=1\n'
                      "ray job submit --working-dir . -- python3 train.py \"$@\"\n"
                      "x=$(python3 -c 'import sys')\ncurl -sf http://teacher/health\nexit 4\n", encoding="utf-8")
    run = sandbox.run(["bash", str(script)], env=[("MY_VAR", "given")], script=str(script), args=["--lr", "1e-6"],
                      timeout_s=20)
    assert (run.returncode, run.timed_out, run.limits) == (4, False, ())
    assert run.calls == (("ray", ("job", "submit", "--working-dir", ".", "--", "python3", "train.py", "--lr", "1e-6")),
                         ("program", ("-c", "import sys")), ("curl", ("-sf", "http://teacher/health")))
    assert run.substituted == ()  # the program ran for real and answered
    assert "MY_SET" in run.set_at_exit and "MY_VAR" in run.set_at_exit and "MASTER_ADDR" not in run.set_at_exit
    line, shadow, start = run.stderr_tail
    assert shadow == "0"  # a hidden file reads as empty
    assert start == str(repo / "repo")  # launched from elsewhere: the script's checkout
    home, lang, user, path = (w.partition("=")[2] for w in line.split())
    assert (home.startswith("/tmp/rlcheck-capture-") and home.endswith("/home"), lang, user) == (True, "C.UTF-8",
                                                                                                "given")
    assert path == str(Path(home).parent / "bin")


@pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
def test_run_shows_the_checkout_where_the_image_keeps_it(repo, monkeypatch):
    script = repo / "repo" / "scripts" / "run.sh"
    script.write_text("ls /root/slime; ls /root/slime/scripts | head -1; pwd\n", encoding="utf-8")
    monkeypatch.chdir(repo / "repo" / "scripts")  # launched from the script's directory, below the checkout
    run = sandbox.run(["bash", str(script)], script=str(script), checkout=(str(repo / "repo"), "/root/slime"),
                      timeout_s=20)
    assert (run.returncode, run.stderr_tail) == (0, ("scripts", "deep", str(repo / "repo" / "scripts")))


@pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
def test_run_without_a_script_starts_in_its_empty_home():
    # a script writing into the call record itself past its cap: read its start only, and said so
    run = sandbox.run(["bash", "-c", 'pwd; ls -A | wc -l; python3 -c "$0"; head -c 4194305 /dev/zero >> '
                       '"$RLCHECK_RECORD"', "import os"], timeout_s=20)
    assert (run.returncode, run.timed_out, run.limits) == (0, False, ("call record over 4 MiB: read its start only",))
    assert run.stderr_tail[1:] == ("0", "rlcheck: the call record is full (4194304 bytes): `rlcheck-set` not recorded")
    assert run.stderr_tail[0].startswith("/tmp/rlcheck-capture-") and run.stderr_tail[0].endswith("/home")
    assert run.calls == (("python3", ("-c", "import os")),)



@pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
def test_a_failure_of_the_sandboxs_own_set_up_is_named_as_the_sandboxs(monkeypatch):
    """bash runs the set-up as `sandbox`: an error of its own there reads `sandbox: line N: ...`, not as the
    launch's (the command never started)."""
    monkeypatch.setattr(confine, "prologue", lambda layout: "set -eu\ncd /rlcheck-no-such-dir\n")
    run = sandbox.run(["bash", "-c", "echo started"], timeout_s=20)
    assert (run.returncode, run.stderr_tail, run.calls) == (
        1, ("sandbox: line 2: cd: /rlcheck-no-such-dir: No such file or directory",), ())


@pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
def test_run_past_its_time_limit_is_ended_and_says_so():
    run = sandbox.run(["bash", "-c", "exec tail -f /dev/null"], timeout_s=1)  # sleep is a stand-in here
    assert (run.returncode, run.calls, run.timed_out, run.limits) == (-1, (), True, ())


@pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
def test_run_refuses_to_show_a_folder_that_holds_its_own_run_folder(tmp_path, monkeypatch):
    runs = tmp_path / "tmp"
    (tmp_path / "models").mkdir()
    runs.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(runs))  # where the run's own folder is made
    with pytest.raises(ValueError) as refused:  # the folder that holds it is named, not the other one shown
        sandbox.run(["bash", "-c", "true"], show=[str(tmp_path / "models"), str(tmp_path)], timeout_s=20)
    said = str(refused.value)
    assert said.startswith(f"--job-show {tmp_path}: holds rlcheck's own folder for the run ({runs}/rlcheck-capture-")
    assert said.endswith(shown.ALLOWED)
    run = sandbox.run(["bash", "-c", "true"], show=[str(tmp_path / "models")], timeout_s=20)  # beside it: shown
    assert (run.returncode, run.stderr_tail) == (0, ())


@pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
def test_run_shows_a_folder_with_its_credential_places_hidden(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("HOME-KEY\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    models = tmp_path / "models"
    models.mkdir()
    (models / "config.json").write_text('{"num_hidden_layers": 2}\n', encoding="utf-8")
    (models / ".netrc").write_text("machine hub password NETRC-KEY\n", encoding="utf-8")
    (models / "keys").symlink_to(home / ".ssh")  # a link the folder brings the caller's .ssh into view with
    run = sandbox.run(["bash", "-c", f"cd {models} && cat config.json .netrc keys/id_rsa 2>&1; echo done"],
                      show=[str(models)], timeout_s=20)
    assert run.returncode == 0 and run.stderr_tail[0] == '{"num_hidden_layers": 2}'
    assert run.stderr_tail[-1] == "done" and not any("KEY" in line for line in run.stderr_tail)


@pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
@pytest.mark.parametrize("path", ["/opt/rlcheck-image/bin:/usr/bin:/bin", None])
def test_run_tells_the_recorder_the_callers_path(monkeypatch, path):
    """Where the caller's shell finds its programs (the image's own pip answers package queries); none set: ''."""
    if path is None:
        monkeypatch.delenv("PATH")
    else:
        monkeypatch.setenv("PATH", path)
    run = sandbox.run(["bash", "-c", 'echo "[$RLCHECK_HOST_PATH]"'], timeout_s=20)
    assert (run.returncode, run.stderr_tail) == (0, (f"[{path or ''}]",))


@pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
def test_run_hides_a_home_inside_a_shown_folder_whole(tmp_path, monkeypatch):
    models = tmp_path / "models"
    (models / "home").mkdir(parents=True)
    (models / "config.json").write_text('{"num_hidden_layers": 2}\n', encoding="utf-8")
    (models / "home" / "notes.txt").write_text("HOME-NOTE\n", encoding="utf-8")  # no credential by its name
    monkeypatch.setenv("HOME", str(models / "home"))  # the caller's home lies inside the folder shown
    run = sandbox.run(["bash", "-c", f"cd {models} && cat config.json home/notes.txt 2>&1; echo done"],
                      show=[str(models)], timeout_s=20)
    assert run.returncode == 0 and run.stderr_tail[0] == '{"num_hidden_layers": 2}'
    assert run.stderr_tail[-1] == "done" and not any("HOME-NOTE" in line for line in run.stderr_tail)
