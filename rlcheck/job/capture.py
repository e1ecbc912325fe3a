"""Capture a Job from what a user launches: detect the format, read it, replay Ray's entrypoint.

`capture(path, fmt)` raises JobFormatError (bad input: a usage error naming what is allowed) or CaptureFailed
(the launch could not be read: every check of the job is UNKNOWN with this reason).
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from rlcheck import secret_guard
from rlcheck.job import bounded, sandbox, shown, typed
from rlcheck.job.job import FORMATS, Job, framework_of
from rlcheck.job.rayjob import read_rayjob
from rlcheck.job.sandbox import check_env
from rlcheck.job.script import capture_script
from rlcheck.job.submit import CaptureFailed, JobFormatError, env_vars, from_submit
from rlcheck.probes.recipe.inline_secrets import known_places

__all__ = ["CAPTURE_FORMATS", "CaptureFailed", "JobFormatError", "capture", "detect", "parse_env"]

CAPTURE_FORMATS = tuple(f for f in FORMATS if f != "recipe")
# A Miles launcher imports Miles' launch helpers (`import miles.utils.external_utils.command_utils as U`).
_MILES_IMPORT = re.compile(r"^\s*(from|import)\s+miles(\.|\s)", re.MULTILINE)
# SLIME's Python launchers use the same helpers (Miles forked them): run under the same stub, judged as SLIME.
_SLIME_LAUNCHER = re.compile(r"^\s*(from|import)\s+slime\.utils\.external_utils\.command_utils\b", re.MULTILINE)


def parse_env(items: Sequence[str], environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """--job-env values: NAME=VALUE, or NAME alone for this shell's value (keeps a secret out of argv and history);
    JobFormatError names the bad item."""
    out: list[tuple[str, str]] = []
    for item in items:
        name, eq, value = item.partition("=")
        if not eq:
            if name not in environ:
                raise JobFormatError(f"--job-env {name}: not set in this environment; give NAME=VALUE or export it")
            value = environ[name]
        out.append((name, value))
    try:
        return check_env(out)
    except ValueError as exc:
        raise JobFormatError(str(exc)) from exc


_INPUT_CAP_BYTES = 16 << 20


def _read(path: Path) -> str:
    """A launch file, decoded with replacement; JobFormatError when it is larger than any launch is."""
    text, over = bounded.read_capped(str(path), _INPUT_CAP_BYTES)
    if over:
        raise JobFormatError(f"{path}: over {_INPUT_CAP_BYTES >> 20} MiB; a launch file is kilobytes")
    return text


def detect(path: Path) -> str:
    """The format of a job file, from its name and first lines; JobFormatError lists the formats."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            doc = json.loads(_read(path))
        except ValueError as exc:
            raise JobFormatError(f"{path}: not valid JSON ({exc})") from exc
        return "job-json" if isinstance(doc, dict) and "source_format" in doc else "argv-json"
    if suffix in (".yaml", ".yml"):
        return "rayjob"
    text = _read(path)
    code = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if suffix == ".py":
        if _MILES_IMPORT.search(text) or _SLIME_LAUNCHER.search(text):
            return "miles-py"
        raise JobFormatError(f"{path}: a Python file that imports nothing of Miles; a Miles launcher imports "
                             f"miles.utils.external_utils.command_utils (else pass --job-format, one of "
                             f"{', '.join(CAPTURE_FORMATS)})")
    if suffix in (".sh", ".bash") or text.startswith(("#!/bin/bash", "#!/usr/bin/env bash", "#!/bin/sh")):
        return "bash"
    if code and code[0].startswith("ray job submit") and len(code) <= 1 + sum(c.endswith("\\") for c in code):
        return "ray-submit"
    raise JobFormatError(f"{path}: cannot tell its format; pass --job-format, one of {', '.join(CAPTURE_FORMATS)}")


SCRIPT_FORMATS = ("bash", "miles-py")
"""The formats that run in the sandbox: the only ones that take variables' effects and arguments of their own."""


def capture(path: str | Path, fmt: str | None = None, env: Sequence[tuple[str, str]] = (),
            args: Sequence[str] = (), show: Sequence[str] = ()) -> Job:
    """The Job of a launch file; env: variables for a script run in the sandbox (--job-env); args: the script's own
    arguments (`rlcheck job capture SCRIPT -- ARG...`), only for a script (JobFormatError otherwise); show: host
    folders the script sees at their own paths (--job-show, rlcheck.job.shown), only for a script."""
    path = Path(path)
    if fmt is not None and fmt not in CAPTURE_FORMATS:
        raise JobFormatError(f"--job-format={fmt!r}: one of {', '.join(CAPTURE_FORMATS)}")
    if not path.is_file():
        raise JobFormatError(f"--job={str(path)!r}: no such file")
    fmt = fmt or detect(path)
    if args and fmt not in SCRIPT_FORMATS:
        raise JobFormatError(f"{path}: a {fmt} file takes no arguments; arguments after -- (--job-arg with --job) are "
                             f"for a launch script run in the sandbox ({', '.join(SCRIPT_FORMATS)})")
    if show and fmt not in SCRIPT_FORMATS:
        raise JobFormatError(f"{path}: a {fmt} file reads no folder; --job-show is for a launch script run in the "
                             f"sandbox ({', '.join(SCRIPT_FORMATS)})")
    try:
        args = sandbox.check_args(args)
        shown.check(show)
    except ValueError as exc:
        raise JobFormatError(str(exc)) from exc
    known = job_env_secrets(env)
    secret_guard.remember(known.values())
    if fmt in SCRIPT_FORMATS:
        return with_job_env_secrets(capture_script(path, env, fmt, args, show), known)
    text = _read(path)
    readers = {"job-json": _job_json, "argv-json": _argv_json, "rayjob": _rayjob, "ray-submit": _submit_line}
    return with_job_env_secrets(readers[fmt](text, str(path)), known)


def job_env_secrets(env: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The --job-env values that are secrets (by name or by shape): name -> value. Shorter ones than
    secret_guard.MIN_SECRET_CHARS are judged by name where they reappear, not looked for as text."""
    return {name: value for name, value in env
            if (secret_guard.is_secret_name(name) or secret_guard.secret_shape(value))
            and len(value) >= secret_guard.MIN_SECRET_CHARS and not secret_guard.is_reference(value)}


def with_job_env_secrets(job: Job, known: Mapping[str, str]) -> Job:
    """The Job with where a --job-env secret reappears (under any name) recorded, and its texts (findings, why the
    shell stopped) scrubbed: the values stay only where the checks judge them (argv, env, entrypoint)."""
    places = known_places(job.argv, job.env_dict(), job.entrypoint or shlex.join(job.intended_argv), known)
    scrub = secret_guard.scrub_text
    return dataclasses.replace(job, inline_secrets=tuple(dict.fromkeys([*job.inline_secrets, *places])),
                               findings=tuple(scrub(f) for f in job.findings), shell_error=scrub(job.shell_error),
                               unseen=scrub(job.unseen))


def _job_json(text: str, source: str) -> Job:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise JobFormatError(f"{source}: not valid JSON ({exc})") from exc
    where = f"{source}: job"
    typed.strings(doc, "argv", where, required=True)
    for key in ("intended_argv", "findings", "inline_secrets"):
        typed.strings(doc, key, where)
    typed.string_map(doc, "env", where)
    for key in ("nodes", "gpus_per_node"):
        typed.count(doc, key, where)
    for key in ("entrypoint", "working_dir", "framework", "framework_version", "shell_error", "unseen"):
        typed.get(doc, key, str, where)
    try:
        return Job.from_dict(doc, source)
    except ValueError as exc:  # from_dict's own error names the source; a field's bound (nodes=0) does not
        text = str(exc)
        raise JobFormatError(text if text.startswith(f"{source}: ") else f"{where}.{text}") from exc


def _argv_json(text: str, source: str) -> Job:
    """`rlcheck render --format json` output (or a bare JSON list of argv tokens)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise JobFormatError(f"{source}: not valid JSON ({exc})") from exc
    doc = {"argv": doc} if isinstance(doc, list) else doc
    argv = doc.get("argv") if isinstance(doc, dict) else None
    if not isinstance(argv, list) or not argv or not all(isinstance(t, str) for t in argv):
        raise JobFormatError(f"{source}: argv-json needs 'argv': a non-empty list of strings "
                             f"(what `rlcheck render --format json` writes)")
    where = f"{source}: argv-json"
    runtime_env = typed.get(doc, "runtime_env", dict, where, default={})
    res = typed.get(doc, "resources", dict, where, default={})
    working_dir = typed.get(runtime_env, "working_dir", str, f"{where} runtime_env")
    # each reader's JobFormatError names the source already; what they return makes a valid Job (argv not empty,
    # a count of 0 no shape)
    return Job(argv=tuple(argv), intended_argv=tuple(argv),
               entrypoint=typed.get(doc, "entrypoint", str, where) or shlex.join(argv),
               env=env_vars(runtime_env, source), working_dir=working_dir,
               nodes=typed.count(res, "gpu_nodes", f"{where} resources") or None,
               gpus_per_node=typed.count(res, "gpus_per_node", f"{where} resources") or None,
               framework=framework_of(tuple(argv), working_dir), source=source, source_format="argv-json")


def _submit_line(text: str, source: str) -> Job:
    try:
        words = shlex.split(text.replace("\\\n", " "), comments=True)  # join continued lines first
    except ValueError as exc:
        raise JobFormatError(f"{source}: not a shell command line ({exc})") from exc
    at = next((k for k in range(len(words) - 2) if words[k:k + 3] == ["ray", "job", "submit"]), None)
    if at is None:
        raise JobFormatError(f"{source}: no `ray job submit` in it")
    return from_submit(words[at + 3:], source, "ray-submit")


def _rayjob(text: str, source: str) -> Job:
    return read_rayjob(text, source)
