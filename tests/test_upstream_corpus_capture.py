"""Capture as the upstream corpus needs it, on trees shaped like SLIME's and Miles' (written here, no upstream text):
a bash script of a Miles tree is Miles' job, Miles' pure model-argument helper runs for real, a script's own
`[ -z "${MASTER_ADDR:-}" ]` guard is named with the --job-env to pass, and a SLIME Python launcher runs under the
launch-helper stub as SLIME's."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from rlcheck.job import capture, corpus, needs, recorder, sandbox
from rlcheck.job.script import tree_framework

needs_sandbox = pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
HELPER = "miles/utils/external_utils/model_args_utils.py"


def _tree(root: Path, framework: str, train_imports: str | None = None) -> Path:
    (root / framework).mkdir(parents=True)
    (root / framework / "__init__.py").write_text("")
    (root / "train.py").write_text(f"import {train_imports or framework}.utils\n")
    return root


@pytest.mark.parametrize(("layout", "expected"), [
    ({"miles/__init__.py": "", "train.py": "from miles.utils import x\n"}, "miles"),
    ({"slime/__init__.py": "", "train.py": "from slime.utils import x\n"}, "slime"),
    ({"train.py": "from miles.ray.placement_group import x\n"}, "miles"),  # a train.py alone says whose it is
    ({"train.py": "import slime.utils.misc as U\n"}, "slime"),
    ({"train.py": "import torch\n"}, None),  # neither: judged by what the job states, else SLIME's default
    ({}, None),
    ({"miles/__init__.py": "", "slime/__init__.py": ""}, None),  # both packages side by side: not told
])
def test_tree_framework_from_the_package_or_the_train_py_above_the_script(tmp_path, layout, expected):
    for rel, text in layout.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "examples" / "lora").mkdir(parents=True)
    script = tmp_path / "examples" / "lora" / "run.sh"
    script.write_text("#!/bin/bash\n")
    assert tree_framework(script) == expected


def test_tree_framework_reads_the_nearest_tree(tmp_path):
    """A SLIME checkout vendored inside a Miles one: the script's own tree decides."""
    _tree(tmp_path, "miles")
    inner = _tree(tmp_path / "third_party" / "s", "slime")
    (inner / "scripts").mkdir()
    assert tree_framework(inner / "scripts" / "run.sh") == "slime"
    assert tree_framework(tmp_path / "run.sh") == "miles"


@pytest.mark.parametrize(("args", "pure"), [
    (["/r/miles/utils/external_utils/model_args_utils.py", "qwen3-4B"], True),
    (["/r/slime/utils/external_utils/model_args_utils.py", "qwen3-4B"], True),
    (["/r/miles/utils/external_utils/model_args_utils.py", "--dump"], False),  # an option: not the helper's use
    (["/r/miles/utils/external_utils/model_args_utils.py"], False),
    (["/r/miles/utils/external_utils/command_utils.py", "x"], False),  # launches things: never run for real
    (["-c", "import socket"], False),
    (["/r/other/model_args_utils.py", "x"], False),
])
def test_pure_helper_is_only_the_model_args_printer(tmp_path, args, pure):
    real = [str(tmp_path / a.lstrip("/")) if a.startswith("/") else a for a in args]
    if real[0].endswith(".py"):
        Path(real[0]).parent.mkdir(parents=True, exist_ok=True)
        Path(real[0]).write_text("")
    assert recorder.is_pure_helper("python3", real) is pure
    assert not recorder.is_pure_helper("ray", real)


def test_helper_findings_name_what_ran_and_substitutions_what_did_not():
    calls = [("helper", ("/t/miles/utils/external_utils/model_args_utils.py", "qwen3-4B")),
             ("python3", ("-c", "print(1)"))]
    ran = needs.helper_findings(calls)
    assert len(ran) == 1 and "model_args_utils.py qwen3-4B` ran for real" in ran[0]
    assert "ran where the script reads its output" in needs.substitution_findings(calls[1:])[0]


@pytest.mark.parametrize(("path", "kind"), [
    ("scripts/run-x.sh", True), ("examples/a/b/run.sh", True), ("scripts/models/m.sh", False),
    ("scripts/run_x.py", True), ("examples/a/helper.py", False), ("scripts/README.md", False),
])
def test_corpus_launch_files_are_the_scripts_and_launchers(tmp_path, path, kind):
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("execute_train(x)\n" if path.endswith("run_x.py") else "def f(): pass\n")
    assert (path in corpus.launch_files(tmp_path)) is kind


MILES_SCRIPT = """#!/bin/bash
set -e
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -z "${MASTER_ADDR:-}" ]; then
  echo "MASTER_ADDR is not set. Please set it to the master node address."
  exit 1
fi
MODEL_ARGS_LINE="$(python3 "${SCRIPT_DIR}/../../HELPER" "tiny")" || exit 1
read -ra MODEL_ARGS <<< "${MODEL_ARGS_LINE}"
LOCAL_IP=$(python3 -c "print('10.1.1.1')")
ray start --head --node-ip-address "${MASTER_ADDR}" --num-gpus 4
ray job submit --address="http://127.0.0.1:8265" -- python3 train.py "${MODEL_ARGS[@]}" --lora-rank 8
""".replace("HELPER", HELPER)


@needs_sandbox
def test_capture_of_a_miles_tree_script_names_its_variable_then_runs_its_helper_and_is_miles(tmp_path):
    root = _tree(tmp_path / "checkout", "miles")
    helper = root / HELPER
    helper.parent.mkdir(parents=True)
    helper.write_text("import sys\nprint({'tiny': '--num-layers 7 --hidden-size 64'}[sys.argv[1]])\n")
    script = root / "examples" / "lora" / "run.sh"
    script.parent.mkdir(parents=True)
    script.write_text(MILES_SCRIPT)
    got = corpus.capture_one(root, "examples/lora/run.sh")
    assert got["needs"] == [["MASTER_ADDR"]] and got["job_env"] == {"MASTER_ADDR": "10.0.0.1"}
    job = got["job"]
    assert job["argv"] == ["python3", "train.py", "--num-layers", "7", "--hidden-size", "64", "--lora-rank", "8"]
    assert (job["framework"], job["nodes"], job["gpus_per_node"]) == ("miles", 1, 4)
    findings = "\n".join(job["findings"])
    assert "examples/lora/../../miles/utils/external_utils/model_args_utils.py tiny` ran for real" in findings
    assert "`python3 -c 'print('\"'\"'10.1.1.1'\"'\"')'` ran for real (a Python program of the standard library " \
           "only, whose output the script reads): its output is in the launch" in findings
    assert str(tmp_path) not in json.dumps(got)


@needs_sandbox
def test_capture_of_a_slime_python_launcher_runs_under_the_stub_as_slime(tmp_path):
    root = _tree(tmp_path / "checkout", "slime")
    launcher = root / "examples" / "vlm" / "run_vlm.py"
    launcher.parent.mkdir(parents=True)
    launcher.write_text("import slime.utils.misc as U\n"
                        "from slime.utils.external_utils.command_utils import execute_train\n"
                        "U.exec_command('mkdir -p /root/models')\n"
                        "execute_train(train_args='--rollout-batch-size 8 ', num_gpus_per_node=8, "
                        "megatron_model_type=None)\n")
    assert capture.detect(launcher) == "miles-py"
    job = capture.capture(launcher)
    assert job.framework == "slime" and job.argv[-2:] == ("--rollout-batch-size", "8")
    assert any("slime.utils.misc.exec_command" in f for f in job.findings)


GUARD = ('MASTER_ADDR=${MASTER_ADDR:-}\nif [ -z "${MASTER_ADDR}" ]; then\n  echo "MASTER_ADDR is not set."\n  exit 1\n'
         'fi\n')


# --- a Python program of the standard library only, whose output the script reads, runs for real ---------------------

@pytest.mark.parametrize(("args", "stdin", "expected"), [
    (["-c", "import json, os.path; print(json.dumps({}))"], "", ("import json, os.path; print(json.dumps({}))", [])),
    (["-c", "from collections import abc; print(1)", "x"], "", ("from collections import abc; print(1)", ["x"])),
    (["-", "a"], "import os\nprint(os.environ['A'])\n", ("import os\nprint(os.environ['A'])\n", ["a"])),
    (["-c", "import torch; print(8)"], "", None),  # a package outside the standard library: the stand-in answers
    (["-c", "from json import x; import ray.util"], "", None),
    (["-c", "from . import x"], "", None),
    (["-c", "print(("], "", None),  # not Python
    (["-c", "  "], "", None),
    (["-"], "import numpy\n", None),
    (["run.py", "x"], "", None),  # a file: a launcher or the trainer, never run here as a program
    (["-u", "-c", "print(1)"], "", None),
])
def test_stdlib_program_is_a_program_importing_only_the_standard_library(args, stdin, expected):
    assert recorder.stdlib_program("python3", args, io.StringIO(stdin)) == expected
    assert recorder.stdlib_program("ray", args, io.StringIO(stdin)) is None


def test_run_program_gives_its_output_status_and_last_error():
    assert recorder.run_program("import sys; print(sys.argv[1])", ["x"]) == (0, b"x\n", b"")
    code, out, err = recorder.run_program("import os; os.environ['RLCHECK_NOT_SET_ANYWHERE']", [])
    assert (code, out) == (1, b"") and err.decode().strip().splitlines()[-1] == "KeyError: 'RLCHECK_NOT_SET_ANYWHERE'"
    code, out, _ = recorder.run_program(f"print('x' * {recorder.PROGRAM_OUTPUT_CAP_BYTES})", [])  # one byte over
    assert code == 1 and len(out) == recorder.PROGRAM_OUTPUT_CAP_BYTES + 1
    code, out, _ = recorder.run_program(f"print('x' * {recorder.PROGRAM_OUTPUT_CAP_BYTES - 1})", [])  # at the cap
    assert code == 0 and len(out) == recorder.PROGRAM_OUTPUT_CAP_BYTES


def test_run_program_past_its_time_is_killed_with_status_124(monkeypatch):
    monkeypatch.setattr(recorder, "PROGRAM_TIMEOUT_S", 0.5)
    assert recorder.run_program("import time; time.sleep(60)", [])[0] == 124


RUNTIME_ENV_SCRIPT = """#!/bin/bash
set -e
RUNTIME_ENV_JSON=$(python3 - <<PY
import json, os
print(json.dumps({"env_vars": {"MASTER_ADDR": os.environ["MASTER_ADDR"], "NCCL_NVLS_ENABLE": "0"}}))
PY
)
GPUS=$(python3 -c "import torch; print(torch.cuda.device_count())")
ray job submit --runtime-env-json="${RUNTIME_ENV_JSON}" -- python3 train.py --rollout-batch-size 8
"""


@needs_sandbox
def test_capture_runs_a_stdlib_program_that_builds_the_runtime_env_and_names_what_it_lacked(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text(RUNTIME_ENV_SCRIPT)
    with pytest.raises(capture.CaptureFailed) as failed:
        capture.capture(script)
    assert "--runtime-env-json is not valid JSON" in str(failed.value)
    assert "the script stops for want of MASTER_ADDR (unset when it exited): pass --job-env MASTER_ADDR=..." \
        in str(failed.value)
    job = capture.capture(script, env=[("MASTER_ADDR", "10.0.0.1")])
    assert job.env_dict() == {"MASTER_ADDR": "10.0.0.1", "NCCL_NVLS_ENABLE": "0"}
    findings = "\n".join(job.findings)
    assert "ran for real (a Python program of the standard library only, whose output the script reads)" in findings
    assert "`python3 -c 'import torch; print(torch.cuda.device_count())'` ran where the script reads its output" \
        in findings  # torch: the stand-in's empty answer, said

@pytest.mark.parametrize(("script", "output", "set_at_exit", "expected"), [
    # SLIME's guard: the variable is assigned (empty) before its test; the script's own message names it
    (GUARD, ["MASTER_ADDR is not set."], ["HOME"], ["MASTER_ADDR"]),
    (GUARD, ["+ echo 'MASTER_ADDR is not set.'"], ["HOME"], ["MASTER_ADDR"]),  # the -z test names it without the echo
    (GUARD, ["MASTER_ADDR is not set."], ["MASTER_ADDR"], []),  # it was given: not why the script stopped
    # a missing file whose path holds no variable: no variable is named (it used to guess WANDB_KEY, MODEL_ARGS)
    ("set -e\nsource /root/slime/scripts/models/qwen3-4B.sh\nA=(--wandb-key ${WANDB_KEY} ${MODEL_ARGS[@]})\n",
     ["run.sh: line 2: /root/slime/scripts/models/qwen3-4B.sh: No such file or directory"], ["HOME"], []),
    ('set -e\ncd "$REPO_ROOT/slime"\n', ["run.sh: line 2: cd: /slime: No such file or directory"], ["HOME"],
     ["REPO_ROOT"]),
    # a Slurm wrapper's own array, empty because `scontrol` is not here: the script's variable, not the caller's
    ('set -u\nnodes=( $(scontrol show hostnames "$NL") )\nhead=$(srun -w "${nodes[0]}" hostname)\n',
     ["run.sh: line 3: nodes[0]: unbound variable"], ["HOME", "NL"], []),
    ('set -u\nhead=$(srun -w "${nodes[0]}" hostname)\n', ["run.sh: line 2: nodes[0]: unbound variable"], ["HOME"],
     ["nodes"]),
    # awk's $NF and a commented-out ${WANDB_KEY} are no variables the script reads
    ("set -euo pipefail\nP=$(pip list | awk '{print $NF}')\n# --wandb-key ${WANDB_KEY}\n", ["+ P="], ["HOME"], []),
    # a Python launcher: its assertion message or os.environ's KeyError names the variable
    ('addr = os.environ.get("MASTER_ADDR")\nassert addr, "MASTER_ADDR is not set. Please set it."\n',
     ["AssertionError: MASTER_ADDR is not set. Please set it."], None, ["MASTER_ADDR"]),
    ('head = os.environ["HEAD_IP"]\n', ["KeyError: 'HEAD_IP'"], None, ["HEAD_IP"]),
    ('head = os.environ["HEAD_IP"]\n', ["KeyError: 'OTHER'"], None, []),
])
def test_missing_variables_names_what_the_script_stopped_for_and_nothing_else(script, output, set_at_exit,
                                                                                expected):
    assert needs.missing_variables(script, output, set_at_exit) == expected


@pytest.mark.parametrize(("model_args", "ep", "problem"), [
    ((), "4", None),  # no model stated (a Miles helper's model args not seen): not judged dense
    (("--num-layers", "28", "--hidden-size", "1024", "--ffn-hidden-size", "3072", "--num-attention-heads", "16"), "4",
     "EP 4 on a dense model"),  # a dense model the argv states, with EP 4: Megatron's layout is wrong
    (("--num-layers", "28", "--num-experts", "6"), "4", "6 experts do not divide over EP 4"),
    ((), "1", None),
])
def test_layout_of_an_argv_without_its_model_judges_only_what_it_states(model_args, ep, problem):
    from rlcheck.job.job import Job
    from rlcheck.preflight import all_checks
    from rlcheck.preflight.job_inputs import inputs_for_job
    argv = ("python3", "train.py", *model_args, "--rollout-batch-size", "8", "--tensor-model-parallel-size", "2",
            "--expert-model-parallel-size", ep, "--actor-num-gpus-per-node", "8", "--colocate")
    job = Job(argv=argv, intended_argv=argv, entrypoint="", source="t", source_format="argv-json")
    check = next(c for c in all_checks() if c.id == "recipe_layout")
    verdict = check.run(inputs_for_job(job, None))[0]
    assert (problem is None) == (verdict.status.value != "FAIL"), verdict.summary
    assert problem is None or problem in verdict.summary
