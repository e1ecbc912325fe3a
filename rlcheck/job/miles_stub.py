"""Run a Miles Python launcher in the capture sandbox with Miles' launch helpers replaced by recorders.

Run as `python3 miles_stub.py LAUNCHER.py` inside the sandbox (rlcheck.job.miles_py); standard library only, it
imports nothing of rlcheck and none of Miles. A Miles launcher (Miles' scripts/run_*.py) builds the trainer's
arguments as Python strings and hands them to `miles.utils.external_utils.command_utils.execute_train`, which
runs `ray start --head --num-gpus N` and `ray job submit --runtime-env-json=... -- python3 train.py MODEL_ARGS
TRAIN_ARGS` through `bash -c`. Here:

- `execute_train` builds those same two commands (the runtime env vars Miles documents it sets, the model args of
  scripts/models/<megatron_model_type>.py beside the launcher) and runs them through `bash -c`, where the
  sandbox's fake `ray` records them, so the capture reads them like a bash launcher's; first, as Miles does, it
  stops on an AssertionError unless train_args hold the text `--train-backend fsdp` exactly when megatron_model_type
  is None (SLIME's execute_train has no such check);
- Miles' model-argument helpers (`load_model_args`, `load_sibling_model_args`, `moe_layer_freq`; command_utils or
  model_args_utils) are pure and run for real: a model file derived from another reads its sibling's args;
- Miles' true-on-policy launch contract (`miles.true_on_policy`: the model type, arguments and environment a
  true-on-policy launch adds) only computes: it runs for real from the launcher's tree (PURE), unless it imports more
  than a few standard modules (then it stays a placeholder, and the capture says so);
- `execute_train_npu` (only Miles' NPU image has it: docker/npu_patch/miles.patch) launches as that patch does;
  `resolve_extra_env_vars`, `encode_pseudo_file` and the `GENERATION_HARDWARE` table return what Miles' own do;
- `exec_command_cpu`/`exec_command_gpu` run their command through `bash -c` too (fakes record; a command that
  fails, such as a download without network, does not stop the launcher);
- `dataclass_cli` and `typer.run` call the launcher's main with its defaults (MILES_SCRIPT_<FIELD> overrides, and
  the launcher's own arguments `--field-name VALUE` / `--flag` / `--no-flag` over those; a typer app's command named
  first runs that command);
- SLIME's Python launchers (`slime.utils.external_utils.command_utils`, the helpers Miles forked) run the same way;
- any other `miles.*` (or `slime.*`) name is a placeholder that formats as '' and is recorded as
  `miles-stub NAME`, so the capture can say which helper's share of the launch it could not see.
"""

from __future__ import annotations

import ast
import base64
import dataclasses
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import runpy
import shlex
import subprocess
import sys
import time
import types
import typing
from pathlib import Path
from typing import Any

_CMD = "miles.utils.external_utils.command_utils"
_CMDS = (_CMD, "slime.utils.external_utils.command_utils")
_LAUNCHER: list[Path] = []


def _record(name: str, cmd: str = "miles-stub") -> None:
    """miles-stub NAME: a helper this stub does not model was used; miles-note TEXT: what capture could not see."""
    with open(os.environ["RLCHECK_RECORD"], "a", encoding="utf-8") as out:
        out.write(json.dumps({"cmd": cmd, "argv": [name], "cwd": os.getcwd()}) + "\n")


class Unknown:
    """A Miles name this stub does not model: callable, indexable, formats as '' and records its first use."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _use(self) -> Unknown:
        _record(self._name)
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Unknown:
        return Unknown(f"{self._name}()")._use()

    def __getattr__(self, attr: str) -> Unknown:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Unknown(f"{self._name}.{attr}")

    def __format__(self, spec: str) -> str:
        self._use()
        return ""

    __str__ = __repr__ = lambda self: self.__format__("")  # noqa: E731

    def __bool__(self) -> bool:
        return False

    def __iter__(self) -> Any:
        return iter(())

    def keys(self) -> list[str]:
        self._use()
        return []


def _bash(cmd: str, capture_output: bool = False) -> str | None:
    print(f"EXEC: {cmd}", file=sys.stderr, flush=True)
    done = subprocess.run(["bash", "-c", cmd], check=False, capture_output=capture_output, text=True)
    return done.stdout if capture_output else None


def _model_file(model_type: str) -> Path:
    """Where Miles reads a model type's args: scripts/models/<type>.py of the Miles tree the launcher lives in (the
    nearest directory above it holding the miles package: Miles' model_args_utils reads its own repo's), else
    models/<type>.py beside a launcher outside any Miles tree."""
    return _models_dir() / f"{model_type}.py"


def _models_dir() -> Path:
    """The folder of _model_file's model files: the Miles tree's scripts/models, else models/ beside the launcher."""
    root = _miles_root(_LAUNCHER[0])
    return root / "scripts" / "models" if root else _LAUNCHER[0].parent / "models"


def _miles_root(launcher: Path) -> Path | None:
    """The Miles tree the launcher lives in: the nearest directory above it holding the miles package, or None."""
    return next((d for d in launcher.parents if (d / "miles" / "__init__.py").is_file()), None)


def _model_args(model_type: Any) -> str:
    """The model type's args file (_model_file), its model_args() quoted token by token; '' if not there."""
    if model_type is None:
        return ""
    if isinstance(model_type, Unknown) or not _LAUNCHER:
        _record("not seen: the model args: megatron_model_type came from a helper the stub does not model",
                "miles-note")
        return ""
    path = _model_file(str(model_type))
    if not path.is_file():
        _record(f"not seen: the model args: no {path} (Miles' scripts/models/<megatron_model_type>.py)", "miles-note")
        return ""
    return " ".join(shlex.quote(token) for token in _import_model_file(path).model_args().split())


def _import_model_file(path: Path) -> Any:
    """A model args file, run as Miles runs it: its `from model_args_utils import ...` reaches Miles' helpers."""
    sys.modules.setdefault("model_args_utils",
                           next((sys.modules[m] for m in _CMDS if m in sys.modules), _MilesModule(_CMDS[0])))
    spec = importlib.util.spec_from_file_location(f"rlcheck_model_{path.stem.replace('.', '_').replace('-', '_')}",
                                                  path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_model_args(model_type: str, model_script_dir: Path | str | None = None, **kwargs: Any) -> str:
    """Miles' model_args_utils.load_model_args, a pure helper run for real: <model_type>.py of model_script_dir (else
    the tree's scripts/models) asked for model_args(**kwargs), on one line; an AssertionError naming the file when it
    is missing or declares nothing, as Miles' own."""
    folder = Path(model_script_dir) if model_script_dir is not None else _models_dir()
    path = folder / f"{model_type}.py"
    if not path.is_file():  # Miles asserts; raised here so the message is the same under any interpreter flags
        raise AssertionError(f"no model args script at {path}")
    args = " ".join(str(_import_model_file(path).model_args(**kwargs)).split())
    if not args:
        raise AssertionError(f"{path} declared no model args")
    return args


def load_sibling_model_args(model_script: str, model_type: str, **kwargs: Any) -> str:
    """Miles' load_sibling_model_args: the model a variant derives from, beside the variant's own file."""
    return load_model_args(model_type, Path(model_script).resolve().parent, **kwargs)


def _parse_extra_env_vars(text: str) -> Any:
    """A launcher's extra_env_vars text as Miles reads it: JSON when it parses, else space-separated NAME=VALUE items
    (each value is what lies between the first and second '='; an item without '=' raises IndexError, as in Miles)."""
    try:
        return json.loads(text)
    except ValueError:
        out = {}
        for item in text.split(" "):
            if item.strip():
                parts = item.split("=")
                out[parts[0]] = parts[1]
        return out


def resolve_extra_env_vars(extra_env_vars: dict[str, str], config: Any) -> dict[str, str]:
    """The launcher's own env vars with the config's extra_env_vars text over them (Miles' resolve_extra_env_vars)."""
    return {**extra_env_vars, **_parse_extra_env_vars(getattr(config, "extra_env_vars", "") or "")}


def _coredump(config: Any, output_dir: str) -> dict[str, str]:
    """CUDA's core-dump variables, set when the config asks for cuda_core_dump."""
    if not getattr(config, "cuda_core_dump", False):
        return {}
    return {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION": "1", "CUDA_COREDUMP_SHOW_PROGRESS": "1",
            "CUDA_COREDUMP_GENERATION_FLAGS": "skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,"
                                              "skip_local_memory,skip_constbank_memory",
            "CUDA_COREDUMP_FILE": f"{output_dir}/cuda_coredump_%h.%p.%t"}


def _runtime_env(config: Any, fsdp: bool, extra: dict[str, str], megatron_path: str) -> dict[str, str]:
    """The env vars Miles' execute_train puts in --runtime-env-json (its behaviour at 31f1ca96, not its code)."""
    master = os.environ.get("MASTER_ADDR", "127.0.0.1")
    env = {"PYTHONUNBUFFERED": "1", **({} if fsdp else {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}),
           "NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE") or "0",  # the fake nvidia-smi shows no NVLink
           **{k: os.environ[k] for k in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NCCL_DEBUG", "NCCL_DEBUG_FILE")
              if k in os.environ},
           "no_proxy": f"127.0.0.1,{master}", "MASTER_ADDR": master,
           **_coredump(config, getattr(config, "output_dir", "/root/shared_data")),
           **resolve_extra_env_vars(extra, config)}
    # PYTHONPATH: the repo, Megatron, then what the env vars and the caller's environment give, once each
    paths = [str(Path.cwd()), megatron_path]
    for more in (env.get("PYTHONPATH"), os.environ.get("PYTHONPATH")):
        paths += more.split(os.pathsep) if more else []
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def _nodes(config: Any) -> None:
    with open(os.environ["RLCHECK_RECORD"], "a", encoding="utf-8") as out:  # the cluster shape Miles assumes
        out.write(json.dumps({"cmd": "miles-nodes", "argv": [str(getattr(config, "num_nodes", 1))]}) + "\n")


def check_backend(train_args: str, megatron_model_type: Any) -> None:
    """Miles' execute_train (and the NPU image's execute_train_npu) asserts, with no message, that train_args hold the
    text `--train-backend fsdp` exactly when megatron_model_type is None: a test of the text, so `--train-backend=fsdp`
    or an abbreviation of the flag counts as the Megatron backend. SLIME's execute_train has no such check. A model
    type from a helper the stub does not model is not judged."""
    if isinstance(megatron_model_type, Unknown):
        return
    fsdp = "--train-backend fsdp" in train_args
    if fsdp != (megatron_model_type is None):
        has = "hold the text `--train-backend fsdp`" if fsdp else "lack the text `--train-backend fsdp`"
        raise AssertionError(f"Miles' execute_train stops on its bare assert: train_args {has} and "
                             f"megatron_model_type is {megatron_model_type!r}; it wants that text exactly when "
                             "megatron_model_type is None")


def execute_train(train_args: str, num_gpus_per_node: int, megatron_model_type: Any, train_script: str = "train.py",
                  before_ray_job_submit: Any = None, extra_env_vars: Any = None, config: Any = None,
                  megatron_path: str = "/root/Megatron-LM") -> None:
    """Miles' launch: its backend check, then the head and the job as `_launch` starts them."""
    check_backend(train_args, megatron_model_type)
    _launch(train_args, num_gpus_per_node, megatron_model_type, train_script, before_ray_job_submit, extra_env_vars,
            config, megatron_path)


def slime_execute_train(train_args: str, num_gpus_per_node: int, megatron_model_type: Any,
                        train_script: str = "train.py", before_ray_job_submit: Any = None, extra_env_vars: Any = None,
                        config: Any = None) -> None:
    """SLIME's launch (its command_utils, which Miles forked): no backend check."""
    _launch(train_args, num_gpus_per_node, megatron_model_type, train_script, before_ray_job_submit, extra_env_vars,
            config, "/root/Megatron-LM")


def _launch(train_args: str, num_gpus_per_node: int, megatron_model_type: Any, train_script: str,
            before_ray_job_submit: Any, extra_env_vars: Any, config: Any, megatron_path: str) -> None:
    """Start the head and submit the job as Miles would, through the sandbox's fake `ray`."""
    _nodes(config)
    fsdp = "--train-backend fsdp" in train_args
    if not _bool_env("MILES_SCRIPT_EXTERNAL_RAY"):
        _bash(f"ray start --head --node-ip-address {os.environ.get('MASTER_ADDR', '127.0.0.1')} "
              f"--num-gpus {num_gpus_per_node} --disable-usage-stats")
    if before_ray_job_submit is not None:
        before_ray_job_submit()
    env = _runtime_env(config, fsdp, dict(extra_env_vars or {}), megatron_path)
    if _bool_env("MILES_SCRIPT_ENABLE_RAY_SUBMIT", "1"):
        address = "" if "RAY_ADDRESS" in os.environ else '--address="http://127.0.0.1:8265" '
        _bash(f"ray job submit {address}--runtime-env-json={shlex.quote(json.dumps({'env_vars': env}))} "
              f"-- python3 {train_script} {_model_args(megatron_model_type)} {train_args}")


# The NPU image's Ascend toolkit places and HCCL ports, as its execute_train_npu sets them.
_NPU_ENV = {"RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES": "1",
            "ASCEND_TOOLKIT_HOME": "/home/w00664509/ascend-toolkit/latest/",
            "ASCEND_OPP_PATH": "/home/w00664509/cann8.5.2/ascend-toolkit/latest/opp/",
            "ASCEND_AICPU_PATH": "/home/w00664509/cann8.5.2/ascend-toolkit/latest/",
            "ASCEND_HOME_PATH": "/home/w00664509/cann8.5.2/ascend-toolkit/latest/",
            "set_env_path": "/home/w00664509/cann8.5.2/nnal/atb/set_env.sh", "HYDRA_FULL_ERROR": "1",
            "HCCL_HOST_SOCKET_PORT_RANGE": "60000-60050", "HCCL_NPU_SOCKET_PORT_RANGE": "61000-61050"}


def execute_train_npu(train_args: str, num_gpus_per_node: int, megatron_model_type: Any,
                      train_script: str = "train.py", before_ray_job_submit: Any = None, extra_env_vars: Any = None,
                      config: Any = None, megatron_path: str = "/root/Megatron-LM") -> None:
    """The Ascend NPU launch: Miles' command_utils at 31f1ca96 has no execute_train_npu; its NPU image adds it
    (docker/npu_patch/miles.patch). As that patch launches: SLIME_SCRIPT_* switches, `ray start` without
    --num-gpus, the Ascend runtime env (no PYTHONPATH), the fixed dashboard address."""
    _record("the launcher calls execute_train_npu, which only Miles' NPU image has (docker/npu_patch/miles.patch; "
            "a plain Miles install stops with ImportError): captured as that image launches it", "miles-note")
    check_backend(train_args, megatron_model_type)  # the patch keeps execute_train's check
    _nodes(config)
    master = os.environ.get("MASTER_ADDR", "127.0.0.1")
    if not _bool_env("SLIME_SCRIPT_EXTERNAL_RAY"):
        _bash(f"ray start --head --node-ip-address {master} --disable-usage-stats")
    if before_ray_job_submit is not None:
        before_ray_job_submit()
    env = {"CUDA_DEVICE_MAX_CONNECTIONS": "1", **_NPU_ENV, "NCCL_NVLS_ENABLE": "0", "no_proxy": f"127.0.0.1,{master}",
           "MASTER_ADDR": master, **_coredump(config, "/root/shared_data"), **dict(extra_env_vars or {}),
           **_parse_extra_env_vars(getattr(config, "extra_env_vars", "") or "")}
    if _bool_env("SLIME_SCRIPT_ENABLE_RAY_SUBMIT", "1"):
        _bash(f"ray job submit --address=\"http://127.0.0.1:8265\" --runtime-env-json="
              f"{shlex.quote(json.dumps({'env_vars': env}))} -- python3 {train_script} "
              f"{_model_args(megatron_model_type)} {train_args}")


def _bool_env(name: str, default: str = "false") -> bool:
    return os.environ.get(name, default).strip().lower() in ("1", "true", "yes", "on")


@dataclasses.dataclass
class ExecuteTrainConfig:
    """The base of a launcher's ScriptArgs (the fields Miles gives it)."""

    cuda_core_dump: bool = False
    num_nodes: int = dataclasses.field(default_factory=lambda: int(os.environ.get("SLURM_JOB_NUM_NODES", "1")))
    extra_env_vars: str = ""
    output_dir: str = "/root/shared_data"


def dataclass_cli(func: Any = None, **_: Any) -> Any:
    """The launcher's main with its ScriptArgs defaults; MILES_SCRIPT_<FIELD> overrides a field and the launcher's
    command line (`--field-name VALUE`, `--flag` / `--no-flag` for a bool: typer's options of the fields) overrides
    that, as in Miles."""
    def wrap(inner: Any) -> Any:
        def main() -> Any:
            cls = next(iter(inner.__annotations__.values()))
            cls = inner.__globals__[cls] if isinstance(cls, str) else cls
            hints, env = _hints(cls), {f.name: f"MILES_SCRIPT_{f.name.upper()}" for f in dataclasses.fields(cls)}
            overrides = {f.name: field_value(f.name, hints.get(f.name, f.type), os.environ[env[f.name]])
                         for f in dataclasses.fields(cls) if env[f.name] in os.environ}
            overrides.update(cli_values(cls, hints, sys.argv[1:]))
            del sys.argv[1:]
            return inner(cls(**overrides))
        main.__name__ = main.__qualname__ = inner.__name__  # typer names the command after the launcher's function
        return main
    return wrap(func) if func is not None else wrap


def cli_values(cls: Any, hints: dict[str, Any], argv: list[str]) -> dict[str, Any]:
    """The fields a launcher's command line sets, read as typer reads a dataclass's options; SystemExit(2) naming
    the option, as click does, for one the fields do not have, a missing value or a positional argument."""
    fields = {f.name.replace("_", "-"): f for f in dataclasses.fields(cls)}
    out: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        name, eq, inline = token[2:].partition("=") if token.startswith("--") else ("", "", "")
        field = fields.get(name) or fields.get(name.removeprefix("no-"))
        if field is None:
            what = f"No such option: {token}" if token.startswith("-") else f"Got unexpected extra argument ({token})"
            raise SystemExit(f"Error: {what} (the launcher's options: --{', --'.join(fields)})")
        kind = hints.get(field.name, field.type)
        if kind in (bool, "bool"):
            out[field.name] = not name.startswith("no-") or name in fields
            i += 1
            continue
        if not eq and i + 1 >= len(argv):
            raise SystemExit(f"Error: Option '{token}' requires an argument.")
        raw = inline if eq else argv[i + 1]
        out[field.name] = field_value(field.name, kind, raw, f"--{name} {raw}")
        i += 1 if eq else 2
    return out


_BOOLS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def _hints(cls: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # an annotation that does not resolve here: field_value reads its name
        return {}


def field_value(name: str, kind: Any, raw: str, given: str = "") -> Any:
    """MILES_SCRIPT_<NAME>'s string (or the command line's, `given` saying where) as the field's type (int, float,
    bool, a Literal's values, str); a bad value is a ValueError naming the field and what it allows."""
    where = given or f"MILES_SCRIPT_{name.upper()}={raw!r}"
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if typing.get_origin(kind) is typing.Literal:
        allowed = {str(a): a for a in args}
        if raw not in allowed:
            raise ValueError(f"{where}: {name} is one of {', '.join(allowed)}")
        return allowed[raw]
    if args and typing.get_origin(kind) is not None:  # Optional[X] / X | None: X
        kind = args[0]
    kind = {"int": int, "float": float, "bool": bool, "str": str}.get(kind, kind) if isinstance(kind, str) else kind
    if kind is bool:
        if raw.lower() not in _BOOLS:
            raise ValueError(f"{where}: {name} is a bool: true/false, 1/0 or yes/no")
        return _BOOLS[raw.lower()]
    if kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            article = "an int" if kind is int else "a float"
            raise ValueError(f"{where}: {name} is {article}") from None
    return raw


def _wandb_args(test_file: str, run_name_prefix: str | None = None, run_id: str | None = None) -> str:
    """Miles inlines WANDB_API_KEY into the argv when it is set: keep that, the secret check must see it."""
    key = os.environ.get("WANDB_API_KEY")
    if not key:
        return ""
    name = "_".join(x for x in (run_name_prefix, run_id or create_run_id()) if x)
    return (f"--use-wandb --wandb-project miles-{Path(test_file).stem} --wandb-group {name} "
            f"--wandb-key '{key}' --disable-wandb-random-suffix ")


def moe_layer_freq(*, nlayers: int, first_k_dense_replace: int) -> str:
    """Megatron's --moe-layer-freq list as Miles' model scripts write it: 0 for each dense layer, then 1 (MoE)."""
    dense = max(0, min(first_k_dense_replace, nlayers))
    return "[" + ",".join(["0"] * dense + ["1"] * (nlayers - dense)) + "]"


def _noop(*args: Any, **kwargs: Any) -> None:
    """Preparation (downloads, checkpoint conversion, rsync, ssh to workers, commands on every node): nothing of
    the trainer's argv."""


def encode_pseudo_file(text: str) -> str:
    """A file's text inlined as one argument, as Miles writes it: 'base64:' and the UTF-8 text in base64."""
    return "base64:" + base64.b64encode(text.encode()).decode()


def create_run_id() -> str:
    return time.strftime("%y%m%d-%H%M%S")


_HARDWARE_GPUS = {"H100": 8, "H200": 8, "B200": 8, "B300": 8, "GB200": 4, "GB300": 4, "MI350X": 8, "MI355X": 8}
GENERATION_HARDWARE = {"H100": "Hopper", "GB200": "Blackwell", "GB300": "Blackwell"}
"""Miles' table of the GPU generation of a hardware name; only these three (H200 is not in it: a KeyError there,
as in Miles)."""
_EXEC = {"exec_command_cpu": _bash, "exec_command_gpu": _bash, "exec_command_multi_node": _noop}
_KNOWN: dict[str, Any] = {
    "execute_train": execute_train, "execute_train_npu": execute_train_npu, **_EXEC,
    "resolve_extra_env_vars": resolve_extra_env_vars, "GENERATION_HARDWARE": GENERATION_HARDWARE,
    "encode_pseudo_file": encode_pseudo_file,
    "ExecuteTrainConfig": ExecuteTrainConfig, "dataclass_cli": dataclass_cli, "get_default_wandb_args": _wandb_args,
    "create_run_id": create_run_id, "get_bool_env_var": _bool_env, "NUM_GPUS_OF_HARDWARE": _HARDWARE_GPUS,
    "shell_safe_model_args": _model_args, "repo_base_dir": Path.cwd(), "moe_layer_freq": moe_layer_freq,
    "load_model_args": load_model_args, "load_sibling_model_args": load_sibling_model_args,
    **dict.fromkeys(("convert_checkpoint", "hf_download_dataset", "rsync_simple", "fp8_cast_bf16",
                     "ssh_start_ray_workers"), _noop),
}
_MODULES = {_CMD: _KNOWN, _CMDS[1]: {**_KNOWN, "execute_train": slime_execute_train},
            "miles.utils.external_utils.model_args_utils": _KNOWN,
            "miles.utils.external_utils.exec_command": _EXEC}
"""The modules whose names the stub models: Miles' (and SLIME's) command_utils, Miles' exec_command."""


class _MilesModule(types.ModuleType):
    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr in _MODULES.get(self.__name__, {}):
            return _MODULES[self.__name__][attr]
        return Unknown(f"{self.__name__}.{attr}")


class _Typer(types.ModuleType):
    """typer: run(main) calls main; Typer().command() registers, calling the app runs the last one."""

    def __init__(self) -> None:
        super().__init__("typer")
        self.run = lambda func: func()
        self.Typer = _App
        self.Option = self.Argument = lambda *a, **k: a[0] if a else None


class _App:
    """A typer app: its commands are registered; calling it runs `train` (what Miles' launchers run to train),
    else the only (or last) one."""

    def __init__(self, *a: Any, **k: Any) -> None:
        self.commands: dict[str, Any] = {}

    def command(self, name: str | None = None, *a: Any, **k: Any) -> Any:
        def register(func: Any) -> Any:
            self.commands[name or func.__name__.replace("_", "-")] = func
            return func
        return register

    def callback(self, *a: Any, **k: Any) -> Any:
        return lambda func: func

    def __call__(self) -> Any:
        if not self.commands:
            return None
        if sys.argv[1:] and sys.argv[1] in self.commands:  # the command the launcher's arguments name
            return self.commands[sys.argv.pop(1)]()
        chosen = "train" if "train" in self.commands else list(self.commands)[-1]
        if len(self.commands) > 1:
            _record(f"the launcher's typer commands are {', '.join(self.commands)}: judged {chosen!r}", "miles-note")
        return self.commands[chosen]()


PURE = ("miles.true_on_policy",)
"""Packages of the framework's tree that only compute (its true-on-policy launch contract: model type, arguments,
environment), run for real from the tree the launcher lives in, so what they add to the launch is judged."""
PURE_IMPORTS = frozenset({"__future__", "dataclasses", "typing", "enum", "re", "shlex", "os", "functools",
                          "collections", "abc", "math", "json", "types", "pathlib", "itertools"})
"""What a PURE package may import (besides itself) to run for real; one that imports more stays a placeholder."""


def _pure_source(name: str) -> Path | None:
    """The tree's file for a module of a PURE package (a package's __init__.py), if the whole package imports only
    PURE_IMPORTS and its own modules; None otherwise (the name stays a placeholder)."""
    package = next((p for p in PURE if name == p or name.startswith(p + ".")), None)
    if package is None or not _LAUNCHER:
        return None
    root = _miles_root(_LAUNCHER[0])
    if root is None:
        return None
    folder = root.joinpath(*package.split("."))
    if package not in _PURE_SEEN:
        _PURE_SEEN[package] = _impure(package, folder)
    if _PURE_SEEN[package]:
        return None
    tail = name.removeprefix(package).strip(".")
    path = folder.joinpath(*tail.split(".")) if tail else folder
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


_PURE_SEEN: dict[str, str] = {}
"""PURE package -> '' when it runs for real, else why not (judged once per capture)."""


def _impure(package: str, folder: Path) -> str:
    """'' when every module of the package imports only PURE_IMPORTS and its own modules, else the first other
    import (recorded: the capture says the package was not run)."""
    for source in sorted(folder.rglob("*.py")):  # its subpackages' modules too
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8", errors="replace"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            bad = next((n for n in names if n.split(".")[0] not in PURE_IMPORTS), None)
            if bad is not None:
                why = f"{package} imports {bad} ({source.relative_to(folder).as_posix()}): kept a placeholder, not run"
                _record(why, "miles-note")
                return why
    return ""


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        source = _pure_source(name)
        if source is not None and source.is_file():
            # a package (its __init__.py) searches its own folder, as Python's own finder gives it; `pkg.__init__` is
            # a plain module there too
            return importlib.util.spec_from_file_location(name, source)
        if name in ("typer", "miles", "slime") or name.startswith(("miles.", "slime.")):
            return importlib.machinery.ModuleSpec(name, self, is_package=name != "typer")
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        return _Typer() if spec.name == "typer" else _MilesModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ != "typer":
            module.__path__ = []


def main() -> int:
    launcher = Path(sys.argv[1]).resolve()
    _LAUNCHER.append(launcher)
    sys.meta_path.insert(0, _Finder())
    sys.argv = [str(launcher), *sys.argv[2:]]  # the launcher's own arguments (rlcheck job capture L.py -- ARG...)
    sys.path.insert(0, str(launcher.parent))
    runpy.run_path(str(launcher), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
