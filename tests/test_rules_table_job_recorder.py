"""Rule table for the capture sandbox's fake commands (rlcheck.job.recorder): which calls run for real (a pure model
helper, a Python launcher, a standard-library program whose output the script reads), which are answered (a port
probe by its status, Ray's GPU poll by CLUSTER_GPUS), where a call's output went, and the record line each writes,
within the record's cap."""

from __future__ import annotations

import io
import json
import os
import socket
import sys
from pathlib import Path

import pytest

from rlcheck.job import recorder

HELPER = "miles/utils/external_utils/model_args_utils.py"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A checkout with Miles' and SLIME's model helper, a launcher, a trainer and a plain script; cwd is its root."""
    for helper in (HELPER, HELPER.replace("miles", "slime"), "xmiles/utils/external_utils/model_args_utils.py"):
        (tmp_path / helper).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / helper).write_text("print('--num-layers 36')\n", encoding="utf-8")
    (tmp_path / "run.py").write_text("import os\nos.system('ray job submit -- python3 train.py')\n", encoding="utf-8")
    (tmp_path / "run_npu.py").write_text("U.execute_train_npu(train_args='')\n", encoding="utf-8")
    (tmp_path / "train_launch.py").write_text("ray job submit -- python3 x.py\n", encoding="utf-8")
    (tmp_path / "plain.py").write_text("print('hello')\nexecute_training()\nmyexecute_train()\n", encoding="utf-8")
    (tmp_path / "dir.py").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("name", "args", "pure"), [
    ("python3", [HELPER, "qwen3-4B"], True),
    ("python", [HELPER.replace("miles", "slime"), "glm4-9B"], True),
    ("python3", ["<tree>/" + HELPER, "qwen3-4B"], True),  # absolute
    ("python3", ["xmiles/utils/external_utils/model_args_utils.py", "qwen3-4B"], False),  # not the framework's own
    ("python3", [HELPER + "c", "qwen3-4B"], False),
    ("python3", ["miles/utils/external_utils/missing/model_args_utils.py", "qwen3-4B"], False),
    ("python3", [HELPER], False),  # no model type
    ("python3", [HELPER, "qwen3-4B", "extra"], False),
    ("python3", [HELPER, "--help"], False),
    ("python3.12", [HELPER, "qwen3-4B"], False),
    ("ray", [HELPER, "qwen3-4B"], False),
])
def test_is_pure_helper(tree, name, args, pure):
    args = [a.replace("<tree>", str(tree)) for a in args]
    assert recorder.is_pure_helper(name, args) is pure


def test_is_pure_helper_needs_the_file_to_exist(tree):
    (tree / HELPER).unlink()
    assert recorder.is_pure_helper("python3", [HELPER, "qwen3-4B"]) is False


@pytest.mark.parametrize(("name", "args", "launcher"), [
    ("python3", ["run.py", "run", "qwen3-4B"], True),  # builds `ray job submit`
    ("python", ["run_npu.py"], True),  # calls execute_train_npu(
    ("python3", ["train_launch.py"], False),  # a train*.py is the trainer, never the launcher
    ("python3", ["plain.py"], False),  # execute_training / myexecute_train are not execute_train(
    ("python3", ["missing.py"], False),
    ("python3", ["dir.py"], False),
    ("python3", ["run"], False),  # not a .py file
    ("python3", [], False),
    ("python3", ["-c", "run.py"], False),
    ("ray", ["run.py"], False),
])
def test_is_launcher(tree, name, args, launcher):
    assert recorder.is_launcher(name, args) is launcher


def test_is_launcher_reads_a_file_that_is_not_utf8_with_replacement(tree):
    (tree / "latin.py").write_bytes(b"# caf\xe9\nos.system('ray job submit -- python3 train.py')\n")
    assert recorder.is_launcher("python3", ["latin.py"]) is True


def test_is_launcher_of_a_file_that_cannot_be_read_is_no_launcher(tree):
    (tree / "mem.py").symlink_to("/proc/self/mem")  # a regular file whose read at offset 0 fails (EIO)
    assert recorder.is_launcher("python3", ["mem.py"]) is False


@pytest.mark.parametrize(("pad", "launcher"), [(0, True), (1, False)])
def test_is_launcher_reads_the_first_mib_only(tree, pad, launcher):
    marker = "execute_train("
    (tree / "big.py").write_text("#" * ((1 << 20) - len(marker) - 1 + pad) + "\n" + marker, encoding="utf-8")
    assert recorder.is_launcher("python3", ["big.py"]) is launcher


@pytest.mark.parametrize(("name", "args", "status"), [
    ("nc", ["-z", "head", "6379"], True),
    ("nc", ["-vz", "head", "6379"], True),
    ("nc", ["head", "6379", "-z"], True),
    ("nc", ["-v", "head", "6379"], False),  # it would talk: the fake's silence is a missing answer
    ("nc", ["--zero", "head"], False),
    ("nc", ["z", "head"], False),
    ("nc", [], False),
    ("curl", ["-z", "x"], False),
])
def test_answers_by_status(name, args, status):
    assert recorder.answers_by_status(name, args) is status


POLL = "import ray; ray.init(); print(int(ray.cluster_resources().get('GPU', 0)))"


@pytest.mark.parametrize(("name", "args", "poll"), [
    ("python3", ["-c", POLL], True),
    ("python", ["-c", POLL.replace("'GPU'", '"GPU"')], True),
    ("python3", ["-c", POLL.replace(".get('GPU'", ".get(  'GPU'")], True),
    ("python3", ["-c", POLL, "extra"], True),
    ("python3", ["-c", POLL.replace("GPU", "CPU")], False),
    ("python3", ["-m", POLL], False),
    ("python3", ["-c"], False),
    ("python3", [POLL, "-c"], False),
    ("ray", ["-c", POLL], False),
])
def test_answers_cluster_poll(name, args, poll):
    assert recorder.answers_cluster_poll(name, args) is poll


@pytest.mark.parametrize(("program", "stdlib"), [
    ("import json, os\nprint(json.dumps(dict(os.environ)))", True),
    ("from os import path\nimport os.path", True),
    ("from __future__ import annotations\nimport collections.abc", True),
    ("print(1)", True),
    ("import json\nimport ray", False),
    ("import numpy as np", False),
    ("from ray import init", False),
    ("from . import x", False),
    ("from .util import x", False),
    ("from ..json import x", False),
    ("import json\nif True print(1)", False),  # does not parse
    ("print(1)\0", False),
])
def test_stdlib_only(program, stdlib):
    assert recorder._stdlib_only(program) is stdlib


@pytest.mark.parametrize(("name", "args", "stdin", "out"), [
    ("python3", ["-c", "print(1)"], "", ("print(1)", [])),
    ("python", ["-c", "import sys; print(sys.argv)", "a", "-b"], "", ("import sys; print(sys.argv)", ["a", "-b"])),
    ("python3", ["-", "x"], "import os\nprint(os.getcwd())\n", ("import os\nprint(os.getcwd())\n", ["x"])),
    ("python3", ["-"], "print(2)", ("print(2)", [])),
    ("python3", ["-c", "import torch"], "", None),
    ("python3", ["-", "x"], "import ray\n", None),
    ("python3", ["-c", "  \n"], "", None),
    ("python3", ["-"], "", None),
    ("python3", ["-c"], "print(1)", None),
    ("python3", ["run.py"], "print(1)", None),
    ("python3", [], "print(1)", None),
    ("ray", ["-c", "print(1)"], "", None),
])
def test_stdlib_program(name, args, stdin, out):
    assert recorder.stdlib_program(name, args, io.StringIO(stdin)) == out


def test_stdlib_program_reads_stdin_up_to_the_cap(monkeypatch):
    monkeypatch.setattr(recorder, "PROGRAM_OUTPUT_CAP_BYTES", 8)
    assert recorder.stdlib_program("python3", ["-"], io.StringIO("print(1)  # and more")) == ("print(1)", [])


@pytest.mark.parametrize(("program", "rest", "ran"), [
    ("import sys; print(' '.join(sys.argv[1:]))", ["a", "b"], (0, b"a b\n", b"")),
    ("import sys; sys.stdout.write(sys.stdin.read() or 'none'); sys.exit(3)", [], (3, b"none", b"")),
    ("import os; print(os.environ['MASTER_ADDR'])", [], (1, b"", "KeyError: 'MASTER_ADDR'")),
])
def test_run_program(program, rest, ran):
    code, out, err = recorder.run_program(program, rest)
    assert (code, out) == ran[:2]
    assert err.decode().strip().splitlines()[-1:] == ([ran[2]] if ran[2] else [])


@pytest.mark.parametrize(("program", "code"), [
    ("print('12345')", 1),  # 6 bytes over a cap of 5: failed, its output cut after cap + 1
    ("print('1234')", 0),  # 5 bytes: at the cap
    ("import sys; print('123456789'); sys.exit(4)", 4),  # its own failure stands
])
def test_run_program_output_over_the_cap_fails(monkeypatch, program, code):
    monkeypatch.setattr(recorder, "PROGRAM_OUTPUT_CAP_BYTES", 5)
    assert recorder.run_program(program, [])[:2] == (code, {0: b"1234\n", 1: b"12345\n", 4: b"123456"}[code])


def test_run_program_reads_no_stdin_and_keeps_a_short_stderr_whole():
    r, w = os.pipe()
    os.write(w, b"from the script's stdin")
    os.close(w)
    saved = os.dup(0)
    try:
        os.dup2(r, 0)
        ran = recorder.run_program("import sys; sys.stderr.write('abc'); print(repr(sys.stdin.read()))", [])
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(r)
    assert ran == (0, b"''\n", b"abc")


def test_run_program_runs_isolated_without_site_packages():
    program = "import sys; print('site' in sys.modules, sys.flags.isolated, sys.flags.no_site)"
    assert recorder.run_program(program, []) == (0, b"False 1 1\n", b"")


def test_run_program_keeps_the_last_4_kib_of_stderr():
    code, out, err = recorder.run_program("import sys; sys.stderr.write('a' * 5000 + 'b' * 4000 + 'end')", [])
    assert (code, out, err) == (0, b"", b"a" * 93 + b"b" * 4000 + b"end")


def test_run_program_past_its_time_is_killed_with_124(monkeypatch):
    monkeypatch.setattr(recorder, "PROGRAM_TIMEOUT_S", 0.3)
    assert recorder.run_program("import sys, time; print('started', flush=True); time.sleep(60)", []) == (
        124, b"started\n", b"")


def _on_stdout(target_fd: int):
    """_stdout_kind() with fd 1 pointing at target_fd (restored after)."""
    saved = os.dup(1)
    try:
        os.dup2(target_fd, 1)
        return recorder._stdout_kind()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def test_stdout_kind_of_a_pipe_a_socket_and_a_file(tmp_path, monkeypatch):
    monkeypatch.delenv("RLCHECK_STDOUT", raising=False)
    r, w = os.pipe()
    a, b = socket.socketpair()
    with open(tmp_path / "out.log", "wb") as f:
        try:
            assert [_on_stdout(w), _on_stdout(a.fileno()), _on_stdout(f.fileno())] == [
                "substitution", "substitution", "file"]
            monkeypatch.setenv("RLCHECK_STDOUT", str(tmp_path / "out.log"))
            assert [_on_stdout(f.fileno()), _on_stdout(w)] == ["capture", "substitution"]
            monkeypatch.setenv("RLCHECK_STDOUT", os.readlink(f"/proc/self/fd/{w}"))
            assert [_on_stdout(w), _on_stdout(f.fileno())] == ["capture", "file"]
        finally:
            for fd in (r, w):
                os.close(fd)
            a.close()
            b.close()


def test_stdout_kind_of_a_closed_stdout(monkeypatch):
    saved = os.dup(1)
    try:
        os.close(1)
        kind = recorder._stdout_kind()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    assert kind == "closed"


class Exec(Exception):
    """os.execv called: the argv it would have run."""


@pytest.fixture
def call(tree, monkeypatch):
    """call(NAME, *ARGS, kind=..., stdin=...) -> (exit status, record lines as dicts, stdout): recorder.main as a shim
    runs it, with fd 1 judged as `kind`; os.execv raises Exec(argv)."""
    record = tree / "calls.jsonl"
    monkeypatch.setenv("RLCHECK_RECORD", str(record))
    monkeypatch.delenv("RLCHECK_RECORD_CAP", raising=False)

    def execv(path, argv):
        raise Exec([path, *argv])

    monkeypatch.setattr(os, "execv", execv)

    def run(name, *args, kind="capture", stdin=""):
        monkeypatch.setattr(sys, "argv", ["recorder.py", name, *args])
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        monkeypatch.setattr(recorder, "_stdout_kind", lambda: kind)
        out = io.BytesIO()
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, write_through=True))
        code = recorder.main()
        sys.stdout.flush()
        lines = record.read_text(encoding="utf-8").splitlines() if record.exists() else []
        record.unlink(missing_ok=True)
        return code, [json.loads(line) for line in lines], out.getvalue()

    return run


def test_main_records_a_call_and_answers_nothing(call, tree):
    assert call("ray", "job", "submit", "--", "python3", "train.py") == (0, [
        {"cmd": "ray", "argv": ["job", "submit", "--", "python3", "train.py"], "cwd": str(tree), "stdout": "capture"}],
        b"")


@pytest.mark.parametrize(("args", "kind"), [(["-z", "head", "6379"], "status"), (["-l", "6379"], "file")])
def test_main_records_a_port_probe_as_answered_by_its_status(call, tree, args, kind):
    assert call("nc", *args, kind="file") == (0, [{"cmd": "nc", "argv": args, "cwd": str(tree), "stdout": kind}], b"")


def test_main_answers_the_gpu_poll_with_cluster_gpus(call, tree):
    assert recorder.CLUSTER_GPUS == 65536
    assert call("python3", "-c", POLL, kind="substitution") == (0, [
        {"cmd": "python3", "argv": ["-c", POLL], "cwd": str(tree), "stdout": "answered"}], b"65536\n")


def test_main_runs_a_stdlib_program_whose_output_the_script_reads(call, tree):
    program = "import sys; print('-'.join(sys.argv[1:]))"
    assert call("python3", "-c", program, "a", "b", kind="substitution") == (0, [
        {"cmd": "program", "argv": ["-c", program, "a", "b"], "cwd": str(tree), "stdout": "answered"}], b"a-b\n")


@pytest.mark.parametrize(("kind", "cmd"), [("capture", "python3"), ("file", "python3")])
def test_main_runs_no_program_whose_output_nobody_reads(call, tree, kind, cmd):
    assert call("python3", "-c", "print(1)", kind=kind) == (0, [
        {"cmd": cmd, "argv": ["-c", "print(1)"], "cwd": str(tree), "stdout": kind}], b"")


def test_main_a_failed_program_answers_nothing_and_records_its_last_error_line(call, tree, capfd):
    program = "import os\nprint('partial')\nprint(os.environ['MASTER_ADDR'])"
    assert call("python3", "-", kind="substitution", stdin=program) == (0, [
        {"cmd": "python3", "argv": ["-"], "cwd": str(tree), "stdout": "substitution"},
        {"cmd": "program-failed", "argv": ["KeyError: 'MASTER_ADDR'"], "cwd": str(tree)}], b"")
    assert "KeyError: 'MASTER_ADDR'" in capfd.readouterr().err


def test_main_a_failed_programs_error_that_is_not_utf8_is_recorded_with_replacement(call, tree):
    program = "import sys; sys.stderr.buffer.write(b'bad \\xff byte\\n'); sys.exit(2)"
    assert call("python3", "-c", program, kind="substitution")[1][1:] == [
        {"cmd": "program-failed", "argv": ["bad \ufffd byte"], "cwd": str(tree)}]


def test_main_a_program_failing_silently_records_its_exit_status(call, tree):
    assert call("python3", "-c", "raise SystemExit(7)", kind="substitution")[1][1:] == [
        {"cmd": "program-failed", "argv": ["exit 7"], "cwd": str(tree)}]


def test_main_a_non_stdlib_program_is_not_run(call, tree):
    assert call("python3", "-c", "import torch; print(1)", kind="substitution") == (0, [
        {"cmd": "python3", "argv": ["-c", "import torch; print(1)"], "cwd": str(tree), "stdout": "substitution"}],
        b"")


def test_main_runs_a_pure_helper_for_real_recorded_as_helper(call, tree):
    with pytest.raises(Exec) as exc:
        call("python3", HELPER, "qwen3-4B", kind="substitution")
    assert exc.value.args[0] == [sys.executable, sys.executable, "-I", HELPER, "qwen3-4B"]
    assert json.loads((tree / "calls.jsonl").read_text(encoding="utf-8")) == {
        "cmd": "helper", "argv": [HELPER, "qwen3-4B"], "cwd": str(tree), "stdout": "substitution"}


def test_main_runs_a_launcher_under_the_stub_recorded_as_launcher(call, tree):
    with pytest.raises(Exec) as exc:
        call("python3", "run.py", "run", "qwen3-4B", kind="capture")
    stub = str(Path(recorder.__file__).resolve().with_name("miles_stub.py"))
    assert exc.value.args[0] == [sys.executable, sys.executable, "-I", stub, "run.py", "run", "qwen3-4B"]
    assert json.loads((tree / "calls.jsonl").read_text(encoding="utf-8")) == {
        "cmd": "launcher", "argv": ["run.py", "run", "qwen3-4B"], "cwd": str(tree), "stdout": "capture"}


def test_main_records_an_argument_that_is_not_utf8_with_replacement(call, tree):
    assert call("curl", os.fsdecode(b"http://h/\xff"))[1] == [
        {"cmd": "curl", "argv": ["http://h/\ufffd"], "cwd": str(tree), "stdout": "capture"}]


def _line(name: str, args: list[str], cwd: Path, kind: str = "capture") -> bytes:
    return (json.dumps({"cmd": name, "argv": args, "cwd": str(cwd), "stdout": kind}) + "\n").encode()


@pytest.mark.parametrize("room", [0, -1])
def test_main_a_full_record_takes_no_more_and_the_call_fails(call, tree, monkeypatch, capfd, room):
    record = tree / "calls.jsonl"
    first = _line("ray", ["status"], tree)
    line = _line("ray", ["stop"], tree)
    monkeypatch.setenv("RLCHECK_RECORD_CAP", str(len(first) + len(line) + room))
    monkeypatch.setattr(recorder, "_stdout_kind", lambda: "capture")
    monkeypatch.setattr(sys, "argv", ["recorder.py", "ray", "stop"])
    record.write_bytes(first)
    if room == 0:  # exactly fits
        assert recorder.main() == 0
        assert record.read_bytes() == first + line
    else:
        assert recorder.main() == 1
        assert record.read_bytes() == first
        assert capfd.readouterr().err == (f"rlcheck: the call record is full ({len(first) + len(line) - 1} bytes): "
                                          "`ray` not recorded\n")


def test_main_record_cap_defaults_to_4_mib(call, tree, monkeypatch):
    record = tree / "calls.jsonl"
    line = _line("ray", ["stop"], tree)
    monkeypatch.setattr(recorder, "_stdout_kind", lambda: "capture")
    monkeypatch.setattr(sys, "argv", ["recorder.py", "ray", "stop"])
    for size, code in (((4 << 20) - len(line), 0), ((4 << 20) - len(line) + 1, 1)):
        record.write_bytes(b"x" * size)
        assert recorder.main() == code


# --- a read-only package query answered by the image's own pip ------------------------------------------------------

@pytest.fixture
def pips(tmp_path, monkeypatch):
    """A stand-in folder (shims, with its own pip), the caller's folder and the sandbox's own, each with a pip."""
    dirs = {name: tmp_path / name for name in ("shims", "host", "own")}
    for folder in dirs.values():
        folder.mkdir()
        for name in ("pip", "pip3"):
            (folder / name).write_text("#!/bin/sh\n", encoding="utf-8")
            (folder / name).chmod(0o755)
    monkeypatch.setenv("RLCHECK_BASH_ENV", str(dirs["shims"] / "bash_env"))
    monkeypatch.setenv("RLCHECK_HOST_PATH", f"{dirs['shims']}:{dirs['host']}")
    monkeypatch.setenv("PATH", f"{dirs['shims']}:{dirs['own']}")
    return dirs


@pytest.mark.parametrize(("name", "args", "answered"), [
    ("pip", ["list"], True), ("pip3", ["freeze"], True), ("pip", ["show", "megatron-core"], True),
    ("pip", ["list", "--format=freeze"], True),
    ("pip", ["install", "x"], False), ("pip", ["download", "x"], False), ("pip", [], False),
    ("pip", ["list", "--outdated"], False), ("pip", ["list", "-o"], False), ("pip", ["list", "-u"], False),
    ("pip", ["list", "--index-url=http://x"], False), ("pip", ["list", "-i", "http://x"], False),
    ("pip", ["list", "--extra-index-url", "http://x"], False), ("pip", ["list", "-f", "d"], False),
    ("python3", ["list"], False), ("pipx", ["list"], False),
])
def test_package_queries_that_only_read_what_is_installed(pips, name, args, answered):
    got = recorder.package_query(name, args)
    assert got == (str(pips["host"] / name) if answered else None)


def test_a_package_query_finds_the_sandboxes_own_pip_when_the_caller_has_none(pips, monkeypatch):
    monkeypatch.setenv("RLCHECK_HOST_PATH", str(pips["shims"]))  # only the stand-ins: never answered by them
    assert recorder.package_query("pip", ["list"]) == str(pips["own"] / "pip")
    monkeypatch.setenv("PATH", str(pips["shims"]))
    assert recorder.package_query("pip", ["list"]) is None
    monkeypatch.delenv("RLCHECK_HOST_PATH")
    assert recorder.package_query("pip", ["list"]) is None


@pytest.mark.parametrize(("kind", "args"), [("substitution", ["list"]), ("capture", ["freeze", "--all"]),
                                            ("file", ["show", "megatron-core"])])
def test_main_answers_a_package_query_with_the_callers_pip(call, tree, pips, monkeypatch, kind, args):
    for name in ("PIP_DISABLE_PIP_VERSION_CHECK", "PIP_NO_INPUT", "PIP_NO_INDEX"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(Exec) as ran:
        call("pip", *args, kind=kind)
    pip = str(pips["host"] / "pip")
    assert ran.value.args[0] == [pip, pip, *args]  # the image's own pip, with the call's own arguments
    assert [os.environ[n] for n in ("PIP_DISABLE_PIP_VERSION_CHECK", "PIP_NO_INPUT", "PIP_NO_INDEX")] == ["1"] * 3


def test_main_keeps_the_stand_in_for_any_other_pip_call(call, tree, pips):
    assert call("pip", "install", "x") == (0, [{"cmd": "pip", "argv": ["install", "x"], "cwd": str(tree),
                                                "stdout": "capture"}], b"")


def test_a_package_query_reads_only_absolute_folders(pips, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RLCHECK_HOST_PATH", "host")  # relative: a folder of the sandbox's cwd, not the caller's
    monkeypatch.setenv("PATH", "own")
    assert recorder.package_query("pip", ["list"]) is None
