"""Rule table for what the pytest plugin's options resolve to (rlcheck.plugin.options): which --hardware,
--baseline, --ray-address, --report-dir and --job values are usage errors (each error's whole text), what a good
value resolves to (the profile and the evidence the report prints), and the report's line on the framework judged.
The pytester runs in tests/test_plugin.py and tests/test_plugin_job.py show the same errors at the command line."""

from __future__ import annotations

import dataclasses
import json
import types

import pytest

from rlcheck import hardware, option_table
from rlcheck.framework.detect import Installed
from rlcheck.job.job import Job
from rlcheck.plugin import options
from rlcheck.plugin.options import RunContext
from rlcheck.preflight import baseline
from rlcheck.probes.gpu import gpu_smoke
from rlcheck.probes.node.gpus import Detection

PROFILES = ", ".join(hardware.load_profiles())


def _usage(call, *args) -> str:
    with pytest.raises(pytest.UsageError) as caught:
        call(*args)
    return str(caught.value)


# --- --hardware -------------------------------------------------------------------------------------------------
def test_hardware_none_judges_no_profile():
    assert options.resolve_hardware("none") == (None, "none: hardware checks judge no profile", "")


@pytest.mark.parametrize("name", ["h200", "gb300"])
def test_hardware_named_is_that_profile_given_with_the_flag(name):
    assert options.resolve_hardware(name) == (hardware.get_profile(name), f"{name}: given with --hardware", "")


@pytest.mark.parametrize(("timeout_s", "detection"), [
    (None, Detection(gpus=(), profile=None, evidence="nvidia-smi: no GPU")),
    (2.5, Detection(gpus=(), profile=None, evidence="nvidia-smi did not answer", error="timed out after 2.5 s")),
])
def test_hardware_auto_is_what_detection_found_with_the_timeout_given(monkeypatch, timeout_s, detection):
    asked = []
    monkeypatch.setattr(options.gpus, "detect", lambda t: asked.append(t) or detection)
    assert options.resolve_hardware("auto", timeout_s) == (None, detection.evidence, detection.error)
    assert asked == [timeout_s]


def test_hardware_auto_passes_the_profile_detection_mapped_to(monkeypatch):
    h200 = hardware.get_profile("h200")
    found = Detection(gpus=(), profile=h200, evidence="nvidia-smi: 8 x NVIDIA H200")
    monkeypatch.setattr(options.gpus, "detect", lambda t: found)
    assert options.resolve_hardware("auto") == (h200, "nvidia-smi: 8 x NVIDIA H200", "")


@pytest.mark.parametrize("requested", ["rtx4090", "H200", "", "auto "])
def test_hardware_unknown_is_a_usage_error_listing_every_valid_value(requested):
    assert _usage(options.resolve_hardware, requested) == (
        f"--hardware={requested!r} is not a known hardware profile; valid: {PROFILES}, auto, none")


@pytest.mark.parametrize("requested", ["none", "h200"])
def test_a_broken_profile_is_a_usage_error_whatever_was_asked(monkeypatch, requested):
    def broken():
        raise hardware.ProfileError("h200.toml: hbm_gib=-1")
    monkeypatch.setattr(options.hardware, "load_profiles", broken)
    assert _usage(options.resolve_hardware, requested) == "broken hardware profile: h200.toml: hbm_gib=-1"


# --- --baseline -----------------------------------------------------------------------------------------------------
def _baseline_file(tmp_path, name="h200", gemm=700.0):
    path = tmp_path / "floors.toml"
    path.write_text(baseline.render(baseline.make(name, {gpu_smoke.GEMM_FLOOR: (gemm, "test")}, "r.json")))
    return path


def test_a_baseline_gives_the_profile_its_floors_and_says_so(tmp_path):
    path = _baseline_file(tmp_path)
    profile, evidence = options.with_baseline(hardware.get_profile("h200"), "h200: given with --hardware", path)
    assert evidence == f"h200: given with --hardware; floors from the baseline {path}"
    assert getattr(profile.thresholds, gpu_smoke.GEMM_FLOOR) == 560.0  # the default fraction, 0.8, of 700
    assert profile.provenance[gpu_smoke.GEMM_FLOOR] == "baseline"


def test_a_baseline_without_a_profile_is_a_usage_error_saying_why_there_is_none(tmp_path):
    path = _baseline_file(tmp_path)
    assert _usage(options.with_baseline, None, "nvidia-smi: no GPU", path) == (
        f"--baseline={str(path)!r} needs a hardware profile to apply to (nvidia-smi: no GPU)")


def test_a_baseline_of_another_profile_is_a_usage_error(tmp_path):
    path = _baseline_file(tmp_path, "b200", 1500.0)
    assert _usage(options.with_baseline, hardware.get_profile("h200"), "e", path) == (
        f"--baseline: {path}: recorded on hardware 'b200', this run judges 'h200'")


def test_an_unreadable_baseline_is_a_usage_error(tmp_path):
    path = tmp_path / "floors.toml"
    path.write_text("hardware = \n")
    assert _usage(options.with_baseline, hardware.get_profile("h200"), "e", path).startswith(
        f"--baseline: {path}: not a usable baseline: ")


# --- --ray-address --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("address", [None, "ray://head:10001", "http://head:8265", "https://head:8265",
                                     "ray://10.0.0.1", "http://[::1]:8265"])
def test_a_ray_address_of_a_known_scheme_with_a_host_is_taken(address):
    assert options._validate_ray_address(address) is None


USAGE = "use ray://HOST:10001 or http://HOST:8265"


@pytest.mark.parametrize("address", ["head:10001", "tcp://head:10001", "ray://", "ray://:10001", "RAY://head:1",
                                     "http:/head:8265", ""])
def test_a_ray_address_without_a_known_scheme_or_a_host_is_malformed(address):
    assert _usage(options._validate_ray_address, address) == f"--ray-address={address!r} is malformed: {USAGE}"


@pytest.mark.parametrize(("address", "why"), [
    ("ray://head:99999", "port '99999' is not a number from 1 to 65535"),
    ("ray://head:0", "port '0' is not a number from 1 to 65535"),
    # the scheme is what comes before the first ://, so a second one is read as part of the host
    ("ray://head://h:10001", "port '' is not a number from 1 to 65535"),
    ("http://a b:8265", "no host in it"),
])
def test_a_ray_address_the_reach_reader_refuses_is_a_usage_error_with_its_reason(address, why):
    assert _usage(options._validate_ray_address, address) == f"--ray-address={address!r}: {why}: {USAGE}"


# --- --report-dir ---------------------------------------------------------------------------------------------------
def test_a_report_dir_that_can_be_made_is_taken(tmp_path):
    assert options._validate_report_dir(tmp_path / "not" / "yet") is None


def test_a_report_dir_under_a_file_is_a_usage_error(tmp_path):
    (tmp_path / "f").write_text("")
    target = tmp_path / "f" / "report"
    assert _usage(options._validate_report_dir, target) == (
        f"--report-dir={str(target)!r} cannot be written: {tmp_path / 'f'} is not a folder")


# --- --job ----------------------------------------------------------------------------------------------------------
ARGV = ["python3", "train.py", "--actor-num-nodes", "1"]


def test_no_job_adds_nothing_to_the_context():
    assert options.capture_job(None, "rayjob", ["A=1"], ["x"]) == {}


@pytest.mark.parametrize("fmt", [None, "argv-json"])
def test_a_job_file_is_captured_in_the_format_given_or_detected(tmp_path, fmt):
    path = tmp_path / "launch.json"
    path.write_text(json.dumps({"argv": ARGV}))
    fields = options.capture_job(str(path), fmt)
    assert set(fields) == {"job_path", "job_format", "job"}
    assert (fields["job_path"], fields["job_format"], fields["job"].argv) == (str(path), "argv-json", tuple(ARGV))


def test_a_job_file_given_a_format_is_read_as_that_format(tmp_path):
    path = tmp_path / "launch.txt"  # detection cannot tell this one's format
    path.write_text(json.dumps({"argv": ARGV}))
    fields = options.capture_job(str(path), "argv-json")
    assert (fields["job_format"], fields["job"].source_format) == ("argv-json", "argv-json")


@pytest.mark.parametrize(("fmt", "env", "args", "message"), [
    (None, [], [], "--job='{path}': no such file"),
    ("rayjob", [], [], "--job='{path}': no such file"),
    ("yaml", [], [], "--job-format='yaml': one of bash, miles-py, ray-submit, rayjob, argv-json, job-json"),
    ("rayjob", ["RLCHECK_UNSET_FOR_THE_TABLE"], [],
     "--job-env RLCHECK_UNSET_FOR_THE_TABLE: not set in this environment; give NAME=VALUE or export it"),
])
def test_a_missing_file_a_bad_format_or_a_bad_job_env_is_a_usage_error(tmp_path, fmt, env, args, message):
    path = str(tmp_path / "absent.yaml")
    assert _usage(options.capture_job, path, fmt, env, args) == message.format(path=path)


@pytest.mark.parametrize("name", ["absent", "absent.txt", "absent.sh"])
def test_a_missing_file_is_no_such_file_never_a_format_guessed_from_its_name(tmp_path, name):
    path = str(tmp_path / name)
    assert _usage(options.capture_job, path, None) == f"--job={path!r}: no such file"


def test_arguments_for_a_file_that_is_no_script_are_a_usage_error(tmp_path):
    path = tmp_path / "launch.json"
    path.write_text(json.dumps({"argv": ARGV}))
    assert _usage(options.capture_job, str(path), None, [], ["p2p"]).startswith(
        f"{path}: a argv-json file takes no arguments")


def test_a_launch_that_gives_no_trainer_is_kept_as_the_jobs_error(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("apiVersion: ray.io/v1\nkind: RayJob\nspec: {}\n")
    assert options.capture_job(str(path), None) == {
        "job_path": str(path), "job_format": "rayjob", "job_error": f"{path}: RayJob spec.entrypoint is missing or "
                                                                   "empty"}


def test_a_job_env_value_reaches_the_capture(tmp_path, monkeypatch):
    monkeypatch.setenv("TABLE_VALUE_OF_THE_SHELL", "from-the-shell")
    path = tmp_path / "launch.json"
    path.write_text(json.dumps({"argv": ARGV}))
    seen = []
    real = options.capture.capture
    monkeypatch.setattr(options.capture, "capture", lambda *a: seen.append(a) or real(*a))
    options.capture_job(str(path), None, ["A=1", "TABLE_VALUE_OF_THE_SHELL"], [])
    assert seen == [(str(path), "argv-json", (("A", "1"), ("TABLE_VALUE_OF_THE_SHELL", "from-the-shell")), [], ())]
    options_given = _given(tmp_path, job=str(path), job_show=["/data/m"]).getoption
    seen.clear()
    monkeypatch.setattr(options.capture, "capture", lambda *a: seen.append(a) or real(*a[:4]))
    options.capture_job(*(options_given(o) for o in ("job", "job_format", "job_env", "job_arg", "job_show")))
    assert seen == [(str(path), "argv-json", (), [], ["/data/m"])]


# --- the run context ------------------------------------------------------------------------------------------------
def _context(**fields) -> RunContext:
    return RunContext(**{"hardware_requested": "none", "profile": None, "hardware_evidence": "e",
                         "recipe": "qwen3-4b-colocated", "ray_address": None, "report_dir": ".", "quick": False,
                         **fields})


def _job(framework: str) -> Job:
    return Job(argv=("python3", "train.py"), intended_argv=("python3", "train.py"), entrypoint="",
               framework=framework, source="job.yaml", source_format="rayjob")


@pytest.mark.parametrize(("framework", "job", "line"), [
    (None, None, "not detected"),
    (None, _job("slime"), "not detected"),
    (Installed(framework=None), None,
     "neither SLIME nor Miles importable here (judged by the recipe's framework's committed schema)"),
    (Installed(framework=None), _job("unknown"),
     "neither SLIME nor Miles importable here (judged by the recipe's framework's committed schema)"),
    (Installed(framework=None), _job("slime"),
     "neither SLIME nor Miles importable here; the job runs slime and states no version (judged by the committed "
     "schema slime-v0.2.4)"),
    (Installed(framework=None), _job("miles"),
     "neither SLIME nor Miles importable here; the job runs miles and states no version (judged by the committed "
     "schema miles-main)"),
    (Installed(framework="slime", version="0.3.1", source="package metadata"), _job("miles"),
     "slime 0.3.1 (package metadata)"),
])
def test_the_framework_judged_line_says_what_and_how_it_is_known(framework, job, line):
    assert _context(framework=framework, job=job).framework_judged() == line


def test_get_context_reads_the_context_the_configure_hook_stashed():
    context = _context()
    stash = pytest.Stash()
    stash[options.context_key] = context
    assert options.get_context(types.SimpleNamespace(stash=stash)) is context


# --- the whole context, as pytest_configure resolves it -------------------------------------------------------------
def _given(tmp_path, **values: object):
    options_given = {o.dest: [] if o.action == "append" else o.default for o in option_table.PLUGIN}
    options_given.update({"hardware": "none", "report_dir": str(tmp_path / "report"), "framework": "slime==0.2.4",
                          **values})
    return types.SimpleNamespace(getoption=options_given.__getitem__)


def test_the_defaults_resolve_to_the_default_recipe_judged_on_no_profile(tmp_path):
    assert options.run_context(_given(tmp_path)) == RunContext(  # type: ignore[arg-type]
        hardware_requested="none", profile=None, hardware_evidence="none: hardware checks judge no profile",
        recipe="qwen3-4b-colocated", ray_address=None, report_dir=tmp_path / "report", quick=False, dry_run=False,
        rm_url=None, hardware_unknown="", history_dir=None, band_runs=5,
        framework=Installed(framework="slime", version="0.2.4", source="--framework"), no_local_gpus=False)


def test_every_option_given_reaches_the_context(tmp_path):
    floors = _baseline_file(tmp_path)
    launch = tmp_path / "launch.json"
    launch.write_text(json.dumps({"argv": ARGV}))
    context = options.run_context(_given(  # type: ignore[arg-type]
        tmp_path, hardware="h200", recipe="qwen3-30b-a3b-disaggregated", ray_address="ray://head:10001", quick=True,
        dry_run=True, rm_url="http://rm:8000/score", history=str(tmp_path / "kept"), band_runs=0, baseline=str(floors),
        job=str(launch), job_env=["A=1"], no_local_gpus=True, framework="miles==main"))
    assert (context.hardware_requested, context.profile.name if context.profile else None,
            context.hardware_evidence) == ("h200", "h200", f"h200: given with --hardware; floors from the baseline "
                                                            f"{floors}")
    assert (context.recipe, context.ray_address, context.quick, context.dry_run, context.rm_url, context.history_dir,
            context.band_runs, context.no_local_gpus) == (
        "qwen3-30b-a3b-disaggregated", "ray://head:10001", True, True, "http://rm:8000/score", tmp_path / "kept", 0,
        True)
    assert (context.job_path, context.job_format, context.job_error) == (str(launch), "argv-json", "")
    assert context.job is not None and context.job.argv == tuple(ARGV)
    assert context.framework == Installed(framework="miles", main=True, source="--framework")


def test_the_hardware_auto_timeout_reaches_detection(tmp_path, monkeypatch):
    asked = []
    found = Detection(gpus=(), profile=None, evidence="nvidia-smi did not answer", error="timed out after 3 s")
    monkeypatch.setattr(options.gpus, "detect", lambda t: asked.append(t) or found)
    context = options.run_context(_given(tmp_path, hardware="auto", hardware_timeout_s=3.0))  # type: ignore[arg-type]
    assert (asked, context.hardware_evidence, context.hardware_unknown) == (
        [3.0], "nvidia-smi did not answer", "timed out after 3 s")


def test_a_job_that_gives_no_trainer_reaches_the_context_as_its_error(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("apiVersion: ray.io/v1\nkind: RayJob\nspec: {}\n")
    context = options.run_context(_given(tmp_path, job=str(path)))  # type: ignore[arg-type]
    assert (context.job_path, context.job_format, context.job, context.job_error) == (
        str(path), "rayjob", None, f"{path}: RayJob spec.entrypoint is missing or empty")


@pytest.mark.parametrize(("values", "message"), [
    ({"recipe": "qwen3-8b"}, "--recipe='qwen3-8b' is not a known recipe; valid: qwen3-4b-colocated, "
                             "qwen3-30b-a3b-disaggregated, qwen3-4b-remote-rm, glm5.2-gb300"),
    ({"ray_address": "head:10001"}, f"--ray-address='head:10001' is malformed: {USAGE}"),
    ({"report_dir": "{file}/report"}, "--report-dir='{file}/report' cannot be written: {file} is not a folder"),
    ({"history": "{file}/kept"}, "--history='{file}/kept' cannot be written: {file} is not a folder"),
    ({"band_runs": -1}, "--band-runs=-1: a whole number >= 0 (0 turns the band off)"),
    ({"framework": "slime=0.2.4"}, "--framework='slime=0.2.4': expected slime==VERSION or miles==VERSION (e.g. "
                                   "slime==0.2.4, slime==main)"),
    ({"hardware": "rtx"}, f"--hardware='rtx' is not a known hardware profile; valid: {PROFILES}, auto, none"),
    ({"baseline": "{file}"}, "--baseline='{file}' needs a hardware profile to apply to (none: hardware checks judge "
                             "no profile)"),
    ({"job": "{file}/launch.json"}, "--job='{file}/launch.json': no such file"),
])
def test_an_option_no_run_can_use_is_a_usage_error_before_anything_starts(tmp_path, values, message):
    file = tmp_path / "file"
    file.write_text("")
    given = {k: v.format(file=file) if isinstance(v, str) else v for k, v in values.items()}
    assert _usage(options.run_context, _given(tmp_path, **given)) == message.format(file=file)


def test_an_empty_framework_or_baseline_is_not_given(tmp_path):
    context = options.run_context(_given(tmp_path, hardware="h200", baseline="", framework=""))  # type: ignore[arg-type]
    assert context.hardware_evidence == "h200: given with --hardware"
    assert context.framework == options.resolve(None)


def test_with_nothing_declared_or_importable_the_jobs_own_framework_is_judged(tmp_path, monkeypatch):
    monkeypatch.setattr(options, "resolve", lambda declared: declared or Installed(framework=None))
    job = tmp_path / "captured.json"  # `rlcheck job capture` output of a RayJob whose image is slimerl/slime:v0.3.1
    job.write_text(json.dumps(dataclasses.replace(_job("slime"), framework_version="0.3.1").to_dict()))
    context = options.run_context(_given(tmp_path, framework=None, job=str(job)))  # type: ignore[arg-type]
    assert context.framework == Installed(framework="slime", version="0.3.1",
                                          source=f"stated by the job: job-json {job}")


def test_the_job_format_given_reaches_the_capture(tmp_path):
    path = tmp_path / "launch.txt"  # detection cannot tell this one's format
    path.write_text(json.dumps({"argv": ARGV}))
    context = options.run_context(_given(tmp_path, job=str(path), job_format="argv-json"))  # type: ignore[arg-type]
    assert (context.job_format, context.job.argv if context.job else None) == ("argv-json", tuple(ARGV))


@pytest.mark.parametrize(("values", "message"), [
    ({"job_env": ["TABLE_UNSET_IN_THIS_SHELL"]},
     "--job-env TABLE_UNSET_IN_THIS_SHELL: not set in this environment; give NAME=VALUE or export it"),
    ({"job_arg": ["p2p"]}, "{path}: a argv-json file takes no arguments"),
    ({"job_show": ["/"]}, "{path}: a argv-json file reads no folder; --job-show is for a launch script run in the "
                          "sandbox (bash, miles-py)"),
])
def test_the_job_env_and_arguments_given_reach_the_capture(tmp_path, values, message):
    path = tmp_path / "launch.json"
    path.write_text(json.dumps({"argv": ARGV}))
    assert _usage(options.run_context, _given(tmp_path, job=str(path), **values)).startswith(
        message.format(path=path))


@pytest.mark.parametrize(("requested", "declared"), [("h200", True), ("gb300", True), ("auto", False),
                                                     ("none", False)])
def test_a_named_profile_is_a_claim_about_this_machine_auto_and_none_are_not(requested, declared):
    assert _context(hardware_requested=requested).declared is declared


@pytest.mark.parametrize(("fields", "subject"), [
    ({}, "qwen3-4b-colocated"),
    ({"job_path": "launch.sh", "job_format": "bash"}, "job launch.sh (bash)"),
    ({"job_path": "", "job_format": "bash"}, "qwen3-4b-colocated"),
])
def test_the_subject_is_the_recipe_or_the_job_file_and_its_format(fields, subject):
    assert _context(**fields).subject == subject
