"""Capturing a user's launch: the same launch in every format is the same Job; bad input is named; the sandbox holds."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rlcheck import recipes
from rlcheck.facts import Need
from rlcheck.hardware import get_profile
from rlcheck.job import capture, sandbox, to_recipe
from rlcheck.job.job import Job, job_from_recipe
from rlcheck.preflight import all_checks
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.probes.recipe.memory_activations import recompute_of
from rlcheck.verdict import Status

JOBS = Path(__file__).parent / "data" / "jobs"
ROOT = Path(__file__).resolve().parents[1]
LAUNCH = recipes.get("qwen3-30b-a3b-disaggregated", "h200")
needs_sandbox = pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")


@pytest.mark.parametrize(("name", "fmt"), [("launch.sh", "bash"), ("two_stage.sh", "bash"),
                                           ("submit.txt", "ray-submit"), ("rayjob.yaml", "rayjob"),
                                           ("render.json", "argv-json")])
def test_job_same_launch_in_every_format_is_the_same_job(name, fmt):
    if fmt in ("bash",) and sandbox.available():
        pytest.skip(f"needs the sandbox: {sandbox.available()}")
    job = capture.capture(JOBS / name)
    assert job.source_format == fmt
    assert job.argv == job.intended_argv == tuple(LAUNCH.argv())
    assert job.env == LAUNCH.env


def test_job_shape_comes_from_each_format():
    rayjob = capture.capture(JOBS / "rayjob.yaml")
    assert (rayjob.nodes, rayjob.gpus_per_node, rayjob.framework, rayjob.framework_version) == (2, 8, "slime", "0.2.4")
    rendered = capture.capture(JOBS / "render.json")
    assert (rendered.nodes, rendered.gpus_per_node) == (2, 8)
    assert capture.capture(JOBS / "submit.txt").nodes is None  # a submit line does not state the cluster


@needs_sandbox
def test_job_script_shape_from_ray_start_and_bracket_list_is_a_finding():
    job = capture.capture(JOBS / "launch.sh")
    assert (job.nodes, job.gpus_per_node) == (1, 8)
    assert any("`[1]*48` reaches /bin/sh unquoted" in f for f in job.findings)


def test_job_json_round_trip_keeps_the_job():
    job = capture.capture(JOBS / "render.json")
    again = Job.from_dict(json.loads(json.dumps(job.to_dict())), "job.json")
    assert again.argv == job.argv and again.env == job.env and again.source_format == "job-json"


@pytest.mark.parametrize("recipe_id", recipes.RECIPE_IDS)
def test_job_builtin_recipes_become_jobs_through_the_same_path(recipe_id):
    hw = "gb300" if recipe_id.startswith("glm") else "h200"
    recipe = recipes.get(recipe_id, hw)
    read = to_recipe.read(job_from_recipe(recipe))
    # A launch with PD disaggregation (the GLM-5.2 recipe's --prefill-num-servers, from seed 004's Miles launcher)
    # leaves the job reader's KV pool estimate without a term it counts: prefill servers' share of the requests.
    pd = "--prefill-num-servers" in recipe.extra_args
    assert read.missing == ({Need.ROLLOUT_MEMORY: "the launch asks for --prefill-num-servers 1 (disaggregated "
                                                  "prefill and decode servers size their pools apart)"} if pd else {})
    assert pd is (recipe_id == "glm5.2-gb300")
    for field in ("model", "rollout", "parallel", "sglang", "optimizer"):
        assert getattr(read.recipe, field) == getattr(recipe, field), field
    # Train flags the typed fields do not render reach the judges (with flags of its own GRPO block, if any).
    assert set(recipe.extra_args) <= set(read.recipe.extra_args)
    assert recompute_of(read.recipe) == recompute_of(recipe)
    assert read.recipe.placement.placement_group_gpus == recipe.placement.placement_group_gpus


def test_job_unknown_model_makes_model_checks_unknown_naming_it():
    inputs = inputs_for_job(capture.capture(JOBS / "unknown_model.json"), get_profile("h200"))
    judged = ("recipe_stage_memory", "recipe_kv_pool", "recipe_batch")  # the recipe checks this job's model decides
    verdicts = {v.check_id: v for c in all_checks() if c.id in judged for v in c.run(inputs)}
    assert verdicts["recipe_stage_memory"].status is Status.UNKNOWN
    assert "--num-layers 28" in verdicts["recipe_stage_memory"].summary
    assert "not among the known architectures" in verdicts["recipe_kv_pool"].summary
    assert verdicts["recipe_batch"].status is Status.PASS  # 8 x 8 = 64: judged from the argv alone


def test_job_secret_in_runtime_env_json_fails_and_is_never_shown():
    job = capture.capture(JOBS / "secret_submit.txt")
    verdicts = [v for c in all_checks() if c.id == "recipe_no_inline_secrets"
                for v in c.run(inputs_for_job(job, get_profile("h200")))]
    assert verdicts[0].status is Status.FAIL and "env HF_TOKEN (by name)" in verdicts[0].summary
    secret = job.env_dict()["HF_TOKEN"]
    assert secret not in verdicts[0].render() and secret not in json.dumps(job.to_dict())


@pytest.mark.parametrize(("name", "fmt", "fragment"), [
    ("not_rayjob.yaml", None, "not a RayJob (found kind RayCluster)"),
    ("missing.sh", None, "no such file"),
    ("launch.sh", "csv", "one of bash, miles-py, ray-submit, rayjob, argv-json, job-json"),
])
def test_job_bad_input_is_a_usage_error_naming_what_is_allowed(name, fmt, fragment, tmp_path):
    with pytest.raises(capture.JobFormatError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        capture.capture(JOBS / name, fmt)
    plain = tmp_path / "notes.txt"
    plain.write_text("hello\n")
    with pytest.raises(capture.JobFormatError, match="pass --job-format, one of bash, miles-py, ray-submit"):
        capture.capture(plain)


@needs_sandbox
@pytest.mark.parametrize(("name", "fragments"), [
    ("failing.sh", ("the script failed", "it exited 1", "MODEL_SCRIPT not set")),
    ("no_submit.sh", ("never reached `ray job submit` or a train.py", "ray start")),
])
def test_job_script_that_gives_no_trainer_says_why(name, fragments):
    with pytest.raises(capture.CaptureFailed) as info:
        capture.capture(JOBS / name)
    for fragment in fragments:
        assert fragment in str(info.value)


@needs_sandbox
def test_job_bash_c_array_fails_argv_intact_with_bad_substitution():
    job = capture.capture(JOBS / "bash_c_array.sh")
    assert "Bad substitution" in job.shell_error
    verdict = next(v for c in all_checks() if c.id == "recipe_argv_intact"
                   for v in c.run(inputs_for_job(job, get_profile("h200"))))
    assert verdict.status is Status.FAIL and verdict.failure_id == "ray-argv-loss"


@needs_sandbox
def test_job_replay_reports_argv_the_shell_changed(tmp_path):
    line = tmp_path / "run.txt"
    line.write_text("ray job submit --address=http://127.0.0.1:8265 -- python3 train.py --save '$SAVE_DIR/ckpt'\n")
    job = capture.capture(line)
    assert job.intended_argv[-1] == "$SAVE_DIR/ckpt" and job.argv[-1] == "/ckpt"
    assert any("argv changed through `/bin/sh -c`" in f for f in job.findings)


@needs_sandbox
def test_job_sandbox_cannot_write_outside_or_reach_the_network(tmp_path):
    target = tmp_path / "escaped"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        script = tmp_path / "escape.sh"
        script.write_text(f"echo x > {target}\necho x > $HOME/inside\n"
                          f"(exec 3<>/dev/tcp/127.0.0.1/{port}) && echo reached >&2 || echo no-network >&2\n"
                          f"ls $HOME/inside >&2\n")
        run = sandbox.run(["bash", str(script)], timeout_s=20)
    assert not target.exists()
    tail = "\n".join(run.stderr_tail)
    assert "Read-only file system" in tail and "no-network" in tail and "reached" not in tail
    assert "inside" in tail  # its own working directory stays writable


@needs_sandbox
def test_job_sandbox_time_limit_ends_the_script(tmp_path):
    script = tmp_path / "spin.sh"
    script.write_text("while :; do :; done\n")
    run = sandbox.run(["bash", str(script)], timeout_s=1)
    assert run.timed_out and run.returncode == -1


def test_job_cli_show_redacts_and_capture_writes(tmp_path):
    env = {"PYTHONPATH": str(ROOT)}
    shown = subprocess.run([sys.executable, "-m", "rlcheck.cli", "job", "show", str(JOBS / "secret_submit.txt")],
                           capture_output=True, text=True, env=env, check=False)
    assert shown.returncode == 0 and json.loads(shown.stdout)["env"]["HF_TOKEN"] == "<redacted>"
    assert "hf_rlcheck" not in shown.stdout + shown.stderr
    out = tmp_path / "job.json"
    done = subprocess.run([sys.executable, "-m", "rlcheck.cli", "job", "capture", str(JOBS / "render.json"), "-o",
                           str(out)], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0 and capture.detect(out) == "job-json"
    bad = subprocess.run([sys.executable, "-m", "rlcheck.cli", "job", "show", str(JOBS / "not_rayjob.yaml")],
                         capture_output=True, text=True, env=env, check=False)
    assert bad.returncode == 2 and "found kind RayCluster" in bad.stderr


@needs_sandbox
def test_job_rayjob_whose_entrypoint_file_is_elsewhere_is_unknown_not_argv_loss(tmp_path):
    manifest = tmp_path / "rayjob.yaml"
    manifest.write_text("kind: RayJob\nspec:\n  entrypoint: bash /shared/scripts/entry.sh\n")
    job = capture.capture(manifest)
    assert job.unseen and not job.shell_error
    verdicts = {v.check_id: v for c in all_checks() if c.area == "recipe"
                for v in c.run(inputs_for_job(job, get_profile("h200")))}
    assert verdicts["recipe_argv_intact"].status is Status.UNKNOWN
    assert "capture the job where that file exists" in verdicts["recipe_batch"].summary


def test_job_not_captured_leaves_no_check_judging_a_placeholder_recipe():
    inputs = inputs_for_job(None, get_profile("h200"), "the script failed; it exited 1")
    for check_id in ("recipe_batch", "cluster_gpus", "image_mbridge", "image_driver_guard"):
        verdict = next(c for c in all_checks() if c.id == check_id).run(inputs, observation=object())[0]
        assert verdict.status is Status.UNKNOWN and "it exited 1" in verdict.summary, check_id


def test_rlcheck_loads_without_pyyaml_and_a_rayjob_then_says_what_is_missing():
    """rlcheck needs only pytest in a training image: the plugin and the CLI load without PyYAML, and reading a
    RayJob without it is a format error naming the package, not an ImportError at start-up."""
    code = ("import sys; sys.modules['yaml'] = None\n"  # an image without PyYAML: every import of it fails
            "import rlcheck.plugin, rlcheck.cli\n"
            "from rlcheck.job.rayjob import read_rayjob\n"
            "from rlcheck.job.submit import JobFormatError\n"
            "try:\n"
            "    read_rayjob('kind: RayJob', 'job.yaml')\n"
            "except JobFormatError as exc:\n"
            "    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1], check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == ("job.yaml: reading a RayJob YAML needs PyYAML, which is not installed here "
                                   "(pip install pyyaml; or give the job as its launch script)")
