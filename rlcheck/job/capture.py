"""Capture a Job from what a user launches: detect the format, read it, replay Ray's entrypoint.

`capture(path, fmt)` raises JobFormatError (bad input: a usage error naming what is allowed) or CaptureFailed
(the launch could not be read: every check of the job is UNKNOWN with this reason).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from rlcheck.job import replay as replay_mod
from rlcheck.job.job import FORMATS, Job, framework_of

CAPTURE_FORMATS = tuple(f for f in FORMATS if f != "recipe")
# `ray job submit` options that take a value (Ray 2.x job CLI); the rest of its options are flags.
_SUBMIT_VALUED = frozenset({"--address", "--job-id", "--submission-id", "--runtime-env", "--runtime-env-json",
                            "--working-dir", "--metadata-json", "--entrypoint-num-cpus", "--entrypoint-num-gpus",
                            "--entrypoint-memory", "--entrypoint-resources", "--headers", "--verify", "--log-style",
                            "--log-color"})


class JobFormatError(ValueError):
    """The file is not a job rlcheck can read: what was wrong and which formats are allowed."""


class CaptureFailed(RuntimeError):
    """The launch was read but gave no trainer command (a failed script, no submit): checks are UNKNOWN."""


def detect(path: Path) -> str:
    """The format of a job file, from its name and first lines; JobFormatError lists the formats."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise JobFormatError(f"{path}: not valid JSON ({exc})") from exc
        return "job-json" if isinstance(doc, dict) and "source_format" in doc else "argv-json"
    if suffix in (".yaml", ".yml"):
        return "rayjob"
    text = path.read_text(encoding="utf-8", errors="replace")
    code = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if suffix in (".sh", ".bash") or text.startswith(("#!/bin/bash", "#!/usr/bin/env bash", "#!/bin/sh")):
        return "bash"
    if code and code[0].startswith("ray job submit") and len(code) <= 1 + sum(c.endswith("\\") for c in code):
        return "ray-submit"
    raise JobFormatError(f"{path}: cannot tell its format; pass --job-format, one of {', '.join(CAPTURE_FORMATS)}")


def capture(path: str | Path, fmt: str | None = None) -> Job:
    path = Path(path)
    if fmt is not None and fmt not in CAPTURE_FORMATS:
        raise JobFormatError(f"--job-format={fmt!r}: one of {', '.join(CAPTURE_FORMATS)}")
    if not path.is_file():
        raise JobFormatError(f"--job={str(path)!r}: no such file")
    fmt = fmt or detect(path)
    if fmt == "bash":
        from rlcheck.job.script import capture_script

        return capture_script(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    readers = {"job-json": _job_json, "argv-json": _argv_json, "rayjob": _rayjob, "ray-submit": _submit_line}
    return readers[fmt](text, str(path))


def _job_json(text: str, source: str) -> Job:
    try:
        return Job.from_dict(json.loads(text), source)
    except ValueError as exc:
        raise JobFormatError(str(exc)) from exc


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
    runtime_env = doc.get("runtime_env") or {}
    res = doc.get("resources") or {}
    return Job(argv=tuple(argv), intended_argv=tuple(argv), entrypoint=doc.get("entrypoint") or shlex.join(argv),
               env=_env_vars(runtime_env, source), working_dir=runtime_env.get("working_dir"),
               nodes=res.get("gpu_nodes"), gpus_per_node=res.get("gpus_per_node"),
               framework=framework_of(tuple(argv), runtime_env.get("working_dir")), source=source,
               source_format="argv-json")


def _env_vars(runtime_env: Any, source: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(runtime_env, dict):
        raise JobFormatError(f"{source}: the runtime env is {type(runtime_env).__name__}, expected a mapping")
    env = runtime_env.get("env_vars") or {}
    if not isinstance(env, dict):
        raise JobFormatError(f"{source}: runtime env env_vars is {type(env).__name__}, expected a mapping")
    return tuple((str(k), str(v)) for k, v in env.items())


def from_submit(args: list[str], source: str, fmt: str, **shape: Any) -> Job:
    """A Job from the argv `ray job submit` received (the words after `submit`)."""
    opts: dict[str, str] = {}
    findings: list[str] = []
    i = 0
    while i < len(args) and args[i] != "--":
        name, eq, value = args[i].partition("=")
        if not name.startswith("-"):
            findings.append("`ray job submit` has no `--`: the entrypoint starts at the first word that is no option")
            break
        if name in _SUBMIT_VALUED and not eq:
            value, i = (args[i + 1] if i + 1 < len(args) else ""), i + 1
        opts[name] = value
        i += 1
    tokens = args[i + 1:] if i < len(args) and args[i] == "--" else args[i:]
    if not tokens:
        raise CaptureFailed(f"{source}: `ray job submit` has no entrypoint")
    runtime_env: dict[str, Any] = {}
    if "--runtime-env-json" in opts:
        try:
            runtime_env = json.loads(opts["--runtime-env-json"])
        except ValueError as exc:
            raise CaptureFailed(f"{source}: --runtime-env-json is not valid JSON ({exc})") from exc
    if "--runtime-env" in opts:
        findings.append(f"runtime env file {opts['--runtime-env']!r} not read: its env vars are not judged")
    working_dir = opts.get("--working-dir") or runtime_env.get("working_dir")
    played = replay_mod.replay(tokens)
    return Job(argv=played.argv, intended_argv=tuple(tokens), entrypoint=played.entrypoint,
               env=_env_vars(runtime_env, source), working_dir=working_dir,
               framework=framework_of(tuple(tokens), working_dir), source=source, source_format=fmt,
               findings=(*findings, *played.findings), shell_error=played.shell_error, **shape)


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
    from rlcheck.job.rayjob import read_rayjob

    return read_rayjob(text, source)
