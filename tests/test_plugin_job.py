"""`pytest checks/ --job PATH`: every recipe check judged on the user's launch, GO / NO-GO naming the job."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rlcheck.framework.detect import collect_installed
from rlcheck.job import sandbox

ROOT = Path(__file__).resolve().parents[1]
JOBS = Path(__file__).parent / "data" / "jobs"
NEEDS_SANDBOX = pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
# Where SLIME or Miles is importable (the training image) it is judged instead of what the job states.
NOTHING_IMPORTABLE = pytest.mark.skipif(collect_installed().framework is not None,
                                        reason=f"{collect_installed().framework} is importable here: it is judged")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["rlcheck.plugin"]')
    shutil.copytree(ROOT / "checks", pytester.path / "checks")
    return pytester


def test_plugin_job_rayjob_go_names_job_and_format(project):
    result = project.runpytest("checks/test_recipe.py", "--hardware=h200", f"--job={JOBS / 'rayjob.yaml'}",
                               "--report-dir=out", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["PASS    recipe_argv_intact: 148 argv token(s) survive `/bin/sh -c` unchanged",
                                 f"rlcheck GO: * for job {JOBS / 'rayjob.yaml'} (rayjob) on hardware h200"])
    assert f"- job: {JOBS / 'rayjob.yaml'} (rayjob)" in (project.path / "out" / "report.md").read_text()


def test_plugin_job_secret_is_no_go(project):
    result = project.runpytest("checks/test_recipe.py", "--hardware=h200", f"--job={JOBS / 'secret_submit.txt'}",
                               "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["FAIL    recipe_no_inline_secrets: 1 secret value(s) inlined*HF_TOKEN (by name)*",
                                 "rlcheck NO-GO: *recipe_no_inline_secrets FAIL*"])
    assert "hf_rlcheck" not in result.stdout.str()


@NEEDS_SANDBOX
def test_plugin_job_failed_script_is_unknown_with_exit_code(project):
    result = project.runpytest("checks/test_recipe.py", "--hardware=h200", f"--job={JOBS / 'failing.sh'}",
                               "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["UNKNOWN recipe_batch: cannot judge the job: *it exited 1*MODEL_SCRIPT not set*",
                                 "rlcheck NO-GO: *"])


def test_plugin_job_unknown_format_is_a_usage_error(project, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    result = project.runpytest("checks/test_recipe.py", "--hardware=h200", f"--job={notes}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot tell its format; pass --job-format, one of bash, miles-py, ray-submit*"])


@NEEDS_SANDBOX
def test_plugin_job_miles_launcher_judged_with_job_env(project):
    result = project.runpytest("checks/test_recipe.py", "--hardware=h200", f"--job={JOBS / 'launch_miles.py'}",
                               "--job-env", "SLURM_JOB_NUM_NODES=2", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["PASS    recipe_batch: 12 x 8 = 96 samples*",
                                 "WARN    recipe_argv_intact: *48` reaches /bin/sh unquoted*",
                                 f"rlcheck GO: * for job {JOBS / 'launch_miles.py'} (miles-py) on hardware h200"])


def test_plugin_job_env_bad_name_is_a_usage_error(project):
    result = project.runpytest("checks/test_recipe.py", "--hardware=h200", f"--job={JOBS / 'render.json'}",
                               "--job-env", "1BAD=x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--job-env '1BAD': a variable name is letters, digits and _*"])


def _run(project: pytest.Pytester, job: Path, *args: str) -> pytest.RunResult:
    return project.runpytest("checks/test_recipe.py", "--hardware=h200", f"--job={job}", *args,
                             "--report-dir=out", "-p", "no:cacheprovider")


@NEEDS_SANDBOX
def test_plugin_job_bash_script_go_names_job_and_format(project):
    result = _run(project, JOBS / "launch.sh")
    # `[1]*48` is matched from its tail: fnmatch reads [1] as a character set.
    result.stdout.fnmatch_lines(["PASS    recipe_batch: 12 x 8 = 96 samples = 1 step(s) of 96, DP 3",
                                 "WARN    recipe_argv_intact: *48` reaches /bin/sh unquoted*",
                                 f"rlcheck GO: * for job {JOBS / 'launch.sh'} (bash) on hardware h200"])
    assert f"- job: {JOBS / 'launch.sh'} (bash)" in (project.path / "out" / "report.md").read_text()


@NEEDS_SANDBOX
def test_plugin_job_bash_script_bad_batch_is_no_go(project, tmp_path):
    shutil.copytree(JOBS / "models", tmp_path / "models")  # the script sources its model args from beside it
    script = tmp_path / "launch.sh"
    script.write_text((JOBS / "launch.sh").read_text().replace("--rollout-batch-size 12", "--rollout-batch-size 13"))
    result = _run(project, script)
    result.stdout.fnmatch_lines([
        "FAIL    recipe_batch: global_batch_size 96 != rollout_batch_size 13 x n_samples_per_prompt 8 // *= 104*",
        f"rlcheck NO-GO: * for job {script} (bash) on hardware h200: *recipe_batch FAIL*"])


def test_plugin_job_argv_json_go_names_job_and_format(project):
    result = _run(project, JOBS / "render.json")
    result.stdout.fnmatch_lines(["PASS    recipe_argv_intact: 148 argv token(s) survive `/bin/sh -c` unchanged",
                                 f"rlcheck GO: * for job {JOBS / 'render.json'} (argv-json) on hardware h200"])
    assert f"- job: {JOBS / 'render.json'} (argv-json)" in (project.path / "out" / "report.md").read_text()


def test_plugin_job_argv_json_uppercase_log_level_is_no_go(project, tmp_path):
    doc = json.loads((JOBS / "render.json").read_text())
    at = doc["argv"].index("--sglang-log-level") + 1
    doc["argv"][at] = "WARN"
    doc["entrypoint"] = doc["entrypoint"].replace("--sglang-log-level warning", "--sglang-log-level WARN")
    bad = tmp_path / "render_warn.json"
    bad.write_text(json.dumps(doc))
    result = _run(project, bad)
    result.stdout.fnmatch_lines([
        "FAIL    recipe_log_levels: *WARN*",
        f"rlcheck NO-GO: * for job {bad} (argv-json) on hardware h200: *recipe_log_levels FAIL*"])


def test_plugin_job_without_sandbox_is_unknown_pointing_to_capture_elsewhere(project, monkeypatch):
    monkeypatch.setattr(sandbox, "available", lambda: "user namespaces are not permitted here (unshare -rmn: 1)")
    result = _run(project, JOBS / "launch.sh")
    result.stdout.fnmatch_lines([
        "UNKNOWN recipe_batch: cannot judge the job: *launch.sh: not run: user namespaces are not permitted here*"
        "capture where it is allowed (`rlcheck job capture SCRIPT -o job.json`) and pass the JSON with --job",
        f"rlcheck NO-GO: * for job {JOBS / 'launch.sh'} (bash) on hardware h200*"])


@NEEDS_SANDBOX
@NOTHING_IMPORTABLE
def test_plugin_job_miles_launcher_judged_by_the_miles_schema(project):
    result = _run(project, JOBS / "launch_miles.py", "--job-env", "SLURM_JOB_NUM_NODES=2")
    result.stdout.fnmatch_lines([
        "framework: neither SLIME nor Miles importable here; the job runs miles and states no version (judged by "
        "the committed schema miles-main)",
        "PASS    recipe_framework_args: * accepted by miles main (schema miles-main, *the committed schema for the "
        "job's framework, miles (miles-py, no version stated))"])


@NOTHING_IMPORTABLE
def test_plugin_job_slime_rayjob_judged_by_the_schema_of_its_image(project, tmp_path):
    rayjob = tmp_path / "rayjob_v031.yaml"
    rayjob.write_text((JOBS / "rayjob.yaml").read_text().replace("slimerl/slime:v0.2.4", "slimerl/slime:v0.3.1"))
    result = _run(project, rayjob)
    result.stdout.fnmatch_lines([
        f"framework: slime 0.3.1 (stated by the job: rayjob {rayjob})",
        "PASS    recipe_framework_args: * accepted by slime 0.3.1 (schema slime-v0.3.1, the job's own slime 0.3.1 "
        f"(stated by the job: rayjob {rayjob}; none declared with --framework or importable here))"])
    assert f"- framework: slime 0.3.1 (stated by the job: rayjob {rayjob})" in \
        (project.path / "out" / "report.md").read_text()


def test_plugin_job_framework_option_wins_over_the_job(project):
    result = _run(project, JOBS / "rayjob.yaml", "--framework=slime==0.3.1")
    result.stdout.fnmatch_lines(["framework: slime 0.3.1 (--framework)",
                                 "* recipe_framework_args: * (schema slime-v0.3.1, declared slime 0.3.1)"])


# --- the script's own arguments: --job-arg, repeatable, in order ----------------------------------------------------

USAGE_GUARD = 'if [ $# -lt 1 ]; then echo "Usage: $0 <ROLLOUT_BATCH_SIZE> [TRAINER_ARG...]"; exit 1; fi\n'


def _script_with_arguments(tmp_path: Path) -> Path:
    """launch.sh taking its rollout batch size as $1 and more trainer options after it (`bash run.sh 12 --x y`)."""
    shutil.copytree(JOBS / "models", tmp_path / "models")
    text = (JOBS / "launch.sh").read_text().replace("set -ex\n", f"set -ex\n{USAGE_GUARD}", 1)
    text = text.replace("--rollout-batch-size 12", '--rollout-batch-size "$1"')
    script = tmp_path / "run.sh"
    script.write_text(text.replace("   ${TRAIN_ARGS[@]}\n", '   ${TRAIN_ARGS[@]} "${@:2}"\n'))
    return script


@NEEDS_SANDBOX
@pytest.mark.parametrize(("args", "lines"), [
    (["--job-arg", "12"], ["PASS    recipe_batch: 12 x 8 = 96 samples = 1 step(s) of 96, DP 3", "rlcheck GO: *"]),
    (["--job-arg", "13"], ["FAIL    recipe_batch: global_batch_size 96 != rollout_batch_size 13 x *",
                           "rlcheck NO-GO: *recipe_batch FAIL*"]),
    # in order, and one that starts with - written --job-arg=-x: the trainer gets `--sglang-log-level WARN` last
    (["--job-arg", "12", "--job-arg=--sglang-log-level", "--job-arg", "WARN"],
     ["FAIL    recipe_log_levels: *WARN*", "rlcheck NO-GO: *recipe_log_levels FAIL*"]),
    ([], ["UNKNOWN recipe_batch: cannot judge the job: *stops for want of its own arguments (Usage: *"
          "(with --job: --job-arg ARG, once per argument, in order)*", "rlcheck NO-GO: *"]),
])
def test_plugin_job_arg_reaches_the_script_in_order(project, tmp_path, args, lines):
    script = _script_with_arguments(tmp_path)
    result = _run(project, script, *args)
    result.stdout.fnmatch_lines(lines)


def test_plugin_job_arg_for_a_file_that_is_no_script_is_a_usage_error(project):
    result = _run(project, JOBS / "rayjob.yaml", "--job-arg", "12")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*rayjob.yaml: a rayjob file takes no arguments; arguments after -- (--job-arg with "
                                 "--job) are for a launch script run in the sandbox (bash, miles-py)*"])
