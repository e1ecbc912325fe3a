"""The parts every capture shares: its two errors, a runtime env's env_vars, and what `ray job submit` received."""

from __future__ import annotations

import json
from typing import Any

from rlcheck.job import replay as replay_mod
from rlcheck.job.job import Job, framework_of

# `ray job submit` options that take a value (Ray 2.x job CLI); the rest of its options are flags.
_SUBMIT_VALUED = frozenset({"--address", "--job-id", "--submission-id", "--runtime-env", "--runtime-env-json",
                            "--working-dir", "--metadata-json", "--entrypoint-num-cpus", "--entrypoint-num-gpus",
                            "--entrypoint-memory", "--entrypoint-resources", "--headers", "--verify", "--log-style",
                            "--log-color"})


class JobFormatError(ValueError):
    """The file is not a job rlcheck can read: what was wrong and which formats are allowed."""


class CaptureFailed(RuntimeError):
    """The launch was read but gave no trainer command (a failed script, no submit): checks are UNKNOWN."""


def env_vars(runtime_env: Any, source: str) -> tuple[tuple[str, str], ...]:
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
        if not isinstance(runtime_env, dict):
            raise JobFormatError(f"{source}: --runtime-env-json is {type(runtime_env).__name__}, expected a mapping")
    if "--runtime-env" in opts:
        findings.append(f"runtime env file {opts['--runtime-env']!r} not read: its env vars are not judged")
    working_dir = opts.get("--working-dir") or runtime_env.get("working_dir")
    if working_dir is not None and not isinstance(working_dir, str):
        raise JobFormatError(f"{source}: runtime env working_dir is {type(working_dir).__name__}, expected a string")
    played = replay_mod.replay(tokens, working_dir=working_dir)
    return Job(argv=played.argv, intended_argv=tuple(tokens), entrypoint=played.entrypoint,
               env=env_vars(runtime_env, source), working_dir=working_dir,
               framework=framework_of(tuple(tokens), working_dir), source=source, source_format=fmt,
               findings=(*findings, *played.findings), shell_error=played.shell_error, unseen=played.unseen, **shape)


