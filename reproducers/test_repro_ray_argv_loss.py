"""ray-argv-loss: a bash array of model args does not survive `ray job submit -- bash -c "..."`.

Proves, with real Ray 2.55.1 on loopback: `ray job submit` re-joins the argv after `--` with
list2cmdline and the job supervisor runs it with /bin/sh -c, so the outer shell expands
${MODEL_ARGS[@]} before the inner bash sourced the model file. With dash as /bin/sh the job fails
with `Bad substitution`; with bash as /bin/sh it succeeds with no model args. The CLI and the Jobs
SDK behave the same. The fixes deliver every token: a launcher script with argv after `--`, and
rlcheck.cluster.launch (a shlex-joined entrypoint).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlcheck.cluster import launch
from rlcheck.cluster.local_ray import EmbeddedRay, EmbeddedRayError, RayEndpoints
from rlcheck.plugin.resources import EarlyRay, early_ray_jobs, has_early_ray
from rlcheck.process import subproc
from rlcheck.repro.ahead import Ahead, begin, once
from rlcheck.repro.reproduce import Reproduction, versions_for
from rlcheck.verdict import Status, Verdict
from tests import argv_probe

FAILURE_ID = "ray-argv-loss"
MODEL_ARGS = ["--num-layers", "36", "--hidden-size", "2560", "--ffn-hidden-size", "9728",
              "--num-attention-heads", "32", "--swiglu", "--qk-layernorm"]
RAY = str(Path(sys.executable).with_name("ray"))


def files(tmp_path: Path) -> tuple[Path, Path]:
    model = argv_probe.write_model_file(tmp_path, MODEL_ARGS)
    return model, argv_probe.write_printer(tmp_path)


def cli_submit(dashboard_url: str, argv: list[str]) -> tuple[list[str] | None, str]:
    """`ray job submit --address URL -- argv...`: what the program received, and the CLI's output."""
    done = subproc.run([RAY, "job", "submit", "--address", dashboard_url, "--", *argv], timeout_s=180)
    out = done.stdout + done.stderr
    return argv_probe.printed_argv(out), out


def sdk_submit(dashboard_url: str, entrypoint: str) -> tuple[list[str] | None, str]:
    outcome = launch.wait_job(dashboard_url, launch.submit_entrypoint(dashboard_url, entrypoint), timeout_s=120)
    return argv_probe.printed_argv(outcome.logs), f"{outcome.status}: {outcome.logs}"


def describe(got: list[str] | None, out: str) -> str:
    if got is None:
        return "program never ran" + (" (Bad substitution)" if "Bad substitution" in out else "")
    return f"{len(got)} args"


def through_ray(dashboard_url: str, tmp_path: Path, sh_name: str = "") -> tuple[bool, bool, str]:
    """(argv lost as the head's /bin/sh loses it, fixes intact, evidence); sh_name: that shell (default: this one)."""
    model, printer = files(tmp_path)
    unsafe = argv_probe.unsafe_bash_c(model, printer)
    launcher_argv = [str(argv_probe.write_launcher(tmp_path, model, printer)), "--extra", "1"]
    ours_entrypoint = launch.entrypoint([sys.executable, str(printer), *MODEL_ARGS, "--extra", "1"])
    cli, sdk, launcher, ours = subproc.concurrently(  # four independent jobs on the same head
        lambda: cli_submit(dashboard_url, unsafe), lambda: sdk_submit(dashboard_url, subprocess.list2cmdline(unsafe)),
        lambda: cli_submit(dashboard_url, launcher_argv), lambda: sdk_submit(dashboard_url, ours_entrypoint))
    lost = all(lost_here(sh_name or argv_probe.system_sh(), got, out) for got, out in (cli, sdk))
    intact = all(got == [*MODEL_ARGS, "--extra", "1"] for got, _ in (launcher, ours))
    evidence = (f"CLI bash -c: {describe(*cli)}; SDK: {describe(*sdk)}; launcher: {describe(*launcher)}; "
                f"rlcheck.cluster.launch: {describe(*ours)} (of {len(MODEL_ARGS)} model args + 2)")
    return lost, intact, evidence


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


class OtherShHead:
    """An embedded Ray whose /bin/sh is the other shell, started in a background thread (rlcheck.plugin.resources
    EarlyRay); shell None: not possible here."""

    def __init__(self) -> None:
        wrapper = argv_probe.other_shell_wrapper()
        self.shell = wrapper[1] if wrapper else None
        self.early = EarlyRay(EmbeddedRay(wrapper=wrapper[0], jobs_only=True)).begin() if wrapper else None

    def endpoints(self, timeout_s: float = 420.0) -> RayEndpoints:
        """Wait for the head (EmbeddedRay.start bounds each of its own waits; this bounds them all)."""
        assert self.early is not None
        return self.early.take(timeout_s)

    def stop(self) -> None:
        if self.early is not None:
            self.early.end(420.0)


other_sh_key = pytest.StashKey[OtherShHead]()


def other_sh(session: pytest.Session) -> OtherShHead:
    """The session's Ray head with the other /bin/sh, started on first use (by the runs started ahead, or by its
    test); the session's end stops it."""
    def make() -> OtherShHead:
        head = OtherShHead()
        session.config.add_cleanup(head.stop)
        return head

    return once(session, other_sh_key, make)


@pytest.fixture
def other_sh_ray(request: pytest.FixtureRequest) -> OtherShHead:
    """The Ray head with the other /bin/sh (started now when no run started ahead did; the test waits for it,
    bounded)."""
    return other_sh(request.session)


Through = tuple[bool, bool, str]
runs_key = pytest.StashKey[Ahead[Through | None]]()


def session_head(session: pytest.Session, folder: Path) -> Through:
    """through_ray on the session's embedded Ray started at collection (what local_ray hands the test)."""
    endpoints = early_ray_jobs(session.config)
    folder.mkdir()
    return through_ray(endpoints.dashboard_url, folder)


def other_sh_head(session: pytest.Session, folder: Path) -> Through | None:
    """through_ray on the other shell's head (None: no such head here)."""
    head = other_sh(session)
    if head.shell is None:
        return None
    folder.mkdir()
    return through_ray(head.endpoints().dashboard_url, folder, head.shell)


def start_ahead(session: pytest.Session) -> Ahead[Through | None]:
    """This module's Ray runs of this session, made once and begun together ahead of the tests
    (reproducers/conftest.py): the other shell's head starts then, and each run's jobs wait on their head, not on
    the tests before theirs. The session head's run is made only where that Ray started at collection (else the
    test runs it itself, on local_ray). Under xdist each test runs its own."""
    def make() -> Ahead[Through | None]:
        folder = session.config._tmp_path_factory.mktemp("ray-argv-loss")  # the tmp_path_factory fixture's own
        calls = {"test_repro_ray_argv_loss_other_sh": lambda: other_sh_head(session, folder / "other-sh")}
        if has_early_ray(session.config):
            calls["test_repro_ray_argv_loss"] = lambda: session_head(session, folder / "session")
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
    lost, intact, evidence = done
    result = Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID), reproduced=lost,
                          fix_verified=intact, evidence=f"/bin/sh is {argv_probe.system_sh()}: {evidence}")
    record_reproduction(result)


@pytest.mark.slow
def test_repro_ray_argv_loss_other_sh(record_verdict, record_reproduction, other_sh_ray, runs, request):
    """The same through a Ray head whose /bin/sh is the other shell (RHEL-like images have bash); that head starts
    in the background with the runs started ahead (start_ahead), or when this test asks for it."""
    if other_sh_ray.shell is None:
        why = "needs `unshare -m` (root) and both dash and bash to swap /bin/sh"
        record_verdict(Verdict(check_id="x", status=Status.UNKNOWN, summary=f"{why}: not available here"))
        return
    shell = other_sh_ray.shell
    try:
        done = runs.take(request.node.name)
    except EmbeddedRayError as exc:
        first, _, rest = str(exc).partition("\n")  # the error carries the dashboard log's last lines
        record_verdict(Verdict(check_id="x", status=Status.UNKNOWN, summary=f"Ray with /bin/sh={shell}: {first}",
                               details=rest))
        return
    assert done is not None
    lost, intact, evidence = done
    result = Reproduction(failure_id=FAILURE_ID, versions=versions_for(FAILURE_ID), reproduced=lost,
                          fix_verified=intact, evidence=f"/bin/sh bound to {shell}: {evidence}")
    record_reproduction(result)
