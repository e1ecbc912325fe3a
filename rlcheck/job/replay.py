"""What the trainer receives from `ray job submit -- TOKENS`: Ray joins the tokens with subprocess.list2cmdline
(ray dashboard/modules/job/cli.py, `entrypoint=list2cmdline(entrypoint)`) and its job supervisor runs that string
with /bin/sh -c. list2cmdline quotes only whitespace and double quotes, so `[1]*48`, `$X` and `;` reach the shell
bare. Replaying it in the sandbox gives the argv the trainer gets; the difference from what was meant is a finding.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
from collections.abc import Sequence

from rlcheck.job import sandbox
from rlcheck.probes.recipe.argv_shell import bare_tokens, difference

TRAINER_FAKES = ("python", "python3")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Replayed:
    entrypoint: str
    """The string Ray runs with /bin/sh -c."""
    argv: tuple[str, ...]
    """The trainer's argv as /bin/sh hands it over (interpreter first)."""
    findings: tuple[str, ...]
    shell_error: str = ""
    """Why python never started under /bin/sh -c ('' when it did)."""
    unseen: str = ""
    """The entrypoint runs a program or file this machine does not have (exit 127): its argv cannot be seen."""


def trainer_call(run: sandbox.Run) -> tuple[str, ...] | None:
    """The first python/python3 call of a sandbox run, interpreter first."""
    return next(((cmd, *argv) for cmd, argv in run.calls if cmd in TRAINER_FAKES), None)


def launcher_in(tokens: Sequence[str], working_dir: str | None) -> str | None:
    """The file of the job's working_dir the entrypoint runs (`bash launch.sh ...`, `./launch.sh`), or None: Ray
    starts the entrypoint in the uploaded working_dir, which the replay does not follow."""
    if not working_dir or not os.path.isabs(working_dir) or not os.path.isdir(working_dir):
        return None
    return next((os.path.join(working_dir, t) for t in tokens[:3] if not t.startswith("-") and not os.path.isabs(t)
                 and os.path.isfile(os.path.join(working_dir, t))), None)


def replay(tokens: Sequence[str], entrypoint: str | None = None, working_dir: str | None = None) -> Replayed:
    """Run the entrypoint as Ray would (sandboxed, fakes on PATH); without a sandbox, split it as POSIX sh would.
    working_dir: the job's (`--working-dir`, the runtime env's), named when the entrypoint runs a launcher from it."""
    entry = entrypoint if entrypoint is not None else subprocess.list2cmdline(list(tokens))
    # Bare tokens are knowable only where Ray built the string; a hand-written entrypoint is judged by the replay.
    findings = bare_tokens(tokens) if entry == subprocess.list2cmdline(list(tokens)) else []
    try:
        run = sandbox.run(["/bin/sh", "-c", entry])
        got = trainer_call(run)
    except sandbox.SandboxUnavailable as exc:
        findings.append(f"entrypoint not replayed ({exc}); argv split as POSIX sh would, without globbing")
        got = tuple(shlex.split(entry))
    shell_error = unseen = ""
    if got is None:
        tail = " | ".join(run.stderr_tail) or "(no output)"
        why = f"the entrypoint never starts python under /bin/sh -c (exit {run.returncode}; output: {tail})"
        launcher = launcher_in(tokens, working_dir)
        if run.returncode == 127 and launcher:  # a launcher of the working_dir builds the trainer's argv
            unseen = (f"{why}; the entrypoint runs {launcher} from the job's working_dir, a launcher whose trainer "
                      f"argv rlcheck does not see from here: capture it with the job's env and the entrypoint's "
                      f"arguments (rlcheck job capture {launcher} --job-env NAME=VALUE ... -- ARG ...) and pass that "
                      f"Job with --job")
        elif run.returncode == 127:  # command or file not found: not on this machine, so not the shell's fault
            unseen = f"{why}; capture the job where that file exists"
        else:
            shell_error = why
        findings.append(f"{why}: the trainer argv is the tokens as meant")
        got = tuple(tokens)
    diff = difference(tokens, got)
    return Replayed(entrypoint=entry, argv=tuple(got), findings=tuple([*findings, diff] if diff else findings),
                    shell_error=shell_error, unseen=unseen)
