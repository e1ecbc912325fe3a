"""mbridge-missing: HF -> Megatron conversion needs mbridge, which a --no-deps SLIME install lacks.

Proves, with the real packages in child processes (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE set, nothing
reaches the network): SLIME v0.2.4's converter's import header, in its order (Megatron's
enums, arguments, checkpointing and training, then slime_plugins.mbridge's first `from mbridge.core import ...`),
gets through Megatron and stops at mbridge with Python's own ModuleNotFoundError (name 'mbridge'). mbridge is
made absent, not faked: the child's only site directory is a mirror of this environment's site-packages that
leaves mbridge out (rlcheck.repro.site_mirror), so the import system itself reports it. The child is forked from
the warm interpreter that imported Megatron's arguments in the GPU-less driver environment (the imports need no
GPU), with the import path a cold `python -S` child on that mirror has; cold where that interpreter is unfit.
With mbridge, AutoBridge.from_pretrained maps a tiny local Qwen3 config.json (hidden 64, 2 layers,
4 heads, 2 KV heads, vocab 1000) to a Megatron TransformerConfig on CPU (gloo, world size 1,
127.0.0.1, model parallel 1 x 1) with num_layers 2, hidden_size 64, 4 heads and 2 query groups.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlcheck.process import subproc
from rlcheck.process.wait import free_loopback_port
from rlcheck.repro import megatron_args, site_mirror
from rlcheck.repro.ahead import Ahead, begin_one
from rlcheck.repro.reproduce import Reproduction

FAILURE_ID = "mbridge-missing"
# The import header of SLIME v0.2.4's converter, tools/convert_hf_to_torch_dist.py (bd217a63, lines 7-13), in its
# order. SLIME is not installed here, so `import slime_plugins.mbridge` (line 12) is replaced by the first mbridge
# import it executes: slime_plugins/mbridge/__init__.py imports .deepseek_v32, whose line 3 is the one below.
TOOL_IMPORTS = (
    "from megatron.core.enums import ModelType",
    "from megatron.training.arguments import parse_args, validate_args",
    "from megatron.training.checkpointing import get_checkpoint_name, get_checkpoint_tracker_filename, save_checkpoint",
    "from megatron.training.training import get_model",
    "from mbridge.core import register_model  # via import slime_plugins.mbridge",
    "from mbridge import AutoBridge",
)
IMPORTS = """
import json
for step, line in enumerate(json.loads(TOOL_IMPORTS_JSON)):
    try:
        exec(line)
    except ImportError as exc:
        print("STOPPED " + json.dumps({"step": step, "line": line, "type": type(exc).__name__, "name": exc.name,
                                       "error": str(exc)}), flush=True)
        raise
    print(f"IMPORTED {step}", flush=True)
""".replace("TOOL_IMPORTS_JSON", repr(json.dumps(TOOL_IMPORTS)))
CONVERT = """
import json, sys
import torch.distributed as dist
from megatron.core import parallel_state
dist.init_process_group("gloo", rank=0, world_size=1)  # MASTER_ADDR / MASTER_PORT: loopback
parallel_state.initialize_model_parallel(1, 1)
from mbridge import AutoBridge
bridge = AutoBridge.from_pretrained(sys.argv[1])
c = bridge.config
print("RESULT " + json.dumps({"bridge": type(bridge).__name__, "config": type(c).__name__,
      "num_layers": c.num_layers, "hidden_size": c.hidden_size, "num_attention_heads": c.num_attention_heads,
      "num_query_groups": c.num_query_groups}))
parallel_state.destroy_model_parallel()
dist.destroy_process_group()
"""
TINY_QWEN3 = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 64,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
              "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 512,
              "rms_norm_eps": 1e-6, "rope_theta": 1000000, "tie_word_embeddings": False,
              "torch_dtype": "bfloat16"}
EXPECTED = {"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_query_groups": 2}


def import_without_mbridge(tmp_path) -> subproc.Completed:
    return site_mirror.python(IMPORTS, ["mbridge"], tmp_path / "site-without-mbridge", base=megatron_args.driver_env(),
                              preload=megatron_args.PRELOAD, runtime=megatron_args.RUNTIME, timeout_s=120)


def convert_config(tmp_path) -> tuple[dict[str, object] | None, subproc.Completed]:
    model = tmp_path / "qwen3-tiny"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(TINY_QWEN3))
    loopback = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_loopback_port())}
    done = megatron_args.run_python(CONVERT, [str(model)], env=loopback)  # offline, as every driver child
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    return (json.loads(line.removeprefix("RESULT ")) if line else None), done


def stopped_at(done: subproc.Completed) -> dict[str, object] | None:
    line = next((x for x in done.stdout.splitlines() if x.startswith("STOPPED ")), None)
    return json.loads(line.removeprefix("STOPPED ")) if line else None


def reproduce(tmp_path: Path) -> Reproduction:
    absent, (mapped, done) = subproc.concurrently(lambda: import_without_mbridge(tmp_path),
                                                  lambda: convert_config(tmp_path))
    stop = stopped_at(absent)
    # the converter's Megatron imports all ran, then its first mbridge import raised for mbridge itself
    missing = (stop is not None and stop["step"] == 4 and stop["type"] == "ModuleNotFoundError"
               and stop["name"] == "mbridge" and all(f"IMPORTED {i}" in absent.stdout for i in range(4)))
    mapped_ok = mapped is not None and all(mapped.get(k) == v for k, v in EXPECTED.items())
    error = f"{stop['line']!r} -> {stop['type']}: {stop['error']}" if stop else absent.why()
    evidence = (f"SLIME v0.2.4's converter imports without mbridge: {error}; with mbridge: "
                f"AutoBridge.from_pretrained(tiny Qwen3) -> "
                f"{mapped.get('bridge') if mapped else None} {json.dumps(mapped)}")
    return Reproduction(failure_id=FAILURE_ID, versions={}, reproduced=missing, fix_verified=mapped_ok,
                        evidence=evidence, details=f"{absent.tail()}\n--- with mbridge ---\n{done.tail(5)}")


def start_ahead(session: pytest.Session) -> Ahead[Reproduction]:
    """Begun ahead of the test (rlcheck.repro.ahead, reproducers/conftest.py), in a CPU slot: two forked children."""
    return begin_one(session, __file__, reproduce, heavy=True)


def test_repro_mbridge_missing(record_reproduction, ahead_result):
    record_reproduction(ahead_result)
