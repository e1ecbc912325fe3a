"""Rule table for Megatron's validate_args in a child (rlcheck.repro.megatron_args): the seed recipe's argv flag for
flag (SLIME's scripts/models/qwen3-30B-A3B.sh, the seed's parallelism, the CPU minimum), the GPU-less driver's
environment, which variables may differ between runs of one warm interpreter, the child's error line, the verdict's
ok / error / outcome and the catalogue match, and the child's code run in-process against a stand-in Megatron.
No child is started here (test_fix_driver_guard.py and the reproducers run the real Megatron)."""

from __future__ import annotations

import sys
import types

import pytest

from rlcheck.process.subproc import Completed
from rlcheck.repro import megatron_args as ma


def flags(argv) -> dict[str, str | bool]:
    """The argv as {flag: value, or True for a switch}; every flag once."""
    out: dict[str, str | bool] = {}
    for i, token in enumerate(argv):
        if token.startswith("--"):
            assert token not in out
            nxt = argv[i + 1] if i + 1 < len(argv) else "--"
            out[token] = True if nxt.startswith("--") else nxt
    assert len(argv) == len(out) + sum(1 for v in out.values() if v is not True)
    return out


QWEN3_30B_A3B = {  # SLIME v0.2.4 scripts/models/qwen3-30B-A3B.sh, MODEL_ARGS
    "--num-layers": "48", "--hidden-size": "2048", "--ffn-hidden-size": "6144", "--num-attention-heads": "32",
    "--group-query-attention": True, "--num-query-groups": "4", "--kv-channels": "128", "--disable-bias-linear": True,
    "--qk-layernorm": True, "--normalization": "RMSNorm", "--norm-epsilon": "1e-6", "--position-embedding-type": "rope",
    "--rotary-percent": "1.0", "--rotary-base": "1000000", "--swiglu": True,
    "--untie-embeddings-and-output-weights": True, "--vocab-size": "151936", "--num-experts": "128",
    "--moe-router-topk": "8", "--moe-ffn-hidden-size": "768", "--moe-grouped-gemm": True,
    "--moe-token-dispatcher-type": "alltoall", "--moe-router-score-function": "softmax",
    "--moe-token-drop-policy": "probs", "--moe-router-dtype": "fp32", "--moe-permute-fusion": True,
    "--moe-aux-loss-coeff": "0", "--moe-layer-freq": "([1]*48)",
}
SEED_PARALLELISM = {"--tensor-model-parallel-size": "2", "--context-parallel-size": "2",
                    "--expert-model-parallel-size": "2", "--sequence-parallel": True}
CPU_MINIMUM = {"--micro-batch-size": "1", "--global-batch-size": "256", "--seq-length": "4096",
               "--max-position-embeddings": "4096", "--tokenizer-type": "NullTokenizer", "--train-iters": "10",
               "--lr": "1e-6", "--bf16": True}


def test_the_seeds_30b_recipe_flag_for_flag():
    assert flags(ma.QWEN3_30B_A3B_MODEL) == QWEN3_30B_A3B
    argv = ma.qwen3_30b_a3b_argv()
    assert flags(argv) == QWEN3_30B_A3B | SEED_PARALLELISM | CPU_MINIMUM
    assert argv[:len(ma.QWEN3_30B_A3B_MODEL)] == ma.QWEN3_30B_A3B_MODEL  # model, then parallelism, then minimum
    assert argv[-len(ma.CPU_MINIMUM):] == ma.CPU_MINIMUM


def test_the_seeds_world_is_two_nodes_that_tp_pp_cp_divides():
    assert ma.SEED_30B_WORLD_SIZE == 16 and ma.SEED_30B_WORLD_SIZE % (2 * 1 * 2) == 0


def test_the_tiny_dense_model_on_one_rank():
    assert flags(ma.tiny_dense_argv()) == {"--num-layers": "2", "--hidden-size": "64", "--num-attention-heads": "4",
                                           "--vocab-size": "1000"} | CPU_MINIMUM


def test_the_driver_environment_sees_no_gpu_is_offline_and_drops_max_connections(monkeypatch):
    seen = []
    monkeypatch.setattr(ma.subproc, "child_env", lambda pythonpath=(): seen.append(tuple(pythonpath)) or {
        "PATH": "/bin", "CUDA_DEVICE_MAX_CONNECTIONS": "1", "CUDA_VISIBLE_DEVICES": "0,1", "HF_HUB_OFFLINE": "0"})
    assert ma.driver_env(["/side"]) == {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1",
                                        "TRANSFORMERS_OFFLINE": "1"}
    assert ma.driver_env() == ma.driver_env(())
    assert seen == [("/side",), (), ()]


def test_the_driver_environment_without_max_connections_set():
    assert "CUDA_DEVICE_MAX_CONNECTIONS" not in ma.driver_env()


@pytest.fixture
def warm(monkeypatch):
    """warm.python as run_python calls it: records the call, answers the Completed given."""
    calls: list[dict] = []
    answer = {"done": Completed(argv=(), returncode=0, stdout="", stderr="", timed_out=False)}

    def python(code, argv=(), **kw):
        calls.append({"code": code, "argv": tuple(argv), **kw})
        return answer["done"]

    monkeypatch.setattr(ma.warm, "python", python)
    monkeypatch.setattr(ma, "driver_env", lambda pythonpath=(): {"BASE": "1", "PP": ":".join(pythonpath)})
    return calls, answer


def test_run_python_forks_from_the_warm_megatron_with_the_runtime_names(warm):
    calls, answer = warm
    assert ma.run_python("print(1)", ["a"], env={"RANK": "3"}, pythonpath=["/s"], timeout_s=7,
                         preload=["numpy", "torch"]) is answer["done"]
    assert calls == [{"code": "print(1)", "argv": ("a",), "preload": ("numpy", "torch"),
                      "env": {"BASE": "1", "PP": "/s", "RANK": "3"}, "runtime": ma.RUNTIME, "timeout_s": 7}]
    assert ma.RUNTIME == ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
                          "RLCHECK_GUARD_CAPABILITY", "CUDA_DEVICE_MAX_CONNECTIONS")


def test_run_python_defaults(warm):
    calls, _ = warm
    ma.run_python("pass")
    assert calls == [{"code": "pass", "argv": (), "preload": ("megatron.training.arguments",),
                      "env": {"BASE": "1", "PP": ""}, "runtime": ma.RUNTIME, "timeout_s": 180}]
    assert ma.TORCH_PRELOAD == ("numpy", "torch", "torch.distributed")  # never Megatron: nothing counts devices


def test_run_python_refuses_a_variable_that_the_warm_interpreter_fixed(warm):
    calls, _ = warm
    with pytest.raises(ValueError) as err:
        ma.run_python("pass", env={"RANK": "0", "PYTHONPATH": "/x", "HOME": "/h"})
    assert str(err.value) == f"only {ma.RUNTIME} may differ between runs of one warm interpreter, got ['HOME', " \
                             f"'PYTHONPATH', 'RANK']"
    assert calls == []


@pytest.mark.parametrize(("text", "line"), [
    ("", ""),
    ("all fine\n", ""),
    ("Traceback\nValueError: bad\nmore\nAssertionError: last one\n", "AssertionError: last one"),
    ("[rank0]: torch.OutOfMemoryError: CUDA out of memory\n", "[rank0]: torch.OutOfMemoryError: CUDA out of memory"),
    ("  ValueError: indented\n", ""),
    ("RuntimeException: x\n", "RuntimeException: x"),
    ("ValueError:no space\n", ""),
    ("[rank12]: KeyError: 'k'\n", "[rank12]: KeyError: 'k'"),
    ("[rankX]: KeyError: 'k'\n", ""),
    ("ValueErrors: plural\n", ""),
    ("note: ValueError: inside\n", ""),
])
def test_the_error_line_is_the_last_error_or_exception_line(text, line):
    assert ma.error_line(text) == line


def completed(returncode=0, stdout="", stderr="", timed_out=False) -> Completed:
    return Completed(argv=("python",), returncode=returncode, stdout=stdout, stderr=stderr, timed_out=timed_out)


@pytest.fixture
def child(monkeypatch):
    calls: list[dict] = []
    answer: dict = {}

    def run_python(code, argv=(), **kw):
        calls.append({"code": code, "argv": tuple(argv), **kw})
        return answer["done"]

    monkeypatch.setattr(ma, "run_python", run_python)
    return calls, answer


@pytest.mark.parametrize(("done", "ok", "error", "outcome"), [
    (completed(0, "x\nRESULT validate_args completed\n"), True, "", "validate_args completed"),
    (completed(0, "RESULT validate_args"), False, "", "exit code 0"),
    (completed(0, "RESULT validate_args completed\n", "ValueError: a warning it printed\n"), True, "",
     "validate_args completed"),
    (completed(1, "RESULT validate_args completed\n", "AssertionError: late\n"), False, "AssertionError: late",
     "AssertionError: late"),
    (completed(1, "", "RuntimeError: Found no NVIDIA driver on your system.\n"), False,
     "RuntimeError: Found no NVIDIA driver on your system.", "RuntimeError: Found no NVIDIA driver on your system."),
    (completed(None, "", "", timed_out=True), False, "", "killed at its deadline"),
    (completed(-9, "", "no error line"), False, "", "killed by signal SIGKILL"),
])
def test_validate_args_verdict(child, done, ok, error, outcome):
    calls, answer = child
    answer["done"] = done
    got = ma.run_validate_args(["--a"], world_size=16)
    assert (got.ok, got.error, got.output, got.outcome()) == (ok, error, done, outcome)
    assert calls == [{"code": ma.VALIDATE, "argv": ("--a",), "env": {"WORLD_SIZE": "16", "RANK": "0",
                                                                     "LOCAL_RANK": "0"},
                      "pythonpath": (), "timeout_s": 180, "preload": ma.PRELOAD}]


def test_validate_args_with_the_guard_and_the_callers_variables(child):
    calls, answer = child
    answer["done"] = completed(0, "RESULT validate_args completed")
    ma.run_validate_args(["--a"], world_size=4, guard_capability="9.0", env={"RANK": "2", "MASTER_PORT": "1"},
                         pythonpath=["/s"], timeout_s=9, preload=ma.TORCH_PRELOAD)
    assert calls[0]["env"] == {"WORLD_SIZE": "4", "RANK": "2", "LOCAL_RANK": "0", "RLCHECK_GUARD_CAPABILITY": "9.0",
                               "MASTER_PORT": "1"}
    assert (calls[0]["pythonpath"], calls[0]["timeout_s"], calls[0]["preload"]) == (["/s"], 9, ma.TORCH_PRELOAD)
    ma.run_validate_args(["--a"], world_size=4, guard_capability="")
    assert "RLCHECK_GUARD_CAPABILITY" not in calls[1]["env"]


@pytest.mark.parametrize(("ok", "error", "matches"), [
    (False, "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU", True),
    (True, "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU", False),
    (False, "ValueError: something else", False),
    (False, "", False),
])
def test_a_failure_matches_when_the_catalogue_names_its_line(ok, error, matches):
    got = ma.Validated(ok=ok, error=error, output=completed(1))
    assert got.matches("driver-gpu-probe") is matches


class Arguments(types.ModuleType):
    """megatron.training.arguments as VALIDATE calls it."""

    def __init__(self, raises: Exception | None = None) -> None:
        super().__init__("megatron.training.arguments")
        self.raises, self.seen = raises, []

    def parse_args(self):
        self.seen.append(("parse", list(sys.argv)))
        return "ARGS"

    def validate_args(self, args):
        self.seen.append(("validate", args))
        if self.raises:
            raise self.raises


@pytest.fixture
def megatron(monkeypatch):
    arguments = Arguments()
    training = types.ModuleType("megatron.training")
    training.arguments = arguments  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "megatron", types.ModuleType("megatron"))
    monkeypatch.setitem(sys.modules, "megatron.training", training)
    monkeypatch.setitem(sys.modules, "megatron.training.arguments", arguments)
    monkeypatch.setattr(sys, "argv", ["-c", "--num-layers", "2"])
    monkeypatch.delenv("RLCHECK_GUARD_CAPABILITY", raising=False)
    return arguments


def test_the_childs_code_parses_as_train_py_validates_and_says_so(megatron, capsys):
    exec(ma.VALIDATE, {})
    assert megatron.seen == [("parse", ["train.py", "--num-layers", "2"]), ("validate", "ARGS")]
    assert capsys.readouterr().out == "RESULT validate_args completed\n"


def test_the_childs_code_installs_the_guard_when_asked(megatron, capsys, monkeypatch):
    cuda = types.SimpleNamespace(is_available=lambda: False, get_device_capability=None)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    monkeypatch.setenv("RLCHECK_GUARD_CAPABILITY", "10.3")
    exec(ma.VALIDATE, {})
    assert capsys.readouterr().out == "guard installed: True\nRESULT validate_args completed\n"
    assert megatron.get_device_arch_version() == 10 and cuda.get_device_capability() == (10, 3)


def test_the_childs_code_says_nothing_when_validation_fails(megatron, capsys):
    megatron.raises = AssertionError("bad")
    with pytest.raises(AssertionError, match="bad"):
        exec(ma.VALIDATE, {})
    assert capsys.readouterr().out == ""
