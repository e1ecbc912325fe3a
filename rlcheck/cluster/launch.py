"""Argv-safe job submission through the Ray Jobs SDK.

Ray's job supervisor runs the entrypoint string with /bin/sh -c. An entrypoint made with
shlex.join is one that /bin/sh parses back into exactly the argv it was made from: no
expansion, no globbing, no word splitting (the `ray job submit -- bash -c` trap, ray-argv-loss).
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from rlcheck import secret_guard
from rlcheck.process import subproc, warm


def entrypoint(argv: Sequence[str]) -> str:
    """The shell string that /bin/sh -c turns back into argv, token for token."""
    if not argv:
        raise ValueError("argv=[]: at least the program to run")
    return shlex.join(argv)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class JobOutcome:
    job_id: str
    status: str
    """Ray's JobStatus value (SUCCEEDED, FAILED, STOPPED, ...) or TIMEOUT when we stopped waiting."""
    logs: str
    elapsed_s: float


AGENT_WAIT_S = 90.0


def _submit(dashboard_url: str, **job: Any) -> str:
    """submit_job, retried while a fresh head's job agent is still starting (bounded by AGENT_WAIT_S)."""
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(dashboard_url)
    deadline = time.monotonic() + AGENT_WAIT_S
    while True:
        try:
            return str(client.submit_job(**job))
        except RuntimeError as exc:
            if "No available agent" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(1.0)


def check_no_secrets(argv: Sequence[str], runtime_env: Mapping[str, Any] | None,
                     metadata: Mapping[str, str] | None) -> None:
    """Refuse a submission that would carry a secret: a secret-like name in the env or metadata (HF_TOKEN,
    GH_PAT, DB_PASS, OPENAI_KEY, ...), or the raw value of one of this process's secret variables anywhere
    in the argv, the runtime env or the metadata. The error names the variable, never its value."""
    env_vars = dict((runtime_env or {}).get("env_vars", {}))
    named = [k for k in (*env_vars, *(metadata or {})) if secret_guard.is_secret_name(str(k))]
    if named:
        raise ValueError(f"secret-looking names {named} in runtime env / metadata: the workers read secrets "
                         f"from their own environment")
    leaked = secret_guard.leaked_names([list(argv), dict(runtime_env or {}), dict(metadata or {})], os.environ)
    if leaked:
        raise ValueError(f"the value of {leaked} appears in the argv, runtime env or metadata; never send secrets")


def submit_argv(dashboard_url: str, argv: Sequence[str], *, runtime_env: Mapping[str, Any] | None = None,
                metadata: Mapping[str, str] | None = None) -> str:
    """Submit argv as a Ray job (refusing secrets); returns the job id."""
    check_no_secrets(argv, runtime_env, metadata)
    return _submit(dashboard_url, entrypoint=entrypoint(argv), runtime_env=dict(runtime_env or {}) or None,
                   metadata=dict(metadata or {}) or None)


def submit_entrypoint(dashboard_url: str, entrypoint_text: str, *,
                      runtime_env: Mapping[str, Any] | None = None) -> str:
    """Submit a raw entrypoint string, as users do with the SDK (used to reproduce what goes wrong), with a runtime
    env where given; refused as submit_argv refuses a secret in the entrypoint or the runtime env."""
    check_no_secrets([entrypoint_text], runtime_env, None)
    return _submit(dashboard_url, entrypoint=entrypoint_text, runtime_env=dict(runtime_env or {}) or None)


def await_terminal(client: Any, job_id: str, timeout_s: float, poll_s: float = 0.2) -> str | None:
    """The job's terminal status (SUCCEEDED, FAILED, STOPPED) once it has one; None if not within timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        status = client.get_job_status(job_id)
        if status.is_terminal():
            return str(status.value)
        if time.monotonic() >= deadline:
            return None
        time.sleep(poll_s)


def wait_job(dashboard_url: str, job_id: str, *, timeout_s: float, poll_s: float = 0.5) -> JobOutcome:
    """Wait for the job to finish (bounded); on timeout stop it and say TIMEOUT."""
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(dashboard_url)
    start = time.monotonic()
    status = await_terminal(client, job_id, timeout_s, poll_s)
    if status is None:
        client.stop_job(job_id)
    return JobOutcome(job_id=job_id, status=status or "TIMEOUT", logs=client.get_job_logs(job_id),
                      elapsed_s=time.monotonic() - start)


RAY_CLI_PRELOAD = ("ray.scripts.scripts",)
"""What the `ray` console script imports before it runs Ray's CLI."""


def ray_script() -> str:
    """The `ray` console script beside this interpreter."""
    return os.path.join(os.path.dirname(sys.executable), "ray")


def ray_cli(args: Sequence[str], *, timeout_s: float) -> subproc.Completed:
    """`ray ARGS...` in this process's environment: Ray's own CLI (ray.scripts.scripts main, as the console script
    runs it with its own path as argv[0]), forked from a warm interpreter that imported it once (rlcheck.process.warm;
    importing Ray's CLI is about 1 CPU s a call), else the console script itself."""
    script = ray_script()
    code = f"import sys\nfrom ray.scripts.scripts import main\nsys.argv[0] = {script!r}\nsys.exit(main())"
    return warm.python(code, args, preload=RAY_CLI_PRELOAD, env=subproc.child_env(), timeout_s=timeout_s,
                       cold_argv=[script, *args])
