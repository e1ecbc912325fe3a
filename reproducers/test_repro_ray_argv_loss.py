"""ray-argv-loss: a bash array of model args does not survive `ray job submit -- bash -c "..."`.

Proves, with real Ray 2.55.1 on loopback: `ray job submit` re-joins the argv after `--` with
list2cmdline and the job supervisor runs it with /bin/sh -c, so the outer shell expands
${MODEL_ARGS[@]} before the inner bash sourced the model file. With dash as /bin/sh the job fails
with `Bad substitution`; with bash as /bin/sh it succeeds with no model args. The CLI and the Jobs
SDK behave the same. The fixes deliver every token: a launcher script with argv after `--`, and
rlcheck.cluster.launch (a shlex-joined entrypoint). The other shell's case runs on the same head: its jobs carry a
runtime env whose `py_executable` starts the job supervisor's worker in a mount namespace where /bin/sh is bound to
that shell (`unshare -m`, root), so the supervisor's `/bin/sh -c` is the other shell's, as on a head that has it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from rlcheck.cluster import launch
from rlcheck.plugin.resources import early_ray_jobs, has_early_ray
from rlcheck.process import subproc
from rlcheck.repro.ahead import Ahead, begin
from rlcheck.repro.reproduce import Reproduction, versions_for
from rlcheck.verdict import Status, Verdict
from tests import argv_probe

FAILURE_ID = "ray-argv-loss"
MODEL_ARGS = ["--num-layers", "36", "--hidden-size", "2560", "--ffn-hidden-size", "9728",
              "--num-attention-heads", "32", "--swiglu", "--qk-layernorm"]


def files(tmp_path: Path) -> tuple[Path, Path]:
    model = argv_probe.write_model_file(tmp_path, MODEL_ARGS)
    return model, argv_probe.write_printer(tmp_path)


RuntimeEnv = dict[str, str]


def other_shell() -> tuple[RuntimeEnv, str] | None:
    """The runtime env whose job supervisor's /bin/sh is the other shell (bash where it is dash, and back), and that
    shell's name; None where that is not possible here (tests.argv_probe other_shell_wrapper)."""
    wrapper = argv_probe.other_shell_wrapper()
    if wrapper is None:
        return None
    return {"py_executable": shlex.join([*wrapper[0], sys.executable])}, wrapper[1]


def cli_submit(dashboard_url: str, argv: list[str], runtime_env: RuntimeEnv | None) -> tuple[list[str] | None, str]:
    """`ray job submit --address URL --submission-id ID --no-wait [--runtime-env-json ...] -- argv...` (Ray's own CLI,
    rlcheck.cluster.launch ray_cli): the CLI joins the argv as it submits; the job's end and its logs come from the
    Jobs API, not from the CLI streaming them (whose own exit trails the job's by seconds on a busy host). What the
    program received, and the CLI's output and logs."""
    job = f"rlcheck-argv-loss-{uuid.uuid4().hex[:12]}"
    env = ["--runtime-env-json", json.dumps(runtime_env)] if runtime_env else []
    done = launch.ray_cli(["job", "submit", "--address", dashboard_url, "--submission-id", job, "--no-wait", *env,
                           "--", *argv], timeout_s=180)
    if done.returncode != 0:
        return None, f"`ray job submit` {done.why()}: {done.stdout}{done.stderr}"
    outcome = launch.wait_job(dashboard_url, job, timeout_s=120)
    return argv_probe.printed_argv(outcome.logs), f"{outcome.status}: {done.stdout}{done.stderr}{outcome.logs}"


def sdk_submit(dashboard_url: str, entrypoint: str, runtime_env: RuntimeEnv | None) -> tuple[list[str] | None, str]:
    job = launch.submit_entrypoint(dashboard_url, entrypoint, runtime_env=runtime_env)
    outcome = launch.wait_job(dashboard_url, job, timeout_s=120)
    return argv_probe.printed_argv(outcome.logs), f"{outcome.status}: {outcome.logs}"


def describe(got: list[str] | None, out: str) -> str:
    if got is None:
        return "program never ran" + (" (Bad substitution)" if "Bad substitution" in out else "")
    return f"{len(got)} args"


Through = tuple[bool, bool, str, bool]
"""(argv lost as the job's /bin/sh loses it, fixes intact, evidence, a program ran in any of the four jobs)."""


def through_ray(dashboard_url: str, tmp_path: Path, other: tuple[RuntimeEnv, str] | None = None) -> Through:
    """Four jobs on the head: the unsafe `bash -c` through the CLI and the SDK, the two fixes; other: the runtime env
    and name of the other shell, whose /bin/sh the jobs then get (default: this machine's)."""
    model, printer = files(tmp_path)
    unsafe = argv_probe.unsafe_bash_c(model, printer)
    launcher_argv = [str(argv_probe.write_launcher(tmp_path, model, printer)), "--extra", "1"]
    ours_entrypoint = launch.entrypoint([sys.executable, str(printer), *MODEL_ARGS, "--extra", "1"])
    env, sh_name = other or (None, argv_probe.system_sh())
    cli, sdk, launcher, ours = subproc.concurrently(  # four independent jobs on the same head
        lambda: cli_submit(dashboard_url, unsafe, env),
        lambda: sdk_submit(dashboard_url, subprocess.list2cmdline(unsafe), env),
        lambda: cli_submit(dashboard_url, launcher_argv, env), lambda: sdk_submit(dashboard_url, ours_entrypoint, env))
    lost = all(lost_here(sh_name, got, out) for got, out in (cli, sdk))
    intact = all(got == [*MODEL_ARGS, "--extra", "1"] for got, _ in (launcher, ours))
    evidence = (f"CLI bash -c: {describe(*cli)}; SDK: {describe(*sdk)}; launcher: {describe(*launcher)}; "
                f"rlcheck.cluster.launch: {describe(*ours)} (of {len(MODEL_ARGS)} model args + 2)")
    ran = any(got is not None for got, _ in (cli, sdk, launcher, ours))
    return lost, intact, evidence, ran


def received(sh: str, argv: list[str], *, joined: bool) -> tuple[list[str] | None, str]:
    """(argv the printer received, stderr): joined as Ray's CLI joins it and run by sh -c, or run as the list."""
    if joined:
        done = subprocess.run(subprocess.list2cmdline(argv), shell=True, executable=sh, capture_output=True,
                              text=True, timeout=60)
    else:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    return argv_probe.printed_argv(done.stdout), done.stderr


def lost_here(sh_name: str, got: list[str] | None, err: str) -> bool:
    """This shell's signature of the loss: dash stops at the array expansion, bash runs with the array gone."""
    if sh_name == "dash":
        return got is None and "Bad substitution" in err
    return got is not None and not any(t in got for t in MODEL_ARGS)


def test_repro_ray_argv_loss_shell_mechanism(record_reproduction, tmp_path):
    """Ray's join and run, without Ray: list2cmdline + shell=True, under this machine's sh and bash, judged by the
    tokens the program received; the same argv run as a list (no join) is the control that delivers them all."""
    model, printer = files(tmp_path)
    unsafe = argv_probe.unsafe_bash_c(model, printer, quote_expansion=True)
    control, _ = received("", unsafe, joined=False)
    seen = {}
    for sh, name in (("/bin/sh", argv_probe.system_sh()), (shutil.which("bash") or "/bin/bash", "bash")):
        got, err = received(sh, unsafe, joined=True)
        seen[f"{sh} ({name})"] = (got, lost_here(name, got, err),
                                  "never ran: Bad substitution" if "Bad substitution" in err else f"received {got}")
    safe = subprocess.run(launch.entrypoint([sys.executable, str(printer), *MODEL_ARGS]), shell=True,
                          capture_output=True, text=True, timeout=60)
    evidence = "; ".join(f"{sh}: {text}" for sh, (_, _, text) in seen.items())
    result = Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID),
                          reproduced=control == MODEL_ARGS and all(lost for _, lost, _ in seen.values()),
                          fix_verified=argv_probe.printed_argv(safe.stdout) == MODEL_ARGS,
                          evidence=f"as a list (no join): {'all' if control == MODEL_ARGS else control} "
                                   f"{len(MODEL_ARGS)} tokens; list2cmdline + sh -c: {evidence}; shlex.join: "
                                   f"{'intact' if argv_probe.printed_argv(safe.stdout) == MODEL_ARGS else 'lost'}")
    record_reproduction(result)


runs_key = pytest.StashKey[Ahead[Through | None]]()


def session_head(session: pytest.Session, folder: Path, other: bool) -> Through | None:
    """through_ray on the session's embedded Ray started at collection (what local_ray hands the test); other: with
    the other shell's runtime env (None: not possible here)."""
    shell = other_shell() if other else None
    if other and shell is None:
        return None
    endpoints = early_ray_jobs(session.config)
    folder.mkdir()
    return through_ray(endpoints.dashboard_url, folder, shell)


def start_ahead(session: pytest.Session) -> Ahead[Through | None]:
    """This module's Ray runs of this session, made once and begun together ahead of the tests
    (reproducers/conftest.py) where the session's Ray started at collection (else each test runs its own on
    local_ray): each run's jobs wait on that head, not on the tests before theirs. Under xdist each test runs its
    own."""
    def make() -> Ahead[Through | None]:
        folder = session.config._tmp_path_factory.mktemp("ray-argv-loss")  # the tmp_path_factory fixture's own
        calls = {}
        if has_early_ray(session.config):
            calls = {"test_repro_ray_argv_loss": lambda: session_head(session, folder / "session", False),
                     "test_repro_ray_argv_loss_other_sh": lambda: session_head(session, folder / "other-sh", True)}
        return Ahead(calls)

    return begin(session, __file__, runs_key, make)


@pytest.fixture
def runs(request: pytest.FixtureRequest) -> Ahead[Through | None]:
    return start_ahead(request.session)


@pytest.mark.slow
def test_repro_ray_argv_loss(record_reproduction, local_ray, runs, tmp_path, request):
    name = request.node.name
    done = runs.take(name) if name in runs.calls else through_ray(local_ray.dashboard_url, tmp_path)
    assert done is not None
    lost, intact, evidence, _ = done
    result = Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID), reproduced=lost,
                          fix_verified=intact, evidence=f"/bin/sh is {argv_probe.system_sh()}: {evidence}")
    record_reproduction(result)


@pytest.mark.slow
def test_repro_ray_argv_loss_other_sh(record_verdict, record_reproduction, local_ray, runs, tmp_path, request):
    """The same with the other shell as the job's /bin/sh (RHEL-like images have bash), on the same head: its jobs
    carry the runtime env that binds it (other_shell)."""
    shell = other_shell()
    if shell is None:
        why = "needs `unshare -m` (root) and both dash and bash to swap /bin/sh"
        record_verdict(Verdict(check_id="x", status=Status.UNKNOWN, summary=f"{why}: not available here"))
        return
    name = request.node.name
    done = runs.take(name) if name in runs.calls else through_ray(local_ray.dashboard_url, tmp_path, shell)
    assert done is not None
    lost, intact, evidence, ran = done
    if not ran:  # no job ran a program: the worker under the other shell never started, nothing was judged
        record_verdict(Verdict(check_id="x", status=Status.UNKNOWN, details=evidence,
                               summary=f"no job with /bin/sh bound to {shell[1]} ran its program: {evidence}"))
        return
    result = Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID), reproduced=lost,
                          fix_verified=intact, evidence=f"/bin/sh bound to {shell[1]}: {evidence}")
    record_reproduction(result)
