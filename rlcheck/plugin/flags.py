"""rlcheck's pytest options, declared at start-up without importing what they configure.

pytest reads its command line before any test runs, so the options must be declared in every run the plugin loads
in, also in a project that never uses rlcheck: this module imports nothing but pytest. What the options list
(recipes, capture formats, defaults) is written here as text; tests/test_plugin_lazy.py holds each copy equal to
its source (rlcheck.recipes, rlcheck.job.capture, rlcheck.probes.node.gpus, rlcheck.plugin.progress).
A new option goes here, with its default in DEFAULTS when it has one that is not None/False/[].
"""

from __future__ import annotations

from pathlib import Path

import pytest

RECIPE_IDS = ("qwen3-4b-colocated", "qwen3-30b-a3b-disaggregated", "qwen3-4b-remote-rm", "glm5.2-gb300")
DEFAULT_RECIPE = "qwen3-4b-colocated"
CAPTURE_FORMATS = ("bash", "miles-py", "ray-submit", "rayjob", "argv-json", "job-json")
DETECT_TIMEOUT_S = 30.0
PROGRESS_S = 8.0
HARDWARE_SPECIAL = ("auto", "none")
HARDWARE_DIR = Path(__file__).resolve().parents[1] / "data" / "hardware"


def _profile_names() -> str:
    """The hardware profiles (one file each, named as the profile) and auto, none: read from the folder, not parsed
    (a broken profile is a usage error at configure, said there)."""
    return ", ".join([*sorted(p.stem for p in HARDWARE_DIR.glob("*.toml")), *HARDWARE_SPECIAL])


def add(parser: pytest.Parser) -> None:
    group = parser.getgroup("rlcheck", "rlcheck preflight and test cases")
    group.addoption("--hardware", default="auto", metavar="NAME",
                    help=f"hardware profile to judge against: {_profile_names()} (default: auto = detect this "
                         "machine)")
    group.addoption("--ray-address", default=None, metavar="ADDRESS",
                    help="Ray cluster to check (ray://host:10001 or http://host:8265); "
                         "default: an embedded single-machine Ray on 127.0.0.1")
    group.addoption("--recipe", default=DEFAULT_RECIPE, metavar="ID",
                    help=f"recipe the checks judge: {', '.join(RECIPE_IDS)} (default: {DEFAULT_RECIPE})")
    group.addoption("--job", default=None, metavar="PATH",
                    help="judge your own launch instead of --recipe: a SLIME-style bash script or a Miles Python "
                         "launcher (run in a sandbox), "
                         "a `ray job submit` line, a KubeRay RayJob YAML, an argv JSON or `rlcheck job capture` JSON")
    group.addoption("--job-format", default=None, choices=CAPTURE_FORMATS,
                    help=f"the --job file's format when detection guesses wrong: {', '.join(CAPTURE_FORMATS)}")
    group.addoption("--job-env", action="append", default=[], metavar="NAME[=VALUE]",
                    help="a variable for a --job script run in the capture sandbox (repeatable; NAME alone passes "
                         "this shell's value), e.g. --job-env BASE_DIR=/fsx")
    group.addoption("--framework", default=None, metavar="slime==VERSION",
                    help="the SLIME or Miles version the job runs under (slime==0.2.4, slime==main, miles==main); "
                         "default: the one installed here (package metadata, or a git checkout's tag), else the one "
                         "--job states (a RayJob image tag, a Miles launcher)")
    group.addoption("--report-dir", default="rlcheck-report", metavar="DIR",
                    help="where report.json and report.md go (default: rlcheck-report/)")
    group.addoption("--history", default=None, metavar="DIR",
                    help="also keep every report.json in DIR (one file per run, never overwritten)")
    group.addoption("--band-runs", default=5, type=int, metavar="N",
                    help="with --history: judge measured figures (GEMM TFLOP/s, all-reduce GB/s) also against the "
                         "median of the last N good runs kept there (WARN 5%%, FAIL 10%% below; needs 3 runs; "
                         "0: off; default 5)")
    group.addoption("--hardware-timeout-s", default=DETECT_TIMEOUT_S, type=float, metavar="S",
                    help="--hardware=auto: how long nvidia-smi (or torch) may take to answer (default: 30)")
    group.addoption("--baseline", default=None, metavar="PATH",
                    help="judge the GEMM and all-reduce by this cluster's own floors (a file written by `rlcheck "
                         "baseline record`) instead of the profile's; it must name the profile judged")
    group.addoption("--no-local-gpus", action="store_true",
                    help="this machine is a Ray client or login node, not a GPU node: the checks of its own GPUs are "
                         "not applicable (the cluster checks judge the GPU nodes through --ray-address); without it a "
                         "declared --hardware profile is held against this machine's GPUs")
    group.addoption("--quick", action="store_true", help="skip tests marked slow")
    group.addoption("--no-cache", action="store_true",
                    help="run every reproducer and keep no verdict (default: a reproducer whose verdict was kept for "
                         "this image, rlcheck and reproducer source reuses it; the report says which and when "
                         "they were made; folder: reproducers/ in $RLCHECK_CACHE_DIR, else "
                         "$XDG_CACHE_HOME/rlcheck, else ~/.cache/rlcheck)")
    group.addoption("--rm-url", default=None, metavar="URL",
                    help="remote-rm e2e case: the reward service's /score URL as the cluster reaches it")
    group.addoption("--dry-run", action="store_true",
                    help="e2e test cases: render and validate each case instead of submitting it (no cluster)")
    group.addoption("--progress-s", default=PROGRESS_S, type=float, metavar="S",
                    help=f"write what is running after S seconds without output (default {PROGRESS_S:g}; 0: never)")


DESTS = ("hardware", "ray_address", "recipe", "job", "job_format", "job_env", "framework", "report_dir", "history",
         "band_runs", "hardware_timeout_s", "baseline", "no_local_gpus", "quick", "no_cache", "rm_url", "dry_run",
         "progress_s")
"""Every option's name in pytest's namespace (tests/test_plugin_lazy.py holds it to what add() declares)."""
DEFAULTS: dict[str, object] = {"hardware": "auto", "recipe": DEFAULT_RECIPE, "report_dir": "rlcheck-report",
                               "band_runs": 5, "hardware_timeout_s": DETECT_TIMEOUT_S, "progress_s": PROGRESS_S}
"""Defaults other than None, False and []: an option whose value differs from its default was given."""


def given(namespace: object) -> list[str]:
    """The rlcheck options set on this command line (or in addopts) to something other than their default."""
    found = []
    for dest in DESTS:
        value = getattr(namespace, dest, None)
        unset = value is None or value is False or value == [] or (dest in DEFAULTS and value == DEFAULTS[dest])
        if not unset:  # (0 is a value: --progress-s=0 and --band-runs=0 are given)
            found.append(dest)
    return found
