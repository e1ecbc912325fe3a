"""What a captured script needed and did not get: the variables it stopped for, and the commands whose output it
read from rlcheck's stand-ins (which print nothing)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# bash: `${X:?}` -> "X: parameter null or not set", `${X?}` -> "X: parameter not set", set -u -> "X: unbound variable"
_BASH_UNSET = re.compile(rf"(?:^|[\s:])({_NAME}): (?:parameter null or not set|parameter not set|unbound variable)")
_REFERENCE = re.compile(rf"\$\{{?({_NAME})")
_REQUIRED = re.compile(rf"\$\{{({_NAME}):?\?")
_TESTED = re.compile(rf"-z\s+\"?\$\{{?({_NAME})")
_ASSIGNED = re.compile(rf"(?:^|[\s;(&|])(?:export\s+|local\s+|declare\s+(?:-\w+\s+)*|readonly\s+)?({_NAME})\+?=|"
                       rf"\bread\s+(?:-\w+\s+)*({_NAME})|\bfor\s+({_NAME})\s+in\b")
_SHELL_OWN = frozenset({"HOME", "PATH", "PWD", "OLDPWD", "IFS", "RANDOM", "LINENO", "SECONDS", "UID", "EUID", "PPID",
                        "BASH_SOURCE", "BASH_REMATCH", "FUNCNAME", "PIPESTATUS", "HOSTNAME", "OPTARG", "OPTIND",
                        "USER", "SHELL", "TERM", "LANG", "TMPDIR", "BASHPID", "SRANDOM", "EPOCHSECONDS"})


def missing_variables(script_text: str, output: Sequence[str], set_at_exit: Iterable[str] | None) -> list[str]:
    """The variables a failed script stopped for: named by bash's own message, else the ones it requires
    (`${X:?}`, `[ -z "$X" ]`) or reads without ever assigning that were unset when it exited."""
    said = [m.group(1) for line in output for m in _BASH_UNSET.finditer(line)]
    required = set(_REQUIRED.findall(script_text))
    # `${X:?message}` prints "X: message": a custom message names the variable too.
    said += [name for name in sorted(required) if any(f"{name}: " in line for line in output)]
    if said:
        return list(dict.fromkeys(said))
    if set_at_exit is None:
        return []
    was_set = set(set_at_exit)
    assigned = {name for groups in _ASSIGNED.findall(script_text) for name in groups if name}
    unset = [n for n in dict.fromkeys(_REFERENCE.findall(script_text))
             if n not in was_set and n not in _SHELL_OWN and not n.startswith(("RLCHECK_", "BASH"))]
    tested = [n for n in unset if n in required or n in set(_TESTED.findall(script_text))]
    return tested or [n for n in unset if n not in assigned][:8]


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
