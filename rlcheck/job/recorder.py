"""The fake commands of the capture sandbox: record argv as one JSON line, exit 0.

Run as `python3 recorder.py NAME ARGS...` by the shims the sandbox puts first on PATH (rlcheck.job.sandbox.FAKES);
it writes to $RLCHECK_RECORD and touches nothing else. A record already at $RLCHECK_RECORD_CAP bytes takes no more
(the call fails, saying so). `stdout` says where the call's output went: "capture" (the sandbox's own output),
"substitution" (a pipe the script reads, as in `$(python3 ...)`: the stand-in answered nothing there), "file",
"status" (a call answered by its exit status alone, as `nc -z HOST PORT` is: "open"), or "answered" (a program asking
Ray how many GPUs have joined, answered CLUSTER_GPUS: the cluster is up).

A Python launcher a script calls (`python run.py run MODEL`: a file that builds `ray job submit` or calls
execute_train) runs for real under rlcheck.job.miles_stub, recorded as `launcher`, so the launch it makes is recorded.

A framework's pure model-argument helper (Miles' `python3 miles/utils/external_utils/model_args_utils.py qwen3-4B`,
which prints the model's Megatron flags from scripts/models/<type>.py: standard library only, no network, no GPU)
runs for real with rlcheck's interpreter, recorded as `helper`, so the launch gets the model arguments it would.

A read-only package query (`pip list`, `pip freeze`, `pip show PKG`: a launch reading Megatron's path from `pip list
| grep megatron-core`) is answered by the image's own pip, found on PATH after the stand-ins, with no index asked.

A Python program whose output the script reads (`$(python3 -c PROGRAM)`, `$(python3 - <<PY ... PY)`) and that imports
only the standard library (a runtime env built as JSON from the environment) runs for real too, recorded as `program`
when it succeeds; when it fails the stand-in's empty answer stands, with the program's last error lines shown.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys

# Every fake command starts this module, some scripts hundreds of times (a wait loop of `ray status; sleep 5`): what
# only a Python program run for real needs (ast, subprocess, tempfile) is imported where it is used, and typing not
# at all (mypy reads a name TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

_DEFAULT_CAP = 4 << 20
PURE_HELPERS = re.compile(r"(^|/)(miles|slime)/utils/external_utils/model_args_utils\.py$")
"""The helpers run for real: they print model arguments, read only the tree's scripts/models/ and need nothing else."""


def is_pure_helper(name: str, args: list[str]) -> bool:
    """`python3 HELPER MODEL_TYPE`: one of PURE_HELPERS, a file that exists, run with one plain argument."""
    return (name in ("python", "python3") and len(args) == 2 and bool(PURE_HELPERS.search(args[0]))
            and os.path.isfile(args[0]) and not args[1].startswith("-"))


_LAUNCHES = re.compile(r"ray job submit|\bexecute_train(?:_npu)?\(")
_STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "miles_stub.py")


def is_launcher(name: str, args: list[str]) -> bool:
    """`python3 LAUNCHER.py ARG...` from a script: a Python file (not a train*.py, the trainer) whose text builds the
    launch (`ray job submit`, Miles' or SLIME's execute_train): run for real under rlcheck.job.miles_stub, so the
    launch it makes is recorded as a bash script's is (Miles' p2p_weight_transfer scripts call `python run.py run
    MODEL`)."""
    if name not in ("python", "python3") or not args or not args[0].endswith(".py"):
        return False
    if os.path.basename(args[0]).startswith("train") or not os.path.isfile(args[0]):
        return False
    try:
        with open(args[0], "rb") as src:
            text = src.read(1 << 20).decode("utf-8", errors="replace")
    except OSError:
        return False
    return bool(_LAUNCHES.search(text))


def answers_by_status(name: str, args: list[str]) -> bool:
    """A call whose answer is its exit status alone, which the fake's 0 gives (`nc -z HOST PORT`: the port is open;
    it prints nothing even when real): its output is not a missing answer."""
    return name == "nc" and any(a.startswith("-") and not a.startswith("--") and "z" in a for a in args)


_GPU_POLL = re.compile(r"""ray\.cluster_resources\(\)\.get\(\s*["']GPU["']""")
CLUSTER_GPUS = 1 << 16
"""What the fake python answers a program that asks Ray how many GPUs have joined (`python3 -c "...
print(int(ray.cluster_resources().get('GPU', 0)))"`): more than any cluster has, so a script waiting for its nodes to
join (Miles' multi-node profile scripts, and the launcher they call) goes on to its submit, as it does once the
cluster is up."""


def answers_cluster_poll(name: str, args: list[str]) -> bool:
    """`python3 -c PROGRAM` where the program prints the GPUs of Ray's cluster: answered with CLUSTER_GPUS."""
    return (name in ("python", "python3") and len(args) >= 2 and args[0] == "-c"
            and bool(_GPU_POLL.search(args[1])))


_PACKAGE_QUERIES = ("list", "freeze", "show")
_INDEX_OPTIONS = ("-o", "--outdated", "-u", "--uptodate", "-i", "--index-url", "--extra-index-url", "--index",
                  "-f", "--find-links", "--not-required")
"""pip options that ask an index (the sandbox has no network) or that the query does not need."""


def package_query(name: str, args: list[str]) -> str | None:
    """The image's own pip for a question that only reads what is installed (`pip list`, `pip freeze`, `pip show
    PKG`, as a launch reads Megatron's path from `pip list | grep megatron-core`): the first pip on the caller's PATH
    (RLCHECK_HOST_PATH), then the sandbox's own after its stand-ins, or None (any other pip call, an index option, no
    pip there: the stand-in answers)."""
    if name not in ("pip", "pip3") or not args or args[0] not in _PACKAGE_QUERIES:
        return None
    if any(a.partition("=")[0] in _INDEX_OPTIONS for a in args[1:]):
        return None
    import shutil

    shims = os.path.realpath(os.path.dirname(os.environ.get("RLCHECK_BASH_ENV") or "/nonexistent/x"))
    path = f"{os.environ.get('RLCHECK_HOST_PATH', '')}{os.pathsep}{os.environ.get('PATH', '')}"
    # absolute folders only: a relative PATH entry would be read from the sandbox's working directory
    rest = [p for p in path.split(os.pathsep) if os.path.isabs(p) and os.path.realpath(p) != shims]
    return shutil.which(name, path=os.pathsep.join(rest))


PROGRAM_OUTPUT_CAP_BYTES = 1 << 20
PROGRAM_TIMEOUT_S = 10.0


def _stdlib_only(program: str) -> bool:
    """The program parses and imports nothing but the standard library (no relative import)."""
    import ast

    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError):
        return False
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: a package's own module
                return False
            names.append(str(node.module))
    return all(n.split(".")[0] in sys.stdlib_module_names for n in names)


def stdlib_program(name: str, args: list[str], stdin: IO[str]) -> tuple[str, list[str]] | None:
    """(program, its arguments) of `python3 -c PROGRAM ARG...` or `python3 - ARG...` (the program on stdin, read
    here), when it imports only the standard library; else None."""
    if name not in ("python", "python3") or not args:
        return None
    if args[0] == "-c" and len(args) >= 2:
        program, rest = args[1], args[2:]
    elif args[0] == "-":
        program, rest = stdin.read(PROGRAM_OUTPUT_CAP_BYTES), args[1:]
    else:
        return None
    return (program, rest) if program.strip() and _stdlib_only(program) else None


def run_program(program: str, rest: list[str]) -> tuple[int, bytes, bytes]:
    """(exit status, stdout, the last of stderr) of the program run with rlcheck's interpreter, its output in files (the
    sandbox caps their size); status 1 when its output passes PROGRAM_OUTPUT_CAP_BYTES, 124 when it runs past
    PROGRAM_TIMEOUT_S (killed; a child of its own still holding the output ends with the sandbox)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", program, *rest], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err)
        try:
            code = proc.wait(timeout=PROGRAM_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = 124
        out.seek(0)
        text = out.read(PROGRAM_OUTPUT_CAP_BYTES + 1)
        if len(text) > PROGRAM_OUTPUT_CAP_BYTES:
            code = code or 1
        err.seek(max(0, err.seek(0, os.SEEK_END) - 4096))
        return code, text, err.read()


def _stdout_kind() -> str:
    try:
        where = os.readlink("/proc/self/fd/1")
        mode = os.fstat(1).st_mode
    except OSError:
        return "closed"
    if where == os.environ.get("RLCHECK_STDOUT"):
        return "capture"
    return "substitution" if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else "file"


def main() -> int:
    # Arguments that are not UTF-8 arrive as surrogate escapes: recorded with replacement, as capture reads them.
    name, *args = (os.fsencode(a).decode("utf-8", errors="replace") for a in sys.argv[1:])
    cap = int(os.environ.get("RLCHECK_RECORD_CAP") or _DEFAULT_CAP)
    helper = is_pure_helper(name, args)
    launcher = not helper and is_launcher(name, args)
    cmd = "helper" if helper else "launcher" if launcher else name
    poll = answers_cluster_poll(name, args)
    query = package_query(name, args)
    kind = ("status" if answers_by_status(name, args) else "answered" if poll or query else _stdout_kind())
    program = stdlib_program(name, args, sys.stdin) if kind == "substitution" and cmd == name else None
    ran = run_program(*program) if program is not None else None
    if ran is not None and ran[0] == 0:  # its output is what the script reads, as it would be
        cmd, kind = "program", "answered"
    line = json.dumps({"cmd": cmd, "argv": args, "cwd": os.getcwd(), "stdout": kind}) + "\n"
    if ran is not None and ran[0] != 0:  # why it answered nothing: its last error line (`KeyError: 'MASTER_ADDR'`)
        last = ran[2].decode("utf-8", errors="replace").strip().splitlines()[-1:] or [f"exit {ran[0]}"]
        line += json.dumps({"cmd": "program-failed", "argv": last, "cwd": os.getcwd()}) + "\n"
    with open(os.environ["RLCHECK_RECORD"], "a", encoding="utf-8", errors="replace") as out:
        if out.tell() + len(line.encode("utf-8", errors="replace")) > cap:
            print(f"rlcheck: the call record is full ({cap} bytes): `{name}` not recorded", file=sys.stderr)
            return 1
        out.write(line)
    if helper:  # in the sandbox: no network, the tree read-only; its own output is what the script reads
        os.execv(sys.executable, [sys.executable, "-I", *sys.argv[2:]])
    if launcher:  # the sandbox holds it as it holds the script; the stub stands in for the frameworks' helpers
        os.execv(sys.executable, [sys.executable, "-I", _STUB, *sys.argv[2:]])
    if query is not None:  # read-only: what is installed in this image, no index asked (no network here)
        os.environ.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PIP_NO_INDEX="1")
        os.execv(query, [query, *sys.argv[2:]])
    if poll:
        print(CLUSTER_GPUS)
    if ran is not None:  # its output; failed: the stand-in's empty answer, and the program's last words say why
        sys.stdout.buffer.write(ran[1] if ran[0] == 0 else b"")
        sys.stderr.buffer.write(ran[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
