"""Command-line options and the run context they resolve to."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from rlcheck import hardware, report
from rlcheck.framework.detect import FRAMEWORKS, Installed, parse_declared, resolve
from rlcheck.framework.schema import DEFAULT_SCHEMA
from rlcheck.job import capture
from rlcheck.job.job import Job, judged_framework
from rlcheck.option_table import HARDWARE_SPECIAL
from rlcheck.probes.node import gpus
from rlcheck.process import reach
from rlcheck.recipes import RECIPE_IDS


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RunContext:
    hardware_requested: str
    """What --hardware said: a profile name, auto or none."""
    profile: hardware.HardwareProfile | None
    """The profile the checks judge against; None for --hardware=none or auto with no match."""
    hardware_evidence: str
    recipe: str
    ray_address: str | None
    """None: the suite starts an embedded loopback Ray when a test needs one."""
    report_dir: Path
    quick: bool
    dry_run: bool = False
    """e2e cases render and validate instead of running on a cluster."""
    rm_url: str | None = None
    """The reward service the cluster reaches, for the remote-rm case (e.g. http://slime-reward:8000/score)."""
    hardware_unknown: str = ""
    """Why --hardware=auto could not tell (nvidia-smi hung or failed): a blocking UNKNOWN; '' otherwise."""
    job_path: str | None = None
    """--job: the user's launch the checks judge instead of --recipe."""
    job_format: str | None = None
    """The job's format (--job-format, else detected)."""
    job: Job | None = None
    """The captured job; None with job_error when it could not be captured."""
    job_error: str = ""
    history_dir: Path | None = None
    """--history: where every run's report.json is kept; None: only the latest, in report_dir."""
    band_runs: int = 5
    """--band-runs: measured figures are judged against the median of this many good runs kept in --history
    (0: off)."""
    framework: Installed | None = None
    """The SLIME/Miles judged: --framework, else what is installed here, else the job's own (framework None:
    none of them names one)."""
    no_local_gpus: bool = False
    """--no-local-gpus: this machine is a Ray client or login node; the checks of its own GPUs do not apply."""

    @property
    def declared(self) -> bool:
        """--hardware named a profile: a claim about this machine that the GPU checks verify."""
        return self.hardware_requested not in HARDWARE_SPECIAL

    def framework_judged(self) -> str:
        """The report's line on the framework judged, and how rlcheck knows it."""
        if self.framework is None:
            return "not detected"
        job = self.job
        if self.framework.framework is None and job is not None and job.framework in FRAMEWORKS:
            return (f"neither SLIME nor Miles importable here; the job runs {job.framework} and states no version "
                    f"(judged by the committed schema {DEFAULT_SCHEMA[job.framework]})")
        return self.framework.describe()

    @property
    def subject(self) -> str:
        """What the checks judge, for the report: the recipe id, or the job file and its format."""
        return f"job {self.job_path} ({self.job_format})" if self.job_path else self.recipe


context_key = pytest.StashKey[RunContext]()


Resolved = tuple[hardware.HardwareProfile | None, str, str]


def resolve_hardware(requested: str, timeout_s: float | None = None) -> Resolved:
    """(profile, evidence, why detection could not run or '')."""
    try:
        profiles = hardware.load_profiles()
    except hardware.ProfileError as exc:
        raise pytest.UsageError(f"broken hardware profile: {exc}") from exc
    if requested == "none":
        return None, "none: hardware checks judge no profile", ""
    if requested == "auto":
        found = gpus.detect(timeout_s)
        return found.profile, found.evidence, found.error
    if requested in profiles:
        return profiles[requested], f"{requested}: given with --hardware", ""
    valid = ", ".join([*profiles, *HARDWARE_SPECIAL])
    raise pytest.UsageError(f"--hardware={requested!r} is not a known hardware profile; valid: {valid}")


def with_baseline(profile: hardware.HardwareProfile | None, evidence: str,
                  path: Path) -> tuple[hardware.HardwareProfile, str]:
    """The profile with the baseline's floors; a baseline that cannot be used is a usage error, never ignored."""
    from rlcheck.preflight import baseline

    if profile is None:
        raise pytest.UsageError(f"--baseline={str(path)!r} needs a hardware profile to apply to ({evidence})")
    try:
        return baseline.apply(profile, baseline.load(path), path), f"{evidence}; floors from the baseline {path}"
    except baseline.BaselineError as exc:
        raise pytest.UsageError(f"--baseline: {exc}") from exc


def _validate_ray_address(address: str | None) -> None:
    if address is None:
        return
    scheme, sep, rest = address.partition("://")
    usage = "use ray://HOST:10001 or http://HOST:8265"
    if not sep or scheme not in ("ray", "http", "https") or not rest or rest.startswith(":"):
        raise pytest.UsageError(f"--ray-address={address!r} is malformed: {usage}")
    try:
        reach.host_port(address)
    except reach.AddressError as exc:
        raise pytest.UsageError(f"--ray-address={exc}: {usage}") from exc


def _validate_report_dir(report_dir: Path) -> None:
    problem = report.unwritable(report_dir)
    if problem:
        raise pytest.UsageError(f"--report-dir={str(report_dir)!r} cannot be written: {problem}")


def capture_job(path: str | None, fmt: str | None, env: Sequence[str] = (), args: Sequence[str] = (),
                show: Sequence[str] = ()) -> dict[str, Any]:
    """RunContext fields for --job: a bad file, --job-env, --job-arg (arguments for a file that is not a script) or
    --job-show (a folder that cannot be shown) is a usage error; a launch that gives no trainer is kept as an error."""
    if path is None:
        return {}
    try:
        fmt = fmt or capture.detect(Path(path)) if Path(path).is_file() else fmt
        variables = capture.parse_env(env, os.environ)
        return {"job_path": path, "job_format": fmt, "job": capture.capture(path, fmt, variables, args, show)}
    except capture.JobFormatError as exc:
        raise pytest.UsageError(str(exc)) from exc
    except capture.CaptureFailed as exc:
        return {"job_path": path, "job_format": fmt, "job_error": str(exc)}


def run_context(config: pytest.Config) -> RunContext:
    """The run context of the options given (read with config.getoption); a value no run can use is a usage error
    naming it, raised before anything starts."""
    recipe = config.getoption("recipe")
    if recipe not in RECIPE_IDS:
        raise pytest.UsageError(f"--recipe={recipe!r} is not a known recipe; valid: {', '.join(RECIPE_IDS)}")
    address = config.getoption("ray_address")
    _validate_ray_address(address)
    report_dir = Path(config.getoption("report_dir"))
    _validate_report_dir(report_dir)
    history = config.getoption("history")
    if history is not None and (problem := report.unwritable(Path(history))):
        raise pytest.UsageError(f"--history={history!r} cannot be written: {problem}")
    if config.getoption("band_runs") < 0:
        raise pytest.UsageError(f"--band-runs={config.getoption('band_runs')}: a whole number >= 0 (0 turns the "
                                "band off)")
    try:
        declared = parse_declared(config.getoption("framework")) if config.getoption("framework") else None
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from exc
    profile, evidence, unknown = resolve_hardware(config.getoption("hardware"), config.getoption("hardware_timeout_s"))
    if config.getoption("baseline"):
        profile, evidence = with_baseline(profile, evidence, Path(config.getoption("baseline")))
    captured = capture_job(config.getoption("job"), config.getoption("job_format"), config.getoption("job_env"),
                           config.getoption("job_arg"), config.getoption("job_show"))
    return RunContext(
        hardware_requested=config.getoption("hardware"), profile=profile, hardware_evidence=evidence,
        recipe=recipe, ray_address=address, report_dir=report_dir, quick=config.getoption("quick"),
        dry_run=config.getoption("dry_run"), rm_url=config.getoption("rm_url"), hardware_unknown=unknown,
        history_dir=Path(history) if history is not None else None, band_runs=config.getoption("band_runs"),
        framework=judged_framework(resolve(declared), captured.get("job")),
        no_local_gpus=config.getoption("no_local_gpus"), **captured,
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.stash[context_key] = run_context(config)


def get_context(config: pytest.Config) -> RunContext:
    return config.stash[context_key]


@pytest.fixture(scope="session")
def rlcheck_context(pytestconfig: pytest.Config) -> RunContext:
    """The resolved --hardware, --recipe, --ray-address and --report-dir of this run."""
    return get_context(pytestconfig)
