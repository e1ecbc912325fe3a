"""What a captured script needed and did not get: the variables it stopped for, and the commands whose output it
read from rlcheck's stand-ins (which print nothing)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence

from rlcheck.job import recorder

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# bash: `${X:?}` -> "X: parameter null or not set", `${X?}` -> "X: parameter not set", set -u -> "X: unbound variable"
_BASH_UNSET = re.compile(rf"(?:^|[\s:])({_NAME}): (?:parameter null or not set|parameter not set|unbound variable)")
_REFERENCE = re.compile(rf"\$\{{?({_NAME})")
_REQUIRED = re.compile(rf"\$\{{({_NAME}):?\?")
_TESTED = re.compile(rf"-z\s+\"?\$\{{?({_NAME})")
_SHELL_OWN = frozenset({"HOME", "PATH", "PWD", "OLDPWD", "IFS", "RANDOM", "LINENO", "SECONDS", "UID", "EUID", "PPID",
                        "BASH_SOURCE", "BASH_REMATCH", "FUNCNAME", "PIPESTATUS", "HOSTNAME", "OPTARG", "OPTIND",
                        "USER", "SHELL", "TERM", "LANG", "TMPDIR", "BASHPID", "SRANDOM", "EPOCHSECONDS"})


_SINGLE_QUOTED = re.compile(r"'[^'\n]*'")
# bash's own error lines name the script line that failed: "run.sh: line 27: /root/x.sh: No such file or directory"
_FAILED_LINE = re.compile(r"\bline (\d+): ")


# A Python launcher reads its variables as os.environ["X"], os.environ.get("X") or os.getenv("X").
_PY_ENV = re.compile(rf"""os\.(?:environ(?:\.get)?\s*[\[(]|getenv\s*\()\s*["']({_NAME})["']""")
_PY_KEY_ERROR = re.compile(rf"""^KeyError: ["']({_NAME})["']$""")


def _references(text: str) -> list[str]:
    """The variables text expands: `$X`, `${X...}` outside single quotes (awk's '{print $NF}' expands nothing) and
    comment lines (`# --wandb-key ${WANDB_KEY}`)."""
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return list(dict.fromkeys([*_REFERENCE.findall(_SINGLE_QUOTED.sub(" ", code)), *_PY_ENV.findall(code)]))


_COMMAND_START = r"(?:^|[;&|({]|\b(?:then|do|else)\s|\b(?:export|local|declare|typeset|readonly)(?:\s+-\w+)*\s)\s*"


def _computes(script_text: str, name: str) -> bool:
    """The script sets the variable itself, so it is not the caller's to give: `NAME=...` where a command starts (a
    line, after `;`, `&`, `|`, `(`, `{`, then/do/else, or export, local, declare, typeset, readonly and their
    options) from anything but its own value (`NAME=${NAME:-}` only defaults the caller's), `for NAME in`,
    `read ... NAME`. `echo NAME=x` is no assignment."""
    own = re.compile(rf"\$\{{?{name}\b")
    for m in re.finditer(rf"{_COMMAND_START}{name}(?:\[[^\]\n]*\])?\+?=(.*)$", script_text, re.MULTILINE):
        if not own.search(m.group(1)):
            return True
    return bool(re.search(rf"\bfor\s+{name}\s+in\b|\bread\b[^\n;|]*\s{name}\b", script_text))


def _says_unset(name: str, output: Sequence[str]) -> bool:
    """The script's own message names the variable as missing ("MASTER_ADDR is not set. Please set it ...")."""
    said = re.compile(rf"\b{name}\b[^.]*\bnot set\b|\b(?:set|export)\s+{name}\b", re.IGNORECASE)
    return any(said.search(line) and not line.startswith("+") for line in output)


def missing_variables(script_text: str, output: Sequence[str], set_at_exit: Iterable[str] | None) -> list[str]:
    """The variables a failed script stopped for: named by bash's own message or the script's ("X is not set"),
    else, unset or empty when it exited: where bash names the failing line, the ones that line reads (a missing
    file with no variable in its path is no variable's fault), otherwise the ones it requires (`${X:?}`,
    `[ -z "$X" ]`)."""
    said = [m.group(1) for line in output for m in _BASH_UNSET.finditer(line)]
    required = set(_REQUIRED.findall(script_text))
    referenced = [n for n in _references(script_text) if n not in _SHELL_OWN and not n.startswith(("RLCHECK_", "BASH"))]
    was_set = set(set_at_exit or ())
    # `${X:?message}` prints "X: message": a custom message names the variable too.
    said += [name for name in sorted(required) if any(f"{name}: " in line for line in output)]
    said += [name for name in referenced if name not in was_set and _says_unset(name, output)]
    said += [m.group(1) for line in output if (m := _PY_KEY_ERROR.match(line.strip())) and m.group(1) in referenced]
    if said:
        # a bash script stops at its first `${X:?}` guard: the later guards it never reached are named with it, so
        # one capture says every variable to pass (a variable the script assigns itself is not the caller's)
        later = [n for n in _REQUIRED.findall(script_text) if set_at_exit is not None and n not in was_set
                 and not _computes(script_text, n)]
        return list(dict.fromkeys([*said, *later]))
    if set_at_exit is None:
        return []
    unset = [n for n in referenced if n not in was_set]
    lines = script_text.splitlines()
    failed = [int(m.group(1)) for line in output for m in _FAILED_LINE.finditer(line)]
    if failed and 0 < failed[-1] <= len(lines):
        on_line = set(_references(lines[failed[-1] - 1]))
        return [n for n in unset if n in on_line and not _computes(script_text, n)]
    # Else only what the script itself checks for: a guess among the variables it reads would send the user after
    # a name that is not why it stopped (the last output lines say what did).
    return [n for n in unset if n in required or n in set(_TESTED.findall(script_text))]


# A script reading its own arguments: $1, ${2:-x}, $#, "$@" (outside single quotes and comments).
_POSITIONAL = re.compile(r"\$(?:[1-9#@*]|\{[1-9#@*])")
_POSITIONAL_UNSET = re.compile(r"(?:^|[\s:])[1-9]: (?:parameter null or not set|parameter not set|unbound variable)")
_USAGE = re.compile(r"(?:^|[\s:])usage:\s", re.IGNORECASE)  # a usage line, not --disable-usage-stats


def wants_arguments(script_text: str, output: Sequence[str], given: Sequence[str]) -> str:
    """'' or the sentence telling the user to pass the script's own arguments: it read them (`$1`, `$#`), none were
    given, and it stopped on one (bash's `${1:?}` message) or printed a usage line."""
    code = "\n".join(line for line in script_text.splitlines() if not line.lstrip().startswith("#"))
    if given or not _POSITIONAL.search(_SINGLE_QUOTED.sub(" ", code)):
        return ""
    if not any(_POSITIONAL_UNSET.search(line) or _USAGE.search(line) for line in output):
        return ""
    usage = next((line.strip() for line in output if _USAGE.search(line) and not line.startswith("+")), "")
    return (f"the script stops for want of its own arguments{f' ({usage})' if usage else ''}: pass them after --: "
            f"rlcheck job capture SCRIPT -- ARG... (with --job: --job-arg ARG, once per argument, in order)")


def how_to_pass(names: Sequence[str]) -> str:
    """'' or the sentence telling the user which --job-env to give."""
    if not names:
        return ""
    flags = " ".join(f"--job-env {n}=..." for n in names)
    return f"the script stops for want of {', '.join(names)} (unset when it exited): pass {flags}"


def substitution_findings(calls: Iterable[tuple[str, tuple[str, ...]]]) -> list[str]:
    """One finding per command whose output the script read from a stand-in (`$(python3 ...)`)."""
    seen = dict.fromkeys(shlex.join((cmd, *argv))[:120] for cmd, argv in calls)
    return [f"`{line}` ran where the script reads its output (a command substitution or pipe): rlcheck's stand-in "
            f"printed nothing there, so what it would add to the launch is missing" for line in seen]


def helper_findings(calls: Iterable[tuple[str, tuple[str, ...]]]) -> list[str]:
    """One finding per framework helper that ran for real in the sandbox (its output is in the launch)."""
    seen = dict.fromkeys(shlex.join(("python3", *argv))[:160] for cmd, argv in calls if cmd == "helper")
    return [f"`{line}` ran for real (a pure model-argument helper of the framework): its output is in the launch"
            for line in seen]


def cluster_findings(calls: Iterable[tuple[str, tuple[str, ...]]]) -> list[str]:
    """One finding per program asking Ray how many GPUs have joined, which the stand-in answered (a wait for the
    cluster goes on)."""
    seen = dict.fromkeys(shlex.join((cmd, *argv))[:120] for cmd, argv in calls
                         if recorder.answers_cluster_poll(cmd, list(argv)))
    return [f"`{line}` asks Ray how many GPUs have joined: rlcheck's stand-in answered {recorder.CLUSTER_GPUS} (every "
            f"node up), so the script's wait for its cluster went on to the launch" for line in seen]


def program_errors(calls: Iterable[tuple[str, tuple[str, ...]]]) -> list[str]:
    """The last error line of each standard-library program that failed where the script read its output."""
    return [argv[0] for cmd, argv in calls if cmd == "program-failed" and argv]


def program_findings(calls: Iterable[tuple[str, tuple[str, ...]]]) -> list[str]:
    """One finding per standard-library-only Python program whose output the script read, run for real."""
    seen = dict.fromkeys(shlex.join(("python3", *argv))[:120] for cmd, argv in calls if cmd == "program")
    return [f"`{line}` ran for real (a Python program of the standard library only, whose output the script reads): "
            f"its output is in the launch" for line in seen]


def launcher_findings(calls: Iterable[tuple[str, tuple[str, ...]]]) -> list[str]:
    """One finding per Python launcher the script called that ran for real under the launch-helper stub."""
    seen = dict.fromkeys(shlex.join(("python3", *argv))[:160] for cmd, argv in calls if cmd == "launcher")
    return [f"`{line}` ran for real under rlcheck's stub of the frameworks' launch helpers (a Python launcher the "
            f"script calls): the launch it makes is the one judged" for line in seen]
