"""A script's own arguments (`rlcheck job capture SCRIPT -- ARG...`), the fake `nc` a wait loop polls, and the Miles
launch helpers the upstream corpus stopped on (GENERATION_HARDWARE, execute_train_npu, resolve_extra_env_vars): each
with the recorded input that failed before."""

from __future__ import annotations

import dataclasses
import json
import shlex
from pathlib import Path

import pytest

from rlcheck import cli
from rlcheck.job import capture, corpus, miles_stub, needs, recorder, sandbox

needs_sandbox = pytest.mark.skipif(bool(sandbox.available()), reason=f"needs the sandbox: {sandbox.available()}")
# The usage-line shape of Miles' p2p_weight_transfer profile scripts (written here, no upstream text).
POSITIONAL = """#!/bin/bash
set -ex
if [ $# -lt 2 ]; then
  echo "Usage: $0 <MODE> <NODE_RANK>"
  exit 1
fi
MODE="$1"
NODE_RANK="$2"
ray job submit -- python3 train.py --rollout-batch-size 8 --update-weight-mode "${MODE}" --node-rank "${NODE_RANK}"
"""
MILES_HEADER = "import miles.utils.external_utils.command_utils as U\n"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- the script's own arguments --------------------------------------------------------------------------------------

@needs_sandbox
def test_script_arguments_reach_the_script(tmp_path):
    script = _write(tmp_path, "run.sh", POSITIONAL)
    job = capture.capture(script, args=("p2p", "0"))
    assert job.argv[-4:] == ("--update-weight-mode", "p2p", "--node-rank", "0")
    assert "captured with the script's arguments p2p 0" in job.findings
    with pytest.raises(capture.CaptureFailed) as failed:  # without them it stops, and capture says what to pass
        capture.capture(script)
    assert "stops for want of its own arguments (Usage:" in str(failed.value)
    assert "pass them after --: rlcheck job capture SCRIPT -- ARG..." in str(failed.value)


@needs_sandbox
@pytest.mark.parametrize("order", [["run.sh", "-o", "OUT", "--", "p2p", "1"], ["-o", "OUT", "run.sh", "--", "p2p", "1"],
                                   ["run.sh", "--job-env", "X=1", "-o", "OUT", "--", "p2p", "1"]])
def test_cli_passes_what_follows_the_double_dash_wherever_rlchecks_options_stand(tmp_path, monkeypatch, order):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "run.sh", POSITIONAL)
    out = tmp_path / "job.json"
    assert cli.main(["job", "capture", *[str(out) if t == "OUT" else t for t in order]]) == 0
    argv = json.loads(out.read_text())["argv"]
    assert argv[-4:] == ["--update-weight-mode", "p2p", "--node-rank", "1"]


@pytest.mark.parametrize(("argv", "fragment"), [
    (["job", "capture", "run.sh", "p2p"], "unrecognized arguments: p2p (a script's own arguments go after --"),
    (["job", "capture", "submit.txt", "--", "p2p"], "a ray-submit file takes no arguments; arguments after -- "
                                                   "(--job-arg with --job) are for a launch script run in the sandbox "
                                                   "(bash, miles-py)"),
])
def test_cli_bad_script_arguments_are_a_usage_error_naming_what_is_allowed(tmp_path, monkeypatch, capsys, argv,
                                                                             fragment):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "run.sh", POSITIONAL)
    _write(tmp_path, "submit.txt", "ray job submit -- python3 train.py --rollout-batch-size 8\n")
    with pytest.raises(SystemExit) as exited:
        code = cli.main(argv)
        raise SystemExit(code)
    assert exited.value.code == 2
    assert fragment in capsys.readouterr().err


def test_script_argument_with_a_nul_byte_is_refused(tmp_path):
    script = _write(tmp_path, "run.sh", POSITIONAL)
    with pytest.raises(capture.JobFormatError, match="without NUL bytes"):
        capture.capture(script, args=("a\0b",))


@pytest.mark.parametrize(("script", "output", "given", "wanted"), [
    (POSITIONAL, ["Usage: run.sh <MODE> <NODE_RANK>"], (), True),
    ('V="${1:?Usage: $0 <VARIANT>}"\n', ["run.sh: line 1: 1: Usage: run.sh <VARIANT>"], (), True),
    (POSITIONAL, ["Usage: run.sh <MODE> <NODE_RANK>"], ("p2p",), False),  # given: the script said why itself
    ("# usage: $1\nsource /x.sh\n", ["Usage: elsewhere"], (), False),  # reads no argument: not why it stopped
    ("echo '$1'\n", ["usage"], (), False),  # single-quoted: no argument read
    (POSITIONAL, ["MASTER_ADDR is not set"], (), False),  # it stopped for something else
    ('MODE="${1:-p2p}"\n', ["+ ray start --head --disable-usage-stats"], (), False),  # an optional one; no usage line
])
def test_wants_arguments_only_when_the_script_reads_them_and_stopped_on_them(script, output, given, wanted):
    assert bool(needs.wants_arguments(script, output, given)) is wanted


@needs_sandbox
def test_corpus_keeps_a_scripts_arguments_and_captures_with_them(tmp_path):
    root = tmp_path / "tree"
    (root / "scripts").mkdir(parents=True)
    _write(root / "scripts", "run-profile.sh", POSITIONAL)
    first = corpus.build(root, "o/r", "c", "slime==main")
    assert "error" in first["scripts"][0] and "script_args" not in first["scripts"][0]
    first["scripts"][0]["script_args"] = ["broadcast", "0"]  # what a person chose from its usage line
    again = corpus.build(root, "o/r", "c", "slime==main", first)
    entry = again["scripts"][0]
    assert entry["script_args"] == ["broadcast", "0"] and entry["job"]["argv"][-3] == "broadcast"


# --- nc and curl: a wait loop for a server is answered ---------------------------------------------------------------

@needs_sandbox
@pytest.mark.parametrize("wait", [
    "until nc -z 10.0.0.1 6379; do sleep 1; done",
    "while ! nc -zv 10.0.0.1 6379 2>/dev/null; do sleep 1; done",
    'until [ "$(nc -z 10.0.0.1 6379 >/dev/null 2>&1; echo $?)" = 0 ]; do sleep 1; done',
    "until curl -sf http://10.0.0.2:30000/health_generate > /dev/null; do sleep 1; done",  # a teacher server
])
def test_wait_for_a_server_ends_and_the_poll_is_recorded(tmp_path, wait):
    script = _write(tmp_path, "run.sh", f"#!/bin/bash\n{wait}\n"
                                        "ray job submit -- python3 train.py --rollout-batch-size 8\n")
    run = sandbox.run(["bash", str(script)], script=str(script), timeout_s=20)
    assert run.returncode == 0 and not run.timed_out, run.stderr_tail
    polled = [argv for cmd, argv in run.calls if cmd in ("nc", "curl")]
    assert polled and ("10.0.0.1" in polled[0] or "http://10.0.0.2:30000/health_generate" in polled[0])
    assert not [c for c in run.substituted if c[0] == "nc"]  # its answer is its status, not missing output


@pytest.mark.parametrize(("name", "args", "status"), [
    ("nc", ["-z", "h", "6379"], True), ("nc", ["-zv", "h", "1"], True), ("nc", ["-vz", "h", "1"], True),
    ("nc", ["h", "6379"], False), ("nc", ["--zero", "h"], False), ("curl", ["-z", "x"], False),
])
def test_nc_zero_io_is_answered_by_its_status(name, args, status):
    assert recorder.answers_by_status(name, args) is status


# --- a poll of Ray's GPUs: a head node waiting for its cluster -------------------------------------------------------

_GPU_POLL = "import ray; ray.init(address='auto'); print(int(ray.cluster_resources().get('GPU', 0)))"
# The shape of Miles' multi-node profile scripts' wait (written here, no upstream text).
WAIT_FOR_CLUSTER = f"""#!/bin/bash
EXPECTED_GPUS=$((4 * 8))
while true; do
  AVAILABLE_GPUS=$(python3 -c "{_GPU_POLL}" 2>/dev/null || echo 0)
  if [ "$AVAILABLE_GPUS" -ge "$EXPECTED_GPUS" ]; then break; fi
  sleep 5
done
ray job submit -- python3 train.py --rollout-batch-size 8
"""


@needs_sandbox
def test_wait_for_the_ray_cluster_ends_and_capture_says_it_was_answered(tmp_path):
    job = capture.capture(_write(tmp_path, "run.sh", WAIT_FOR_CLUSTER))
    assert job.argv == ("python3", "train.py", "--rollout-batch-size", "8")
    shown = shlex.join(["python3", "-c", _GPU_POLL])[:120]  # a call is shown up to 120 characters
    assert f"`{shown}` asks Ray how many GPUs have joined: rlcheck's stand-in answered 65536 (every node up), so the " \
           "script's wait for its cluster went on to the launch" in job.findings
    assert not [f for f in job.findings if "printed nothing there" in f]  # answered: not a missing output


@pytest.mark.parametrize(("name", "args", "answered"), [
    ("python3", ["-c", _GPU_POLL], True),
    ("python", ["-c", 'import ray; print(ray.cluster_resources().get("GPU"))'], True),
    ("python3", ["-c", "import ray; print(ray.cluster_resources())"], False),  # not the GPU count alone
    ("python3", ["-c", "import ray; print(int(ray.cluster_resources().get('CPU', 0)))"], False),
    ("python3", ["poll.py", _GPU_POLL], False),  # a file's arguments, not a program
    ("ray", ["-c", _GPU_POLL], False),
])
def test_only_a_program_printing_rays_gpu_count_is_answered(name, args, answered):
    assert recorder.answers_cluster_poll(name, args) is answered

# --- Miles' launch helpers as Miles 31f1ca96 has them ----------------------------------------------------------------

@dataclasses.dataclass
class _Config:
    extra_env_vars: str = ""


@pytest.mark.parametrize(("text", "expected"), [
    ("", {"A": "1"}),
    ('{"B": "2"}', {"A": "1", "B": "2"}),
    ("B=2  C=3=4", {"A": "1", "B": "2", "C": "3"}),  # space-split items; the value ends at a second '='
    ("A=9", {"A": "9"}),  # the config's text wins over the launcher's own
])
def test_resolve_extra_env_vars_returns_what_miles_returns(text, expected):
    assert miles_stub.resolve_extra_env_vars({"A": "1"}, _Config(text)) == expected


def test_resolve_extra_env_vars_item_without_equals_raises_as_miles_does():
    with pytest.raises(IndexError):
        miles_stub.resolve_extra_env_vars({}, _Config("B"))


def test_encode_pseudo_file_inlines_the_text_as_miles_does():
    assert miles_stub.encode_pseudo_file("a: 1\n") == "base64:YTogMQo="


def test_generation_hardware_is_miles_table():
    assert miles_stub.GENERATION_HARDWARE == {"H100": "Hopper", "GB200": "Blackwell", "GB300": "Blackwell"}
    assert set(miles_stub.GENERATION_HARDWARE) <= set(miles_stub._HARDWARE_GPUS)


def _launch(body: str, header: str = MILES_HEADER) -> str:
    return (f"{header}\n\ndef main():\n" + "".join(f"    {line}\n" for line in body.strip().splitlines())
            + "\n\nmain()\n")


@needs_sandbox
def test_launcher_reading_generation_hardware_and_extra_env_vars_is_captured(tmp_path):
    launcher = _write(tmp_path, "run_gen.py", _launch("""
extra = U.resolve_extra_env_vars({"PYTHONPATH": "/x"}, U.ExecuteTrainConfig(extra_env_vars="K=v"))
flags = "--fp8-recipe blockwise " if U.GENERATION_HARDWARE["GB300"] == "Blackwell" else ""
flags += "--rollout-batch-size " + str(int(extra.get("N", "8")))
U.execute_train(train_args="--train-backend fsdp " + flags, num_gpus_per_node=4, megatron_model_type=None,
                extra_env_vars=extra)
"""))
    job = capture.capture(launcher)
    assert job.argv[-5:] == ("fsdp", "--fp8-recipe", "blockwise", "--rollout-batch-size", "8")
    env = job.env_dict()
    assert env["K"] == "v" and env["PYTHONPATH"].split(":")[:3] == [str(tmp_path), "/root/Megatron-LM", "/x"]
    assert not [f for f in job.findings if "not modelled" in f]
    h200 = _write(tmp_path, "run_h200.py", _launch('print(U.GENERATION_HARDWARE["H200"])'))
    with pytest.raises(capture.CaptureFailed, match="KeyError: 'H200'"):  # not in Miles' table: Miles stops too
        capture.capture(h200)


@needs_sandbox
def test_npu_launcher_is_captured_as_the_npu_image_launches_it(tmp_path):
    header = ("import miles.utils.external_utils.exec_command as U\n"
              "from miles.utils.external_utils.command_utils import execute_train_npu\n")
    launcher = _write(tmp_path, "run_npu.py", _launch("""
U.exec_command_cpu("mkdir -p /root/models")
execute_train_npu(train_args="--train-backend fsdp --rollout-batch-size 8", num_gpus_per_node=4,
                  megatron_model_type=None)
""", header))
    job = capture.capture(launcher)
    assert job.argv[-3:] == ("fsdp", "--rollout-batch-size", "8") and job.gpus_per_node is None
    env = job.env_dict()
    assert env["RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES"] == "1" and "PYTHONPATH" not in env
    assert any("execute_train_npu, which only Miles' NPU image has" in f for f in job.findings)
    assert not [f for f in job.findings if "not modelled" in f]


@needs_sandbox
def test_launcher_arguments_set_its_fields_and_pick_its_command(tmp_path):
    launcher = _write(tmp_path, "run_cli.py", """import dataclasses
import typer
import miles.utils.external_utils.command_utils as U

app = typer.Typer()


@dataclasses.dataclass
class ScriptArgs(U.ExecuteTrainConfig):
    train_backend: str = "fsdp"
    use_ref: bool = True
    batch: int = 8


@app.command()
@U.dataclass_cli
def train(args: ScriptArgs):
    flags = f"--train-backend {args.train_backend} --rollout-batch-size {args.batch}"
    flags += " --use-kl-loss" if args.use_ref else ""
    U.execute_train(train_args=flags, num_gpus_per_node=8, megatron_model_type=None if args.train_backend == "fsdp"
                    else "qwen3-4B")


@app.command()
def prepare():
    print("prepared")


app()
""")
    job = capture.capture(launcher, args=("train", "--batch", "16", "--no-use-ref"))
    assert job.argv[-4:] == ("--train-backend", "fsdp", "--rollout-batch-size", "16")
    assert "--use-kl-loss" not in job.argv
    default = capture.capture(launcher)
    assert default.argv[-3:] == ("--rollout-batch-size", "8", "--use-kl-loss")
    with pytest.raises(capture.CaptureFailed, match="No such option: --batches"):
        capture.capture(launcher, args=("train", "--batches", "16"))
    with pytest.raises(capture.CaptureFailed, match="--batch sixteen: batch is an int"):
        capture.capture(launcher, args=("--batch", "sixteen"))


RUN_PY = """import subprocess
import sys


def main():
    if sys.argv[1] == "prepare":
        subprocess.run("hf download org/model --local-dir /root/models/m", shell=True, check=True)
        return
    subprocess.run("ray job submit --address=http://127.0.0.1:8265 -- python3 train.py --rollout-batch-size "
                   + sys.argv[3], shell=True, check=True)


main()
"""


@needs_sandbox
def test_python_launcher_a_script_calls_runs_for_real_and_its_launch_is_judged(tmp_path):
    """Miles' p2p_weight_transfer shape: a bash script runs `python run.py prepare M` then `python run.py run M ...`;
    the launcher (it builds `ray job submit`) runs under the stub, so its submit is the job, not `run.py prepare M`."""
    _write(tmp_path, "run.py", RUN_PY)
    script = _write(tmp_path, "run.sh", '#!/bin/bash\nset -e\nD="$(cd "$(dirname "$0")" && pwd)"\n'
                                        'python "$D/run.py" prepare M\npython "$D/run.py" run M 16\n')
    job = capture.capture(script)
    assert job.argv == ("python3", "train.py", "--rollout-batch-size", "16")
    assert any("run.py run M 16` ran for real under rlcheck's stub" in f for f in job.findings)
    trainer = _write(tmp_path, "train.py", "print('ray job submit')\n")  # the trainer itself is never run
    assert not recorder.is_launcher("python3", [str(trainer)])
    assert recorder.is_launcher("python", [str(tmp_path / "run.py"), "run"])
    assert not recorder.is_launcher("python", [str(_write(tmp_path, "util.py", "print(1)\n"))])
    assert not recorder.is_launcher("bash", [str(tmp_path / "run.py")])
