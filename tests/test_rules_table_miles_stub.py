"""Rule table for rlcheck's stand-in of Miles' (and SLIME's) launch helpers (rlcheck.job.miles_stub), called directly
in this process: the two commands execute_train runs (the head's `ray start` and the `ray job submit` with its runtime
env), Miles' backend assert, the NPU image's launch, the launcher's options read as typer reads them, each helper's
value, and what an unmodelled helper records. The commands go to a recorder instead of `bash -c`."""

from __future__ import annotations

import base64
import dataclasses
import importlib
import json
import os
import re
import shlex
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest

from rlcheck.job import miles_stub
from rlcheck.job.miles_stub import Unknown
from tests.flushed_stream import FlushedStream

ENV_NAMES = ("MASTER_ADDR", "NCCL_NVLS_ENABLE", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NCCL_DEBUG",
             "NCCL_DEBUG_FILE", "PYTHONPATH", "MILES_SCRIPT_EXTERNAL_RAY", "MILES_SCRIPT_ENABLE_RAY_SUBMIT",
             "RAY_ADDRESS",
             "SLIME_SCRIPT_EXTERNAL_RAY", "SLIME_SCRIPT_ENABLE_RAY_SUBMIT", "WANDB_API_KEY", "SLURM_JOB_NUM_NODES")

CHILD_PATH = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
"""The path a child process imports rlcheck from (a mutation run's mutated copy), read before `stub` drops it."""


@pytest.fixture
def stub(monkeypatch, tmp_path):
    """The stub with a record file, a clean environment and `bash -c` recorded: returns (commands, records())."""
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("RLCHECK_RECORD", str(record))
    monkeypatch.chdir(tmp_path)
    commands: list[str] = []
    monkeypatch.setattr(miles_stub, "_bash", lambda cmd, capture_output=False: commands.append(cmd))
    monkeypatch.setattr(miles_stub, "_LAUNCHER", [])

    def records() -> list[tuple[str, list[str]]]:
        if not record.exists():
            return []
        return [(d["cmd"], d["argv"]) for d in map(json.loads, record.read_text().splitlines())]
    return commands, records


# --- Unknown: a helper the stub does not model -------------------------------------------------------------------

def test_an_unknown_helper_formats_as_nothing_and_records_its_use(stub, tmp_path):
    _, records = stub
    helper = Unknown("miles.x")
    assert records() == []  # naming it is no use
    assert (f"{helper}", str(helper.y), repr(helper("a", k=1)), bool(helper), list(helper), helper.keys()) == \
        ("", "", "", False, [], [])
    assert records() == [("miles-stub", ["miles.x"]), ("miles-stub", ["miles.x.y"]), ("miles-stub", ["miles.x()"]),
                         ("miles-stub", ["miles.x()"]), ("miles-stub", ["miles.x"])]
    cwd = json.loads((tmp_path / "record.jsonl").read_text().splitlines()[0])["cwd"]
    assert cwd == str(tmp_path)
    with pytest.raises(AttributeError, match="^__len__$"):
        helper.__len__  # noqa: B018


# --- the runtime env ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "env"), [
    ('{"A": "1"}', {"A": "1"}),
    ("A=1  B=x=y", {"A": "1", "B": "x"}),  # the value is what lies between the first and second '='
    ("A=", {"A": ""}),
    ("A=1\tB=2", {"A": "1\tB"}),  # split on spaces only, as Miles does
    ("", {}),
    ("   ", {}),
])
def test_extra_env_vars_as_miles_reads_them(text, env):
    assert miles_stub._parse_extra_env_vars(text) == env


def test_an_extra_env_var_without_a_value_stops_as_in_miles():
    with pytest.raises(IndexError):
        miles_stub._parse_extra_env_vars("A=1 B")


@dataclasses.dataclass
class Config:
    extra_env_vars: str = ""
    cuda_core_dump: bool = False
    output_dir: str = "/out"
    num_nodes: int = 2


@pytest.mark.parametrize(("config", "env"), [
    (None, {"A": "1"}), (Config(), {"A": "1"}), (Config(extra_env_vars="A=2 B=3"), {"A": "2", "B": "3"}),
])
def test_the_configs_extra_env_vars_over_the_launchers(config, env):
    assert miles_stub.resolve_extra_env_vars({"A": "1"}, config) == env


COREDUMP = {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION": "1", "CUDA_COREDUMP_SHOW_PROGRESS": "1",
            "CUDA_COREDUMP_GENERATION_FLAGS": "skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,"
                                              "skip_local_memory,skip_constbank_memory",
            "CUDA_COREDUMP_FILE": "/out/cuda_coredump_%h.%p.%t"}


@pytest.mark.parametrize(("config", "env"), [(None, {}), (Config(), {}), (Config(cuda_core_dump=True), COREDUMP)])
def test_core_dumps_when_the_config_asks(config, env):
    assert miles_stub._coredump(config, "/out") == env


def test_the_runtime_env_miles_sets(stub, tmp_path):
    env = miles_stub._runtime_env(None, False, {}, "/root/Megatron-LM")
    assert env == {"PYTHONUNBUFFERED": "1", "CUDA_DEVICE_MAX_CONNECTIONS": "1", "NCCL_NVLS_ENABLE": "0",
                   "no_proxy": "127.0.0.1,127.0.0.1", "MASTER_ADDR": "127.0.0.1",
                   "PYTHONPATH": f"{tmp_path}:/root/Megatron-LM"}
    assert list(env) == ["PYTHONUNBUFFERED", "CUDA_DEVICE_MAX_CONNECTIONS", "NCCL_NVLS_ENABLE", "no_proxy",
                         "MASTER_ADDR", "PYTHONPATH"]


def test_the_runtime_env_from_this_environment_the_config_and_fsdp(stub, tmp_path, monkeypatch):
    for name, value in (("MASTER_ADDR", "10.0.0.1"), ("NCCL_NVLS_ENABLE", "1"), ("NCCL_SOCKET_IFNAME", "eth0"),
                        ("GLOO_SOCKET_IFNAME", "eth1"), ("NCCL_DEBUG", "INFO"), ("NCCL_DEBUG_FILE", "/n"),
                        ("PYTHONPATH", f"/p:{tmp_path}")):
        monkeypatch.setenv(name, value)
    env = miles_stub._runtime_env(Config(extra_env_vars="PYTHONPATH=/e X=1", cuda_core_dump=True), True,
                                  {"Y": "2"}, "/m")
    assert env == {"PYTHONUNBUFFERED": "1", "NCCL_NVLS_ENABLE": "1", "NCCL_SOCKET_IFNAME": "eth0",
                   "GLOO_SOCKET_IFNAME": "eth1", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_FILE": "/n",
                   "no_proxy": "127.0.0.1,10.0.0.1", "MASTER_ADDR": "10.0.0.1", **COREDUMP, "Y": "2", "X": "1",
                   "PYTHONPATH": f"{tmp_path}:/m:/e:/p"}  # the repo, Megatron, the env vars', this one's; once each


def test_an_empty_nvls_setting_is_off(stub, monkeypatch):
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "")
    assert miles_stub._runtime_env(Config(), False, {}, "/m")["NCCL_NVLS_ENABLE"] == "0"


# --- check_backend: Miles' bare assert ----------------------------------------------------------------------------

@pytest.mark.parametrize(("train_args", "model_type", "error"), [
    ("--lr 1e-6", "qwen3-4B", ""),
    ("--train-backend fsdp --lr 1", None, ""),
    ("--lr 1", Unknown("U.t()"), ""),
    ("--train-backend fsdp", Unknown("U.t()"), ""),
    ("--lr 1", None, "lack the text `--train-backend fsdp` and megatron_model_type is None"),
    ("--train-backend=fsdp", None, "lack the text `--train-backend fsdp` and megatron_model_type is None"),
    ("--train-backend fsdp", "qwen3-4B", "hold the text `--train-backend fsdp` and megatron_model_type is 'qwen3-4B'"),
])
def test_the_backend_assert(train_args, model_type, error):
    if not error:
        assert miles_stub.check_backend(train_args, model_type) is None
        return
    with pytest.raises(AssertionError) as exc:
        miles_stub.check_backend(train_args, model_type)
    assert str(exc.value) == (f"Miles' execute_train stops on its bare assert: train_args {error}; it wants that text "
                              "exactly when megatron_model_type is None")


# --- execute_train, slime's and the NPU image's -------------------------------------------------------------------

def _submit_env(command: str) -> dict[str, str]:
    token = next(t for t in shlex.split(command) if t.startswith("--runtime-env-json="))
    return json.loads(token.removeprefix("--runtime-env-json="))["env_vars"]


def test_execute_train_starts_the_head_and_submits(stub, tmp_path):
    commands, records = stub
    called = []
    miles_stub.execute_train("--lr 1e-6", 8, "m", train_script="t.py",
                             before_ray_job_submit=lambda: called.append(len(commands)),
                             extra_env_vars={"A": "1"}, config=Config(), megatron_path="/meg")
    assert called == [1]  # between the head and the submit
    assert commands[0] == "ray start --head --node-ip-address 127.0.0.1 --num-gpus 8 --disable-usage-stats"
    env = {"PYTHONUNBUFFERED": "1", "CUDA_DEVICE_MAX_CONNECTIONS": "1", "NCCL_NVLS_ENABLE": "0",
           "no_proxy": "127.0.0.1,127.0.0.1", "MASTER_ADDR": "127.0.0.1", "A": "1",
           "PYTHONPATH": f"{tmp_path}:/meg"}
    assert commands[1] == (f"ray job submit --address=\"http://127.0.0.1:8265\" --runtime-env-json="
                           f"{shlex.quote(json.dumps({'env_vars': env}))} -- python3 t.py  --lr 1e-6")
    # no launcher known (called directly): the model args are not seen, and the capture says so
    assert records() == [("miles-nodes", ["2"]), ("miles-note", ["not seen: the model args: megatron_model_type came "
                                                                 "from a helper the stub does not model"])]


def test_execute_train_refuses_a_backend_against_the_model_type_before_launching(stub):
    commands, records = stub
    with pytest.raises(AssertionError):
        miles_stub.execute_train("--lr 1", 8, None)
    assert (commands, records()) == ([], [])


def test_execute_train_defaults(stub, tmp_path):
    commands, records = stub
    miles_stub.execute_train("--train-backend fsdp", 4, None)
    assert commands[0] == "ray start --head --node-ip-address 127.0.0.1 --num-gpus 4 --disable-usage-stats"
    assert commands[1].endswith(" -- python3 train.py  --train-backend fsdp")
    env = _submit_env(commands[1])
    assert "CUDA_DEVICE_MAX_CONNECTIONS" not in env and env["PYTHONPATH"] == f"{tmp_path}:/root/Megatron-LM"
    assert records() == [("miles-nodes", ["1"])]  # no config: one node


@pytest.mark.parametrize(("environ", "head", "submit", "address"), [
    ({"MILES_SCRIPT_EXTERNAL_RAY": "1"}, False, True, True),
    ({"MILES_SCRIPT_EXTERNAL_RAY": " TRUE "}, False, True, True),
    ({"MILES_SCRIPT_EXTERNAL_RAY": "no"}, True, True, True),
    ({"MILES_SCRIPT_ENABLE_RAY_SUBMIT": "0"}, True, False, True),
    ({"MILES_SCRIPT_ENABLE_RAY_SUBMIT": "on"}, True, True, True),
    ({"RAY_ADDRESS": "http://h:8265"}, True, True, False),
    ({"MASTER_ADDR": "10.1.1.1"}, True, True, True),
])
def test_execute_train_switches(stub, monkeypatch, environ, head, submit, address):
    commands, _ = stub
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    miles_stub.execute_train("--train-backend fsdp", 8, None)
    master = environ.get("MASTER_ADDR", "127.0.0.1")
    assert [c.split(" --")[0] for c in commands] == [*(["ray start"] if head else []),
                                                     *(["ray job submit"] if submit else [])]
    if head:
        assert commands[0] == f"ray start --head --node-ip-address {master} --num-gpus 8 --disable-usage-stats"
    if submit:
        assert commands[-1].startswith("ray job submit --address=\"http://127.0.0.1:8265\" --runtime-env-json="
                                       if address else "ray job submit --runtime-env-json=")
        assert _submit_env(commands[-1])["no_proxy"] == f"127.0.0.1,{master}"


def test_slimes_execute_train_has_no_backend_check(stub, tmp_path):
    commands, records = stub
    miles_stub.slime_execute_train("--lr 1", 2, None, config=Config(num_nodes=3))
    assert commands[0] == "ray start --head --node-ip-address 127.0.0.1 --num-gpus 2 --disable-usage-stats"
    assert commands[1].endswith("-- python3 train.py  --lr 1")
    assert _submit_env(commands[1])["PYTHONPATH"] == f"{tmp_path}:/root/Megatron-LM"
    assert records() == [("miles-nodes", ["3"])]
    assert miles_stub._MODULES[miles_stub._CMDS[1]]["execute_train"] is miles_stub.slime_execute_train
    assert miles_stub._MODULES[miles_stub._CMD]["execute_train"] is miles_stub.execute_train


NPU_NOTE = ("the launcher calls execute_train_npu, which only Miles' NPU image has (docker/npu_patch/miles.patch; a "
            "plain Miles install stops with ImportError): captured as that image launches it")


def test_the_npu_launch(stub, monkeypatch):
    commands, records = stub
    monkeypatch.setenv("MASTER_ADDR", "10.0.0.2")
    called = []
    miles_stub.execute_train_npu("--train-backend fsdp", 8, None, train_script="t.py",
                                 before_ray_job_submit=lambda: called.append(len(commands)), extra_env_vars={"A": "1"},
                                 config=Config(extra_env_vars="B=2", cuda_core_dump=True))
    assert called == [1]
    assert commands[0] == "ray start --head --node-ip-address 10.0.0.2 --disable-usage-stats"
    env = {"CUDA_DEVICE_MAX_CONNECTIONS": "1", **miles_stub._NPU_ENV, "NCCL_NVLS_ENABLE": "0",
           "no_proxy": "127.0.0.1,10.0.0.2", "MASTER_ADDR": "10.0.0.2",
           **{**COREDUMP, "CUDA_COREDUMP_FILE": "/root/shared_data/cuda_coredump_%h.%p.%t"}, "A": "1", "B": "2"}
    assert commands[1] == (f"ray job submit --address=\"http://127.0.0.1:8265\" --runtime-env-json="
                           f"{shlex.quote(json.dumps({'env_vars': env}))} -- python3 t.py  --train-backend fsdp")
    assert records() == [("miles-note", [NPU_NOTE]), ("miles-nodes", ["2"])]


@pytest.mark.parametrize(("environ", "head", "submit"), [
    ({}, True, True), ({"SLIME_SCRIPT_EXTERNAL_RAY": "yes"}, False, True),
    ({"SLIME_SCRIPT_ENABLE_RAY_SUBMIT": "false"}, True, False), ({"MILES_SCRIPT_EXTERNAL_RAY": "1"}, True, True),
])
def test_the_npu_launchs_switches(stub, monkeypatch, environ, head, submit):
    commands, records = stub
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    miles_stub.execute_train_npu("--train-backend fsdp", 8, None)
    assert [c.split(" --")[0] for c in commands] == [*(["ray start"] if head else []),
                                                     *(["ray job submit"] if submit else [])]
    if submit:
        assert commands[-1].endswith("-- python3 train.py  --train-backend fsdp")
        assert _submit_env(commands[-1])["MASTER_ADDR"] == "127.0.0.1"
    assert records() == [("miles-note", [NPU_NOTE]), ("miles-nodes", ["1"])]


def test_the_npu_launch_keeps_the_backend_check(stub):
    commands, records = stub
    with pytest.raises(AssertionError):
        miles_stub.execute_train_npu("--lr 1", 8, None)
    assert commands == [] and records() == [("miles-note", [NPU_NOTE])]


@pytest.mark.parametrize(("raw", "default", "value"), [
    (None, "false", False), (None, "1", True), ("1", "false", True), ("TRUE", "false", True), (" yes ", "0", True),
    ("on", "0", True), ("0", "1", False), ("off", "1", False), ("", "1", False),
])
def test_bool_env(monkeypatch, raw, default, value):
    monkeypatch.delenv("RLCHECK_FLAG", raising=False)
    if raw is not None:
        monkeypatch.setenv("RLCHECK_FLAG", raw)
    assert miles_stub._bool_env("RLCHECK_FLAG", default) is value


# --- the model args ---------------------------------------------------------------------------------------------------

@pytest.fixture
def model_tree(stub, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, miles_stub._CMD, miles_stub._MilesModule(miles_stub._CMD))
    yield tmp_path
    sys.modules.pop("model_args_utils", None)


def _model(where: Path, name: str, args: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    (where / f"{name}.py").write_text("import model_args_utils\n"
                                      f"def model_args():\n    return model_args_utils.moe_layer_freq(nlayers=2, "
                                      f"first_k_dense_replace=1) + ' ' + {args!r}\n")


def test_the_model_args_of_the_miles_tree_the_launcher_lives_in(model_tree, stub):
    _, records = stub
    (model_tree / "miles").mkdir()
    (model_tree / "miles" / "__init__.py").write_text("")
    _model(model_tree / "scripts" / "models", "qwen3-4B", "--num-layers 36  --x 'a b'")
    _model(model_tree / "examples" / "models", "qwen3-4B", "--beside")
    miles_stub._LAUNCHER.append(model_tree / "examples" / "run.py")
    assert miles_stub._model_file("qwen3-4B") == model_tree / "scripts" / "models" / "qwen3-4B.py"
    assert miles_stub._model_args("qwen3-4B") == " ".join(shlex.quote(t) for t in ("[0,1]", "--num-layers", "36",
                                                                                  "--x", "'a", "b'"))
    assert records() == []


def test_the_model_args_beside_a_launcher_outside_a_miles_tree(model_tree):
    _model(model_tree / "models", "glm.5", "--glm")
    miles_stub._LAUNCHER.append(model_tree / "run.py")
    assert miles_stub._model_file("glm.5") == model_tree / "models" / "glm.5.py"
    assert miles_stub._model_args("glm.5") == "'[0,1]' --glm"


def _variant(where: Path, name: str, base: str, **kwargs: object) -> None:
    """A model file derived from another, as Miles writes its smaller variants."""
    where.mkdir(parents=True, exist_ok=True)
    (where / f"{name}.py").write_text("from model_args_utils import load_sibling_model_args\n"
                                      f"def model_args():\n    return load_sibling_model_args(__file__, {base!r}, "
                                      f"**{kwargs!r})\n")


def _sized(where: Path, name: str) -> None:
    """A model file whose args take the variant's layer count, as Miles' base model files do."""
    where.mkdir(parents=True, exist_ok=True)
    (where / f"{name}.py").write_text("def model_args(nlayers=61):\n    return f'--num-layers {nlayers}\\n --x'\n")


def test_a_variant_reads_its_siblings_args_for_real(model_tree, stub):
    """Miles' load_sibling_model_args: the base file beside the variant, asked with the variant's keywords, one line."""
    _, records = stub
    _sized(model_tree / "models", "deepseek-v3")
    _variant(model_tree / "models", "deepseek-v3-5layer", "deepseek-v3", nlayers=5)
    miles_stub._LAUNCHER.append(model_tree / "run.py")
    assert miles_stub._model_args("deepseek-v3-5layer") == "--num-layers 5 --x"
    assert miles_stub._model_args("deepseek-v3") == "--num-layers 61 --x"
    assert records() == []


def test_load_model_args_as_miles_own(model_tree):
    _sized(model_tree / "elsewhere", "m")
    miles_stub._LAUNCHER.append(model_tree / "run.py")
    assert miles_stub.load_model_args("m", model_tree / "elsewhere", nlayers=2) == "--num-layers 2 --x"
    assert miles_stub.load_model_args("m", str(model_tree / "elsewhere")) == "--num-layers 61 --x"
    _sized(model_tree / "models", "m")
    assert miles_stub.load_model_args("m") == "--num-layers 61 --x"  # no folder: the tree's model files
    assert miles_stub.load_sibling_model_args(str(model_tree / "elsewhere" / "v.py"), "m", nlayers=3) == \
        "--num-layers 3 --x"
    with pytest.raises(AssertionError, match=f"^no model args script at {model_tree / 'elsewhere' / 'gone.py'}$"):
        miles_stub.load_model_args("gone", model_tree / "elsewhere")
    (model_tree / "elsewhere" / "empty.py").write_text("def model_args():\n    return ' \\n '\n")
    with pytest.raises(AssertionError, match=f"^{model_tree / 'elsewhere' / 'empty.py'} declared no model args$"):
        miles_stub.load_model_args("empty", model_tree / "elsewhere")


def test_a_variant_reads_the_base_beside_itself_not_the_trees(model_tree):
    """load_sibling_model_args reads the base from the variant's own folder, also when the tree has one of that name
    (a checkout's variant next to an installed Miles' models), and names that folder's file when it is not there."""
    miles_stub._LAUNCHER.append(model_tree / "run.py")
    _sized(model_tree / "models", "deepseek-v3")  # the tree's
    beside = model_tree / "ckpt" / "models"
    beside.mkdir(parents=True)
    (beside / "deepseek-v3.py").write_text("def model_args(nlayers=61):\n"
                                           "    return f'--num-layers {nlayers} --mine'\n")
    variant = str(beside / "deepseek-v3-5layer.py")
    assert miles_stub.load_sibling_model_args(variant, "deepseek-v3", nlayers=5) == "--num-layers 5 --mine"
    assert miles_stub.load_model_args("deepseek-v3", nlayers=5) == "--num-layers 5 --x"  # the tree's, asked alone
    with pytest.raises(AssertionError, match=f"^no model args script at {re.escape(str(beside / 'qwen3-4B.py'))}$"):
        miles_stub.load_sibling_model_args(variant, "qwen3-4B")


def test_a_model_type_with_a_folder_is_read_under_the_trees_model_files(model_tree):
    """Miles' load_model_args joins the model type to scripts/models as given: a type with a folder part
    (`moe/deepseek-v3`) is that folder's file, not the folder's folder's."""
    (model_tree / "miles").mkdir()
    (model_tree / "miles" / "__init__.py").write_text("")
    miles_stub._LAUNCHER.append(model_tree / "scripts" / "run.py")
    _sized(model_tree / "scripts" / "models" / "moe", "deepseek-v3")
    assert miles_stub.load_model_args("moe/deepseek-v3", nlayers=4) == "--num-layers 4 --x"
    gone = model_tree / "scripts" / "models" / "moe" / "glm.py"
    with pytest.raises(AssertionError, match=f"^no model args script at {re.escape(str(gone))}$"):
        miles_stub.load_model_args("moe/glm")


def test_a_model_file_reaches_miles_helpers_when_the_launcher_imported_none(stub, tmp_path, monkeypatch):
    """A model file read before the launcher imported command_utils (a launcher calling load_model_args from
    model_args_utils) still has Miles' helpers under model_args_utils: its known ones run, its other names are
    recorded under Miles' command_utils."""
    _, records = stub
    for name in (*miles_stub._CMDS, "model_args_utils"):  # absent here, and as they were after the test
        monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.delitem(sys.modules, name)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.py").write_text(
        "import model_args_utils\nfrom model_args_utils import moe_layer_freq\n"
        "def model_args():\n    return (f'--moe-layer-freq {moe_layer_freq(nlayers=3, first_k_dense_replace=1)} '\n"
        "            f'{model_args_utils.rope_args()}')\n")
    miles_stub._LAUNCHER.append(tmp_path / "run.py")
    assert miles_stub.load_model_args("m") == "--moe-layer-freq [0,1,1]"
    assert {(cmd, *argv) for cmd, argv in records()} == {("miles-stub", f"{miles_stub._CMD}.rope_args()")}
    assert sys.modules["model_args_utils"].__name__ == miles_stub._CMD


def test_a_model_file_reaches_the_command_utils_the_launcher_imported(stub, tmp_path, monkeypatch):
    _, records = stub
    slime = miles_stub._MilesModule(miles_stub._CMDS[1])
    monkeypatch.delitem(sys.modules, miles_stub._CMD, raising=False)
    monkeypatch.setitem(sys.modules, miles_stub._CMDS[1], slime)
    monkeypatch.setitem(sys.modules, "model_args_utils", None)
    monkeypatch.delitem(sys.modules, "model_args_utils")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.py").write_text("import model_args_utils\n"
                                              "def model_args():\n    return f'--x {model_args_utils.rope_args()}'\n")
    miles_stub._LAUNCHER.append(tmp_path / "run.py")
    assert miles_stub.load_model_args("m") == "--x"
    assert sys.modules["model_args_utils"] is slime
    assert {(cmd, *argv) for cmd, argv in records()} == {("miles-stub", f"{miles_stub._CMDS[1]}.rope_args()")}


@pytest.mark.parametrize("module", [miles_stub._CMD, "miles.utils.external_utils.model_args_utils"])
def test_the_model_helpers_are_known_names(module):
    helpers = miles_stub._MODULES[module]
    assert (helpers["load_model_args"], helpers["load_sibling_model_args"], helpers["moe_layer_freq"]) == (
        miles_stub.load_model_args, miles_stub.load_sibling_model_args, miles_stub.moe_layer_freq)


def test_no_model_args(stub, model_tree):
    _, records = stub
    assert miles_stub._model_args(None) == ""
    assert records() == []
    assert miles_stub._model_args("m") == ""  # no launcher known
    miles_stub._LAUNCHER.append(model_tree / "run.py")
    assert miles_stub._model_args(Unknown("U.t()")) == ""
    assert miles_stub._model_args("gone") == ""
    note = "not seen: the model args: megatron_model_type came from a helper the stub does not model"
    assert records() == [("miles-note", [note]), ("miles-note", [note]),
                         ("miles-note", [f"not seen: the model args: no {model_tree / 'models' / 'gone.py'} (Miles' "
                                         "scripts/models/<megatron_model_type>.py)"])]


# --- the launcher's options -------------------------------------------------------------------------------------------

@dataclasses.dataclass
class ScriptArgs(miles_stub.ExecuteTrainConfig):
    model_name: str = "qwen3-4B"
    tp: int = 1
    lr: float = 1e-6
    colocate: bool = True
    mode: typing.Literal["normal", "debug", 3] = "normal"
    offload: typing.Optional[int] = None  # noqa: UP045 (the spelling some launchers use)
    no_shuffle: bool = False


@pytest.mark.parametrize(("argv", "values"), [
    ([], {}),
    (["--tp", "2", "--lr=0.5", "--model-name", "x"], {"tp": 2, "lr": 0.5, "model_name": "x"}),
    (["--no-colocate"], {"colocate": False}),
    (["--colocate"], {"colocate": True}),
    (["--mode", "3"], {"mode": 3}),
    (["--offload", "4", "--cuda-core-dump"], {"offload": 4, "cuda_core_dump": True}),
    (["--colocate", "--tp", "2"], {"colocate": True, "tp": 2}),  # a flag takes no value
    (["--no-shuffle"], {"no_shuffle": True}),  # a field whose own name starts with no-
])
def test_the_launchers_options_as_typer_reads_them(argv, values):
    assert miles_stub.cli_values(ScriptArgs, typing.get_type_hints(ScriptArgs), argv) == values


OPTIONS = ("--cuda-core-dump, --num-nodes, --extra-env-vars, --output-dir, --model-name, --tp, --lr, --colocate, "
           "--mode, --offload, --no-shuffle")


@pytest.mark.parametrize(("argv", "error"), [
    (["--pp", "2"], f"Error: No such option: --pp (the launcher's options: {OPTIONS})"),
    (["-t"], f"Error: No such option: -t (the launcher's options: {OPTIONS})"),
    (["-ttp", "2"], f"Error: No such option: -ttp (the launcher's options: {OPTIONS})"),
    (["qwen"], f"Error: Got unexpected extra argument (qwen) (the launcher's options: {OPTIONS})"),
    (["--tp"], "Error: Option '--tp' requires an argument."),
    (["--lr", "1", "--tp"], "Error: Option '--tp' requires an argument."),
])
def test_an_option_the_launcher_lacks_stops_as_click_does(argv, error):
    with pytest.raises(SystemExit) as exc:
        miles_stub.cli_values(ScriptArgs, typing.get_type_hints(ScriptArgs), argv)
    assert str(exc.value) == error


def test_a_bad_option_value_names_it():
    with pytest.raises(ValueError, match=r"^--tp two: tp is an int$"):
        miles_stub.cli_values(ScriptArgs, typing.get_type_hints(ScriptArgs), ["--tp", "two"])
    with pytest.raises(ValueError) as exc:  # the command line's value is named as `--flag VALUE` either way
        miles_stub.cli_values(ScriptArgs, typing.get_type_hints(ScriptArgs), ["--tp=x"])
    assert str(exc.value) == "--tp x: tp is an int"


@pytest.mark.parametrize(("kind", "raw", "value"), [
    (int, "3", 3), ("int", "3", 3), (float, "0.5", 0.5), ("float", "2", 2.0), (bool, "Yes", True), ("bool", "0", False),
    (bool, "no", False), (bool, "1", True), (str, "x", "x"), ("str", "x", "x"), (typing.Optional[int], "4", 4),  # noqa: UP045
    (int | None, "5", 5), (typing.List, "x", "x"),  # noqa: UP006 (a bare generic: no argument to take)
    (typing.Literal["a", 1], "1", 1), (typing.Literal["a", 1], "a", "a"), ("list", "x", "x"),
])
def test_a_fields_value_as_its_type(kind, raw, value):
    got = miles_stub.field_value("n", kind, raw)
    assert (got, type(got)) == (value, type(value))


@pytest.mark.parametrize(("kind", "raw", "given", "error"), [
    (int, "x", "", "MILES_SCRIPT_N='x': n is an int"),
    (float, "x", "", "MILES_SCRIPT_N='x': n is a float"),
    (bool, "maybe", "", "MILES_SCRIPT_N='maybe': n is a bool: true/false, 1/0 or yes/no"),
    (typing.Literal["a", 1], "b", "", "MILES_SCRIPT_N='b': n is one of a, 1"),
    (int, "x", "--n x", "--n x: n is an int"),
])
def test_a_bad_fields_value_names_where_and_what_is_allowed(kind, raw, given, error):
    if not given:
        with pytest.raises(ValueError, match=f"^{re.escape(error)}$"):
            miles_stub.field_value("n", kind, raw)
    with pytest.raises(ValueError) as exc:
        miles_stub.field_value("n", kind, raw, given)
    assert str(exc.value) == error
    assert exc.value.__cause__ is None


def test_dataclass_cli_runs_main_with_the_defaults_the_environment_and_the_command_line(monkeypatch, stub):
    monkeypatch.setenv("MILES_SCRIPT_TP", "4")
    monkeypatch.setenv("MILES_SCRIPT_LR", "0.25")
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "3")
    monkeypatch.setattr(sys, "argv", ["run.py", "--lr", "0.5", "--no-colocate"])
    seen = []

    @miles_stub.dataclass_cli
    def train(args: ScriptArgs) -> str:
        seen.append(args)
        return "ran"
    assert train.__name__ == train.__qualname__ == "train"
    assert train() == "ran"
    assert seen == [ScriptArgs(tp=4, lr=0.5, colocate=False, num_nodes=3)]
    assert sys.argv == ["run.py"]


def test_dataclass_cli_with_arguments_and_a_string_annotation(monkeypatch, stub):
    monkeypatch.setattr(sys, "argv", ["run.py"])
    seen = []

    def train(args: ScriptArgs) -> None:
        seen.append(args)
    train.__annotations__ = {"args": "ScriptArgs"}
    miles_stub.dataclass_cli(help="x")(train)()
    assert seen == [ScriptArgs()]


def test_dataclass_cli_reads_the_environment_by_the_fields_own_types_when_hints_do_not_resolve(monkeypatch, stub):
    @dataclasses.dataclass
    class Args:
        tp: int = 1
        other: NoSuchType = None  # type: ignore[name-defined]  # noqa: F821
    monkeypatch.setenv("MILES_SCRIPT_TP", "2")
    monkeypatch.setattr(sys, "argv", ["run.py"])
    seen = []

    def train(args: Args) -> None:
        seen.append(args)
    train.__annotations__ = {"args": Args}
    miles_stub.dataclass_cli(train)()
    assert seen == [Args(tp=2)] and type(seen[0].tp) is int


def test_hints_of_an_annotation_that_does_not_resolve_are_none():
    @dataclasses.dataclass
    class Args:
        tp: NoSuchType = 1  # type: ignore[name-defined]  # noqa: F821
    assert miles_stub._hints(Args) == {}
    assert miles_stub._hints(ScriptArgs)["tp"] is int


# --- the other helpers ------------------------------------------------------------------------------------------------

def test_wandb_args_inline_the_key_when_it_is_set(monkeypatch, stub):
    assert miles_stub._wandb_args("tests/test_qwen.py") == ""
    monkeypatch.setenv("WANDB_API_KEY", "k123")
    assert miles_stub._wandb_args("tests/test_qwen.py", "pre", "id1") == (
        "--use-wandb --wandb-project miles-test_qwen --wandb-group pre_id1 --wandb-key 'k123' "
        "--disable-wandb-random-suffix ")
    monkeypatch.setattr(miles_stub, "create_run_id", lambda: "RID")
    assert miles_stub._wandb_args("t.py").split("--wandb-group ")[1].startswith("RID --wandb-key")


@pytest.mark.parametrize(("nlayers", "dense", "freq"), [
    (4, 1, "[0,1,1,1]"), (3, 0, "[1,1,1]"), (2, 5, "[0,0]"), (2, -1, "[1,1]"), (0, 0, "[]"), (3, 3, "[0,0,0]"),
])
def test_moe_layer_freq(nlayers, dense, freq):
    assert miles_stub.moe_layer_freq(nlayers=nlayers, first_k_dense_replace=dense) == freq


def test_encode_pseudo_file_and_run_id():
    assert miles_stub.encode_pseudo_file("a: é\n") == "base64:" + base64.b64encode("a: é\n".encode()).decode()
    assert re.fullmatch(r"\d{6}-\d{6}", miles_stub.create_run_id())
    assert miles_stub._noop(1, k=2) is None


def test_the_tables_miles_has():
    assert miles_stub.GENERATION_HARDWARE == {"H100": "Hopper", "GB200": "Blackwell", "GB300": "Blackwell"}
    assert miles_stub._HARDWARE_GPUS == {"H100": 8, "H200": 8, "B200": 8, "B300": 8, "GB200": 4, "GB300": 4,
                                         "MI350X": 8, "MI355X": 8}
    assert dataclasses.asdict(miles_stub.ExecuteTrainConfig()) == {
        "cuda_core_dump": False, "num_nodes": 1, "extra_env_vars": "", "output_dir": "/root/shared_data"}


@pytest.mark.parametrize(("module", "name", "value"), [
    (miles_stub._CMD, "execute_train", miles_stub.execute_train),
    (miles_stub._CMD, "get_bool_env_var", miles_stub._bool_env),
    (miles_stub._CMD, "exec_command_multi_node", miles_stub._noop),
    (miles_stub._CMD, "convert_checkpoint", miles_stub._noop),
    ("miles.utils.external_utils.exec_command", "exec_command_gpu", miles_stub._MODULES[
        "miles.utils.external_utils.exec_command"]["exec_command_gpu"]),
])
def test_a_modelled_name_is_the_stubs(module, name, value):
    assert getattr(miles_stub._MilesModule(module), name) is value


def test_any_other_name_is_unknown():
    got = miles_stub._MilesModule("miles.utils.misc").helper
    assert isinstance(got, Unknown) and got._name == "miles.utils.misc.helper"
    assert isinstance(miles_stub._MilesModule("miles.utils.external_utils.exec_command").execute_train, Unknown)
    with pytest.raises(AttributeError, match="^__file__$"):
        miles_stub._MilesModule("miles").__file__  # noqa: B018


def test_typer_run_and_options():
    typer = miles_stub._Typer()
    assert typer.__name__ == "typer"
    assert typer.run(lambda: 7) == 7
    assert (typer.Option(3, help="x"), typer.Argument(), typer.Typer) == (3, None, miles_stub._App)


def test_a_typer_app_runs_train_the_named_command_or_the_last(monkeypatch, stub):
    _, records = stub
    monkeypatch.setattr(sys, "argv", ["run.py"])
    app = miles_stub._App("x", k=1)
    assert app() is None
    assert app.command("train")(str) is str
    assert app() == "" and records() == []  # str(): the only command
    app.command()(lambda: "prep")
    app.commands["prep-data"] = app.commands.pop("<lambda>")
    assert app.callback(x=1)(str) is str
    assert app() == ""  # train, though registered first
    assert records() == [("miles-note", ["the launcher's typer commands are train, prep-data: judged 'train'"])]
    app.commands = {"a": lambda: "a", "b": lambda: "b", "c": lambda: "c"}
    assert app() == "c"
    monkeypatch.setattr(sys, "argv", ["run.py", "a", "--x"])
    assert app() == "a" and sys.argv == ["run.py", "--x"]
    monkeypatch.setattr(sys, "argv", ["run.py", "a"])
    assert app() == "a" and sys.argv == ["run.py"]

    def fine_tune() -> str:
        return "ft"
    app.command()(fine_tune)
    assert app.commands["fine-tune"] is fine_tune


def test_the_finder_makes_miles_slime_and_typer(monkeypatch):
    finder = miles_stub._Finder()
    for name, package in (("typer", False), ("miles", True), ("slime", True), ("slime.utils", True)):
        spec = finder.find_spec(name)
        assert (spec.name, spec.loader, spec.submodule_search_locations is not None) == (name, finder, package)
        module = finder.create_module(spec)
        finder.exec_module(module)
        assert isinstance(module, miles_stub._Typer if name == "typer" else miles_stub._MilesModule)
        assert getattr(module, "__path__", None) == (None if name == "typer" else [])
    assert finder.find_spec("milestone") is None and finder.find_spec("numpy") is None


def test_main_runs_the_launcher_with_its_arguments(monkeypatch, stub, tmp_path):
    commands, _ = stub
    launcher = tmp_path / "run.py"
    launcher.write_text("import sys\nfrom miles.utils.external_utils.command_utils import execute_train\n"
                        "if __name__ == '__main__':\n"
                        "    execute_train('--train-backend fsdp ' + ' '.join(sys.argv[1:]), 8, None)\n")
    monkeypatch.setattr(sys, "argv", ["miles_stub.py", str(launcher), "--x", "1"])
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in [n for n in sys.modules if n == "miles" or n.startswith("miles.")]:
        monkeypatch.delitem(sys.modules, name)
    try:
        assert miles_stub.main() == 0
    finally:
        for name in [n for n in sys.modules if n in ("miles", "typer") or n.startswith("miles.")]:
            sys.modules.pop(name)
    assert miles_stub._LAUNCHER == [launcher.resolve()]
    assert sys.path[0] == str(tmp_path) and isinstance(sys.meta_path[0], miles_stub._Finder)
    assert commands[1].endswith("-- python3 train.py  --train-backend fsdp --x 1")
    assert sys.argv == [str(launcher.resolve()), "--x", "1"]


def test_the_launchers_options_by_the_fields_own_types_when_hints_do_not_resolve():
    assert miles_stub.cli_values(ScriptArgs, {}, ["--tp", "2", "--colocate"]) == {"tp": 2, "colocate": True}


def test_dataclass_cli_reads_a_literal_from_the_environment_and_a_class_annotation(monkeypatch, stub):
    monkeypatch.setenv("MILES_SCRIPT_MODE", "3")
    monkeypatch.setattr(sys, "argv", ["run.py"])
    seen = []

    def train(args: ScriptArgs) -> None:
        seen.append(args)
    train.__annotations__ = {"args": ScriptArgs}
    miles_stub.dataclass_cli(train)()
    assert seen == [ScriptArgs(mode=3)]


def test_bash_runs_the_command_and_says_so_first(monkeypatch, capfd):
    stream = FlushedStream()
    monkeypatch.setattr(sys, "stderr", stream)
    assert miles_stub._bash("echo hi") is None
    assert (stream.flushed, stream.pending) == ("EXEC: echo hi\n", "")  # out before bash's own output
    assert capfd.readouterr().out == "hi\n"
    assert miles_stub._bash("echo out; echo err >&2; exit 3", capture_output=True) == "out\n"


@pytest.mark.parametrize(("model_type", "module"), [
    ("glm.5", "rlcheck_model_glm_5"), ("deepseek-v3-5layer", "rlcheck_model_deepseek_v3_5layer"),
    ("qwen2.5-VL-7B", "rlcheck_model_qwen2_5_VL_7B"), ("qwen3_4B", "rlcheck_model_qwen3_4B"),
])
def test_a_python_launchers_model_file_is_loaded_under_its_own_module_name(model_tree, model_type, module):
    """As Miles names it (its prefix aside): each '.' and '-' of the file's name an underscore."""
    (model_tree / "models").mkdir()
    (model_tree / "models" / f"{model_type}.py").write_text("def model_args():\n    return __name__\n")
    miles_stub._LAUNCHER.append(model_tree / "run.py")
    assert miles_stub._model_args(model_type) == module


def test_slimes_execute_train_passes_everything_on(stub, tmp_path):
    commands, records = stub
    called = []
    miles_stub.slime_execute_train("--lr 1", 2, "m", before_ray_job_submit=lambda: called.append(1),
                                   extra_env_vars={"A": "1"})
    assert called == [1] and _submit_env(commands[1])["A"] == "1"
    assert records()[1] == ("miles-note", ["not seen: the model args: megatron_model_type came from a helper the "
                                           "stub does not model"])


def test_execute_train_reads_the_config(stub):
    commands, _ = stub
    miles_stub.execute_train("--train-backend fsdp", 8, None, config=Config(extra_env_vars="B=2", cuda_core_dump=True))
    env = _submit_env(commands[1])
    assert (env["B"], env["CUDA_COREDUMP_FILE"]) == ("2", "/out/cuda_coredump_%h.%p.%t")


def test_a_config_without_an_output_dir_dumps_under_miles_shared_data(stub):
    env = miles_stub._runtime_env(types.SimpleNamespace(cuda_core_dump=True), False, {}, "/m")
    assert env["CUDA_COREDUMP_FILE"] == "/root/shared_data/cuda_coredump_%h.%p.%t"


def test_the_npu_launch_of_a_megatron_model(stub):
    commands, records = stub
    miles_stub.execute_train_npu("--lr 1", 8, "m")
    assert commands[1].endswith("-- python3 train.py  --lr 1")
    assert records()[2] == ("miles-note", ["not seen: the model args: megatron_model_type came from a helper the "
                                           "stub does not model"])


# --- the framework's pure packages run for real ----------------------------------------------------------------------

@pytest.fixture
def pure_tree(stub, tmp_path, monkeypatch):
    """A Miles tree with a launcher in it and the stub's finder first on the path; the package's modules unloaded
    after."""
    (tmp_path / "miles" / "true_on_policy").mkdir(parents=True)
    (tmp_path / "miles" / "__init__.py").write_text("")
    miles_stub._LAUNCHER.append(tmp_path / "scripts" / "run.py")
    monkeypatch.setattr(miles_stub, "_PURE_SEEN", {})
    finder = miles_stub._Finder()
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    yield tmp_path / "miles" / "true_on_policy"
    for name in [n for n in sys.modules if n == "miles" or n.startswith("miles.")]:
        del sys.modules[name]


def test_a_pure_package_runs_for_real_from_the_launchers_tree(pure_tree, stub):
    _, records = stub
    (pure_tree / "__init__.py").write_text("from .profiles import model_type\n")
    (pure_tree / "profiles.py").write_text("from __future__ import annotations\nimport dataclasses\nimport os\n"
                                           "def model_type(name):\n    return name.lower() + '-dense'\n")
    from miles.true_on_policy import model_type  # type: ignore[import-not-found]
    assert model_type("Qwen3-4B") == "qwen3-4b-dense"
    assert sys.modules["miles.true_on_policy.profiles"].__file__ == str(pure_tree / "profiles.py")
    assert records() == [] and miles_stub._PURE_SEEN == {"miles.true_on_policy": ""}


@pytest.mark.parametrize("line", ["import subprocess", "from torch import nn", "import os.path, socket",
                                  "from miles.utils import x"])
def test_a_package_that_imports_more_stays_a_placeholder_and_says_so(pure_tree, stub, line):
    _, records = stub
    (pure_tree / "__init__.py").write_text("from .profiles import model_type\n")
    (pure_tree / "profiles.py").write_text(f"{line}\ndef model_type(name):\n    return name\n")
    import miles.true_on_policy as package  # type: ignore[import-not-found]
    assert isinstance(package.model_type, Unknown)
    bad = {"import subprocess": "subprocess", "from torch import nn": "torch", "import os.path, socket": "socket",
           "from miles.utils import x": "miles.utils"}[line]
    why = f"miles.true_on_policy imports {bad} (profiles.py): kept a placeholder, not run"
    assert miles_stub._PURE_SEEN == {"miles.true_on_policy": why}
    assert ("miles-note", [why]) in records()


@pytest.mark.parametrize("name", ["miles.utils", "miles.true_on_policyx", "slime.true_on_policy"])
def test_only_the_pure_packages_are_read_from_the_tree(pure_tree, name):
    assert miles_stub._pure_source(name) is None


def test_no_launcher_tree_no_pure_package(stub, monkeypatch, tmp_path):
    assert miles_stub._pure_source("miles.true_on_policy") is None  # no launcher known
    miles_stub._LAUNCHER.append(tmp_path / "run.py")  # a launcher outside any Miles tree
    assert miles_stub._pure_source("miles.true_on_policy.config") is None


def test_a_pure_packages_subpackage_runs_for_real_as_a_package_of_its_own(pure_tree, stub):
    """A module of a subpackage is the file its dotted name gives; a package's spec searches its own folder, a
    module's none."""
    _, records = stub
    (pure_tree / "__init__.py").write_text("")
    (pure_tree / "models").mkdir()
    (pure_tree / "models" / "__init__.py").write_text("")
    (pure_tree / "models" / "qwen3.py").write_text("def model_type(name):\n    return name + '-true-on-policy'\n")
    from miles.true_on_policy.models.qwen3 import model_type  # type: ignore[import-not-found]
    assert model_type("qwen3-4B") == "qwen3-4B-true-on-policy"
    assert sys.modules["miles.true_on_policy.models.qwen3"].__file__ == str(pure_tree / "models" / "qwen3.py")
    finder = miles_stub._Finder()
    assert finder.find_spec("miles.true_on_policy").submodule_search_locations == [str(pure_tree)]
    assert finder.find_spec("miles.true_on_policy.models").submodule_search_locations == [str(pure_tree / "models")]
    assert finder.find_spec("miles.true_on_policy.models.qwen3").submodule_search_locations is None
    # the package's __init__ named as a module of its own is a plain module, as Python's own finder gives it
    assert finder.find_spec("miles.true_on_policy.models.__init__").submodule_search_locations is None
    assert not hasattr(sys.modules["miles.true_on_policy.models.qwen3"], "__path__")
    assert records() == []


def test_a_subpackage_that_imports_more_keeps_the_whole_package_a_placeholder(pure_tree, stub):
    _, records = stub
    (pure_tree / "__init__.py").write_text("import os\n")
    (pure_tree / "models").mkdir()
    (pure_tree / "models" / "__init__.py").write_text("")
    (pure_tree / "models" / "qwen3.py").write_text("import subprocess\ndef model_type(name):\n    return name\n")
    import miles.true_on_policy.models.qwen3 as qwen3  # type: ignore[import-not-found]
    assert isinstance(qwen3, miles_stub._MilesModule) and isinstance(qwen3.model_type, Unknown)
    why = "miles.true_on_policy imports subprocess (models/qwen3.py): kept a placeholder, not run"
    assert miles_stub._PURE_SEEN == {"miles.true_on_policy": why} and ("miles-note", [why]) in records()


def test_a_pure_module_is_the_file_its_name_gives(pure_tree):
    """The name read as written: only the dot after the package is dropped (a module named MI355X keeps its X, a
    name with a trailing space, as importlib.import_module takes it, names no file of the tree)."""
    (pure_tree / "__init__.py").write_text("")
    for name in ("MI355X", "profiles"):
        (pure_tree / f"{name}.py").write_text("")
    assert miles_stub._pure_source("miles.true_on_policy") == pure_tree / "__init__.py"
    assert miles_stub._pure_source("miles.true_on_policy.MI355X") == pure_tree / "MI355X.py"
    assert miles_stub._pure_source("miles.true_on_policy.profiles ") == pure_tree / "profiles .py"
    assert not isinstance(importlib.import_module("miles.true_on_policy.MI355X"), miles_stub._MilesModule)
    assert isinstance(importlib.import_module("miles.true_on_policy.profiles "), miles_stub._MilesModule)


def test_a_pure_package_declaring_another_codec_is_read_alike(pure_tree, stub):
    """Its imports are judged on the text read as UTF-8, an undecodable byte replaced: a module written in Latin-1
    (its coding line says so, and Python imports it so) is judged, and run, like any other."""
    _, records = stub
    (pure_tree / "__init__.py").write_bytes("# -*- coding: latin-1 -*-\n# Auteur : José\nimport os\n"
                                            "def model_type(name):\n    return name + '-é'\n".encode("latin-1"))
    from miles.true_on_policy import model_type  # type: ignore[import-not-found]
    assert model_type("qwen3-4B") == "qwen3-4B-é"
    assert miles_stub._PURE_SEEN == {"miles.true_on_policy": ""} and records() == []
    (pure_tree / "extra.py").write_bytes("# -*- coding: latin-1 -*-\n# José\nimport socket\n".encode("latin-1"))
    assert miles_stub._impure("miles.true_on_policy", pure_tree) == ("miles.true_on_policy imports socket (extra.py): "
                                                                    "kept a placeholder, not run")


def test_a_pure_package_is_read_as_utf_8_whatever_the_locales_codec(pure_tree, tmp_path):
    """A UTF-8 module is judged alike in an ASCII locale (LC_ALL=C without Python's UTF-8 mode: the stub runs with the
    launch's variables, --job-env LC_ALL among them), where a name beyond ASCII (a β) would not parse."""
    (pure_tree / "__init__.py").write_text("# Profils « true on-policy »\nimport os\n"
                                           "def kl_coef(β=0.0):\n    return β\n", encoding="utf-8")
    env = {**os.environ, **CHILD_PATH, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    code = ("import locale, sys; from pathlib import Path; from rlcheck.job import miles_stub; "
            "print(locale.getpreferredencoding(False)); "
            "print(miles_stub.__file__); print(repr(miles_stub._impure(sys.argv[1], Path(sys.argv[2]))))")
    # run from the test's own folder: `python -c` puts its working folder first on the path
    done = subprocess.run([sys.executable, "-c", code, "miles.true_on_policy", str(pure_tree)], env=env,
                          capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # an ASCII codec there (the rule judged where it matters), and this rlcheck's stub
    assert done.stdout.splitlines() == ["ANSI_X3.4-1968", miles_stub.__file__, "''"]
    assert miles_stub._impure("miles.true_on_policy", pure_tree) == ""  # and in-process
