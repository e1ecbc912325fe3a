"""rlcheck's options, declared once: the pytest plugin (rlcheck.plugin.flags) and the command line (rlcheck.cli,
cli_run, cli_k8s, cli_baseline) read an option's flag, type, help, default, metavar and choices from this table and
write none of them by hand (tests/test_options_table.py holds both to it).

The plugin loads in every pytest run of an environment where rlcheck is installed, so this module imports nothing but
the standard library: what an option lists (recipes, capture formats, run levels) is written here as text, and
tests/test_options_table.py holds each copy equal to its source. An option that means something else in one command
(`rlcheck render --hardware` takes a profile only, `rlcheck watch --framework` defaults to the log's) is its own entry
under the same flag, named for that meaning.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import argparse

RECIPE_IDS = ("qwen3-4b-colocated", "qwen3-30b-a3b-disaggregated", "qwen3-4b-remote-rm", "glm5.2-gb300")
"""rlcheck.recipes.RECIPE_IDS."""
DEFAULT_RECIPE = "qwen3-4b-colocated"
CAPTURE_FORMATS = ("bash", "miles-py", "ray-submit", "rayjob", "argv-json", "job-json")
"""rlcheck.job.capture.CAPTURE_FORMATS."""
LEVELS = ("quick", "standard", "long")
"""rlcheck.deploy.levels.LEVELS."""
DETECT_TIMEOUT_S = 30.0
"""rlcheck.probes.node.gpus.DETECT_TIMEOUT_S."""
PROGRESS_S = 5.0
"""rlcheck.plugin.progress.DEFAULT_S."""
HARDWARE_SPECIAL = ("auto", "none")
"""--hardware's values besides a profile's name: detect this machine, or judge no profile."""
HARDWARE_DIR = Path(__file__).resolve().parent / "data" / "hardware"


def profile_names() -> tuple[str, ...]:
    """The hardware profiles, one file each named as the profile: read from the folder, not parsed (a broken profile
    is a usage error where it is loaded, said there)."""
    return tuple(sorted(p.stem for p in HARDWARE_DIR.glob("*.toml")))


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Option:
    flag: str
    """The long flag, e.g. --hardware; its value lands in dest (--ray-address: ray_address)."""
    help: str
    """What a user reads in --help (argparse's % formatting applies: a percent sign is written %%)."""
    default: object = None
    """The value when the flag is not given; () for a repeatable flag (each parser gets a fresh list)."""
    type: Callable[[str], Any] | None = None
    """Converts the text given (int, float); None: kept as text."""
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    """The values accepted; None: any (checked, if at all, where the value is used)."""
    action: Literal["store", "store_true", "append"] = "store"
    required: bool = False

    def __post_init__(self) -> None:
        if not self.flag.startswith("--") or len(self.flag) < 3:
            raise ValueError(f"flag={self.flag!r}: a long flag, --name")
        if self.action == "store_true" and self.default is not False:
            raise ValueError(f"{self.flag}: default={self.default!r}: a store_true flag defaults to False")
        if self.action == "append" and self.default != ():
            raise ValueError(f"{self.flag}: default={self.default!r}: a repeatable flag defaults to ()")

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments of argparse's add_argument, which pytest's addoption takes too (argparse's own
        defaults are left out)."""
        out: dict[str, Any] = {"help": self.help}
        if self.action != "store":
            out["action"] = self.action
        if self.action != "store_true":
            out["default"] = [] if self.action == "append" else self.default  # a fresh list: argparse appends to it
        fields = {"type": self.type, "metavar": self.metavar, "choices": self.choices}
        out.update((k, v) for k, v in fields.items() if v is not None)
        if self.required:
            out["required"] = True
        return out


def add(parser: argparse._ActionsContainer, *options: Option) -> None:
    """Declare these options on an argparse parser or group, as the table says."""
    for option in options:
        parser.add_argument(option.flag, **option.kwargs())


_PROFILES = ", ".join(profile_names())

# --- the pytest plugin's options, in the order `pytest --help` lists them -------------------------------------------
HARDWARE = Option(flag="--hardware", default="auto", metavar="NAME",
                  help=f"hardware profile to judge against: {_PROFILES}, {', '.join(HARDWARE_SPECIAL)} "
                       "(default: auto = detect this machine)")
RAY_ADDRESS = Option(flag="--ray-address", metavar="ADDRESS",
                     help="Ray cluster to check (ray://host:10001 or http://host:8265); "
                          "default: an embedded single-machine Ray on 127.0.0.1")
RECIPE = Option(flag="--recipe", default=DEFAULT_RECIPE, metavar="ID",
                help=f"recipe the checks judge: {', '.join(RECIPE_IDS)} (default: {DEFAULT_RECIPE})")
JOB = Option(flag="--job", metavar="PATH",
             help="judge your own launch instead of --recipe: a SLIME-style bash script or a Miles Python launcher "
                  "(run in a sandbox), a `ray job submit` line, a KubeRay RayJob YAML, an argv JSON or `rlcheck job "
                  "capture` JSON")
JOB_FORMAT = Option(flag="--job-format", choices=CAPTURE_FORMATS,
                    help=f"the --job file's format when detection guesses wrong: {', '.join(CAPTURE_FORMATS)}")
JOB_ENV = Option(flag="--job-env", action="append", default=(), metavar="NAME[=VALUE]",
                 help="a variable for a --job script run in the capture sandbox (repeatable; NAME alone passes this "
                      "shell's value), e.g. --job-env BASE_DIR=/fsx")
JOB_ARG = Option(flag="--job-arg", action="append", default=(), metavar="ARG",
                 help="an argument of the --job script itself, as `bash SCRIPT ARG...` gets it (repeatable, in order; "
                      "write one that starts with - as --job-arg=-x), e.g. --job-arg p2p --job-arg 0")
JOB_SHOW = Option(flag="--job-show", action="append", default=(), metavar="DIR",
                  help="a host folder the --job script reads (a model's config.json, a dataset), shown to it at its "
                       "own path through a private overlay: it may write there, the folder itself stays unchanged, "
                       "credential files in it stay hidden (repeatable; not /, a system tree or a credential place), "
                       "e.g. --job-show /root/models/GLM-5")
FRAMEWORK = Option(flag="--framework", metavar="slime==VERSION",
                   help="the SLIME or Miles version the job runs under (slime==0.2.4, slime==main, miles==main); "
                        "default: the one installed here (package metadata, or a git checkout's tag), else the one "
                        "--job states (a RayJob image tag, a Miles launcher)")
REPORT_DIR = Option(flag="--report-dir", default="rlcheck-report", metavar="DIR",
                    help="where report.json and report.md go (default: rlcheck-report/)")
HISTORY = Option(flag="--history", metavar="DIR",
                 help="also keep every report.json in DIR (one file per run, never overwritten)")
BAND_RUNS = Option(flag="--band-runs", default=5, type=int, metavar="N",
                   help="with --history: judge measured figures (GEMM TFLOP/s, all-reduce GB/s) also against the "
                        "median of the last N good runs kept there (WARN 5%%, FAIL 10%% below; needs 3 runs; "
                        "0: off; default 5)")
HARDWARE_TIMEOUT_S = Option(flag="--hardware-timeout-s", default=DETECT_TIMEOUT_S, type=float, metavar="S",
                            help=f"--hardware=auto: how long nvidia-smi (or torch) may take to answer (default: "
                                 f"{DETECT_TIMEOUT_S:g})")
BASELINE = Option(flag="--baseline", metavar="PATH",
                  help="judge the GEMM and all-reduce by this cluster's own floors (a file written by `rlcheck "
                       "baseline record`) instead of the profile's; it must name the profile judged")
NO_LOCAL_GPUS = Option(flag="--no-local-gpus", action="store_true", default=False,
                       help="this machine is a Ray client or login node, not a GPU node: the checks of its own GPUs "
                            "are not applicable (the cluster checks judge the GPU nodes through --ray-address); "
                            "without it a declared --hardware profile is held against this machine's GPUs")
QUICK = Option(flag="--quick", action="store_true", default=False, help="skip tests marked slow")


def skipped_by_quick(item: Any, quick: bool) -> bool:
    """What QUICK means, the one rule its readers share: with it, a test marked slow is skipped (rlcheck.plugin.gating
    skips it; the reproducers' runs started ahead, rlcheck.repro.ahead, and the early Ray's Jobs API,
    rlcheck.plugin.resources, leave it out). item: a collected pytest item (its get_closest_marker)."""
    return quick and item.get_closest_marker("slow") is not None

NO_CACHE = Option(flag="--no-cache", action="store_true", default=False,
                  help="run every reproducer and keep no verdict, and ask the installed SGLang for its options "
                       "again (default: a reproducer whose verdict was kept for this image, rlcheck and reproducer "
                       "source reuses it, and recipe_sglang_flags reads the option list kept for this image; the "
                       "report says which and when they were made; folders: reproducers/ and facts/ in "
                       "$RLCHECK_CACHE_DIR, else $XDG_CACHE_HOME/rlcheck, else ~/.cache/rlcheck)")
RM_URL = Option(flag="--rm-url", metavar="URL",
                help="remote-rm e2e case: the reward service's /score URL as the cluster reaches it")
DRY_RUN = Option(flag="--dry-run", action="store_true", default=False,
                 help="e2e test cases: render and validate each case instead of submitting it (no cluster)")
PROGRESS = Option(flag="--progress-s", default=PROGRESS_S, type=float, metavar="S",
                  help=f"write what is running after S seconds without output (default {PROGRESS_S:g}; 0: never)")

PLUGIN = (HARDWARE, RAY_ADDRESS, RECIPE, JOB, JOB_FORMAT, JOB_ENV, JOB_ARG, JOB_SHOW, FRAMEWORK, REPORT_DIR, HISTORY,
          BAND_RUNS, HARDWARE_TIMEOUT_S, BASELINE, NO_LOCAL_GPUS, QUICK, NO_CACHE, RM_URL, DRY_RUN, PROGRESS)
"""The pytest plugin's options (`pytest --help`, group rlcheck). `rlcheck slurm` and `rlcheck k8s apply-node-status`
take --hardware and --recipe from here too, `rlcheck k8s render` --recipe."""

# --- the same flags where a command gives them another meaning -----------------------------------------------------
HARDWARE_PROFILE = Option(flag="--hardware", required=True, metavar="NAME", help=f"hardware profile: {_PROFILES}")
"""`rlcheck render` and `rlcheck k8s render`: manifests are written for a named profile (no auto, no none)."""
HARDWARE_OF_BASELINE = Option(flag="--hardware", metavar="NAME",
                              help="the profile the baseline is for (default: the report's profile, or the detected "
                                   "one)")
"""`rlcheck baseline record`."""
RAY_DASHBOARD = Option(flag="--ray-address", default="", metavar="URL",
                       help="preflight-job: the Ray dashboard (default: the head service of the recipe's RayCluster)")
"""`rlcheck k8s render`: the address written into the preflight Job, not one this machine reaches."""
FRAMEWORK_OF_LOG = Option(flag="--framework", metavar="slime==VERSION",
                          help="the SLIME or Miles version that wrote the log (slime==0.2.4, slime==main, "
                               "miles==main); default: detected from the log")
"""`rlcheck watch`."""
CAPTURE_FORMAT = Option(flag="--job-format", choices=CAPTURE_FORMATS,
                        help=f"PATH's format when detection guesses wrong: {', '.join(CAPTURE_FORMATS)}")
"""`rlcheck job capture|show`: the file captured is PATH (a capture has no --job)."""
CAPTURE_ENV = Option(flag="--job-env", action="append", default=(), metavar="NAME[=VALUE]",
                     help="a variable for the script in the capture sandbox (repeatable; NAME alone passes this "
                          "shell's value), e.g. --job-env BASE_DIR=/fsx")
"""`rlcheck job capture`."""
CAPTURE_SHOW = Option(flag="--job-show", action="append", default=(), metavar="DIR",
                      help="a host folder the script reads (a model's config.json, a dataset), shown to it at its own "
                           "path through a private overlay: it may write there, the folder itself stays unchanged, "
                           "credential files in it stay hidden (repeatable; not /, a system tree or a credential "
                           "place), e.g. --job-show /root/models/GLM-5")
"""`rlcheck job capture`."""
DRY_RUN_PATCH = Option(flag="--dry-run", action="store_true", default=False,
                       help="print the patch as JSON; change nothing")
"""`rlcheck k8s apply-node-status`."""

# --- the per-node tier's options: `rlcheck slurm` and `rlcheck k8s apply-node-status` -----------------------------
LEVEL = Option(flag="--level", default="quick", choices=LEVELS,
               help="quick (default, 25 s): the counters tier, safe in a prolog or beside a job; standard (120 s): "
                    "+ bf16 GEMM; long (420 s): + NCCL all-reduce (both load the GPUs: run them on an idle node, e.g. "
                    "a health-check job, never beside a starting or running one)")
BUDGET_S = Option(flag="--budget-s", type=float, metavar="S",
                  help="time for the whole level; checks not judged by then are UNKNOWN (default: the level's)")

TABLE = (*PLUGIN, HARDWARE_PROFILE, HARDWARE_OF_BASELINE, RAY_DASHBOARD, FRAMEWORK_OF_LOG, CAPTURE_FORMAT,
         CAPTURE_ENV, CAPTURE_SHOW, DRY_RUN_PATCH, LEVEL, BUDGET_S)
"""Every entry: a command-line flag named here is declared from one of them, never by hand."""
