"""Capturing a Miles Python launcher, the user's variables in the sandbox (--job-env) and its private /tmp."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Literal

import pytest

from rlcheck import recipes
from rlcheck.hardware import get_profile
from rlcheck.job import capture, miles_stub, sandbox
from rlcheck.preflight import all_checks
from rlcheck.preflight.job_inputs import inputs_for_job
from rlcheck.verdict import Status

JOBS = Path(__file__).parent / "data" / "jobs"
LAUNCH = recipes.get("qwen3-30b-a3b-disaggregated", "h200")
needs_sandbox = pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
_HEADER = "import typer\n\nimport miles.utils.external_utils.command_utils as U\n\n\n"


def _judge(job, check_id):
    inputs = inputs_for_job(job, get_profile("h200"))
    return next(v for c in all_checks() if c.id == check_id for v in c.run(inputs))


@needs_sandbox
def test_miles_launcher_is_the_same_launch_as_the_other_formats():
    job = capture.capture(JOBS / "launch_miles.py", env=[("SLURM_JOB_NUM_NODES", "2")])
    assert (job.source_format, job.framework, job.nodes, job.gpus_per_node) == ("miles-py", "miles", 2, 8)
    assert job.argv == job.intended_argv == tuple(LAUNCH.argv())
    env = job.env_dict()
    own = dict(LAUNCH.env)  # the launch's own variables, plus what Miles' executor adds:
    assert {k: v for k, v in own.items() if k != "PYTHONPATH"}.items() <= env.items()
    assert (env["PYTHONUNBUFFERED"], env["MASTER_ADDR"], env["no_proxy"]) == ("1", "127.0.0.1", "127.0.0.1,127.0.0.1")
    # Miles' PYTHONPATH: its repo (where the launcher runs from), then the launcher's Megatron
    assert env["PYTHONPATH"].split(":") == [str(Path.cwd()), own["PYTHONPATH"]]
    assert [f for f in job.findings if "Miles helper" in f or "not seen" in f] == []


@needs_sandbox
def test_miles_launcher_reads_the_env_it_is_given():
    alone = capture.capture(JOBS / "launch_miles.py")  # Miles' default: SLURM_JOB_NUM_NODES or 1 node
    assert alone.nodes == 1 and alone.argv[alone.argv.index("--actor-num-nodes") + 1] == "1"
    assert _judge(alone, "recipe_batch").status is not Status.UNKNOWN


@needs_sandbox
@pytest.mark.parametrize(("tp", "sequence_parallel"), [("1", False), ("4", True)])
def test_miles_script_override_reaches_the_launcher_as_its_type(tp, sequence_parallel):
    # launch_miles.py compares `args.tp > 1`: a str field would crash it (str > int), as NUM_NODES=32 did.
    job = capture.capture(JOBS / "launch_miles.py", env=[("MILES_SCRIPT_TP", tp)])
    assert job.argv[job.argv.index("--tensor-model-parallel-size") + 1] == tp
    assert ("--sequence-parallel" in job.argv) is sequence_parallel


@needs_sandbox
def test_miles_wandb_key_from_job_env_is_inlined_and_fails_never_shown():
    job = capture.capture(JOBS / "launch_miles.py", env=[("WANDB_API_KEY", "wandb0123456789abcdef0123456789abcd")])
    assert "--wandb-key" in job.argv  # Miles' get_default_wandb_args puts the key into the argv
    verdict = _judge(job, "recipe_no_inline_secrets")
    assert verdict.status is Status.FAIL and "--wandb-key" in verdict.summary
    assert "wandb0123456789" not in verdict.summary + verdict.details


@needs_sandbox
def test_miles_unmodelled_helper_and_missing_model_args_are_findings_and_unknown(tmp_path):
    launcher = tmp_path / "run_mine.py"
    text = (JOBS / "launch_miles.py").read_text().replace('"qwen3-30B-A3B"', '"my-model"')
    launcher.write_text(text.replace("    U.execute_train(", "    U.start_mooncake_master()\n    U.execute_train("))
    job = capture.capture(launcher)
    assert any("start_mooncake_master() is not modelled" in f for f in job.findings)
    assert any(f"not seen: the model args: no {tmp_path / 'models' / 'my-model.py'}" in f for f in job.findings)
    verdict = _judge(job, "recipe_stage_memory")
    assert verdict.status is Status.UNKNOWN


@needs_sandbox
def test_miles_launcher_that_raises_is_capture_failed_with_its_error(tmp_path):
    launcher = tmp_path / "run_fail.py"
    launcher.write_text(_HEADER + "import os\n\nassert os.environ.get('MASTER_ADDR'), 'MASTER_ADDR is not set'\n")
    with pytest.raises(capture.CaptureFailed, match="exited 1.*MASTER_ADDR is not set"):
        capture.capture(launcher)


def test_miles_detection_by_import_and_python_without_miles_named(tmp_path):
    assert capture.detect(JOBS / "launch_miles.py") == "miles-py"
    plain = tmp_path / "tool.py"
    plain.write_text("import json\nprint(json.dumps({}))\n")
    with pytest.raises(capture.JobFormatError, match="imports nothing of Miles.*one of bash, miles-py"):
        capture.detect(plain)
    other = tmp_path / "milestones.py"
    other.write_text("import milestones\n")
    with pytest.raises(capture.JobFormatError):
        capture.detect(other)


@pytest.mark.parametrize(("items", "environ", "expected"), [
    (["BASE_DIR=/fsx", "A=b=c", "EMPTY="], {}, (("BASE_DIR", "/fsx"), ("A", "b=c"), ("EMPTY", ""))),
    (["WANDB_API_KEY"], {"WANDB_API_KEY": "k"}, (("WANDB_API_KEY", "k"),)),
])
def test_job_env_parses_name_value_and_name_alone(items, environ, expected):
    assert capture.parse_env(items, environ) == expected


@pytest.mark.parametrize(("item", "fragment"), [
    ("UNSET_HERE", "not set in this environment"), ("1X=y", "a variable name is letters"),
    ("A-B=y", "a variable name is letters"), ("PATH=/evil", "the sandbox sets it itself"),
    ("RLCHECK_RECORD=/x", "the sandbox sets it itself"),
])
def test_job_env_bad_item_is_named(item, fragment):
    with pytest.raises(capture.JobFormatError, match=fragment):
        capture.parse_env([item], {})


@needs_sandbox
def test_job_env_reaches_a_script_that_needs_base_dir(tmp_path):
    script = tmp_path / "needs_base.sh"
    script.write_text('#!/bin/bash\nset -e\n: "${BASE_DIR:?BASE_DIR must be set}"\n'
                      'ray job submit -- python3 train.py --load "$BASE_DIR/ckpt"\n')
    with pytest.raises(capture.CaptureFailed, match="BASE_DIR must be set"):
        capture.capture(script)
    job = capture.capture(script, env=[("BASE_DIR", "/fsx")])
    assert job.argv == ("python3", "train.py", "--load", "/fsx/ckpt")


@needs_sandbox
def test_sandbox_private_tmp_is_writable_and_leaves_the_host_tmp_alone(tmp_path):
    marker = f"rlcheck-test-{tmp_path.name}"
    script = tmp_path / "mktemp.sh"
    script.write_text(f'#!/bin/bash\nset -e\nT=$(mktemp /tmp/args.XXXXXX)\necho "--lr 1e-6" > "$T"\n'
                      f'echo x > /tmp/{marker}\nray job submit -- python3 train.py $(cat "$T")\n')
    job = capture.capture(script)
    assert job.argv == ("python3", "train.py", "--lr", "1e-6")
    assert not (Path("/tmp") / marker).exists()


@needs_sandbox
def test_sandbox_script_under_tmp_stays_read_only(tmp_path):
    script = tmp_path / "write_beside.sh"  # pytest's tmp_path is under /tmp: kept in view over the private /tmp
    script.write_text(f"echo x > {tmp_path / 'beside'}\nray job submit -- python3 train.py\n")
    run = sandbox.run(["bash", str(script)], timeout_s=20)
    assert not (tmp_path / "beside").exists()
    assert "Read-only file system" in "\n".join(run.stderr_tail)
    assert dataclasses.replace(run, stderr_tail=()).calls[-1][0] == "ray"


@needs_sandbox
def test_miles_typer_app_runs_its_train_command_and_says_so(tmp_path):
    launcher = tmp_path / "run_app.py"
    launcher.write_text(_HEADER + "app = typer.Typer()\n\n\n@app.command()\ndef prepare():\n"
                        "    raise SystemExit(3)\n\n\n"
                        "@app.command()\ndef train():\n"
                        "    U.execute_train(train_args='--train-backend fsdp --lr 1e-6', num_gpus_per_node=4, "
                        "megatron_model_type=None)\n\n\n@app.callback()\ndef _cb():\n    pass\n\n\napp()\n")
    job = capture.capture(launcher)
    assert job.argv == ("python3", "train.py", "--train-backend", "fsdp", "--lr", "1e-6") and job.gpus_per_node == 4
    assert "the launcher's typer commands are prepare, train: judged 'train'" in job.findings


@pytest.mark.parametrize(("kind", "raw", "value"), [
    (int, "32", 32), (float, "0.5", 0.5), (bool, "false", False), (bool, "0", False), (bool, "No", False),
    (bool, "true", True), (bool, "1", True), (bool, "yes", True), (str, "GLM-5", "GLM-5"), ("int", "32", 32),
    ("bool", "false", False), (int | None, "4", 4), (Literal["H200", "GB300"], "GB300", "GB300"),
])
def test_miles_script_override_takes_the_fields_type(kind, raw, value):
    # Formerly the raw string: MILES_SCRIPT_NUM_NODES=32 crashed `>=` and MEGATRON_USE_DEEPEP=false was truthy.
    got = miles_stub.field_value("num_nodes", kind, raw)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(("kind", "raw", "fragment"), [
    (int, "many", "MILES_SCRIPT_NUM_NODES='many': num_nodes is an int"),
    (float, "x", "num_nodes is a float"),
    (bool, "off", "num_nodes is a bool: true/false, 1/0 or yes/no"),
    (Literal["H200", "GB300"], "gb300", "num_nodes is one of H200, GB300"),
])
def test_miles_script_override_bad_value_names_the_field_and_what_it_allows(kind, raw, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        miles_stub.field_value("num_nodes", kind, raw)


# --- Miles' execute_train: the FSDP backend exactly when there is no Megatron model type ----------------------------

_REFUSED = ("Miles' execute_train stops on its bare assert: train_args {has} and megatron_model_type is {model}; it "
            "wants that text exactly when megatron_model_type is None")


@pytest.mark.parametrize(("train_args", "model_type"), [
    ("--train-backend fsdp --lr 1e-6", None),
    ("--lr 1e-6", "qwen3-4B"),
    ("--lr 1e-6 --train-backend megatron", "qwen3-4B"),
    ("--lr 1e-6", miles_stub.Unknown("U.model_type()")),  # from a helper the stub does not model: not judged
])
def test_miles_execute_train_accepts_a_backend_that_matches_the_model_type(train_args, model_type):
    miles_stub.check_backend(train_args, model_type)


@pytest.mark.parametrize(("train_args", "model_type", "has", "model"), [
    ("--lr 1e-6", None, "lack the text `--train-backend fsdp`", "None"),
    ("--train-backend megatron", None, "lack the text `--train-backend fsdp`", "None"),
    ("--train-backend=fsdp", None, "lack the text `--train-backend fsdp`", "None"),  # a test of the text
    ("--train-back fsdp", None, "lack the text `--train-backend fsdp`", "None"),
    ("--train-backend fsdp --lr 1e-6", "qwen3-4B", "hold the text `--train-backend fsdp`", "'qwen3-4B'"),
])
def test_miles_execute_train_refuses_a_backend_against_the_model_type(train_args, model_type, has, model):
    with pytest.raises(AssertionError) as refused:
        miles_stub.check_backend(train_args, model_type)
    assert str(refused.value) == _REFUSED.format(has=has, model=model)


_MISMATCH = "U.execute_train(train_args='--lr 1e-6', num_gpus_per_node=4, megatron_model_type=None)\n"


@needs_sandbox
def test_miles_launcher_with_a_backend_against_its_model_type_is_capture_failed_saying_why(tmp_path):
    launcher = tmp_path / "run_mismatch.py"
    launcher.write_text("import miles.utils.external_utils.command_utils as U\n" + _MISMATCH)
    with pytest.raises(capture.CaptureFailed) as failed:
        capture.capture(launcher)
    assert "it exited 1" in str(failed.value)
    assert "AssertionError: " + _REFUSED.format(has="lack the text `--train-backend fsdp`", model="None") \
        in str(failed.value)


@needs_sandbox
def test_slime_launcher_has_no_backend_check(tmp_path):
    launcher = tmp_path / "run_slime.py"
    launcher.write_text("import slime.utils.external_utils.command_utils as U\n" + _MISMATCH)
    job = capture.capture(launcher)
    assert job.argv == ("python3", "train.py", "--lr", "1e-6") and job.framework == "slime"


# --- the model args: Miles reads scripts/models/<type>.py of its own tree ------------------------------------------

def _miles_tree_launcher(root: Path, model_type: str) -> Path:
    (root / "miles").mkdir(parents=True)
    (root / "miles" / "__init__.py").write_text("")
    (root / "scripts" / "models").mkdir(parents=True)
    (root / "scripts" / "models" / "tiny.py").write_text("def model_args():\n"
                                                         "    return '--num-layers 7 --hidden-size 64'\n")
    launcher = root / "examples" / "agent" / "run_agent.py"
    launcher.parent.mkdir(parents=True)
    launcher.write_text("import miles.utils.external_utils.command_utils as U\n"
                        "U.execute_train(train_args='--lr 1e-6', num_gpus_per_node=4, "
                        f"megatron_model_type={model_type!r})\n")
    return launcher


@needs_sandbox
def test_miles_launcher_in_examples_gets_the_model_args_of_its_trees_scripts_models(tmp_path):
    job = capture.capture(_miles_tree_launcher(tmp_path / "miles-checkout", "tiny"))
    assert job.argv == ("python3", "train.py", "--num-layers", "7", "--hidden-size", "64", "--lr", "1e-6")
    assert not [f for f in job.findings if "not seen" in f]


@needs_sandbox
def test_miles_launcher_whose_model_type_its_tree_lacks_names_the_file_miles_reads(tmp_path):
    root = tmp_path / "miles-checkout"
    job = capture.capture(_miles_tree_launcher(root, "huge"))
    assert job.argv == ("python3", "train.py", "--lr", "1e-6")
    assert f"not seen: the model args: no {root / 'scripts' / 'models' / 'huge.py'} (Miles' " \
           "scripts/models/<megatron_model_type>.py)" in job.findings
