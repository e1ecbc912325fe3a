"""A job's argv through Ray's entrypoint shell: Ray joins the tokens after `ray job submit --` with
subprocess.list2cmdline (ray dashboard/modules/job/cli.py) and its job supervisor runs the string with
/bin/sh -c. list2cmdline quotes only whitespace and double quotes, so `[1]*48`, `$X` and `;` reach the shell
bare: a bracket list is globbed against the job's working dir, an array expanded by the wrong shell is lost.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence

from rlcheck.probes.recipe.inline_secrets import redact
from rlcheck.verdict import Status, Verdict

_GLOB = re.compile(r"[*?\[]")
_SHELL = re.compile(r"[$`;&|<>()]")
GLOB_REMEDY = ("Quote the token inside the entrypoint (or pass argv after `--` to a launcher script that runs "
               "`exec python3 train.py \"${ARGS[@]}\"`) so /bin/sh cannot glob it")
LOSS_REMEDY = ("Expand arrays in the shell that defines them and hand argv to Ray ready-made: `ray job submit ... "
               "-- ./launch.sh`, or rlcheck.cluster.launch, which submits a shlex-quoted entrypoint")


def bare_tokens(tokens: Sequence[str]) -> list[str]:
    """Findings for tokens the shell will glob or interpret because list2cmdline leaves them unquoted."""
    out = []
    for i, (raw, token) in enumerate(zip(tokens, redact(list(tokens)), strict=True)):
        if subprocess.list2cmdline([raw]) != raw:
            continue  # list2cmdline quoted it (whitespace or a double quote)
        if _GLOB.search(raw):
            out.append(f"argv token {i} `{token}` reaches /bin/sh unquoted: a glob, replaced by any file of the "
                       f"job's working dir it matches")
        elif _SHELL.search(raw):
            out.append(f"argv token {i} `{token}` reaches /bin/sh unquoted: the shell interprets it")
    return out


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_ENV_ARGUMENT = ("-u", "--unset", "-C", "--chdir", "-S", "--split-string")


def command_of(meant: Sequence[str]) -> list[str]:
    """The command the shell runs: leading `NAME=value` assignments and an `env [options] [NAME=value ...]` prefix
    set the trainer's environment, they are not its argv (POSIX shell grammar; coreutils env)."""
    tokens = list(meant)
    i = 0
    while i < len(tokens) and _ASSIGNMENT.match(tokens[i]):
        i += 1
    if i < len(tokens) and tokens[i] == "env":
        i += 1
        while i < len(tokens) and (tokens[i].startswith("-") or _ASSIGNMENT.match(tokens[i])):
            i += 2 if tokens[i] in _ENV_ARGUMENT else 1
    return tokens[i:]


def difference(meant: Sequence[str], got: Sequence[str]) -> str:
    """'' when equal, else one line naming the first difference (secrets redacted)."""
    if list(meant) == list(got):
        return ""
    a, b = redact(list(meant)), redact(list(got))
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    first = f"meant {a[i] if i < len(a) else '(nothing)'!r}, got {b[i] if i < len(b) else '(nothing)'!r}"
    return (f"argv changed through `/bin/sh -c`: {len(a)} token(s) meant, {len(b)} received; first difference at "
            f"token {i}: {first}")


def evaluate_argv_intact(meant: Sequence[str], got: Sequence[str], entrypoint: str, shell_error: str = "",
                         unseen: str = "") -> Verdict:
    """FAIL when the trainer gets other argv than the launch meant (or never starts); WARN for bare tokens.

    entrypoint '' means no shell in between (rlcheck's own launch, or a trainer the script ran directly).
    """
    if unseen:
        return Verdict(status=Status.UNKNOWN, summary=unseen)
    if shell_error:
        return Verdict(status=Status.FAIL, summary=shell_error, failure_id="ray-argv-loss", remedy=LOSS_REMEDY)
    if not entrypoint:
        return Verdict(status=Status.PASS, summary=f"{len(got)} argv token(s) reach the trainer without a shell")
    diff = difference(command_of(meant), got)
    if diff:
        return Verdict(status=Status.FAIL, summary=diff, failure_id="ray-argv-loss", remedy=LOSS_REMEDY)
    # Bare tokens are only knowable where Ray built the string (`ray job submit --`); a hand-written RayJob
    # entrypoint is judged by the replayed difference alone.
    bare = bare_tokens(meant) if entrypoint == subprocess.list2cmdline(list(meant)) else []
    if bare:
        return Verdict(status=Status.WARN, failure_id="model-args-glob", remedy=GLOB_REMEDY,
                       summary=f"{len(bare)} argv token(s) reach /bin/sh unquoted; {bare[0]}",
                       details="\n".join(bare))
    return Verdict(status=Status.PASS, summary=f"{len(got)} argv token(s) survive `/bin/sh -c` unchanged")
